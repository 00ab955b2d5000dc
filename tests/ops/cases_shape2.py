"""OpCase rows for the layout ops: tile, repeat, reverse/flip, SwapAxis/swapaxes, Pad/pad,
depth_to_space, space_to_depth, diag, reshape_like, shape_array, size_array, cast,
im2col, col2im and khatri_rao.

References are NumPy's own functions (np.tile, np.repeat, np.flip, np.pad, np.diagonal,
...) or formulas written from MXNet's documented semantics (the reshape-transpose-reshape
of depth_to_space, strided slices of a padded image for im2col).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from op_db import OpCase

ALL = (np.float16, np.float32, np.float64, np.int32)  # pure copies: every dtype
FLOATS = (np.float16, np.float32, np.float64)


def copy_case(name: str, shapes: list[tuple[int, ...]], ref: Any, params: dict, id: str = ""):
    """A layout op that only moves elements: integer inputs over a wide range too."""
    return OpCase(name, shapes, ref, params, dtypes=ALL, low=-50, high=50, id=id)


# -- tile, repeat, flip, swapaxes -----------------------------------------------------------------


def tile_ref(x: np.ndarray, reps: tuple[int, ...]) -> np.ndarray:
    return np.tile(x, reps)


def repeat_ref(x: np.ndarray, repeats: int, axis: int | None = None) -> np.ndarray:
    return np.repeat(x, repeats, axis=axis)


def flip_ref(x: np.ndarray, axis: tuple[int, ...]) -> np.ndarray:
    return np.flip(x, axis=axis)


def swap_ref(x: np.ndarray, dim1: int = 0, dim2: int = 0) -> np.ndarray:
    return np.swapaxes(x, dim1, dim2)


REPLICATE = [
    copy_case("tile", [(2, 3)], tile_ref, {"reps": (2, 3)}, "same_rank"),
    copy_case("tile", [(3,)], tile_ref, {"reps": (2, 1, 2)}, "longer_reps"),
    copy_case("tile", [(2, 3, 2)], tile_ref, {"reps": (3,)}, "shorter_reps"),
    copy_case("tile", [(2, 3)], tile_ref, {"reps": ()}, "empty_reps"),
    copy_case("repeat", [(2, 3, 2)], repeat_ref, {"repeats": 3, "axis": 1}, "axis"),
    copy_case("repeat", [(2, 3)], repeat_ref, {"repeats": 2, "axis": -1}, "last"),
    copy_case("repeat", [(2, 3)], repeat_ref, {"repeats": 2}, "flat"),
    copy_case("reverse", [(3, 4, 2)], flip_ref, {"axis": (0, 2)}, "two"),
    copy_case("reverse", [(5,)], flip_ref, {"axis": (-1,)}, "negative"),
    copy_case("flip", [(3, 4)], flip_ref, {"axis": (1,)}),
    copy_case("SwapAxis", [(2, 3, 4)], swap_ref, {"dim1": 0, "dim2": 2}),
    copy_case("swapaxes", [(2, 3, 4, 5)], swap_ref, {"dim1": -3, "dim2": -1}, "negative"),
    copy_case("swapaxes", [(2, 3)], swap_ref, {"dim1": 1, "dim2": 1}, "same"),
]

# -- Pad ------------------------------------------------------------------------------------------


def pad_ref(
    x: np.ndarray, pad_width: tuple[int, ...], mode: str = "constant", constant_value: float = 0
) -> np.ndarray:
    pairs = list(zip(pad_width[::2], pad_width[1::2]))
    if mode == "constant":
        return np.pad(x, pairs, mode, constant_values=constant_value)
    return np.pad(x, pairs, mode)


P4 = (0, 0, 0, 0, 1, 2, 3, 1)
P5 = (0, 0, 0, 0, 1, 2, 3, 1, 2, 0)
PAD = [
    OpCase("Pad", [(2, 3, 3, 5)], pad_ref, {"mode": "constant", "pad_width": P4}, dtypes=ALL,
           id="constant"),
    OpCase("Pad", [(2, 2, 3, 5, 4)], pad_ref, {"mode": "constant", "pad_width": P5,
           "constant_value": -2.5}, id="constant_value"),
    OpCase("Pad", [(2, 3, 3, 5)], pad_ref, {"mode": "edge", "pad_width": P4}, dtypes=FLOATS,
           id="edge"),
    OpCase("Pad", [(2, 2, 3, 5, 4)], pad_ref, {"mode": "edge", "pad_width": P5}, id="edge5"),
    OpCase("Pad", [(2, 3, 3, 5)], pad_ref, {"mode": "reflect", "pad_width": P4},
           dtypes=FLOATS, id="reflect"),
    OpCase("Pad", [(2, 2, 3, 5, 4)], pad_ref, {"mode": "reflect", "pad_width": P5},
           id="reflect5"),
    OpCase("Pad", [(4, 3)], pad_ref, {"mode": "reflect", "pad_width": (3, 2, 0, 2)},
           id="reflect_any_axis"),
    OpCase("pad", [(3, 4)], pad_ref, {"mode": "edge", "pad_width": (2, 0, 1, 3)}),
]  # fmt: skip

# -- depth_to_space, space_to_depth, diag ----------------------------------------------------------


def d2s_ref(x: np.ndarray, block_size: int) -> np.ndarray:
    n, c, h, w = x.shape
    b = block_size
    y = x.reshape(n, b, b, c // (b * b), h, w).transpose(0, 3, 4, 1, 5, 2)
    return y.reshape(n, c // (b * b), h * b, w * b)


def s2d_ref(x: np.ndarray, block_size: int) -> np.ndarray:
    n, c, h, w = x.shape
    b = block_size
    y = x.reshape(n, c, h // b, b, w // b, b).transpose(0, 3, 5, 1, 2, 4)
    return y.reshape(n, c * b * b, h // b, w // b)


def diag_ref(x: np.ndarray, k: int = 0, axis1: int = 0, axis2: int = 1) -> np.ndarray:
    if x.ndim == 1:
        return np.diag(x, k)
    return np.diagonal(x, k, axis1, axis2)


LAYOUT = [
    copy_case("depth_to_space", [(2, 8, 3, 2)], d2s_ref, {"block_size": 2}),
    copy_case("depth_to_space", [(1, 9, 2, 2)], d2s_ref, {"block_size": 3}, "block3"),
    copy_case("space_to_depth", [(2, 3, 4, 6)], s2d_ref, {"block_size": 2}),
    copy_case("diag", [(4, 5)], diag_ref, {}, "main"),
    copy_case("diag", [(4, 5)], diag_ref, {"k": 2}, "upper"),
    copy_case("diag", [(4, 5)], diag_ref, {"k": -3}, "lower"),
    copy_case("diag", [(3, 4, 5, 2)], diag_ref, {"k": 1, "axis1": -2, "axis2": 1}, "nd"),
    copy_case("diag", [(4,)], diag_ref, {"k": 0}, "vector"),
    copy_case("diag", [(3,)], diag_ref, {"k": -2}, "vector_lower"),
    copy_case("diag", [(3,)], diag_ref, {"k": 1}, "vector_upper"),
]

# -- reshape_like, shape_array, size_array, cast ---------------------------------------------------


def reshape_like_ref(
    lhs: np.ndarray, rhs: np.ndarray, lhs_begin=None, lhs_end=None, rhs_begin=None, rhs_end=None
) -> np.ndarray:
    lb = slice(0, lhs_begin) if lhs_begin is not None else slice(0, 0)
    le = slice(lhs_end, None) if lhs_end is not None else slice(lhs.ndim, None)
    mid = rhs.shape[slice(rhs_begin, rhs_end)]
    return lhs.reshape(lhs.shape[lb] + mid + lhs.shape[le])


SHAPE_INFO = [
    OpCase("reshape_like", [(6, 4), (2, 3, 4)], reshape_like_ref, id="all"),
    OpCase("reshape_like", [(30, 7), (15, 2, 4)], reshape_like_ref,
           {"lhs_begin": 0, "lhs_end": 1, "rhs_begin": 0, "rhs_end": 2}, id="part"),
    OpCase("reshape_like", [(1, 1, 7, 3, 1, 1), (21, 1, 1, 21)], reshape_like_ref,
           {"lhs_begin": 1, "lhs_end": -1, "rhs_begin": 1, "rhs_end": None}, id="negative"),
    OpCase("shape_array", [(2, 3, 4)], lambda x: np.array(x.shape, np.int64), dtypes=ALL,
           grad=False),
    OpCase("size_array", [(2, 3, 4)], lambda x: np.array([x.size], np.int64), dtypes=ALL,
           grad=False),
    OpCase("cast", [(3, 4)], lambda x, dtype: x.astype(dtype), {"dtype": "float64"},
           dtypes=(np.float32, np.float16), id="to_float64"),
    OpCase("cast", [(3, 4)], lambda x, dtype: x.astype(dtype), {"dtype": "int32"},
           dtypes=(np.float32,), low=-9, high=9, grad=False, id="to_int32"),
]  # fmt: skip

# -- im2col, col2im, khatri_rao -------------------------------------------------------------------


def _window(kernel, stride, dilate, pad):
    d = len(kernel)
    return (
        tuple(kernel),
        tuple(stride) or (1,) * d,
        tuple(dilate) or (1,) * d,
        tuple(pad) or (0,) * d,
    )


def _blocks(spatial, k, s, d, p):
    return [(n + 2 * q - e * (m - 1) - 1) // t + 1 for n, m, t, e, q in zip(spatial, k, s, d, p)]


def _block_slices(kk, blocks, s, d):
    """The strided slice of the padded image that kernel position kk reads, per axis."""
    return tuple(slice(i * e, i * e + t * (o - 1) + 1, t) for i, o, t, e in zip(kk, blocks, s, d))


def im2col_ref(x, kernel, stride=(), dilate=(), pad=()):
    k, s, d, p = _window(kernel, stride, dilate, pad)
    n, c = x.shape[:2]
    blocks = _blocks(x.shape[2:], k, s, d, p)
    xp = np.pad(x, [(0, 0), (0, 0)] + [(q, q) for q in p])
    cols = [
        xp[(slice(None), slice(None), *_block_slices(kk, blocks, s, d))].reshape(n, c, -1)
        for kk in np.ndindex(*k)
    ]
    return np.stack(cols, axis=2).reshape(n, c * len(cols), -1)


def col2im_ref(col, output_size, kernel, stride=(), dilate=(), pad=()):
    k, s, d, p = _window(kernel, stride, dilate, pad)
    n, ck, _ = col.shape
    kernel_size = int(np.prod(k))
    c = ck // kernel_size
    blocks = _blocks(output_size, k, s, d, p)
    im = np.zeros((n, c, *(m + 2 * q for m, q in zip(output_size, p))))
    parts = col.reshape(n, c, kernel_size, *blocks)
    for j, kk in enumerate(np.ndindex(*k)):
        im[(slice(None), slice(None), *_block_slices(kk, blocks, s, d))] += parts[:, :, j]
    return im[(slice(None), slice(None), *(slice(q, q + m) for q, m in zip(p, output_size)))]


def khatri_rao_ref(*mats, num_args=0):
    out = mats[0]
    for m in mats[1:]:
        out = np.einsum("ic,jc->ijc", out, m).reshape(-1, m.shape[1])
    return out


W2 = {"kernel": (3, 2), "stride": (2, 1), "dilate": (1, 2), "pad": (1, 0)}
BLOCKS = [
    OpCase("im2col", [(2, 3, 7, 6)], im2col_ref, W2, dtypes=FLOATS, id="2d"),
    OpCase("im2col", [(2, 2, 7)], im2col_ref, {"kernel": (3,), "pad": (2,)}, id="1d"),
    OpCase("im2col", [(1, 2, 4, 3, 5)], im2col_ref, {"kernel": (2, 2, 3), "stride": (2, 1, 1)},
           id="3d"),
    OpCase("col2im", [(2, 18, 16)], col2im_ref, {"output_size": (7, 6), **W2},
           dtypes=FLOATS, id="2d"),
    OpCase("col2im", [(2, 6, 9)], col2im_ref, {"output_size": (7,), "kernel": (3,),
           "pad": (2,)}, id="1d"),
    OpCase("khatri_rao", [(2, 3), (4, 3), (3, 3)], khatri_rao_ref, {"num_args": 3},
           dtypes=FLOATS, id="three"),
    OpCase("khatri_rao", [(4, 2)], khatri_rao_ref, {"num_args": 1}, id="one"),
]  # fmt: skip

CASES = REPLICATE + PAD + LAYOUT + SHAPE_INFO + BLOCKS
