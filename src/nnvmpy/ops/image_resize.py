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
area to 5e-16), float32 to 3e-7 relative. That rounding copies x86 OpenCV's SIMD
choices; another OpenCV build may differ by one on uint8.
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
from ..kernel import scratch
from ..kernel.launch import NULL, req_code, run_rows, store
from ..param import Parameter, Shape, field
from ..registry import NodeAttrs, register_op

NEAREST, LINEAR, CUBIC, AREA = 0, 1, 2, 3  # OpenCV's interp codes, as MXNet passes them
# kernel modes beyond the codes: area's general box sums, its integer-scale average
BOX, BOX_FAST = 4, 5
_INTERP_NAMES = "0 (nearest), 1 (bilinear), 2 (bicubic) or 3 (area)"
_DTYPES = (np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.uint8))


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
        f = np.float32((d + 1) - (s + 1) * inv)
        f = np.float32(0.0) if f <= 0 else np.float32(f - math.floor(f))
    else:
        f = np.float32((d + 0.5) * scale - 0.5)
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
    """Weight of tap k at fraction f, rounded to float32 as OpenCV's tables are."""
    if not cubic:
        return np.float32(1.0 - f) if k == 0 else f
    # OpenCV's bicubic (a = -0.75, taps at s - 1 .. s + 2), in float32 arithmetic as there
    a = np.float32(-0.75)
    one = np.float32(1.0)
    g = one - f
    u = f + one
    c0 = ((a * u - np.float32(5.0) * a) * u + np.float32(8.0) * a) * u - np.float32(4.0) * a
    c1 = ((a + np.float32(2.0)) * f - (a + np.float32(3.0))) * f * f + one
    c2 = ((a + np.float32(2.0)) * g - (a + np.float32(3.0))) * g * g + one
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
    if d > 0.5 or (d == 0.5 and r % 2 == 1):
        r += 1
    return r


@kernel.device_function
def _to_u8(v):
    return 0 if v < 0 else (255 if v > 255 else v)


@kernel.device_function
def _madd(acc, v, wt, single):
    """acc + v * wt, rounded to float32 at each step when OpenCV computes in float."""
    if single:
        return np.float32(acc + np.float32(v * wt))
    return acc + v * wt


# -- the kernel: one output element per item; a device function per algorithm -----------------


@kernel.device_function
def _box_fast_at(x, base, oy, ox, w, c, ky, kx, fixed, single):
    # an integer scale: the box's plain average; uint8 sums as ints
    acc = 0.0
    isum = 0
    for a in range(ky):
        for b in range(kx):
            v = x[base + ((oy * ky + a) * w + ox * kx + b) * c]
            if fixed:
                isum += int(v)
            else:
                acc = _madd(acc, v, 1.0, single)
    n = ky * kx
    if not fixed:
        return _madd(0.0, acc, np.float32(1.0 / n), single)
    if n == 4:  # OpenCV's SIMD 2x2 average rounds half up
        return float((isum + 2) >> 2)
    return float(_to_u8(_rint(np.float32(isum) * np.float32(1.0 / n))))


@kernel.device_function
def _box_at(x, base, oy, ox, h, w, c, sy, sx, fixed, single):
    # shrinking: rows of weighted column sums (OpenCV's order), partial pixels by overlap
    acc = 0.0
    y0 = max(_iceil(oy * sy) - 1, 0)
    y1 = min(_ifloor(oy * sy + sy), h - 1)
    x0 = max(_iceil(ox * sx) - 1, 0)
    x1 = min(_ifloor(ox * sx + sx), w - 1)
    for y in range(y0, y1 + 1):
        by = _box_weight(y, oy, sy, h)
        if by != 0:
            row = 0.0
            for xx in range(x0, x1 + 1):
                bx = _box_weight(xx, ox, sx, w)
                if bx != 0:
                    row = _madd(row, x[base + (y * w + xx) * c], bx, single)
            acc = _madd(acc, row, by, single)
    return float(_to_u8(_rint(acc))) if fixed else acc


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


