"""MXNet 1.9.1's documented optimizer update rules in NumPy: the independent reference.

Each function takes the op's inputs (float64 arrays) and parameters and returns
(new_weight, *new_states) without touching its arguments; the states come in the op's
input order. Written from the formulas in MXNet's op documentation, not from nnvmpy.
"""

from __future__ import annotations

from typing import Any

import numpy as np

Arr = np.ndarray


def clip(x: Arr, bound: float) -> Arr:
    """MXNet's clip_gradient: off when negative."""
    return x if bound < 0 else np.clip(x, -bound, bound)


def sgd(weight, grad, lr, wd=0.0, rescale_grad=1.0, clip_gradient=-1.0, **_: Any):
    return (weight - lr * (clip(rescale_grad * grad, clip_gradient) + wd * weight),)


def sgd_mom(weight, grad, mom, lr, momentum=0.0, wd=0.0, rescale_grad=1.0, clip_gradient=-1.0, **_):
    mom = momentum * mom - lr * (clip(rescale_grad * grad, clip_gradient) + wd * weight)
    return weight + mom, mom


def nag_mom(weight, grad, mom, lr, momentum=0.0, wd=0.0, rescale_grad=1.0, clip_gradient=-1.0, **_):
    # documented: state = momentum * state + g + wd * w; w -= lr * (g + wd * w + momentum * state)
    # the op keeps mom = -lr * state
    g = clip(rescale_grad * grad, clip_gradient) + wd * weight
    state = momentum * (-mom / lr) + g
    return weight - lr * (g + momentum * state), -lr * state


def signsgd(weight, grad, lr, wd=0.0, **_):
    return ((1 - lr * wd) * weight - lr * np.sign(grad),)


def signum(weight, grad, mom, lr, momentum=0.0, wd=0.0, rescale_grad=1.0, clip_gradient=-1.0,
           wd_lh=0.0, **_):  # fmt: skip
    mom = momentum * mom - (1 - momentum) * (wd * weight + clip(rescale_grad * grad, clip_gradient))
    return (1 - lr * wd_lh) * weight + lr * np.sign(mom), mom


def adam(weight, grad, mean, var, lr, beta1=0.9, beta2=0.999, epsilon=1e-8, wd=0.0,
         rescale_grad=1.0, clip_gradient=-1.0, **_):  # fmt: skip
    g = clip(rescale_grad * grad + wd * weight, clip_gradient)
    mean = beta1 * mean + (1 - beta1) * g
    var = beta2 * var + (1 - beta2) * g * g
    return weight - lr * mean / (np.sqrt(var) + epsilon), mean, var


def adamw(weight, grad, mean, var, rescale, lr, eta, beta1=0.9, beta2=0.999, epsilon=1e-8,
          wd=0.0, clip_gradient=-1.0, **_):  # fmt: skip
    """MXNet's contrib AdamW: the weight decay outside the adaptive step, scaled by eta;
    rescale_grad is an input array (its first element)."""
    g = clip(rescale[0] * grad, clip_gradient)
    mean = beta1 * mean + (1 - beta1) * g
    var = beta2 * var + (1 - beta2) * g * g
    return weight - eta * (lr * mean / (np.sqrt(var) + epsilon) + wd * weight), mean, var


def rmsprop(weight, grad, n, lr, gamma1=0.95, epsilon=1e-8, wd=0.0, rescale_grad=1.0,
            clip_gradient=-1.0, clip_weights=-1.0, **_):  # fmt: skip
    g = clip(rescale_grad * grad + wd * weight, clip_gradient)
    n = (1 - gamma1) * g * g + gamma1 * n
    return clip(weight - lr * g / np.sqrt(n + epsilon), clip_weights), n


def rmspropalex(weight, grad, n, g_avg, delta, lr, gamma1=0.95, gamma2=0.9, epsilon=1e-8, wd=0.0,
                rescale_grad=1.0, clip_gradient=-1.0, clip_weights=-1.0, **_):  # fmt: skip
    g = clip(rescale_grad * grad + wd * weight, clip_gradient)
    n = (1 - gamma1) * g * g + gamma1 * n
    g_avg = (1 - gamma1) * g + gamma1 * g_avg
    delta = gamma2 * delta - lr * g / np.sqrt(n - g_avg * g_avg + epsilon)
    return clip(weight + delta, clip_weights), n, g_avg, delta


def ftrl(weight, grad, z, n, lr, lamda1=0.01, beta=1.0, wd=0.0, rescale_grad=1.0,
         clip_gradient=-1.0, **_):  # fmt: skip
    g = clip(rescale_grad * grad, clip_gradient)
    z = z + g - (np.sqrt(n + g * g) - np.sqrt(n)) * weight / lr
    n = n + g * g
    w = (np.sign(z) * lamda1 - z) / ((beta + np.sqrt(n)) / lr + wd) * (np.abs(z) > lamda1)
    return w, z, n


def ftml(weight, grad, d, v, z, lr, t, beta1=0.6, beta2=0.999, epsilon=1e-8, wd=0.0,
         rescale_grad=1.0, clip_grad=-1.0, **_):  # fmt: skip
    g = clip(rescale_grad * grad + wd * weight, clip_grad)
    v = beta2 * v + (1 - beta2) * g * g
    d_t = (1 - beta1**t) / lr * (np.sqrt(v / (1 - beta2**t)) + epsilon)
    z = beta1 * z + (1 - beta1) * g - (d_t - beta1 * d) * weight
    return -z / d_t, d_t, v, z


def lamb_phase1(weight, grad, mean, var, t, wd, beta1=0.9, beta2=0.999, epsilon=1e-6,
                bias_correction=True, rescale_grad=1.0, clip_gradient=-1.0, **_):  # fmt: skip
    g = clip(rescale_grad * grad, clip_gradient)
    mean = beta1 * mean + (1 - beta1) * g
    var = beta2 * var + (1 - beta2) * g * g
    m, v = mean, var
    if bias_correction:
        m, v = mean / (1 - beta1**t), var / (1 - beta2**t)
    return m / (np.sqrt(v) + epsilon) + wd * weight, mean, var


def lamb_phase2(weight, g, r1, r2, lr, lower_bound=-1.0, upper_bound=-1.0, **_):
    r1 = float(np.asarray(r1).reshape(-1)[0])
    r2 = float(np.asarray(r2).reshape(-1)[0])
    if lower_bound >= 0:
        r1 = max(r1, lower_bound)
    if upper_bound >= 0:
        r1 = min(r1, upper_bound)
    ratio = 1.0 if r1 == 0 or r2 == 0 else r1 / r2
    return (weight - lr * ratio * g,)


def lars(lrs, weights_sum_sq, grads_sum_sq, wds, eta, eps, rescale_grad=1.0, **_):
    w, g = np.sqrt(weights_sum_sq), np.sqrt(grads_sum_sq)
    valid = (w > 0) & (g > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        scaled = lrs * eta * w / (g * rescale_grad + wds * w + eps)
    return np.where(valid, scaled, lrs)
