"""CPU Convolution forward in bfloat16 with float32 accumulation (1-D and 2-D).

The weight arrives packed by `_PackBFloat16` (ops/amp_bf16.py): bfloat16 bits laid out
(F, kh, kw, cg), so group g's operand is the (Fg, kh*kw*cg) row block and tap row i's
(Fg, kw*cg) matrix is a column block of it (leading dimension kh*kw*cg). The data is
rounded to bfloat16 by the kernel that packs it (_bf16.py), chunk by chunk of images,
each chunk about TARGET_COLUMNS GEMM columns wide:

    stride 1, cg >= 32, enough       padded images, kw copies each shifted by one tap
    columns, little padding wasted   column (kw*cg rows), then one GEMM per tap row over
                                     a shifted view (_conv_shift.py's layout): kh*kw/kw
                                     times less copying than im2col, inner dimension kw*cg
    everything else                  the chunk rounded once, then im2col copies of its
                                     bits, rows tap-major (i, j, c) as the packed weight;
                                     one GEMM per group

The GEMMs write float32, which the float32 kernels of _im2col.py move into the NCHW
output with the bias (`_scatter`, `_unpad_out`); an epilogue (residual, relu) runs on
each chunk right after, as in _conv_cpu.py. Depthwise convolutions run as grouped
im2col GEMMs (tiny ones: bfloat16 gains nothing on them). No Winograd: its transforms
would be rounded to bfloat16 too, a different and less accurate numerics.

ResNet-18 v1 at batch 32 on this machine's 2 cores (MKL, AMX): the 3x3 layers run
1.3-1.7x faster than the float32 path (Winograd / shifted GEMMs), the 7x7 stem about
1.2x slower (147-deep GEMMs, memory-bound either way). The kernels around the GEMMs stay
serial: they are memory-bound, and splitting them over both cores measured no gain.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ...base import NNVMError, OpReqType
from . import _bf16, _conv_shift
from . import _im2col as k
from ._conv_cpu import MAX_WORKSPACE_BYTES, ConvShape, planar

_NULL, _ADD = OpReqType.kNullOp, OpReqType.kAddTo
_ALIGN = 64
#: a chunk takes whole images until its GEMMs have about this many columns (within the
#: workspace). Much wider than the float32 path's 2048: in a network every GEMM call
#: starts cold (its operands were just written by the packing kernel on one core, MKL's
#: other thread wakes up), and fewer, wider calls amortise that. ResNet-18 v1 at batch
#: 32, whole forward: 1024 columns 489-510 ms, 4096: 422-451, 8192: 391-412, 16384:
#: 367-378, 32768: 340-350, 65536: 359-361.
TARGET_COLUMNS = 32768
#: the padded layout computes (Hp*Wp) / (Ho*Wo) times the useful columns; up to this ratio
#: the shifted GEMMs win over im2col, whose copies cost more next to a bfloat16 GEMM than
#: next to a float32 one (ResNet-18's 7x7 maps, ratio 1.65, batch 32: 8.2 ms against 12.7)
MAX_PADDED_RATIO = 1.8

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


def _images(s: ConvShape, columns: int, column_bytes: int) -> int:
    """Images per chunk: GEMMs about TARGET_COLUMNS wide, scratch within the workspace."""
    budget = min(s.workspace_mb << 20, MAX_WORKSPACE_BYTES)
    by_memory = budget // max(1, columns * column_bytes)
    return max(1, min(s.n, by_memory, TARGET_COLUMNS // max(1, columns)))


def use_shifted(s: ConvShape) -> bool:
    """_conv_shift.supported's rule (stride 1, enough channels and columns, little
    padding wasted) with 2-byte operands; the BLAS check is the bfloat16 GEMM's own."""
    plane = (s.h + 2 * s.win.ph) * (s.w + 2 * s.win.pw)
    return (
        s.win.sh == 1
        and s.win.sw == 1
        and s.cg >= _conv_shift.MIN_CHANNELS
        and plane <= MAX_PADDED_RATIO * s.hw
        and _images(s, plane, s.cg * 2 * s.win.kw + s.fg * 4) * plane >= _conv_shift.MIN_COLUMNS
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
        from nnvmpy.ops.nn.inference import apply_epilogue

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
    nb = _images(s, s.hw, s.rows * 2 + s.fg * 4 + 2)
    image = s.c * s.h * s.w
    col_all, tmp_all, x_all = _carve(
        res,
        [
            ((s.rows * nb * s.hw,), np.uint16),
            ((s.fg * nb * s.hw,), np.float32),
            ((nb * image,), np.uint16),
        ],
    )
    for n0 in range(0, s.n, nb):
        m = min(nb, s.n - n0)
        cols = m * s.hw
        col = col_all[: s.rows * cols].reshape(s.rows, cols)
        tmp = tmp_all[: s.fg * cols].reshape(s.fg, cols)
        xb = x_all[: m * image].reshape(m, s.c, s.h, s.w)
        _bf16._round(x4u[n0 : n0 + m].reshape(-1), xb.reshape(-1))  # once, not per tap
        direct = m == 1 and not add  # one image: the GEMM writes straight into out
        for g in range(s.groups):
            # rows tap-major, (i*kw + j)*cg + c, as the packed weight's columns
            tap_major = (1, 0, 0, 1, 0, s.hw, s.cg)
            k._im2col(xb, col, 0, m, g * s.cg, s.cg, *win.args(), *tap_major)
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
    """Padded bfloat16 images, kw copies shifted by one tap column each, then one GEMM
    per tap row (beta = 1 after the first) per group.

    Row j*cg + c of the stack xs holds channel c's padded images read j*dw columns later,
    so tap row i is one GEMM of inner dimension kw*cg: the packed weight's column block
    (F, i, :, :) by xs[:, i*dh*Wp : ... + L]. With inner dimension cg (one GEMM per tap)
    MKL's bfloat16 GEMM runs about half as fast at cg = 64..128 (ResNet's first layers).
    """
    win = s.win
    plane = (s.h + 2 * win.ph) * (s.w + 2 * win.pw)
    nb = _images(s, plane, s.cg * 2 * win.kw + s.fg * 4)
    lay = _conv_shift._Layout(s, nb)
    ld_y = nb * lay.plane
    k_row = win.kw * s.cg  # inner dimension of a tap row's GEMM
    xs, yp = _carve(res, [((k_row, lay.ld), np.uint16), ((s.fg, ld_y), np.float32)])
    for n0 in range(0, s.n, nb):
        m = min(nb, s.n - n0)
        width = m * lay.plane - lay.span
        for g in range(s.groups):
            pad = (win.ph, win.pw, lay.wp, lay.plane, lay.tail, win.kw, win.dw)
            _bf16._pad_images(x4u, xs, n0, m, g * s.cg, s.cg, *pad)
            rows = wb[g * s.fg : (g + 1) * s.fg]
            for i in range(win.kh):
                a = rows[:, i * k_row : (i + 1) * k_row]
                off = i * win.dh * lay.wp
                _bf16.gemm(a, xs[:, off : off + width], yp[:, :width], 0.0 if i == 0 else 1.0)
            where = (n0, m, g * s.fg, s.fg, lay.wp, lay.plane, has_bias, add)
            k._unpad_out(yp, out4, beta, *where)
        if after is not None:
            after(n0, m)


__all__ = ["forward", "use_shifted"]
