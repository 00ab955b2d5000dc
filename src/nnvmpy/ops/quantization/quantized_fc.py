"""quantized_fully_connected: FullyConnected on int8/uint8 data and int8 weights, int32 out.

out = data . weight^T (+ rescaled bias) exactly, with the range of _int32_op; data is
flattened to (N, -1) unless flatten=False (then the last axis is contracted). One
float64 GEMM (BLAS / cuBLAS) on the widened operands.
"""

from __future__ import annotations

from typing import Any

from ...base import OpReqType
from ..nn.fully_connected import FullyConnectedParam, _fc_shape
from ._int32_op import register_int32_op

OP = "_contrib_quantized_fully_connected"


def fc_product(ctx: Any, name: str, p: Any, data: Any, weight: Any, acc: Any, res: Any) -> None:
    """acc = data . weight^T, data flattened to (N, -1) (or its last axis contracted)."""
    from nnvmpy.ops.matrix import gemm

    k, f = weight.shape[1], weight.shape[0]
    gemm(ctx, acc.reshape(-1, f), OpReqType.kWriteTo, data.reshape(-1, k), False, weight, True)


register_int32_op(
    OP,
    "FullyConnected on int8 (data: int8 or uint8) operands with exact int32 sums. Each operand "
    "comes with a float32 (min, max) pair giving the real range its codes stand for; the "
    "outputs are the int32 result and the real range of that result's codes (one int32 "
    "step = the product of the operands' steps), for requantize / dequantize.\n\n"
    ".. Note::\n    This operator only supports forward propagation. DO NOT use it in "
    "training.\n",
    FullyConnectedParam,
    _fc_shape,
    fc_product,
    bias_axis=-1,
)
