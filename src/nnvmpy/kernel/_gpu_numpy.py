"""NumPy as GPU device code sees it: `np` in a kernel body, rebound for its CUDA build.

numba-cuda lowers `math`'s functions but its ufunc table has no np.floor, np.ceil,
np.trunc, np.fix, np.rint or np.cbrt (nor, in numba-cuda 0.30, np.exp, np.sqrt, np.abs,
np.power, np.add and 24 more): a body using them compiled on the CPU and ran on
numba's simulator (plain Python) but failed to compile on a real GPU (KeyError: <ufunc
'floor'>; found on an H200, where _mod, floor/ceil/round/rint/trunc/fix, the random
pdfs and the rcbrt gradients all failed). `kernel.device.for_device(fn, "gpu")` gives a
body this module in place of numpy: these names are CUDA device functions written with
`math` (whose floor/ceil/trunc return floats on the GPU), every other name is numpy's.
Not used on the simulator, where Python's math.floor returns an int and raises on inf.
"""

from __future__ import annotations

import math
import threading
import types
from typing import Any

import numpy as np

_lock = threading.Lock()
_module: list[types.ModuleType] = []


def _floor(x):
    return math.floor(x)


def _ceil(x):
    return math.ceil(x)


def _trunc(x):
    return math.trunc(x)


# numba-cuda 0.30's ufunc table has none of these either (tools/gpu_compile_check.py
# found np.exp failing there): each is NumPy's scalar formula, with `math` and operators.
# + - * / and sqrt computed in float64 and rounded once to float32 give float32's own
# result (double rounding is innocuous for them at 53 >= 2 * 24 + 2 bits).
def _abs(x):
    return abs(x)


def _add(x, y):
    return x + y


def _subtract(x, y):
    return x - y


def _multiply(x, y):
    return x * y


def _negative(x):
    return -x


def _positive(x):
    return +x


def _square(x):
    return x * x


def _reciprocal(x):  # floats (an integer x gives 1 / x as a float)
    return 1.0 / x


def _sqrt(x):
    return math.sqrt(x)


def _exp(x):
    return math.exp(x)


def _exp2(x):
    return 2.0**x


def _expm1(x):
    return math.expm1(x)


def _log1p(x):
    return math.log1p(x)


def _power(x, y):
    return x**y


def _float_power(x, y):
    return math.pow(x, y)


def _copysign(x, y):
    return math.copysign(x, y)


def _fmod(x, y):
    return math.fmod(x, y)


def _remainder(x, y):  # the divisor's sign, as np.remainder (a zero too)
    r = math.fmod(x, y)
    if r == 0:
        return math.copysign(0.0, y)
    if (r < 0) != (y < 0):
        r += y
    return r


def _floor_divide(x, y):  # NumPy's npy_divmod: floor_divide(1, 0.1) is 9, not 10
    m = math.fmod(x, y)
    if y == 0:
        return x / y
    d = (x - m) / y
    if m != 0 and ((y < 0) != (m < 0)):
        d -= 1.0
    f = math.floor(d)
    if d - f > 0.5:
        f += 1.0
    return f


def _isfinite(x):
    return math.isfinite(x)


def _isinf(x):
    return math.isinf(x)


def _signbit(x):
    return math.copysign(1.0, x) < 0


def _sign(x):  # NaN stays NaN, ±0 gives 0
    if x > 0:
        return 1.0
    if x < 0:
        return -1.0
    return x * 0.0 + 0.0


def _logaddexp(x, y):  # NumPy's npy_logaddexp
    if x == y:  # both infinite of one sign, or equal
        return x + 0.6931471805599453
    t = x - y
    if t > 0:
        return x + math.log1p(math.exp(-t))
    if t <= 0:
        return y + math.log1p(math.exp(t))
    return t  # NaN


def _logaddexp2(x, y):
    if x == y:
        return x + 1.0
    t = x - y
    if t > 0:
        return x + math.log1p(2.0 ** (-t)) * 1.4426950408889634
    if t <= 0:
        return y + math.log1p(2.0**t) * 1.4426950408889634
    return t


def _ldexp(x, n):
    return x * 2.0**n


#: name -> Python body of each scalar stand-in built with `math` (see above)
_MATH_BODIES: dict[str, Any] = {
    "abs": _abs,
    "absolute": _abs,
    "fabs": _abs,
    "add": _add,
    "subtract": _subtract,
    "multiply": _multiply,
    "negative": _negative,
    "positive": _positive,
    "square": _square,
    "reciprocal": _reciprocal,
    "sqrt": _sqrt,
    "exp": _exp,
    "exp2": _exp2,
    "expm1": _expm1,
    "log1p": _log1p,
    "power": _power,
    "float_power": _float_power,
    "copysign": _copysign,
    "fmod": _fmod,
    "remainder": _remainder,
    "mod": _remainder,
    "floor_divide": _floor_divide,
    "isfinite": _isfinite,
    "isinf": _isinf,
    "signbit": _signbit,
    "sign": _sign,
    "logaddexp": _logaddexp,
    "logaddexp2": _logaddexp2,
    "ldexp": _ldexp,
}


def module() -> types.ModuleType:
    """The stand-in numpy module (built once, on the first GPU build)."""
    if not _module:
        with _lock:
            if not _module:
                _module.append(_build())
    return _module[0]


def _build() -> types.ModuleType:
    from numba import cuda, float64
    from numba.cuda import libdevice

    def cbrt(x):  # libdevice's, in float64 (math.cbrt is not lowered)
        return libdevice.cbrt(float64(x))

    def rint(x):  # one instruction (cvt.rni): _rint's x - floor(x) let NVVM fuse the
        return libdevice.rint(float64(x))  # product that made x into an FMA (ties moved)

    device = cuda.jit(device=True)
    overrides: dict[str, Any] = {
        "floor": device(_floor),
        "ceil": device(_ceil),
        "trunc": device(_trunc),
        "fix": device(_trunc),
        "rint": device(rint),
        "cbrt": device(cbrt),
        **{name: device(body) for name, body in _MATH_BODIES.items()},
    }
    shim = types.ModuleType("nnvmpy.kernel._gpu_numpy.numpy")
    shim.__dict__.update(overrides)
    shim.__getattr__ = lambda name: getattr(np, name)  # type: ignore[method-assign]
    return shim


OVERRIDDEN = frozenset({"floor", "ceil", "trunc", "fix", "rint", "cbrt", *_MATH_BODIES})

__all__ = ["OVERRIDDEN", "module"]
