"""Optimizers that MXNet writes as nd arithmetic rather than one fused update op.

    AdaGrad:  history += g^2;  weight -= lr * (g / sqrt(history + eps) + wd * weight)
    AdaDelta: acc_g = rho * acc_g + (1 - rho) * g^2
              delta = sqrt(acc_delta + eps) / sqrt(acc_g + eps) * g
              acc_delta = rho * acc_delta + (1 - rho) * delta^2;  weight -= delta + wd * weight
    Adamax:   g += wd * weight; m = beta1 * m + (1 - beta1) * g; u = max(beta2 * u, |g|)
              weight -= lr / (1 - beta1^t) * m / u
    Nadam:    Adam with Nesterov momentum and a warming momentum schedule
    SGLD:     weight -= lr / 2 * (g + wd * weight), plus N(0, sqrt(lr)) noise
    DCASGD:   delay-compensated SGD (Zheng et al., 2016)
    Test:     weight += g; state = weight (for tests of the machinery)

g is rescale_grad * grad, clipped to [-clip_gradient, clip_gradient] when that is set.
These run several nd ops per weight; the fused optimizers (sgd.py, adaptive.py) are faster.
"""

from __future__ import annotations

import math
from typing import Any

from .optimizer import Optimizer, nd_module, register


def _zeros_like(weight: Any) -> Any:
    return nd_module().zeros(weight.shape, weight.context, dtype=weight.dtype)


class _Composed(Optimizer):
    def _grad(self, grad: Any, weight: Any = None, wd: float = 0.0) -> Any:
        """rescale_grad * grad (+ wd * weight when given), clipped when clip_gradient is set."""
        g = grad * self.rescale_grad
        if weight is not None:
            g = g + weight * wd
        if self.clip_gradient is not None:
            g = nd_module().clip(g, a_min=-self.clip_gradient, a_max=self.clip_gradient)
        return g

    def _step(self, index: Any) -> tuple[float, float]:
        self._update_count(index)
        return self._get_lr(index), self._get_wd(index)


