"""MXNet's `_image_resize` (`nd.image.resize`): OpenCV's resize rules on both devices.

    _image_resize(x, size, keep_ratio, interp):  (H, W, C) or (N, H, W, C) -> (oh, ow, C) ...
        size=(w, h) gives (h, w); size=s gives (s, s), or with keep_ratio the short edge s and
        the long one scaled with C's integer division (h > w: (h * s // w, s), else
        (s, w * s // h)). The output dtype is the input's (float32, float64 or uint8).

MXNet 1.9.1's CPU resize is OpenCV 3.4.2's `cv::resize`, and `interp` is OpenCV's code:
0 nearest, 1 bilinear, 2 bicubic, 3 area (MXNet's docstring lists area before bicubic,
but the numbers are OpenCV's), 4 Lanczos, 5 bit-exact bilinear; we take 0-3. With
s = 1 / (out/in) per axis (OpenCV's scale, which can differ from in/out in the last bit):

    nearest   src = min(floor(dst * s), in - 1)
    bilinear  src = (dst + 0.5) * s - 0.5, weights 1 - f, f in float32; along x the point
              is clamped to [0, in - 1], along y only the two rows are; an exact 2x
              shrink on both axes is area's 2x2 average (OpenCV switches)
    bicubic   the same point, 4 taps (a = -0.75, weights in float32 arithmetic), clamped
    area      shrinking on both axes: output d averages [d * s, (d + 1) * s), partial
              pixels by their overlap, integer scales as sum * float32(1 / box size);
              otherwise bilinear taps at src = floor(dst * s) with fraction
              (dst + 1) - (src + 1) / s wrapped to [0, 1)

float32 and uint8 sum in float32 step by step as OpenCV does, float64 in float64. uint8
takes OpenCV's integer path: 11-bit weights round(w * 2048), integer row sums, then per
output row bilinear's SSE rounding (sum of ((row >> 4) * weight) >> 16, then (+ 2) >> 2)
and bicubic's (float32 sums of row * weight / 2048^2 rounded half to even; the last
len % 8 values of an output row (width * channels) scalar: (sum + 2^21) >> 22); 2x2
boxes average as (sum + 2) >> 2, other boxes round half to even. Measured against MXNet
on 63 shapes per interp and dtype (up, down, mixed and non-integer scales, 1-pixel edges,
1/3/4 channels, batches; 173k values each): uint8 and float64 agree exactly (float64
area to 5e-16), float32 to 3e-7 relative (area over boxes of 500 pixels or more: 2e-6,
OpenCV's sums there are in another order). That rounding copies x86 OpenCV's SIMD
choices; another OpenCV build may differ by one on uint8.
The kernels follow OpenCV's structure, which also gives its sums' order: per-axis tables
(first source index and weights per output row and column), then for bilinear, bicubic
and non-integer area one pass along x into rows of sums and one along y. On the CPU an
item is a whole row (its index arithmetic once); on the GPU one pixel or value.
MXNet's GPU resize is a different (align-corners) bilinear, interp=1 only; ours runs
these rules on both devices. MXNet registers resize's gradient as `_copy` of the head
gradient, which fails on the shape mismatch; we register none, so asking for one says so.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import kernel
from ..attrs import FCompute_cpu, FCompute_gpu, FInferShape, FInferType
from ..base import InferError, NNVMError
from ..infer import elemwise_type, shape_assign, shape_is_known
from ..kernel import like, scratch
from ..kernel.launch import NULL, is_gpu, req_code, run_rows, store
from ..kernel.launch import uindex as uidx
from ..kernel.unfused import product, product32
from ..param import Parameter, Shape, field
from ..registry import NodeAttrs, register_op

NEAREST, LINEAR, CUBIC, AREA = 0, 1, 2, 3  # OpenCV's interp codes, as MXNet passes them
# kernel modes beyond the codes: area's general box sums, its integer-scale average
BOX, BOX_FAST = 4, 5
_INTERP_NAMES = "0 (nearest), 1 (bilinear), 2 (bicubic) or 3 (area)"
_DTYPES = (np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.uint8))
# pass 1's row sums per input dtype: OpenCV's float32 sums, float64's own, uint8's integers
_ROW_TYPES = {
    np.dtype(np.float32): np.dtype(np.float32),
    np.dtype(np.float64): np.dtype(np.float64),
    np.dtype(np.uint8): np.dtype(np.int32),
}


class ResizeParam(Parameter):
    size = field(
        Shape, default=(), describe="Size of new image. Could be (width, height) or (size)"
    )
    keep_ratio = field(
        bool,
        default=False,
        describe="With a single-int `size`: resize the short edge to it and keep the aspect "
        "ratio (True), or make both edges that size (False).",
    )
    interp = field(
        int,
        default=1,
        describe="Interpolation method (OpenCV's codes): 0 nearest neighbour, 1 bilinear, "
        "2 bicubic over 4x4 pixels, 3 area (pixel area relation). 4 (Lanczos) and 5 "
        "(bit-exact bilinear), which MXNet's CPU path also takes, are not provided.",
    )


def resized_hw(attrs: NodeAttrs, h: Any, w: Any) -> tuple[Any, Any]:
    """(out height, out width) for an (h, w) image; None where h or w is unknown."""
    p = attrs.parsed
    size = tuple(p.size)
    if len(size) not in (1, 2):
        raise InferError(
            f"_image_resize: parameter 'size' must be (width, height) or one int, got {size}"
        )
    if any(s <= 0 for s in size):
        raise InferError(f"_image_resize: parameter 'size' must be positive, got {size}")
    if len(size) == 2:
        return size[1], size[0]
    s = size[0]
    if not p.keep_ratio:
        return s, s
    if h is None or w is None:
        return None, None
    # MXNet: the short edge becomes s, the long one scales with integer division
    return (h * s // w, s) if h > w else (s, w * s // h)


def check_image(op: str, shape: tuple[Any, ...], channels_1_or_3: bool = False) -> None:
    if len(shape) not in (3, 4):
        raise InferError(
            f"{op}: input 'data' must have shape (height, width, channels) or "
            f"(N, height, width, channels), got {shape}"
        )
    c = shape[-1]
    if channels_1_or_3 and c is not None and c not in (1, 3):
        raise InferError(
            f"{op}: the last axis of input 'data' must be channels with 1 or 3 elements, "
            f"got shape {shape}"
        )


_DATA = "_image_resize: input 'data'"


def _resize_infer(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    _check_interp(attrs)
    shape = in_shapes[0]
    if shape is None:
        out = out_shapes[0]
        if out is not None and len(out) in (3, 4):  # batch and channels carry back
            shape_assign(in_shapes, 0, (*out[:-3], None, None, out[-1]), _DATA)
        return False
    shape = tuple(shape)
    check_image("_image_resize", shape)
    if 0 in shape[-3:-1]:  # no pixel to take values from (a batch of none is fine)
        raise InferError(
            f"{_DATA} must have a nonzero height and width to resize, got shape {shape}"
        )
    oh, ow = resized_hw(attrs, shape[-3], shape[-2])
    shape_assign(out_shapes, 0, (*shape[:-3], oh, ow, shape[-1]), "_image_resize: output")
    if out_shapes[0] is not None:  # batch and channels carry back
        out = out_shapes[0]
        shape_assign(in_shapes, 0, (*out[:-3], *shape[-3:-1], out[-1]), _DATA)
    return shape_is_known(in_shapes[0]) and shape_is_known(out_shapes[0])


def _resize_type(attrs: NodeAttrs, in_types: list[Any], out_types: list[Any]) -> bool:
    for t in (in_types[0], out_types[0]):
        if t is not None and np.dtype(t) not in _DTYPES:
            raise InferError(
                f"_image_resize: input 'data' must be float32, float64 or uint8 (OpenCV's "
                f"resize types), got {np.dtype(t)}"
            )
    return elemwise_type(1, 1)(attrs, in_types, out_types)


def _check_interp(attrs: NodeAttrs) -> int:
    interp = int(attrs.parsed.interp)
    if interp not in (NEAREST, LINEAR, CUBIC, AREA):
        extra = {4: " (Lanczos is not provided)", 5: " (bit-exact bilinear is not provided)"}
        raise NNVMError(
            f"_image_resize: parameter 'interp' must be {_INTERP_NAMES}, "
            f"got {interp}{extra.get(interp, '')}"
        )
    return interp


# -- per-axis source coordinates and weights (OpenCV's resize tables, one entry at a time) ------


@kernel.device_function
def _ifloor(v):
    """floor(v) as an int: numba-cuda's math.floor returns a float, and indexes must not."""
    return int(math.floor(v))  # noqa: RUF046 - an int on the CPU, a float on CUDA


