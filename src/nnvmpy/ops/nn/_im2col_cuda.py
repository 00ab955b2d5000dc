"""GPU Convolution as im2col + GEMM, chunk by chunk of images, in the temp space.

One-body kernels (kernel.parallel_for, so the CPU runs them in tests too) move data
between NCDHW arrays and column matrices; every product goes through ops/matrix.py's
`gemm` (cuBLAS with CuPy, else a tiled numba.cuda kernel; NNVMPY_GPU_TF32=conv puts
these products on TF32, as cuDNN does by default).
For a chunk of m images starting at n0, with P = Do*Ho*Wo output positions, rows =
cg*kd*kh*kw per group and the column entry of row (c, a, i, j), image b, position
p = (v, y, z) being x[n0+b, c, v*sd-pd+a*dd, y*sh-ph+i*dh, z*sw-pw+j*dw], the column
matrix takes one of two layouts (im2col and col2im take its `steps`):

    row layout (groups > 1, and the weight gradient): col (g, rows, m*P), [row, b*P + p]
        forward   tmp (g, Fg, m*P) = W (g, Fg, rows) @ col
                  out[n0+b, f, p] (=|+=) tmp[f, b*P + p] + bias[f]      (rows_to_images)
        backward  dyt (F, m*P)     = dy[n0:n0+m] regrouped                (images_to_rows)
                  dW (g, Fg, rows) (+)= dyt @ col^T   (req_w on the first chunk, then add)
                  dcol             = W^T @ dyt   (into col)  -> col2im -> dx (=|+=)
    image-major (one group): colT (m, rows, P), [b, row, p]
        forward   out[n0:n0+m] (m, F, P) (=|+=) W (F, rows) @ colT     (one batched GEMM)
                  then out += bias[f] once over all chunks                     (add_bias)
        data grad dcolT (m, rows, P) = W^T (rows, F) @ dy[n0:n0+m] (m, F, P)
                  -> col2im (image-major) -> dx (=|+=)         (when dW is not wanted)
    bias grad     db = bias_grad(dy) (a reduction, _conv_cuda.py)

Why two layouts. With images as the batch of the GEMM, images n0..n0+m-1 of an NCHW
array are already the (m, F, P) stack it reads or writes: the one-group forward writes
the output in place (req write or add) and the data gradient reads dy as it is, so
there is no tmp/dyt scratch and no rows_to_images / images_to_rows pass, each of which
read and wrote the whole output once more; the chunk then holds the column matrix only
(rows*P values an image instead of (rows+F)*P: larger chunks in the same budget). The
weight gradient sums over the images, dW = dyt @ col^T, one GEMM with inner size m*P
that needs the row layout; groups > 1 batch the GEMM over the groups, so images cannot be
the batch as well. Both keep the row layout. That product's output is small (F x rows) and
its inner size long (m*P: 802816 for ResNet-18's first layer at batch 64), so `gemm` runs
it as split-K (ops/_gemm_split.py) when the output alone would leave most SMs idle.
Deconvolution (deconvolution.py) runs its forward on `backward` (data gradient only) and
its data gradient on `forward`, so one group takes the image-major layout there too.

A 1x1(x1) convolution with stride 1, no padding and one group (`ConvShape.pointwise`)
needs no column matrix: x[n] is one already, so the forward is one GEMM batched over the
images, out (N, F, P) (=|+=) W (F, C) @ x (N, C, P), then `add_bias`, and the data
gradient dx (N, C, P) (=|+=) W^T @ dy (N, F, P).

col2im is a gather: each work item owns one dx element and sums the column entries that
read it, so there are no atomics and `req` holds per element. Taps in the padding read
(and receive) zero. The chunk holds as many images as fit min(`workspace` MB,
MAX_WORKSPACE_BYTES) of scratch (the column matrix, plus tmp/dyt in the row layout), at
least one.

float16 runs on the same kernels: the copies move it as it is, col2im and rows_to_images
sum in float64 and round once at the store, and gemm accumulates in float32. Between the
passes the column matrix, tmp and a chunk's partial weight gradient are float16 (one
rounding each, as cuDNN's float16 GEMM algorithms keep their workspace).

Which path runs (`use_gemm`): the direct one-body kernels of _conv_cuda.py when

    each group has one input channel (depthwise: groups == C, or a channel multiplier):
        its GEMMs would be (Fg x kd*kh*kw) per group, too thin for the tiled GEMM; or
    the convolution has at most DIRECT_MAX_MACS multiply-adds (or no work at all):
        three launches (im2col, GEMM, scatter) then cost more than the one direct kernel,

im2col + GEMM otherwise. DIRECT_MAX_MACS is a guess from launch overheads (~10-20 us per
numba-cuda launch), not yet measured on hardware.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from ... import kernel
from ...base import OpReqType
from ...kernel import like
from ...kernel.launch import ADD, NULL, WRITE, divmod_index, flat, run_rows, store, uindex
from ...kernel.storage import device_reshape, device_slice
from ._conv_cuda import _tap_hit, geometry, unravel

#: scratch cap in bytes for one GPU convolution's chunk (column matrix, tmp/dyt if any):
#: 1 GiB, MXNet's default `workspace` (1024 MB), so that parameter is the cap that binds.
#: At 256 MiB ResNet-18's batch-64 layer1 took two chunks per pass: a training step made
#: 343 launches instead of 307, with GEMMs of half the width.
MAX_WORKSPACE_BYTES = 1 << 30
#: -0.0 as a NumPy float64: v + like(v, NEG_ZERO) is v for float32 and float64 and v
#: widened to float64 for float16 (in Python, the simulator, as compiled)
NEG_ZERO = np.float64(-0.0)
#: convolutions with at most this many multiply-adds run the direct kernels (see above)
DIRECT_MAX_MACS = 1 << 16
_REQ = {WRITE: OpReqType.kWriteTo, ADD: OpReqType.kAddTo}  # write mode -> gemm's req


def _conv_gemm() -> Any:
    """ops/matrix.gemm for a convolution's products (NNVMPY_GPU_TF32=conv applies)."""
    from nnvmpy.ops.matrix import gemm

    return functools.partial(gemm, conv=True)


