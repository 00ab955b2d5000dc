"""GPU Convolution as im2col + GEMM, chunk by chunk of images, in the temp space.

One-body kernels (kernel.parallel_for, so the CPU runs them in tests too) move data
between NCDHW arrays and column matrices; every product goes through ops/matrix.py's
`gemm` (today a tiled numba.cuda kernel, later cuBLAS: one place to plug it in).
For a chunk of m images starting at n0, with P = Do*Ho*Wo output positions and the
column matrix batched over the g groups (rows = cg*kd*kh*kw per group):

    col[(c, a, i, j), (b, v, y, z)] = x[n0+b, c, v*sd-pd+a*dd, y*sh-ph+i*dh, z*sw-pw+j*dw]
    forward      tmp (g, Fg, m*P)  = W (g, Fg, rows) @ col (g, rows, m*P)
                 out[n0+b, f, p]  (=|+=) tmp[f, b*P + p] + bias[f]       (rows_to_images)
    backward     dyt (F, m*P)      = dy[n0:n0+m] regrouped                 (images_to_rows)
                 dW (g, Fg, rows) (+)= dyt @ col^T        (req_w on the first chunk, then add)
                 dcol              = W^T @ dyt   (into col)  -> col2im -> dx (=|+=)
                 db                = bias_grad(dy) (a reduction, _conv_cuda.py)

A 1x1(x1) convolution with stride 1, no padding and one group (`ConvShape.pointwise`)
needs no column matrix: x[n] is one already, so the forward is one GEMM batched over the
images, out (N, F, P) (=|+=) W (F, C) @ x (N, C, P), then `add_bias`, and the data
gradient dx (N, C, P) (=|+=) W^T @ dy (N, F, P).

col2im is a gather: each work item owns one dx element and sums the column entries that
read it, so there are no atomics and `req` holds per element. Taps in the padding read
(and receive) zero. The chunk holds as many images as fit min(`workspace` MB,
MAX_WORKSPACE_BYTES) of scratch (column matrix plus tmp/dyt), at least one.

Which path runs (`use_gemm`): the direct one-body kernels of _conv_cuda.py when

    each group has one input channel (depthwise: groups == C, or a channel multiplier):
        its GEMMs would be (Fg x kd*kh*kw) per group, too thin for the tiled GEMM; or
    the convolution has at most DIRECT_MAX_MACS multiply-adds (or no work at all):
        three launches (im2col, GEMM, scatter) then cost more than the one direct kernel,

im2col + GEMM otherwise. DIRECT_MAX_MACS is a guess from launch overheads (~10-20 us per
numba-cuda launch), not yet measured on hardware.
"""

from __future__ import annotations

from typing import Any

from ... import kernel
from ...base import OpReqType
from ...kernel.launch import ADD, NULL, WRITE, run_rows, store
from ._conv_cuda import _tap_hit, geometry, unravel

#: scratch cap in bytes for one GPU convolution's chunk (column matrix plus tmp/dyt)
MAX_WORKSPACE_BYTES = 256 << 20
#: convolutions with at most this many multiply-adds run the direct kernels (see above)
DIRECT_MAX_MACS = 1 << 16
_REQ = {WRITE: OpReqType.kWriteTo, ADD: OpReqType.kAddTo}  # write mode -> gemm's req


def use_gemm(s: Any) -> bool:
    """im2col + GEMM for ConvShape `s`, or False: the direct kernels (module docstring)."""
    if s.groups > 1 and s.cg == 1:
        return False
    macs = s.n * s.f * s.hw * s.rows
    return macs > DIRECT_MAX_MACS