@kernel.device_function
def _iceil(v):
    return int(math.ceil(v))  # noqa: RUF046 - as _ifloor


@kernel.device_function
def _tap_start(d, scale, inv, area_mode, clamp, n):
    """(first source index, fraction): the source point of output index d along one axis.

    OpenCV clamps the point itself only along x for bilinear (clamp=1); elsewhere only
    the taps are clamped, so two taps may read the same edge pixel.
    """
    if area_mode:
        s = _ifloor(d * scale)
        f = np.float32((d + 1) - product(s + 1, inv))
        f = np.float32(0.0) if f <= 0 else np.float32(f - math.floor(f))
    else:
        f = np.float32(product(d + 0.5, scale) - 0.5)
        s = _ifloor(f)
        f = np.float32(f - s)
    if clamp:
        if s < 0:
            s = 0
            f = np.float32(0.0)
        if s >= n - 1:
            s = n - 1
            f = np.float32(0.0)
    return s, f


@kernel.device_function
def _tap_weight(k, f, cubic):
    """Weight of tap k at fraction f, rounded to float32 as OpenCV's tables are (each
    product on its own: m, kernel/unfused.py's product32)."""
    if not cubic:
        return np.float32(1.0 - f) if k == 0 else f
    # OpenCV's bicubic (a = -0.75, taps at s - 1 .. s + 2), in float32 arithmetic as there
    a = np.float32(-0.75)
    one = np.float32(1.0)
    a5, a8, a4 = np.float32(-3.75), np.float32(-6.0), np.float32(-3.0)  # 5a, 8a, 4a
    a2, a3 = np.float32(1.25), np.float32(2.25)  # a + 2, a + 3
    m = product32
    g = one - f
    u = f + one
    c0 = m(m(m(a, u) - a5, u) + a8, u) - a4
    c1 = m(m(m(a2, f) - a3, f), f) + one
    c2 = m(m(m(a2, g) - a3, g), g) + one
    if k == 0:
        return c0
    if k == 1:
        return c1
    if k == 2:
        return c2
    return one - c0 - c1 - c2


