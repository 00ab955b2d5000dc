"""Numba CPU kernels for Convolution: im2col / col2im, the NCHW scatter, depthwise loops.

Column layout, for images n0..n0+nb-1 and channels c0..c0+cg-1 of x (N, C, H, W):

    col[(c*kh + i)*kw + j, b*Ho*Wo + y*Wo + z] = x[n0+b, c0+c, y*sh - ph + i*dh, z*sw - pw + j*dw]

(zero where the index falls in the padding), so that W_g (Fg, cg*kh*kw) @ col is the
convolution of the chunk, laid out (Fg, nb*Ho*Wo). Kernels take offsets instead of
sliced views so every call has the same (contiguous) signature and compiles once per dtype.
The depthwise kernels run in parallel (no BLAS beside them); each prange iteration
writes its own output plane or weight.

This module imports numba, so the op modules import it on their first CPU launch only
(`import nnvmpy` stays free of numba).
"""

from __future__ import annotations

import numba
from numba import prange

from ... import kernel


@numba.njit(cache=True, nogil=True)
def _valid_range(pad_off, step, size, out):
    # [lo, hi) of the output positions z with 0 <= z*step - pad_off < size
    lo = max(0, -((-pad_off) // step))
    hi = min(out, (size - 1 + pad_off) // step + 1)
    return lo, max(lo, hi)


# im2col, col2im and the copies around the GEMMs are serial on purpose: numba's OpenMP
# workers spin after a parallel region, and on a 2-core machine they then fight
# OpenBLAS's threads for the cores during the very next GEMM (time-slice sized stalls,
# measured at 2-3x the whole convolution). OpenBLAS is the one thread pool here.


@numba.njit(inline="always")
def _u(i):
    # an unsigned index: numba then skips its negative-index wraparound check, which
    # otherwise costs more than the copy in these short inner loops (4x on LeNet's conv2)
    return numba.uint64(i)


# Both kernels work on the flat (contiguous) arrays: x, dx (N, C, H, W) and col (rows,
# columns) with explicit offsets and unsigned indices, so the short inner loops over an
# output row compile to plain (vectorisable) copies.


@kernel.cpu_kernel(parallel=False)
def _im2col(x, col, n0, nb, c0, cg, kh, kw, sh, sw, ph, pw, dh, dw, ho, wo):
    n_c, height, width = x.shape[1], x.shape[2], x.shape[3]
    hw = ho * wo
    ncols = col.shape[1]
    xf = x.reshape(-1)
    cf = col.reshape(-1)
    for t in range(nb * cg):
        b = t // cg
        c = t % cg
        plane = ((n0 + b) * n_c + c0 + c) * height * width
        base = b * hw
        for i in range(kh):
            y_lo, y_hi = _valid_range(ph - i * dh, sh, height, ho)
            for j in range(kw):
                z_lo, z_hi = _valid_range(pw - j * dw, sw, width, wo)
                row = ((c * kh + i) * kw + j) * ncols + base
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
def _col2im(col, dx, n0, nb, c0, cg, kh, kw, sh, sw, ph, pw, dh, dw, ho, wo, add):
    # dx[n, c, h, w] (+)= sum of the col entries that im2col copied from (h, w)
    n_c, height, width = dx.shape[1], dx.shape[2], dx.shape[3]
    hw = ho * wo
    ncols = col.shape[1]
    df = dx.reshape(-1)
    cf = col.reshape(-1)
    for t in range(nb * cg):
        b = t // cg
        c = t % cg
        plane = ((n0 + b) * n_c + c0 + c) * height * width
        if not add:
            for p in range(height * width):
                df[_u(plane + p)] = 0
        base = b * hw
        for i in range(kh):
            y_lo, y_hi = _valid_range(ph - i * dh, sh, height, ho)
            for j in range(kw):
                z_lo, z_hi = _valid_range(pw - j * dw, sw, width, wo)
                row = ((c * kh + i) * kw + j) * ncols + base
                for y in range(y_lo, y_hi):
                    dst = plane + (y * sh - ph + i * dh) * width + j * dw - pw
                    src = row + y * wo
                    for z in range(z_lo, z_hi):
                        df[_u(dst + z * sw)] += cf[_u(src + z)]


@kernel.cpu_kernel(parallel=False)
def _scatter(tmp, out, bias, n0, nb, f0, fg, has_bias, add):
    # out[n0+b, f0+f, :] (+)= tmp[f, b*HW:(b+1)*HW] + bias[f0+f]   (out viewed as (N, F, HW))
    hw = out.shape[2]
    for t in range(nb * fg):
        b = t // fg
        f = t % fg
        src = tmp[f, b * hw : (b + 1) * hw]
        dst = out[n0 + b, f0 + f]
        beta = bias[f0 + f] if has_bias else 0
        if add:
            for p in range(hw):
                dst[p] += src[p] + beta
        else:
            for p in range(hw):
                dst[p] = src[p] + beta


@kernel.cpu_kernel(parallel=False)
def _add_bias(out, bias, n0, nb):
    # out[n, f, :] += bias[f] for images n0..n0+nb-1   (out viewed as (N, F, HW))
    nf = out.shape[1]
    for t in range(nb * nf):
        b = t // nf
        f = t % nf
        out[n0 + b, f] += bias[f]


@kernel.cpu_kernel(parallel=False)
def _gather_rows(dy, dyt, n0, nb, f0, fg):
    # dyt[f, b*HW + p] = dy[n0+b, f0+f, p]: the (Fg, nb*HW) matrix of a chunk's output grads
    hw = dy.shape[2]
    for t in range(nb * fg):
        b = t // fg
        f = t % fg
        dyt[f, b * hw : (b + 1) * hw] = dy[n0 + b, f0 + f]


# -- the padded column layout of _conv_shift.py: image b, row h, column w of a channel lives
#    at b*plane + h*wp + w of that channel's row (plane = hp*wp)


@kernel.cpu_kernel(parallel=False)
def _pad_images(x, xp, n0, nb, c0, cg, ph, pw, wp, plane):
    # xp[c, b*plane + (h+ph)*wp + (w+pw)] = x[n0+b, c0+c, h, w]; zero padding around
    height, width = x.shape[2], x.shape[3]
    for b in range(nb):
        base = b * plane
        for c in range(cg):
            row = xp[c]
            row[base : base + ph * wp] = 0
            for h in range(height):
                start = base + (h + ph) * wp
                row[start : start + pw] = 0
                row[start + pw : start + pw + width] = x[n0 + b, c0 + c, h]
                row[start + pw + width : start + wp] = 0
            row[base + (ph + height) * wp : base + plane] = 0


@kernel.cpu_kernel(parallel=False)
def _unpad_out(yp, out, bias, n0, nb, f0, fg, wp, plane, has_bias, add):
    # out[n0+b, f0+f, y, x] (=|+=) yp[f, b*plane + y*wp + x] + bias[f0+f]
    ho, wo = out.shape[2], out.shape[3]
    for b in range(nb):
        for f in range(fg):
            beta = bias[f0 + f] if has_bias else 0
            for y in range(ho):
                start = b * plane + y * wp
                src = yp[f, start : start + wo]
                dst = out[n0 + b, f0 + f, y]
                if add:
                    for z in range(wo):
                        dst[z] += src[z] + beta
                else:
                    for z in range(wo):
                        dst[z] = src[z] + beta


@kernel.cpu_kernel(parallel=False)
def _pad_grad(dy, dyp, n0, nb, f0, fg, wp, plane):
    # dyp[f, b*plane + y*wp + x] = dy[n0+b, f0+f, y, x], zero in every other column
    ho, wo = dy.shape[2], dy.shape[3]
    for f in range(fg):
        row = dyp[f]
        row[: nb * plane] = 0
        for b in range(nb):
            for y in range(ho):
                start = b * plane + y * wp
                row[start : start + wo] = dy[n0 + b, f0 + f, y]


@kernel.cpu_kernel(parallel=False)
def _unpad_grad(dxp, dx, n0, nb, c0, cg, ph, pw, wp, plane, add):
    # dx[n0+b, c0+c, h, w] (=|+=) dxp[c, b*plane + (h+ph)*wp + (w+pw)]
    height, width = dx.shape[2], dx.shape[3]
    for b in range(nb):
        for c in range(cg):
            for h in range(height):
                start = b * plane + (h + ph) * wp + pw
                src = dxp[c, start : start + width]
                dst = dx[n0 + b, c0 + c, h]
                if add:
                    for z in range(width):
                        dst[z] += src[z]
                else:
                    for z in range(width):
                        dst[z] = src[z]


# -- depthwise (num_group == C): one input channel per group, `mult` filters per channel -------


@kernel.cpu_kernel
def _dw_forward(x, w, bias, out, has_bias, add, kh, kw, sh, sw, ph, pw, dh, dw, ho, wo):
    # out[n, f, y, z] = sum_ij x[n, f // mult, y*sh - ph + i*dh, z*sw - pw + j*dw] w[f, 0, i, j]
    n_img, n_f = out.shape[0], out.shape[1]
    height, width = x.shape[2], x.shape[3]
    mult = n_f // x.shape[1]
    for t in prange(n_img * n_f):
        n = t // n_f
        f = t % n_f
        src = x[n, f // mult]
        dst = out[n, f]
        for y in range(ho):
            for z in range(wo):
                acc = bias[f] if has_bias else 0.0
                for i in range(kh):
                    h = y * sh - ph + i * dh
                    if h < 0 or h >= height:
                        continue
                    for j in range(kw):
                        c = z * sw - pw + j * dw
                        if c >= 0 and c < width:
                            acc += src[h, c] * w[f, 0, i, j]
                if add:
                    dst[y, z] += acc
                else:
                    dst[y, z] = acc


@kernel.cpu_kernel
def _dw_backward_data(dy, w, dx, add, kh, kw, sh, sw, ph, pw, dh, dw, ho, wo):
    # dx[n, c] (+)= sum over the mult filters f of channel c of dy[n, f] scattered through w[f]
    n_img, n_c = dx.shape[0], dx.shape[1]
    height, width = dx.shape[2], dx.shape[3]
    mult = dy.shape[1] // n_c
    for t in prange(n_img * n_c):
        n = t // n_c
        c = t % n_c
        plane = dx[n, c]
        if not add:
            plane[:, :] = 0
        for m in range(mult):
            f = c * mult + m
            g = dy[n, f]
            for y in range(ho):
                for i in range(kh):
                    h = y * sh - ph + i * dh
                    if h < 0 or h >= height:
                        continue
                    for j in range(kw):
                        wt = w[f, 0, i, j]
                        for z in range(wo):
                            col = z * sw - pw + j * dw
                            if col >= 0 and col < width:
                                plane[h, col] += g[y, z] * wt


@kernel.cpu_kernel
def _dw_backward_weight(dy, x, dwt, add, kh, kw, sh, sw, ph, pw, dh, dw, ho, wo):
    # dw[f, 0, i, j] (+)= sum_{n, y, z} dy[n, f, y, z] x[n, f // mult, y*sh - ph + i*dh, ...]
    n_img, n_f = dy.shape[0], dy.shape[1]
    height, width = x.shape[2], x.shape[3]
    mult = n_f // x.shape[1]
    for t in prange(n_f * kh * kw):
        f = t // (kh * kw)
        i = (t // kw) % kh
        j = t % kw
        acc = 0.0
        for n in range(n_img):
            src = x[n, f // mult]
            g = dy[n, f]
            for y in range(ho):
                h = y * sh - ph + i * dh
                if h < 0 or h >= height:
                    continue
                for z in range(wo):
                    col = z * sw - pw + j * dw
                    if col >= 0 and col < width:
                        acc += g[y, z] * src[h, col]
        if add:
            dwt[f, 0, i, j] += acc
        else:
            dwt[f, 0, i, j] = acc


__all__ = [
    "_add_bias",
    "_col2im",
    "_dw_backward_data",
    "_dw_backward_weight",
    "_dw_forward",
    "_gather_rows",
    "_im2col",
    "_pad_grad",
    "_pad_images",
    "_scatter",
    "_unpad_grad",
    "_unpad_out",
]
