"""quantized_conv: Convolution (NCW/NCHW/NCDHW) on int8/uint8 data, int8 weights, int32 out.

Exact int32 accumulation (see _int32_op) in float64: on the GPU the float Convolution's
im2col + GEMM driver (cuBLAS), on the CPU a window view contracted by BLAS.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ...kernel.launch import WRITE, is_gpu
from ..nn.convolution import ConvolutionParam, infer_conv_shape
from ._int32_op import register_int32_op

OP = "_contrib_quantized_conv"


def conv_product(ctx: Any, name: str, p: Any, data: Any, weight: Any, acc: Any, res: Any) -> None:
    """acc = conv(data, weight) in float64. GPU: the float Convolution's im2col + GEMM
    driver (cuBLAS). CPU: the padded input viewed as windows (stride, dilate), contracted
    with the weight per group by BLAS; the GPU driver's per-element im2col kernel ran 6x
    slower there (80 against 12 ms for 64 x 56 x 56, 3x3, 64 filters)."""
    if is_gpu(ctx):
        from nnvmpy.ops.nn import _im2col_cuda
        from nnvmpy.ops.nn.convolution import conv_shape

        s = conv_shape(p, tuple(data.shape), weight.shape[0], tuple(acc.shape[2:]))
        _im2col_cuda.forward(ctx, name, s, data, weight, None, acc, WRITE, res)
        return
    nd = len(p.kernel)
    x = np.pad(data, [(0, 0), (0, 0), *((q, q) for q in p.pad)])
    spans = [(k - 1) * d + 1 for k, d in zip(p.kernel, p.dilate)]
    win = sliding_window_view(x, spans, axis=tuple(range(2, 2 + nd)))
    # win: (N, C, *out_full, *spans) -> strided outputs and dilated taps
    out_sel = tuple(slice(None, None, s) for s in p.stride)
    tap_sel = tuple(slice(None, None, d) for d in p.dilate)
    win = win[(slice(None), slice(None), *out_sel, *tap_sel)]
    g, f = p.num_group, weight.shape[0]
    cg, fg = data.shape[1] // g, f // g
    k_axes = tuple(range(2 + nd, 2 + 2 * nd))
    for i in range(g):
        w = win[:, i * cg : (i + 1) * cg]  # (N, cg, *out, *k)
        wt = weight[i * fg : (i + 1) * fg]  # (fg, cg, *k)
        y = np.tensordot(w, wt, axes=((1, *k_axes), (1, *range(2, 2 + nd))))  # (N, *out, fg)
        acc[:, i * fg : (i + 1) * fg] = np.moveaxis(y, -1, 1)


register_int32_op(
    OP,
    "Convolution on int8 (data: int8 or uint8) operands with exact int32 sums. Each operand "
    "comes with a float32 (min, max) pair giving the real range its codes stand for; the "
    "outputs are the int32 result and the real range of that result's codes (one int32 "
    "step = the product of the operands' steps), for requantize / dequantize.\n\n"
    ".. Note::\n    This operator only supports forward propagation. DO NOT use it in "
    "training.\n",
    ConvolutionParam,
    infer_conv_shape,
    conv_product,
    bias_axis=1,
)
