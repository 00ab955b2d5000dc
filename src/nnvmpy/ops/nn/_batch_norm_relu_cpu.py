"""BatchNorm's CPU row loops with relu inside (batch_norm_relu.py's fused ops).

The forward writes relu(x * a + b), or relu(x * a + b + residual), as BatchNorm's row
writes x * a + b; the backward reads relu's output y and takes relu's gradient of dy
(`relu_grad`: dy where y > 0, NaN where y is, else dy * 0) element by element as it reads
dy, the values the separate _backward_relu node would write, and may store them as the
residual's gradient in the same pass. RowFunctions (a row per call, reassociating CPU
builds), called from batch_norm.py's per-channel loops; the GPU's are in
_batch_norm_cuda.py.
"""

from __future__ import annotations

import numpy as np

from ...kernel import device_function
from ...kernel.launch import ADD, NULL, store, uindex
from ._batch_norm_cuda import relu_grad
from ._layer_util import row_function

_ZERO = np.float32(0)  # relu's zero: a literal 0 would make a float32 row float64


@device_function
def _store_relu(out, j, v, mode):
    # out[j] (+)= relu(v): NaN stays NaN, <= 0 (-0 and -inf too) becomes +0
    store(out, j, _ZERO if v <= 0 else v, mode)


@row_function
def row_scale_shift_relu(out, x, res, base, n, a, b, mode, residual):
    """out (+)= relu(x * a + b), or relu(x * a + b + res) with `residual`."""
    if residual:
        for i in range(n):
            j = uindex(base + i)
            _store_relu(out, j, x[j] * a + b + res[j], mode)
    else:
        for i in range(n):
            j = uindex(base + i)
            _store_relu(out, j, x[j] * a + b, mode)


@row_function
def row_relu_dy_sums(dy, y, x, g_out, base, n, mu, g_mode):
    """(sum(g), sum(g * (x - mu))) with g = relu's gradient of dy at output y; g also
    stored into g_out unless g_mode is NULL (the residual's gradient)."""
    s = 0.0
    t = 0.0
    if g_mode == NULL:
        for i in range(n):
            j = uindex(base + i)
            g = relu_grad(dy[j], y[j])
            s += g
            t += g * (x[j] - mu)
    else:
        for i in range(n):
            j = uindex(base + i)
            g = relu_grad(dy[j], y[j])
            store(g_out, j, g, g_mode)
            s += g
            t += g * (x[j] - mu)
    return s, t


@row_function
def row_relu_bn_dx(dx, dy, y, x, base, n, mu, k, a, b, mode):
    """dx (+)= k * (g - a - (x - mu) * b), g = relu's gradient of dy at output y."""
    if mode == ADD:
        for i in range(n):
            j = uindex(base + i)
            dx[j] += k * (relu_grad(dy[j], y[j]) - a - (x[j] - mu) * b)
    else:
        for i in range(n):
            j = uindex(base + i)
            dx[j] = k * (relu_grad(dy[j], y[j]) - a - (x[j] - mu) * b)


__all__ = ["row_relu_bn_dx", "row_relu_dy_sums", "row_scale_shift_relu"]
