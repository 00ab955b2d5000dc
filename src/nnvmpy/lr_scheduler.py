"""Learning-rate schedules (MXNet 1.9.1's mx.lr_scheduler): lr as a function of the update count.

An optimizer calls `scheduler(num_update)` before each update; the schedule may keep state
(FactorScheduler and MultiFactorScheduler remember how far they have decayed), so it is
called with non-decreasing counts, as MXNet's optimizers do. Every schedule can start with
a warm-up of `warmup_steps` updates, rising linearly from `warmup_begin_lr` to `base_lr`
('linear') or holding `warmup_begin_lr` ('constant').

    FactorScheduler:       lr = base_lr * factor ** (number of whole `step`s passed)
    MultiFactorScheduler:  lr = base_lr * factor ** (number of `step` entries passed)
    PolyScheduler:         lr = final + (base - final) * (1 - t / T) ** pwr
    CosineScheduler:       lr = final + (base - final) * (1 + cos(pi * t / T)) / 2
"""

from __future__ import annotations

import logging
import math
from typing import Any

from .base import ParamError

__all__ = [
    "CosineScheduler",
    "FactorScheduler",
    "LRScheduler",
    "MultiFactorScheduler",
    "PolyScheduler",
]

_log = logging.getLogger(__name__)
_WARMUP_MODES = ("linear", "constant")


class LRScheduler:
    """Base class: the warm-up phase; subclasses define `__call__(num_update) -> lr`.

    Args:
        base_lr: the learning rate after warm-up (an optimizer sets it to its own
            learning_rate when given the scheduler).
        warmup_steps: number of updates the warm-up lasts (0: none).
        warmup_begin_lr: the learning rate at update 0 of the warm-up.
        warmup_mode: 'linear' (rise to base_lr) or 'constant' (hold warmup_begin_lr).
    """

    def __init__(
        self,
        base_lr: float = 0.01,
        warmup_steps: int = 0,
        warmup_begin_lr: float = 0,
        warmup_mode: str = "linear",
    ) -> None:
        name = type(self).__name__
        if not isinstance(warmup_steps, int) or warmup_steps < 0:
            raise ParamError(f"{name}: warmup_steps must be an int >= 0, got {warmup_steps!r}")
        if warmup_begin_lr > base_lr:
            raise ParamError(
                f"{name}: base_lr ({base_lr}) must be at least warmup_begin_lr ({warmup_begin_lr})"
            )
        if warmup_mode not in _WARMUP_MODES:
            raise ParamError(
                f"{name}: warmup_mode must be one of {list(_WARMUP_MODES)}, got {warmup_mode!r}"
            )
        self.base_lr = base_lr
        self.warmup_steps = warmup_steps
        self.warmup_final_lr = base_lr
        self.warmup_begin_lr = warmup_begin_lr
        self.warmup_mode = warmup_mode

    def get_warmup_lr(self, num_update: int) -> float:
        """The learning rate at `num_update` < warmup_steps."""
        if num_update >= self.warmup_steps:
            raise ParamError(
                f"{type(self).__name__}: update {num_update} is past the warm-up "
                f"({self.warmup_steps} steps)"
            )
        if self.warmup_mode == "constant":
            return self.warmup_begin_lr
        rise = (self.warmup_final_lr - self.warmup_begin_lr) * num_update / self.warmup_steps
        return self.warmup_begin_lr + rise

    def __call__(self, num_update: int) -> float:
        raise NotImplementedError(f"{type(self).__name__} must define __call__(num_update)")


class FactorScheduler(LRScheduler):
    """Multiply the learning rate by `factor` every `step` updates, down to `stop_factor_lr`."""

    def __init__(
        self,
        step: int,
        factor: float = 1,
        stop_factor_lr: float = 1e-8,
        base_lr: float = 0.01,
        warmup_steps: int = 0,
        warmup_begin_lr: float = 0,
        warmup_mode: str = "linear",
    ) -> None:
        super().__init__(base_lr, warmup_steps, warmup_begin_lr, warmup_mode)
        if step < 1:
            raise ParamError(f"FactorScheduler: step must be >= 1 update, got {step}")
        if factor > 1.0:
            raise ParamError(f"FactorScheduler: factor must be <= 1 to reduce lr, got {factor}")
        self.step = step
        self.factor = factor
        self.stop_factor_lr = stop_factor_lr
        self.count = 0

    def __call__(self, num_update: int) -> float:
        if num_update < self.warmup_steps:
            return self.get_warmup_lr(num_update)
        # a loop, not an if: a resumed run may jump several steps at once
        while num_update > self.count + self.step:
            self.count += self.step
            self.base_lr *= self.factor
            if self.base_lr < self.stop_factor_lr:
                self.base_lr = self.stop_factor_lr
                _log.info(
                    "Update[%d]: learning rate reached its floor %0.5e", num_update, self.base_lr
                )
            else:
                _log.info("Update[%d]: change learning rate to %0.5e", num_update, self.base_lr)
        return self.base_lr


