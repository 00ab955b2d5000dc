"""SGD-family optimizers: SGD (with momentum), NAG and Signum, each driving its update op.

    SGD:    mom = momentum * mom - lr * (clip(rescale_grad * grad) + wd * weight)
            weight += mom                               (sgd_mom_update; sgd_update without)
    NAG:    see nag_mom_update (Nesterov's look-ahead on the momentum)
    Signum: mom = momentum * mom - (1 - momentum) * (clip(rescale_grad * grad) + wd * weight)
            weight = (1 - lr * wd_lh) * weight + lr * sign(mom)

SGD hands the Updater several weights at once (`aggregate_num`, MXNet's
MXNET_OPTIMIZER_AGGREGATION_SIZE, default 4) and updates them with one multi_sgd_* op.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from .optimizer import Optimizer, nd_module, register, warn_float16

_HALF = np.dtype(np.float16)


def _as_lists(*items: Any) -> tuple[list[Any], ...]:
    """(indices, weights, grads, states) as lists, whether one weight or a list was given."""
    if isinstance(items[0], list | tuple):
        return tuple(list(x) for x in items)
    return tuple([x] for x in items)


def _interleave(*columns: list[Any]) -> list[Any]:
    """[a0, b0, c0, a1, b1, c1, ...]: the input order of the multi_* ops."""
    return [x for group in zip(*columns, strict=True) for x in group]


class _MasterCopy(Optimizer):
    """Optimizers whose mp ops take the float32 master copy last: state (inner, weight32)."""

    momentum: float = 0.0

    def create_state_multi_precision(self, index: Any, weight: Any) -> Any:
        if self.multi_precision and weight.dtype == _HALF:
            master = weight.astype(np.float32)
            return (self.create_state(index, master), master)
        if weight.dtype == _HALF:
            warn_float16(type(self).__name__)
        return self.create_state(index, weight)

    def create_state(self, index: Any, weight: Any) -> Any:
        if self.momentum == 0.0:
            return None
        return nd_module().zeros(weight.shape, weight.context, dtype=weight.dtype)

    def _kwargs(self) -> dict[str, Any]:
        kwargs: dict[str, Any] = {"rescale_grad": self.rescale_grad}
        if self.momentum > 0:
            kwargs["momentum"] = self.momentum
        return {**kwargs, **self._clip_kwargs()}

    def update(self, index: Any, weight: Any, grad: Any, state: Any) -> None:
        self._update_impl(index, weight, grad, state, multi_precision=False)

    def update_multi_precision(self, index: Any, weight: Any, grad: Any, state: Any) -> None:
        first = weight[0] if isinstance(weight, list | tuple) else weight
        use_mp = self.multi_precision and first.dtype == _HALF
        self._update_impl(index, weight, grad, state, multi_precision=use_mp)

    def _update_impl(
        self, index: Any, weight: Any, grad: Any, state: Any, multi_precision: bool
    ) -> None:
        raise NotImplementedError


@register
class SGD(_MasterCopy):
    """Stochastic gradient descent with momentum and weight decay (sgd_update / sgd_mom_update).

    Args:
        momentum: the momentum (0: plain SGD, no state).
        lazy_update: passed to the ops (it matters only for row_sparse gradients, which
            nnvmpy does not have).
        multi_precision: float32 master copies of float16 weights (mp_sgd_* ops).
    """

    def __init__(self, momentum: float = 0.0, lazy_update: bool = True, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.momentum = momentum
        self.lazy_update = lazy_update
        self.aggregate_num = int(os.getenv("MXNET_OPTIMIZER_AGGREGATION_SIZE", "4"))

    def _update_impl(
        self, index: Any, weight: Any, grad: Any, state: Any, multi_precision: bool
    ) -> None:
        nd = nd_module()
        indices, weights, grads, states = _as_lists(index, weight, grad, state)
        self._update_count(indices)
        lrs, wds = self._get_lrs(indices), self._get_wds(indices)
        kwargs = self._kwargs()
        if len(weights) > 1:  # one op for the whole group
            n = len(weights)
            common = {"out": weights, "num_weights": n, "lrs": lrs, "wds": wds, **kwargs}
            mom = self.momentum > 0
            if not multi_precision:
                columns = [weights, grads, states] if mom else [weights, grads]
                op = nd.multi_sgd_mom_update if mom else nd.multi_sgd_update
            else:
                inner, masters = [s[0] for s in states], [s[1] for s in states]
                columns = [weights, grads, inner, masters] if mom else [weights, grads, masters]
                op = nd.multi_mp_sgd_mom_update if mom else nd.multi_mp_sgd_update
            op(*_interleave(*columns), **common)
            return
        w, g, s, lr, wd = weights[0], grads[0], states[0], lrs[0], wds[0]
        if not multi_precision:
            if s is not None:
                nd.sgd_mom_update(
                    w, g, s, out=w, lazy_update=self.lazy_update, lr=lr, wd=wd, **kwargs
                )
            else:
                nd.sgd_update(w, g, out=w, lazy_update=self.lazy_update, lr=lr, wd=wd, **kwargs)
        elif s[0] is not None:
            nd.mp_sgd_mom_update(w, g, s[0], s[1], out=w, lr=lr, wd=wd, **kwargs)
        else:
            nd.mp_sgd_update(w, g, s[1], out=w, lr=lr, wd=wd, **kwargs)


@register
class ccSGD(SGD):
    """[Deprecated] the same as SGD, kept for old scripts."""


@register
class NAG(_MasterCopy):
    """Nesterov accelerated gradient (nag_mom_update; sgd_update without momentum).

    state = momentum * state + grad + wd * weight
    weight = weight - lr * (grad + momentum * state)
    """

    def __init__(self, momentum: float = 0.0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.momentum = momentum

    def update_multi_precision(self, index: Any, weight: Any, grad: Any, state: Any) -> None:
        use_mp = self.multi_precision and weight.dtype == _HALF and isinstance(state, tuple | list)
        self._update_impl(index, weight, grad, state, multi_precision=use_mp)

    def _update_impl(
        self, index: Any, weight: Any, grad: Any, state: Any, multi_precision: bool
    ) -> None:
        nd = nd_module()
        self._update_count(index)
        lr, wd = self._get_lr(index), self._get_wd(index)
        kwargs = self._kwargs()
        if not multi_precision:
            if state is not None:
                nd.nag_mom_update(weight, grad, state, out=weight, lr=lr, wd=wd, **kwargs)
            else:
                nd.sgd_update(weight, grad, out=weight, lr=lr, wd=wd, **kwargs)
        elif state[0] is not None:
            nd.mp_nag_mom_update(
                weight, grad, state[0], state[1], out=weight, lr=lr, wd=wd, **kwargs
            )
        else:
            nd.mp_sgd_update(weight, grad, state[1], out=weight, lr=lr, wd=wd, **kwargs)


@register
class Signum(Optimizer):
    """SignSGD with momentum (signum_update; signsgd_update without momentum).

    Args:
        momentum: the momentum (0: signSGD, no state).
        wd_lh: decoupled weight decay (Loshchilov & Hutter), applied outside the sign.
    """

    def __init__(
        self, learning_rate: float = 0.01, momentum: float = 0.9, wd_lh: float = 0.0, **kwargs: Any
    ) -> None:
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.momentum = momentum
        self.wd_lh = wd_lh

    def create_state(self, index: Any, weight: Any) -> Any:
        if self.momentum == 0.0:
            return None
        return nd_module().zeros(weight.shape, weight.context, dtype=weight.dtype)

    def update(self, index: Any, weight: Any, grad: Any, state: Any) -> None:
        nd = nd_module()
        self._update_count(index)
        lr, wd = self._get_lr(index), self._get_wd(index)
        kwargs: dict[str, Any] = {"rescale_grad": self.rescale_grad, **self._clip_kwargs()}
        if self.momentum > 0:
            kwargs["momentum"] = self.momentum
        if self.wd_lh:
            kwargs["wd_lh"] = self.wd_lh
        if state is not None:
            nd.signum_update(weight, grad, state, out=weight, lr=lr, wd=wd, **kwargs)
        else:
            nd.signsgd_update(weight, grad, out=weight, lr=lr, wd=wd, **kwargs)
