"""quantized_conv: Convolution (NCW/NCHW/NCDHW) on int8/uint8 data, int8 weights, int32 out.

Exact int32 accumulation (see _int32_op): the padded input is viewed as windows
(stride, dilate) and contracted with the weight per group through float64 BLAS.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ..nn.convolution import ConvolutionParam, infer_conv_shape
from ._int32_op import register_int32_op

OP = "_contrib_quantized_conv"


def conv_product(p: Any, data: np.ndarray, weight: np.ndarray) -> np.ndarray:
    nd = len(p.kernel)
    pads = [(0, 0), (0, 0), *((q, q) for q in p.pad)]
    x = np.pad(data, pads)
    spans = [(k - 1) * d + 1 for k, d in zip(p.kernel, p.dilate)]
    win = sliding_window_view(x, spans, axis=tuple(range(2, 2 + nd)))
    # win: (N, C, *out_full, *spans) -> strided outputs and dilated taps
    out_sel = tuple(slice(None, None, s) for s in p.stride)
    tap_sel = tuple(slice(None, None, d) for d in p.dilate)
    win = win[(slice(None), slice(None), *out_sel, *tap_sel)]
    g, f = p.num_group, weight.shape[0]
    cg, fg = data.shape[1] // g, f // g
    outs = []
    k_axes = tuple(range(2 + nd, 2 + 2 * nd))
    for i in range(g):
        w = win[:, i * cg : (i + 1) * cg]  # (N, cg, *out, *k)
        wt = weight[i * fg : (i + 1) * fg]  # (fg, cg, *k)
        y = np.tensordot(w, wt, axes=((1, *k_axes), (1, *range(2, 2 + nd))))  # (N, *out, fg)
        outs.append(np.moveaxis(y, -1, 1))
    return np.concatenate(outs, axis=1) if g > 1 else outs[0]


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
