"""Arithmetic between an array and a Python scalar (the `scalar` parameter).

Every op also answers to MXNet's CamelCase alias (`_PlusScalar` is `_plus_scalar`). As
in MXNet (`x op DType(scalar)`), a float32 array meets the scalar as float32 on the CPU
(kernel/cpu.py converts it inside the loop), so `_mod_scalar(x, 0.1)` is NumPy's
`x % np.float32(0.1)` and the loop runs at float32 vector width.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import kernel
from ..graph.grad import (
    ElemwiseGradUseIn,
    ElemwiseGradUseNone,
    ElemwiseGradUseOut,
    make_zero_grad_nodes,
)
from ..kernel import vmath
from ..registry import register_op
from ._family import ScalarParam, register_backward, register_scalar
from ._mod import floor_mod, integer_gradients_are_zero
from ._numpy_fast import _numpy_ok, numpy_compute

elementwise = kernel.elementwise
v_hypot = vmath.hypot
v_exp2_split = vmath.exp2_split
v_one, v_zero = vmath.one, vmath.zero


@elementwise
def _plus(x, s):
    return x + s


@elementwise
def _minus(x, s):
    return x - s


@elementwise
def _rminus(x, s):
    return s - x


@elementwise
def _mul(x, s):
    return x * s


@elementwise
def _div(x, s):
    return x / s


@elementwise
def _rdiv(x, s):
    return s / x


@elementwise
def _rdiv_grad(dy, x, s):  # d(s/x) = -s/x^2
    return -s * dy / (x * x)


@elementwise
def _power(x, s):
    return x**s


@elementwise
def _power_grad(dy, x, s):  # d(x^s) = s x^(s-1)
    return dy * s * x ** (s - 1)


@elementwise
def _rpower(x, s):
    return s**x


@elementwise
def _rpower_grad(dy, y, s):  # d(s^x) = s^x log(s) = y log(s)
    return dy * y * math.log(s)


@elementwise
def _maximum(x, s):  # NaN on either side propagates, as MXNet's maximum
    return x if x >= s or x != x else x * 0 + s


@elementwise
def _maximum_grad(dy, x, s):
    return dy if x >= s else dy * 0


@elementwise
def _minimum(x, s):
    return x if x <= s or x != x else x * 0 + s


@elementwise
def _minimum_grad(dy, x, s):
    return dy if x <= s else dy * 0


@elementwise
def _mod(x, s):  # x mod s with the sign of s (Python's %); 0 where s == 0, as MXNet
    return floor_mod(x, s)


@elementwise
def _mod_grad(dy, x, s):  # d(x mod s)/dx = 1 (away from the jumps)
    return dy


@elementwise
def _rmod(x, s):
    return floor_mod(s, x)


@elementwise
def _rmod_grad(dy, x, s):  # d(s mod x)/dx = -floor(s / x)
    return -dy * np.floor(s / x) if x != 0 else dy * 0


@elementwise
def _hypot(x, s):  # as _hypot in elemwise_binary.py: no overflow in x^2 + s^2
    return v_hypot(x, s)


@elementwise
def _hypot_grad(dy, x, s):  # x / hypot(x, s)
    return dy * x / v_hypot(x, s)


@elementwise
def _equal(x, s):
    return 1 if x == s else 0


@elementwise
def _greater(x, s):
    return 1 if x > s else 0


@elementwise
def _lesser(x, s):
    return 1 if x < s else 0


# name, CamelCase alias, kernel, what it returns, FGradient
_OPS: list[tuple[str, str, Any, str, Any]] = [
    ("_plus_scalar", "_PlusScalar", _plus, "x + scalar", ElemwiseGradUseNone("_copy")),
    ("_minus_scalar", "_MinusScalar", _minus, "x - scalar", ElemwiseGradUseNone("_copy")),
    ("_rminus_scalar", "_RMinusScalar", _rminus, "scalar - x", ElemwiseGradUseNone("negative")),
    # d(x*s) = s dy and d(x/s) = dy/s: the forward op with the same scalar is the gradient
    ("_mul_scalar", "_MulScalar", _mul, "x * scalar", ElemwiseGradUseNone("_mul_scalar")),
    ("_div_scalar", "_DivScalar", _div, "x / scalar", ElemwiseGradUseNone("_div_scalar")),
    (
        "_rdiv_scalar",
        "_RDivScalar",
        _rdiv,
        "scalar / x",
        ElemwiseGradUseIn("_backward_rdiv_scalar"),
    ),
    (
        "_power_scalar",
        "_PowerScalar",
        _power,
        "x ^ scalar",
        ElemwiseGradUseIn("_backward_power_scalar"),
    ),
    (
        "_rpower_scalar",
        "_RPowerScalar",
        _rpower,
        "scalar ^ x",
        ElemwiseGradUseOut("_backward_rpower_scalar"),
    ),
    (
        "_maximum_scalar",
        "_MaximumScalar",
        _maximum,
        "max(x, scalar)",
        ElemwiseGradUseIn("_backward_maximum_scalar"),
    ),
    (
        "_minimum_scalar",
        "_MinimumScalar",
        _minimum,
        "min(x, scalar)",
        ElemwiseGradUseIn("_backward_minimum_scalar"),
    ),
    (
        "_mod_scalar",
        "_ModScalar",
        _mod,
        "x mod scalar (sign of scalar; 0 where it is 0)",
        ElemwiseGradUseIn("_backward_mod_scalar"),
    ),
    (
        "_rmod_scalar",
        "_RModScalar",
        _rmod,
        "scalar mod x (sign of x; 0 where x is 0)",
        ElemwiseGradUseIn("_backward_rmod_scalar"),
    ),
    (
        "_hypot_scalar",
        "_HypotScalar",
        _hypot,
        "sqrt(x^2 + scalar^2)",
        ElemwiseGradUseIn("_backward_hypot_scalar"),
    ),
]


def _np_rpower(x: np.ndarray, s: float, out: np.ndarray) -> np.ndarray:
    return np.power(s, x, out=out)


@elementwise
def _rpower_split(x, hi, lo):  # s^x = 2^(x (hi + lo)), hi + lo = log2(s)
    return v_exp2_split(x, hi, lo)


@elementwise
def _square(x, s):
    return x * x


@elementwise
def _reciprocal(x, s):
    return v_one(x) / x


@elementwise
def _root(x, s):  # C's powf(x, 0.5): sqrt, but +0 for -0 and +inf for -inf
    return np.sqrt(x) + v_zero(x) if x != -math.inf else -x


# x^s where powf's correctly rounded result is one operation: exact and memory-bound
_EXACT_POWERS = {2.0: _square, -1.0: _reciprocal, 0.5: _root}
_F32 = np.dtype(np.float32)


def _with_fast_path(name: str, slow: Any, fast: Any) -> Any:
    """FCompute: fast(scalar, ctx, inputs, req, outputs) when it takes the call (returns
    True), else slow (the op's NumPy / kernel compute)."""

    def compute(
        attrs: Any, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
    ) -> None:
        if not fast(attrs.parsed.scalar, ctx, inputs, req, outputs):
            slow(attrs, ctx, inputs, req, outputs)

    compute.__name__ = f"compute_{name}"
    return compute


def _power_fast(s: float, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]) -> bool:
    """x ** s by one exact operation for s in _EXACT_POWERS (as DType(s), MXNet's)."""
    if not _numpy_ok(outputs[0], inputs):  # float32 / float64 CPU arrays of one shape
        return False
    kernel = _EXACT_POWERS.get(float(outputs[0].dtype.type(s)))
    if kernel is None:
        return False
    kernel.launch(ctx, outputs[0], req[0], inputs[0], s)
    return True


