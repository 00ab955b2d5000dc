"""Deformable convolution (DCNv1 and DCNv2) as sampled columns + GEMM, on both devices.

A convolution whose tap k = (i, j) at output position p = (y, z) of image n reads channel
c (deformable group g = c // (C / DG)) bilinearly at

    hy = y sh - ph + i dh + offset[n, g 2K + 2k, y, z]
    wx = z sw - pw + j dw + offset[n, g 2K + 2k + 1, y, z]

(0 when hy <= -1, hy >= H, wx <= -1 or wx >= W; each of the four corners 0 off the map),
times mask[n, g K + k, y, z] for the modulated op. DCNv1 (no mask) treats the border as
MXNet's DeformableConvolution does: it samples only in [0, H) x [0, W), and a sample past
the last row (column) reads that row (column), its position clamped to H - 1 (W - 1),
with no slope there for the offset's gradient. For a chunk of m images starting at
n0 those samples form the column matrix col[(c, k), (b, p)] (rows c-major, so each
convolution group's rows are contiguous), and

    forward      tmp (G, F/G, m P)   = W (G, F/G, C/G K) @ col (G, C/G K, m P)
                 out[n0 + b, f, p]  (=|+=) tmp[f, b P + p] + bias[f]
    backward     dyt (G, F/G, m P)   = dy[n0:n0+m] regrouped
                 dW (+)= dyt @ col^T                   (the first chunk as req, then add)
                 dcol = W^T @ dyt                      (into col's space)
                 d data              <- dcol x mask, spread with the bilinear weights
                 d offset, d mask    <- dcol against the corners' values (a gather)
                 d bias              = dy summed per filter

Kernels (kernel.parallel_for, one body for both devices; the GEMMs are ops.matrix.gemm:
BLAS on the CPU, cuBLAS or the tiled kernel on the GPU). The column entries and the
offset and mask gradients take one (image, group, tap, position) per item, its sample's
position and weights found once for the group's channels; each item owns what it
writes, so `req` holds per element. The data gradient on the CPU takes a block of
(image, channel) planes per item (`DeformShape.channel_block`), walking every tap and
position that samples them (a sample lands anywhere in its channel's plane), so again no
two items write one pixel. On the GPU that gave only N C items (DCN ResNet-101's res4:
512 threads of ~38k samples each), so there, as in MXNet's CUDA kernel, an item is one
column entry (channel, tap, image, position) adding into d data atomically
(_atomic_grad.py: zeroed once before the first chunk for a write request, float16 in a
float32 copy); atomics add in no fixed order, so the GPU's d data differs from the
CPU's in rounding only. The chunk holds as many images
as fit min(`workspace` MB, MAX_WORKSPACE_BYTES) of scratch, at least one. Positions,
weights and sums are float64 scalars (numba's type for the literals), stored in the
arrays' type; the CPU takes float16 as float32 copies.

This replaced vectorised NumPy in float64 on the host, which a GPU context reached by
copying every array to the host and back: 2 x 64 x 56 x 56, 3 x 3, 64 filters, float32
on two cores, forward 116 -> 11.5 ms, forward and backward 647 -> 38 (DCNv2 128 -> 11.5,
743 -> 38); MXNet 1.9.1's CPU DeformableConvolution took 29 and 367 ms in the same run
(tools/bench_deformable.py), and it has no CPU DCNv2.
"""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext
from typing import Any

from .. import kernel
from ..base import OpReqType
from ..kernel import uindex
from ..kernel.launch import ADD, NULL, WRITE, is_gpu, run_rows, store
from ._atomic_grad import atomic_target
from ._index_kernels import atomic_add
from .nn._conv_cuda import unravel

#: scratch cap in bytes for one chunk of images (column matrix plus tmp/dyt)
MAX_WORKSPACE_BYTES = 256 << 20
_REQ = {WRITE: OpReqType.kWriteTo, ADD: OpReqType.kAddTo}


