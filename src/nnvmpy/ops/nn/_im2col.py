"""Numba CPU kernels for Convolution: im2col / col2im, the NCHW scatter, direct loops.

Column layout, for images n0..n0+nb-1 and channels c0..c0+cg-1 of x (N, C, H, W):

    col[(c*kh + i)*kw + j, b*Ho*Wo + y*Wo + z] = x[n0+b, c0+c, y*sh - ph + i*dh, z*sw - pw + j*dw]

(zero where the index falls in the padding), so that W_g (Fg, cg*kh*kw) @ col is the
convolution of the chunk, laid out (Fg, nb*Ho*Wo). A 3-D convolution (x viewed as
(N, C*D, H, W)) fills its (cg*kd*kh*kw, nb*Do*Ho*Wo) column matrix with one call per
depth tap a and output depth v: the trailing arguments place that 2-D block, reading
depth slice u = v*sd - pd + a*dd (channel c's plane (c0+c)*D + u, c_step = D), at rows
c*row_step + row0 + i*kw + j (row_step = kd*kh*kw, row0 = a*kh*kw) and columns
b*img_cols + col0 + y*Wo + z (img_cols = Do*Ho*Wo, col0 = v*Ho*Wo); a 2-D convolution
passes c_step 1, u 0, row0 0, row_step kh*kw, col0 0, img_cols Ho*Wo (`planar_args`).
_im2col also takes tap_step, the row distance of two taps (1 above): the bfloat16 path
(_conv_bf16.py) lays rows out tap-major, (i*kw + j)*cg + c (row_step 1, tap_step cg).
Kernels take offsets instead of sliced views so every call has the same (contiguous)
signature and compiles once per dtype.
The depthwise convolution has its own kernels (_depthwise_cpu.py).

This module imports numba, so the op modules import it on their first CPU launch only
(`import nnvmpy` stays free of numba).
"""

from __future__ import annotations

import numpy as np
from numba import prange

from ... import kernel
from ...kernel.cpu import cached_njit
from ._uindex import u as _u


def planar_args(kh: int, kw: int, hw: int) -> tuple[int, ...]:
    """The trailing _im2col/_col2im arguments of a 2-D convolution (see above)."""
    return (1, 0, 0, kh * kw, 0, hw)