@kernel.device_function
def _fixed_weight(w):
    """OpenCV's 11-bit integer weight: round(w * 2048)."""
    return int(_rint(w * 2048.0))


@kernel.device_function
def _clamp(j, n):
    return 0 if j < 0 else (n - 1 if j >= n else j)


@kernel.device_function
def _box_weight(s, d, scale, n):
    """Weight of source index s in output d's box [d * scale, (d + 1) * scale)."""
    f1 = d * scale
    f2 = f1 + scale
    cell = min(scale, n - f1)
    s2 = min(_ifloor(f2), n - 1)
    s1 = min(_iceil(f1), s2)
    if s == s1 - 1 and s1 - f1 > 1e-3:
        return np.float32((s1 - f1) / cell)
    if s >= s1 and s < s2:
        return np.float32(1.0 / cell)
    if s == s2 and f2 - s2 > 1e-3:
        return np.float32(min(min(f2 - s2, 1.0), cell) / cell)
    return np.float32(0.0)


@kernel.device_function
def _rint(v):
    """v rounded half to even (OpenCV's saturate_cast from float)."""
    r = math.floor(v)
    d = v - r
    odd = math.floor(r * 0.5) * 2.0 != r
    return r + ((d > 0.5) | ((d == 0.5) & odd))  # no branches: d is random in a loop


@kernel.device_function
def _to_u8(v):
    return 0 if v < 0 else (255 if v > 255 else v)


@kernel.device_function
def _madd(acc, v, wt, single):
    """acc + v * wt, rounded to float32 at each step when OpenCV computes in float."""
    if single:
        return np.float32(acc + np.float32(v * wt))
    return acc + v * wt


# -- per-axis tables (one item per output row or column) and integer-scale area's box ---------


@kernel.device_function
def _box_fast_at(x, p, row, c, ky, kx, fixed, single):
    # an integer scale: the plain average of the ky x kx box from offset p (rows `row`
    # apart) in row-major order; uint8 sums as ints. Floats sum in x's type (a 0.0 start
    # made a float32 sum float64 on a GPU, where each step rounds to float32 anyway).
    zero = like(x[uidx(p)], 0.0)
    one = like(zero, 1)
    acc = zero
    isum = 0
    for a in range(ky):
        q = p + a * row
        for b in range(kx):
            v = x[uidx(q + b * c)]
            if fixed:
                isum += int(v)
            else:
                acc = _madd(acc, v, one, single)
    n = ky * kx
    # float32(1 / n) as OpenCV: a float32 division rounds 1 / n as the float64 one, rounded
    # again, does (no double-rounding tie for 1 / n of n < 2^27)
    inv = np.float32(1) / np.float32(n)
    if not fixed:
        return _madd(zero, acc, inv, single)
    if n == 4:  # OpenCV's SIMD 2x2 average rounds half up
        return like(zero, (isum + 2) >> 2)
    return like(zero, _to_u8(_rint(np.float32(isum) * inv)))