def use_gemm(s: Any) -> bool:
    """im2col + GEMM for ConvShape `s`, or False: the direct kernels (module docstring)."""
    if s.groups > 1 and s.cg == 1:
        return False
    macs = s.n * s.f * s.hw * s.rows
    return macs > DIRECT_MAX_MACS


def image_major(s: Any, weight_grad: bool = False) -> bool:
    """The column matrix image-major for ConvShape `s` (module docstring): one group, and
    no weight gradient in the same pass (dW = dyt @ col^T needs the row layout)."""
    return s.groups == 1 and not weight_grad


def chunk_images(s: Any, itemsize: int, images: bool = False) -> int:
    """Images per chunk within the budget: (C*kd*kh*kw + F) * P scratch values each for the
    row layout (column matrix, tmp/dyt), C*kd*kh*kw * P image-major (`images`: no tmp)."""
    budget = min(s.workspace_mb << 20, MAX_WORKSPACE_BYTES)
    per_image = (s.groups * s.rows + (0 if images else s.f)) * s.hw * itemsize
    return max(1, min(s.n, budget // max(1, per_image)))


# -- kernels -----------------------------------------------------------------------------


@kernel.parallel_for
def im2col(
    idx, x, col, n0, m, row_step, image_step,
    groups, n_c, depth, height, width, n_f, do, ho, wo,
    kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw,
):  # fmt: skip
    """The kd*kh*kw column entries of input channel c, image b, position p = (v, y, z),
    idx = (c*m + b)*P + p: col[row*row_step + b*image_step + p] for rows (c, a, i, j);
    steps (m*P, P) for the row layout, (P, rows*P) image-major. A work item divides once
    and walks its taps by additions (one item per entry took ~200 instructions each, most
    of them unravelling the entry's index: the copy was ALU-bound); neighbouring items
    write neighbouring positions."""
    r, v, y, z = unravel(idx, do, ho, wo)
    c, b = divmod_index(r, m)
    dst = c * kd * kh * kw * row_step + b * image_step + (v * ho + y) * wo + z
    plane = ((n0 + b) * n_c + c) * depth
    for a in range(kd):
        u = v * sd - pd + a * dd
        inside_u = u >= 0 and u < depth
        for i in range(kh):
            h = y * sh - ph + i * dh
            inside = inside_u and h >= 0 and h < height
            line = ((plane + u) * height + h) * width
            t = z * sw - pw
            for _ in range(kw):
                # indices known >= 0: unsigned, so no negative-index wraparound per access
                if inside and t >= 0 and t < width:
                    col[uindex(dst)] = x[uindex(line + t)]
                else:
                    col[uindex(dst)] = 0
                dst += row_step
                t += dw


def run_im2col(
    ctx: Any, name: str, s: Any, x: Any, col: Any, n0: int, m: int, images: bool
) -> None:
    """im2col of images n0..n0+m-1 into `col` in either layout: one work item per (input
    channel, image, output position)."""
    run_rows(ctx, name, im2col, s.c * m * s.hw, x, col, n0, m, *steps(s, m, images),
             *geometry(s))  # fmt: skip


@kernel.parallel_for
def col2im(
    idx, col, dx, n0, m, mode, row_step, image_step,
    groups, n_c, depth, height, width, n_f, do, ho, wo,
    kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw,
):  # fmt: skip
    """dx[n0 + b, c, u, h, t] (=|+=) the sum of the col entries im2col copied it to (the
    same steps as im2col's)."""
    r, u, h, t = unravel(idx, depth, height, width)
    b, c = divmod_index(r, n_c)
    base = b * image_step
    acc = np.float64(0.0)
    for a in range(kd):
        v = _tap_hit(u, pd, a, dd, sd, do)
        if v < 0:
            continue
        for i in range(kh):
            y = _tap_hit(h, ph, i, dh, sh, ho)
            if y < 0:
                continue
            for j in range(kw):
                z = _tap_hit(t, pw, j, dw, sw, wo)
                if z >= 0:
                    row = ((c * kd + a) * kh + i) * kw + j
                    acc += col[uindex(row * row_step + base + (v * ho + y) * wo + z)]
    store(dx, n0 * n_c * depth * height * width + idx, acc, mode)


@kernel.parallel_for
def rows_to_images(idx, tmp, out, bias, has_bias, n0, m, n_f, inner, mode):
    """out[n0 + b, f, p] (=|+=) tmp[f, b*inner + p] (+ bias[f]), idx over (b, f, p)."""
    r, p = divmod_index(idx, inner)
    b, f = divmod_index(r, n_f)
    value = tmp[f * m * inner + b * inner + p]
    if has_bias:  # float16 widened: the sum rounded once, at the store; float32 adds in
        # float32 (the same sum: one rounding of an exact float64 sum of two float32s)
        store(out, n0 * n_f * inner + idx, value + like(value, NEG_ZERO) + bias[f], mode)
    else:
        store(out, n0 * n_f * inner + idx, value, mode)


@kernel.parallel_for
def add_bias(idx, out, bias, n_f, inner):
    """out[n, f, p] += bias[f] (after a GEMM that wrote out directly)."""
    r, _ = divmod_index(idx, inner)
    _, f = divmod_index(r, n_f)
    out[idx] += bias[f]


@kernel.parallel_for
def images_to_rows(idx, dy, dyt, n0, m, n_f, inner):
    """dyt[f, b*inner + p] = dy[n0 + b, f, p], idx over (f, b, p)."""
    f, q = divmod_index(idx, m * inner)
    b, p = divmod_index(q, inner)
    dyt[idx] = dy[((n0 + b) * n_f + f) * inner + p]


# -- drivers -----------------------------------------------------------------------------


def _scratch(s: Any, res: Any, dtype: Any, images: bool) -> tuple[int, Any]:
    """(images per chunk, flat scratch for one chunk: the column matrix, and tmp/dyt
    unless image-major)."""
    nb = chunk_images(s, dtype.itemsize, images)
    return nb, res.get_space(((s.groups * s.rows + (0 if images else s.f)) * nb * s.hw,), dtype)


def steps(s: Any, m: int, images: bool) -> tuple[int, int]:
    """im2col's and col2im's (row_step, image_step) for a chunk of m images: the row
    layout (g*rows, m*P), or image-major (m, g*rows, P)."""
    if images:
        return s.hw, s.groups * s.rows * s.hw
    return m * s.hw, s.hw


def _images(a: Any, n0: int, m: int, n_f: int, inner: int) -> Any:
    """Images n0..n0+m-1 of an (N, n_f, inner) C-contiguous array: an (m, n_f, inner) view."""
    size = n_f * inner
    return device_reshape(device_slice(flat(a), n0 * size, (n0 + m) * size), (m, n_f, inner))


def forward(
    ctx: Any, name: str, s: Any, x: Any, w: Any, bias: Any, out: Any, mode: int, res: Any
) -> None:
    """out (=|+=) conv(x, w) + bias for ConvShape s; mode is WRITE or ADD (not NULL)."""
    gemm = _conv_gemm()

    has_bias = bias is not None
    if s.pointwise:
        gemm(ctx, out.reshape(s.n, s.f, s.hw), _REQ[mode], w.reshape(s.f, s.c), False,
             x.reshape(s.n, s.c, s.hw), False)  # fmt: skip
        if has_bias:
            run_rows(ctx, name, add_bias, out.size, out, bias, s.f, s.hw)
        return
    g, rows = s.groups, s.rows
    images = image_major(s)
    nb, space = _scratch(s, res, x.dtype, images)
    w3 = w.reshape(g, s.fg, rows)
    beta = bias if has_bias else w  # a stand-in the kernel never reads
    for n0 in range(0, s.n, nb):
        m = min(nb, s.n - n0)
        cols = m * s.hw
        col = device_slice(space, 0, g * rows * cols)
        run_im2col(ctx, name, s, x, col, n0, m, images)
        if images:  # straight into the output: no tmp, no rows_to_images
            gemm(ctx, _images(out, n0, m, s.f, s.hw), _REQ[mode], w.reshape(s.f, rows), False,
                 col.reshape(m, rows, s.hw), False)  # fmt: skip
            continue
        tmp = device_slice(space, g * rows * cols, (g * rows + s.f) * cols)
        gemm(ctx, tmp.reshape(g, s.fg, cols), OpReqType.kWriteTo, w3, False,
             col.reshape(g, rows, cols), False)  # fmt: skip
        run_rows(ctx, name, rows_to_images, m * s.f * s.hw, tmp, out, beta, has_bias,
                 n0, m, s.f, s.hw, mode)  # fmt: skip
    if images and has_bias:
        run_rows(ctx, name, add_bias, out.size, out, bias, s.f, s.hw)


def backward(
    ctx: Any, name: str, s: Any, dy: Any, x: Any, w: Any, dx: Any, dw: Any, modes: list[int],
    res: Any,
) -> None:  # fmt: skip
    """dx and dw (=|+=) per modes[0], modes[1] (NULL skips one); the bias is the caller's."""
    gemm = _conv_gemm()

    mode_x, mode_w = modes[0], modes[1]
    if s.pointwise and mode_x != NULL:
        gemm(ctx, dx.reshape(s.n, s.c, s.hw), _REQ[mode_x], w.reshape(s.f, s.c), True,
             dy.reshape(s.n, s.f, s.hw), False)  # fmt: skip
        mode_x = NULL
    if mode_x == NULL and mode_w == NULL:
        return
    geo, g, rows = geometry(s), s.groups, s.rows
    images = image_major(s, weight_grad=mode_w != NULL)
    nb, space = _scratch(s, res, dy.dtype, images)
    w3 = w.reshape(g, s.fg, rows)
    dw3 = dw.reshape(g, s.fg, rows) if mode_w != NULL else None
    for n0 in range(0, s.n, nb):
        m = min(nb, s.n - n0)
        cols = m * s.hw
        col = device_slice(space, 0, g * rows * cols)
        dx_size = m * s.c * s.d * s.h * s.w
        if images:  # the data gradient only, straight from dy: no dyt, no images_to_rows
            gemm(ctx, col.reshape(m, rows, s.hw), OpReqType.kWriteTo, w.reshape(s.f, rows), True,
                 _images(dy, n0, m, s.f, s.hw), False)  # fmt: skip
            run_rows(ctx, name, col2im, dx_size, col, dx, n0, m, mode_x, *steps(s, m, True),
                     *geo)  # fmt: skip
            continue
        col3 = col.reshape(g, rows, cols)
        dyt = device_slice(space, g * rows * cols, (g * rows + s.f) * cols)
        dyt3 = dyt.reshape(g, s.fg, cols)
        run_rows(ctx, name, images_to_rows, dyt.size, dy, dyt, n0, m, s.f, s.hw)
        row_steps = steps(s, m, False)
        if dw3 is not None:
            run_im2col(ctx, name, s, x, col, n0, m, False)
            req = OpReqType.kAddTo if n0 > 0 or mode_w == ADD else OpReqType.kWriteTo
            gemm(ctx, dw3, req, dyt3, False, col3, True)
        if mode_x != NULL:
            gemm(ctx, col3, OpReqType.kWriteTo, w3, True, dyt3, False)  # dcol reuses col
            run_rows(ctx, name, col2im, dx_size, col, dx, n0, m, mode_x, *row_steps, *geo)


__all__ = [
    "DIRECT_MAX_MACS",
    "MAX_WORKSPACE_BYTES",
    "add_bias",
    "backward",
    "chunk_images",
    "col2im",
    "forward",
    "im2col",
    "image_major",
    "images_to_rows",
    "rows_to_images",
    "run_im2col",
    "steps",
    "use_gemm",
]
