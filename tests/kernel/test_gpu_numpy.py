"""The numpy stand-in of GPU builds (kernel/_gpu_numpy.py).

numba-cuda has no lowering for np.floor/ceil/trunc/fix/rint/cbrt; on real hardware every
kernel body using them failed to compile (an H200 run: _mod, floor/ceil/round/rint/trunc,
the random pdfs, rcbrt's gradients). GPU builds get a module whose names are CUDA device
functions written with `math`. These tests need no GPU: the rebinding, and the bodies
run as Python on finite values against NumPy (the device build was checked on the H200).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from nnvmpy.kernel import _gpu_numpy
from nnvmpy.kernel import cuda as kcuda
from nnvmpy.kernel.device import for_device

pytest.importorskip("numba.cuda")


def _body(x):
    return np.floor(x) + np.sqrt(x)


def test_gpu_builds_see_the_stand_in_and_cpu_builds_numpy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(kcuda._state, "simulator", False)
    gpu_copy = for_device(_body, "gpu")
    shim = gpu_copy.__globals__["np"]
    assert shim is _gpu_numpy.module()
    assert set(_gpu_numpy.OVERRIDDEN) <= set(vars(shim))  # CUDA device functions
    assert shim.maximum is np.maximum  # in numba-cuda's own ufunc table
    assert shim.float32 is np.float32
    assert for_device(_body, "cpu") is _body


def test_the_simulator_keeps_numpy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(kcuda._state, "simulator", True)
    assert for_device(_body, "gpu") is _body  # Python's math.floor would return ints there


def test_rint_is_one_rounding_instruction_no_fma_can_reach() -> None:
    """np.rint in a GPU build is libdevice's rint (cvt.rni: ties to even, as NumPy): the
    earlier x - floor(x) let NVVM fuse the product that made x into that subtraction, and
    on an H200 a code at a tie (-17.5 as rounded) came out -17 instead of -18."""
    from numba import cuda, types

    rint = _gpu_numpy.module().rint.py_func
    ptx, _ = cuda.compile_ptx(rint, (types.float64,), device=True, cc=(9, 0))
    body = [line.split()[0] for line in ptx.splitlines() if line.startswith("\t") and line.split()]
    rounding = [op for op in body if op.startswith(("cvt", "sub", "add", "fma", "mul"))]
    assert rounding == ["cvt.rni.f64.f64"], ptx


@pytest.mark.parametrize(
    ("fn", "ref"),
    [(_gpu_numpy._floor, np.floor), (_gpu_numpy._ceil, np.ceil), (_gpu_numpy._trunc, np.trunc)],
)
def test_floor_ceil_trunc_agree_with_numpy(fn, ref) -> None:
    xs = np.array([-2.7, -2.0, -0.3, 0.0, 0.3, 2.0, 2.7])
    assert [fn(float(x)) for x in xs] == [float(v) for v in ref(xs)]
    assert math.isclose(fn(-0.3) + 0.0, ref(-0.3) + 0.0)


_FINITE = np.array([-7.5, -2.0, -1.0, -0.5, -0.0, 0.0, 0.25, 1.0, 2.0, 3.0, 7.5])
_SPECIAL = np.array([np.nan, np.inf, -np.inf])


@pytest.mark.parametrize(
    ("name", "ref", "xs"),
    [
        ("abs", np.abs, np.concatenate([_FINITE, _SPECIAL])),
        ("negative", np.negative, np.concatenate([_FINITE, _SPECIAL])),
        ("square", np.square, np.concatenate([_FINITE, _SPECIAL])),
        ("reciprocal", np.reciprocal, np.concatenate([_FINITE[_FINITE != 0], _SPECIAL])),
        ("sqrt", np.sqrt, np.abs(_FINITE)),
        ("exp", np.exp, _FINITE),
        ("exp2", np.exp2, _FINITE),
        ("expm1", np.expm1, _FINITE),
        ("log1p", np.log1p, np.abs(_FINITE)),
        ("isfinite", np.isfinite, np.concatenate([_FINITE, _SPECIAL])),
        ("isinf", np.isinf, np.concatenate([_FINITE, _SPECIAL])),
        ("signbit", np.signbit, np.concatenate([_FINITE, _SPECIAL])),
        ("sign", np.sign, np.concatenate([_FINITE, _SPECIAL])),
    ],
)
def test_unary_stand_ins_agree_with_numpy(name, ref, xs) -> None:
    body = _gpu_numpy._MATH_BODIES[name]
    got = np.array([body(float(x)) for x in xs], dtype=np.float64)
    want = ref(xs).astype(np.float64)
    np.testing.assert_allclose(got, want, rtol=1e-15, atol=0)
    np.testing.assert_array_equal(np.signbit(got[got == 0]), np.signbit(want[want == 0]))


_PAIRS = [(x, y) for x in (-7.5, -3.0, -0.5, 0.0, 2.0, 5.25) for y in (-2.0, -0.75, 0.5, 1.0, 3.0)]


@pytest.mark.parametrize(
    ("name", "ref"),
    [
        ("add", np.add),
        ("subtract", np.subtract),
        ("multiply", np.multiply),
        ("power", np.power),
        ("float_power", np.float_power),
        ("copysign", np.copysign),
        ("fmod", np.fmod),
        ("remainder", np.remainder),
        ("floor_divide", np.floor_divide),
        ("logaddexp", np.logaddexp),
        ("logaddexp2", np.logaddexp2),
    ],
)
def test_binary_stand_ins_agree_with_numpy(name, ref) -> None:
    body = _gpu_numpy._MATH_BODIES[name]
    xs = np.array([p[0] for p in _PAIRS])
    ys = np.array([p[1] for p in _PAIRS])
    if name in ("power", "float_power"):  # NaN or inf in NumPy (and on a GPU), errors in Python
        keep = ((xs > 0) | (ys == np.round(ys))) & ((xs != 0) | (ys > 0))
        xs, ys = xs[keep], ys[keep]
    got = np.array([body(float(x), float(y)) for x, y in zip(xs, ys)])
    with np.errstate(all="ignore"):
        want = ref(xs, ys)
    np.testing.assert_allclose(got, want, rtol=1e-14, atol=1e-300)


def test_floor_divide_and_remainder_keep_numpy_edge_cases() -> None:
    fd, rem = _gpu_numpy._floor_divide, _gpu_numpy._remainder
    assert fd(1.0, 0.1) == np.floor_divide(1.0, 0.1) == 9.0  # not floor(1 / 0.1) = 10
    assert rem(-1.0, 3.0) == np.remainder(-1.0, 3.0) == 2.0
    assert math.copysign(1.0, rem(-3.0, 3.0)) == np.copysign(1.0, np.remainder(-3.0, 3.0))
    assert _gpu_numpy._logaddexp(-math.inf, -math.inf) == -math.inf
    assert math.isnan(_gpu_numpy._logaddexp(math.nan, 1.0))
