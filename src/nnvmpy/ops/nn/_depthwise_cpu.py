"""CPU depthwise Convolution (num_group == C, `mult` filters per channel): numba loops.

Layout. A task is one (image, channel) plane. Its input plane is copied into a
zero-padded buffer split into sh*sw stride phases: padded row r = a + sh*rq and column
c = p + sw*q (h = r - ph, w = c - pw) go to

    buf[((a*sw + p)*Hq + rq)*Q + q]        (Hq rows of Q values per phase)

so that the value tap (i, j) meets at output (y, z) sits at buf[off_ij + y*Q + z],
off_ij = the position of (r, c) = (i*dh, j*dw). Laid out at the buffer's row length Q
(its last Q - Wo columns junk), an output plane is then, per tap, ONE contiguous run of
the buffer: `wide[v] += w_ij * buf[off_ij + v]`, v < (Ho-1)*Q + Wo, for any stride and
dilation. No index arithmetic or bounds test per element, and loops thousands of
values long, where rows of Wo = 28 or 56 would leave most of the work to the scalar
remainder of LLVM's 16-lane vector loops. The buffer covers both the windows and the
whole input plane (sh*Hq >= H + ph, sw*Q >= W + pw); its pads are zero and stay so, so
a task range zeroes it once and then copies only the planes (stride 2: both column
phases of a row in one loop, which LLVM vectorises as an interleaved pair). The index
arithmetic (row starts, tap offsets: divisions) is computed once per launch (_layout).

    forward      wide = sum_ij w_ij * run_ij (3x3: the nine runs in one loop), then out
                 (+)= wide's Wo columns + bias, row by row
    data grad    dy's plane at row length Q (junk columns 0) scattered: run_ij += w_ij * dy
                 into a zeroed buffer, whose plane part is then copied (or added) to dx;
                 3x3 stride 1: one gather pass instead, buf[u] = sum_ij w_ij *
                 dy_wide[u - off_ij] (dy's wide plane between zero margins)
    weight grad  per plane and tap one dot product of dy (row length Q, junk columns 0)
                 with run_ij (vector partial sums, reassociate; 3x3: the nine in one
                 loop), in float64 per plane; the planes' partials summed over images in
                 float64, in image order

The junk columns of dy meet buffer values outside tap (i, j)'s window: 0 * x is exact
for finite x, so a plane holding an inf or NaN (the weight gradient), or a filter with
one (the data gradient), takes the same sums row by row instead: the result then has
the NaN where the window sums put it, never elsewhere.

The data and weight gradients run in one pass over dy when both are asked for: its
plane, copied once, serves both. Tasks are dealt into `parts` contiguous ranges (a
prange over parts, each with its own scratch); results do not depend on `parts` or on
the number of threads.

Why the older loops (_im2col._dw_*, replaced) were 4-10x slower: every output element
tested each tap for the padding, indexed 2-D views (with wraparound checks) and summed
in a float64 scalar, so nothing vectorised; the data gradient scattered element by
element with a bounds test in the innermost loop; the weight gradient made kh*kw
passes over the batch, each a scalar chain.

Imported on the first CPU launch (it imports numba).
"""

from __future__ import annotations

import numpy as np
from numba import prange

from ... import kernel
from ...kernel.cpu import cached_njit
from ._uindex import u as _u