class DeformShape:
    """The sizes of one deformable convolution and the kernels' geometry arguments."""

    def __init__(self, p: Any, data_shape: tuple[int, ...], out_hw: tuple[int, int], geo: Any):
        (self.kh, self.kw), (self.sh, self.sw), (self.dh, self.dw), (self.ph, self.pw) = geo
        self.n, self.c, self.h, self.w = data_shape
        self.oh, self.ow = out_hw
        self.f, self.groups, self.dg = p.num_filter, p.num_group, p.num_deformable_group
        self.workspace_mb = p.workspace
        self.k = self.kh * self.kw
        self.hw = self.oh * self.ow
        self.rows = self.c // self.groups * self.k  # rows of one group's column matrix

    def args(self) -> tuple[int, ...]:
        """The kernels' 14 geometry arguments."""
        return (
            self.c, self.h, self.w, self.dg, self.kh, self.kw, self.sh, self.sw,
            self.ph, self.pw, self.dh, self.dw, self.oh, self.ow,
        )  # fmt: skip

    def channel_block(self, images: int) -> int:
        """Channels per CPU data-gradient item: enough that each thread gets ~8 items (a
        sample's position and weights are found once per block: 12.3 -> 7 ms for
        2 x 64 x 56 x 56 on two cores)."""
        from nnvmpy import threads

        return max(1, self.c * images // (8 * threads.budget()))

    def chunk(self, itemsize: int) -> int:
        """Images per chunk: (C K + F) P scratch values each, within the budget."""
        budget = min(self.workspace_mb << 20, MAX_WORKSPACE_BYTES)
        per_image = (self.c * self.k + self.f) * self.hw * itemsize
        return max(1, min(self.n, budget // max(1, per_image)))


# -- kernels -----------------------------------------------------------------------------


@kernel.device_function
def tap_position(offset, at, hw, y, z, i, j, sh, sw, ph, pw, dh, dw):
    """(hy, wx): where tap (i, j) of output position (y, z) samples, its y offset at
    offset[at] and its x offset P = OH OW further on."""
    hy = y * sh - ph + i * dh + offset[uindex(at)]
    wx = z * sw - pw + j * dw + offset[uindex(at + hw)]
    return hy, wx


@kernel.device_function
def corners(hy, wx, height, width, v1):
    """(y0, x0, ly, lx, top, bottom, left, right) of a sample at (hy, wx) inside (-1, H) x
    (-1, W): its top-left pixel, fractional parts, and which of its rows (y0, y0 + 1) and
    columns (x0, x0 + 1) lie on the map (a corner off the map counts 0). DCNv1 (`v1`)
    clamps a sample past the last row (column) to it: fraction 0, the next row off."""
    y0 = int(hy + 1.0) - 1  # floor, as hy + 1 > 0
    x0 = int(wx + 1.0) - 1
    ly = hy - y0
    lx = wx - x0
    if v1 and y0 >= height - 1:
        y0 = height - 1
        ly = 0.0
    if v1 and x0 >= width - 1:
        x0 = width - 1
        lx = 0.0
    return y0, x0, ly, lx, y0 >= 0, y0 + 1 < height, x0 >= 0, x0 + 1 < width


@kernel.device_function
def corner_values(x, at, width, top, bottom, left, right):
    """(v00, v01, v10, v11): the pixels at `at` (the top-left corner's flat index), to its
    right, below and diagonally, each 0 when off the map."""
    v00 = x[uindex(at)] if top and left else 0.0
    v01 = x[uindex(at + 1)] if top and right else 0.0
    v10 = x[uindex(at + width)] if bottom and left else 0.0
    v11 = x[uindex(at + width + 1)] if bottom and right else 0.0
    return v00, v01, v10, v11


@kernel.device_function
def blend(v00, v01, v10, v11, ly, lx):
    """The bilinear sample of four corner values at fractions (ly, lx) from the first."""
    return (1.0 - ly) * ((1.0 - lx) * v00 + lx * v01) + ly * ((1.0 - lx) * v10 + lx * v11)


@kernel.device_function
def outside(hy, wx, height, width, v1):
    """A sample at (hy, wx) counts 0 (and has no gradient) beyond one pixel off the map
    (DCNv1, `v1`: anywhere off it), or at NaN (an offset of NaN: MXNet's in-range test
    fails for it too), so no index is ever made from NaN."""
    if v1:
        return not (hy >= 0.0 and hy < height and wx >= 0.0 and wx < width)
    return not (hy > -1.0 and hy < height and wx > -1.0 and wx < width)


@kernel.parallel_for
def deform_im2col(
    item, x, offset, mask, has_mask, col, n0, m,
    n_c, height, width, dg, kh, kw, sh, sw, ph, pw, dh, dw, oh, ow,
):  # fmt: skip
    """Tap k of position p of image n0 + b for every channel c of group g, item = ((b DG
    + g) K + k) P + p: col[(c, k), (b, p)], the sample (times the tap's mask value with
    `has_mask`), its position and weights found once for the group's channels. Taps are
    indexed per (image, group, tap) j = (n DG + g) K + k: offsets at offset[2 j P + p]
    (y) and P further on (x), mask values at mask[j P + p]."""
    hw = oh * ow
    k_n = kh * kw
    b, g, k, p = unravel(item, dg, k_n, hw)
    n = n0 + b
    j = (n * dg + g) * k_n + k
    hy, wx = tap_position(offset, 2 * j * hw + p, hw, p // ow, p % ow, k // kw, k % kw,
                          sh, sw, ph, pw, dh, dw)  # fmt: skip
    per_group = n_c // dg
    out = ((g * per_group * k_n + k) * m + b) * hw + p  # col[(c, k), (b, p)] for c = g Cg
    step = k_n * m * hw  # to the next channel's row
    if outside(hy, wx, height, width, not has_mask):
        for cc in range(per_group):
            col[uindex(out + cc * step)] = 0
        return
    scale = mask[uindex(j * hw + p)] if has_mask else 1.0
    y0, x0, ly, lx, top, bottom, left, right = corners(hy, wx, height, width, not has_mask)
    for cc in range(per_group):
        at = ((n * n_c + g * per_group + cc) * height + y0) * width + x0
        v00, v01, v10, v11 = corner_values(x, at, width, top, bottom, left, right)
        col[uindex(out + cc * step)] = scale * blend(v00, v01, v10, v11, ly, lx)


@kernel.parallel_for
def deform_col2im(
    item, dcol, offset, mask, has_mask, dx, n0, m, mode, block,
    n_c, height, width, dg, kh, kw, sh, sw, ph, pw, dh, dw, oh, ow,
):  # fmt: skip
    """Planes (n0 + b, c) of dx for the `block` channels c of one deformable group that
    item = (b DG + g) B + q (B blocks per group) takes: every tap and position spreads each
    channel's column gradient (times the tap's mask value) onto its sample's pixels with
    the bilinear weights, the sample's position and weights found once for the block.
    Only this item writes those planes (the CPU's; the GPU's is deform_col2im_atomic)."""
    per_group = n_c // dg
    blocks = (per_group + block - 1) // block
    q = item % blocks
    t = item // blocks
    g = t % dg
    b = t // dg
    n = n0 + b
    c0 = g * per_group + q * block
    c1 = min(c0 + block, (g + 1) * per_group)
    plane = height * width
    if mode == WRITE:
        for at in range((n * n_c + c0) * plane, (n * n_c + c1) * plane):
            dx[uindex(at)] = 0
    hw = oh * ow
    k_n = kh * kw
    j0 = (n * dg + g) * k_n
    step = k_n * m * hw  # dcol's next channel row
    for i in range(kh):
        for kj in range(kw):
            k = i * kw + kj
            row = ((c0 * k_n + k) * m + b) * hw
            for y in range(oh):
                for z in range(ow):
                    p = y * ow + z
                    at = 2 * (j0 + k) * hw + p
                    hy, wx = tap_position(offset, at, hw, y, z, i, kj, sh, sw, ph, pw, dh, dw)
                    if outside(hy, wx, height, width, not has_mask):
                        continue
                    scale = mask[uindex((j0 + k) * hw + p)] if has_mask else 1.0
                    y0, x0, ly, lx, top, bottom, left, right = corners(
                        hy, wx, height, width, not has_mask
                    )
                    w00 = scale * (1.0 - ly) * (1.0 - lx)
                    w01 = scale * (1.0 - ly) * lx
                    w10 = scale * ly * (1.0 - lx)
                    w11 = scale * ly * lx
                    for c in range(c0, c1):
                        d = dcol[uindex(row + (c - c0) * step + p)]
                        at = ((n * n_c + c) * height + y0) * width + x0
                        if top and left:
                            dx[uindex(at)] += d * w00
                        if top and right:
                            dx[uindex(at + 1)] += d * w01
                        if bottom and left:
                            dx[uindex(at + width)] += d * w10
                        if bottom and right:
                            dx[uindex(at + width + 1)] += d * w11


@kernel.parallel_for
def deform_col2im_atomic(
    item, dcol, offset, mask, has_mask, dx, n0, m,
    n_c, height, width, dg, kh, kw, sh, sw, ph, pw, dh, dw, oh, ow,
):  # fmt: skip
    """Column entry item = ((c K + k) m + b) P + p (the GPU's data gradient): its column
    gradient (times the tap's mask value) added onto its sample's pixels of plane
    (n0 + b, c) with the bilinear weights, atomically (the samples of many entries share
    pixels). dx starts zeroed for a write request (atomic_target)."""
    hw = oh * ow
    k_n = kh * kw
    c, k, b, p = unravel(item, k_n, m, hw)
    n = n0 + b
    j = (n * dg + c // (n_c // dg)) * k_n + k
    hy, wx = tap_position(offset, 2 * j * hw + p, hw, p // ow, p % ow, k // kw, k % kw,
                          sh, sw, ph, pw, dh, dw)  # fmt: skip
    if outside(hy, wx, height, width, not has_mask):
        return
    scale = mask[uindex(j * hw + p)] if has_mask else 1.0
    d = dcol[uindex(item)] * scale
    y0, x0, ly, lx, top, bottom, left, right = corners(hy, wx, height, width, not has_mask)
    at = ((n * n_c + c) * height + y0) * width + x0
    if top and left:
        atomic_add(dx, at, d * (1.0 - ly) * (1.0 - lx))
    if top and right:
        atomic_add(dx, at + 1, d * (1.0 - ly) * lx)
    if bottom and left:
        atomic_add(dx, at + width, d * ly * (1.0 - lx))
    if bottom and right:
        atomic_add(dx, at + width + 1, d * ly * lx)


@kernel.parallel_for
def deform_coord_grad(
    item, dcol, x, offset, mask, has_mask, d_offset, mode_offset, d_mask, mode_mask, n0, m,
    n_c, height, width, dg, kh, kw, sh, sw, ph, pw, dh, dw, oh, ow,
):  # fmt: skip
    """The offset pair (and mask value) of item = ((b DG + g) K + k) P + p: the column
    gradients of the group's channels against the derivatives of their samples in y and
    x (and the samples themselves, for the mask). 0 for a sample off the map."""
    hw = oh * ow
    k_n = kh * kw
    b, g, k, p = unravel(item, dg, k_n, hw)
    n = n0 + b
    j = (n * dg + g) * k_n + k
    at = 2 * j * hw + p
    hy, wx = tap_position(offset, at, hw, p // ow, p % ow, k // kw, k % kw, sh, sw, ph, pw, dh, dw)
    gy = 0.0
    gx = 0.0
    gm = 0.0
    if not outside(hy, wx, height, width, not has_mask):
        y0, x0, ly, lx, top, bottom, left, right = corners(hy, wx, height, width, not has_mask)
        per_group = n_c // dg
        for cc in range(per_group):
            c = g * per_group + cc
            d = dcol[uindex(((c * k_n + k) * m + b) * hw + p)]
            v00, v01, v10, v11 = corner_values(
                x, ((n * n_c + c) * height + y0) * width + x0, width, top, bottom, left, right
            )
            if has_mask or bottom:  # DCNv1 clamped to the last row: no slope in y
                gy += d * ((1.0 - lx) * (v10 - v00) + lx * (v11 - v01))
            if has_mask or right:
                gx += d * ((1.0 - ly) * (v01 - v00) + ly * (v11 - v10))
            gm += d * blend(v00, v01, v10, v11, ly, lx)
    if has_mask:
        scale = mask[uindex(j * hw + p)]
        gy *= scale
        gx *= scale
        store(d_mask, j * hw + p, gm, mode_mask)
    store(d_offset, at, gy, mode_offset)
    store(d_offset, at + hw, gx, mode_offset)


# -- drivers -----------------------------------------------------------------------------


def forward(
    ctx: Any, name: str, s: DeformShape, x: Any, offset: Any, mask: Any, w: Any, bias: Any,
    out: Any, mode: int, res: Any,
) -> None:  # fmt: skip
    """out (=|+=) the deformable convolution (mask None: DCNv1); mode WRITE or ADD."""
    from nnvmpy.ops.matrix import gemm
    from nnvmpy.ops.nn._im2col_cuda import rows_to_images

    g, fg, rows = s.groups, s.f // s.groups, s.rows
    nb = s.chunk(x.dtype.itemsize)
    space = res.get_space(((s.c * s.k + s.f) * nb * s.hw,), x.dtype)
    w3 = w.reshape(g, fg, rows)
    masked = (mask if mask is not None else offset, mask is not None)  # a stand-in if none
    beta = (bias if bias is not None else w, bias is not None)
    for n0 in range(0, s.n, nb):
        m = min(nb, s.n - n0)
        cols = m * s.hw
        col = space[: s.c * s.k * cols]
        tmp = space[s.c * s.k * cols : (s.c * s.k + s.f) * cols]
        run_rows(ctx, name, deform_im2col, m * s.dg * s.k * s.hw, x, offset, *masked, col, n0, m,
                 *s.args())  # fmt: skip
        gemm(ctx, tmp.reshape(g, fg, cols), OpReqType.kWriteTo, w3, False,
             col.reshape(g, rows, cols), False)  # fmt: skip
        run_rows(ctx, name, rows_to_images, m * s.f * s.hw, tmp, out, *beta, n0, m, s.f, s.hw, mode)


def backward(
    ctx: Any, name: str, s: DeformShape, dy: Any, x: Any, offset: Any, mask: Any, w: Any,
    grads: list[Any], modes: list[int], res: Any,
) -> None:  # fmt: skip
    """grads = [d data, d offset, d mask (None for DCNv1), d weight, d bias (or None)]
    (=|+=) as modes say (NULL skips one)."""
    from nnvmpy.ops.matrix import gemm
    from nnvmpy.ops.nn._conv_cuda import bias_grad
    from nnvmpy.ops.nn._im2col_cuda import images_to_rows

    dx, d_offset, d_mask, dw, db = grads
    mode_x, mode_offset, mode_mask, mode_w, mode_b = modes
    if db is not None and mode_b != NULL:
        bias_grad(ctx, name, dy, db, s.n, s.f, s.hw, mode_b)
    if d_mask is None:
        mode_mask, d_mask = NULL, d_offset  # a stand-in the kernel never writes
    coords = mode_offset != NULL or mode_mask != NULL
    if mode_x == NULL and mode_w == NULL and not coords:
        return
    g, fg, rows = s.groups, s.f // s.groups, s.rows
    nb = s.chunk(dy.dtype.itemsize)
    space = res.get_space(((s.c * s.k + s.f) * nb * s.hw,), dy.dtype)
    w3 = w.reshape(g, fg, rows)
    masked = (mask if mask is not None else offset, mask is not None)
    geo = s.args()
    with data_grad_target(ctx, dx, mode_x) as dx_t:
        for n0 in range(0, s.n, nb):
            m = min(nb, s.n - n0)
            cols = m * s.hw
            col = space[: s.c * s.k * cols]
            col3 = col.reshape(g, rows, cols)
            dyt = space[s.c * s.k * cols : (s.c * s.k + s.f) * cols]
            dyt3 = dyt.reshape(g, fg, cols)
            run_rows(ctx, name, images_to_rows, dyt.size, dy, dyt, n0, m, s.f, s.hw)
            if mode_w != NULL:
                run_rows(ctx, name, deform_im2col, m * s.dg * s.k * s.hw, x, offset, *masked,
                         col, n0, m, *geo)  # fmt: skip
                req = OpReqType.kAddTo if n0 > 0 or mode_w == ADD else OpReqType.kWriteTo
                gemm(ctx, dw.reshape(g, fg, rows), req, dyt3, False, col3, True)
            if mode_x == NULL and not coords:
                continue
            gemm(ctx, col3, OpReqType.kWriteTo, w3, True, dyt3, False)  # dcol, in col's space
            if mode_x != NULL:
                data_grad(ctx, name, s, col, offset, masked, dx_t, n0, m, mode_x)
            if coords:
                run_rows(ctx, name, deform_coord_grad, m * s.dg * s.k * s.hw, col, x, offset,
                         *masked, d_offset, mode_offset, d_mask, mode_mask, n0, m,
                         *geo)  # fmt: skip


def data_grad_target(ctx: Any, dx: Any, mode: int) -> AbstractContextManager[Any]:
    """dx as data_grad takes it for every chunk: on the GPU the atomic adds' target, zeroed
    once for a write request (so that later chunks add to earlier ones), float16 as a
    float32 copy; on the CPU (whose items own their planes) dx itself."""
    if mode == NULL or not is_gpu(ctx) or dx.size == 0:
        return nullcontext(dx)
    return atomic_target(ctx, dx, mode)


def data_grad(
    ctx: Any, name: str, s: DeformShape, dcol: Any, offset: Any, masked: tuple[Any, bool],
    dx: Any, n0: int, m: int, mode: int,
) -> None:  # fmt: skip
    """dx (=|+=) the data gradient of images n0 .. n0 + m from their column gradient dcol.
    The GPU takes an item per column entry, adding atomically into data_grad_target's
    target (per plane it had N C items, 512 for DCN ResNet-101's res4, each ~38k samples);
    the CPU a block of planes per item, the mode applying to the chunk's own planes."""
    if is_gpu(ctx):
        run_rows(ctx, name, deform_col2im_atomic, dcol.size, dcol, offset, *masked, dx, n0, m,
                 *s.args())  # fmt: skip
        return
    block = s.channel_block(m)
    blocks = m * s.dg * -(-s.c // s.dg // block)
    run_rows(ctx, name, deform_col2im, blocks, dcol, offset, *masked, dx, n0, m, mode, block,
             *s.args())  # fmt: skip


__all__ = [
    "MAX_WORKSPACE_BYTES",
    "DeformShape",
    "backward",
    "deform_col2im",
    "deform_col2im_atomic",
    "deform_coord_grad",
    "deform_im2col",
    "forward",
]