@kernel.parallel_for
def _box_tables(k, start, weight, oh, sy, sx, ky, kx, h, w):
    # area shrinking's per-axis tables: item k < oh is output row k, the rest output
    # columns; start[k] is the first source index of its box, its weights (0 past the
    # box) at weight[k * ky ...] for rows, weight[oh * ky + (k - oh) * kx ...] for columns
    if k < oh:
        d, scale, n, taps, first = k, sy, h, ky, k * ky
    else:
        d, scale, n, taps, first = k - oh, sx, w, kx, oh * ky + (k - oh) * kx
    s0 = max(_iceil(d * scale) - 1, 0)
    s1 = min(_ifloor(d * scale + scale), n - 1)
    start[k] = s0
    for j in range(taps):
        weight[first + j] = _box_weight(s0 + j, d, scale, n) if s0 + j <= s1 else 0.0


@kernel.parallel_for
def _tap_tables(k, start, weight, fixed_weight, oh, sy, sx, iy, ix, cubic, area, h, w):
    # OpenCV's per-axis tables: item k < oh is output row k, the rest output columns;
    # start[k] is the first tap, weight[4k + j] its float32 weights, fixed_weight the
    # 11-bit integer ones uint8 sums with
    if k < oh:
        s, f = _tap_start(k, sy, iy, area, 0, h)
    else:
        s, f = _tap_start(k - oh, sx, ix, area, 1 - cubic, w)
    start[k] = s - 1 if cubic else s
    for j in range(4 if cubic else 2):
        wt = _tap_weight(j, f, cubic)
        weight[4 * k + j] = wt
        fixed_weight[4 * k + j] = _fixed_weight(wt)


# -- the kernels: an item is a span of one output row (the CPU: the whole row; the GPU: one ---
# pixel or value), so the row's index arithmetic is done once per row on the CPU


@kernel.device_function
def _row_span(t, nchunk, chunk, n):
    """(row, first, end): item t's row and its span [first, end) of the row's n entries."""
    r = t // nchunk
    j0 = (t - r * nchunk) * chunk
    return r, j0, min(j0 + chunk, n)


@kernel.parallel_for
def _nearest_tables(k, start, oh, iy, ix, h, w):
    # item k < oh: output row k's source row, else output column k - oh's source column:
    # floor(dst * (1 / (out/in))), computed as OpenCV does
    if k < oh:
        start[k] = min(_ifloor(k * (1.0 / iy)), h - 1)
    else:
        start[k] = min(_ifloor((k - oh) * (1.0 / ix)), w - 1)


