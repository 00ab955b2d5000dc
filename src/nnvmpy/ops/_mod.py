"""floor_mod: MXNet's mod (the remainder with the divisor's sign; 0 for a zero divisor).

A device function shared by _mod, _mod_scalar, _rmod_scalar and broadcast_mod. MXNet
computes it with fmod in double (mshadow_op::mod); here it is a - floor(a / b) * b, which
LLVM vectorises (numba's float `%` calls libm's fmod per element: 15-75x slower on 10M
float32). For float32 operands (MXNet passes the scalar of `_mod_scalar` as DType(scalar),
and so does kernel/cpu.py) the quotient is a float32 division (a vector division of 16
float32 costs a third of two of 8 float64: _mod_scalar went from 0.55 to 0.36 ns per
element on one core) and the rest is float64, exact while |a / b| < 2**24: the floor of
the rounded quotient is one too big at most, q * b has at most 24 + 24 bits, and the
remainder is rounded to float32 once at the store, as MXNet rounds its double result. So
the results are MXNet's bit for bit, also where that rounding gives b itself (float32
-1e-10 % 1 is 1.0 in MXNet, NumPy and here). Beyond 2**24 (|a| > 1.7e7 |b|) q is off by
more than one and the result is not the exact remainder (fmod's would be; an exact one
needs a loop per element, which no vector loop has); float64 operands divide in float64
and are good to the rounding of q * b (about 1e-16 |a|); integers below 2**53 are exact.
Edge values as MXNet 1.9.1 gives them (measured with .mxenv;
tests/ops/test_scalar_math_dtype.py): x % 0 is 0 (also for inf/nan x); inf % y and x % nan
are nan; x % ±inf is x where x has the divisor's sign (or is 0) and ±inf otherwise; an
exact multiple gives -0.0 where both operands are negative or a is -0.0 with b > 0
(fmod's sign), else +0.0. LLVM turns every case into a select, so the float32 loops stay
vectorised.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import kernel
from ..attrs import FCompute_cpu, FCompute_gpu, FScalarFunction
from ..base import OpReqType
from ..registry import NodeAttrs, Op

INF = math.inf


@kernel.device_function
def floor_mod(a, b):
    if b == 0:
        return 0.0
    q = np.floor(a / b)  # float32 for float32 operands, else float64
    x = a * 1.0  # float64: exact for float32 and for integers below 2**53
    y = b * 1.0
    r = x - q * y
    # the rounded quotient reached the next integer: r has the wrong sign, one y short
    r = r + y if (r != 0) & ((r < 0) != (y < 0)) else r
    # x % ±inf: fmod(x, inf) is x, moved by y where x has the other sign
    finite_x_inf_y = (abs(y) == INF) & (abs(x) < INF)
    r = (x if (x == 0) | ((x < 0) == (y < 0)) else y) if finite_x_inf_y else r
    # an exact multiple: MXNet's zero has fmod's sign (-0.0 % 3 is -0.0, -2 % -1 is -0.0)
    return (x * 0.0 if (x < 0) == (y < 0) else 0.0) if r == 0 else r


def integer_gradients_are_zero(name: str) -> None:
    """Backward op `name` of a mod writes zeros for integer dtypes, as MXNet's does.

    MXNet 1.9.1 gives integer `mod` (elemwise, broadcast and scalar, lhs and rhs) no
    gradient: a head gradient of 1 or 2 through int32 % int32 comes back as 0 (measured).
    The float kernels stay as they are; this wraps the op's FCompute on both devices and
    keeps the op out of fusion (a scalar body cannot see the dtype).
    """
    from ._index_kernels import zero

    op = Op.get(name)
    for key in (FCompute_cpu, FCompute_gpu):
        float_compute = op.get_attr(key)
        if float_compute is None:
            continue

        def compute(
            attrs: NodeAttrs,
            ctx: Any,
            inputs: list[Any],
            req: list[Any],
            outputs: list[Any],
            float_compute: Any = float_compute,
        ) -> None:
            if np.dtype(outputs[0].dtype).kind not in "iub":
                float_compute(attrs, ctx, inputs, req, outputs)
                return
            for out, r in zip(outputs, req):
                if OpReqType.parse(r) in (OpReqType.kWriteTo, OpReqType.kWriteInplace):
                    zero(ctx, out)

        op.set_attr(key, compute, plevel=11)
    if op.get_attr(FScalarFunction) is not None:
        op.set_attr(FScalarFunction, lambda attrs: None, plevel=11)
