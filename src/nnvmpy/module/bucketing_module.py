"""BucketingModule: one Module per bucket key (e.g. a sequence length), sharing parameters.

`sym_gen(key)` returns (symbol, data_names, label_names) for a bucket. bind() binds the
default bucket's Module; a batch with another `bucket_key` (forward, or switch_bucket)
binds that bucket's Module on first use with the default bucket as shared_module: its
executors take the default bucket's parameter and gradient arrays and reuse its input
buffers (see executor_group.py), so every bucket trains the same weights. The optimizer
is the current bucket's, borrowed by the others.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..base import NNVMError, ParamError
from .base_module import BaseModule
from .module import _DEFAULT_INIT, Module


class BucketingModule(BaseModule):
    """Modules for several bucket keys over one set of parameters (see the module doc)."""

    def __init__(
        self,
        sym_gen: Callable[[Any], tuple[Any, Any, Any]],
        default_bucket_key: Any = None,
        logger: Any = logging,
        context: Any = None,
        work_load_list: Any = None,
        fixed_param_names: Sequence[str] | None = None,
        state_names: Sequence[str] | None = None,
        group2ctxs: Any = None,
        compression_params: Any = None,
    ) -> None:
        super().__init__(logger=logger)
        if default_bucket_key is None:
            raise ParamError("BucketingModule: default_bucket_key is required")
        if not callable(sym_gen):
            raise ParamError(f"BucketingModule: sym_gen must be callable, got {sym_gen!r:.60}")
        self._sym_gen = sym_gen
        self._default_bucket_key = default_bucket_key
        self._module_args = {
            "logger": logger,
            "context": context,
            "work_load_list": work_load_list,
            "fixed_param_names": fixed_param_names,
            "state_names": state_names,
            "group2ctxs": group2ctxs,
            "compression_params": compression_params,
        }
        symbol, data_names, _ = self._gen(default_bucket_key)
        args = symbol.list_arguments()
        for n in list(data_names or []) + list(state_names or []):
            if n not in args:
                raise ParamError(
                    f"BucketingModule: input {n!r} is not an argument of the default bucket's "
                    f"symbol (arguments: {args})"
                )
        self._buckets: dict[Any, Module] = {}
        self._curr_module: Any = None
        self._curr_bucket_key: Any = None
        self._params_dirty = False
        self._monitor: Any = None
        self._grad_req: Any = "write"

    def _gen(self, key: Any) -> tuple[Any, list[str], list[str]]:
        out = self._sym_gen(key)
        if not (isinstance(out, tuple | list) and len(out) == 3):
            raise NNVMError(
                "BucketingModule: sym_gen must return (symbol, data_names, label_names), "
                f"got {type(out).__name__} for bucket {key!r}"
            )
        symbol, data_names, label_names = out
        return symbol, list(data_names or []), list(label_names or [])

    def _module(self, key: Any) -> Module:
        symbol, data_names, label_names = self._gen(key)
        return Module(symbol, data_names, label_names, **self._module_args)

    def _reset_bind(self) -> None:
        self.binded = False
        self._buckets = {}
        self._curr_module = None
        self._curr_bucket_key = None

    def _require_bound(self, what: str) -> None:
        if not self.binded:
            raise NNVMError(f"BucketingModule.{what}: call bind() first")

    # -- names and shapes (the current bucket's) ----------------------------------------------

    @property
    def data_names(self) -> list[str]:
        if self.binded:
            return self._curr_module.data_names
        return self._gen(self._default_bucket_key)[1]

    @property
    def output_names(self) -> list[str]:
        if self.binded:
            return self._curr_module.output_names
        return self._gen(self._default_bucket_key)[0].list_outputs()

    @property
    def data_shapes(self) -> Any:
        self._require_bound("data_shapes")
        return self._curr_module.data_shapes

    @property
    def label_shapes(self) -> Any:
        self._require_bound("label_shapes")
        return self._curr_module.label_shapes

    @property
    def output_shapes(self) -> Any:
        self._require_bound("output_shapes")
        return self._curr_module.output_shapes

    @property
    def symbol(self) -> Any:
        self._require_bound("symbol")
        return self._curr_module.symbol

    # -- parameters ---------------------------------------------------------------------------

    def _current_params(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """get_params(), or before bind the arrays load()/load_dict() gave the default bucket."""
        if self.binded:
            return self.get_params()
        module = self._buckets[self._default_bucket_key]
        return dict(module._arg_params or {}), dict(module._aux_params or {})

    def get_params(self) -> tuple[dict[str, Any], dict[str, Any]]:
        self._require_bound("get_params")
        self._curr_module._params_dirty = self._params_dirty or self._curr_module._params_dirty
        params = self._curr_module.get_params()
        self._params_dirty = False
        return params

    def set_params(
        self,
        arg_params: dict[str, Any],
        aux_params: dict[str, Any] | None,
        allow_missing: bool = False,
        force_init: bool = True,
        allow_extra: bool = False,
    ) -> None:
        if not allow_missing:
            self.init_params(
                None, arg_params, aux_params, False, force_init=force_init, allow_extra=allow_extra
            )
            return
        if self.params_initialized and not force_init:
            self.logger.warning("BucketingModule.set_params: already initialized, ignoring")
            return
        self._require_bound("set_params")
        self._curr_module.set_params(
            arg_params, aux_params, allow_missing, force_init=True, allow_extra=allow_extra
        )
        self._params_dirty = True
        self.params_initialized = True

    def init_params(
        self,
        initializer: Any = _DEFAULT_INIT,
        arg_params: dict[str, Any] | None = None,
        aux_params: dict[str, Any] | None = None,
        allow_missing: bool = False,
        force_init: bool = False,
        allow_extra: bool = False,
    ) -> None:
        if self.params_initialized and not force_init:
            return
        self._require_bound("init_params")
        self._curr_module.init_params(
            initializer,
            arg_params,
            aux_params,
            allow_missing=allow_missing,
            force_init=force_init,
            allow_extra=allow_extra,
        )
        self._params_dirty = False
        self.params_initialized = True

    def get_states(self, merge_multi_context: bool = True) -> list[Any]:
        self._require_bound("get_states")
        return self._curr_module.get_states(merge_multi_context)

    def set_states(self, states: Any = None, value: Any = None) -> None:
        self._require_bound("set_states")
        self._curr_module.set_states(states, value)

    # -- binding ------------------------------------------------------------------------------

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
        """Bind the default bucket's Module (the other buckets bind on first use)."""
        if self.params_initialized:
            arg_params, aux_params = self._current_params()
        if force_rebind:
            self._reset_bind()
        if self.binded:
            self.logger.warning("BucketingModule.bind: already bound, ignoring bind()")
            return
        if shared_module is not None:
            raise ParamError("BucketingModule.bind: shared_module is not supported")
        self.for_training, self.inputs_need_grad = for_training, inputs_need_grad
        self._grad_req = grad_req
        module = self._buckets.get(self._default_bucket_key)  # load() made it already
        if module is None:
            module = self._module(self._default_bucket_key)
        module.bind(data_shapes, label_shapes, for_training, inputs_need_grad, grad_req=grad_req)
        self.binded = True
        self._curr_module = module
        self._curr_bucket_key = self._default_bucket_key
        self._buckets[self._default_bucket_key] = module
        if self.params_initialized:  # a rebind keeps the parameters
            self.set_params(arg_params, aux_params)

    def switch_bucket(self, bucket_key: Any, data_shapes: Any, label_shapes: Any = None) -> None:
        """Make `bucket_key` current, binding its Module (sharing the default bucket's
        parameters and memory) on first use."""
        self._require_bound("switch_bucket")
        module = self._buckets.get(bucket_key)
        if module is None or not module.binded:  # new, or made by load() and not bound yet
            if data_shapes is None:
                raise NNVMError(
                    f"BucketingModule.switch_bucket: bucket {bucket_key!r} is not bound yet; "
                    "give its data_shapes (a DataBatch's provide_data)"
                )
            module = module or self._module(bucket_key)
            module.bind(
                data_shapes,
                label_shapes,
                self._curr_module.for_training,
                self._curr_module.inputs_need_grad,
                force_rebind=False,
                shared_module=self._buckets[self._default_bucket_key],
                grad_req=self._grad_req,
            )
            if self._monitor is not None:
                module.install_monitor(self._monitor)
            if self.optimizer_initialized:
                module.borrow_optimizer(self._buckets[self._default_bucket_key])
            self._buckets[bucket_key] = module
        self._curr_module = self._buckets[bucket_key]
        self._curr_bucket_key = bucket_key

    # -- optimizer and computation ------------------------------------------------------------

    def init_optimizer(
        self,
        kvstore: Any = "local",
        optimizer: Any = "sgd",
        optimizer_params: Any = (("learning_rate", 0.01),),
        force_init: bool = False,
    ) -> None:
        if not (self.binded and self.params_initialized):
            raise NNVMError("BucketingModule.init_optimizer: bind() and init_params() first")
        if self.optimizer_initialized and not force_init:
            self.logger.warning("BucketingModule.init_optimizer: already initialized, ignoring")
            return
        self._curr_module.init_optimizer(
            kvstore, optimizer, optimizer_params, force_init=force_init
        )
        for mod in self._buckets.values():
            if mod is not self._curr_module:
                mod.borrow_optimizer(self._curr_module)
        self.optimizer_initialized = True

    def prepare(self, data_batch: Any, sparse_row_id_fn: Any = None) -> None:
        """Bind the batch's bucket ahead of time; the current bucket stays current."""
        self._require_bound("prepare")
        original = self._curr_bucket_key
        key = getattr(data_batch, "bucket_key", None)
        self.switch_bucket(
            original if key is None else key,
            getattr(data_batch, "provide_data", None),
            getattr(data_batch, "provide_label", None),
        )
        self._curr_module.prepare(data_batch, sparse_row_id_fn=sparse_row_id_fn)
        self.switch_bucket(original, None, None)

    def forward(self, data_batch: Any, is_train: bool | None = None) -> None:
        """Switch to the batch's bucket (its bucket_key; the current one if None), then
        run that Module's forward."""
        if not (self.binded and self.params_initialized):
            raise NNVMError("BucketingModule.forward: bind() and init_params() first")
        key = getattr(data_batch, "bucket_key", None)
        if key is None:
            key = self._curr_bucket_key
        self.switch_bucket(
            key,
            getattr(data_batch, "provide_data", None),
            getattr(data_batch, "provide_label", None),
        )
        self._curr_module.forward(data_batch, is_train=is_train)

    def backward(self, out_grads: Any = None) -> None:
        self._require_bound("backward")
        self._curr_module.backward(out_grads=out_grads)

    def update(self) -> None:
        if not self.optimizer_initialized:
            raise NNVMError("BucketingModule.update: call init_optimizer() first")
        self._params_dirty = True
        self._curr_module.update()

    def get_outputs(self, merge_multi_context: bool = True) -> list[Any]:
        self._require_bound("get_outputs")
        return self._curr_module.get_outputs(merge_multi_context=merge_multi_context)

    def get_input_grads(self, merge_multi_context: bool = True) -> list[Any]:
        self._require_bound("get_input_grads")
        return self._curr_module.get_input_grads(merge_multi_context=merge_multi_context)

    def update_metric(self, eval_metric: Any, labels: Any, pre_sliced: bool = False) -> None:
        self._require_bound("update_metric")
        self._curr_module.update_metric(eval_metric, labels, pre_sliced)

    def install_monitor(self, mon: Any) -> None:
        self._require_bound("install_monitor")
        self._monitor = mon
        for mod in self._buckets.values():
            mod.install_monitor(mon)

    # -- checkpoints --------------------------------------------------------------------------

    def save_checkpoint(self, prefix: str, epoch: int, remove_amp_cast: bool = False) -> None:
        """MXNet's bucketing checkpoint: the shared parameters in `prefix-%04d.params`, each
        bound bucket's symbol in `prefix-<key>-symbol.json`, and the keys in
        `prefix.buckets` (an int32 NDArray, so keys must be integers, as in MXNet)."""
        from nnvmpy import nd

        if not self._buckets:
            raise NNVMError("BucketingModule.save_checkpoint: nothing is bound, nothing to save")
        keys = list(self._buckets)
        bad = [k for k in keys if isinstance(k, bool) or not isinstance(k, int | np.integer)]
        if bad:
            raise ParamError(
                f"BucketingModule.save_checkpoint: bucket keys {bad} are not integers; "
                "MXNet's prefix.buckets file holds int32 keys"
            )
        self.save_params(f"{prefix}-{int(epoch):04d}.params")
        for key, module in self._buckets.items():
            module.symbol.save(f"{prefix}-{key}-symbol.json", remove_amp_cast=remove_amp_cast)
        nd.save(f"{prefix}.buckets", nd.array(np.array(keys, dtype=np.int32), dtype=np.int32))

    @staticmethod
    def load(
        prefix: str,
        epoch: int,
        sym_gen: Callable[[Any], tuple[Any, Any, Any]] | None = None,
        default_bucket_key: Any = None,
        **kwargs: Any,
    ) -> BucketingModule:
        """A BucketingModule from save_checkpoint's files (or MXNet's). sym_gen gives each
        bucket's data and label names; the saved symbols are used as they are. The
        parameters are set at bind(); `kwargs` are the constructor's (context, logger, ...)."""
        from nnvmpy import nd, sym
        from nnvmpy.model import load_params

        if sym_gen is None or default_bucket_key is None:
            missing = "sym_gen" if sym_gen is None else "default_bucket_key"
            raise ParamError(f"BucketingModule.load: {missing} is required")
        saved = nd.load(f"{prefix}.buckets")
        keys = saved[0] if isinstance(saved, list) and len(saved) == 1 else None
        if keys is None:
            raise ParamError(f"BucketingModule.load: {prefix}.buckets does not hold one array")
        symbols = {
            int(k): sym.load(f"{prefix}-{int(k)}-symbol.json")
            for k in keys.asnumpy().astype(np.int32).ravel()
        }
        arg_params, aux_params = load_params(prefix, epoch)
        return BucketingModule._from_symbols(
            symbols, sym_gen, default_bucket_key, arg_params, aux_params, kwargs
        )

    @staticmethod
    def load_dict(
        sym_dict: dict[Any, Any] | None = None,
        sym_gen: Callable[[Any], tuple[Any, Any, Any]] | None = None,
        default_bucket_key: Any = None,
        arg_params: dict[str, Any] | None = None,
        aux_params: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> BucketingModule:
        """A BucketingModule from {bucket key: symbol} and the shared parameters, set at
        bind(). sym_gen gives each bucket's data and label names; `kwargs` are the
        constructor's."""
        given = {
            "sym_dict": sym_dict,
            "sym_gen": sym_gen,
            "default_bucket_key": default_bucket_key,
            "arg_params": arg_params,
            "aux_params": aux_params,
        }
        for name, value in given.items():
            if value is None:
                raise ParamError(f"BucketingModule.load_dict: {name} is required")
        assert sym_dict is not None
        assert sym_gen is not None
        return BucketingModule._from_symbols(
            sym_dict, sym_gen, default_bucket_key, arg_params, aux_params, kwargs
        )

    @staticmethod
    def _from_symbols(
        symbols: dict[Any, Any],
        sym_gen: Callable[[Any], tuple[Any, Any, Any]],
        default_bucket_key: Any,
        arg_params: Any,
        aux_params: Any,
        kwargs: dict[str, Any],
    ) -> BucketingModule:
        """An unbound BucketingModule whose buckets are Modules of the given symbols and
        whose default bucket holds the parameters until bind()."""
        mod = BucketingModule(sym_gen, default_bucket_key, **kwargs)
        for key, symbol in symbols.items():
            _, data_names, label_names = mod._gen(key)
            mod._buckets[key] = Module(symbol, data_names, label_names, **mod._module_args)
        if default_bucket_key not in mod._buckets:  # not saved: sym_gen makes it
            mod._buckets[default_bucket_key] = mod._module(default_bucket_key)
        default = mod._buckets[default_bucket_key]
        default._arg_params, default._aux_params = dict(arg_params), dict(aux_params)
        default.params_initialized = True
        mod.params_initialized = True
        return mod


__all__ = ["BucketingModule"]
