"""SGD-family optimizers: SGD (with momentum), NAG, Signum and LARS, each driving update ops.

    SGD:    mom = momentum * mom - lr * (clip(rescale_grad * grad) + wd * weight)
            weight += mom                               (sgd_mom_update; sgd_update without)
    NAG:    see nag_mom_update (Nesterov's look-ahead on the momentum)
    Signum: mom = momentum * mom - (1 - momentum) * (clip(rescale_grad * grad) + wd * weight)
            weight = (1 - lr * wd_lh) * weight + lr * sign(mom)

    LARS:   SGD with momentum, lr scaled per layer by eta * ||w|| / (||g|| + wd * ||w|| + eps)
    LBSGD:  SGD on gradients accumulated over batch_scale calls, with a warm-up of lr

SGD and LARS take several weights at once from the Updater (`aggregate_num`, MXNet's
MXNET_OPTIMIZER_AGGREGATION_SIZE, default 4) and update them with one multi_sgd_* op.
"""

from __future__ import annotations

import math
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


def _lars_exempt(name: str) -> bool:
    """Biases and BatchNorm's gamma / beta keep the global learning rate in LARS."""
    return name.endswith(("gamma", "beta", "bias"))


@register
class LARS(_MasterCopy):
    """LARS (You et al., "Large Batch Training of Convolutional Networks"): SGD with momentum
    and weight decay whose learning rate is scaled per layer by the trust ratio

        lr_layer = lr * eta * ||w|| / (||rescale_grad * g|| + wd * ||w|| + eps)

    when both norms are positive (else lr). Parameters named *gamma, *beta or *bias keep lr.
    The norms and ratios are computed on the device (multi_sum_sq, multi_lars) and the
    weights updated in groups of `aggregate_num` (preloaded_multi_(mp_)sgd(_mom)_update).

    Args:
        momentum: the momentum (0: no state).
        lazy_update: kept for MXNet's signature (it matters only for sparse gradients).
        eta: the LARS coefficient.
        eps: added to the denominator of the trust ratio.
        momentum_correction: scale the momentum by lr_now / lr_before when a scheduler
            changes the learning rate (Goyal et al., "Accurate, Large Minibatch SGD").
    """

    def __init__(
        self,
        momentum: float = 0.0,
        lazy_update: bool = True,
        eta: float = 0.001,
        eps: float = 0,
        momentum_correction: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.momentum = momentum
        self.lazy_update = lazy_update
        self.eta, self.eps = eta, eps
        self.momentum_correction = momentum_correction
        self.aggregate_num = int(os.getenv("MXNET_OPTIMIZER_AGGREGATION_SIZE", "4"))
        self.last_lr: float | None = None
        self.cur_lr: float | None = None

    def set_wd_mult(self, args_wd_mult: dict[Any, float]) -> None:
        """As the base class, but only *_weight parameters are decayed by default."""
        self.wd_mult = {n: 0.0 for n in self.idx2name.values() if not n.endswith("_weight")}
        self.wd_mult.update(self._symbol_mults("__wd_mult__"))
        self.wd_mult.update(args_wd_mult)

    def _get_lrs(self, indices: Any) -> list[float]:
        lr = self.learning_rate
        self.last_lr = lr if self.cur_lr is None else self.cur_lr  # for momentum_correction
        self.cur_lr = lr
        return [lr * self._mult(i, self.lr_mult, "lr_mult") for i in indices]

    def _momentum_now(self) -> float:
        if self.momentum_correction and self.last_lr and self.cur_lr is not None:
            return self.momentum * (self.cur_lr / self.last_lr)
        return self.momentum

    def _update_impl(
        self, index: Any, weight: Any, grad: Any, state: Any, multi_precision: bool
    ) -> None:
        nd = nd_module()
        indices, weights, grads, states = _as_lists(index, weight, grad, state)
        self._update_count(indices)
        lrs, wds = self._get_lrs(indices), self._get_wds(indices)
        kwargs: dict[str, Any] = {"rescale_grad": self.rescale_grad, **self._clip_kwargs()}
        if self.momentum > 0:
            kwargs["momentum"] = self._momentum_now()
        names = [self.idx2name.get(i, str(i)) for i in indices]
        order = [k for k, n in enumerate(names) if not _lars_exempt(n)]
        n_lars = len(order)
        order += [k for k, n in enumerate(names) if _lars_exempt(n)]
        ctx = weights[0].context
        new_lrs = nd.array([lrs[k] for k in order], ctx=ctx, dtype="float32")
        new_wds = nd.array([wds[k] for k in order], ctx=ctx, dtype="float32")
        if n_lars:
            lars_w = [weights[k] for k in order[:n_lars]]
            lars_g = [grads[k] for k in order[:n_lars]]
            w_sq = nd.multi_sum_sq(*lars_w, num_arrays=n_lars)
            g_sq = nd.multi_sum_sq(*lars_g, num_arrays=n_lars)
            scaled = nd.multi_lars(new_lrs[:n_lars], w_sq, g_sq, new_wds[:n_lars], eta=self.eta,
                                   eps=self.eps, rescale_grad=self.rescale_grad)  # fmt: skip
            rest = [new_lrs[n_lars:]] if n_lars < len(order) else []
            new_lrs = nd.concat(scaled, *rest, dim=0) if rest else scaled
        mom = self.momentum > 0
        size = max(1, self.aggregate_num)
        for start in range(0, len(order), size):
            chunk = order[start : start + size]
            ws = [weights[k] for k in chunk]
            gs = [grads[k] for k in chunk]
            columns = [ws, gs]
            if mom:
                columns.append([states[k][0] if multi_precision else states[k] for k in chunk])
            if multi_precision:
                columns.append([states[k][1] for k in chunk])
            name = "preloaded_multi_" + "mp_" * multi_precision + "sgd_" + "mom_" * mom + "update"
            op = getattr(nd, name)
            end = start + len(chunk)
            op(*_interleave(*columns), new_lrs[start:end], new_wds[start:end], out=ws,
               num_weights=len(chunk), **kwargs)  # fmt: skip


@register
class LBSGD(Optimizer):
    """Large-batch SGD with momentum and weight decay (MXNet's LBSGD): emulates a batch
    `batch_scale` times larger by accumulating gradients, and warms the learning rate up.

    Every call adds the gradient to a per-weight sum; on every `batch_scale`-th call (counted
    from `begin_epoch * updates_per_epoch`) the weight takes one SGD step (sgd_(mom_)update)
    with the mean gradient and lr * mult, and the sum restarts; other calls leave the
    weight as it is. mult follows `warmup_strategy` over the first
    `warmup_epochs * updates_per_epoch` calls n, growing from 1 to batch_scale:

        linear: 1 + (batch_scale - 1) * n / N      power2: ... * (n / N)^2
        sqrt:   1 + (batch_scale - 1) * sqrt(n / N)
        lars:   sqrt(||w||^2 / (||g||^2 + wd * ||w||^2 + 1e-18)) clipped to [0.01, 100]

    and is batch_scale after the warm-up (1 for an unknown strategy).

    Args:
        momentum: the momentum (0: no state).
        warmup_strategy: 'linear', 'power2', 'sqrt' or 'lars'.
        warmup_epochs, updates_per_epoch: the warm-up length N, in epochs of updates.
        batch_scale: how many calls make one large batch.
        begin_epoch: the epoch to start counting from (resuming).
        num_epochs: kept for MXNet's signature.
    """

    def __init__(
        self,
        momentum: float = 0.0,
        multi_precision: bool = False,
        warmup_strategy: str = "linear",
        warmup_epochs: int = 5,
        batch_scale: int = 1,
        updates_per_epoch: int = 32,
        begin_epoch: int = 0,
        num_epochs: int = 60,
        **kwargs: Any,
    ) -> None:
        super().__init__(multi_precision=multi_precision, **kwargs)
        self.momentum = momentum
        self.warmup_strategy = warmup_strategy
        self.warmup_epochs = warmup_epochs
        self.batch_scale = batch_scale
        self.updates_per_epoch = updates_per_epoch
        self.init_updates = begin_epoch * updates_per_epoch
        self.num_epochs = num_epochs
        self.cumgrads: dict[Any, dict[str, Any]] = {}

    def create_state(self, index: Any, weight: Any) -> Any:
        """The momentum (None without); (momentum, float32 master copy) for a float16
        weight with multi_precision."""
        nd = nd_module()
        if self.multi_precision and weight.dtype == _HALF:
            mom = None
            if self.momentum != 0.0:
                mom = nd.zeros(weight.shape, weight.context, dtype=np.float32)
            return (mom, weight.astype(np.float32))
        if weight.dtype == _HALF:
            warn_float16(type(self).__name__)
        if self.momentum == 0.0:
            return None
        return nd.zeros(weight.shape, weight.context, dtype=weight.dtype)

    def _get_lbmult(self, nup: int) -> float:
        """The warm-up multiplier after `nup` calls (linear, power2 or sqrt)."""
        nwup = self.warmup_epochs * self.updates_per_epoch
        top = float(self.batch_scale)
        if nup >= nwup:
            return top
        if nwup <= 1:
            return 1.0
        frac = nup / nwup
        shape = {"linear": frac, "power2": frac * frac, "sqrt": math.sqrt(frac)}
        if self.warmup_strategy not in shape:
            return 1.0
        return 1.0 + (top - 1) * shape[self.warmup_strategy]

    def _get_lars(self, weight: Any, g: Any, wd: float) -> float:
        """The layer-wise ratio of the 'lars' strategy, clipped to [0.01, 100]."""
        w2 = float((weight.astype(np.float64) ** 2).sum().asscalar())
        g2 = float((g.astype(np.float64) ** 2).sum().asscalar())
        return min(max(math.sqrt(w2 / (g2 + wd * w2 + 1e-18)), 0.01), 100.0)

    def _cumulate_gradient(self, grad: Any, index: Any) -> dict[str, Any]:
        """Add grad to the index's sum; the count keeps running across large batches."""
        old = self.cumgrads.get(index)
        if old and old["num_cums"] > 0:
            new = {"cum_grad": old["cum_grad"] + grad, "num_cums": old["num_cums"] + 1}
        else:
            new = {"cum_grad": grad, "num_cums": self.init_updates + 1}
        self.cumgrads[index] = new
        return new

    def update(self, index: Any, weight: Any, grad: Any, state: Any) -> None:
        nd = nd_module()
        lr, wd = self._get_lr(index), self._get_wd(index)
        self._update_count(index)
        cgrad = self._cumulate_gradient(grad, index)
        if cgrad["num_cums"] % self.batch_scale != 0:
            return  # still accumulating: the weight stays
        grad = cgrad["cum_grad"] / self.batch_scale
        if self.warmup_strategy == "lars":
            lr *= self._get_lars(weight, grad, wd)
        else:
            lr *= self._get_lbmult(cgrad["num_cums"])
        kwargs: dict[str, Any] = {"rescale_grad": self.rescale_grad, **self._clip_kwargs()}
        if self.momentum > 0:
            kwargs["momentum"] = self.momentum
        if isinstance(state, list | tuple):  # (momentum, master copy)
            if state[0] is not None:
                nd.mp_sgd_mom_update(weight, grad, state[0], state[1], out=weight, lr=lr, wd=wd,
                                     **kwargs)  # fmt: skip
            else:
                nd.mp_sgd_update(weight, grad, state[1], out=weight, lr=lr, wd=wd, **kwargs)
        elif state is not None:
            nd.sgd_mom_update(weight, grad, state, out=weight, lr=lr, wd=wd, **kwargs)
        else:
            nd.sgd_update(weight, grad, out=weight, lr=lr, wd=wd, **kwargs)
        cgrad["cum_grad"] = 0  # the next call starts a new large batch
