"""kernel/numba_cuda_fixes.py: numba-cuda's float16 -> int cast truncates, and a kernel's
module is looked up and loaded under one lock. No GPU needed: the cast is read from the
PTX numba-cuda makes for sm_90, the lock with a stand-in loader (an H200 run showed both
defects: a roi's batch index 1.7 became 2, and two engine workers' first launches of one
kernel loaded its module twice)."""

from __future__ import annotations

import threading
import time

import pytest

pytest.importorskip("numba.cuda")

from nnvmpy.kernel import numba_cuda_fixes


@pytest.fixture(autouse=True)
def installed() -> None:
    numba_cuda_fixes.install()


@pytest.mark.parametrize("width", [8, 16, 32, 64])
@pytest.mark.parametrize("signed", [True, False])
def test_float16_to_integer_casts_truncate(width: int, signed: bool) -> None:
    from numba import cuda, types

    to = getattr(types, f"{'' if signed else 'u'}int{width}")

    def body(out, x):
        out[0] = to(x[0])
        out[1] = int(float(x[1]))  # float() keeps a float16 a float16

    ptx, _ = cuda.compile_ptx(body, (types.int64[:], types.float16[:]), cc=(9, 0))
    casts = [line.split()[0] for line in ptx.splitlines() if ".f16" in line and "cvt.r" in line]
    assert casts
    assert all(c.startswith("cvt.rzi.") for c in casts), casts
    assert f"cvt.rzi.{'s' if signed else 'u'}{width}.f16" in casts


def test_install_twice_wraps_get_cufunc_once() -> None:
    from numba.cuda.codegen import CUDACodeLibrary

    numba_cuda_fixes.install()
    assert CUDACodeLibrary.get_cufunc is numba_cuda_fixes._serial_get_cufunc
    assert numba_cuda_fixes._original_get_cufunc is not numba_cuda_fixes._serial_get_cufunc


def test_first_launches_on_many_threads_load_one_at_a_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """numba-cuda's get_cufunc checks its cache, then loads: a stand-in that takes a while
    to load must never be inside twice at once, and each library is loaded once."""
    from numba.cuda.codegen import CUDACodeLibrary

    inside, most, loads = [0], [0], []
    count = threading.Lock()

    class Library:
        def __init__(self) -> None:
            self.loaded = None

    def slow_get_cufunc(self: Library) -> str:
        if self.loaded is None:
            with count:
                inside[0] += 1
                most[0] = max(most[0], inside[0])
            time.sleep(0.01)
            loads.append(self)
            self.loaded = f"function of {id(self)}"
            with count:
                inside[0] -= 1
        return self.loaded

    monkeypatch.setattr(numba_cuda_fixes, "_original_get_cufunc", slow_get_cufunc)
    libraries = [Library() for _ in range(3)]
    barrier = threading.Barrier(12)
    got: list[str] = []

    def launch(library: Library) -> None:
        barrier.wait()
        got.append(CUDACodeLibrary.get_cufunc(library))

    threads = [threading.Thread(target=launch, args=(libraries[i % 3],)) for i in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert most[0] == 1
    assert sorted(map(id, loads)) == sorted(map(id, libraries))
    assert len(got) == 12
    assert len(set(got)) == 3
