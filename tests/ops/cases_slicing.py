"""OpCase rows for slicing.py, gather_scatter.py, stack.py, squeeze and the range initialisers.

References are NumPy basic slicing (with Python's slice semantics for begin/end/step),
NumPy advanced indexing for gather/scatter (index columns made unique where a
gradient is checked: with duplicates scatter keeps one value, whose gradient is not a
gather), np.stack / np.squeeze, and np.arange / np.linspace / np.eye.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from op_db import Inputs, OpCase

X = (3, 4, 5)


def key_of(begin: tuple[Any, ...], end: tuple[Any, ...], step: tuple[Any, ...] = ()) -> Any:
    steps = step or (None,) * len(begin)
    return tuple(slice(b, e, s) for b, e, s in zip(begin, end, steps))


def slice_ref(x: np.ndarray, begin: Any, end: Any, step: Any = ()) -> np.ndarray:
    return x[key_of(begin, end, step)]


def assign_ref(lhs: np.ndarray, rhs: np.ndarray, begin: Any, end: Any, step: Any = ()) -> Any:
    out = lhs.copy()
    out[key_of(begin, end, step)] = rhs
    return out


def assign_scalar_ref(x: np.ndarray, scalar: float, begin: Any, end: Any, step: Any = ()) -> Any:
    out = x.copy()
    out[key_of(begin, end, step)] = scalar
    return out


SLICES = [  # (id, begin, end, step)
    ("basic", (0, 1), (2, 3), ()),
    ("steps", (None, 3, 1), (None, None, None), (2, -1, 2)),
    ("negative", (-1, None), (None, -4), (-1, -2)),
    ("empty", (2,), (1,), ()),
]


def slice_cases() -> list[OpCase]:
    out = []
    for tag, b, e, s in SLICES:
        params = {"begin": b, "end": e, "step": s}
        region = slice_ref(np.zeros(X), b, e, s).shape
        # graphs read a 0 dim as unknown (MXNet's legacy shapes): no graph checks when empty
        graphs = {"grad": False, "check_op": False} if 0 in region else {}
        out.append(OpCase("slice", [X], slice_ref, params, id=tag, **graphs))
        out.append(OpCase("_slice_assign", [X, region], assign_ref, params, id=tag, **graphs))
        scalar = {**params, "scalar": 2.5}
        out.append(OpCase("_slice_assign_scalar", [X], assign_scalar_ref, scalar, id=tag))
    params = {"begin": (1,), "end": (3,)}
    out += [
        OpCase("crop", [X], slice_ref, params),
        OpCase("_crop_assign", [X, (2, 4, 5)], assign_ref, params),
        OpCase("_crop_assign_scalar", [X], assign_scalar_ref, {**params, "scalar": -1.0}),
    ]
    return out


def slice_like_ref(x: np.ndarray, like: np.ndarray, axes: Any = ()) -> np.ndarray:
    axes = range(x.ndim) if not axes else [a % x.ndim for a in axes]
    key = [slice(None)] * x.ndim
    for a in axes:
        key[a] = slice(0, like.shape[a])
    return x[tuple(key)]


SLICE_LIKE = [
    OpCase("slice_like", [X, (2, 3, 4)], slice_like_ref, grad_inputs=[0], id="all"),
    OpCase(
        "slice_like", [X, (2, 3)], slice_like_ref, {"axes": (0, -2)}, grad_inputs=[0], id="axes"
    ),
]

# -- gather / scatter ---------------------------------------------------------------------------


def unique_columns(
    m_shape: tuple[int, ...], bounds: tuple[int, ...]
) -> Callable[[np.random.Generator], np.ndarray]:
    """Index arrays of shape (M, ...) with distinct columns inside `bounds` (negatives too)."""

    def make(rng: np.random.Generator) -> np.ndarray:
        m, rest = m_shape[0], m_shape[1:]
        n = int(np.prod(rest))
        flat = rng.choice(int(np.prod(bounds)), size=n, replace=False)
        cols = np.array(np.unravel_index(flat, bounds))
        flip = rng.random(cols.shape) < 0.3  # some as negative indices
        cols = np.where(flip, cols - np.array(bounds)[:, None], cols)
        return cols.reshape((m, *rest))

    return make


def gather_inputs(shape: tuple[int, ...], ishape: tuple[int, ...]) -> Any:
    make_idx = unique_columns(ishape, shape[: ishape[0]])

    def make(rng: np.random.Generator, dtype: Any) -> Inputs:
        return [rng.uniform(-1, 1, size=shape).astype(dtype), make_idx(rng).astype(dtype)]

    return make


def scatter_inputs(target: tuple[int, ...], ishape: tuple[int, ...], lhs: bool = False) -> Any:
    make_idx = unique_columns(ishape, target[: ishape[0]])
    dshape = ishape[1:] + target[ishape[0] :]

    def make(rng: np.random.Generator, dtype: Any) -> Inputs:
        data = rng.uniform(-1, 1, size=dshape).astype(dtype)
        idx = make_idx(rng).astype(dtype)
        if lhs:
            return [rng.uniform(-1, 1, size=target).astype(dtype), data, idx]
        return [data, idx]

    return make


def coords(idx: np.ndarray) -> tuple[np.ndarray, ...]:
    return tuple(idx.astype(np.int64))


def gather_ref(data: np.ndarray, idx: np.ndarray) -> np.ndarray:
    return data[coords(idx)]


def scatter_ref(data: np.ndarray, idx: np.ndarray, shape: Any) -> np.ndarray:
    out = np.zeros(shape)
    out[coords(idx)] = data
    return out


def scatter_set_ref(lhs: np.ndarray, rhs: np.ndarray, idx: np.ndarray, shape: Any = ()) -> Any:
    out = lhs.copy()
    out[coords(idx)] = rhs
    return out


GATHER = [
    OpCase(
        "gather_nd", [X, (2, 3)], gather_ref, inputs=gather_inputs(X, (2, 3)), grad_inputs=[0],
        low=0, high=1.9, id="rows",
    ),
    OpCase(
        "gather_nd", [X, (3, 2, 2)], gather_ref, inputs=gather_inputs(X, (3, 2, 2)),
        grad_inputs=[0], low=0, high=1.9, id="elements",
    ),
    OpCase(
        "scatter_nd", [(3, 5), (2, 3)], scatter_ref, {"shape": (4, 3, 5)},
        inputs=scatter_inputs((4, 3, 5), (2, 3)), grad_inputs=[0], low=0, high=1.9,
    ),
    OpCase(
        "_scatter_set_nd", [(4, 3, 5), (3, 5), (2, 3)], scatter_set_ref, {"shape": (4, 3, 5)},
        inputs=scatter_inputs((4, 3, 5), (2, 3), lhs=True), grad_inputs=[0, 1], low=0, high=1.9,
    ),
]  # fmt: skip

# -- stack, squeeze, initialisers ---------------------------------------------------------------


def stack_ref(*xs: np.ndarray, axis: int = 0, num_args: int = 0) -> np.ndarray:
    return np.stack(xs, axis=axis)


def squeeze_ref(x: np.ndarray, axis: Any = None) -> np.ndarray:
    out = np.squeeze(x, axis=axis)
    return out.reshape(1) if out.ndim == 0 else out


def split_ref(
    x: np.ndarray, indices: Any, axis: int = 1, squeeze_axis: bool = False, sections: int = 0
) -> list[np.ndarray]:
    parts = np.split(x, sections if sections else list(indices[1:]), axis=axis)
    return [np.squeeze(p, axis=axis) for p in parts] if squeeze_axis else parts


def init(name: str, reference: Callable[..., Any], dtype: str, id: str, **params: Any) -> OpCase:
    return OpCase(
        name, [], reference, params={**params, "dtype": dtype}, dtypes=(np.dtype(dtype),),
        grad=False, id=id,
    )  # fmt: skip


def arange_ref(start: float, stop: Any = None, step: float = 1.0, repeat: int = 1, **_: Any):
    return np.repeat(np.arange(start, stop, step), repeat)


SHAPES = [
    OpCase("stack", [(2, 3)] * 3, stack_ref, {"axis": 1, "num_args": 3}, id="middle"),
    OpCase("stack", [(2, 3)] * 2, stack_ref, {"axis": -1, "num_args": 2}, id="last"),
    OpCase("stack", [(4,)], stack_ref, {"axis": 0, "num_args": 1}, id="one"),
    OpCase("_split_v2", [(2, 6, 3)], split_ref, {"indices": (0, 1, 4)}, id="indices"),
    OpCase("_split_v2", [(4, 3)], split_ref, {"indices": (), "axis": 0, "sections": 2}, id="sec"),
    OpCase(
        "_split_v2", [(2, 3)], split_ref, {"indices": (0, 1, 2), "squeeze_axis": True}, id="sq"
    ),
    OpCase("squeeze", [(1, 3, 1, 2)], squeeze_ref, id="all"),
    OpCase("squeeze", [(1, 3, 1, 2)], squeeze_ref, {"axis": (0, -2)}, id="axes"),
    OpCase("squeeze", [(1, 1)], squeeze_ref, id="to_one"),
    init("_arange", arange_ref, "float32", "float", start=1.0, stop=7.0, step=1.5, repeat=2),
    init("_arange", arange_ref, "int32", "int", start=10.0, step=1.0),
    init("_arange", arange_ref, "float64", "down", start=3.0, stop=-2.0, step=-0.5),
    init(
        "_linspace", lambda **p: np.linspace(p["start"], p["stop"], p["num"]), "float64",
        "endpoint", start=-1.0, stop=2.0, num=7,
    ),
    init(
        "_linspace", lambda **p: np.linspace(p["start"], p["stop"], p["num"], endpoint=False),
        "float32", "open", start=0.0, stop=1.0, num=4, endpoint=False,
    ),
    init("_eye", lambda N, M, k, **_: np.eye(N, M, k), "float32", "upper", N=3, M=4, k=1),
    init("_eye", lambda N, k, **_: np.eye(N, N, k), "int64", "lower", N=4, k=-2),
]  # fmt: skip

CASES = slice_cases() + SLICE_LIKE + GATHER + SHAPES
