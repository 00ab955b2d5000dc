"""OpCase rows for Convolution and Pooling, with plain NumPy references.

The convolution reference pads the input with np.pad and sums kernel taps as strided
slices (one einsum per tap and filter) — no im2col, no GEMM. The pooling reference
loops over every output window and applies MXNet's rules directly: max ignores the
padding, avg divides by the window clipped to the padded input (count_include_pad) or
to the input itself, full convention lets the last window run past the padding.
Max pooling inputs are distinct values far apart, so finite differences never change
which element is the maximum.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from typing import Any

import numpy as np
from op_db import Inputs, OpCase

# -- references --------------------------------------------------------------------------------


def _nd(values: Any, fill: int, nd: int) -> tuple[int, ...]:
    return tuple(values) if values else (fill,) * nd


def conv_reference(
    x: np.ndarray, w: np.ndarray, b: np.ndarray | None = None, **p: Any
) -> np.ndarray:
    """Cross-correlation of NC(D)(H)W data with (F, C/g, k...) weights, as MXNet defines it.

    Any number of spatial axes: one einsum per filter and kernel tap over a strided slice.
    """
    nd = len(p["kernel"])
    kernel, stride = tuple(p["kernel"]), _nd(p.get("stride"), 1, nd)
    pad, dilate = _nd(p.get("pad"), 0, nd), _nd(p.get("dilate"), 1, nd)
    groups = p.get("num_group", 1)
    n, c = x.shape[:2]
    f = w.shape[0]
    out_size = [
        (x.shape[2 + k] + 2 * pad[k] - dilate[k] * (kernel[k] - 1) - 1) // stride[k] + 1
        for k in range(nd)
    ]
    xp = np.pad(x, [(0, 0), (0, 0)] + [(q, q) for q in pad])
    cg, fg = c // groups, f // groups
    out = np.zeros((n, f, *out_size))
    for k in range(f):
        g = k // fg
        for tap in itertools.product(*(range(kk) for kk in kernel)):
            window = tuple(
                slice(t * d, t * d + s * (o - 1) + 1, s)
                for t, d, s, o in zip(tap, dilate, stride, out_size)
            )
            part = xp[(slice(None), slice(g * cg, (g + 1) * cg), *window)]
            out[:, k] += np.tensordot(part, w[(k, slice(None), *tap)], axes=([1], [0]))
        if b is not None and not p.get("no_bias", False):
            out[:, k] += b[k]
    return out


class TempSpace:
    """A kTempSpace stand-in for calling _conv_cpu directly: one growing scratch buffer,
    NaN-filled so that a row a kernel forgets to write shows in its result."""

    def __init__(self) -> None:
        self.buf = np.empty(0, np.uint8)

    def get_space(self, shape: tuple[int, ...], dtype: Any = np.float32) -> Any:
        nbytes = int(np.prod(shape)) * np.dtype(dtype).itemsize
        if self.buf.size < nbytes:
            self.buf = np.full(nbytes, 0xFF, np.uint8)
        return self.buf[:nbytes].view(dtype).reshape(shape)


def _out_size(x: int, k: int, s: int, pad: int, convention: str) -> int:
    if convention == "same":
        return math.ceil(x / s)
    span = x + 2 * pad - k
    return (math.ceil(span / s) if convention == "full" else span // s) + 1


def pool_reference(x: np.ndarray, **p: Any) -> np.ndarray:
    """Pooling by explicit windows over 1 to 3 spatial axes (valid, full or same convention,
    global, every pool type). `v1=True` is Pooling_v1's average: always / kernel size."""
    nd = x.ndim - 2
    spatial = x.shape[2:]
    kind = p.get("pool_type", "max")
    if p.get("global_pool", False):
        kernel, stride, pad = spatial, (1,) * nd, (0,) * nd
    else:
        kernel, stride = tuple(p["kernel"]), _nd(p.get("stride"), 1, nd)
        pad = _nd(p.get("pad"), 0, nd)
    convention = p.get("pooling_convention", "valid")
    out_size = [_out_size(*a, convention) for a in zip(spatial, kernel, stride, pad)]
    if convention == "same":  # TensorFlow's: the odd padding element goes last
        pad = tuple(
            max((o - 1) * s + k - n, 0) // 2
            for o, s, k, n in zip(out_size, stride, kernel, spatial)
        )
        ends = [(o - 1) * s + k - q for o, s, k, q in zip(out_size, stride, kernel, pad)]
    else:
        ends = [n + q for n, q in zip(spatial, pad)]
    include_pad = p.get("count_include_pad", True) is not False
    out = np.zeros((*x.shape[:2], *out_size))
    for pos in itertools.product(*(range(o) for o in out_size)):
        starts = [y * s - q for y, s, q in zip(pos, stride, pad)]
        stops = [min(a + k, e) for a, k, e in zip(starts, kernel, ends)]
        window = x[
            (
                Ellipsis,
                *(slice(max(a, 0), max(min(b, n), 0)) for a, b, n in zip(starts, stops, spatial)),
            )
        ]
        axes = tuple(range(2, 2 + nd))
        index = (Ellipsis, *pos)
        if kind == "max":
            out[index] = window.max(axis=axes)
        elif kind == "sum":
            out[index] = window.sum(axis=axes)
        elif kind == "lp":
            q = p["p_value"]
            out[index] = (window**q).sum(axis=axes) ** (1.0 / q)
        else:
            if p.get("v1", False):
                size = math.prod(kernel)
            elif include_pad:
                size = math.prod(b - a for a, b in zip(starts, stops))
            else:
                size = math.prod(window.shape[2:])
            out[index] = window.sum(axis=axes) / size
    return out


