"""A convolution's chunks of images on several threads, each with one-thread GEMMs.

Why. An im2col convolution alternates a serial copy (im2col, numba, one thread) with a
GEMM that BLAS runs on every core: while one chunk's columns are copied the other core
idles. ResNet-18's 7x7/2 stem at batch 32 spent ~16 of its 57 ms in the copy. Giving
each thread whole chunks instead (its own copy, then its own GEMM on that thread alone)
keeps both cores busy: 57 -> 31 ms for the stem, 21.5 -> 13.6 for the 64->128 3x3/2
layer (MKL, two threads, quiet).

It needs a BLAS whose thread count can be set per calling thread (MKL's
MKL_Set_Num_Threads_Local): OpenBLAS has one process-wide count, and its worker spins
into the other lane's core. Elsewhere `granted` gives one lane and nothing changes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from . import _blas


@contextmanager
def granted(items: int) -> Iterator[int]:
    """How many lanes to run `items` independent chunks on: the width nnvmpy.threads
    grants this region (other regions in flight count), at most `items`, 1 where the
    active BLAS has no per-thread count."""
    lib = _blas.active()
    if items < 2 or lib is None or lib.set_local is None:
        yield 1
        return
    from ... import threads

    with threads.region() as width:
        yield max(1, min(width, items))


def run(lanes: int, lane: Callable[[int], None]) -> None:
    """lane(t) for t in range(lanes): t = 0 on this thread, the others on the ufunc
    pool's threads, every one with its BLAS calls on one thread. One lane: lane(0) as
    it is (its GEMMs on every core)."""
    if lanes <= 1:
        lane(0)
        return
    from .._numpy_fast import _get_pool

    lib = _blas.active()
    set_local = None if lib is None else lib.set_local

    def one_thread(t: int) -> None:
        if set_local is None:  # only where a test forces lanes: correct, not faster
            lane(t)
            return
        set_local(1)
        try:
            lane(t)
        finally:
            set_local(0)

    pool = _get_pool()
    futures = [pool.submit(one_thread, t) for t in range(1, lanes)]
    try:
        one_thread(0)
    finally:
        for fut in futures:
            fut.result()
