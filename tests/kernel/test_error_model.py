"""CPU kernels follow C/NumPy float semantics, as MXNet's do: x/0 is inf or nan, not an error.

numba's default ('python') error model raises ZeroDivisionError inside a kernel, which would
surface as an EngineError at the next wait; MXNet users expect IEEE results.
"""

from __future__ import annotations

import numpy as np

import nnvmpy as nv


def test_float_division_by_zero_gives_ieee_results() -> None:
    a = nv.nd.array([1.0, 0.0, -1.0])
    zero = nv.nd.zeros((3,))
    with np.errstate(divide="ignore", invalid="ignore"):
        want = np.array([1.0, 0.0, -1.0], np.float32) / np.float32(0)
    np.testing.assert_array_equal((a / zero).asnumpy(), want)
    np.testing.assert_array_equal((a / 0.0).asnumpy(), want)
    np.testing.assert_array_equal((1.0 / zero).asnumpy(), np.full(3, np.inf, np.float32))


def test_parallel_for_bodies_use_the_same_error_model() -> None:
    @nv.kernel.parallel_for
    def _ratio(i, out, x, y):
        out[i] = x[i] / y[i]

    out = np.empty(2)
    _ratio.launch(nv.cpu(), 2, out, np.array([1.0, -2.0]), np.zeros(2))
    np.testing.assert_array_equal(out, [np.inf, -np.inf])
