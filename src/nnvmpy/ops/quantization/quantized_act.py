"""quantized_act: Activation on int8/uint8 codes. Only relu, as in MXNet: max(code, 0) is
the code of max(x, 0) under a symmetric range, so the range passes through."""

from __future__ import annotations

from ...param import Parameter, field
from ._kernels import relu_codes
from ._passthrough import register_passthrough

OP = "_contrib_quantized_act"


class QuantizedActParam(Parameter):
    act_type = field(
        str, enum=["relu"], describe="Activation function to be applied (quantized: relu only)."
    )


register_passthrough(
    OP,
    "Activation operator for input and output data type of int8 or uint8. The input and "
    "output data comes with min and max thresholds for quantizing the float32 data into "
    "int8; only `act_type='relu'` is supported, and the range passes through.\n\n"
    ".. Note::\n    This operator only supports forward propagation. DO NOT use it in "
    "training.\n",
    relu_codes,
    lambda shape: shape,
    QuantizedActParam,
)
