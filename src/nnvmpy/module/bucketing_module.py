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
            arg_params, aux_params = self.get_params()
        if force_rebind:
            self._reset_bind()
        if self.binded:
            self.logger.warning("BucketingModule.bind: already bound, ignoring bind()")
            return
        if shared_module is not None:
            raise ParamError("BucketingModule.bind: shared_module is not supported")
        self.for_training, self.inputs_need_grad = for_training, inputs_need_grad
        self._grad_req = grad_req
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
        if bucket_key not in self._buckets:
            if data_shapes is None:
                raise NNVMError(
                    f"BucketingModule.switch_bucket: bucket {bucket_key!r} is new; give its "
                    "data_shapes (a DataBatch's provide_data)"
                )
            module = self._module(bucket_key)
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
        self.switch_bucket(
            data_batch.bucket_key,
            getattr(data_batch, "provide_data", None),
            getattr(data_batch, "provide_label", None),
        )
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


__all__ = ["BucketingModule"]