def chunk_images(s: Any, itemsize: int) -> int:
    """Images per chunk: (C*kd*kh*kw + F) * P scratch values each, within the budget."""
    budget = min(s.workspace_mb << 20, MAX_WORKSPACE_BYTES)
    per_image = (s.groups * s.rows + s.f) * s.hw * itemsize
    return max(1, min(s.n, budget // max(1, per_image)))


# -- kernels -----------------------------------------------------------------------------


@kernel.parallel_for
def im2col(
    idx, x, col, n0, m,
    groups, n_c, depth, height, width, n_f, do, ho, wo,
    kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw,
):  # fmt: skip
    """col[row, q] for idx = row * m*P + q: rows (c, a, i, j), columns (b, v, y, z)."""
    cols = m * do * ho * wo
    b, v, y, z = unravel(idx % cols, do, ho, wo)
    c, a, i, j = unravel(idx // cols, kd, kh, kw)
    u = v * sd - pd + a * dd
    h = y * sh - ph + i * dh
    t = z * sw - pw + j * dw
    if u >= 0 and u < depth and h >= 0 and h < height and t >= 0 and t < width:
        col[idx] = x[((((n0 + b) * n_c + c) * depth + u) * height + h) * width + t]
    else:
        col[idx] = 0


@kernel.parallel_for
def col2im(
    idx, col, dx, n0, m, mode,
    groups, n_c, depth, height, width, n_f, do, ho, wo,
    kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw,
):  # fmt: skip
    """dx[n0 + b, c, u, h, t] (=|+=) the sum of the col entries im2col copied it to."""
    r, u, h, t = unravel(idx, depth, height, width)
    c = r % n_c
    b = r // n_c
    cols = m * do * ho * wo
    acc = 0.0
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
                    acc += col[row * cols + ((b * do + v) * ho + y) * wo + z]
    store(dx, n0 * n_c * depth * height * width + idx, acc, mode)


@kernel.parallel_for
def rows_to_images(idx, tmp, out, bias, has_bias, n0, m, n_f, inner, mode):
    """out[n0 + b, f, p] (=|+=) tmp[f, b*inner + p] (+ bias[f]), idx over (b, f, p)."""
    p = idx % inner
    r = idx // inner
    f = r % n_f
    b = r // n_f
    value = tmp[f * m * inner + b * inner + p]
    if has_bias:
        value += bias[f]
    store(out, n0 * n_f * inner + idx, value, mode)


@kernel.parallel_for
def add_bias(idx, out, bias, n_f, inner):
    """out[n, f, p] += bias[f] (after a GEMM that wrote out directly)."""
    out[idx] += bias[(idx // inner) % n_f]


@kernel.parallel_for
def images_to_rows(idx, dy, dyt, n0, m, n_f, inner):
    """dyt[f, b*inner + p] = dy[n0 + b, f, p], idx over (f, b, p)."""
    q = idx % (m * inner)
    f = idx // (m * inner)
    b = q // inner
    p = q % inner
    dyt[idx] = dy[((n0 + b) * n_f + f) * inner + p]


# -- drivers -----------------------------------------------------------------------------


def _scratch(s: Any, res: Any, dtype: Any) -> tuple[int, Any]:
    """(images per chunk, flat scratch for the column matrix and tmp/dyt of one chunk)."""
    nb = chunk_images(s, dtype.itemsize)
    return nb, res.get_space(((s.groups * s.rows + s.f) * nb * s.hw,), dtype)


def forward(
    ctx: Any, name: str, s: Any, x: Any, w: Any, bias: Any, out: Any, mode: int, res: Any
) -> None:
    """out (=|+=) conv(x, w) + bias for ConvShape s; mode is WRITE or ADD (not NULL)."""
    from nnvmpy.ops.matrix import gemm

    has_bias = bias is not None
    if s.pointwise:
        gemm(ctx, out.reshape(s.n, s.f, s.hw), _REQ[mode], w.reshape(s.f, s.c), False,
             x.reshape(s.n, s.c, s.hw), False)  # fmt: skip
        if has_bias:
            run_rows(ctx, name, add_bias, out.size, out, bias, s.f, s.hw)
        return
    geo, g, rows = geometry(s), s.groups, s.rows
    nb, space = _scratch(s, res, x.dtype)
    w3 = w.reshape(g, s.fg, rows)
    beta = bias if has_bias else w  # a stand-in the kernel never reads
    for n0 in range(0, s.n, nb):
        m = min(nb, s.n - n0)
        cols = m * s.hw
        col = space[: g * rows * cols]
        tmp = space[g * rows * cols : (g * rows + s.f) * cols]
        run_rows(ctx, name, im2col, col.size, x, col, n0, m, *geo)
        gemm(ctx, tmp.reshape(g, s.fg, cols), OpReqType.kWriteTo, w3, False,
             col.reshape(g, rows, cols), False)  # fmt: skip
        run_rows(ctx, name, rows_to_images, m * s.f * s.hw, tmp, out, beta, has_bias,
                 n0, m, s.f, s.hw, mode)  # fmt: skip


def backward(
    ctx: Any, name: str, s: Any, dy: Any, x: Any, w: Any, dx: Any, dw: Any, modes: list[int],
    res: Any,
) -> None:  # fmt: skip
    """dx and dw (=|+=) per modes[0], modes[1] (NULL skips one); the bias is the caller's."""
    from nnvmpy.ops.matrix import gemm

    mode_x, mode_w = modes[0], modes[1]
    if s.pointwise and mode_x != NULL:
        gemm(ctx, dx.reshape(s.n, s.c, s.hw), _REQ[mode_x], w.reshape(s.f, s.c), True,
             dy.reshape(s.n, s.f, s.hw), False)  # fmt: skip
        mode_x = NULL
    if mode_x == NULL and mode_w == NULL:
        return
    geo, g, rows = geometry(s), s.groups, s.rows
    nb, space = _scratch(s, res, dy.dtype)
    w3 = w.reshape(g, s.fg, rows)
    dw3 = dw.reshape(g, s.fg, rows) if mode_w != NULL else None
    for n0 in range(0, s.n, nb):
        m = min(nb, s.n - n0)
        cols = m * s.hw
        col = space[: g * rows * cols]
        col3 = col.reshape(g, rows, cols)
        dyt = space[g * rows * cols : (g * rows + s.f) * cols]
        dyt3 = dyt.reshape(g, s.fg, cols)
        run_rows(ctx, name, images_to_rows, dyt.size, dy, dyt, n0, m, s.f, s.hw)
        if dw3 is not None:
            run_rows(ctx, name, im2col, col.size, x, col, n0, m, *geo)
            req = OpReqType.kAddTo if n0 > 0 or mode_w == ADD else OpReqType.kWriteTo
            gemm(ctx, dw3, req, dyt3, False, col3, True)
        if mode_x != NULL:
            gemm(ctx, col3, OpReqType.kWriteTo, w3, True, dyt3, False)  # dcol reuses col
            size = m * s.c * s.d * s.h * s.w
            run_rows(ctx, name, col2im, size, col, dx, n0, m, mode_x, *geo)


__all__ = [
    "DIRECT_MAX_MACS",
    "MAX_WORKSPACE_BYTES",
    "add_bias",
    "backward",
    "chunk_images",
    "col2im",
    "forward",
    "im2col",
    "images_to_rows",
    "rows_to_images",
    "use_gemm",
]
