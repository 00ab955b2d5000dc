"""Optimizer: MXNet 1.9.1's base class — learning rate, weight decay, per-parameter multipliers.

A concrete optimizer says how to make the state of one weight (`create_state`) and how to
update the weight from its gradient (`update`), normally with one registered update op
(`sgd_update`, `adam_update`, ...) writing the weight in place. This base class owns what
every optimizer shares:

- the learning rate, fixed or from an `lr_scheduler` driven by the update count;
- per-parameter multipliers: `lr = learning_rate * lr_mult[p]`, `wd = wd * wd_mult[p]`,
  looked up by index, or by name via `param_idx2name`; with a `sym`, its variables'
  `__lr_mult__` / `__wd_mult__` attributes are the defaults; a named parameter that is not
  a `*_weight` or `*_gamma` gets no weight decay (biases, BatchNorm's beta);
- update counts per parameter (`t` of Adam's bias correction);
- multi-precision: with `multi_precision=True` a float16 weight gets a float32 master copy
  that the update runs on, then is cast back.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

import numpy as np

from ..base import ParamError

_HALF = np.dtype(np.float16)


def nd_module() -> Any:
    """nnvmpy.ndarray, imported on first use (the optimizer package loads lazily)."""
    from nnvmpy import ndarray

    return ndarray


class Optimizer:
    """The base class of all optimizers.

    Args:
        rescale_grad: the gradient is multiplied by this first (often 1 / batch_size).
        param_idx2name: index -> parameter name, for name-based multipliers.
        wd: weight decay (L2 regularisation) coefficient.
        clip_gradient: clip the rescaled gradient to [-clip_gradient, clip_gradient]
            (None: no clipping).
        learning_rate: the initial learning rate.
        lr_scheduler: an `nv.lr_scheduler.LRScheduler`; its base_lr becomes learning_rate.
        sym: a Symbol whose variables' __lr_mult__ / __wd_mult__ set the multipliers.
        begin_num_update: the update count to start from (resuming a run).
        multi_precision: keep a float32 master copy of float16 weights.
        param_dict: index -> a parameter object with .lr_mult / .wd_mult (Gluon style).
    """

    opt_registry: ClassVar[dict[str, type[Optimizer]]] = {}

    def __init__(
        self,
        rescale_grad: float = 1.0,
        param_idx2name: dict[int, str] | None = None,
        wd: float = 0.0,
        clip_gradient: float | None = None,
        learning_rate: float = 0.01,
        lr_scheduler: Any = None,
        sym: Any = None,
        begin_num_update: int = 0,
        multi_precision: bool = False,
        param_dict: dict[Any, Any] | None = None,
    ) -> None:
        self.rescale_grad = rescale_grad
        self.lr = learning_rate
        self.lr_scheduler = lr_scheduler
        if lr_scheduler is not None:
            lr_scheduler.base_lr = learning_rate
        self.wd = wd
        self.lr_mult: dict[Any, float] = {}
        self.wd_mult: dict[Any, float] = {}
        self.begin_num_update = begin_num_update
        self.num_update = begin_num_update
        self._all_index_update_counts: dict[int, dict[Any, int]] = {0: {}}
        self._index_update_count = self._all_index_update_counts[0]
        self.clip_gradient = clip_gradient
        self.multi_precision = multi_precision
        self.aggregate_num = 0  # > 0: the Updater hands over lists of this many weights
        if param_idx2name is None:
            param_idx2name = {}
        if not isinstance(param_idx2name, dict):
            raise ParamError(
                f"{type(self).__name__}: param_idx2name must be a dict of index -> name, "
                f"got {type(param_idx2name).__name__}"
            )
        self.idx2name = dict(param_idx2name)
        self.sym_info = (sym.attr_dict(), sym.list_arguments()) if sym is not None else ()
        self.param_dict = param_dict if param_dict else {}
        self.set_lr_mult({})
        self.set_wd_mult({})

    # -- registry --------------------------------------------------------------------------

    @staticmethod
    def register(klass: type[Optimizer]) -> type[Optimizer]:
        """Register an Optimizer subclass under its lower-cased class name (a decorator)."""
        if not (isinstance(klass, type) and issubclass(klass, Optimizer)):
            raise ParamError(f"Optimizer.register: expected an Optimizer subclass, got {klass!r}")
        name = klass.__name__.lower()
        old = Optimizer.opt_registry.get(name)
        if old is not None and old is not klass:
            warnings.warn(
                f"New optimizer {klass.__module__}.{klass.__name__} is overriding existing "
                f"optimizer {old.__module__}.{old.__name__}",
                stacklevel=2,
            )
        Optimizer.opt_registry[name] = klass
        return klass

    @staticmethod
    def create_optimizer(name: str, **kwargs: Any) -> Optimizer:
        """An instance of the optimizer registered as `name` (case-insensitive)."""
        klass = Optimizer.opt_registry.get(name.lower())
        if klass is None:
            known = sorted(Optimizer.opt_registry)
            raise ParamError(f"Cannot find optimizer {name!r}; registered: {known}")
        return klass(**kwargs)

    # -- learning rate and multipliers -----------------------------------------------------

    @property
    def learning_rate(self) -> float:
        """The current learning rate (the scheduler's at the current update count)."""
        if self.lr_scheduler is not None:
            return float(self.lr_scheduler(self.num_update))
        return self.lr

    def set_learning_rate(self, lr: float) -> None:
        """Set the learning rate; not allowed while an lr_scheduler drives it."""
        if self.lr_scheduler is not None:
            raise UserWarning(
                "LRScheduler of the optimizer has already been defined. Note that "
                "set_learning_rate can mutate the value of the learning rate of the optimizer "
                "only when the LRScheduler of the optimizer is undefined."
            )
        self.lr = lr

    def set_lr_scale(self, args_lrscale: Any) -> None:
        """[Deprecated] use set_lr_mult."""
        raise DeprecationWarning("set_lr_scale is deprecated: use set_lr_mult")

    def set_lr_mult(self, args_lr_mult: dict[Any, float]) -> None:
        """Learning-rate multipliers by parameter name (or index); the sym's attributes first."""
        self.lr_mult = self._symbol_mults("__lr_mult__")
        self.lr_mult.update(args_lr_mult)

    def set_wd_mult(self, args_wd_mult: dict[Any, float]) -> None:
        """Weight-decay multipliers; named parameters other than *_weight / *_gamma get 0."""
        self.wd_mult = {
            n: 0.0 for n in self.idx2name.values() if not n.endswith(("_weight", "_gamma"))
        }
        self.wd_mult.update(self._symbol_mults("__wd_mult__"))
        self.wd_mult.update(args_wd_mult)

    def _symbol_mults(self, key: str) -> dict[Any, float]:
        if not self.sym_info:
            return {}
        attrs, arg_names = self.sym_info
        return {n: float(attrs[n][key]) for n in arg_names if key in attrs.get(n, {})}

    def _set_current_context(self, device_id: int) -> None:
        """Keep separate update counts per device (one optimizer, several GPUs)."""
        counts = self._all_index_update_counts.setdefault(device_id, {})
        self._index_update_count = counts

    def _update_count(self, index: Any) -> None:
        """Count one update of each index; num_update is the largest count."""
        for idx in index if isinstance(index, list | tuple) else [index]:
            count = self._index_update_count.get(idx, self.begin_num_update) + 1
            self._index_update_count[idx] = count
            self.num_update = max(count, self.num_update)

    def _get_lrs(self, indices: Sequence[Any]) -> list[float]:
        """The learning rate of each index: the global one times its multiplier."""
        lr = self.learning_rate
        return [lr * self._mult(i, self.lr_mult, "lr_mult") for i in indices]

    def _get_lr(self, index: Any) -> float:
        return self._get_lrs([index])[0]

    def _get_wds(self, indices: Sequence[Any]) -> list[float]:
        """The weight decay of each index: wd times its multiplier (0 for named non-weights)."""
        return [self.wd * self._mult(i, self.wd_mult, "wd_mult") for i in indices]

    def _get_wd(self, index: Any) -> float:
        return self._get_wds([index])[0]

    def _mult(self, index: Any, mults: dict[Any, float], attr: str) -> float:
        if isinstance(index, list):  # a group of indices reached a one-weight-at-a-time rule
            raise ParamError(
                f"{type(self).__name__}: index must be one parameter index, got the list "
                f"{index!r}; only optimizers with aggregate_num > 0 (SGD, LARS, LAMB) "
                "update a list of weights in one call"
            )
        if index in self.param_dict:
            return float(getattr(self.param_dict[index], attr))
        if index in mults:
            return mults[index]
        if index in self.idx2name:
            return mults.get(self.idx2name[index], 1.0)
        return 1.0

    # -- states and updates ----------------------------------------------------------------

    def create_state(self, index: Any, weight: Any) -> Any:
        """The auxiliary state of one weight (momentum, moments, ...); None if stateless."""
        return None

    def create_state_multi_precision(self, index: Any, weight: Any) -> Any:
        """create_state, plus a float32 master copy for a float16 weight when multi_precision:
        (master copy, state of the master copy)."""
        if self.multi_precision and weight.dtype == _HALF:
            master = weight.astype(np.float32)
            return (master, self.create_state(index, master))
        if weight.dtype == _HALF:
            warn_float16(type(self).__name__)
        return self.create_state(index, weight)

    def update(self, index: Any, weight: Any, grad: Any, state: Any) -> None:
        """Update `weight` in place from `grad` and `state` (the subclass's rule)."""
        raise NotImplementedError(f"{type(self).__name__} must define update()")

    def update_multi_precision(self, index: Any, weight: Any, grad: Any, state: Any) -> None:
        """update(), through the float32 master copy when the state holds one."""
        if self.multi_precision and weight.dtype == _HALF:
            master, inner = state
            self.update(index, master, grad.astype(np.float32), inner)
            nd_module().Cast(master, dtype=weight.dtype, out=weight)
        else:
            self.update(index, weight, grad, state)

    def _clip_kwargs(self, key: str = "clip_gradient") -> dict[str, float]:
        """The op's clip argument when clipping is on (None or 0 means off, as in MXNet)."""
        return {key: self.clip_gradient} if self.clip_gradient else {}

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state.pop("param_dict", None)  # Gluon parameters are the trainer's to set again
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__ = state
        self.param_dict = {}


def warn_float16(name: str) -> None:
    warnings.warn(
        "Accumulating with float16 in optimizer can lead to poor accuracy or slow "
        f"convergence. Consider using multi_precision=True option of the {name} optimizer",
        stacklevel=3,
    )


register: Callable[[type[Optimizer]], type[Optimizer]] = Optimizer.register
create: Callable[..., Optimizer] = Optimizer.create_optimizer
