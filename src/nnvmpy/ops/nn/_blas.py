"""cblas ?gemm from the BLAS NumPy already loaded, for what np.matmul cannot say.

    C = alpha * op(A) @ op(B) + beta * C      (row-major, any leading dimensions)

np.matmul has no beta (it cannot accumulate into C) and no leading dimension for C, so
a convolution written as a sum of shifted GEMMs (_conv_shift.py) calls cblas directly.
The library is NumPy's bundled OpenBLAS (numpy.libs / numpy/.libs), found by file name;
its cblas symbols carry a prefix/suffix that depends on the build, so a few spellings
are tried. When none is found `gemm` is None and callers fall back to im2col + matmul.
ctypes releases the GIL during the call, as NumPy does.
"""

from __future__ import annotations

import ctypes
import glob
import os
from collections.abc import Callable
from typing import Any

import numpy as np

ROW_MAJOR, NO_TRANS, TRANS = 101, 111, 112

# (symbol template, integer type): ILP64 builds (64_ suffix) take 64-bit ints
_SPELLINGS = [
    ("scipy_cblas_{}gemm64_", ctypes.c_int64),
    ("cblas_{}gemm64_", ctypes.c_int64),
    ("scipy_cblas_{}gemm", ctypes.c_int),
    ("cblas_{}gemm", ctypes.c_int),
]

GemmFn = Callable[..., None]


def _library_paths() -> list[str]:
    root = os.path.dirname(np.__file__)
    patterns = [os.path.join(root, "..", "numpy.libs", "*"), os.path.join(root, ".libs", "*")]
    found = [p for pat in patterns for p in glob.glob(pat) if "blas" in os.path.basename(p)]
    return sorted(found)


def _bind(lib: Any, kind: str) -> tuple[Any, Any] | None:
    for template, int_t in _SPELLINGS:
        fn = getattr(lib, template.format(kind), None)
        if fn is None:
            continue
        real = ctypes.c_float if kind == "s" else ctypes.c_double
        ptr = ctypes.c_void_p
        fn.argtypes = (
            [ctypes.c_int] * 3 + [int_t] * 3 + [real, ptr, int_t, ptr, int_t, real, ptr, int_t]
        )
        fn.restype = None
        return fn, int_t
    return None


def _load() -> dict[np.dtype, Any]:
    found: dict[np.dtype, Any] = {}
    for path in _library_paths():
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for kind, dtype in (("s", np.float32), ("d", np.float64)):
            bound = _bind(lib, kind)
            if bound is not None:
                found.setdefault(np.dtype(dtype), bound)
        if found:
            break
    return found


_GEMMS = _load()


def available(dtype: Any) -> bool:
    """True when a cblas gemm for this dtype was found."""
    return np.dtype(dtype) in _GEMMS


def gemm(
    trans_a: bool,
    trans_b: bool,
    m: int,
    n: int,
    k: int,
    a: np.ndarray,
    a_off: int,
    lda: int,
    b: np.ndarray,
    b_off: int,
    ldb: int,
    beta: float,
    c: np.ndarray,
    c_off: int,
    ldc: int,
) -> None:
    """C[c_off:] (m x n, row stride ldc) = op(A) @ op(B) + beta * C, offsets in elements.

    a, b and c are contiguous arrays of one dtype; the offsets and leading dimensions
    address the sub-matrices inside them, which the caller keeps in bounds.
    """
    fn, _ = _GEMMS[c.dtype]
    size = c.itemsize
    fn(
        ROW_MAJOR,
        TRANS if trans_a else NO_TRANS,
        TRANS if trans_b else NO_TRANS,
        m,
        n,
        k,
        1.0,
        a.ctypes.data + a_off * size,
        lda,
        b.ctypes.data + b_off * size,
        ldb,
        beta,
        c.ctypes.data + c_off * size,
        ldc,
    )


__all__ = ["available", "gemm"]
