"""LAPACK routines from the OpenBLAS NumPy loaded, called per matrix of a stack.

np.linalg has no potri: it was an inverse of the triangle by LU (np.linalg.inv, 2n^3
flops) and a full product (2n^3 more), where LAPACK's potri (trtri + lauum) takes 2n^3/3:
3x MXNet's time on 8 x (512 x 512). np.linalg.inv solves against an identity (gesv);
getrf + getri, as MXNet calls, is faster. np.linalg's cholesky, qr, eigh and det run
each matrix with OpenBLAS's whole team, which on small matrices loses to a thread per
matrix (gelqf and syevd of 8 x 256^2 were 1.4-1.7x MXNet's). NumPy's wheels bundle
OpenBLAS with its LAPACKE symbols (see _cblas.py for the library and the spellings);
`available(dtype)` is False when they are not found, and callers keep np.linalg.

Layout: a C-ordered matrix read as column-major is its transpose, so each call passes
the matrix as it is with LAPACK_COL_MAJOR and the triangle flipped: no copies. A stack
runs its matrices on numba-free Python threads (ctypes releases the GIL), each calling
with one BLAS thread (_cblas.one_thread_per_call); a single matrix gets OpenBLAS's team.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from typing import Any

import numpy as np

from ... import threads
from ._cblas import _library_paths, one_thread_per_call

COL_MAJOR = 102
#: the order from which callers take these routines: below it a ctypes call per matrix
#: costs more than np.linalg's one call on the whole stack
MIN_ORDER = 32
_SPELLINGS = [
    ("scipy_LAPACKE_{}{}64_", ctypes.c_int64),
    ("LAPACKE_{}{}64_", ctypes.c_int64),
    ("scipy_LAPACKE_{}{}", ctypes.c_int),
    ("LAPACKE_{}{}", ctypes.c_int),
]
_ROUTINES = ("potrf", "potri", "getrf", "getri", "geqrf", "orgqr", "syevd")
_found: dict[tuple[str, np.dtype], Any] | None = None
_int_type: Any = ctypes.c_int64


def _argtypes(name: str, int_t: Any) -> list[Any]:
    ptr, layout, uplo = ctypes.c_void_p, ctypes.c_int, ctypes.c_char
    return {
        "potrf": [layout, uplo, int_t, ptr, int_t],
        "potri": [layout, uplo, int_t, ptr, int_t],
        "getrf": [layout, int_t, int_t, ptr, int_t, ptr],
        "getri": [layout, int_t, ptr, int_t, ptr],
        "geqrf": [layout, int_t, int_t, ptr, int_t, ptr],
        "orgqr": [layout, int_t, int_t, int_t, ptr, int_t, ptr],
        "syevd": [layout, uplo, uplo, int_t, ptr, int_t, ptr],
    }[name]


def _load() -> dict[tuple[str, np.dtype], Any]:
    global _int_type
    found: dict[tuple[str, np.dtype], Any] = {}
    for path in _library_paths():
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for template, int_t in _SPELLINGS:
            for kind, dtype in (("s", np.float32), ("d", np.float64)):
                for name in _ROUTINES:
                    fn = getattr(lib, template.format(kind, name), None)
                    if fn is not None:
                        fn.argtypes, fn.restype = _argtypes(name, int_t), int_t
                        found[name, np.dtype(dtype)] = fn
            if len(found) == 2 * len(_ROUTINES):
                _int_type = int_t
                return found
            found.clear()
    return found


def _routines() -> dict[tuple[str, np.dtype], Any]:
    global _found
    if _found is None:
        _found = _load()
    return _found


def available(dtype: Any) -> bool:
    """Whether the LAPACKE routines for this dtype were found (float32 and float64)."""
    return ("potri", np.dtype(dtype)) in _routines()


def _each_matrix(batch: int, call: Callable[[int], int]) -> list[int]:
    """call(z) for every matrix z of the stack (its LAPACK info), on the threads the
    budget grants when there are several matrices."""
    if batch == 1:
        return [call(0)]

    def run_part(first: int, step: int) -> list[int]:
        with one_thread_per_call():
            return [call(z) for z in range(first, batch, step)]

    with threads.region(min(batch, threads.width())) as width:
        if width == 1:
            return run_part(0, 1)
        from nnvmpy.ops._numpy_fast import _get_pool

        futures = [_get_pool().submit(run_part, k, width) for k in range(1, width)]
        infos = [0] * batch
        infos[0::width] = run_part(0, width)  # this thread takes matrices 0, width, ...
        for k, future in enumerate(futures, 1):
            infos[k::width] = future.result()
        return infos


def potrf(a: np.ndarray, lower: bool) -> tuple[np.ndarray, int]:
    """(Cholesky factors of the stack a (its `lower` triangle read; the other triangle of
    the result zeroed), index of the first matrix that is not positive definite or -1)."""
    x = np.array(a, order="C")
    fn = _routines()["potrf", x.dtype]
    uplo = b"U" if lower else b"L"  # the transpose's triangle
    n, size = x.shape[-1], x.itemsize
    at = x.ctypes.data
    infos = _each_matrix(_stack(x), lambda z: fn(COL_MAJOR, uplo, n, at + z * n * n * size, n))
    x = np.tril(x) if lower else np.triu(x)
    return x, _first_failure(infos)


def potri(factor: np.ndarray, lower: bool) -> np.ndarray:
    """(L L^T)^-1 (or (U^T U)^-1) for a stack of triangular factors with no zero on the
    diagonal (check first), the full symmetric matrices."""
    x = np.array(factor, order="C")
    fn = _routines()["potri", x.dtype]
    uplo = b"U" if lower else b"L"
    n, size = x.shape[-1], x.itemsize
    at = x.ctypes.data
    _each_matrix(_stack(x), lambda z: fn(COL_MAJOR, uplo, n, at + z * n * n * size, n))
    part = np.tril(x) if lower else np.triu(x)  # the triangle potri wrote
    return part + np.swapaxes(np.tril(x, -1) if lower else np.triu(x, 1), -1, -2)


def inverse(a: np.ndarray) -> tuple[np.ndarray, int]:
    """(A^-1 for the stack a, index of the first singular matrix or -1)."""
    x = np.array(a, order="C")
    getrf, getri = _routines()["getrf", x.dtype], _routines()["getri", x.dtype]
    n, size = x.shape[-1], x.itemsize
    batch = _stack(x)
    pivots = np.empty((batch, n), np.int64 if _int_type is ctypes.c_int64 else np.int32)
    at, piv_at, piv_size = x.ctypes.data, pivots.ctypes.data, pivots.itemsize

    def one(z: int) -> int:
        m, p = at + z * n * n * size, piv_at + z * n * piv_size
        info = getrf(COL_MAJOR, n, n, m, n, p)
        return info if info != 0 else getri(COL_MAJOR, n, m, n, p)

    return x, _first_failure(_each_matrix(batch, one))


def slogdet(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(sign, log|det|) of each matrix of the stack a from its getrf factors, as
    np.linalg.slogdet gives them (a singular matrix: 0 and -inf); batch-shaped."""
    x = np.array(a, order="C")
    getrf = _routines()["getrf", x.dtype]
    n, size = x.shape[-1], x.itemsize
    batch = _stack(x)
    pivots = np.empty((batch, n), np.int64 if _int_type is ctypes.c_int64 else np.int32)
    at, piv_at, piv_size = x.ctypes.data, pivots.ctypes.data, pivots.itemsize
    _each_matrix(
        batch, lambda z: getrf(COL_MAJOR, n, n, at + z * n * n * size, n, piv_at + z * n * piv_size)
    )
    diag = np.diagonal(x.reshape(batch, n, n), axis1=-2, axis2=-1)
    swaps = np.count_nonzero(pivots != np.arange(1, n + 1), axis=-1)  # 1-based rows
    sign = np.where(swaps % 2 == 1, -1, 1).astype(x.dtype) * np.prod(np.sign(diag), axis=-1)
    with np.errstate(divide="ignore"):
        logabs = np.sum(np.log(np.abs(diag)), axis=-1)
    logabs = np.where(sign == 0, -np.inf, logabs).astype(x.dtype)
    return sign.reshape(x.shape[:-2]), logabs.reshape(x.shape[:-2])


