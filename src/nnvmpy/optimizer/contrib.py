"""nv.optimizer.contrib: MXNet's contrib optimizers (GroupAdaGrad)."""

from __future__ import annotations

from typing import Any

from ..base import ParamError
from .optimizer import Optimizer, nd_module, register

__all__ = ["GroupAdaGrad"]


@register
class GroupAdaGrad(Optimizer):
    """AdaGrad with one learning rate per row of a 2-D weight (an embedding's rows):

        g = clip(rescale_grad * grad, clip_gradient)
        history += mean(g^2, axis=1, keepdims=True)        # shape (rows, 1)
        weight -= lr * g / sqrt(history + eps)

    Weight decay is not supported (wd must be 0).

    Args:
        eps: added to the history under the square root (avoids division by 0).
    """

    def __init__(self, eps: float = 1e-5, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.float_stable_eps = eps

    def create_state(self, index: Any, weight: Any) -> Any:
        if len(weight.shape) != 2:
            raise ParamError(
                f"GroupAdaGrad: expects a 2-D weight (rows share a learning rate), got shape "
                f"{tuple(weight.shape)}"
            )
        return nd_module().zeros((weight.shape[0], 1), weight.context, dtype=weight.dtype)

    def update(self, index: Any, weight: Any, grad: Any, state: Any) -> None:
        nd = nd_module()
        self._update_count(index)
        lr, wd = self._get_lr(index), self._get_wd(index)
        if wd != 0:
            raise ParamError(f"GroupAdaGrad: weight decay is not supported, got wd={wd}")
        clip = -1.0 if self.clip_gradient is None else self.clip_gradient
        # one fused op (ops/optimizer/group_adagrad.py): updates `state` in place
        nd.contrib.group_adagrad_update(
            weight, grad, state, out=weight, lr=lr, rescale_grad=self.rescale_grad,
            clip_gradient=clip, epsilon=self.float_stable_eps,
        )  # fmt: skip
