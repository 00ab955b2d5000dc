"""Stride-1 convolution as a sum of shifted GEMMs over a padded input: no im2col.

Lay a chunk of nb padded images side by side, each channel one row of the stack
xp (cg, nb*Hp*Wp). For tap (i, j) the matrix xp[:, off:off + L] with off = i*dh*Wp + j*dw
holds, at column q = b*Hp*Wp + y*Wp + x, the input that tap reads for output (b, y, x).
So, with W_t = w[:, :, i, j] (F, cg):

    yp (F, L)        = sum_t W_t @ xp[:, off_t : off_t + L]               (beta = 1 after t = 0)
    dxp[:, off_t:..] += W_t^T @ dyp          dW_t = dyp @ xp[:, off_t : off_t + L]^T

where yp/dyp use the same padded column layout (columns with x >= Wo or y >= Ho are
junk in yp, and zero in dyp so they contribute nothing). Reading past a row's last
plane lands only in junk columns, so each row gets (kw-1)*dw zeros of tail. Compared
with im2col this never writes the kh*kw-times larger column matrix: the GEMMs read the
padded input in place, through cblas with a leading dimension and beta (_blas.py).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...base import OpReqType
from . import _blas
from ._im2col import _pad_grad, _pad_images, _unpad_grad, _unpad_out

_NULL, _ADD = OpReqType.kNullOp, OpReqType.kAddTo


class _Layout:
    """Sizes of the padded column layout for one convolution and chunk size."""

    def __init__(self, s: Any, nb: int) -> None:
        win = s.win
        self.hp, self.wp = s.h + 2 * win.ph, s.w + 2 * win.pw
        self.plane = self.hp * self.wp
        self.tail = (win.kw - 1) * win.dw
        self.nb = nb
        self.ld = nb * self.plane + self.tail  # row length of xp / dxp
        self.span = (win.kh - 1) * win.dh * self.wp  # L = m * plane - span columns
        self.taps = [
            (i * win.kw + j, i * win.dh * self.wp + j * win.dw)
            for i in range(win.kh)
            for j in range(win.kw)
        ]


def _chunk(s: Any, itemsize: int, per_image_rows: int) -> int:
    from nnvmpy.ops.nn._conv_cpu import MAX_WORKSPACE_BYTES, TARGET_COLUMNS

    plane = (s.h + 2 * s.win.ph) * (s.w + 2 * s.win.pw)
    budget = min(s.workspace_mb << 20, MAX_WORKSPACE_BYTES)
    by_memory = budget // max(1, per_image_rows * plane * itemsize)
    return max(1, min(s.n, by_memory, TARGET_COLUMNS // plane))


#: the padded layout computes (Hp*Wp) / (Ho*Wo) times the useful columns; above this ratio
#: (small images: 7x7 wastes 65%) im2col is faster (measured on ResNet-18's layers).
MAX_PADDED_RATIO = 1.4


# Each tap is a GEMM with inner dimension cg; with few input channels those GEMMs are
# too skinny and one im2col GEMM (inner dimension cg*kh*kw) wins (LeNet's 1 and 20).
MIN_CHANNELS = 32


# Each tap's GEMM is as wide as a chunk of padded images; below this many columns
# (ResNet-18 at batch 1: 28x28 and 14x14 maps) the kh*kw narrow GEMMs lose to one im2col
# GEMM with a kh*kw times deeper inner dimension, copies included.
MIN_COLUMNS = 1500


def supported(s: Any, dtype: Any) -> bool:
    """Stride 1, a cblas gemm for this dtype, wide GEMMs, not much of the padding wasted."""
    plane = (s.h + 2 * s.win.ph) * (s.w + 2 * s.win.pw)
    return (
        s.win.sh == 1
        and s.win.sw == 1
        and s.cg >= MIN_CHANNELS
        and plane <= MAX_PADDED_RATIO * s.hw
        and _chunk(s, np.dtype(dtype).itemsize, 2 * s.cg + s.fg) * plane >= MIN_COLUMNS
        and _blas.available(dtype)
    )


def _weights_by_tap(s: Any, w: Any, space: Any) -> Any:
    """(kh*kw, F, cg) copy of w (F, cg, kh, kw): one contiguous (F, cg) matrix per tap."""
    win = s.win
    wt = space.reshape(win.kh * win.kw, s.f, s.cg)
    np.copyto(wt.reshape(win.kh, win.kw, s.f, s.cg), w.transpose(2, 3, 0, 1))
    return wt


def forward(
    s: Any, x: Any, w: Any, bias: Any, has_bias: bool, out: Any, add: bool, res: Any
) -> None:
    """out (=|+=) conv(x, w) + bias for a stride-1 convolution."""
    nb = _chunk(s, x.itemsize, 2 * s.cg + s.fg)
    lay = _Layout(s, nb)
    n_wt = s.win.kh * s.win.kw * s.f * s.cg
    space = res.get_space((s.cg * lay.ld + s.fg * nb * lay.plane + n_wt,), x.dtype)
    xp = space[: s.cg * lay.ld].reshape(s.cg, lay.ld)
    ld_y = nb * lay.plane
    yp = space[s.cg * lay.ld : s.cg * lay.ld + s.fg * ld_y].reshape(s.fg, ld_y)
    wt = _weights_by_tap(s, w, space[space.size - n_wt :])
    for n0 in range(0, s.n, nb):
        m = min(nb, s.n - n0)
        width = m * lay.plane - lay.span
        for g in range(s.groups):
            _pad_images(x, xp, n0, m, g * s.cg, s.cg, s.win.ph, s.win.pw, lay.wp, lay.plane)
            xp[:, m * lay.plane : m * lay.plane + lay.tail] = 0
            for t, off in lay.taps:
                _blas.gemm(
                    False, False, s.fg, width, s.cg,
                    wt, (t * s.f + g * s.fg) * s.cg, s.cg,
                    xp, off, lay.ld,
                    0.0 if t == 0 else 1.0,
                    yp, 0, ld_y,
                )  # fmt: skip
            _unpad_out(yp, out, bias, n0, m, g * s.fg, s.fg, lay.wp, lay.plane, has_bias, add)


def backward(
    s: Any, dy: Any, x: Any, w: Any, dx: Any, dw: Any, req_x: Any, req_w: Any, res: Any
) -> None:
    """dx and dw (per req) of a stride-1 convolution from dy (N, F, Ho, Wo).

    x and dw may be None when req_w is null (dx likewise when req_x is).
    """
    nb = _chunk(s, dy.itemsize, 3 * s.cg + s.fg)
    lay = _Layout(s, nb)
    ld_y = nb * lay.plane
    n_wt = s.win.kh * s.win.kw * s.f * s.cg
    sizes = [s.cg * lay.ld, s.cg * lay.ld, s.fg * ld_y, n_wt, n_wt]
    space = res.get_space((sum(sizes),), dy.dtype)
    parts, start = [], 0
    for size in sizes:
        parts.append(space[start : start + size])
        start += size
    xp, dxp = parts[0].reshape(s.cg, lay.ld), parts[1].reshape(s.cg, lay.ld)
    dyp, wt = parts[2].reshape(s.fg, ld_y), _weights_by_tap(s, w, parts[3])
    dwt = parts[4]
    for n0 in range(0, s.n, nb):
        m = min(nb, s.n - n0)
        width = m * lay.plane - lay.span
        for g in range(s.groups):
            _pad_grad(dy, dyp, n0, m, g * s.fg, s.fg, lay.wp, lay.plane)
            if req_w != _NULL:
                _pad_images(x, xp, n0, m, g * s.cg, s.cg, s.win.ph, s.win.pw, lay.wp, lay.plane)
                xp[:, m * lay.plane : m * lay.plane + lay.tail] = 0
                for t, off in lay.taps:
                    _blas.gemm(
                        False, True, s.fg, s.cg, width,
                        dyp, 0, ld_y,
                        xp, off, lay.ld,
                        0.0 if n0 == 0 else 1.0,
                        dwt, (t * s.f + g * s.fg) * s.cg, s.cg,
                    )  # fmt: skip
            if req_x != _NULL:
                dxp[:, : m * lay.plane + lay.tail] = 0
                for t, off in lay.taps:
                    _blas.gemm(
                        True, False, s.cg, width, s.fg,
                        wt, (t * s.f + g * s.fg) * s.cg, s.cg,
                        dyp, 0, ld_y,
                        1.0,
                        dxp, off, lay.ld,
                    )  # fmt: skip
                add = req_x == _ADD
                _unpad_grad(
                    dxp, dx, n0, m, g * s.cg, s.cg, s.win.ph, s.win.pw, lay.wp, lay.plane, add
                )
    if req_w != _NULL:
        grad = dwt.reshape(s.win.kh, s.win.kw, s.f, s.cg).transpose(2, 3, 0, 1)
        if req_w == _ADD:
            dw += grad
        else:
            np.copyto(dw, grad)
