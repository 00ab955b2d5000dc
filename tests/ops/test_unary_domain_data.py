"""Element-wise math ops on data outside their domain, at the edges and overflowing.

On the CPU, float32 arrays of these ops run kernel.vmath's loops (NumPy's float32 loops
turn scalar on such elements: see ops/_numpy_fast.numpy_but_float32), in one thread or
in parallel by size; float64 arrays take NumPy's. All must give NumPy's values (float64
reference, rounded): NaN where the function is undefined, infinities where it overflows,
signed zeros kept.
"""

from __future__ import annotations

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy.ops._numpy_fast import PARALLEL_CUTOFF

SPECIAL = np.array(
    [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 1e-30, -1e-30, 1e-40, 3e38, -3e38,
     100.0, -100.0, 90.0, -90.0, np.inf, -np.inf, np.nan],
    np.float32,
)  # fmt: skip

OPS = {
    "arcsin": np.arcsin,
    "sinh": np.sinh,
    "cosh": np.cosh,
    "arcsinh": np.arcsinh,
    "arccosh": np.arccosh,
    "arctanh": np.arctanh,
    "log2": np.log2,
    "log10": np.log10,
    "log1p": np.log1p,
    "cbrt": np.cbrt,
}


def _data(n: int, dtype: type) -> np.ndarray:
    """The special values, then uniform values over (-4, 4) and a wide log range."""
    rng = np.random.default_rng(7)
    wide = np.exp(rng.uniform(-80, 80, n)) * rng.choice([-1.0, 1.0], n)
    x = np.where(np.arange(n) % 2 == 0, rng.uniform(-4, 4, n), wide)
    x[: SPECIAL.size] = SPECIAL
    return x.astype(dtype)


@pytest.mark.parametrize("name", sorted(OPS))
@pytest.mark.parametrize(("n", "dtype"), [(PARALLEL_CUTOFF + 1000, np.float32), (999, np.float32),
                                          (PARALLEL_CUTOFF + 1000, np.float64)])  # fmt: skip
def test_values_match_numpy_on_any_data(name: str, n: int, dtype: type) -> None:
    x = _data(n, dtype)
    got = getattr(nv.nd, name)(nv.nd.array(x, dtype=dtype)).asnumpy()
    with np.errstate(all="ignore"):
        want = OPS[name](x.astype(np.float64)).astype(dtype)
    assert got.dtype == dtype
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=f"{name}: NaN places")
    finite = np.isfinite(want)
    np.testing.assert_array_equal(got[~finite], want[~finite], err_msg=f"{name}: inf / NaN")
    zero = finite & (want == 0)
    np.testing.assert_array_equal(np.signbit(got[zero]), np.signbit(want[zero]))
    rtol = 4e-7 if dtype == np.float32 else 1e-13
    np.testing.assert_allclose(got[finite], want[finite], rtol=4 * rtol, atol=0, err_msg=name)
