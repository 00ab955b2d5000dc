"""SVRGModule: a Module that trains with stochastic variance-reduced gradients.

Two modules over the same symbol and batch: this one holds the current weights w, the
auxiliary `_mod_aux` a snapshot w~. `update_full_grads(data)` takes the snapshot and
averages the gradient at w~ over every batch of `data` (mu, per parameter). Each step
runs forward/backward in both modules on the batch, then `update()` replaces each
gradient g(w) by g(w) - g(w~) + mu before the usual Module update (the optimizer, through
the KVStore when there is one).

Where the full gradient lives, per device (`_param_dict[k][name]`):
- with a KVStore, the devices' averages are pushed to the key `<name>_full` (summed by
  the store, stored by `_SVRGOptimizer`'s assignment) and pulled back: every device
  holds the total. The store also sums the corrected gradients over the devices, so each
  device adds total / devices.
- without one, each device updates its own copy from its own slice of the batch, so each
  keeps (and adds) the average of its own gradients.
"""

from __future__ import annotations

from typing import Any

from ...base import NNVMError, ParamError
from ...module.module import _DEFAULT_INIT, Module
from .svrg_optimizer import FULL_SUFFIX, _SVRGOptimizer


class SVRGModule(Module):
    """A Module trained with SVRG; `update_freq`: the full gradient is recomputed every
    update_freq epochs by fit() (or whenever the caller calls update_full_grads).

    The other arguments are Module's.
    """

    def __init__(
        self,
        symbol: Any,
        data_names: Any = ("data",),
        label_names: Any = ("softmax_label",),
        logger: Any = None,
        context: Any = None,
        work_load_list: Any = None,
        fixed_param_names: Any = None,
        state_names: Any = None,
        group2ctxs: Any = None,
        compression_params: Any = None,
        update_freq: int | None = None,
    ) -> None:
        if isinstance(update_freq, bool) or not isinstance(update_freq, int) or update_freq < 1:
            raise ParamError(
                "SVRGModule: update_freq (epochs between full-gradient updates) must be a "
                f"positive int, got {update_freq!r}"
            )
        kwargs = {
            "logger": logger,
            "context": context,
            "work_load_list": work_load_list,
            "fixed_param_names": fixed_param_names,
            "state_names": state_names,
            "group2ctxs": group2ctxs,
            "compression_params": compression_params,
        }
        super().__init__(symbol, data_names, label_names, **kwargs)
        self.update_freq = update_freq
        self._mod_aux = Module(symbol, data_names, label_names, **kwargs)
        self._ctx_len = len(self._context)
        self._param_dict: list[dict[str, Any]] = []
        self._full_grads_ready = False
        self._aux_step = False  # the aux module ran forward on the current batch
        self._warned_no_snapshot = False

    # -- binding and parameters -----------------------------------------------------------

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
        """Bind this module and, for training, the snapshot module with the same shapes."""
        super().bind(
            data_shapes, label_shapes, for_training, inputs_need_grad, force_rebind,
            shared_module, grad_req,
        )  # fmt: skip
        if for_training:
            self._mod_aux.bind(
                data_shapes, label_shapes, for_training=True, force_rebind=force_rebind,
                grad_req=grad_req,
            )  # fmt: skip
            if self.params_initialized and not self._mod_aux.params_initialized:
                self._snapshot()  # parameters given before bind (SVRGModule.load)

    def init_params(
        self,
        initializer: Any = _DEFAULT_INIT,
        arg_params: dict[str, Any] | None = None,
        aux_params: dict[str, Any] | None = None,
        allow_missing: bool = False,
        force_init: bool = False,
        allow_extra: bool = False,
    ) -> None:
        """Module.init_params; the snapshot starts equal to the initial weights."""
        super().init_params(
            initializer, arg_params, aux_params, allow_missing, force_init, allow_extra
        )
        if self._mod_aux.binded and self.params_initialized:
            self._snapshot()

    def _snapshot(self) -> None:
        arg, aux = self.get_params()
        self._mod_aux.set_params(arg, aux)

    def reshape(self, data_shapes: Any, label_shapes: Any = None) -> None:
        super().reshape(data_shapes, label_shapes)
        if self._mod_aux.binded:
            self._mod_aux.reshape(data_shapes, label_shapes)

    def init_optimizer(
        self,
        kvstore: Any = "local",
        optimizer: Any = "sgd",
        optimizer_params: Any = (("learning_rate", 0.01),),
        force_init: bool = False,
    ) -> None:
        """Module.init_optimizer with `optimizer` wrapped in an _SVRGOptimizer, and the
        KVStore keys `<name>_full` that sum the full gradients over the devices."""
        from nnvmpy import nd

        if self.optimizer_initialized and not force_init:
            self.logger.warning("SVRGModule.init_optimizer: already initialized, ignoring")
            return
        self._require("init_optimizer", bound=True, params=True)
        params = dict(optimizer_params)
        params["default_optimizer"] = optimizer
        super().init_optimizer(kvstore, _SVRGOptimizer.__name__, params, force_init)
        arg, _ = self.get_params()
        self._param_dict = [
            {n: nd.zeros(arg[n].shape, ctx=ctx, dtype=arg[n].dtype) for n in self._param_names}
            for ctx in self._context
        ]
        self._full_grads_ready = False
        if self._kvstore is not None:
            for n in self._param_names:
                self._kvstore.init(n + FULL_SUFFIX, nd.zeros(arg[n].shape, dtype=arg[n].dtype))

    # -- full gradient --------------------------------------------------------------------

    def update_full_grads(self, train_data: Any) -> None:
        """Snapshot the weights and average the snapshot's gradient over all of `train_data`
        (reset before and after)."""
        from nnvmpy import nd

        self._require("update_full_grads", bound=True, params=True)
        if not self._mod_aux.binded:
            raise NNVMError("SVRGModule.update_full_grads: the module is not bound for training")
        if not self.optimizer_initialized:
            raise NNVMError("SVRGModule.update_full_grads: call init_optimizer() first")
        self._snapshot()
        aux_group = self._mod_aux._exec_group
        sums: list[dict[str, Any]] = [
            {n: nd.zeros_like(a) for n, a in d.items()} for d in self._param_dict
        ]
        nbatch = 0
        train_data.reset()
        for batch in train_data:
            self._mod_aux.forward(batch, is_train=True)
            self._mod_aux.backward()
            for name, grads in zip(aux_group.param_names, aux_group.grad_arrays):
                if grads is None or name not in sums[0]:
                    continue
                for k, g in enumerate(grads):
                    sums[k][name] += g.as_in_context(sums[k][name].context)
            nbatch += 1
        train_data.reset()
        if nbatch == 0:
            raise NNVMError("SVRGModule.update_full_grads: train_data yielded no batch")
        for per_device in sums:
            for name in per_device:
                per_device[name] *= 1.0 / nbatch
        if self._kvstore is None:
            self._param_dict = sums
        else:
            for name in self._param_names:
                self._accumulate_kvstore(name, [d[name] for d in sums])
        self._full_grads_ready = True
        self._aux_step = False

    def _accumulate_kvstore(self, key: str, value: list[Any]) -> None:
        """Sum the arrays `value` (one per device) in the store's `<key>_full`; the total
        comes back into every array of `value` and into each device's
        `_param_dict[k][key]`."""
        if self._kvstore is None:
            raise NNVMError("SVRGModule._accumulate_kvstore: the module has no KVStore")
        self._kvstore.pushpull(key + FULL_SUFFIX, value)
        for k, per_device in enumerate(self._param_dict):
            value[min(k, len(value) - 1)].copyto(per_device[key])

    # -- training steps -------------------------------------------------------------------

    def forward(self, data_batch: Any, is_train: bool | None = None) -> None:
        """Forward in this module, and (training) in the snapshot module on the same batch."""
        super().forward(data_batch, is_train)
        train = self.for_training if is_train is None else is_train
        self._aux_step = bool(train and self._mod_aux.binded and self._mod_aux.params_initialized)
        if self._aux_step:
            self._mod_aux.forward(data_batch, is_train=True)

    def backward(self, out_grads: Any = None) -> None:
        super().backward(out_grads)
        if self._aux_step:
            self._mod_aux.backward(out_grads)

    def update(self) -> None:
        """Module.update on the variance-reduced gradients g(w) - g(w~) + mu.

        Before the first update_full_grads there is no snapshot gradient to reduce
        with: the step is a plain one (logged once)."""
        if self._full_grads_ready and self._aux_step:
            self._reduce_variance()
        elif not self._warned_no_snapshot:
            self.logger.warning(
                "SVRGModule.update: no full gradient yet (call update_full_grads, as fit() "
                "does every update_freq epochs); taking a plain step"
            )
            self._warned_no_snapshot = True
        super().update()

    def _reduce_variance(self) -> None:
        group, aux_group = self._exec_group, self._mod_aux._exec_group
        fixed = set(self._fixed_param_names)
        share = 1.0 / self._ctx_len if self._kvstore is not None else 1.0
        for name, grads, aux_grads in zip(
            group.param_names, group.grad_arrays, aux_group.grad_arrays, strict=True
        ):
            if grads is None or aux_grads is None or name in fixed:
                continue
            for k, (g, g_snap) in enumerate(zip(grads, aux_grads, strict=True)):
                full = self._param_dict[k][name].as_in_context(g.context)
                g -= g_snap
                g += full * share

    def _fit_epoch_begin(self, epoch: int, train_data: Any) -> None:
        """fit()'s hook: recompute the full gradient when epoch % update_freq == 0."""
        if epoch % self.update_freq == 0:
            self.update_full_grads(train_data)

    @staticmethod
    def load(
        prefix: str, epoch: int, load_optimizer_states: bool = False, **kwargs: Any
    ) -> SVRGModule:
        """An SVRGModule from save_checkpoint's files (update_freq in kwargs, default 1)."""
        kwargs.setdefault("update_freq", 1)
        mod: SVRGModule = SVRGModule._from_checkpoint(prefix, epoch, load_optimizer_states, kwargs)
        return mod
