"""Numba CPU kernels of the standalone im2col and col2im ops (im2col_ops.py).

The layout is MXNet's, for every image at once: x is viewed as (N*C, S0, S1, S2) and the
columns as (N*C, K0*K1*K2, L0*L1*L2), one spatial axis of 1 or 2 padded in front to
three (size, kernel, stride and dilate 1, pad 0: one block position, one tap), so

    col[m, (a*K1 + b)*K2 + c, (u*L1 + v)*L2 + z]
        = x[m, u*s0 - p0 + a*d0, v*s1 - p1 + b*d1, z*s2 - p2 + c*d2]   (0 outside x)

im2col: one task per column row (m, tap): for each (u, v) an output row of L2 values,
zeros where the tap falls in the padding and, inside, one contiguous copy (stride 1) or a
strided gather: no division per element. col2im: one task per image plane m, adding the
rows of its K taps back into the plane (the plane stays in cache; only its own task
writes it, so no atomics). Both are parallel over the tasks; below SERIAL_CUTOFF
elements they run on the calling thread (the *_serial kernels, the same bodies).

The one-body kernels of im2col_ops.py (an element per item, several divisions each) run
on the GPU. Imported on the first CPU launch (this module imports numba).
"""

from __future__ import annotations

from numba import prange

from .. import kernel
from ..kernel.cpu import cached_njit
from .nn._uindex import u as _u


@cached_njit(nogil=True)
def _valid_range(pad_off, step, size, out):
    # [lo, hi) of the positions z in [0, out) with 0 <= z*step - pad_off < size
    lo = max(0, -((-pad_off) // step))
    hi = min(out, (size - 1 + pad_off) // step + 1)
    return lo, max(lo, hi)


@cached_njit(nogil=True, inline="always")
def _tap_window(geo, tap):
    # tap's offsets (a, b, c) in the kernel and, per output axis, the [lo, hi) of the
    # block positions where it falls inside x
    s0, s1, s2, _k0, k1, k2, st0, st1, st2, d0, d1, d2, p0, p1, p2, l0, l1, l2 = geo
    a = tap // (k1 * k2)
    b = (tap // k2) % k1
    c = tap % k2
    u_lo, u_hi = _valid_range(p0 - a * d0, st0, s0, l0)
    v_lo, v_hi = _valid_range(p1 - b * d1, st1, s1, l1)
    z_lo, z_hi = _valid_range(p2 - c * d2, st2, s2, l2)
    return a, b, c, u_lo, u_hi, v_lo, v_hi, z_lo, z_hi


@cached_njit(nogil=True, inline="always")
def _im2col_rows(xf, cf, geo, add, r0, r1):  # pragma: no cover - numba
    # column rows r in [r0, r1), r = m*K + tap (module doc); geo as _geometry packs it
    s0, s1, s2, k0, k1, k2, st0, st1, st2, d0, d1, d2, p0, p1, p2, l0, l1, l2 = geo
    nk = k0 * k1 * k2
    nl = l0 * l1 * l2
    plane = s0 * s1 * s2
    for r in range(r0, r1):
        m = r // nk
        a, b, c, u_lo, u_hi, v_lo, v_hi, z_lo, z_hi = _tap_window(geo, r % nk)
        row = r * nl
        for u in range(l0):
            for v in range(l1):
                dst = row + (u * l1 + v) * l2
                if u < u_lo or u >= u_hi or v < v_lo or v >= v_hi:
                    if not add:
                        for z in range(l2):
                            cf[_u(dst + z)] = 0
                    continue
                if not add:
                    for z in range(z_lo):
                        cf[_u(dst + z)] = 0
                    for z in range(z_hi, l2):
                        cf[_u(dst + z)] = 0
                # src + z*st2 is x's element at z (inside for z in [z_lo, z_hi))
                src = (
                    m * plane
                    + ((u * st0 - p0 + a * d0) * s1 + v * st1 - p1 + b * d1) * s2
                    + c * d2
                    - p2
                )
                if st2 == 1:
                    if add:
                        for z in range(z_lo, z_hi):
                            cf[_u(dst + z)] += xf[_u(src + z)]
                    else:
                        for z in range(z_lo, z_hi):
                            cf[_u(dst + z)] = xf[_u(src + z)]
                elif add:
                    for z in range(z_lo, z_hi):
                        cf[_u(dst + z)] += xf[_u(src + z * st2)]
                else:
                    for z in range(z_lo, z_hi):
                        cf[_u(dst + z)] = xf[_u(src + z * st2)]


@cached_njit(nogil=True, inline="always")
def _col2im_planes(cf, xf, geo, add, m0, m1):  # pragma: no cover - numba
    # image planes m in [m0, m1) (+)= the sum of the column entries im2col copied from them
    s0, s1, s2, k0, k1, k2, st0, st1, st2, d0, d1, d2, p0, p1, p2, l0, l1, l2 = geo
    nk = k0 * k1 * k2
    nl = l0 * l1 * l2
    plane = s0 * s1 * s2
    for m in range(m0, m1):
        base = m * plane
        if not add:
            for q in range(plane):
                xf[_u(base + q)] = 0
        for tap in range(nk):
            a, b, c, u_lo, u_hi, v_lo, v_hi, z_lo, z_hi = _tap_window(geo, tap)
            row = (m * nk + tap) * nl
            for u in range(u_lo, u_hi):
                for v in range(v_lo, v_hi):
                    src = row + (u * l1 + v) * l2
                    dst = (
                        base
                        + ((u * st0 - p0 + a * d0) * s1 + v * st1 - p1 + b * d1) * s2
                        + c * d2
                        - p2
                    )
                    if st2 == 1:
                        for z in range(z_lo, z_hi):
                            xf[_u(dst + z)] += cf[_u(src + z)]
                    else:
                        for z in range(z_lo, z_hi):
                            xf[_u(dst + z * st2)] += cf[_u(src + z)]


@kernel.cpu_kernel(parallel=False)
def _im2col_serial(xf, cf, geo, add):
    # cf (+)= the columns of xf (flat arrays, module doc), on the calling thread
    nk = geo[3] * geo[4] * geo[5]
    _im2col_rows(xf, cf, geo, add, 0, xf.size // (geo[0] * geo[1] * geo[2]) * nk)


@kernel.cpu_kernel
def _im2col_team(xf, cf, geo, add, parts):
    # the same over `parts` ranges of column rows, in parallel
    rows = xf.size // (geo[0] * geo[1] * geo[2]) * (geo[3] * geo[4] * geo[5])
    for p in prange(parts):
        _im2col_rows(xf, cf, geo, add, rows * p // parts, rows * (p + 1) // parts)


@kernel.cpu_kernel(parallel=False)
def _col2im_serial(cf, xf, geo, add):
    # xf (+)= the columns cf summed back into place (module doc), on the calling thread
    _col2im_planes(cf, xf, geo, add, 0, xf.size // (geo[0] * geo[1] * geo[2]))


@kernel.cpu_kernel
def _col2im_team(cf, xf, geo, add, parts):
    # the same over `parts` ranges of image planes, in parallel
    planes = xf.size // (geo[0] * geo[1] * geo[2])
    for p in prange(parts):
        _col2im_planes(cf, xf, geo, add, planes * p // parts, planes * (p + 1) // parts)