def distinct(shape: tuple[int, ...], gap: float = 0.05) -> Any:
    """Inputs that are a shuffled ramp: every pair differs by at least `gap`."""

    def make(rng: np.random.Generator, dtype: Any) -> Inputs:
        size = int(np.prod(shape))
        values = (rng.permutation(size) - size / 2) * gap
        return [values.reshape(shape).astype(dtype)]

    return make


# -- rows ----------------------------------------------------------------------------------------


def with_float16(cases: list[OpCase], test_ids: set[str]) -> list[OpCase]:
    """The cases named (by test id) run in float16 too: both devices take it, the CPU
    through float32 copies, the GPU reading and writing float16 with wide sums."""
    unknown = test_ids - {c.test_id for c in cases}
    assert not unknown, f"with_float16: no such cases {sorted(unknown)}"
    return [
        dataclasses.replace(c, dtypes=(*c.dtypes, np.float16)) if c.test_id in test_ids else c
        for c in cases
    ]


def conv(id: str, data: tuple[int, ...], weight: tuple[int, ...], **params: Any) -> OpCase:
    shapes = [data, weight] if params.get("no_bias") else [data, weight, (weight[0],)]
    params.setdefault("num_filter", weight[0])
    return OpCase("Convolution", shapes, conv_reference, params, id=id, atol=1e-4)


def pool(id: str, data: tuple[int, ...], **params: Any) -> OpCase:
    kind = params.get("pool_type", "max")
    make = distinct(data) if kind == "max" else None
    low = 0.1 if kind == "lp" else -1.0  # (sum x^p)^(1/p) of positive values is smooth
    return OpCase("Pooling", [data], pool_reference, params, id=id, inputs=make, low=low)


