"""NumPy references several op tests share: central differences, softmax and its gradient,
SoftmaxOutput's gradient (float64, independent of the code under test)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np


def numeric_grad(f: Callable[[], float], x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """Central differences of the scalar f() with respect to x (changed in place, restored)."""
    grad = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        old = x[i]
        x[i] = old + eps
        hi = f()
        x[i] = old - eps
        lo = f()
        x[i] = old
        grad[i] = (hi - lo) / (2 * eps)
    return grad


def softmax_ref(x: np.ndarray, axis: int, inv_t: float, log: bool) -> np.ndarray:
    """(log_)softmax(x * inv_t) along `axis`, in float64."""
    z = x.astype(np.float64) * inv_t
    z = z - z.max(axis=axis, keepdims=True)
    log_s = np.log(np.exp(z).sum(axis=axis, keepdims=True))
    return (z - log_s) if log else np.exp(z - log_s)


def softmax_grad_ref(
    dy: np.ndarray, y: np.ndarray, axis: int, inv_t: float, log: bool
) -> np.ndarray:
    """dx of (log_)softmax(x * inv_t) from dy and its output y, in float64."""
    dy, y = dy.astype(np.float64), y.astype(np.float64)
    if log:  # dx = (dy - exp(y) sum(dy)) / T
        return inv_t * (dy - np.exp(y) * dy.sum(axis=axis, keepdims=True))
    return inv_t * y * (dy - (dy * y).sum(axis=axis, keepdims=True))  # y (dy - sum(dy y)) / T


def softmax_output_grad_ref(
    p: np.ndarray, label: np.ndarray, axis: int, kw: dict[str, Any], dy: np.ndarray
) -> np.ndarray:
    """(p - target) * grad_scale / norm (* dy): target one-hot with smoothing, ignored
    labels' rows zero; norm the batch, the valid labels or (multi_output) the positions."""
    classes = p.shape[axis]
    alpha = kw.get("smooth_alpha", 0.0)
    lab = np.expand_dims(label, axis)
    hot = np.arange(classes).reshape([-1 if a == axis % p.ndim else 1 for a in range(p.ndim)])
    target = np.where(hot == lab, 1.0 - alpha, alpha / (classes - 1))
    g = p.astype(np.float64) - target
    valid = label != kw.get("ignore_label", -1.0)
    if kw.get("use_ignore"):
        g = g * np.expand_dims(valid, axis)
    norm = {"batch": p.shape[0], "valid": max(int(valid.sum()), 1)}.get(
        kw.get("normalization", "null"), 1
    )
    if kw.get("multi_output") and kw.get("normalization", "null") != "valid":
        norm *= label[0].size
    g = g * kw.get("grad_scale", 1.0) / norm
    return g * dy.astype(np.float64) if kw.get("out_grad") else g
