"""CPU Convolution forward in bfloat16 with float32 accumulation (1-D and 2-D).

The weight arrives packed by `_PackBFloat16` (ops/amp_bf16.py): bfloat16 bits laid out
(F, kh, kw, cg), so group g's GEMM operand is the (Fg, kh*kw*cg) row block and tap t's
(Fg, cg) matrix is a column block of it with leading dimension kh*kw*cg. The data is
rounded to bfloat16 by the kernel that packs it (_bf16.py), chunk by chunk of images:

    stride 1, wide maps, cg >= 32     padded images xp (cg, nb*Hp*Wp) once, then one GEMM
                                      per tap over a shifted view (_conv_shift.py's
                                      layout): kh*kw times less packing than im2col
    everything else                   im2col columns, rows tap-major (i, j, c) to match
                                      the packed weight; one GEMM per group

The GEMMs write float32 and the float32 kernels of _im2col.py scatter them into the
NCHW output with the bias (`_scatter`, `_unpad_out`); an epilogue (residual, relu) runs
on each chunk right after, as in _conv_cpu.py. Depthwise convolutions run as grouped
im2col GEMMs here (tiny ones: bfloat16 gains nothing on them). No Winograd: its
transforms would round the transformed values, a different (less accurate) numerics.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ...base import NNVMError, OpReqType
from . import _bf16, _conv_shift
from . import _im2col as k
from ._conv_cpu import ConvShape, planar

_NULL, _ADD = OpReqType.kNullOp, OpReqType.kAddTo
_ALIGN = 64

After = Callable[[int, int], None] | None


def _carve(res: Any, parts: list[tuple[tuple[int, ...], Any]]) -> list[Any]:
    """Arrays of these (shape, dtype) from one temp space, each 64-byte aligned."""
    sizes = [int(np.prod(shape)) * np.dtype(dt).itemsize for shape, dt in parts]
    starts, total = [], 0
    for size in sizes:
        starts.append(total)
        total += -(-size // _ALIGN) * _ALIGN
    space = res.get_space((total + _ALIGN,), np.uint8)
    skip = -space.ctypes.data % _ALIGN
    return [
        space[skip + a : skip + a + n].view(dt).reshape(shape)
        for a, n, (shape, dt) in zip(starts, sizes, parts)
    ]


def use_shifted(s: ConvShape) -> bool:
    """_conv_shift.supported's rule (stride 1, enough channels and columns, little
    padding wasted) with 2-byte operands; the BLAS check is the bfloat16 GEMM's own."""
    plane = (s.h + 2 * s.win.ph) * (s.w + 2 * s.win.pw)
    return (
        s.win.sh == 1
        and s.win.sw == 1
        and s.cg >= _conv_shift.MIN_CHANNELS
        and plane <= _conv_shift.MAX_PADDED_RATIO * s.hw
        and _conv_shift._chunk(s, 2, 2 * s.cg + s.fg) * plane >= _conv_shift.MIN_COLUMNS
    )


def forward(
    s: ConvShape,
    x: Any,
    w_bits: Any,
    bias: Any,
    out: Any,
    req: OpReqType,
    res: Any,
    epilogue: tuple[Any, bool] | None = None,
) -> None:
    """out (=|+=) conv(x, w) + bias from float32 x (N, C, 1, H, W) and the packed bits of w.

    `epilogue` = (residual or None, relu): out = relu?(conv + bias + residual), per chunk
    (not with req 'add').
    """
    if req == _NULL:
        return
    if not s.planar:
        raise NNVMError("Convolution: bfloat16 compute takes 1-D and 2-D kernels only")
    has_bias = bias is not None
    beta = bias if has_bias else np.zeros(1, np.float32)
    add = req == _ADD
    x4u = planar(x).view(np.uint32)  # the kernels read float32 bits
    wb = w_bits.reshape(s.f, s.rows)
    after: After = None
    if epilogue is not None:
        from .inference import apply_epilogue

        residual, relu = epilogue
        out3 = out.reshape(s.n, s.f, s.hw)
        res3 = None if residual is None else residual.reshape(s.n, s.f, s.hw)

        def after(n0: int, m: int) -> None:
            apply_epilogue(None, out3, None, res3, relu, (n0 * s.f, (n0 + m) * s.f))

    if use_shifted(s):
        _shifted(s, x4u, wb, beta, has_bias, planar(out), add, res, after)
    else:
        _columns(s, x4u, wb, beta, has_bias, out.reshape(s.n, s.f, s.hw), add, res, after)


def _columns(
    s: ConvShape,
    x4u: Any,
    wb: Any,
    beta: Any,
    has_bias: bool,
    out3: Any,
    add: bool,
    res: Any,
    after: After,
) -> None:
    """im2col (as bfloat16 bits) + one GEMM per group, chunk by chunk of images."""
    win = s.win
    nb = s.chunk(4, s.rows // 2 + s.fg + 1)
    col_all, tmp_all = _carve(
        res, [((s.rows * nb * s.hw,), np.uint16), ((s.fg * nb * s.hw,), np.float32)]
    )
    for n0 in range(0, s.n, nb):
        m = min(nb, s.n - n0)
        cols = m * s.hw
        col = col_all[: s.rows * cols].reshape(s.rows, cols)
        tmp = tmp_all[: s.fg * cols].reshape(s.fg, cols)
        direct = m == 1 and not add  # one image: the GEMM writes straight into out
        for g in range(s.groups):
            _bf16._im2col(
                x4u, col, n0, m, g * s.cg, s.cg, win.kh, win.kw, win.sh, win.sw,
                win.ph, win.pw, win.dh, win.dw, win.ho, win.wo,
            )  # fmt: skip
            wg = wb[g * s.fg : (g + 1) * s.fg]
            if direct:
                _bf16.gemm(wg, col, out3[n0, g * s.fg : (g + 1) * s.fg])
            else:
                _bf16.gemm(wg, col, tmp)
                k._scatter(tmp, out3, beta, n0, m, g * s.fg, s.fg, has_bias, add)
        if direct and has_bias:
            k._add_bias(out3, beta, n0, 1)
        if after is not None:
            after(n0, m)


def _shifted(
    s: ConvShape,
    x4u: Any,
    wb: Any,
    beta: Any,
    has_bias: bool,
    out4: Any,
    add: bool,
    res: Any,
    after: After,
) -> None:
    """Padded bfloat16 images + one GEMM per tap (beta = 1 after the first) per group."""
    win = s.win
    nb = _conv_shift._chunk(s, 2, 2 * s.cg + s.fg)
    lay = _conv_shift._Layout(s, nb)
    ld_y = nb * lay.plane
    xp, yp = _carve(res, [((s.cg, lay.ld), np.uint16), ((s.fg, ld_y), np.float32)])
    for n0 in range(0, s.n, nb):
        m = min(nb, s.n - n0)
        width = m * lay.plane - lay.span
        for g in range(s.groups):
            _bf16._pad_images(
                x4u, xp, n0, m, g * s.cg, s.cg, win.ph, win.pw, lay.wp, lay.plane, lay.tail
            )
            rows = wb[g * s.fg : (g + 1) * s.fg]
            for t, off in lay.taps:
                tap = rows[:, t * s.cg : (t + 1) * s.cg]
                _bf16.gemm(tap, xp[:, off : off + width], yp[:, :width], 0.0 if t == 0 else 1.0)
            k._unpad_out(yp, out4, beta, n0, m, g * s.fg, s.fg, lay.wp, lay.plane, has_bias, add)
        if after is not None:
            after(n0, m)


__all__ = ["forward", "use_shifted"]
