"""The optimizer of SVRGModule: the user's optimizer for weights, assignment for full gradients.

SVRGModule keeps the averaged full gradient of each parameter `p` in a KVStore key
`p_full`, so the devices' partial sums are added up by the store. A push to such a key
must store the sum as it is, while a push to `p` is a gradient step; `_SVRGOptimizer`
tells the two apart by the parameter's name (its `param_idx2name` entry, or the key
itself when the store calls it with names) and hands the update to the wrapped optimizer
or to `_AssignmentOptimizer`.

MXNet's version picks the assignment when "full" appears anywhere in the name, so a
parameter of a layer named like "fullyconnected0_weight" would be overwritten by its
gradient; here only names ending in "_full" are full-gradient keys.
"""

from __future__ import annotations

import inspect
from typing import Any

from ...base import ParamError
from ...optimizer import optimizer as opt

FULL_SUFFIX = "_full"


@opt.register
class _AssignmentOptimizer(opt.Optimizer):
    """Stores the pushed value: weight := grad (no rescaling, no weight decay)."""

    def update(self, index: Any, weight: Any, grad: Any, state: Any) -> None:
        weight[:] = grad


_BASE_ARGS = frozenset(inspect.signature(opt.Optimizer.__init__).parameters) - {"self"}


@opt.register
class _SVRGOptimizer(opt.Optimizer):
    """Dispatches each update to `default_opt` (weights) or `aux_opt` (`*_full` keys).

    Args:
        default_optimizer: the optimizer of the weights: a registered name, created with
            all other keyword arguments (learning_rate, momentum, ...), or an instance.
        **kwargs: the wrapped optimizer's arguments; those of the base Optimizer
            (param_idx2name, rescale_grad, ...) also configure this wrapper.
    """

    def __init__(self, default_optimizer: Any = "sgd", **kwargs: Any) -> None:
        super().__init__(**{k: v for k, v in kwargs.items() if k in _BASE_ARGS})
        if isinstance(default_optimizer, str):
            self.default_opt = opt.create(default_optimizer, **kwargs)
        elif isinstance(default_optimizer, opt.Optimizer):
            self.default_opt = default_optimizer
        else:
            raise ParamError(
                "_SVRGOptimizer: default_optimizer must be an optimizer name or an "
                f"nv.optimizer.Optimizer, got {type(default_optimizer).__name__}"
            )
        self.aux_opt = _AssignmentOptimizer()

    def _param_name(self, index: Any) -> str:
        name = self.idx2name.get(index, index) if not isinstance(index, str) else index
        return name if isinstance(name, str) else str(name)

    def _target(self, index: Any) -> opt.Optimizer:
        is_full = self._param_name(index).endswith(FULL_SUFFIX)
        return self.aux_opt if is_full else self.default_opt

    def _set_current_context(self, device_id: int) -> None:
        super()._set_current_context(device_id)
        self.default_opt._set_current_context(device_id)

    def create_state(self, index: Any, weight: Any) -> Any:
        return self._target(index).create_state(index, weight)

    def create_state_multi_precision(self, index: Any, weight: Any) -> Any:
        return self._target(index).create_state_multi_precision(index, weight)

    def update(self, index: Any, weight: Any, grad: Any, state: Any) -> None:
        self._target(index).update(index, weight, grad, state)

    def update_multi_precision(self, index: Any, weight: Any, grad: Any, state: Any) -> None:
        self._target(index).update_multi_precision(index, weight, grad, state)
