"""floor_mod: MXNet's mod (the remainder with the divisor's sign; 0 for a zero divisor).

A device function shared by _mod, _mod_scalar, _rmod_scalar and broadcast_mod, written
as a - floor(a / b) * b in float64 and moved back into [0, b) (or (b, 0]) where the
rounded quotient is one off. Not Python's `%`: numba's float `%` calls libm's fmod per
element and makes the whole loop 15-75x slower than this (measured on 10M float32), and
its integer `%` raises on a zero divisor. Exact for integers below 2**53 and for floats
whose quotient a / b stays below 2**52; beyond that q * b is rounded, so the remainder
is only good to the rounding of a (fmod would be exact there).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import kernel
from ..attrs import FCompute_cpu, FCompute_gpu, FScalarFunction
from ..base import OpReqType
from ..registry import NodeAttrs, Op


@kernel.device_function
def floor_mod(a, b):
    if b == 0:
        return 0.0
    x = a * 1.0
    y = b * 1.0
    r = x - np.floor(x / y) * y
    r = r + y if r != 0 and (r < 0) != (y < 0) else r
    return r - y if abs(r) >= abs(y) else r


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
