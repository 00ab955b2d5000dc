"""Module: a Symbol bound on one device with its parameters, optimizer and data names.

MXNet 1.x's intermediate training API. bind() simple_binds the symbol for the data and
label shapes; init_params() fills the parameters (an Initializer, or given arrays);
init_optimizer() makes an Updater from nv.optimizer; forward/backward/update run one step
on a DataBatch. One context: a list of several contexts is refused with a named error
(MXNet splits the batch across them; nnvmpy's data parallelism is the KVStore's: with
init_optimizer(kvstore='dist_sync') each `nnvmpy launch` worker trains on its own batches
and the store sums the gradients of all of them, see kvstore_util.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..base import Context, NNVMError, ParamError
from ..io import DataDesc, as_descs, check_batch
from .base_module import BaseModule


def _one_context(context: Any) -> Context:
    from .. import cpu

    if context is None:
        return cpu()
    if isinstance(context, list | tuple):
        if len(context) != 1:
            raise ParamError(
                f"Module: context lists of {len(context)} devices are not supported; give one "
                "context (data parallelism over several devices goes through nv.kvstore)"
            )
        context = context[0]
    if not isinstance(context, Context):
        raise ParamError(f"Module: context must be an nv.Context, got {context!r}")
    return context


class Module(BaseModule):
    """A symbol with data, label, parameter and state names, bound on one context."""

    def __init__(
        self,
        symbol: Any,
        data_names: Sequence[str] | None = ("data",),
        label_names: Sequence[str] | None = ("softmax_label",),
        logger: Any = None,
        context: Any = None,
        work_load_list: Any = None,
        fixed_param_names: Sequence[str] | None = None,
        state_names: Sequence[str] | None = None,
        group2ctxs: Any = None,
        compression_params: Any = None,
    ) -> None:
        super().__init__(logger)
        self._symbol = symbol
        self._context = _one_context(context)
        self._data_names = list(data_names or [])
        self._label_names = list(label_names or [])
        self._state_names = list(state_names or [])
        self._fixed_param_names = list(fixed_param_names or [])
        args = symbol.list_arguments()
        for kind, names in (("data", self._data_names), ("state", self._state_names)):
            for n in names:
                if n not in args:
                    raise ParamError(
                        f"Module: {kind} name {n!r} is not an argument of the symbol "
                        f"(arguments: {args})"
                    )
        inputs = set(self._data_names) | set(self._label_names) | set(self._state_names)
        self._param_names = [n for n in args if n not in inputs]
        self._aux_names = symbol.list_auxiliary_states()
        self._output_names = symbol.list_outputs()
        self._exec: Any = None
        self._arg_params: dict[str, Any] | None = None
        self._aux_params: dict[str, Any] | None = None
        self._data_shapes: list[DataDesc] = []
        self._label_shapes: list[DataDesc] = []
        self._updater: Any = None
        self._optimizer: Any = None
        self._kvstore: Any = None  # the KVStore of init_optimizer, if it made or got one
        self._update_on_kvstore = False  # whether that store runs the optimizer
        self._preload_opt_states: str | None = None  # Module.load(load_optimizer_states=True)
        self.inputs_need_grad = False
        self._grad_req: Any = "write"

    # -- names and shapes ---------------------------------------------------------------------

    @property
    def symbol(self) -> Any:
        return self._symbol

    @property
    def data_names(self) -> list[str]:
        return self._data_names

    @property
    def label_names(self) -> list[str]:
        return self._label_names

    @property
    def output_names(self) -> list[str]:
        return self._output_names

    @property
    def data_shapes(self) -> list[DataDesc]:
        self._require("data_shapes", bound=True)
        return self._data_shapes

    @property
    def label_shapes(self) -> list[DataDesc]:
        self._require("label_shapes", bound=True)
        return self._label_shapes

    @property
    def output_shapes(self) -> list[tuple[str, tuple[int, ...]]]:
        self._require("output_shapes", bound=True)
        return [(n, tuple(o.shape)) for n, o in zip(self._output_names, self._exec.outputs)]

    def _require(self, what: str, bound: bool = False, params: bool = False) -> None:
        if bound and not self.binded:
            raise NNVMError(f"Module.{what}: call bind() first")
        if params and not self.params_initialized:
            raise NNVMError(f"Module.{what}: call init_params() (or set_params) first")

    # -- bind ---------------------------------------------------------------------------------

    def bind(
        self,
        data_shapes: Any,
        label_shapes: Any = None,
        for_training: bool = True,
        inputs_need_grad: bool = False,
        force_rebind: bool = False,
        shared_module: Any = None,
        grad_req: Any = "write",
    ) -> None:
        """Allocate the executor for these input shapes (simple_bind)."""
        if self.binded and not force_rebind:
            self.logger.warning("Module.bind: already bound, ignoring bind()")
            return
        data = as_descs(data_shapes, "Module.bind data_shapes")
        labels = as_descs(label_shapes, "Module.bind label_shapes")
        given = [d.name for d in data]
        if sorted(given) != sorted(self._data_names):
            raise ParamError(
                f"Module.bind: data_shapes name {given}, the module's data_names are "
                f"{self._data_names}"
            )
        if labels and sorted(d.name for d in labels) != sorted(self._label_names):
            raise ParamError(
                f"Module.bind: label_shapes name {[d.name for d in labels]}, the module's "
                f"label_names are {self._label_names}"
            )
        self.for_training, self.inputs_need_grad = for_training, inputs_need_grad
        self._grad_req = grad_req
        req = self._grad_reqs(grad_req, for_training, inputs_need_grad)
        shapes = {d.name: tuple(d.shape) for d in data + labels}
        types = {d.name: np.dtype(d.dtype) for d in data + labels}
        shared = shared_module._exec if shared_module is not None else None
        self._exec = self._symbol.simple_bind(
            self._context, grad_req=req, type_dict=types, shared_exec=shared, **shapes
        )
        self._data_shapes, self._label_shapes = data, labels
        self.binded = True
        if self.params_initialized:  # rebinding keeps the parameters
            self._copy_params_in(self._arg_params or {}, self._aux_params or {})

    def _grad_reqs(self, grad_req: Any, for_training: bool, need_in: bool) -> dict[str, str]:
        req: dict[str, str] = {}
        for n in self._symbol.list_arguments():
            if not for_training:
                req[n] = "null"
            elif n in self._param_names:
                base = grad_req.get(n, "write") if isinstance(grad_req, dict) else grad_req
                req[n] = "null" if n in self._fixed_param_names else base
            elif n in self._data_names and need_in:
                req[n] = grad_req.get(n, "write") if isinstance(grad_req, dict) else grad_req
            else:
                req[n] = "null"
        return req

    # -- parameters ---------------------------------------------------------------------------

    def init_params(
        self,
        initializer: Any = None,
        arg_params: dict[str, Any] | None = None,
        aux_params: dict[str, Any] | None = None,
        allow_missing: bool = False,
        force_init: bool = False,
        allow_extra: bool = False,
    ) -> None:
        """Fill parameters: from arg_params/aux_params where given, else the initializer."""
        if self.params_initialized and not force_init:
            self.logger.warning("Module.init_params: already initialized, ignoring")
            return
        self._require("init_params", bound=True)
        from .. import initializer as init_mod

        if initializer is None:
            initializer = init_mod.Uniform(0.01)
        attrs = self._symbol.attr_dict()
        inputs = set(self._data_names) | set(self._label_names) | set(self._state_names)
        for names, given, arrays in (
            (self._param_names, arg_params, self._exec.arg_dict),
            (self._aux_names, aux_params, self._exec.aux_dict),
        ):
            extra = sorted(set(given or ()) - set(names) - inputs)
            if extra and not allow_extra:
                raise NNVMError(
                    f"Module.init_params: {extra} are not parameters of the symbol "
                    "(pass allow_extra=True to ignore them)"
                )
            for n in names:
                if given is not None and n in given:
                    arrays[n][:] = given[n]
                elif given is not None and not allow_missing:
                    raise NNVMError(
                        f"Module.init_params: {n!r} is missing from the given params "
                        "(pass allow_missing=True to initialize it)"
                    )
                else:
                    initializer(init_mod.InitDesc(n, attrs.get(n)), arrays[n])
        self.params_initialized = True
        self._params_dirty = False
        self._snapshot_params()

    def _snapshot_params(self) -> None:
        from .. import nd

        self._arg_params = {n: nd.array(self._exec.arg_dict[n]) for n in self._param_names}
        self._aux_params = {n: nd.array(self._exec.aux_dict[n]) for n in self._aux_names}

    def _copy_params_in(self, arg_params: dict[str, Any], aux_params: dict[str, Any]) -> None:
        for n, v in arg_params.items():
            if n in self._exec.arg_dict:
                self._exec.arg_dict[n][:] = v
        for n, v in aux_params.items():
            if n in self._exec.aux_dict:
                self._exec.aux_dict[n][:] = v

    def get_params(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """Copies of the (arg_params, aux_params) as they are now."""
        self._require("get_params", bound=True, params=True)
        self._snapshot_params()
        assert self._arg_params is not None
        assert self._aux_params is not None
        return dict(self._arg_params), dict(self._aux_params)

    def set_params(
        self,
        arg_params: dict[str, Any],
        aux_params: dict[str, Any] | None,
        allow_missing: bool = False,
        force_init: bool = True,
        allow_extra: bool = False,
    ) -> None:
        self.init_params(
            None,
            arg_params,
            aux_params or {},
            allow_missing=allow_missing,
            force_init=force_init,
            allow_extra=allow_extra,
        )

    # -- optimizer ----------------------------------------------------------------------------

    def init_optimizer(
        self,
        kvstore: Any = "local",
        optimizer: Any = "sgd",
        optimizer_params: Any = (("learning_rate", 0.01),),
        force_init: bool = False,
    ) -> None:
        """The optimizer, and the KVStore that sums gradients across devices and workers.

        `kvstore`: a type name ('local', 'device': with one context no store is needed;
        'dist_sync', 'dist_device_sync': one worker of `nnvmpy launch`), an nv.kv store,
        or None. As in MXNet, the store runs the optimizer (update_on_kvstore) unless
        MXNET_UPDATE_ON_KVSTORE=0; each parameter is a key named after it, initialised
        with rank 0's value. rescale_grad defaults to 1 / (batch size x workers) under a
        dist_*sync store: the gradients of every worker's batch are summed.
        """
        self._require("init_optimizer", bound=True, params=True)
        if self.optimizer_initialized and not force_init:
            self.logger.warning("Module.init_optimizer: already initialized, ignoring")
            return
        import warnings

        from .. import optimizer as opt
        from . import kvstore_util

        if self._params_dirty:
            self._snapshot_params()
        assert self._arg_params is not None
        kv, update_on_kvstore = kvstore_util.create_kvstore(kvstore, 1, self._arg_params)
        batch = self._data_shapes[0].shape[0] if self._data_shapes else 1
        if kv is not None and "dist" in kv.type and "_sync" in kv.type:
            batch *= kv.num_workers
        rescale_grad = 1.0 / batch
        idx2name = dict(enumerate(self._param_names))
        if isinstance(optimizer, str):
            params = dict(optimizer_params)
            params.setdefault("rescale_grad", rescale_grad)
            optimizer = opt.create(optimizer, sym=self._symbol, param_idx2name=idx2name, **params)
        elif isinstance(optimizer, opt.Optimizer):
            if optimizer.rescale_grad != rescale_grad:
                warnings.warn(
                    "Module.init_optimizer: the optimizer's rescale_grad is "
                    f"{optimizer.rescale_grad}, not 1/(batch size x workers) = {rescale_grad}; "
                    "is this intended?",
                    stacklevel=2,
                )
            if not optimizer.idx2name:
                optimizer.idx2name = idx2name.copy()
        else:
            raise ParamError(f"Module.init_optimizer: optimizer {optimizer!r} is not an Optimizer")
        self._optimizer = optimizer
        self._kvstore, self._update_on_kvstore = kv, update_on_kvstore
        self._updater = None
        if kv is not None:
            if update_on_kvstore:
                kv.set_optimizer(optimizer)
            kvstore_util.initialize_kvstore(
                kv, self._exec.arg_dict, self._arg_params, self._param_names
            )
        if not update_on_kvstore:
            self._updater = opt.get_updater(optimizer)
        self.optimizer_initialized = True
        if self._preload_opt_states is not None:
            self.load_optimizer_states(self._preload_opt_states)
            self._preload_opt_states = None

    # -- computation --------------------------------------------------------------------------

    def forward(self, data_batch: Any, is_train: bool | None = None) -> None:
        """Copy the batch into the executor's inputs and run forward."""
        self._require("forward", bound=True, params=True)
        batch = check_batch(data_batch, "Module.forward")
        if is_train is None:
            is_train = self.for_training
        data = list(batch.data or [])
        if len(data) != len(self._data_names):
            raise NNVMError(
                f"Module.forward: the batch has {len(data)} data arrays, the module's "
                f"data_names are {self._data_names}"
            )
        feeds = list(zip(self._data_names, data))
        if batch.label is not None and self._label_names:
            feeds += list(zip(self._label_names, batch.label))
        if any(tuple(v.shape) != tuple(self._exec.arg_dict[n].shape) for n, v in feeds):
            # another batch size (the last batch, predict): rebind, as MXNet's reshape
            labels = [DataDesc(n, tuple(v.shape)) for n, v in feeds if n in self._label_names]
            if not labels:  # no labels in the batch (predict): the batch size changes only
                rows = int(data[0].shape[0])
                labels = [DataDesc(d.name, (rows, *d.shape[1:])) for d in self._label_shapes]
            self.reshape(
                [DataDesc(n, tuple(v.shape)) for n, v in feeds if n in self._data_names], labels
            )
        for name, value in feeds:
            self._exec.arg_dict[name][:] = value
        self._exec.forward(is_train=is_train)

    def reshape(self, data_shapes: Any, label_shapes: Any = None) -> None:
        """Bind again for new input shapes, keeping parameters and the optimizer."""
        self._require("reshape", bound=True)
        if self.params_initialized:
            self._snapshot_params()
        self.bind(
            data_shapes,
            label_shapes,
            for_training=self.for_training,
            inputs_need_grad=self.inputs_need_grad,
            force_rebind=True,
            grad_req=self._grad_req,
        )

    def backward(self, out_grads: Any = None) -> None:
        self._require("backward", bound=True, params=True)
        if not self.for_training:
            raise NNVMError("Module.backward: the module is bound with for_training=False")
        if out_grads is not None and not isinstance(out_grads, list | tuple):
            out_grads = [out_grads]
        self._exec.backward(out_grads)

    def update(self) -> None:
        """Apply the optimizer to every parameter with a gradient (through the KVStore, if
        init_optimizer set one up: summed over devices and workers first)."""
        self._require("update", bound=True, params=True)
        if not self.optimizer_initialized:
            raise NNVMError("Module.update: call init_optimizer() first")
        from . import kvstore_util

        fixed = set(self._fixed_param_names)
        grads = {n: g for n, g in self._exec.grad_dict.items() if n not in fixed}
        self._params_dirty = True
        if self._update_on_kvstore:
            kvstore_util.update_params_on_kvstore(
                self._exec.arg_dict, grads, self._kvstore, self._param_names
            )
        else:
            kvstore_util.update_params(
                self._exec.arg_dict, grads, self._updater, self._kvstore, self._param_names
            )

    def get_outputs(self, merge_multi_context: bool = True) -> list[Any]:
        self._require("get_outputs", bound=True, params=True)
        outs = list(self._exec.outputs)
        return outs if merge_multi_context else [[o] for o in outs]

    def get_input_grads(self, merge_multi_context: bool = True) -> list[Any]:
        """Gradients of the data inputs (None where their grad_req is 'null')."""
        self._require("get_input_grads", bound=True, params=True)
        if not self.inputs_need_grad:
            raise NNVMError("Module.get_input_grads: bind with inputs_need_grad=True")
        grads = [self._exec.grad_dict.get(n) for n in self._data_names]
        return grads if merge_multi_context else [[g] for g in grads]

    def update_metric(self, eval_metric: Any, labels: Any, pre_sliced: bool = False) -> None:
        eval_metric.update(labels, self.get_outputs())

    def install_monitor(self, mon: Any) -> None:
        self._require("install_monitor", bound=True)
        mon.install(self._exec)

    def borrow_optimizer(self, shared_module: Module) -> None:
        self._optimizer, self._updater = shared_module._optimizer, shared_module._updater
        self._kvstore = shared_module._kvstore
        self._update_on_kvstore = shared_module._update_on_kvstore
        self.optimizer_initialized = shared_module.optimizer_initialized

    # -- checkpoints --------------------------------------------------------------------------

    def save_checkpoint(self, prefix: str, epoch: int, save_optimizer_states: bool = False) -> None:
        """prefix-symbol.json and prefix-%04d.params (and .states with the optimizer's)."""
        from ..model import save_checkpoint

        arg, aux = self.get_params()
        save_checkpoint(prefix, epoch, self._symbol, arg, aux)
        if save_optimizer_states:
            self.save_optimizer_states(f"{prefix}-{epoch:04d}.states")

    def save_optimizer_states(self, fname: str) -> None:
        """The optimizer's states (the KVStore's, when it runs the optimizer) to `fname`."""
        if not self.optimizer_initialized:
            raise NNVMError("Module.save_optimizer_states: call init_optimizer() first")
        if self._update_on_kvstore:
            self._kvstore.save_optimizer_states(fname)
            return
        with open(fname, "wb") as f:
            f.write(self._updater.get_states())

    def load_optimizer_states(self, fname: str) -> None:
        """States written by save_optimizer_states."""
        if not self.optimizer_initialized:
            raise NNVMError("Module.load_optimizer_states: call init_optimizer() first")
        if self._update_on_kvstore:
            self._kvstore.load_optimizer_states(fname)
            return
        with open(fname, "rb") as f:
            self._updater.set_states(f.read())

    @staticmethod
    def load(prefix: str, epoch: int, load_optimizer_states: bool = False, **kwargs: Any) -> Module:
        """A Module from save_checkpoint's files; its parameters are set at bind()."""
        from ..model import load_checkpoint

        sym, arg, aux = load_checkpoint(prefix, epoch)
        mod = Module(sym, **kwargs)
        mod._arg_params, mod._aux_params = arg, aux
        mod.params_initialized = True
        if load_optimizer_states:
            mod._preload_opt_states = f"{prefix}-{epoch:04d}.states"
        return mod
