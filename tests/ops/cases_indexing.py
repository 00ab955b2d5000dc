"""OpCase rows for the indexing ops: take, batch_take, Embedding, pick, choose_element_0index,
fill_element_0index, one_hot, _onehot_encode, where, ravel_multi_index, unravel_index.

References are NumPy formulas written from MXNet's documented semantics. Index inputs
are integer-valued arrays in the case's dtype (MXNet casts float indices); they include
out-of-range values wherever the op's mode defines them. Finite differences only run on
the value inputs: an index truncated to an int has no derivative.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from op_db import Inputs, OpCase

InputFn = Callable[[np.random.Generator, Any], Inputs]
FLOATS = (np.float32, np.float64, np.float16)


def values_and_indices(
    shape: tuple[int, ...], ishape: tuple[int, ...], lo: int, hi: int
) -> InputFn:
    """Uniform values of `shape`, then integer indices in [lo, hi) of `ishape`."""

    def make(rng: np.random.Generator, dtype: Any) -> Inputs:
        data = rng.uniform(-1, 1, size=shape).astype(dtype)
        return [data, rng.integers(lo, hi, size=ishape).astype(dtype)]

    return make


def indices_then_values(
    ishape: tuple[int, ...], lo: int, hi: int, shape: tuple[int, ...]
) -> InputFn:
    def make(rng: np.random.Generator, dtype: Any) -> Inputs:
        idx = rng.integers(lo, hi, size=ishape).astype(dtype)
        return [idx, rng.uniform(-1, 1, size=shape).astype(dtype)]

    return make


def integers(*specs: tuple[tuple[int, ...], int, int]) -> InputFn:
    """One integer array per (shape, lo, hi)."""

    def make(rng: np.random.Generator, dtype: Any) -> Inputs:
        return [rng.integers(lo, hi, size=s).astype(dtype) for s, lo, hi in specs]

    return make


def _ints(x: np.ndarray) -> np.ndarray:
    return x.astype(np.int64)  # MXNet casts float indices to int (toward zero)


def take_ref(a, indices, axis=0, mode="clip"):
    return np.take(a, _ints(indices), axis=axis, mode=mode)


def embedding_ref(data, weight, input_dim=0, output_dim=0):
    return weight[np.clip(_ints(data), 0, input_dim - 1)]


def batch_take_ref(a, indices):
    rows = a.reshape(-1, a.shape[-1])
    cols = np.clip(_ints(indices).reshape(-1), 0, a.shape[-1] - 1)
    return rows[np.arange(rows.shape[0]), cols].reshape(indices.shape)


def pick_ref(data, index, axis=-1, keepdims=False, mode="clip"):
    n = data.shape[axis]
    i = _ints(index)
    i = i % n if mode == "wrap" else np.clip(i, 0, n - 1)
    i = i if i.ndim == data.ndim else np.expand_dims(i, axis)  # keepdims takes either shape
    out = np.take_along_axis(data, i, axis=axis)
    return out if keepdims else np.squeeze(out, axis)


def fill_ref(lhs, mhs, rhs):
    out = lhs.copy()
    rows = out.reshape(-1, out.shape[-1])
    cols = np.clip(_ints(rhs).reshape(-1), 0, out.shape[-1] - 1)
    rows[np.arange(rows.shape[0]), cols] = mhs.reshape(-1)
    return out


def one_hot_ref(indices, depth=0, on_value=1.0, off_value=0.0, dtype="float32"):
    hot = _ints(indices)[..., None] == np.arange(depth)
    return np.where(hot, on_value, off_value)


def onehot_encode_ref(indices, out):
    return one_hot_ref(indices, depth=out.shape[1])


def where_ref(condition, x, y):
    c = condition != 0
    if c.shape != x.shape:  # one condition per first-axis slice
        c = c.reshape((-1,) + (1,) * (x.ndim - 1))
    return np.where(c, x, y)


def ravel_ref(data, shape=()):
    dims = (int(np.max(data[0])) + 1 if shape[0] == -1 else shape[0], *shape[1:])
    return np.ravel_multi_index(tuple(_ints(data)), dims)


def unravel_ref(data, shape=()):
    flat = _ints(data)
    dims = (int(flat.max()) // int(np.prod(shape[1:])) + 1, *shape[1:]) if shape[0] == -1 else shape
    return np.array(np.unravel_index(flat, dims))


X3 = (3, 4, 5)

CASES = [
    # -- take: clip / wrap / raise, every axis; the data's gradient adds up repeated rows --
    OpCase("take", [(5, 3), (2, 4)], take_ref, inputs=values_and_indices((5, 3), (2, 4), -3, 9),
           grad_inputs=[0], dtypes=FLOATS),
    OpCase("take", [X3, (2, 3)], take_ref, {"axis": 1, "mode": "wrap"},
           inputs=values_and_indices(X3, (2, 3), -9, 9), grad_inputs=[0], id="axis1-wrap"),
    OpCase("take", [X3, (4,)], take_ref, {"axis": -1},
           inputs=values_and_indices(X3, (4,), -2, 8), grad_inputs=[0], id="last-clip"),
    OpCase("take", [X3, (3, 2)], take_ref, {"axis": 2, "mode": "raise"},
           inputs=values_and_indices(X3, (3, 2), 0, 5), grad_inputs=[0], id="raise"),
    OpCase("take", [(6,), (2, 2)], take_ref, {"mode": "wrap"},
           inputs=values_and_indices((6,), (2, 2), -7, 7), grad_inputs=[0], id="1d"),
    # -- batch_take (no gradient, as in MXNet) --
    OpCase("batch_take", [(4, 5), (4,)], batch_take_ref,
           inputs=values_and_indices((4, 5), (4,), -2, 7), grad=False, dtypes=FLOATS),
    # -- Embedding: a row per index, clipped; weight gradient sums the rows' gradients --
    OpCase("Embedding", [(2, 3), (6, 4)], embedding_ref, {"input_dim": 6, "output_dim": 4},
           inputs=indices_then_values((2, 3), -1, 8, (6, 4)), grad_inputs=[1], dtypes=FLOATS),
    OpCase("Embedding", [(12,), (3, 40)], embedding_ref, {"input_dim": 3, "output_dim": 40},
           inputs=indices_then_values((12,), 0, 3, (3, 40)), grad_inputs=[1], id="repeats"),
    # -- pick / choose_element_0index --
    OpCase("pick", [X3, (3, 5)], pick_ref, {"axis": 1},
           inputs=values_and_indices(X3, (3, 5), -2, 6), grad_inputs=[0], dtypes=FLOATS),
    OpCase("pick", [X3, (3, 4)], pick_ref, {"axis": 2, "keepdims": True, "mode": "wrap"},
           inputs=values_and_indices(X3, (3, 4), -10, 10), grad_inputs=[0], id="keep-wrap"),
    OpCase("pick", [(4, 3), (3,)], pick_ref, {"axis": 0},
           inputs=values_and_indices((4, 3), (3,), 0, 4), grad_inputs=[0], id="axis0"),
    OpCase("choose_element_0index", [(5, 4), (5,)], pick_ref,
           inputs=values_and_indices((5, 4), (5,), 0, 4), grad_inputs=[0]),
    # -- fill_element_0index --
    OpCase("fill_element_0index", [(4, 5), (4,), (4,)], fill_ref,
           inputs=lambda rng, dt: [rng.uniform(-1, 1, (4, 5)).astype(dt),
                                   rng.uniform(-1, 1, (4,)).astype(dt),
                                   rng.integers(0, 5, (4,)).astype(dt)],
           grad_inputs=[0, 1], dtypes=FLOATS),
    # -- one_hot, _onehot_encode (no gradient) --
    OpCase("one_hot", [(2, 3)], one_hot_ref, {"depth": 4},
           inputs=integers(((2, 3), -2, 6)), grad=False, dtypes=(np.float32, np.int32, np.float16)),
    OpCase("one_hot", [(5,)], one_hot_ref,
           {"depth": 3, "on_value": 8, "off_value": 1, "dtype": "int32"},
           inputs=integers(((5,), 0, 3)), grad=False, id="int32"),
    OpCase("_onehot_encode", [(4,), (4, 3)], onehot_encode_ref,
           inputs=integers(((4,), 0, 3), ((4, 3), 0, 1)), grad=False),
    # -- where: same-shape and 1-D conditions --
    OpCase("where", [(3, 4), (3, 4), (3, 4)], where_ref,
           inputs=lambda rng, dt: [rng.integers(-1, 2, (3, 4)).astype(dt),
                                   rng.uniform(-1, 1, (3, 4)).astype(dt),
                                   rng.uniform(-1, 1, (3, 4)).astype(dt)],
           grad_inputs=[1, 2], dtypes=FLOATS),
    OpCase("where", [(3,), (3, 4, 2), (3, 4, 2)], where_ref,
           inputs=lambda rng, dt: [np.array([1, 0, 2]).astype(dt),
                                   rng.uniform(-1, 1, (3, 4, 2)).astype(dt),
                                   rng.uniform(-1, 1, (3, 4, 2)).astype(dt)],
           grad_inputs=[1, 2], id="vector"),
    # -- ravel_multi_index / unravel_index (and their _names) --
    OpCase("ravel_multi_index", [(2, 6)], ravel_ref, {"shape": (4, 5)},
           inputs=integers(((2, 6), 0, 4)), grad=False, dtypes=(np.float32, np.int32)),
    OpCase("_ravel_multi_index", [(3, 4)], ravel_ref, {"shape": (-1, 3, 2)},
           inputs=integers(((3, 4), 0, 2)), grad=False),
    OpCase("unravel_index", [(6,)], unravel_ref, {"shape": (4, 5)},
           inputs=integers(((6,), 0, 20)), grad=False, dtypes=(np.float32, np.int32)),
    OpCase("_unravel_index", [(2, 3)], unravel_ref, {"shape": (-1, 3)},
           inputs=integers(((2, 3), 0, 12)), grad=False),
]  # fmt: skip
