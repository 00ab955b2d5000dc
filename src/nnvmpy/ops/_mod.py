"""floor_mod: MXNet's mod (the remainder with the divisor's sign; 0 for a zero divisor).

A device function shared by _mod, _mod_scalar, _rmod_scalar and broadcast_mod. MXNet
computes it with fmod in double (mshadow_op::mod); here it is a - floor(a / b) * b, which
LLVM vectorises (numba's float `%` calls libm's fmod per element: 15-75x slower on 10M
float32). For float32 operands (MXNet passes the scalar of `_mod_scalar` as DType(scalar),
and so does kernel/cpu.py) the quotient is a float32 division (a vector division of 16
float32 costs a third of two of 8 float64: _mod_scalar went from 0.55 to 0.36 ns per
element on one core) and the rest is exact while |a / b| < 2**24: the floor of the
rounded quotient is one too big at most, q * b has at most 24 + 24 bits, and the
remainder is rounded to float32 once, as MXNet rounds its double result (the generic
body in float64; the CPU's float32 body with one fused multiply-add, see floor_mod). So
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

from ..attrs import FCompute_cpu, FCompute_gpu, FScalarFunction
from ..base import OpReqType
from ..kernel.vmath._dispatch import fma, pick, vector_function
from ..registry import NodeAttrs, Op

INF = math.inf
F = np.float32
ZERO, F_INF = F(0), F(INF)


def _floor_mod_any(a, b):
    """floor_mod for every type (float64, integers; float32 on the GPU and from Python)."""
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


@vector_function(_floor_mod_any)
def floor_mod(a, b):
    """float32 floor_mod on the CPU, bit for bit _floor_mod_any's results (tested on
    random values over 180 binades and the edge values): the remainder is one fused
    multiply-add r = fma(-q, b, a), a - q b rounded once, and the fix-ups are float32 (16
    lanes) instead of float64 (8). In cache, single thread, loaded machine: 0.58 -> 0.26
    ns per element for an array divisor, 0.38 -> 0.20 for a scalar one (a float32
    division alone costs 0.17); broadcast_mod's row loop 1.43 -> 0.62 at 10M.

    Why the same: where a - q b is exact in float64 (it is below 2|b| and a multiple of
    the smaller of a's and b's ulps: at most 53 bits unless |a| < 2^-29 |b|), both round
    that exact value once to float32. Otherwise a is so small beside b that q is 0 or -1
    and the exact a or a + b lies within 2^-5 ulp of a or b: no tie, both give a or b.
    The wrong-sign correction applies where q was one too big: then |r| < |b| is exact in
    float32 (or r = a, where a / b underflowed to -0), and r + b is one rounding of the
    same sum in both (or b in both, as above)."""
    q = np.floor(a / b)
    r = fma(-q, b, a)
    neg_b = b < ZERO
    r = pick((r != ZERO) & ((r < ZERO) != neg_b), r + b, r)
    finite_a_inf_b = (abs(b) == F_INF) & (abs(a) < F_INF)
    r = pick(finite_a_inf_b, pick((a == ZERO) | ((a < ZERO) == neg_b), a, b), r)
    r = pick(r == ZERO, pick((a < ZERO) == neg_b, a * ZERO, ZERO), r)
    return pick(b == ZERO, ZERO, r)


def integer_gradients_are_zero(name: str) -> None:
    """Backward op `name` of a mod writes zeros for integer dtypes, as MXNet's does.

    MXNet 1.9.1 gives integer `mod` (elemwise, broadcast and scalar, lhs and rhs) no
    gradient: a head gradient of 1 or 2 through int32 % int32 comes back as 0 (measured).
    The float kernels stay as they are; this wraps the op's FCompute on both devices and
    keeps the op out of fusion (a scalar body cannot see the dtype).
    """
    from nnvmpy.ops._index_kernels import zero

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