@register
class AdaGrad(_Composed):
    """AdaGrad (Duchi et al., 2011). eps: added to the history before the square root."""

    def __init__(self, eps: float = 1e-7, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.float_stable_eps = eps

    def create_state(self, index: Any, weight: Any) -> Any:
        return _zeros_like(weight)  # history

    def update(self, index: Any, weight: Any, grad: Any, state: Any) -> None:
        nd = nd_module()
        lr, wd = self._step(index)
        g = self._grad(grad)
        state[:] = state + nd.square(g)
        div = g / nd.sqrt(state + self.float_stable_eps)
        weight[:] = weight - (div + weight * wd) * lr


@register
class AdaDelta(_Composed):
    """AdaDelta (Zeiler, 2012). rho: decay of both running averages."""

    def __init__(self, rho: float = 0.90, epsilon: float = 1e-5, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.rho, self.epsilon = rho, epsilon

    def create_state(self, index: Any, weight: Any) -> Any:
        return (_zeros_like(weight), _zeros_like(weight))  # accumulated g^2, delta^2

    def update(self, index: Any, weight: Any, grad: Any, state: Any) -> None:
        nd = nd_module()
        wd = self._get_wd(index)
        self._update_count(index)
        g = self._grad(grad)
        acc_g, acc_delta = state
        rho, eps = self.rho, self.epsilon
        acc_g[:] = acc_g * rho + g * g * (1.0 - rho)
        delta = nd.sqrt(acc_delta + eps) / nd.sqrt(acc_g + eps) * g
        acc_delta[:] = acc_delta * rho + delta * delta * (1.0 - rho)
        weight[:] = weight - (delta + weight * wd)


@register
class Adamax(_Composed):
    """AdaMax, Adam with the infinity norm (Kingma & Ba, section 7)."""

    def __init__(
        self, learning_rate: float = 0.002, beta1: float = 0.9, beta2: float = 0.999, **kwargs: Any
    ) -> None:
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1, self.beta2 = beta1, beta2

    def create_state(self, index: Any, weight: Any) -> Any:
        return (_zeros_like(weight), _zeros_like(weight))  # m, u

    def update(self, index: Any, weight: Any, grad: Any, state: Any) -> None:
        nd = nd_module()
        lr, wd = self._step(index)
        lr /= 1.0 - self.beta1 ** self._index_update_count[index]
        g = self._grad(grad, weight, wd)
        m, u = state
        m[:] = m * self.beta1 + g * (1.0 - self.beta1)
        u[:] = nd.broadcast_maximum(u * self.beta2, nd.abs(g))
        weight[:] = weight - m / u * lr


@register
class Nadam(_Composed):
    """Nesterov Adam (Dozat, 2016). schedule_decay: warms the momentum schedule up."""

    def __init__(
        self,
        learning_rate: float = 0.001,
        beta1: float = 0.9,
        beta2: float = 0.999,
        epsilon: float = 1e-8,
        schedule_decay: float = 0.004,
        **kwargs: Any,
    ) -> None:
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1, self.beta2, self.epsilon = beta1, beta2, epsilon
        self.schedule_decay = schedule_decay
        self.m_schedule = 1.0

    def create_state(self, index: Any, weight: Any) -> Any:
        return (_zeros_like(weight), _zeros_like(weight))  # m, v

    def update(self, index: Any, weight: Any, grad: Any, state: Any) -> None:
        nd = nd_module()
        lr, wd = self._step(index)
        t = self._index_update_count[index]
        g = self._grad(grad, weight, wd)
        mom_t = self.beta1 * (1.0 - 0.5 * 0.96 ** (t * self.schedule_decay))
        mom_next = self.beta1 * (1.0 - 0.5 * 0.96 ** ((t + 1) * self.schedule_decay))
        self.m_schedule *= mom_t
        m_schedule_next = self.m_schedule * mom_next
        m, v = state
        m[:] = m * self.beta1 + g * (1.0 - self.beta1)
        v[:] = v * self.beta2 + g * g * (1.0 - self.beta2)
        g_prime = g / (1.0 - self.m_schedule)
        m_prime = m / (1.0 - m_schedule_next)
        v_prime = v / (1.0 - self.beta2**t)
        m_bar = g_prime * (1.0 - mom_t) + m_prime * mom_next
        weight[:] = weight - m_bar / (nd.sqrt(v_prime) + self.epsilon) * lr


@register
class SGLD(_Composed):
    """Stochastic Gradient Langevin Dynamics: an SGD half-step plus Gaussian noise."""

    def update(self, index: Any, weight: Any, grad: Any, state: Any) -> None:
        from nnvmpy import random

        lr, wd = self._step(index)
        g = self._grad(grad)
        noise = random.normal(0, math.sqrt(lr), shape=weight.shape, dtype=weight.dtype,
                              ctx=weight.context)  # fmt: skip
        weight[:] = weight - (g + weight * wd) * (lr / 2) + noise


@register
class DCASGD(_Composed):
    """Delay-compensated asynchronous SGD (Zheng et al., https://arxiv.org/abs/1609.08326).

    lamda scales the compensation term g * g * (weight - previous weight).
    """

    def __init__(self, momentum: float = 0.0, lamda: float = 0.04, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.momentum, self.lamda = momentum, lamda
        self.weight_previous: dict[Any, Any] = {}

    def create_state(self, index: Any, weight: Any) -> Any:
        mom = None if self.momentum == 0.0 else _zeros_like(weight)
        return (mom, weight.copy())  # momentum, previous weight

    def update(self, index: Any, weight: Any, grad: Any, state: Any) -> None:
        lr, wd = self._step(index)
        g = self._grad(grad)
        mom, previous = state
        step = (g + weight * wd + g * g * (weight - previous) * self.lamda) * -lr
        if mom is not None:
            mom[:] = mom * self.momentum + step
            step = mom
        previous[:] = weight
        weight[:] = weight + step


@register
class Test(Optimizer):
    """weight += rescale_grad * grad; the state is a copy of the weight (for tests)."""

    def create_state(self, index: Any, weight: Any) -> Any:
        return nd_module().zeros(weight.shape, weight.context)

    def update(self, index: Any, weight: Any, grad: Any, state: Any) -> None:
        weight[:] = weight + grad * self.rescale_grad
        state[:] = weight
