"""OpCase rows for the matrix and shape ops: dot, batch_dot, FullyConnected, Reshape,
Flatten, transpose, expand_dims, Concat, SliceChannel, slice_axis.

References are NumPy formulas written from MXNet's documented semantics.
"""

from __future__ import annotations

import numpy as np
from op_db import OpCase


def _t(x: np.ndarray, flag: bool) -> np.ndarray:
    return np.swapaxes(x, -1, -2) if flag else x


def _dot(a, b, transpose_a=False, transpose_b=False):
    # MXNet: contract lhs's last axis (first with transpose_a) with rhs's first (last with
    # transpose_b); a 1-D x 1-D dot is the inner product with shape (1,)
    if a.ndim == 1 and b.ndim == 1:
        return np.array([np.dot(a, b)])
    if transpose_a and a.ndim > 1:
        a = np.moveaxis(a, 0, -1)
    if transpose_b and b.ndim > 1:
        b = np.moveaxis(b, -1, 0)
    return np.tensordot(a, b, axes=([a.ndim - 1], [0]))


def _batch_dot(a, b, transpose_a=False, transpose_b=False):
    return np.einsum("bij,bjk->bik", _t(a, transpose_a), _t(b, transpose_b))


def _fc(x, w, b=None, num_hidden=0, no_bias=False, flatten=True):
    x2 = x.reshape(x.shape[0], -1) if flatten else x
    y = x2 @ w.T
    return y if b is None else y + b


def _concat(*xs, num_args=0, dim=1):
    return np.concatenate(xs, axis=dim)


def _split(x, num_outputs=1, axis=1, squeeze_axis=False):
    parts = np.split(x, num_outputs, axis=axis)
    return [np.squeeze(p, axis=axis) if squeeze_axis else p for p in parts]


def _slice_axis(x, axis=0, begin=0, end=None):
    index = [slice(None)] * x.ndim
    index[axis] = slice(begin, end)
    return x[tuple(index)]


def _reshaped(shape):
    return lambda x, **params: x.reshape(shape)


