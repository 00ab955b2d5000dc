"""argmax / argmin along the last axis on the CPU's vector row passes (_argmax_cpu.py),
against NumPy's np.argmax / np.argmin, which share the op's rules: the first occurrence
wins a tie and the first NaN beats every number (for argmin too).

Rows of 16 values and more take the row passes: 16 running extremes over 16-value steps,
then a scan for the first position holding the extreme (or the first NaN). The data are
small integers (ties everywhere) with NaNs, an all-NaN row and an all-equal row
(line_data.arg_data); row lengths hit the 16-value steps exactly, with a tail, and long.
FCompute is called directly, so write, add and null requests are checked.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from fcompute_call import run_fcompute
from line_data import ARG_TYPES, A, N, arg_data, want_arg

import nnvmpy as nv


@pytest.mark.parametrize(("dtype", "req"), ARG_TYPES)
@pytest.mark.parametrize("shape", [(7, 16), (5, 33), (3, 4, 1000), (300, 70)])
@pytest.mark.parametrize("largest", [True, False])
def test_last_axis_rows_match_numpy(shape: tuple, dtype: Any, req: Any, largest: bool) -> None:
    x = arg_data(shape, dtype, seed=len(shape) + shape[-1], axis=-1)
    want = want_arg(x, -1, largest).astype(np.float64)
    start = np.full(want.shape, 3.0)
    name = "argmax" if largest else "argmin"
    (got,) = run_fcompute(name, {"axis": -1}, [x], [start.astype(x.dtype)], [req], "cpu")
    expect = start if req == N else want + start if req == A else want
    np.testing.assert_array_equal(got.astype(np.float64), expect)


def test_signed_zeros_and_infinities_keep_the_first_occurrence() -> None:
    x = np.zeros((4, 40), np.float32)
    x[0] = -0.0
    x[0, 5] = 0.0  # -0 and +0 are equal: position 0 wins both ways
    x[1] = -np.inf
    x[1, 20] = np.inf
    x[2, 30] = -np.inf
    x[3, 39] = np.nan
    x[3, 17] = np.nan
    for f, largest in ((nv.nd.argmax, True), (nv.nd.argmin, False)):
        got = f(nv.nd.array(x), axis=1).asnumpy()
        np.testing.assert_array_equal(got, want_arg(x, 1, largest).astype(np.float32))