@kernel.parallel_for
def _resize_nearest(t, out, x, h, w, oh, ow, c, start, add, chunk, nchunk):
    # output row r = (image, oy): each pixel copies its source pixel's channels
    r, j0, j1 = _row_span(t, nchunk, chunk, ow)
    src_row = ((r // oh) * h + start[r % oh]) * w * c
    for ox in range(j0, j1):
        src = src_row + start[oh + ox] * c
        o = (r * ow + ox) * c
        if c == 3:  # RGB unrolled: a loop of a run-time count costs more than the copy
            store(out, o, x[uidx(src)], add)
            store(out, o + 1, x[uidx(src + 1)], add)
            store(out, o + 2, x[uidx(src + 2)], add)
        else:
            for ch in range(c):
                store(out, o + ch, x[uidx(src + ch)], add)


@kernel.parallel_for
def _resize_area_fast(t, out, x, h, w, oh, ow, c, ky, kx, fixed, single, add, chunk, nchunk):
    # area shrinking by integer scales, output row r = (image, oy): the ky x kx boxes'
    # plain averages, summed in OpenCV's order (not separable in float32)
    r, j0, j1 = _row_span(t, nchunk, chunk, ow)
    row = w * c
    top = ((r // oh) * h + (r % oh) * ky) * row  # the boxes' first source row
    for ox in range(j0, j1):
        o = (r * ow + ox) * c
        p = top + ox * kx * c
        for ch in range(c):
            store(out, o + ch, _box_fast_at(x, p + ch, row, c, ky, kx, fixed, single), add)


# Area shrinking by other scales is separable in OpenCV's order: pass 1 sums each source
# row's boxes along x (row = sum of pixel * overlap weight, float32 step by step), pass 2
# sums those rows along y with the rows' weights. The weights come from _box_tables; a
# zero weight is skipped, as OpenCV's tables leave it out.


@kernel.parallel_for
def _area_rows(t, rows, x, w, oh, ow, c, ky, kx, start, weight, single, chunk, nchunk):
    # pass 1, source row r = (image, y): output columns ox (the tables' entry oh + ox)
    r, j0, j1 = _row_span(t, nchunk, chunk, ow)
    src_row = r * w * c
    for ox in range(j0, j1):
        o = (r * ow + ox) * c
        x0 = start[oh + ox]
        first = oh * ky + ox * kx
        for ch in range(c):
            rows[uidx(o + ch)] = 0.0
        for j in range(kx):
            bx = weight[first + j]
            if bx != 0:
                p = src_row + (x0 + j) * c
                for ch in range(c):
                    v = _madd(rows[uidx(o + ch)], x[uidx(p + ch)], bx, single)
                    rows[uidx(o + ch)] = v


@kernel.parallel_for
def _area_columns(t, out, rows, h, oh, ow, c, ky, start, weight, fixed, single, add, chunk, nchunk):
    # pass 2, output row r = (image, oy): values [j0, j1) of its ow * c
    m = ow * c
    r, j0, j1 = _row_span(t, nchunk, chunk, m)
    img = r // oh
    oy = r - img * oh
    top = (img * h + start[oy]) * m
    o = r * m
    for j in range(j0, j1):
        acc = 0.0
        for i in range(ky):
            by = weight[oy * ky + i]
            if by != 0:
                acc = _madd(acc, rows[uidx(top + i * m + j)], by, single)
        if fixed:
            acc = _to_u8(_rint(acc))
        store(out, o + j, acc, add)


# Bilinear and bicubic (and area growing: bilinear with area's fractions) are separable, as
# OpenCV computes them: pass 1 sums each needed source row along x into a row of `rows`
# (float32 for float32, float64 for float64, the 11-bit integer sums for uint8), pass 2
# sums `taps` of those rows along y. `rows` holds either every source row (dense, where
# the output rows reuse them) or each output row's own taps (a strong shrink, where most
# source rows are never read): per image `nrows` = h or oh * taps rows.


@kernel.device_function
def _rows_row(oy, a, dense, taps, start, h):
    """Row of an image's `rows` holding output row oy's tap a."""
    if dense:
        return _clamp(start[oy] + a, h)
    return oy * taps + a


@kernel.device_function
def _source_offset(r, nrows, dense, cubic, start, h, w, c):
    """Offset in x of the source row that row r = (image, q) of pass 1 sums."""
    img = r // nrows
    q = r - img * nrows
    if dense:
        y = q
    else:
        taps = 4 if cubic else 2
        y = _clamp(start[q // taps] + q % taps, h)
    return (img * h + y) * w * c


@kernel.device_function
def _column_taps(src_row, xs, w, c):
    """Offsets of the 4 pixels from column xs on (clamped; bilinear reads the first 2)."""
    return (
        src_row + _clamp(xs, w) * c,
        src_row + _clamp(xs + 1, w) * c,
        src_row + _clamp(xs + 2, w) * c,
        src_row + _clamp(xs + 3, w) * c,
    )


@kernel.device_function
def _float_taps(x, ch, taps, cubic, single):
    """Channel ch's sum along x: taps = (4 pixel offsets, their 4 weights)."""
    p0, p1, p2, p3, w0, w1, w2, w3 = taps
    acc = _madd(0.0, x[uidx(p0 + ch)], w0, single)
    acc = _madd(acc, x[uidx(p1 + ch)], w1, single)
    if cubic:
        acc = _madd(acc, x[uidx(p2 + ch)], w2, single)
        acc = _madd(acc, x[uidx(p3 + ch)], w3, single)
    return acc


@kernel.parallel_for
def _rows_float(
    t, rows, x, h, w, oh, ow, c, nrows, dense, start, weight, cubic, single, chunk, nchunk
):
    # pass 1, row r of `rows`: output columns ox (the tables' entry oh + ox), float sums
    r, j0, j1 = _row_span(t, nchunk, chunk, ow)
    src_row = _source_offset(r, nrows, dense, cubic, start, h, w, c)
    for ox in range(j0, j1):
        k = 4 * (oh + ox)
        p0, p1, p2, p3 = _column_taps(src_row, start[oh + ox], w, c)
        w0, w1, w2, w3 = weight[k], weight[k + 1], weight[k + 2], weight[k + 3]
        o = (r * ow + ox) * c
        taps = (p0, p1, p2, p3, w0, w1, w2, w3)
        if c == 3:  # RGB unrolled: a loop of a run-time count costs more than the sums
            rows[uidx(o)] = _float_taps(x, 0, taps, cubic, single)
            rows[uidx(o + 1)] = _float_taps(x, 1, taps, cubic, single)
            rows[uidx(o + 2)] = _float_taps(x, 2, taps, cubic, single)
        else:
            for ch in range(c):
                rows[uidx(o + ch)] = _float_taps(x, ch, taps, cubic, single)


@kernel.parallel_for
def _rows_u8(t, rows, x, h, w, oh, ow, c, nrows, dense, start, fixed_weight, cubic, chunk, nchunk):
    # as _rows_float for uint8: integer sums with the 11-bit weights
    r, j0, j1 = _row_span(t, nchunk, chunk, ow)
    src_row = _source_offset(r, nrows, dense, cubic, start, h, w, c)
    for ox in range(j0, j1):
        k = 4 * (oh + ox)
        p0, p1, p2, p3 = _column_taps(src_row, start[oh + ox], w, c)
        f0, f1 = fixed_weight[k], fixed_weight[k + 1]
        f2, f3 = fixed_weight[k + 2], fixed_weight[k + 3]
        o = (r * ow + ox) * c
        for ch in range(c):
            acc = int(x[uidx(p0 + ch)]) * f0 + int(x[uidx(p1 + ch)]) * f1
            if cubic:
                acc += int(x[uidx(p2 + ch)]) * f2 + int(x[uidx(p3 + ch)]) * f3
            rows[uidx(o + ch)] = acc


@kernel.device_function
def _tap_rows(r, oh, m, nrows, dense, cubic, start, h):
    """Pass 2 for output row r = (image, oy): (oy, offsets of its taps' rows in `rows`;
    bilinear's last two repeat the second)."""
    img = r // oh
    oy = r - img * oh
    taps = 4 if cubic else 2
    first = img * nrows
    r0 = (first + _rows_row(oy, 0, dense, taps, start, h)) * m
    r1 = (first + _rows_row(oy, 1, dense, taps, start, h)) * m
    if not cubic:
        return oy, r0, r1, r1, r1
    r2 = (first + _rows_row(oy, 2, dense, taps, start, h)) * m
    r3 = (first + _rows_row(oy, 3, dense, taps, start, h)) * m
    return oy, r0, r1, r2, r3


@kernel.parallel_for
def _columns_float(
    t, out, rows, h, w, oh, ow, c, nrows, dense, start, weight, cubic, single, add, chunk, nchunk
):
    # pass 2, output row r: values [j0, j1) of its ow * c, the taps' rows summed
    m = ow * c
    r, j0, j1 = _row_span(t, nchunk, chunk, m)
    oy, r0, r1, r2, r3 = _tap_rows(r, oh, m, nrows, dense, cubic, start, h)
    k = 4 * oy
    w0, w1, w2, w3 = weight[k], weight[k + 1], weight[k + 2], weight[k + 3]
    o = r * m
    for j in range(j0, j1):
        acc = _madd(0.0, rows[uidx(r0 + j)], w0, single)
        acc = _madd(acc, rows[uidx(r1 + j)], w1, single)
        if cubic:
            acc = _madd(acc, rows[uidx(r2 + j)], w2, single)
            acc = _madd(acc, rows[uidx(r3 + j)], w3, single)
        store(out, o + j, acc, add)


@kernel.parallel_for
def _columns_u8(
    t, out, rows, h, w, oh, ow, c, nrows, dense, start, fixed_weight, cubic, add, chunk, nchunk
):
    # as _columns_float for uint8, with OpenCV's SIMD rounding. Bilinear: sum of
    # ((row >> 4) * weight) >> 16, then (+ 2) >> 2. Bicubic: 8 values at a time in float32
    # (integer rows times weight / 2048^2, rounded half to even), the row's last len % 8
    # values as ints, (sum + 2^21) >> 22
    m = ow * c
    r, j0, j1 = _row_span(t, nchunk, chunk, m)
    oy, r0, r1, r2, r3 = _tap_rows(r, oh, m, nrows, dense, cubic, start, h)
    k = 4 * oy
    f0, f1, f2, f3 = fixed_weight[k], fixed_weight[k + 1], fixed_weight[k + 2], fixed_weight[k + 3]
    o = r * m
    if not cubic:
        for j in range(j0, j1):
            a0 = (rows[uidx(r0 + j)] >> 4) * f0 >> 16
            a1 = (rows[uidx(r1 + j)] >> 4) * f1 >> 16
            store(out, o + j, _to_u8((a0 + a1 + 2) >> 2), add)
        return
    vec_end = m // 8 * 8
    s0, s1 = np.float32(f0 / 4194304), np.float32(f1 / 4194304)
    s2, s3 = np.float32(f2 / 4194304), np.float32(f3 / 4194304)
    for j in range(j0, min(j1, vec_end)):
        acc = _madd(0.0, float(rows[uidx(r0 + j)]), s0, 1)
        acc = _madd(acc, float(rows[uidx(r1 + j)]), s1, 1)
        acc = _madd(acc, float(rows[uidx(r2 + j)]), s2, 1)
        acc = _madd(acc, float(rows[uidx(r3 + j)]), s3, 1)
        store(out, o + j, _to_u8(_rint(acc)), add)
    for j in range(max(j0, vec_end), j1):
        acc = rows[uidx(r0 + j)] * f0 + rows[uidx(r1 + j)] * f1
        acc += rows[uidx(r2 + j)] * f2 + rows[uidx(r3 + j)] * f3
        store(out, o + j, _to_u8((acc + (1 << 21)) >> 22), add)


def _resize_plan(attrs: NodeAttrs, shape: tuple[int, ...], oh: int, ow: int) -> tuple[int, ...]:
    """(mode, cubic, area_mode): OpenCV's choice of algorithm for this scale."""
    interp = _check_interp(attrs)
    h, w = shape[-3], shape[-2]
    if (oh, ow) == (h, w) or interp == NEAREST:  # same size: OpenCV copies
        return NEAREST, 0, 0
    sy, sx = 1.0 / (oh / h), 1.0 / (ow / w)
    integer = abs(sy - round(sy)) < 2.2e-16 and abs(sx - round(sx)) < 2.2e-16
    if interp == LINEAR and integer and round(sy) == 2 and round(sx) == 2:
        return BOX_FAST, 0, 0  # OpenCV: an exact 2x linear shrink is area's average
    if interp == AREA and sy >= 1 and sx >= 1:
        return (BOX_FAST if integer else BOX), 0, 0
    return LINEAR, int(interp == CUBIC), int(interp == AREA)


def _resize_compute(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    add = req_code("_image_resize", req[0])
    if add == NULL:
        return
    x, out = inputs[0], outputs[0]
    shape = tuple(int(d) for d in x.shape)
    check_image("_image_resize", shape)
    if np.dtype(x.dtype) not in _DTYPES:
        raise NNVMError(
            f"_image_resize: input 'data' must be float32, float64 or uint8, got {x.dtype}"
        )
    oh, ow = (int(d) for d in out.shape[-3:-1])
    if out.size == 0:
        return
    mode, cubic, area_mode = _resize_plan(attrs, shape, oh, ow)
    plan = _Plan(ctx, out, x, add, oh, ow)
    if mode == NEAREST:
        start = plan.scratch(oh + ow, np.int64)
        args: tuple[Any, ...] = (start, oh, plan.iy, plan.ix, plan.h, plan.w)
        run_rows(ctx, "_image_resize", _nearest_tables, oh + ow, *args)
        plan.run(_resize_nearest, plan.pixel_rows, out, x, *plan.geometry, start, add)
    elif mode == BOX_FAST:
        ky, kx = int(plan.sy + 0.5), int(plan.sx + 0.5)
        args = (*plan.geometry, ky, kx, plan.fixed, plan.single, add)
        plan.run(_resize_area_fast, plan.pixel_rows, out, x, *args)
    elif mode == BOX:
        _run_area(plan)
    else:
        _run_taps(plan, cubic, area_mode)


class _Plan:
    """One resize's sizes, OpenCV's scales and the launches' item layout: on the CPU an
    item is a whole output row (its index arithmetic once), on the GPU one pixel or value."""

    def __init__(self, ctx: Any, out: Any, x: Any, add: int, oh: int, ow: int) -> None:
        self.ctx, self.out, self.x, self.add = ctx, out, x, add
        h, w, c = (int(d) for d in x.shape[-3:])
        self.h, self.w, self.c, self.oh, self.ow = h, w, c, oh, ow
        self.geometry = (h, w, oh, ow, c)
        self.images = out.size // (oh * ow * c)
        dtype = np.dtype(x.dtype)
        self.dtype = dtype
        self.fixed = int(dtype == np.uint8)
        self.single = int(dtype != np.float64)  # OpenCV sums float32 and uint8 in float
        # OpenCV's scale is 1 / (out/in), which can differ from in/out in the last bit
        self.sy, self.sx, self.iy, self.ix = 1.0 / (oh / h), 1.0 / (ow / w), oh / h, ow / w
        self.gpu = is_gpu(ctx)

    @property
    def pixel_rows(self) -> int:
        return self.images * self.oh

    def run(self, loop: Any, rows: int, *args: Any, width: int | None = None) -> None:
        """Launch loop over `rows` rows of `width` entries (default: output pixels)."""
        n = self.ow if width is None else width
        chunk, per_row = (1, n) if self.gpu else (n, 1)
        run_rows(self.ctx, "_image_resize", loop, rows * per_row, *args, chunk, per_row)

    def scratch(self, n: int, dtype: Any) -> Any:
        return scratch.empty(self.ctx, (n,), dtype)


def _run_area(plan: _Plan) -> None:
    """Area shrinking by a non-integer scale: tables, then the two separable passes."""
    h, w, oh, ow, c = plan.geometry
    ky, kx = int(plan.sy) + 3, int(plan.sx) + 3  # a box spans at most floor(scale) + 2
    start = plan.scratch(oh + ow, np.int64)
    weight = plan.scratch(oh * ky + ow * kx, np.float64)
    args: tuple[Any, ...] = (start, weight, oh, plan.sy, plan.sx, ky, kx, h, w)
    run_rows(plan.ctx, "_image_resize", _box_tables, oh + ow, *args)
    rows_type = np.float64 if plan.dtype == np.float64 else np.float32
    rows = plan.scratch(plan.images * h * ow * c, rows_type)
    args = (rows, plan.x, w, oh, ow, c, ky, kx, start, weight, plan.single)
    plan.run(_area_rows, plan.images * h, *args)
    args = (plan.out, rows, h, oh, ow, c, ky, start, weight, plan.fixed, plan.single, plan.add)
    plan.run(_area_columns, plan.pixel_rows, *args, width=ow * c)


def _run_taps(plan: _Plan, cubic: int, area_mode: int) -> None:
    """Bilinear and bicubic: tap tables, then the two separable passes."""
    h, w, oh, ow, c = plan.geometry
    tables = oh + ow  # output rows, then output columns
    start = plan.scratch(tables, np.int64)
    weight = plan.scratch(4 * tables, np.float64)
    fixed_weight = plan.scratch(4 * tables, np.int64)
    scales = (plan.sy, plan.sx, plan.iy, plan.ix)
    args: tuple[Any, ...] = (start, weight, fixed_weight, oh, *scales, cubic, area_mode, h, w)
    run_rows(plan.ctx, "_image_resize", _tap_tables, tables, *args)
    taps = 4 if cubic else 2
    dense = int(oh * taps >= h)  # every source row, or each output row's own
    nrows = h if dense else oh * taps
    rows = plan.scratch(plan.images * nrows * ow * c, _ROW_TYPES[plan.dtype])
    layout = (h, w, oh, ow, c, nrows, dense, start)
    if plan.fixed:
        plan.run(_rows_u8, plan.images * nrows, rows, plan.x, *layout, fixed_weight, cubic)
        args = (plan.out, rows, *layout, fixed_weight, cubic, plan.add)
        plan.run(_columns_u8, plan.pixel_rows, *args, width=ow * c)
        return
    args = (rows, plan.x, *layout, weight, cubic, plan.single)
    plan.run(_rows_float, plan.images * nrows, *args)
    args = (plan.out, rows, *layout, weight, cubic, plan.single, plan.add)
    plan.run(_columns_float, plan.pixel_rows, *args, width=ow * c)


(
    register_op("_image_resize")
    .describe(
        "Resize an image NDArray of shape (H x W x C) or (N x H x W x C) to the given size "
        "with OpenCV's rules (interp: 0 nearest, 1 bilinear, 2 bicubic, 3 area); the "
        "output keeps the input's dtype (float32, float64 or uint8)."
    )
    .set_num_inputs(1)
    .set_num_outputs(1)
    .set_attr_parser(ResizeParam)
    .set_attr(FInferShape, _resize_infer)
    .set_attr(FInferType, _resize_type)
    .set_attr(FCompute_cpu, _resize_compute)
    .set_attr(FCompute_gpu, _resize_compute)
    .add_argument("data", "NDArray-or-Symbol", "The input.")
    .add_arguments(ResizeParam.fields())
)