def lq(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(Q, L) with A = L Q for the stack a of (m, n) matrices, m <= n: LAPACK's geqrf +
    orgqr of the column-major view, which is A^T (np.linalg.qr's reflectors)."""
    x = np.array(a, order="C")
    geqrf, orgqr = _routines()["geqrf", x.dtype], _routines()["orgqr", x.dtype]
    m, n = x.shape[-2:]
    size, batch = x.itemsize, x.size // (m * n) if x.size else 0
    tau = np.empty((batch, m), x.dtype)
    low = np.empty((*x.shape[:-2], m, m), x.dtype)
    flat_low = low.reshape(batch, m, m)
    flat_x = x.reshape(batch, m, n)
    at, tau_at = x.ctypes.data, tau.ctypes.data

    def one(z: int) -> int:
        mat, t = at + z * m * n * size, tau_at + z * m * size
        info = geqrf(COL_MAJOR, n, m, mat, n, t)
        flat_low[z] = np.tril(flat_x[z, :, :m])  # R of A^T, transposed
        return info or orgqr(COL_MAJOR, n, m, m, mat, n, t)

    _each_matrix(batch, one)
    return x, low


def eigh_rows(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(eigenvalues ascending, eigenvectors as rows) of the symmetric stack a, its lower
    triangle read: LAPACK's syevd (np.linalg.eigh's routine) on the column-major view,
    whose eigenvector columns are the rows of the C-ordered result."""
    x = np.array(a, order="C")
    syevd = _routines()["syevd", x.dtype]
    n, size = x.shape[-1], x.itemsize
    batch = _stack(x)
    lam = np.empty((*x.shape[:-1],), x.dtype)
    at, lam_at = x.ctypes.data, lam.ctypes.data
    infos = _each_matrix(
        batch,
        lambda z: syevd(COL_MAJOR, b"V", b"U", n, at + z * n * n * size, n, lam_at + z * n * size),
    )
    if _first_failure(infos) >= 0:
        raise np.linalg.LinAlgError("syevd did not converge")
    return lam, x


def _stack(x: np.ndarray) -> int:
    n = x.shape[-1]
    return x.size // (n * n) if n else 0


def _first_failure(infos: list[int]) -> int:
    bad = [z for z, info in enumerate(infos) if info != 0]
    return bad[0] if bad else -1