@kernel.device_function
def _taps_at(x, base, ty, tx, start, weight, fixed_weight, h, w, c, cubic, fixed, single, vec):
    # bilinear / bicubic (area growing: bilinear with area's fractions) with the tables'
    # entries ty (the output row) and tx (column): rows then columns, as OpenCV sums
    taps = 4 if cubic else 2
    y = start[ty]
    xs = start[tx]
    acc = 0.0
    iacc = 0
    for a in range(taps):
        row_off = base + _clamp(y + a, h) * w * c
        row = 0.0
        irow = 0
        for b in range(taps):
            v = x[row_off + _clamp(xs + b, w) * c]
            if fixed:
                irow += int(v) * fixed_weight[4 * tx + b]
            else:
                row = _madd(row, v, weight[4 * tx + b], single)
        if not fixed:
            acc = _madd(acc, row, weight[4 * ty + a], single)
        elif cubic and vec:  # OpenCV's SIMD: float32 sums of the integer rows / 2048^2
            scaled = np.float32(fixed_weight[4 * ty + a] * (1.0 / 4194304))
            acc = _madd(acc, float(irow), scaled, 1)
        elif cubic:  # the row's tail: integer sums, (sum + 2^21) >> 22
            iacc += irow * fixed_weight[4 * ty + a]
        else:  # OpenCV's SIMD: (((row >> 4) * weight) >> 16) per row, then (sum + 2) >> 2
            iacc += ((irow >> 4) * fixed_weight[4 * ty + a]) >> 16
    if not fixed:
        return acc
    if cubic:
        return float(_to_u8(_rint(acc) if vec else (iacc + (1 << 21)) >> 22))
    return float(_to_u8((iacc + 2) >> 2))


@kernel.parallel_for
def _resize(
    p, out, x, h, w, oh, ow, c, mode, sy, sx, iy, ix, cubic, fixed, single, add, start, wt, fwt
):
    # p -> output pixel (n, oy, ox), all its channels: the index arithmetic once per pixel;
    # sy/sx are the in/out scales, iy/ix their inverses (out/in); start/wt/fwt the taps
    # tables of _tap_tables (rows first, then columns)
    ox = p % ow
    t = p // ow
    oy = t % oh
    base = (t // oh) * h * w * c
    o = p * c
    if mode == 0:  # floor(dst * (1 / (out/in))), computed as OpenCV does
        y = min(_ifloor(oy * (1.0 / iy)), h - 1)
        xx = min(_ifloor(ox * (1.0 / ix)), w - 1)
        src = base + (y * w + xx) * c
        for ch in range(c):
            store(out, o + ch, x[src + ch], add)
    elif mode == 5:
        ky = int(sy + 0.5)
        kx = int(sx + 0.5)
        for ch in range(c):
            v = _box_fast_at(x, base + ch, oy, ox, w, c, ky, kx, fixed, single)
            store(out, o + ch, v, add)
    elif mode == 4:
        for ch in range(c):
            store(out, o + ch, _box_at(x, base + ch, oy, ox, h, w, c, sy, sx, fixed, single), add)
    else:
        vec_end = (ow * c) // 8 * 8  # OpenCV's uint8 bicubic: rows 8 values at a time
        for ch in range(c):
            vec = ox * c + ch < vec_end
            v = _taps_at(
                x, base + ch, oy, oh + ox, start, wt, fwt, h, w, c, cubic, fixed, single, vec
            )
            store(out, o + ch, v, add)


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
    h, w, c = shape[-3:]
    oh, ow = (int(d) for d in out.shape[-3:-1])
    mode, cubic, area_mode = _resize_plan(attrs, shape, oh, ow)
    fixed = int(np.dtype(x.dtype) == np.uint8)
    single = int(np.dtype(x.dtype) != np.float64)  # OpenCV sums float32 and uint8 in float
    # OpenCV's scale is 1 / (out/in), which can differ from in/out in the last bit
    scales = (1.0 / (oh / h), 1.0 / (ow / w), oh / h, ow / w)
    tables = oh + ow if mode == LINEAR else 1  # the tap tables, when taps are used
    start = scratch.empty(ctx, (tables,), np.int64)
    weight = scratch.empty(ctx, (4 * tables,), np.float64)
    fixed_weight = scratch.empty(ctx, (4 * tables,), np.int64)
    if mode == LINEAR:
        table_args = (start, weight, fixed_weight, oh, *scales, cubic, area_mode, h, w)
        run_rows(ctx, "_image_resize", _tap_tables, tables, *table_args)
    args = (h, w, oh, ow, c, mode, *scales, cubic, fixed, single, add)
    run_rows(
        ctx, "_image_resize", _resize, out.size // c, out, x, *args, start, weight, fixed_weight
    )


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
