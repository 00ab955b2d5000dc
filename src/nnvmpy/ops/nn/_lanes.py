"""A convolution's chunks of images on several threads, each with one-thread GEMMs.

Why. An im2col convolution alternates a serial copy (im2col, numba, one thread) with a
GEMM that BLAS runs on every core: while one chunk's columns are copied the other core
idles. ResNet-18's 7x7/2 stem at batch 32 spent ~16 of its 57 ms in the copy. Giving
each thread whole chunks instead (its own copy, then its own GEMM on that thread alone)
keeps both cores busy: 57 -> 31 ms for the stem, 21.5 -> 13.6 for the 64->128 3x3/2
layer (MKL, two threads, quiet).

How. The chunks are dealt into `parts` fixed partitions (chunk j into partition
j % parts), as many as the thread budget, not the width of the moment; the partitions
then run on as many lanes as nnvmpy.threads.region grants. A partition's arithmetic
(its chunks in order, each GEMM on one thread, its own partial filter-gradient sum) is
the same whatever number of lanes ran it, so results do not depend on the machine's load.

It needs a BLAS whose thread count can be set per calling thread (MKL's
MKL_Set_Num_Threads_Local): OpenBLAS has one process-wide count, and its worker spins
into the other lane's core. There `parts` is 1 and nothing changes.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from ...kernel import cpu as _cpu
from . import _blas


def parts(items: int) -> int:
    """How many partitions to deal `items` independent chunks into: the thread budget
    (at most `items`) where the active BLAS has a per-thread thread count, else 1."""
    lib = _blas.active()
    if items < 2 or lib is None or lib.set_local is None:
        return 1
    from nnvmpy import threads

    return max(1, min(threads.budget(), items))


def one_openmp() -> bool:
    """Whether numba's parallel loops and the BLAS's threads are one OpenMP runtime's
    threads: MKL on GNU OpenMP (or sequential; _blas) beside numba's omp layer. Then a
    numba parallel loop between two all-thread GEMMs reuses the GEMM's warm team instead
    of waking other threads; beside OpenBLAS's own pthreads the two pools would fight."""
    lib = _blas.active()
    if lib is None or lib.name != "mkl":
        return False
    if os.environ.get("MKL_THREADING_LAYER", "GNU").upper() not in ("GNU", "SEQUENTIAL"):
        return False
    return _cpu.numba_layer() == "omp"


def run(n_parts: int, work: Callable[[int], None]) -> None:
    """work(p) for every partition p in [0, n_parts), on the lanes nnvmpy.threads.region
    grants (lane 0 on this thread, the others on the ufunc pool's threads). With more
    than one partition every BLAS call inside runs on its calling thread alone, however
    many lanes run, so each partition computes the same numbers either way. One
    partition: work(0) as it is (its GEMMs on every core)."""
    if n_parts <= 1:
        work(0)
        return
    from nnvmpy import threads
    from nnvmpy.ops._numpy_fast import _get_pool

    lib = _blas.active()
    set_local = None if lib is None else lib.set_local

    def lane(t: int, lanes: int) -> None:
        if set_local is not None:
            set_local(1)
        try:
            for p in range(t, n_parts, lanes):
                work(p)
        finally:
            if set_local is not None:
                set_local(0)  # back to the process-wide count

    with threads.region() as width:
        lanes = max(1, min(width, n_parts))
        pool = _get_pool()
        futures = [pool.submit(lane, t, lanes) for t in range(1, lanes)]
        try:
            lane(0, lanes)
        finally:
            for fut in futures:
                fut.result()