CASES = [
    conv("3x3-pad1", (2, 3, 5, 5), (4, 3, 3, 3), kernel=(3, 3), pad=(1, 1)),
    conv("3x3-stride2", (2, 3, 7, 6), (4, 3, 3, 3), kernel=(3, 3), stride=(2, 2), pad=(1, 1)),
    conv("1x1", (2, 3, 4, 4), (5, 3, 1, 1), kernel=(1, 1)),
    conv("1x1-stride2", (2, 3, 5, 5), (4, 3, 1, 1), kernel=(1, 1), stride=(2, 2), no_bias=True),
    conv("dilate2", (1, 2, 7, 7), (3, 2, 3, 3), kernel=(3, 3), dilate=(2, 2), pad=(1, 1)),
    conv("group2", (2, 4, 5, 5), (6, 2, 3, 3), kernel=(3, 3), pad=(1, 1), num_group=2),
    conv("depthwise", (2, 3, 6, 6), (6, 1, 3, 3), kernel=(3, 3), pad=(1, 1), num_group=3),
    conv("depthwise-s2", (1, 4, 7, 7), (4, 1, 3, 3), kernel=(3, 3), stride=(2, 2), num_group=4),
    conv("no_bias", (2, 3, 5, 6), (4, 3, 2, 3), kernel=(2, 3), stride=(1, 2), no_bias=True),
    conv("1d", (2, 3, 8), (4, 3, 3), kernel=(3,), pad=(1,)),
    conv("3d", (2, 3, 4, 5, 5), (4, 3, 2, 3, 3), kernel=(2, 3, 3), stride=(1, 2, 1), pad=(1, 1, 1)),
    conv(
        "3d-group-dilate",
        (1, 4, 5, 4, 4),
        (4, 2, 2, 2, 2),
        kernel=(2, 2, 2),
        dilate=(2, 1, 1),
        stride=(2, 1, 1),
        num_group=2,
        no_bias=True,
    ),
    conv("3d-1x1x1", (2, 3, 2, 3, 3), (4, 3, 1, 1, 1), kernel=(1, 1, 1)),
    pool("max-2x2", (2, 3, 6, 6), kernel=(2, 2), stride=(2, 2)),
    pool("max-3x3-pad1", (2, 2, 7, 7), kernel=(3, 3), stride=(2, 2), pad=(1, 1)),
    pool("max-full", (1, 2, 6, 6), kernel=(3, 3), stride=(2, 2), pooling_convention="full"),
    pool("max-global", (2, 3, 4, 5), kernel=(1, 1), global_pool=True),
    pool("avg-3x3-pad1", (2, 2, 7, 7), kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="avg"),
    pool(
        "avg-exclude-pad",
        (2, 2, 6, 6),
        kernel=(3, 3),
        stride=(2, 2),
        pad=(1, 1),
        pool_type="avg",
        count_include_pad=False,
    ),
    pool(
        "avg-full-pad",
        (1, 2, 6, 6),
        kernel=(3, 3),
        stride=(2, 2),
        pad=(1, 1),
        pool_type="avg",
        pooling_convention="full",
    ),
    pool("avg-global", (2, 3, 4, 4), kernel=(1, 1), global_pool=True, pool_type="avg"),
    # the CPU's separable sums: windows clipped at both ends of rows and columns, 1-D
    pool("avg-3x3-s1-pad1", (2, 3, 9, 10), kernel=(3, 3), pad=(1, 1), pool_type="avg"),
    pool("avg-1d-pad", (2, 3, 9), kernel=(3,), stride=(2,), pad=(1,), pool_type="avg"),
    pool(
        "sum-same",
        (1, 2, 7, 6),
        kernel=(3, 2),
        stride=(2, 2),
        pooling_convention="same",
        pool_type="sum",
    ),
    # global avg/sum on a GPU: the reduction kernels (a warp per plane; a block per plane
    # for planes of 2 * 64 and more on the simulator; planes of 1024 and more in slices)
    pool("sum-global-1d", (2, 3, 9), kernel=(1,), global_pool=True, pool_type="sum"),
    pool("avg-global-block", (2, 2, 12, 11), kernel=(1, 1), global_pool=True, pool_type="avg"),
    pool("sum-global-sliced", (1, 2, 33, 32), kernel=(1, 1), global_pool=True, pool_type="sum"),
    pool("avg-3d-global", (2, 2, 3, 2, 3), kernel=(1, 1, 1), global_pool=True, pool_type="avg"),
    pool("sum-2x2", (2, 2, 5, 5), kernel=(2, 2), pool_type="sum"),
    pool("lp2", (1, 2, 5, 5), kernel=(2, 2), stride=(2, 2), pool_type="lp", p_value=2),
    pool("max-1d", (2, 3, 9), kernel=(3,), stride=(2,)),
    pool("max-3d", (2, 2, 4, 5, 5), kernel=(2, 3, 3), stride=(2, 2, 2), pad=(0, 1, 1)),
    pool("max-3d-global", (2, 3, 3, 4, 5), kernel=(1, 1, 1), global_pool=True),
    pool(
        "avg-3d-exclude-pad",
        (1, 2, 5, 4, 4),
        kernel=(3, 2, 2),
        stride=(2, 1, 2),
        pad=(1, 0, 1),
        pool_type="avg",
        count_include_pad=False,
    ),
    pool("avg-3d-pad", (1, 2, 4, 4, 3), kernel=(2, 3, 2), pad=(1, 1, 0), pool_type="avg"),
    pool(
        "avg-3d-same",
        (1, 2, 5, 5, 5),
        kernel=(2, 3, 2),
        stride=(2, 2, 2),
        pooling_convention="same",
        pool_type="avg",
    ),
    pool(
        "sum-3d-full",
        (1, 2, 5, 5, 4),
        kernel=(2, 2, 2),
        stride=(2, 2, 2),
        pooling_convention="full",
        pool_type="sum",
    ),
    pool("lp1-3d", (1, 2, 3, 4, 4), kernel=(2, 2, 2), stride=(1, 2, 2), pool_type="lp", p_value=1),
]
CASES = with_float16(
    CASES,
    {
        "Convolution-3x3-pad1",
        "Convolution-group2",
        "Convolution-depthwise",
        "Convolution-1d",
        "Pooling-max-2x2",
        "Pooling-avg-3x3-pad1",
        "Pooling-sum-global-sliced",
        "Pooling-lp2",
    },
)
