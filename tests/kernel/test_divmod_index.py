"""kernel.launch.divmod_index: (a // b, a % b) with 32-bit unsigned division where a and b
fit, Python's floor semantics elsewhere; the same answers as Python's divmod from the
plain function, the CPU build and a GPU kernel (the simulator in CI)."""

from __future__ import annotations

import numpy as np
import pytest

from nnvmpy.base import gpu
from nnvmpy.kernel import parallel_for
from nnvmpy.kernel.launch import divmod_index

U32 = 2**32
CASES = [
    (0, 1), (7, 1), (0, 5), (17, 5), (4, 5), (U32 - 1, 1), (U32 - 1, 3), (U32 - 1, U32 - 1),
    (U32 - 2, U32 - 1), (12544 * 64 - 1, 12544), (U32, 7), (U32 + 5, 3), (2**40 + 3, 2**20),
    (5, U32), (2**62, U32 + 1), (-1, 3), (-7, 2), (-(2**40), 3),
]  # fmt: skip


@pytest.mark.parametrize(("a", "b"), CASES)
def test_python_and_cpu_builds_are_pythons_divmod(a, b):
    assert divmod_index(a, b) == divmod(a, b)
    q, r = divmod_index.compiled("cpu")(np.int64(a), np.int64(b))
    assert (int(q), int(r)) == divmod(a, b)


@parallel_for
def _divmod_all(i, a, b, q, r):
    q[i], r[i] = divmod_index(a[i], b[i])


@pytest.mark.gpu
def test_gpu_build_is_pythons_divmod():
    from numba import cuda

    a = np.array([c[0] for c in CASES], np.int64)
    b = np.array([c[1] for c in CASES], np.int64)
    q, r = cuda.device_array(a.size, np.int64), cuda.device_array(a.size, np.int64)
    _divmod_all.launch(gpu(0), a.size, cuda.to_device(a), cuda.to_device(b), q, r)
    got = list(zip(q.copy_to_host().tolist(), r.copy_to_host().tolist(), strict=True))
    assert got == [divmod(x, y) for x, y in CASES]