class MultiFactorScheduler(LRScheduler):
    """Multiply the learning rate by `factor` after each update count listed in `step`."""

    def __init__(
        self,
        step: list[int],
        factor: float = 1,
        base_lr: float = 0.01,
        warmup_steps: int = 0,
        warmup_begin_lr: float = 0,
        warmup_mode: str = "linear",
    ) -> None:
        super().__init__(base_lr, warmup_steps, warmup_begin_lr, warmup_mode)
        if not isinstance(step, list) or not step:
            raise ParamError(f"MultiFactorScheduler: step must be a non-empty list, got {step!r}")
        for i, s in enumerate(step):
            if s < 1:
                raise ParamError(f"MultiFactorScheduler: step[{i}] must be >= 1, got {s}")
            if i and s <= step[i - 1]:
                raise ParamError(f"MultiFactorScheduler: step must increase, got {step}")
        if factor > 1.0:
            raise ParamError(
                f"MultiFactorScheduler: factor must be <= 1 to reduce lr, got {factor}"
            )
        self.step = step
        self.cur_step_ind = 0
        self.factor = factor
        self.count = 0

    def __call__(self, num_update: int) -> float:
        if num_update < self.warmup_steps:
            return self.get_warmup_lr(num_update)
        while self.cur_step_ind < len(self.step) and num_update > self.step[self.cur_step_ind]:
            self.count = self.step[self.cur_step_ind]
            self.cur_step_ind += 1
            self.base_lr *= self.factor
            _log.info("Update[%d]: change learning rate to %0.5e", num_update, self.base_lr)
        return self.base_lr


class _Annealing(LRScheduler):
    """Shared by Poly and Cosine: anneal from the constructor's base_lr to final_lr."""

    def __init__(self, max_update: int, base_lr: float, final_lr: float, *warmup: Any) -> None:
        super().__init__(base_lr, *warmup)
        name = type(self).__name__
        if not isinstance(max_update, int) or max_update < 1:
            raise ParamError(f"{name}: max_update must be an int >= 1, got {max_update!r}")
        self.base_lr_orig = base_lr
        self.max_update = max_update
        self.final_lr = final_lr
        self.max_steps = max_update - self.warmup_steps

    def _shape(self, progress: float) -> float:
        raise NotImplementedError

    def __call__(self, num_update: int) -> float:
        if num_update < self.warmup_steps:
            return self.get_warmup_lr(num_update)
        if num_update <= self.max_update:
            progress = (num_update - self.warmup_steps) / self.max_steps
            span = self.base_lr_orig - self.final_lr
            self.base_lr = self.final_lr + span * self._shape(progress)
        return self.base_lr


class PolyScheduler(_Annealing):
    """lr = final_lr + (base_lr - final_lr) * (1 - t / max_steps) ** pwr, then final_lr."""

    def __init__(
        self,
        max_update: int,
        base_lr: float = 0.01,
        pwr: float = 2,
        final_lr: float = 0,
        warmup_steps: int = 0,
        warmup_begin_lr: float = 0,
        warmup_mode: str = "linear",
    ) -> None:
        super().__init__(max_update, base_lr, final_lr, warmup_steps, warmup_begin_lr, warmup_mode)
        self.power = pwr

    def _shape(self, progress: float) -> float:
        return float(pow(1.0 - progress, self.power))


class CosineScheduler(_Annealing):
    """lr = final_lr + (base_lr - final_lr) * (1 + cos(pi * t / max_steps)) / 2."""

    def __init__(
        self,
        max_update: int,
        base_lr: float = 0.01,
        final_lr: float = 0,
        warmup_steps: int = 0,
        warmup_begin_lr: float = 0,
        warmup_mode: str = "linear",
    ) -> None:
        super().__init__(max_update, base_lr, final_lr, warmup_steps, warmup_begin_lr, warmup_mode)

    def _shape(self, progress: float) -> float:
        return (1.0 + math.cos(math.pi * progress)) / 2.0
