"""The simulator's shared arrays: one per call site for every thread of a block, even when
the threads ask at the same moment (kernel/sim_shared_fix.py)."""

from __future__ import annotations

import os
import threading
import time
from typing import Any

import numpy as np
import pytest

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(
        os.environ.get("NUMBA_ENABLE_CUDASIM") != "1", reason="the simulator's own fix"
    ),
]

THREADS = 8


def _arrays_from_racing_threads(shared: Any) -> list[Any]:
    """What THREADS threads get from one call site of shared.array, all asking at once."""
    start = threading.Barrier(THREADS)
    got: list[Any] = [None] * THREADS

    def ask(k: int) -> None:
        start.wait()
        got[k] = shared.array(4, np.float64)  # one line: one call site for every thread

    threads = [threading.Thread(target=ask, args=(k,)) for k in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return got


def _slow_empty(shape: Any, dtype: Any) -> np.ndarray:
    time.sleep(0.02)  # every thread reaches the look-up before the first array is stored
    return np.empty(shape, dtype)


def test_threads_asking_at_once_share_one_array(monkeypatch: pytest.MonkeyPatch) -> None:
    from numba.cuda.simulator.kernelapi import FakeCUDAShared

    from nnvmpy.kernel import cuda, sim_shared_fix

    cuda.get_cuda("test")  # installs the fix
    monkeypatch.setattr(sim_shared_fix, "_new_array", _slow_empty)
    got = _arrays_from_racing_threads(FakeCUDAShared(0))
    assert all(a is got[0] for a in got)
    assert got[0].shape == (4,)
    assert got[0].dtype == np.float64


def test_the_simulators_own_look_up_races(monkeypatch: pytest.MonkeyPatch) -> None:
    """numba-cuda's FakeCUDAShared.array, given the same slow allocation, hands the threads
    different arrays: the race the fix closes is real in the installed numba-cuda (if this
    fails, the simulator has fixed it and sim_shared_fix can go)."""
    import types

    from numba.cuda.simulator import kernelapi
    from numba.cuda.simulator.kernelapi import FakeCUDAShared

    from nnvmpy.kernel import cuda, sim_shared_fix

    cuda.get_cuda("test")
    shared = FakeCUDAShared(0)
    slow_np = types.SimpleNamespace(empty=_slow_empty)
    monkeypatch.setattr(kernelapi, "np", slow_np)  # what the original allocates with
    monkeypatch.setattr(FakeCUDAShared, "array", sim_shared_fix._original)
    got = _arrays_from_racing_threads(shared)
    assert len({id(a) for a in got}) > 1


def test_each_call_site_keeps_its_own_array() -> None:
    from numba.cuda.simulator.kernelapi import FakeCUDAShared

    from nnvmpy.kernel import cuda

    cuda.get_cuda("test")
    shared = FakeCUDAShared(0)
    a = shared.array(3, np.int32)
    b = shared.array((2, 2), np.float32)
    assert a is not b
    assert (a.shape, a.dtype, b.shape, b.dtype) == ((3,), np.int32, (2, 2), np.float32)
    again = [shared.array(3, np.int32) for _ in range(2)]  # one site, called twice
    assert again[0] is again[1]


def test_a_block_reduction_sums_right_under_a_fine_switch_interval() -> None:
    """The block reduction kernel (shared memory, barriers), run with CPython switching
    threads every microsecond (as the multi_sum_sq failure needed), gives NumPy's sums
    each time."""
    import sys

    from numba import cuda

    import nnvmpy as nv
    from nnvmpy.engine.base import RunContext
    from nnvmpy.ops import _reduce_cuda
    from nnvmpy.resource import OpContext

    ctx = OpContext(True, RunContext(nv.gpu(0), None), [])
    x = np.random.default_rng(0).normal(size=(3, 300))
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        for _ in range(3):
            out = cuda.to_device(np.zeros((3, 1)))
            _reduce_cuda.reduce_gpu(ctx, out, False, cuda.to_device(x), (3, 1), "sum", 1.0)
            np.testing.assert_allclose(out.copy_to_host()[:, 0], x.sum(axis=1), rtol=1e-12)
    finally:
        sys.setswitchinterval(old)
