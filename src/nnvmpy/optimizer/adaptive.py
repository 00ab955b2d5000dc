"""Optimizers with per-element adaptive steps: Adam, RMSProp, Ftrl, FTML and LAMB.

Each keeps moment estimates as state and drives one update op (two for LAMB):

    Adam:    g = clip(rescale_grad * grad + wd * weight); m, v = EMAs of g, g^2
             weight -= lr * sqrt(1 - beta2^t) / (1 - beta1^t) * m / (sqrt(v) + epsilon)
    RMSProp: Tieleman & Hinton (rmsprop_update) or, centered, Graves (rmspropalex_update)
    Ftrl:    follow-the-regularized-leader with L1 (lamda1) and L2 (wd) terms
    FTML:    follow the moving leader (ftml_update)
    LAMB:    Adam's direction, rescaled per layer by ||weight|| / ||direction||
"""

from __future__ import annotations

import math
import os
from typing import Any

import numpy as np

from ..base import ParamError
from .optimizer import Optimizer, nd_module, register


def _zeros_like(weight: Any, dtype: Any = None) -> Any:
    return nd_module().zeros(weight.shape, weight.context, dtype=dtype or weight.dtype)


@register
class Adam(Optimizer):
    """Adam (Kingma & Ba), through adam_update; the bias correction goes into lr.

    Args:
        beta1, beta2: decay rates of the first and second moment estimates.
        epsilon: added to sqrt(v) to avoid division by zero.
        lazy_update: passed to adam_update (matters only for row_sparse gradients).
    """

    def __init__(
        self,
        learning_rate: float = 0.001,
        beta1: float = 0.9,
        beta2: float = 0.999,
        epsilon: float = 1e-8,
        lazy_update: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1, self.beta2, self.epsilon = beta1, beta2, epsilon
        self.lazy_update = lazy_update

    def create_state(self, index: Any, weight: Any) -> Any:
        return (_zeros_like(weight), _zeros_like(weight))  # mean, variance

    def update(self, index: Any, weight: Any, grad: Any, state: Any) -> None:
        self._update_count(index)
        lr, wd = self._get_lr(index), self._get_wd(index)
        t = self._index_update_count[index]
        lr *= math.sqrt(1.0 - self.beta2**t) / (1.0 - self.beta1**t)
        mean, var = state
        nd_module().adam_update(
            weight, grad, mean, var, out=weight, lazy_update=self.lazy_update, lr=lr, wd=wd,
            beta1=self.beta1, beta2=self.beta2, epsilon=self.epsilon,
            rescale_grad=self.rescale_grad, **self._clip_kwargs(),
        )  # fmt: skip


@register
class RMSProp(Optimizer):
    """RMSProp: Tieleman & Hinton's (centered=False) or Graves's (centered=True).

    Args:
        gamma1: decay of the moving average of squared gradients.
        gamma2: momentum of the centered version.
        epsilon: keeps the denominator away from zero.
        centered: use rmspropalex_update (states n, g, delta) instead of rmsprop_update (n).
        clip_weights: clip the updated weights to [-clip_weights, clip_weights].
    """

    def __init__(
        self,
        learning_rate: float = 0.001,
        gamma1: float = 0.9,
        gamma2: float = 0.9,
        epsilon: float = 1e-8,
        centered: bool = False,
        clip_weights: float | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.gamma1, self.gamma2, self.epsilon = gamma1, gamma2, epsilon
        self.centered = centered
        self.clip_weights = clip_weights

    def create_state(self, index: Any, weight: Any) -> Any:
        if self.centered:
            return (_zeros_like(weight), _zeros_like(weight), _zeros_like(weight))  # n, g, delta
        return (_zeros_like(weight),)  # n

    def update(self, index: Any, weight: Any, grad: Any, state: Any) -> None:
        self._update_count(index)
        lr, wd = self._get_lr(index), self._get_wd(index)
        kwargs: dict[str, Any] = {
            "gamma1": self.gamma1,
            "epsilon": self.epsilon,
            "rescale_grad": self.rescale_grad,
            **self._clip_kwargs(),
        }
        if self.clip_weights:
            kwargs["clip_weights"] = self.clip_weights
        nd = nd_module()
        if self.centered:
            n, g, delta = state
            nd.rmspropalex_update(
                weight, grad, n, g, delta, out=weight, lr=lr, wd=wd, gamma2=self.gamma2, **kwargs
            )
        else:
            nd.rmsprop_update(weight, grad, state[0], out=weight, lr=lr, wd=wd, **kwargs)


@register
class Ftrl(Optimizer):
    """FTRL-Proximal (McMahan et al., "Ad Click Prediction"), through ftrl_update.

    Args:
        lamda1: L1 regularisation coefficient.
        beta: per-coordinate learning-rate parameter.
    """

    def __init__(
        self, lamda1: float = 0.01, learning_rate: float = 0.1, beta: float = 1, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self.lamda1 = lamda1
        self.beta = beta
        self.lr = learning_rate

    def create_state(self, index: Any, weight: Any) -> Any:
        return (_zeros_like(weight), _zeros_like(weight))  # z, n

    def update(self, index: Any, weight: Any, grad: Any, state: Any) -> None:
        self._update_count(index)
        wd, lr = self._get_wd(index), self._get_lr(index)
        z, n = state
        nd_module().ftrl_update(
            weight, grad, z, n, out=weight, lr=lr, wd=wd, lamda1=self.lamda1, beta=self.beta,
            rescale_grad=self.rescale_grad, **self._clip_kwargs(),
        )  # fmt: skip


FTRL = Ftrl  # the spelling of the paper; MXNet registers the class as 'ftrl'


@register
class FTML(Optimizer):
    """Follow the Moving Leader (Zheng & Kwok, 2017), through ftml_update.

    Args:
        beta1, beta2: decay rates (beta1 generally near 0.5, beta2 near 1).
        epsilon: keeps the denominator away from zero.
    """

    def __init__(
        self, beta1: float = 0.6, beta2: float = 0.999, epsilon: float = 1e-8, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self.beta1, self.beta2, self.epsilon = beta1, beta2, epsilon

    def create_state(self, index: Any, weight: Any) -> Any:
        return (_zeros_like(weight), _zeros_like(weight), _zeros_like(weight))  # d, v, z

    def update(self, index: Any, weight: Any, grad: Any, state: Any) -> None:
        self._update_count(index)
        lr, wd = self._get_lr(index), self._get_wd(index)
        t = self._index_update_count[index]
        d, v, z = state
        nd_module().ftml_update(
            weight, grad, d, v, z, out=weight, lr=lr, wd=wd, t=t, beta1=self.beta1,
            beta2=self.beta2, epsilon=self.epsilon, rescale_grad=self.rescale_grad,
            **self._clip_kwargs("clip_grad"),
        )  # fmt: skip


@register
class LAMB(Optimizer):
    """LAMB (You et al., "Large Batch Optimization for Deep Learning").

        g = Adam direction (bias-corrected) + wd * weight        (lamb_update_phase1)
        weight -= lr * (||weight|| / ||g||) * g                  (lamb_update_phase2)

    with ||weight|| clamped to [lower_bound, upper_bound] when given. Each weight has its
    own trust ratio; a list of weights (the Updater's groups of `aggregate_num`) is updated
    by one _multi_(mp_)lamb_update op, as in MXNet.
    """

    def __init__(
        self,
        learning_rate: float = 0.001,
        beta1: float = 0.9,
        beta2: float = 0.999,
        epsilon: float = 1e-6,
        lower_bound: float | None = None,
        upper_bound: float | None = None,
        bias_correction: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1, self.beta2, self.epsilon = beta1, beta2, epsilon
        self.lower_bound, self.upper_bound = lower_bound, upper_bound
        self.bias_correction = bias_correction
        # the Updater hands over groups of up to this many weights (MXNet's default: 45)
        size = int(os.getenv("MXNET_OPTIMIZER_AGGREGATION_SIZE", "45"))
        self.aggregate_num = max(1, min(45, size))

    def create_state(self, index: Any, weight: Any) -> Any:
        return (_zeros_like(weight), _zeros_like(weight))  # mean, var (float32 for a master copy)

    def update(self, index: Any, weight: Any, grad: Any, state: Any) -> None:
        self._update_impl(index, weight, grad, state, multi_precision=False)

    def update_multi_precision(self, index: Any, weight: Any, grad: Any, state: Any) -> None:
        first = weight[0] if isinstance(weight, list | tuple) else weight
        use_mp = self.multi_precision and first.dtype == np.float16
        self._update_impl(index, weight, grad, state, multi_precision=use_mp)

    def _update_impl(
        self, index: Any, weight: Any, grad: Any, state: Any, multi_precision: bool
    ) -> None:
        if isinstance(index, list | tuple):  # a group from the Updater (aggregate_num)
            if not all(isinstance(x, list | tuple) for x in (weight, grad, state)) or not (
                len(index) == len(weight) == len(grad) == len(state)
            ):
                raise ParamError(
                    "LAMB.update: with a list of indices, weight, grad and state must be "
                    "lists of the same length"
                )
            self._update_group(list(index), weight, grad, state, multi_precision)
            return
        nd = nd_module()
        self._update_count(index)
        lr, wd = self._get_lr(index), self._get_wd(index)
        phase1 = {
            "beta1": self.beta1, "beta2": self.beta2, "epsilon": self.epsilon,
            "bias_correction": self.bias_correction, "t": self._index_update_count[index],
            "rescale_grad": self.rescale_grad, "wd": wd, **self._clip_kwargs(),
        }  # fmt: skip
        phase2: dict[str, Any] = {"lr": lr}
        if self.lower_bound:
            phase2["lower_bound"] = self.lower_bound
        if self.upper_bound:
            phase2["upper_bound"] = self.upper_bound
        if multi_precision:
            master, (mean, var) = state
            g = nd.mp_lamb_update_phase1(weight, grad, mean, var, master, **phase1)
            r1, r2 = nd.norm(master), nd.norm(g)
            nd.mp_lamb_update_phase2(weight, g, r1, r2, master, out=weight, **phase2)
        else:
            mean, var = state
            g = nd.lamb_update_phase1(weight, grad, mean, var, **phase1)
            r1, r2 = nd.norm(weight), nd.norm(g)
            nd.lamb_update_phase2(weight, g, r1, r2, out=weight, **phase2)

    def _update_group(
        self, index: list[Any], weight: Any, grad: Any, state: Any, multi_precision: bool
    ) -> None:
        """One _multi_(mp_)lamb_update op for a group of weights, as MXNet's LAMB does."""
        contrib = nd_module().contrib
        for i in index:
            self._update_count(i)
        step_count = [self._index_update_count[i] for i in index]
        lrs, wds = [self._get_lr(i) for i in index], [self._get_wd(i) for i in index]
        kwargs: dict[str, Any] = {
            "beta1": self.beta1, "beta2": self.beta2, "epsilon": self.epsilon,
            "bias_correction": self.bias_correction, "rescale_grad": self.rescale_grad,
            **self._clip_kwargs(),
        }  # fmt: skip
        if self.lower_bound:
            kwargs["lower_bound"] = self.lower_bound
        if self.upper_bound:
            kwargs["upper_bound"] = self.upper_bound
        weight, grad = list(weight), list(grad)
        if multi_precision:
            masters = [s[0] for s in state]
            mean, var = [s[1][0] for s in state], [s[1][1] for s in state]
            contrib.multi_mp_lamb_update(weight, grad, mean, var, masters, step_count, lrs, wds,
                                         out=weight, **kwargs)  # fmt: skip
        else:
            mean, var = [s[0] for s in state], [s[1] for s in state]
            contrib.multi_lamb_update(weight, grad, mean, var, step_count, lrs, wds,
                                      out=weight, **kwargs)  # fmt: skip
