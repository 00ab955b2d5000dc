"""Vectorisable math for CPU kernel bodies: float32 without libm calls.

numba lowers math.exp, math.asinh, math.erf, ... to one libm call per element, and a
call stops LLVM's loop vectoriser: a float32 kernel then runs one element at a time,
3-50x below memory bandwidth (arcsinh, erf, gamma at 10M elements: 0.02-0.4x np.copyto).
The functions here are written as float arithmetic, comparisons and bit casts only, so a
kernel loop over float32 compiles to AVX2/AVX-512 code, and a fused chain of them stays
one vectorised pass over memory.

    from nnvmpy.kernel import vmath
    v_asinh = vmath.asinh                # a plain global: kernel bodies rebind those

    @kernel.elementwise
    def _arcsinh(x):
        return v_asinh(x)

Each function is a device function (kernel.device_function) with a per-type CPU build:
float32 arguments run the vectorisable body below, anything else (float64, integers,
float16) runs `reference` (libm, as before); on the GPU every type runs `reference`
(CUDA's libdevice is vectorised already), and so does a call from Python. `reference` is
total: outside the domain it returns NaN (or ±inf at a pole) instead of raising, so the
CUDA simulator, which runs kernels as Python, behaves like the hardware.

Accuracy (float32; tests/kernel/test_vmath.py measures each function against a float64
reference over its whole range and checks NaN, infinities, signed zeros and subnormals
as C's float functions give them): exp, log and exp2_split (s^x for a scalar s) within
1.5 ulp, most others within 2-3 ulp, cbrt and erfinv within 4; gamma and gammaln within
3.5 (float32 with float64 only for gamma's Stirling exponent and reflection, see
gamma.py; gammaln below 0 within 3.5 ulp of its reflection's terms, which cancel next to
its negative roots). NumPy's own SIMD float32 functions allow 4 ulp. Two numba
intrinsics keep the code branch-free: `pick` (one select instruction; numba lowers
`a if c else b` to branches) and `madd` (llvm.fmuladd: an FMA where the CPU has one). The
bodies follow the classic scheme of Cephes' single-precision library (range reduction,
then a short polynomial); the coefficients are Cephes' where noted, Taylor series where
the range is small, and our own fits for erf, erfc and lgamma (tools/fit_vmath.py).
tools/bench_vmath.py times each body per element on one thread against NumPy's ufunc.

trig.py is the exception to "one body per element": float32 tan is a body valid for
|x| <= 8192 plus a block loop (`trig.tan_into`) that hands the rare larger arguments
to NumPy, since no branch-free body can reduce those modulo pi/2. blocks.py holds block
loops for erfinv, gamma and gammaln: a lighter body where a block's arguments all lie
in one region of the function.
"""

from __future__ import annotations

from . import blocks, trig
from ._dispatch import VectorFunction, calls_vector_math, vector_function
from .f32 import (
    acos_f32,
    acosh_f32,
    asin_f32,
    asinh_f32,
    atan_f32,
    atanh_f32,
    cbrt_f32,
    cosh_f32,
    erf_f32,
    erfinv_f32,
    exp2_split_f32,
    exp_f32,
    expm1_f32,
    hypot_f32,
    log1p_f32,
    log2_f32,
    log10_f32,
    log_f32,
    one_f32,
    rcbrt_f32,
    sigmoid_f32,
    sinh_f32,
    tanh_f32,
    zero_f32,
)
from .gamma import gamma_f32, gammaln_f32

acos = acos_f32
acosh = acosh_f32
asin = asin_f32
asinh = asinh_f32
atan = atan_f32
atanh = atanh_f32
cbrt = cbrt_f32
cosh = cosh_f32
erf = erf_f32
erfinv = erfinv_f32
exp = exp_f32
expm1 = expm1_f32
exp2_split = exp2_split_f32
hypot = hypot_f32
log = log_f32
one = one_f32
log1p = log1p_f32
log2 = log2_f32
log10 = log10_f32
rcbrt = rcbrt_f32
sigmoid = sigmoid_f32
sinh = sinh_f32
tanh = tanh_f32
gamma, gammaln = gamma_f32, gammaln_f32
zero = zero_f32

__all__ = [
    "VectorFunction",
    "acos",
    "acosh",
    "asin",
    "asinh",
    "atan",
    "atanh",
    "blocks",
    "calls_vector_math",
    "cbrt",
    "cosh",
    "erf",
    "erfinv",
    "exp",
    "exp2_split",
    "expm1",
    "gamma",
    "gammaln",
    "hypot",
    "log",
    "log1p",
    "log2",
    "log10",
    "one",
    "rcbrt",
    "sigmoid",
    "sinh",
    "tanh",
    "trig",
    "vector_function",
    "zero",
]
