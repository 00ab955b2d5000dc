"""Module: a Symbol bound on one or more devices with its parameters, optimizer and names.

MXNet 1.x's intermediate training API. bind() binds a DataParallelExecutorGroup for the
data and label shapes (one executor per context, each on its slice of the batch, see
executor_group.py); init_params() fills the parameters (an Initializer, or given arrays);
init_optimizer() makes an Updater from nv.optimizer and, for several devices or workers,
the KVStore that sums their gradients (kvstore_util.py); forward/backward/update run one
step on a DataBatch. Across processes, init_optimizer(kvstore='dist_sync') makes each
`nnvmpy launch` worker train on its own batches while the store sums all gradients.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..base import Context, NNVMError, ParamError
from ..io import DataDesc, as_descs
from .base_module import BaseModule
from .executor_group import DataParallelExecutorGroup


class MissingParamError(NNVMError, RuntimeError):
    """init_params / set_params: a parameter is missing from the given arrays (MXNet raises
    RuntimeError there)."""


class ShapeTypeError(NNVMError, TypeError):
    """bind: a shape that is not a tuple of integers, or an entry that is neither a DataDesc
    nor a (name, shape) pair (MXNet raises TypeError there)."""


def _contexts(context: Any) -> list[Context]:
    from nnvmpy import cpu

    if context is None:
        return [cpu()]
    contexts = list(context) if isinstance(context, list | tuple) else [context]
    if not contexts:
        raise ParamError("Module: context is an empty list; give at least one nv.Context")
    for c in contexts:
        if not isinstance(c, Context):
            raise ParamError(f"Module: context must be an nv.Context or a list of them, got {c!r}")
    return contexts


def _check_shapes(shapes: Any, what: str) -> None:
    for item in shapes or []:
        if not isinstance(item, DataDesc) and not (
            isinstance(item, list | tuple) and len(item) == 2
        ):
            raise ShapeTypeError(
                f"{what}: expected DataDesc or (name, shape) pairs, got "
                f"{type(item).__name__} {item!r:.60}"
            )
        shape = (
            item.shape
            if isinstance(item, DataDesc)
            else (item[1] if isinstance(item, list | tuple) and len(item) == 2 else None)
        )
        if shape is None:
            continue
        if not isinstance(shape, list | tuple) or not all(
            isinstance(d, int | np.integer) for d in shape
        ):
            raise ShapeTypeError(
                f"{what}: the shape of {item[0]!r} must be a tuple of ints, got "
                f"{type(shape).__name__} {shape!r:.60}"
            )


_DEFAULT_INIT: Any = object()  # init_params' default: Uniform(0.01); None initializes nothing


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
        self._context = _contexts(context)
        self._work_load_list = (
            list(work_load_list) if work_load_list is not None else [1] * len(self._context)
        )
        if len(self._work_load_list) != len(self._context):
            raise ParamError(
                f"Module: work_load_list has {len(self._work_load_list)} entries for "
                f"{len(self._context)} contexts"
            )
        self._group2ctxs = group2ctxs
        self._compression_params = compression_params
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
        self._exec_group: Any = None
        self._total_exec_bytes = 0
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
        return self._exec_group.get_output_shapes()

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
        """Allocate the executors (one per context) for these input shapes."""
        if self.binded and not force_rebind:
            self.logger.warning("Module.bind: already bound, ignoring bind()")
            return
        _check_shapes(data_shapes, "Module.bind data_shapes")
        _check_shapes(label_shapes, "Module.bind label_shapes")
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
        if self.binded and self.params_initialized and self._params_dirty:
            self._sync_params_from_devices()  # force_rebind keeps the trained values
        self.for_training, self.inputs_need_grad = for_training, inputs_need_grad
        self._grad_req = grad_req
        shared_group = None
        if shared_module is not None:
            if not (shared_module.binded and shared_module.params_initialized):
                raise NNVMError("Module.bind: shared_module must be bound and initialized")
            shared_group = shared_module._exec_group
            if len(shared_group.execs) < len(self._context):
                raise ParamError(
                    "Module.bind: shared_module runs on fewer contexts than this module"
                )
        self._exec_group = DataParallelExecutorGroup(
            self._symbol,
            self._context,
            self._work_load_list,
            data,
            labels,
            self._param_names,
            for_training,
            inputs_need_grad,
            shared_group,
            logger=self.logger,
            fixed_param_names=self._fixed_param_names,
            grad_req=grad_req,
            state_names=self._state_names,
            group2ctxs=self._group2ctxs,
        )
        self._total_exec_bytes = self._exec_group._total_exec_bytes
        self._data_shapes, self._label_shapes = data, labels
        self.binded = True
        if shared_module is not None:  # the parameters live in the shared executors
            self.params_initialized = True
            self._arg_params = shared_module._arg_params
            self._aux_params = shared_module._aux_params
        elif self.params_initialized:  # rebinding keeps the parameters
            self._exec_group.set_params(self._arg_params or {}, self._aux_params or {})
            self._alloc_params()

    # -- parameters ---------------------------------------------------------------------------

    def init_params(
        self,
        initializer: Any = _DEFAULT_INIT,
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
        from nnvmpy import initializer as init_mod

        if initializer is _DEFAULT_INIT:
            initializer = init_mod.Uniform(0.01)
        self._alloc_params()
        assert self._arg_params is not None
        assert self._aux_params is not None
        attrs = self._symbol.attr_dict()
        inputs = set(self._data_names) | set(self._label_names) | set(self._state_names)
        todo = (
            (self._param_names, arg_params, self._arg_params),
            (self._aux_names, aux_params, self._aux_params),
        )
        for names, given, _ in todo:  # missing first: MXNet's RuntimeError comes first
            for n in names:
                if given is not None and n not in given and not allow_missing:
                    raise MissingParamError(
                        f"Module.init_params: {n!r} is missing from the given params "
                        "(pass allow_missing=True to initialize it)"
                    )
        for names, given, arrays in todo:
            extra = sorted(set(given or ()) - set(names) - inputs)
            if extra and not allow_extra:
                raise ParamError(
                    f"Module.init_params: {extra} are not parameters of the symbol "
                    "(pass allow_extra=True to ignore them)"
                )
            for n in names:
                if given is not None and n in given:
                    if given[n] is not arrays[n]:
                        arrays[n][:] = given[n]
                elif initializer is not None:
                    initializer(init_mod.InitDesc(n, attrs.get(n)), arrays[n])
        self._exec_group.set_params(self._arg_params, self._aux_params)
        self.params_initialized = True
        self._params_dirty = False

    def _alloc_params(self) -> None:
        """The module's own (CPU) copies of every parameter, zeros where it has none yet."""
        from nnvmpy import nd

        exe = self._exec_group.execs[0]
        self._arg_params = dict(self._arg_params or {})
        self._aux_params = dict(self._aux_params or {})
        for names, arrays, own in (
            (self._param_names, exe.arg_dict, self._arg_params),
            (self._aux_names, exe.aux_dict, self._aux_params),
        ):
            for n in names:
                if n not in own:
                    own[n] = nd.zeros(arrays[n].shape, dtype=arrays[n].dtype)

    def _sync_params_from_devices(self) -> None:
        """The module's copies of the parameters, from the devices (their mean)."""
        assert self._arg_params is not None
        assert self._aux_params is not None
        self._exec_group.get_params(self._arg_params, self._aux_params)
        self._params_dirty = False

    def get_params(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """The (arg_params, aux_params) as they are now (the mean of the devices' copies)."""
        self._require("get_params", bound=True, params=True)
        if self._params_dirty:
            self._sync_params_from_devices()
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
        """Copy the given arrays in. Without allow_missing every parameter must be given
        (MissingParamError, a RuntimeError); with it, the absent ones keep their values and
        names the symbol lacks raise ParamError (a ValueError) unless allow_extra."""
        if not allow_missing:
            self.init_params(
                None,
                arg_params,
                aux_params,
                allow_missing=False,
                force_init=force_init,
                allow_extra=allow_extra,
            )
            return
        if self.params_initialized and not force_init:
            self.logger.warning("Module.set_params: already initialized, ignoring")
            return
        self._require("set_params", bound=True)
        self._exec_group.set_params(arg_params, aux_params or {}, allow_extra=allow_extra)
        self._alloc_params()
        self._params_dirty = True
        self.params_initialized = True

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

        from nnvmpy import optimizer as opt
        from nnvmpy.module import kvstore_util

        if self._params_dirty:
            self._sync_params_from_devices()
        assert self._arg_params is not None
        devices = len(self._context)
        kv, update_on_kvstore = kvstore_util.create_kvstore(kvstore, devices, self._arg_params)
        batch = self._exec_group.batch_size or 1
        if kv is not None and "dist" in kv.type and "_sync" in kv.type:
            batch *= kv.num_workers
        rescale_grad = 1.0 / batch
        if update_on_kvstore:  # the store updates one copy per parameter
            idx2name = dict(enumerate(self._param_names))
        else:  # the module updates each device's copy: index i * devices + k
            idx2name = {
                i * devices + k: n for i, n in enumerate(self._param_names) for k in range(devices)
            }
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
            if self._compression_params:  # as MXNet: the store quantizes what it sums
                kv.set_gradient_compression(self._compression_params)
            if update_on_kvstore:
                kv.set_optimizer(optimizer)
            kvstore_util.initialize_kvstore(
                kv, self._device_params(), self._arg_params, self._param_names
            )
        if not update_on_kvstore:
            self._updater = opt.get_updater(optimizer)
        self.optimizer_initialized = True
        if self._preload_opt_states is not None:
            self.load_optimizer_states(self._preload_opt_states)
            self._preload_opt_states = None

    def _device_params(self) -> dict[str, list[Any]]:
        group = self._exec_group
        return dict(zip(group.param_names, group.param_arrays))

    # -- computation --------------------------------------------------------------------------

    def forward(self, data_batch: Any, is_train: bool | None = None) -> None:
        """Copy the batch (anything with a `data` list, e.g. a DataBatch) into the
        executors and run forward. A batch of other shapes (the last batch, predict)
        rebinds first, as reshape(): from its provide_data/provide_label when it has them."""
        self._require("forward", bound=True, params=True)
        data = getattr(data_batch, "data", None)
        if data is None:
            raise NNVMError(
                "Module.forward: expected a DataBatch (or an object with a `data` list of "
                f"arrays), got {type(data_batch).__name__}"
            )
        if not isinstance(data, list | tuple):
            data = [data]
        if len(data) != len(self._data_names):
            raise NNVMError(
                f"Module.forward: the batch has {len(data)} data arrays, the module's "
                f"data_names are {self._data_names}"
            )
        new_shapes = [tuple(np.shape(d) if not hasattr(d, "shape") else d.shape) for d in data]
        if new_shapes != [tuple(d.shape) for d in self._data_shapes]:
            provide_data = getattr(data_batch, "provide_data", None)
            provide_label = getattr(data_batch, "provide_label", None)
            labels = getattr(data_batch, "label", None)
            if provide_data:
                new_data = provide_data
            else:
                new_data = [
                    DataDesc(d.name, shape, d.dtype, d.layout)
                    for d, shape in zip(self._data_shapes, new_shapes)
                ]
            if provide_label:
                new_label = provide_label
            elif labels and self._label_shapes:
                new_label = [
                    DataDesc(d.name, tuple(lb.shape), d.dtype, d.layout)
                    for d, lb in zip(self._label_shapes, labels)
                ]
            else:
                new_label = None
            self.reshape(new_data, new_label)
        self._exec_group.forward(data_batch, is_train)

    def prepare(self, data_batch: Any, sparse_row_id_fn: Any = None) -> None:
        """MXNet pulls the rows of row_sparse parameters the batch needs here. nnvmpy's
        parameters are dense (every device holds all rows), so this only checks: the
        module must be bound, and a `sparse_row_id_fn` is called when a KVStore runs the
        optimizer (its names must be parameters), with a UserWarning as MXNet gives for
        parameters that are not row_sparse."""
        import warnings

        self._require("prepare", bound=True)
        if sparse_row_id_fn is None:
            return
        if self._kvstore is None or not self._update_on_kvstore:
            warnings.warn(
                "Module.prepare: parameters are not updated in the KVStore; "
                "sparse_row_id_fn is not called",
                UserWarning,
                stacklevel=2,
            )
            return
        row_ids = sparse_row_id_fn(data_batch)
        if not isinstance(row_ids, dict):
            raise ParamError(
                "Module.prepare: sparse_row_id_fn must return a dict of parameter name to "
                f"row ids, got {type(row_ids).__name__}"
            )
        for name in row_ids:
            if name not in self._param_names:
                raise ParamError(
                    f"Module.prepare: sparse_row_id_fn names {name!r}, which is not a "
                    f"parameter (parameters: {self._param_names})"
                )
            warnings.warn(
                f"Module.prepare: {name!r} is dense, not row_sparse; nothing to pull",
                UserWarning,
                stacklevel=2,
            )

    def reshape(self, data_shapes: Any, label_shapes: Any = None) -> None:
        """Rebind the executors for new input shapes, keeping parameters and optimizer."""
        self._require("reshape", bound=True)
        _check_shapes(data_shapes, "Module.reshape data_shapes")
        _check_shapes(label_shapes, "Module.reshape label_shapes")
        data = as_descs(data_shapes, "Module.reshape data_shapes")
        labels = as_descs(label_shapes, "Module.reshape label_shapes")
        self._exec_group.reshape(data, labels)
        self._data_shapes, self._label_shapes = data, labels
        self._total_exec_bytes = self._exec_group._total_exec_bytes

    def backward(self, out_grads: Any = None) -> None:
        self._require("backward", bound=True, params=True)
        if not self.for_training:
            raise NNVMError("Module.backward: the module is bound with for_training=False")
        self._exec_group.backward(out_grads)

    def update(self) -> None:
        """Apply the optimizer to every parameter with a gradient (through the KVStore, if
        init_optimizer set one up: summed over devices and workers first)."""
        self._require("update", bound=True, params=True)
        if not self.optimizer_initialized:
            raise NNVMError("Module.update: call init_optimizer() first")
        from nnvmpy.module import kvstore_util

        group = self._exec_group
        fixed = set(self._fixed_param_names)
        grads = {
            n: g
            for n, g in zip(group.param_names, group.grad_arrays)
            if g is not None and n not in fixed
        }
        self._params_dirty = True
        if self._update_on_kvstore:
            kvstore_util.update_params_on_kvstore(
                self._device_params(), grads, self._kvstore, self._param_names
            )
        else:
            kvstore_util.update_params(
                self._device_params(), grads, self._updater, self._kvstore, self._param_names
            )

    def get_outputs(self, merge_multi_context: bool = True) -> list[Any]:
        """The outputs, concatenated over devices along their batch axis (per device, as
        lists, with merge_multi_context=False)."""
        self._require("get_outputs", bound=True, params=True)
        return self._exec_group.get_outputs(merge_multi_context=merge_multi_context)

    def get_input_grads(self, merge_multi_context: bool = True) -> list[Any]:
        """Gradients of the data inputs (None where their grad_req is 'null')."""
        self._require("get_input_grads", bound=True, params=True)
        if not self.inputs_need_grad:
            raise NNVMError("Module.get_input_grads: bind with inputs_need_grad=True")
        return self._exec_group.get_input_grads(merge_multi_context=merge_multi_context)

    def get_states(self, merge_multi_context: bool = True) -> list[Any]:
        """The arrays of the state inputs (state_names)."""
        self._require("get_states", bound=True, params=True)
        return self._exec_group.get_states(merge_multi_context=merge_multi_context)

    def set_states(self, states: Any = None, value: Any = None) -> None:
        """Set the state inputs from per-device lists of arrays, or all to a scalar value."""
        self._require("set_states", bound=True, params=True)
        self._exec_group.set_states(states, value)

    def update_metric(self, eval_metric: Any, labels: Any, pre_sliced: bool = False) -> None:
        self._require("update_metric", bound=True, params=True)
        self._exec_group.update_metric(eval_metric, labels, pre_sliced)

    def install_monitor(self, mon: Any) -> None:
        self._require("install_monitor", bound=True)
        self._exec_group.install_monitor(mon)

    def borrow_optimizer(self, shared_module: Module) -> None:
        self._optimizer, self._updater = shared_module._optimizer, shared_module._updater
        self._kvstore = shared_module._kvstore
        self._update_on_kvstore = shared_module._update_on_kvstore
        self.optimizer_initialized = shared_module.optimizer_initialized

    # -- checkpoints --------------------------------------------------------------------------

    def save_checkpoint(self, prefix: str, epoch: int, save_optimizer_states: bool = False) -> None:
        """prefix-symbol.json and prefix-%04d.params (and .states with the optimizer's)."""
        from nnvmpy.model import save_checkpoint

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
        return Module._from_checkpoint(prefix, epoch, load_optimizer_states, kwargs)

    @classmethod
    def _from_checkpoint(
        cls, prefix: str, epoch: int, load_optimizer_states: bool, kwargs: dict[str, Any]
    ) -> Any:
        """load() of this class: cls(symbol, **kwargs) with the checkpoint's parameters
        (and optimizer states) waiting for bind()."""
        from nnvmpy.model import load_checkpoint

        sym, arg, aux = load_checkpoint(prefix, epoch)
        mod = cls(sym, **kwargs)
        mod._arg_params, mod._aux_params = arg, aux
        mod.params_initialized = True
        if load_optimizer_states:
            mod._preload_opt_states = f"{prefix}-{epoch:04d}.states"
        return mod