def _rpower_fast(s: float, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]) -> bool:
    """float32 s^x by vmath.exp2_split for a scalar 0 < s < inf other than 1 (MXNet's
    DType(s): the float32 s): NumPy's loop for a scalar base runs one element at a time
    (10M: 7.3 ms on two threads, 0.19x np.copyto)."""
    base = float(np.float32(s))
    if not (0.0 < base < math.inf and base != 1.0) or not _numpy_ok(outputs[0], inputs):
        return False
    if outputs[0].dtype != _F32:
        return False
    log2_base = math.log2(base)
    hi = float(np.float32(log2_base))
    _rpower_split.launch(ctx, outputs[0], req[0], inputs[0], hi, float(np.float32(log2_base - hi)))
    return True


# pow through NumPy's SIMD loop on the CPU: numba calls libm's pow once per element
_NUMPY: dict[str, Callable[..., Any]] = {"_power_scalar": np.power, "_rpower_scalar": _np_rpower}
_FAST = {"_power_scalar": _power_fast, "_rpower_scalar": _rpower_fast}
for _name, _alias, _fn, _what, _grad in _OPS:
    _compute = None
    if _name in _FAST:
        _slow = numpy_compute(_fn, _NUMPY[_name], ("scalar",))
        _compute = _with_fast_path(_name, _slow, _FAST[_name])
    register_scalar(_name, _fn, f"y = {_what}, element-wise.", _grad, _NUMPY.get(_name), _compute)
    register_op(_name).add_alias(_alias)

for _name, _fn in (
    ("_backward_rdiv_scalar", _rdiv_grad),
    ("_backward_power_scalar", _power_grad),
    ("_backward_rpower_scalar", _rpower_grad),
    ("_backward_maximum_scalar", _maximum_grad),
    ("_backward_minimum_scalar", _minimum_grad),
    ("_backward_mod_scalar", _mod_grad),
    ("_backward_rmod_scalar", _rmod_grad),
    ("_backward_hypot_scalar", _hypot_grad),
):
    register_backward(_name, _fn, 2, ScalarParam, ("scalar",))
integer_gradients_are_zero("_backward_mod_scalar")
integer_gradients_are_zero("_backward_rmod_scalar")

register_scalar("_equal_scalar", _equal, "y = 1 where x == scalar, else 0", make_zero_grad_nodes)
register_scalar("_greater_scalar", _greater, "y = 1 where x > scalar, else 0", make_zero_grad_nodes)
register_scalar("_lesser_scalar", _lesser, "y = 1 where x < scalar, else 0", make_zero_grad_nodes)
