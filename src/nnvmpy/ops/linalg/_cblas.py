"""The OpenBLAS NumPy already loaded: cblas ?trsm, and one BLAS thread for stacks.

np.linalg has no triangular solver, and solving with the triangle through LU
(np.linalg.solve) costs ~10x more than BLAS trsm on a stack of 64 x 64 matrices. NumPy's
wheels bundle OpenBLAS (numpy.libs / numpy/.libs) with its cblas symbols under a
build-dependent prefix/suffix, so a few spellings are tried (as ops/nn/_blas.py does for
gemm). When none is found `trsm_function` returns None and callers use np.linalg.solve.
ctypes releases the GIL during each call.

`one_thread_per_call`: NumPy's stacked linalg (and matmul) calls LAPACK/BLAS once per
matrix; OpenBLAS then wakes its thread pool for every small matrix, which on busy cores
made a 64 x (64 x 64) eigh or trsm 25-100x slower than on one thread. Inside the context
the calling thread uses one BLAS thread (OpenBLAS's thread-local setting, where the
library has it); the engine runs other ops on its other workers meanwhile.
"""

from __future__ import annotations

import ctypes
import glob
import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

ROW_MAJOR, NO_TRANS, TRANS = 101, 111, 112
UPPER, LOWER, NON_UNIT, LEFT, RIGHT = 121, 122, 131, 141, 142

# (symbol template, integer type): ILP64 builds (64_ suffix) take 64-bit ints
_SPELLINGS = [
    ("scipy_cblas_{}trsm64_", ctypes.c_int64),
    ("cblas_{}trsm64_", ctypes.c_int64),
    ("scipy_cblas_{}trsm", ctypes.c_int),
    ("cblas_{}trsm", ctypes.c_int),
]


def _library_paths() -> list[str]:
    root = os.path.dirname(np.__file__)
    patterns = [os.path.join(root, "..", "numpy.libs", "*"), os.path.join(root, ".libs", "*")]
    return sorted(p for pat in patterns for p in glob.glob(pat) if "blas" in os.path.basename(p))


def _bind(lib: Any, kind: str) -> Any:
    for template, int_t in _SPELLINGS:
        fn = getattr(lib, template.format(kind), None)
        if fn is None:
            continue
        real = ctypes.c_float if kind == "s" else ctypes.c_double
        ptr = ctypes.c_void_p
        fn.argtypes = [ctypes.c_int] * 5 + [int_t, int_t, real, ptr, int_t, ptr, int_t]
        fn.restype = None
        return fn
    return None


def _load() -> dict[np.dtype, Any]:
    found: dict[np.dtype, Any] = {}
    for path in _library_paths():
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for kind, dtype in (("s", np.float32), ("d", np.float64)):
            fn = _bind(lib, kind)
            if fn is not None:
                found[np.dtype(dtype)] = fn
        if found:
            break
    return found


_TRSM: dict[np.dtype, Any] | None = None
_LOCAL_THREADS: list[Any] = []  # [openblas_set_num_threads_local or None], once looked up


def _local_threads() -> Any:
    if not _LOCAL_THREADS:
        fn = None
        for path in _library_paths():
            try:
                lib = ctypes.CDLL(path)
            except OSError:
                continue
            fn = getattr(lib, "openblas_set_num_threads_local", None)
            if fn is not None:
                fn.argtypes, fn.restype = [ctypes.c_int], ctypes.c_int
                break
        _LOCAL_THREADS.append(fn)
    return _LOCAL_THREADS[0]


@contextmanager
def one_thread_per_call(batched: bool = True) -> Iterator[None]:
    """BLAS/LAPACK calls of this thread use one BLAS thread while inside (when batched)."""
    fn = _local_threads() if batched else None
    if fn is None:
        yield
        return
    previous = fn(1)
    try:
        yield
    finally:
        fn(previous)


def trsm_function(dtype: Any) -> Any:
    """The bound cblas ?trsm for float32/float64, or None (loaded on first use)."""
    global _TRSM
    if _TRSM is None:
        _TRSM = _load()
    return _TRSM.get(np.dtype(dtype))


def trsm(
    fn: Any, t: np.ndarray, b: np.ndarray, transpose: bool, rightside: bool, lower: bool,
    alpha: float,
) -> np.ndarray:  # fmt: skip
    """alpha op(T)^-1 B (or alpha B op(T)^-1) for stacks, one cblas call per matrix."""
    t = np.ascontiguousarray(t)
    x = np.array(b, dtype=t.dtype, order="C")  # solved in place by BLAS
    m, ncols = x.shape[-2:]
    k = t.shape[-1]
    size = x.itemsize
    side, uplo = RIGHT if rightside else LEFT, LOWER if lower else UPPER
    trans = TRANS if transpose else NO_TRANS
    t_at, x_at = t.ctypes.data, x.ctypes.data
    batch = x.size // (m * ncols) if x.size else 0
    with one_thread_per_call(batch > 1):
        for z in range(batch):
            fn(
                ROW_MAJOR, side, uplo, trans, NON_UNIT, m, ncols, alpha,
                t_at + z * k * k * size, k, x_at + z * m * ncols * size, ncols,
            )  # fmt: skip
    return x