CASES = [
    # -- dot --
    OpCase("dot", [(3, 4), (4, 5)], _dot),
    OpCase("dot", [(4, 3), (4, 5)], _dot, {"transpose_a": True}, id="ta"),
    OpCase("dot", [(3, 4), (5, 4)], _dot, {"transpose_b": True}, id="tb"),
    OpCase("dot", [(4, 3), (5, 4)], _dot, {"transpose_a": True, "transpose_b": True}, id="tab"),
    OpCase("dot", [(2, 3, 4), (4, 5)], _dot, id="nd"),
    OpCase("dot", [(2, 3, 4), (4, 2, 3)], _dot, id="nd-nd"),
    OpCase("dot", [(4, 2, 3), (5, 4)], _dot, {"transpose_a": True, "transpose_b": True}, id="nd-t"),
    OpCase("dot", [(6,), (6,)], _dot, id="vec-vec"),
    OpCase("dot", [(4,), (4, 3)], _dot, id="vec-mat"),
    OpCase("dot", [(3, 4), (4,)], _dot, id="mat-vec"),
    OpCase("dot", [(17, 20), (20, 18)], _dot, id="multi-tile"),
    # -- batch_dot --
    OpCase("batch_dot", [(2, 3, 4), (2, 4, 5)], _batch_dot),
    OpCase("batch_dot", [(2, 4, 3), (2, 4, 5)], _batch_dot, {"transpose_a": True}, id="ta"),
    OpCase("batch_dot", [(3, 3, 4), (3, 5, 4)], _batch_dot, {"transpose_b": True}, id="tb"),
    OpCase(
        "batch_dot",
        [(2, 4, 3), (2, 5, 4)],
        _batch_dot,
        {"transpose_a": True, "transpose_b": True},
        id="tab",
    ),
    # -- FullyConnected --
    OpCase("FullyConnected", [(4, 5), (3, 5), (3,)], _fc, {"num_hidden": 3}),
    OpCase("FullyConnected", [(4, 3, 2), (6, 6), (6,)], _fc, {"num_hidden": 6}, id="flatten-3d"),
    OpCase(
        "FullyConnected",
        [(4, 5), (3, 5)],
        _fc,
        {"num_hidden": 3, "no_bias": True},
        id="no-bias",
    ),
    OpCase(
        "FullyConnected",
        [(2, 3, 5), (4, 5), (4,)],
        _fc,
        {"num_hidden": 4, "flatten": False},
        id="no-flatten",
    ),
    # -- Reshape (and the reshape alias): MXNet's special values --
    OpCase("Reshape", [(2, 3, 4)], _reshaped((4, 6)), {"shape": (4, 6)}),
    OpCase("Reshape", [(2, 3, 4)], _reshaped((2, 12)), {"shape": (0, -1)}, id="copy-infer"),
    OpCase("Reshape", [(2, 3, 4)], _reshaped((6, 4)), {"shape": (-3, 4)}, id="merge"),
    OpCase("Reshape", [(2, 3, 4)], _reshaped((2, 3, 4)), {"shape": (-2,)}, id="copy-rest"),
    OpCase("Reshape", [(2, 3, 4)], _reshaped((1, 2, 3, 4)), {"shape": (-4, 1, 2, -2)}, id="split"),
    OpCase("Reshape", [(6, 4)], _reshaped((2, 3, 4)), {"shape": (-4, -1, 3, 0)}, id="split-infer"),
    OpCase(
        "Reshape", [(10, 5, 4)], _reshaped((50, 4)), {"shape": (-1, 0), "reverse": True}, id="rev"
    ),
    OpCase("reshape", [(2, 3, 4)], _reshaped((24,)), {"shape": (-1,)}),
    # -- Flatten / flatten, expand_dims --
    OpCase("Flatten", [(2, 3, 4)], lambda x: x.reshape(2, 12)),
    OpCase("flatten", [(3, 2)], lambda x: x.reshape(3, 2)),
    OpCase("expand_dims", [(2, 3)], lambda x, axis: np.expand_dims(x, axis), {"axis": 1}),
    OpCase(
        "expand_dims",
        [(2, 3)],
        lambda x, axis: np.expand_dims(x, axis),
        {"axis": -1},
        id="negative",
    ),
    # -- transpose --
    OpCase("transpose", [(2, 3, 4)], lambda x: np.transpose(x)),
    OpCase(
        "transpose",
        [(2, 3, 4)],
        lambda x, axes: np.transpose(x, axes),
        {"axes": (1, 2, 0)},
        id="axes",
    ),
    # -- Concat / concat --
    OpCase("Concat", [(2, 2), (2, 3), (2, 1)], _concat, {"num_args": 3, "dim": 1}),
    OpCase("concat", [(1, 3, 2), (2, 3, 2)], _concat, {"num_args": 2, "dim": 0}, id="dim0"),
    OpCase("Concat", [(2, 3, 1), (2, 3, 2)], _concat, {"num_args": 2, "dim": -1}, id="dim-neg"),
    # -- SliceChannel / split --
    OpCase("SliceChannel", [(2, 6)], _split, {"num_outputs": 3}),
    OpCase(
        "SliceChannel",
        [(2, 3, 4)],
        _split,
        {"num_outputs": 3, "axis": 1, "squeeze_axis": True},
        id="squeeze",
    ),
    OpCase("split", [(4, 3)], _split, {"num_outputs": 2, "axis": 0}, id="axis0"),
    # -- slice_axis --
    OpCase("slice_axis", [(3, 5)], _slice_axis, {"axis": 1, "begin": 1, "end": 4}),
    OpCase("slice_axis", [(3, 5)], _slice_axis, {"axis": -1, "begin": -3, "end": None}, id="neg"),
    OpCase("slice_axis", [(4, 2, 3)], _slice_axis, {"axis": 0, "begin": 0, "end": -1}, id="axis0"),
]