def geometry(
    height: int, width: int, kh: int, kw: int, sh: int, sw: int, ph: int, pw: int,
    dh: int, dw: int, ho: int, wo: int,
) -> tuple[int, int]:  # fmt: skip
    """(Hq, Q): the buffer's rows per row phase and values per column phase (module doc)."""
    hb = max((ho - 1) * sh + (kh - 1) * dh + 1, height + ph)
    wb = max((wo - 1) * sw + (kw - 1) * dw + 1, width + pw)
    return -(-hb // sh), -(-wb // sw)


@cached_njit(nogil=True)
def _layout(height, width, kh, kw, sh, sw, ph, pw, dh, dw, hq, qn):  # pragma: no cover
    # the buffer's index arithmetic, once per launch (a row's divisions cost more than
    # its copy): rows[h], where input row h's column phase 0 starts; q0[p], q1[p], the q
    # of column phase p holding input columns (c = p + sw*q - pw in [0, width));
    # offs[i*kw + j], where tap (i, j)'s run starts
    phase = hq * qn  # the size of one (row phase, column phase) part of the buffer
    rows = np.empty(height, np.int64)
    for h in range(height):
        r = h + ph
        rows[h] = (r % sh) * sw * phase + (r // sh) * qn
    q0 = np.empty(sw, np.int64)
    q1 = np.empty(sw, np.int64)
    for p in range(sw):
        q0[p] = max(0, -((p - pw) // sw))
        q1[p] = min(qn, max(q0[p], (width - 1 + pw - p) // sw + 1))
    offs = np.empty(kh * kw, np.int64)
    for i in range(kh):
        for j in range(kw):
            r, c = i * dh, j * dw
            offs[i * kw + j] = ((r % sh) * sw + c % sw) * phase + (r // sh) * qn + c // sw
    return rows, q0, q1, offs


@cached_njit(nogil=True, inline="always")
def _fill(buf, xf, src, width, sw, pw, phase, rows, q0, q1, check):  # pragma: no cover
    # the plane at xf[src:] into the buffer's plane part (the pads are left as they are);
    # with `check`, whether the plane is finite
    nan = xf.dtype.type(0)  # sum of v - v: 0, or NaN if some v is inf or NaN
    for h in range(rows.size):
        s = src + h * width
        if sw == 2:  # both column phases in one loop: LLVM vectorises the pair of loads
            d0, d1 = _pair_at(rows[h], pw, phase)
            for m in range(width // 2):
                buf[_u(d0 + m)] = xf[_u(s + 2 * m)]
                buf[_u(d1 + m)] = xf[_u(s + 2 * m + 1)]
            if width % 2:
                buf[_u(d0 + width // 2)] = xf[_u(s + width - 1)]
        elif sw == 1:
            d = rows[h] + pw
            for c in range(width):
                buf[_u(d + c)] = xf[_u(s + c)]
        else:
            for p in range(sw):
                d = rows[h] + p * phase
                s0 = s + p - pw
                for q in range(q0[p], q1[p]):
                    buf[_u(d + q)] = xf[_u(s0 + sw * q)]
    if check:
        for k in range(rows.size * width):
            v = xf[_u(src + k)]
            nan += v - v
    return nan == 0


@cached_njit(nogil=True, inline="always")
def _pair_at(row, pw, phase):  # pragma: no cover - numba
    # stride 2: where the buffer holds input columns 2m (d0 + m) and 2m + 1 (d1 + m) of
    # the row whose column phase 0 starts at `row` (column c is padded column c + pw)
    return (row + (pw % 2) * phase + pw // 2, row + ((pw + 1) % 2) * phase + (pw + 1) // 2)


@cached_njit(nogil=True, inline="always")
def _drain(buf, df, dst, width, sw, pw, phase, rows, q0, q1, add):  # pragma: no cover
    # df[dst:] (+)= the buffer's plane part (_fill's inverse)
    for h in range(rows.size):
        d = dst + h * width
        if sw == 2:
            d0, d1 = _pair_at(rows[h], pw, phase)
            if add:
                for m in range(width // 2):
                    df[_u(d + 2 * m)] += buf[_u(d0 + m)]
                    df[_u(d + 2 * m + 1)] += buf[_u(d1 + m)]
                if width % 2:
                    df[_u(d + width - 1)] += buf[_u(d0 + width // 2)]
            else:
                for m in range(width // 2):
                    df[_u(d + 2 * m)] = buf[_u(d0 + m)]
                    df[_u(d + 2 * m + 1)] = buf[_u(d1 + m)]
                if width % 2:
                    df[_u(d + width - 1)] = buf[_u(d0 + width // 2)]
            continue
        if sw == 1:
            s = rows[h] + pw
            if add:
                for c in range(width):
                    df[_u(d + c)] += buf[_u(s + c)]
            else:
                for c in range(width):
                    df[_u(d + c)] = buf[_u(s + c)]
            continue
        for p in range(sw):
            s = rows[h] + p * phase
            d0 = d + p - pw
            if add:
                for q in range(q0[p], q1[p]):
                    df[_u(d0 + sw * q)] += buf[_u(s + q)]
            else:
                for q in range(q0[p], q1[p]):
                    df[_u(d0 + sw * q)] = buf[_u(s + q)]


@cached_njit(nogil=True, inline="always")
def _wide_3x3(wide, buf, wf, wb, span, offs):  # pragma: no cover - numba
    # wide[v] = sum over the nine taps of w_ij * buf[off_ij + v], in one loop
    o00, o01, o02, o10, o11, o12 = offs[0], offs[1], offs[2], offs[3], offs[4], offs[5]
    o20, o21, o22 = offs[6], offs[7], offs[8]
    w00, w01, w02 = wf[_u(wb)], wf[_u(wb + 1)], wf[_u(wb + 2)]
    w10, w11, w12 = wf[_u(wb + 3)], wf[_u(wb + 4)], wf[_u(wb + 5)]
    w20, w21, w22 = wf[_u(wb + 6)], wf[_u(wb + 7)], wf[_u(wb + 8)]
    for v in range(span):
        wide[_u(v)] = (
            (w00 * buf[_u(o00 + v)] + w01 * buf[_u(o01 + v)] + w02 * buf[_u(o02 + v)])
            + (w10 * buf[_u(o10 + v)] + w11 * buf[_u(o11 + v)] + w12 * buf[_u(o12 + v)])
            + (w20 * buf[_u(o20 + v)] + w21 * buf[_u(o21 + v)] + w22 * buf[_u(o22 + v)])
        )


@kernel.cpu_kernel
def dw_forward(
    x, w, bias, out, has_bias, add, kh, kw, sh, sw, ph, pw, dh, dw, ho, wo, hq, qn, parts
):
    # out[n, f, y, z] (+)= bias[f] + sum_ij w[f, 0, i, j] x[n, f // mult, y*sh - ph + i*dh,
    # z*sw - pw + j*dw], one plane (n, f) per task
    n_img, n_c, height, width = x.shape
    n_f = out.shape[1]
    mult = n_f // n_c
    tasks = n_img * n_f
    taps = kh * kw
    xf = x.reshape(-1)
    wf = w.reshape(-1)
    of = out.reshape(-1)
    phase = hq * qn
    span = (ho - 1) * qn + wo
    rows, q0, q1, offs = _layout(height, width, kh, kw, sh, sw, ph, pw, dh, dw, hq, qn)
    for part in prange(parts):
        lo = tasks * part // parts
        hi = tasks * (part + 1) // parts
        buf = np.zeros(sh * sw * phase, x.dtype)
        wide = np.empty(span, x.dtype)
        built = -1
        for t in range(lo, hi):
            n = t // n_f
            f = t - n * n_f
            src = n * n_c + f // mult
            if src != built:
                _fill(buf, xf, src * height * width, width, sw, pw, phase, rows, q0, q1, False)
                built = src
            wb = f * taps
            if taps == 9 and kw == 3:
                _wide_3x3(wide, buf, wf, wb, span, offs)
            else:
                for v in range(span):
                    wide[_u(v)] = 0
                for k in range(taps):
                    o = offs[k]
                    wt = wf[_u(wb + k)]
                    for v in range(span):
                        wide[_u(v)] += wt * buf[_u(o + v)]
            b = bias[f] if has_bias else out.dtype.type(0)
            for y in range(ho):
                d = (t * ho + y) * wo
                s = y * qn
                if add:
                    for z in range(wo):
                        of[_u(d + z)] += wide[_u(s + z)] + b
                else:
                    for z in range(wo):
                        of[_u(d + z)] = wide[_u(s + z)] + b


@kernel.cpu_kernel(reassociate=True)
def dw_backward(
    gf, wf, xf, df, dwf, n_img, n_c, n_f, height, width, do_x, add_x, do_w, add_w,
    kh, kw, sh, sw, ph, pw, dh, dw, ho, wo, hq, qn, parts,
):  # fmt: skip
    # flat arrays: dy gf (N, F, Ho, Wo), w wf (F, 1, kh, kw), x xf and dx df (N, C, H, W),
    # dw dwf (F, 1, kh, kw); x and dw are unread without do_w, dx without do_x. One task
    # per (n, c) plane, over its mult filters f:
    #   dx[n, c] (+)= sum_f dy[n, f] scattered through w[f]
    #   dw[f, 0, i, j] (+)= sum_{n, y, z} dy[n, f, y, z] x[n, c, y*sh - ph + i*dh, ...]
    mult = n_f // n_c
    tasks = n_img * n_c
    taps = kh * kw
    phase = hq * qn
    size = sh * sw * phase
    span = (ho - 1) * qn + wo
    plane_in = height * width
    plane_out = ho * wo
    zero = gf.dtype.type(0)
    rows, q0, q1, offs = _layout(height, width, kh, kw, sh, sw, ph, pw, dh, dw, hq, qn)
    partial = np.empty(n_img * n_f * taps if do_w else 0, np.float64)
    # 3x3, stride 1: the data gradient as one gather pass (_gather_3x3), dy's wide plane
    # between margins of gm zeros
    gather = do_x and sh == 1 and sw == 1 and taps == 9 and kw == 3
    gm = offs[8] if gather else 0
    for part in prange(parts):
        lo = tasks * part // parts
        hi = tasks * (part + 1) // parts
        xbuf = np.zeros(size if do_w else 0, gf.dtype)
        dbuf = np.zeros(size if do_x else 0, gf.dtype)
        wide = np.zeros(span + 2 * gm, gf.dtype)  # dy at row length Q: the junk stays 0
        for t in range(lo, hi):
            n = t // n_c
            c = t - n * n_c
            finite = True
            if do_w:
                finite = _fill(xbuf, xf, t * plane_in, width, sw, pw, phase, rows, q0, q1, True)
            if do_x and not gather:
                for v in range(size):
                    dbuf[_u(v)] = 0
            for m in range(mult):
                f = c * mult + m
                g0 = (n * n_f + f) * plane_out
                for y in range(ho):
                    for z in range(wo):
                        wide[_u(gm + y * qn + z)] = gf[_u(g0 + y * wo + z)]
                wb = f * taps
                if gather and _finite(wf, wb, taps):
                    _gather_3x3(dbuf, wide, wf, wb, span + gm, gm, offs, m > 0)
                elif gather:  # the positions the gather pass writes, zeroed first
                    if m == 0:
                        for v in range(span + gm):
                            dbuf[_u(v)] = 0
                    _scatter(dbuf, wide[gm:], wf, wb, gf, g0, taps, ho, wo, qn, span, offs)
                elif do_x:
                    _scatter(dbuf, wide, wf, wb, gf, g0, taps, ho, wo, qn, span, offs)
                if do_w:
                    p0 = (n * n_f + f) * taps
                    if finite and taps == 9 and kw == 3:
                        _dots_3x3(partial, p0, wide[gm:], xbuf, span, offs)
                        continue
                    for k in range(taps):
                        o = offs[k]
                        if finite:
                            s = zero
                            for v in range(span):
                                s += wide[_u(gm + v)] * xbuf[_u(o + v)]
                            total: float = np.float64(s)
                        else:  # only each row's Wo values: the NaN stays in its taps
                            total = 0.0
                            for y in range(ho):
                                s = zero
                                r = y * qn
                                for z in range(wo):
                                    s += wide[_u(gm + r + z)] * xbuf[_u(o + r + z)]
                                total += s
                        partial[_u(p0 + k)] = total
            if do_x:
                _drain(dbuf, df, t * plane_in, width, sw, pw, phase, rows, q0, q1, add_x)
    if do_w:
        for f in prange(n_f):
            for k in range(taps):
                total = 0.0
                for n in range(n_img):
                    total += partial[_u((n * n_f + f) * taps + k)]
                if add_w:
                    dwf[_u(f * taps + k)] += total
                else:
                    dwf[_u(f * taps + k)] = total


@cached_njit(nogil=True, inline="always")
def _scatter(dbuf, wide, wf, wb, gf, g0, taps, ho, wo, qn, span, offs):  # pragma: no cover
    # run_ij += w_ij * dy for every tap of filter wf[wb:]: over the whole wide plane when
    # the filter is finite (its junk columns then add 0), else row by row
    finite = _finite(wf, wb, taps)
    for k in range(taps):
        o = offs[k]
        wt = wf[_u(wb + k)]
        if finite:
            for v in range(span):
                dbuf[_u(o + v)] += wt * wide[_u(v)]
        else:
            for y in range(ho):
                r = o + y * qn
                g = g0 + y * wo
                for z in range(wo):
                    dbuf[_u(r + z)] += wt * gf[_u(g + z)]


@cached_njit(nogil=True, inline="always")
def _dots_3x3(partial, p0, wide, xbuf, span, offs):  # pragma: no cover - numba
    # partial[p0 + k] = sum_v wide[v] * xbuf[offs[k] + v] for the nine taps, in one loop
    o0, o1, o2, o3, o4, o5, o6, o7, o8 = (
        offs[0], offs[1], offs[2], offs[3], offs[4], offs[5], offs[6], offs[7], offs[8],
    )  # fmt: skip
    s0 = s1 = s2 = s3 = s4 = s5 = s6 = s7 = s8 = wide.dtype.type(0)
    for v in range(span):
        g = wide[_u(v)]
        s0 += g * xbuf[_u(o0 + v)]
        s1 += g * xbuf[_u(o1 + v)]
        s2 += g * xbuf[_u(o2 + v)]
        s3 += g * xbuf[_u(o3 + v)]
        s4 += g * xbuf[_u(o4 + v)]
        s5 += g * xbuf[_u(o5 + v)]
        s6 += g * xbuf[_u(o6 + v)]
        s7 += g * xbuf[_u(o7 + v)]
        s8 += g * xbuf[_u(o8 + v)]
    partial[_u(p0)] = s0
    partial[_u(p0 + 1)] = s1
    partial[_u(p0 + 2)] = s2
    partial[_u(p0 + 3)] = s3
    partial[_u(p0 + 4)] = s4
    partial[_u(p0 + 5)] = s5
    partial[_u(p0 + 6)] = s6
    partial[_u(p0 + 7)] = s7
    partial[_u(p0 + 8)] = s8


@cached_njit(nogil=True, inline="always")
def _finite(wf, wb, taps):  # pragma: no cover - numba
    # whether the filter wf[wb:wb + taps] is finite
    nan = wf.dtype.type(0)
    for k in range(taps):
        v = wf[_u(wb + k)]
        nan += v - v
    return nan == 0


@cached_njit(nogil=True, inline="always")
def _gather_3x3(dbuf, wide, wf, wb, n, gm, offs, add):  # pragma: no cover - numba
    # stride 1: dbuf[u] (+)= sum_k w_k * dy_wide[u - offs[k]], u < n, dy's wide plane at
    # wide[gm:] between zeros: _scatter's nine runs summed per position, stored once
    o0, o1, o2, o3, o4, o5, o6, o7, o8 = (
        gm - offs[0], gm - offs[1], gm - offs[2], gm - offs[3], gm - offs[4],
        gm - offs[5], gm - offs[6], gm - offs[7], gm - offs[8],
    )  # fmt: skip
    w0, w1, w2 = wf[_u(wb)], wf[_u(wb + 1)], wf[_u(wb + 2)]
    w3, w4, w5 = wf[_u(wb + 3)], wf[_u(wb + 4)], wf[_u(wb + 5)]
    w6, w7, w8 = wf[_u(wb + 6)], wf[_u(wb + 7)], wf[_u(wb + 8)]
    for u in range(n):
        v = (
            (w0 * wide[_u(o0 + u)] + w1 * wide[_u(o1 + u)] + w2 * wide[_u(o2 + u)])
            + (w3 * wide[_u(o3 + u)] + w4 * wide[_u(o4 + u)] + w5 * wide[_u(o5 + u)])
            + (w6 * wide[_u(o6 + u)] + w7 * wide[_u(o7 + u)] + w8 * wide[_u(o8 + u)])
        )
        if add:
            dbuf[_u(u)] += v
        else:
            dbuf[_u(u)] = v