@cached_njit(nogil=True)
def _valid_range(pad_off, step, size, out):
    # [lo, hi) of the output positions z with 0 <= z*step - pad_off < size
    lo = max(0, -((-pad_off) // step))
    hi = min(out, (size - 1 + pad_off) // step + 1)
    return lo, max(lo, hi)


# im2col, col2im and the copies around the GEMMs are serial on purpose: numba's OpenMP
# workers spin after a parallel region, and on a 2-core machine they then fight
# OpenBLAS's threads for the cores during the very next GEMM (time-slice sized stalls,
# measured at 2-3x the whole convolution). OpenBLAS is the one thread pool here.


# Both kernels work on the flat (contiguous) arrays: x, dx (N, C, H, W) and col (rows,
# columns) with explicit offsets and unsigned indices, so the short inner loops over an
# output row compile to plain (vectorisable) copies.


@kernel.cpu_kernel(parallel=False)
def _im2col(
    x, col, n0, nb, c0, cg, kh, kw, sh, sw, ph, pw, dh, dw, ho, wo,
    c_step, u, row0, row_step, col0, img_cols, tap_step,
):  # fmt: skip
    # x is (N, C*D, H, W); image b's channel c reads its depth slice u: plane (c0+c)*D + u
    n_c, height, width = x.shape[1], x.shape[2], x.shape[3]
    hw = ho * wo
    ncols = col.shape[1]
    xf = x.reshape(-1)
    cf = col.reshape(-1)
    for t in range(nb * cg):
        b = t // cg
        c = t % cg
        plane = ((n0 + b) * n_c + (c0 + c) * c_step + u) * height * width
        base = b * img_cols + col0
        for i in range(kh):
            y_lo, y_hi = _valid_range(ph - i * dh, sh, height, ho)
            for j in range(kw):
                z_lo, z_hi = _valid_range(pw - j * dw, sw, width, wo)
                row = (c * row_step + row0 + (i * kw + j) * tap_step) * ncols + base
                for p in range(y_lo * wo):
                    cf[_u(row + p)] = 0
                for p in range(y_hi * wo, hw):
                    cf[_u(row + p)] = 0
                for y in range(y_lo, y_hi):
                    src = plane + (y * sh - ph + i * dh) * width + j * dw - pw
                    dst = row + y * wo
                    for z in range(z_lo):
                        cf[_u(dst + z)] = 0
                    if sw == 1:
                        for z in range(z_lo, z_hi):
                            cf[_u(dst + z)] = xf[_u(src + z)]
                    else:
                        for z in range(z_lo, z_hi):
                            cf[_u(dst + z)] = xf[_u(src + z * sw)]
                    for z in range(z_hi, wo):
                        cf[_u(dst + z)] = 0


@kernel.cpu_kernel(parallel=False)
def _col2im(
    col, dx, n0, nb, c0, cg, kh, kw, sh, sw, ph, pw, dh, dw, ho, wo,
    c_step, u, row0, row_step, col0, img_cols, add,
):  # fmt: skip
    # dx[n, c, h, w] (+)= sum of the col entries that im2col copied from (h, w)
    n_c, height, width = dx.shape[1], dx.shape[2], dx.shape[3]
    ncols = col.shape[1]
    df = dx.reshape(-1)
    cf = col.reshape(-1)
    for t in range(nb * cg):
        b = t // cg
        c = t % cg
        plane = ((n0 + b) * n_c + (c0 + c) * c_step + u) * height * width
        if not add:
            for p in range(height * width):
                df[_u(plane + p)] = 0
        base = b * img_cols + col0
        for i in range(kh):
            y_lo, y_hi = _valid_range(ph - i * dh, sh, height, ho)
            for j in range(kw):
                z_lo, z_hi = _valid_range(pw - j * dw, sw, width, wo)
                row = (c * row_step + row0 + i * kw + j) * ncols + base
                for y in range(y_lo, y_hi):
                    dst = plane + (y * sh - ph + i * dh) * width + j * dw - pw
                    src = row + y * wo
                    for z in range(z_lo, z_hi):
                        df[_u(dst + z * sw)] += cf[_u(src + z)]


# 'Same' size (stride 1, Ho = H, Wo = W: ResNet's padded 3x3 layers): the column row of
# tap (i, j) is the input plane shifted by one flat offset, (i*dh - ph)*W + j*dw - pw, so
# each row is one contiguous (vectorised) copy, then zeros where the window hangs over
# the top or bottom, and over the left or right edge (kw - 1 columns a row at most).
# ResNet-18, 512 channels on 7x7: 191 -> 96 us at batch 1, 7.6 -> 4.6 ms at batch 32;
# 256 on 14x14 at batch 1: 227 -> 110 us.
# Strided windows whose output is ceil(H/sh) x ceil(W/sw) (ResNet's 3x3/2, 1x1/2 and its
# 7x7/2 stem) take the same copies after splitting each input plane into its sh*sw
# phases, P[ry, rx][a, b] = x[a*sh + ry, b*sw + rx] (Ho x Wo each, zero-filled past the
# image): tap (i, j) reads phase ((i*dh - ph) mod sh, (j*dw - pw) mod sw) shifted by the
# quotients, a stride-1 shift again.


@cached_njit(nogil=True)
def _shifted_row(cf, row, src, start, rows, width, shift, y_lo, y_hi, z_lo, z_hi):
    # cf[row + y*width + z] = src[start + shift + y*width + z] for y in [y_lo, y_hi) and
    # z in [z_lo, z_hi), 0 elsewhere in the rows x width block; src's plane at `start`
    # has rows * width values
    size = rows * width
    for p in range(y_lo * width):
        cf[_u(row + p)] = 0
    for p in range(y_hi * width, size):
        cf[_u(row + p)] = 0
    lo = max(y_lo * width, -shift)
    hi = min(y_hi * width, size - shift)
    for p in range(lo, hi):
        cf[_u(row + p)] = src[_u(start + shift + p)]
    for y in range(y_lo, y_hi):
        for z in range(z_lo):
            cf[_u(row + y * width + z)] = 0
        for z in range(z_hi, width):
            cf[_u(row + y * width + z)] = 0


@cached_njit(nogil=True)
def _tap_range(offset, step, size, out):
    # (phase, quotient, lo, hi): input index a*step + phase = y*step + offset reads phase
    # row y + quotient, inside the image for y in [lo, hi) of [0, out)
    phase = offset % step
    quotient = offset // step
    rows = (size - phase + step - 1) // step
    lo = max(0, -quotient)
    return phase, quotient, lo, max(lo, min(out, rows - quotient))


@cached_njit(nogil=True, inline="always")
def _same_rows(x, col, n0, c0, cg, kh, kw, ph, pw, dh, dw, t0, t1):  # pragma: no cover
    # _im2col_same for the (image, channel) pairs t in [t0, t1), t = b*cg + c
    n_c, height, width = x.shape[1], x.shape[2], x.shape[3]
    hw = height * width
    ncols = col.shape[1]
    xf = x.reshape(-1)
    cf = col.reshape(-1)
    for t in range(t0, t1):
        b = t // cg
        c = t % cg
        plane = ((n0 + b) * n_c + c0 + c) * hw
        for i in range(kh):
            _, qy, y_lo, y_hi = _tap_range(i * dh - ph, 1, height, height)
            for j in range(kw):
                _, qx, z_lo, z_hi = _tap_range(j * dw - pw, 1, width, width)
                row = ((c * kh + i) * kw + j) * ncols + b * hw
                shift = qy * width + qx
                _shifted_row(cf, row, xf, plane, height, width, shift, y_lo, y_hi, z_lo, z_hi)


@kernel.cpu_kernel(parallel=False)
def _im2col_same(x, col, n0, nb, c0, cg, kh, kw, ph, pw, dh, dw):
    # col[(c*kh + i)*kw + j, b*H*W + y*W + z] = x[n0+b, c0+c, y - ph + i*dh, z - pw + j*dw]
    _same_rows(x, col, n0, c0, cg, kh, kw, ph, pw, dh, dw, 0, nb * cg)


@kernel.cpu_kernel
def _im2col_same_team(x, col, n0, nb, c0, cg, kh, kw, ph, pw, dh, dw, parts):
    # the same as one parallel loop over `parts` ranges of (image, channel) pairs
    for p in prange(parts):
        lo, hi = nb * cg * p // parts, nb * cg * (p + 1) // parts
        _same_rows(x, col, n0, c0, cg, kh, kw, ph, pw, dh, dw, lo, hi)


@cached_njit(nogil=True, inline="always")
def _split_phases(xf, phases, dst0, plane, height, width, sh, sw, ho, wo):  # pragma: no cover
    # phases[dst0 + r*Ho*Wo + a*Wo + q] = x's plane at `plane`, row a*sh + r // sw, column
    # q*sw + r % sw (0 past the edge): the plane cut into its sh*sw stride phases
    hw = ho * wo
    for r in range(sh * sw):
        ry = r // sw
        rx = r % sw
        for a in range(ho):
            yy = a * sh + ry
            dst = dst0 + r * hw + a * wo
            for q in range(wo):
                xx = q * sw + rx
                inside = yy < height and xx < width
                phases[_u(dst + q)] = xf[_u(plane + yy * width + xx)] if inside else 0


@cached_njit(nogil=True, inline="always")
def _phase_taps(
    cf, phases, src0, row0, i, kw, sh, sw, ph, pw, dh, dw, height, width, ho, wo, ncols
):  # pragma: no cover
    # column rows row0 + j*ncols (j < kw: the taps (i, j)) from the phases at src0, each
    # a stride-1 shift of one phase
    hw = ho * wo
    ry, qy, y_lo, y_hi = _tap_range(i * dh - ph, sh, height, ho)
    for j in range(kw):
        rx, qx, z_lo, z_hi = _tap_range(j * dw - pw, sw, width, wo)
        start = src0 + (ry * sw + rx) * hw
        shift = qy * wo + qx
        row = row0 + j * ncols
        _shifted_row(cf, row, phases, start, ho, wo, shift, y_lo, y_hi, z_lo, z_hi)


@cached_njit(nogil=True, inline="always")
def _phase_rows(
    x, col, n0, c0, cg, kh, kw, sh, sw, ph, pw, dh, dw, ho, wo, t0, t1
):  # pragma: no cover
    # _im2col_phases for the (image, channel) pairs t in [t0, t1), t = b*cg + c
    n_c, height, width = x.shape[1], x.shape[2], x.shape[3]
    hw = ho * wo
    ncols = col.shape[1]
    xf = x.reshape(-1)
    cf = col.reshape(-1)
    phases = np.empty(sh * sw * hw, x.dtype)
    for t in range(t0, t1):
        b = t // cg
        c = t % cg
        plane = ((n0 + b) * n_c + c0 + c) * height * width
        _split_phases(xf, phases, 0, plane, height, width, sh, sw, ho, wo)
        for i in range(kh):
            row0 = (c * kh + i) * kw * ncols + b * hw
            _phase_taps(
                cf, phases, 0, row0, i, kw, sh, sw, ph, pw, dh, dw, height, width, ho, wo, ncols
            )


@kernel.cpu_kernel(parallel=False)
def _im2col_phases(x, col, n0, nb, c0, cg, kh, kw, sh, sw, ph, pw, dh, dw, ho, wo):
    # col[(c*kh + i)*kw + j, b*Ho*Wo + y*Wo + z] = x[n0+b, c0+c, y*sh - ph + i*dh, z*sw - pw + j*dw]
    # for Ho = ceil(H / sh), Wo = ceil(W / sw)
    _phase_rows(x, col, n0, c0, cg, kh, kw, sh, sw, ph, pw, dh, dw, ho, wo, 0, nb * cg)


@kernel.cpu_kernel
def _im2col_phases_team(x, col, n0, nb, c0, cg, kh, kw, sh, sw, ph, pw, dh, dw, ho, wo, parts):
    # the same as two parallel loops over `parts` ranges: the (image, channel) planes cut
    # into their phases, then the column rows by (image, channel, kernel row), so that
    # few channels split evenly too (the 3-channel 7x7/2 stem on two threads: 2 planes
    # and 1 before; 0.35 -> 0.2 ms)
    n_c, height, width = x.shape[1], x.shape[2], x.shape[3]
    hw = ho * wo
    ncols = col.shape[1]
    xf = x.reshape(-1)
    cf = col.reshape(-1)
    pairs = nb * cg
    size = sh * sw * hw
    phases = np.empty(pairs * size, x.dtype)
    for p in prange(parts):
        for t in range(pairs * p // parts, pairs * (p + 1) // parts):
            plane = ((n0 + t // cg) * n_c + c0 + t % cg) * height * width
            _split_phases(xf, phases, t * size, plane, height, width, sh, sw, ho, wo)
    units = pairs * kh
    for p in prange(parts):
        for u in range(units * p // parts, units * (p + 1) // parts):
            t = u // kh
            i = u % kh
            row0 = ((t % cg) * kh + i) * kw * ncols + (t // cg) * hw
            _phase_taps(
                cf, phases, t * size, row0, i, kw, sh, sw, ph, pw, dh, dw, height, width, ho, wo,
                ncols,
            )  # fmt: skip


# No padding (LeNet's 5x5, every 'valid' convolution): every window lies inside the
# image, so the copies need no clipped ranges nor zero fills. These loops run 2-2.5x
# faster than the general ones above on small maps (an 8-wide row: the range arithmetic
# and the empty fill loops cost more than the copy), measured on LeNet's conv2. Layout as
# _im2col's 2-D case: row (c*kh + i)*kw + j, column b*Ho*Wo + y*Wo + z.


@cached_njit(nogil=True, inline="always")
def _valid_rows(x, col, n0, c0, cg, kh, kw, sh, sw, dh, dw, ho, wo, t0, t1):  # pragma: no cover
    # _im2col_valid for the (image, channel) pairs t in [t0, t1), t = b*cg + c
    n_c, height, width = x.shape[1], x.shape[2], x.shape[3]
    ncols, hw = col.shape[1], ho * wo
    xf = x.reshape(-1)
    cf = col.reshape(-1)
    for t in range(t0, t1):
        b = t // cg
        c = t % cg
        plane = ((n0 + b) * n_c + c0 + c) * height * width
        for i in range(kh):
            for j in range(kw):
                row = ((c * kh + i) * kw + j) * ncols + b * hw
                for y in range(ho):
                    src = plane + (y * sh + i * dh) * width + j * dw
                    dst = row + y * wo
                    if sw == 1:
                        for z in range(wo):
                            cf[_u(dst + z)] = xf[_u(src + z)]
                    else:
                        for z in range(wo):
                            cf[_u(dst + z)] = xf[_u(src + z * sw)]


@kernel.cpu_kernel(parallel=False)
def _im2col_valid(x, col, n0, nb, c0, cg, kh, kw, sh, sw, dh, dw, ho, wo):
    # col[(c*kh + i)*kw + j, b*Ho*Wo + y*Wo + z] = x[n0+b, c0+c, y*sh + i*dh, z*sw + j*dw]
    _valid_rows(x, col, n0, c0, cg, kh, kw, sh, sw, dh, dw, ho, wo, 0, nb * cg)


@kernel.cpu_kernel
def _im2col_valid_team(x, col, n0, nb, c0, cg, kh, kw, sh, sw, dh, dw, ho, wo, parts):
    # the same as one parallel loop over `parts` ranges of (image, channel) pairs
    for p in prange(parts):
        lo, hi = nb * cg * p // parts, nb * cg * (p + 1) // parts
        _valid_rows(x, col, n0, c0, cg, kh, kw, sh, sw, dh, dw, ho, wo, lo, hi)


@kernel.cpu_kernel(parallel=False)
def _col2im_valid(col, dx, n0, nb, c0, cg, kh, kw, sh, sw, dh, dw, ho, wo, add):
    # dx[n0+b, c0+c] (=|+=) the sum of the col entries _im2col_valid copied from it
    n_c, height, width = dx.shape[1], dx.shape[2], dx.shape[3]
    ncols, hw = col.shape[1], ho * wo
    df = dx.reshape(-1)
    cf = col.reshape(-1)
    for b in range(nb):
        for c in range(cg):
            plane = ((n0 + b) * n_c + c0 + c) * height * width
            if not add:
                for p in range(height * width):
                    df[_u(plane + p)] = 0
            for i in range(kh):
                for j in range(kw):
                    row = ((c * kh + i) * kw + j) * ncols + b * hw
                    for y in range(ho):
                        dst = plane + (y * sh + i * dh) * width + j * dw
                        src = row + y * wo
                        if sw == 1:
                            for z in range(wo):
                                df[_u(dst + z)] += cf[_u(src + z)]
                        else:
                            for z in range(wo):
                                df[_u(dst + z * sw)] += cf[_u(src + z)]


@kernel.cpu_kernel(parallel=False)
def _scatter(tmp, out, bias, n0, nb, f0, fg, has_bias, add):
    # out[n0+b, f0+f, :] (+)= tmp[f, b*HW:(b+1)*HW] + bias[f0+f]   (out viewed as (N, F, HW))
    n_f, hw = out.shape[1], out.shape[2]
    ncols = tmp.shape[1]
    tf = tmp.reshape(-1)
    of = out.reshape(-1)
    for t in range(nb * fg):
        b = t // fg
        f = t % fg
        src = f * ncols + b * hw
        dst = ((n0 + b) * n_f + f0 + f) * hw
        beta = bias[f0 + f] if has_bias else bias[0]  # the dummy bias is zeros(1)
        if add:
            for p in range(hw):
                of[_u(dst + p)] += tf[_u(src + p)] + beta
        else:
            for p in range(hw):
                of[_u(dst + p)] = tf[_u(src + p)] + beta


@kernel.cpu_kernel(parallel=False)
def _add_bias(out, bias, n0, nb):
    # out[n, f, :] += bias[f] for images n0..n0+nb-1   (out viewed as (N, F, HW))
    n_f, hw = out.shape[1], out.shape[2]
    of = out.reshape(-1)
    for t in range(nb * n_f):
        dst = (n0 * n_f + t) * hw
        beta = bias[t % n_f]
        for p in range(hw):
            of[_u(dst + p)] += beta


@kernel.cpu_kernel(parallel=False)
def _gather_rows(dy, dyt, n0, nb, f0, fg):
    # dyt[f, b*HW + p] = dy[n0+b, f0+f, p]: the (Fg, nb*HW) matrix of a chunk's output grads
    n_f, hw = dy.shape[1], dy.shape[2]
    ncols = dyt.shape[1]
    yf = dy.reshape(-1)
    tf = dyt.reshape(-1)
    for t in range(nb * fg):
        b = t // fg
        f = t % fg
        src = ((n0 + b) * n_f + f0 + f) * hw
        dst = f * ncols + b * hw
        for p in range(hw):
            tf[_u(dst + p)] = yf[_u(src + p)]


# -- the padded column layout of _conv_shift.py: image b, row h, column w of a channel lives
#    at b*plane + h*wp + w of that channel's row (plane = hp*wp)


@kernel.cpu_kernel(parallel=False)
def _pad_images(x, xp, n0, nb, c0, cg, ph, pw, wp, plane):
    # xp[c, b*plane + (h+ph)*wp + (w+pw)] = x[n0+b, c0+c, h, w]; zero padding around
    n_c, height, width = x.shape[1], x.shape[2], x.shape[3]
    ld = xp.shape[1]
    xf = x.reshape(-1)
    pf = xp.reshape(-1)
    for b in range(nb):
        for c in range(cg):
            row = c * ld + b * plane
            src = ((n0 + b) * n_c + c0 + c) * height * width
            for p in range(ph * wp):
                pf[_u(row + p)] = 0
            for h in range(height):
                start = row + (h + ph) * wp
                for p in range(pw):
                    pf[_u(start + p)] = 0
                for w in range(width):
                    pf[_u(start + pw + w)] = xf[_u(src + h * width + w)]
                for p in range(pw + width, wp):
                    pf[_u(start + p)] = 0
            for p in range((ph + height) * wp, plane):
                pf[_u(row + p)] = 0


@kernel.cpu_kernel(parallel=False)
def _unpad_out(yp, out, bias, n0, nb, f0, fg, wp, plane, has_bias, add):
    # out[n0+b, f0+f, y, x] (=|+=) yp[f, b*plane + y*wp + x] + bias[f0+f]
    n_f, ho, wo = out.shape[1], out.shape[2], out.shape[3]
    ld = yp.shape[1]
    yf = yp.reshape(-1)
    of = out.reshape(-1)
    for b in range(nb):
        for f in range(fg):
            beta = bias[f0 + f] if has_bias else bias[0]  # the dummy bias is zeros(1)
            dst = ((n0 + b) * n_f + f0 + f) * ho * wo
            for y in range(ho):
                src = f * ld + b * plane + y * wp
                d = dst + y * wo
                if add:
                    for z in range(wo):
                        of[_u(d + z)] += yf[_u(src + z)] + beta
                else:
                    for z in range(wo):
                        of[_u(d + z)] = yf[_u(src + z)] + beta


@kernel.cpu_kernel(parallel=False)
def _pad_grad(dy, dyp, n0, nb, f0, fg, wp, plane):
    # dyp[f, b*plane + y*wp + x] = dy[n0+b, f0+f, y, x], zero in every other column
    n_f, ho, wo = dy.shape[1], dy.shape[2], dy.shape[3]
    ld = dyp.shape[1]
    yf = dy.reshape(-1)
    pf = dyp.reshape(-1)
    for f in range(fg):
        row = f * ld
        for p in range(nb * plane):
            pf[_u(row + p)] = 0
        for b in range(nb):
            src = ((n0 + b) * n_f + f0 + f) * ho * wo
            for y in range(ho):
                start = row + b * plane + y * wp
                for z in range(wo):
                    pf[_u(start + z)] = yf[_u(src + y * wo + z)]


@kernel.cpu_kernel(parallel=False)
def _unpad_grad(dxp, dx, n0, nb, c0, cg, ph, pw, wp, plane, add):
    # dx[n0+b, c0+c, h, w] (=|+=) dxp[c, b*plane + (h+ph)*wp + (w+pw)]
    n_c, height, width = dx.shape[1], dx.shape[2], dx.shape[3]
    ld = dxp.shape[1]
    pf = dxp.reshape(-1)
    df = dx.reshape(-1)
    for b in range(nb):
        for c in range(cg):
            dst = ((n0 + b) * n_c + c0 + c) * height * width
            for h in range(height):
                src = c * ld + b * plane + (h + ph) * wp + pw
                d = dst + h * width
                if add:
                    for w in range(width):
                        df[_u(d + w)] += pf[_u(src + w)]
                else:
                    for w in range(width):
                        df[_u(d + w)] = pf[_u(src + w)]


__all__ = [
    "_add_bias",
    "_col2im",
    "_col2im_valid",
    "_gather_rows",
    "_im2col",
    "_im2col_phases_team",
    "_im2col_same_team",
    "_im2col_valid",
    "_im2col_valid_team",
    "_pad_grad",
    "_pad_images",
    "_scatter",
    "_unpad_grad",
    "_unpad_out",
    "planar_args",
]


# Direct loops for convolutions with very few input values per window (ResNet-less
# nets' first layer: LeNet's 1 channel x 5x5 = 25): im2col would copy each input value
# kh*kw times into a column matrix only 25 rows deep, and the GEMM on it is all memory
# traffic. Stride 1, no padding, no dilation (_conv_cpu.direct decides).
@kernel.cpu_kernel
def _direct_forward(x, w, bias, out, has_bias, add, kh, kw, ho, wo):
    # out[n, f] (+)= bias[f] + sum_{c,i,j} w[f, c, i, j] * x[n, c, i:, j:], per (n, f): the
    # output is first formed at x's row width (its last kw - 1 columns junk, dropped), so a
    # tap adds one long contiguous run, x shifted by i*width + j, instead of ho rows of wo
    # (LeNet's 24-wide rows left most of each row to the loop's scalar remainder); up to
    # four taps of a column per pass share the loads and stores of the sum.
    # LeNet's first layer at batch 64, two threads: 1.02 -> 0.40 ms.
    n_img, n_f, n_c = out.shape[0], out.shape[1], x.shape[1]
    height, width = x.shape[2], x.shape[3]
    span = (ho - 1) * width + wo  # the last row's junk is not formed: it would read past x
    xf = x.reshape(-1)
    of = out.reshape(-1)
    for t in prange(n_img * n_f):
        n = t // n_f
        f = t % n_f
        wide = np.empty(span, out.dtype)
        b = bias[f] if has_bias else out.dtype.type(0)
        for q in range(span):
            wide[q] = b
        for c in range(n_c):
            _direct_taps(wide, xf, w, f, c, (n * n_c + c) * height * width, width, kh, kw, span)
        dst = t * ho * wo
        for y in range(ho):
            if add:
                for z in range(wo):
                    of[_u(dst + y * wo + z)] += wide[_u(y * width + z)]
            else:
                for z in range(wo):
                    of[_u(dst + y * wo + z)] = wide[_u(y * width + z)]


@cached_njit(nogil=True, inline="always")
def _direct_taps(wide, xf, w, f, c, base, width, kh, kw, span):  # pragma: no cover - numba
    # wide[q] += sum_{i,j} w[f, c, i, j] * xf[base + i*width + j + q], q < span: the taps of
    # rows i..i+3 (then pairs, then single rows) of one column j per pass
    i = 0
    while i + 4 <= kh:
        for j in range(kw):
            w0, w1, w2, w3 = w[f, c, i, j], w[f, c, i + 1, j], w[f, c, i + 2, j], w[f, c, i + 3, j]
            s0 = base + i * width + j
            s1, s2, s3 = s0 + width, s0 + 2 * width, s0 + 3 * width
            for q in range(span):
                wide[_u(q)] += (w0 * xf[_u(s0 + q)] + w1 * xf[_u(s1 + q)]) + (
                    w2 * xf[_u(s2 + q)] + w3 * xf[_u(s3 + q)]
                )
        i += 4
    while i + 2 <= kh:
        for j in range(kw):
            w0, w1 = w[f, c, i, j], w[f, c, i + 1, j]
            s0 = base + i * width + j
            s1 = s0 + width
            for q in range(span):
                wide[_u(q)] += w0 * xf[_u(s0 + q)] + w1 * xf[_u(s1 + q)]
        i += 2
    if i < kh:
        for j in range(kw):
            w0 = w[f, c, i, j]
            s0 = base + i * width + j
            for q in range(span):
                wide[_u(q)] += w0 * xf[_u(s0 + q)]


@kernel.cpu_kernel(reassociate=True)
def _direct_weight(x, dy, dw, add, kh, kw, ho, wo):
    # dw[f, c, i, j] (+)= sum_{n, y, z} dy[n, f, y, z] * x[n, c, y + i, z + j], per (f, c).
    # dy's image is laid out at x's row width with zeros in the extra columns, so a tap's
    # sum is one long dot product with x from offset i*width + j (vector partial sums:
    # reassociate), four taps of a row per pass sharing the dy loads. The zeros meet x
    # values outside the tap's window: exact for finite x, but an inf or NaN there would
    # leak into other taps, so image planes holding one take the row-by-row sums. Each
    # image's float32 sums add up in float64, in image order: the same bits on any number
    # of threads. LeNet's first layer at batch 64, two threads: 1.5 -> 0.4 ms.
    n_img, n_f, n_c = dy.shape[0], dy.shape[1], x.shape[1]
    height, width = x.shape[2], x.shape[3]
    plane = height * width
    span = (ho - 1) * width + wo
    xf = x.reshape(-1)
    finite = np.empty(n_img * n_c, np.bool_)
    for t in prange(n_img * n_c):
        ok = True
        for q in range(plane):
            v = xf[_u(t * plane + q)]
            ok = ok & (v - v == 0)  # False for inf and NaN
        finite[t] = ok
    for t in prange(n_f * n_c):
        f = t // n_c
        c = t % n_c
        acc = np.zeros(kh * kw, np.float64)
        wide = np.zeros(span, dy.dtype)  # the extra columns stay 0
        zero = dy.dtype.type(0)  # (wide[0] * 0 would be float64: float32 times an int)
        for n in range(n_img):
            base = (n * n_c + c) * plane
            g = dy[n, f]
            if not finite[n * n_c + c]:
                _direct_weight_rows(acc, g, xf, base, width, kh, kw, ho, wo)
                continue
            for y in range(ho):
                for z in range(wo):
                    wide[_u(y * width + z)] = g[y, z]
            for i in range(kh):
                j = 0
                while j + 4 <= kw:
                    s0 = base + i * width + j
                    a0 = a1 = a2 = a3 = zero
                    for q in range(span):
                        d = wide[_u(q)]
                        a0 += d * xf[_u(s0 + q)]
                        a1 += d * xf[_u(s0 + 1 + q)]
                        a2 += d * xf[_u(s0 + 2 + q)]
                        a3 += d * xf[_u(s0 + 3 + q)]
                    k = i * kw + j
                    acc[k] += a0
                    acc[k + 1] += a1
                    acc[k + 2] += a2
                    acc[k + 3] += a3
                    j += 4
                for jj in range(j, kw):
                    s0 = base + i * width + jj
                    a0 = zero
                    for q in range(span):
                        a0 += wide[_u(q)] * xf[_u(s0 + q)]
                    acc[i * kw + jj] += a0
        for i in range(kh):
            for j in range(kw):
                if add:
                    dw[f, c, i, j] += acc[i * kw + j]
                else:
                    dw[f, c, i, j] = acc[i * kw + j]


@cached_njit(nogil=True, inline="always")
def _direct_weight_rows(acc, g, xf, base, width, kh, kw, ho, wo):  # pragma: no cover - numba
    # acc[i*kw + j] += sum_{y, z} g[y, z] * xf[base + (y + i)*width + z + j]: only the x
    # values inside each tap's window (the wide sums' fallback for non-finite planes)
    for i in range(kh):
        for j in range(kw):
            total = 0.0
            for y in range(ho):
                src = base + (y + i) * width + j
                s = g.dtype.type(0)
                for z in range(wo):
                    s += g[y, z] * xf[_u(src + z)]
                total += s
            acc[i * kw + j] += total
