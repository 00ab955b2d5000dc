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
    assert shim.sqrt is np.sqrt
    assert shim.float32 is np.float32
    assert for_device(_body, "cpu") is _body


def test_the_simulator_keeps_numpy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(kcuda._state, "simulator", True)
    assert for_device(_body, "gpu") is _body  # Python's math.floor would return ints there


def test_rint_rounds_half_to_even_as_numpy() -> None:
    xs = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5, -3.49, 2.51, 7.0, -0.2, 1e6 + 0.5])
    got = np.array([_gpu_numpy._rint(float(x)) for x in xs])
    np.testing.assert_array_equal(got, np.rint(xs))


@pytest.mark.parametrize(
    ("fn", "ref"),
    [(_gpu_numpy._floor, np.floor), (_gpu_numpy._ceil, np.ceil), (_gpu_numpy._trunc, np.trunc)],
)
def test_floor_ceil_trunc_agree_with_numpy(fn, ref) -> None:
    xs = np.array([-2.7, -2.0, -0.3, 0.0, 0.3, 2.0, 2.7])
    assert [fn(float(x)) for x in xs] == [float(v) for v in ref(xs)]
    assert math.isclose(fn(-0.3) + 0.0, ref(-0.3) + 0.0)
