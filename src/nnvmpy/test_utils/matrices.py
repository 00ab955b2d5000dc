"""Test inputs with a known structure, as MXNet's test_utils makes them.

- row-index tensors (create_2d_tensor, create_vector): every element tells where it is,
  so large-tensor tests can check an op's indexing without a reference computation;
- identity matrices as NDArrays (get_identity_mat, get_identity_mat_batch);
- NumPy float64 matrices whose eigenvalues are known to be real (orthonormal Q, Q D Q^T,
  P D P^-1), the inputs of linear-algebra tests: well conditioned, so a finite-difference
  or eigen-decomposition check is not lost in round-off.

The random ones draw from NumPy's seeded global generator, as MXNet's do.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from ..base import NNVMError

# Eigenvalue magnitudes of the generated matrices: away from 0 (well conditioned) and small.
_EIG_LOW, _EIG_HIGH = 1.0, 10.0


def _size(where: str, n: Any) -> int:
    try:
        size = operator.index(n)
    except TypeError:
        raise NNVMError(f"{where}: expects an int size, got {n!r}") from None
    if size < 0:
        raise NNVMError(f"{where}: expects a size >= 0, got {size}")
    return size


def create_2d_tensor(rows: int, columns: int, dtype: Any = np.int64) -> Any:
    """A (rows, columns) NDArray whose row i is filled with i."""
    from nnvmpy import nd

    rows, columns = _size("create_2d_tensor", rows), _size("create_2d_tensor", columns)
    column = nd.arange(0, rows, dtype=dtype).reshape((rows, 1))
    return nd.broadcast_to(column, shape=(rows, columns))


def create_vector(size: int, dtype: Any = np.int64) -> Any:
    """The NDArray [0, 1, ..., size - 1]."""
    from nnvmpy import nd

    return nd.arange(0, _size("create_vector", size), dtype=dtype)


def get_identity_mat(size: int) -> Any:
    """The (size, size) float32 identity matrix as an NDArray."""
    from nnvmpy import nd

    return nd.array(np.eye(_size("get_identity_mat", size), dtype=np.float32))


def get_identity_mat_batch(size: int) -> Any:
    """A batch of two (size, size) float32 identity matrices, shape (2, size, size), as
    MXNet's batched linear-algebra tests use it."""
    from nnvmpy import nd

    eye = np.eye(_size("get_identity_mat_batch", size), dtype=np.float32)
    return nd.array(np.stack([eye, eye]))


def new_orthonormal_matrix_2d(n: int) -> np.ndarray:
    """A random (n, n) orthonormal matrix Q (Q Q^T = I), float64."""
    n = _size("new_orthonormal_matrix_2d", n)
    gaussian = np.random.normal(size=(n, n))  # noqa: NPY002 - the seeded global generator
    q, r = np.linalg.qr(gaussian)
    # sign-fix so that Q is uniformly distributed, not biased by the QR convention
    signs = np.sign(np.diag(r))
    signs[signs == 0] = 1.0
    return np.asarray(q * signs, dtype=np.float64)


def _real_eigvals(n: int) -> np.ndarray:
    magnitudes = np.random.uniform(_EIG_LOW, _EIG_HIGH, size=n)  # noqa: NPY002
    signs = np.where(np.random.uniform(size=n) < 0.5, -1.0, 1.0)  # noqa: NPY002
    return magnitudes * signs


def new_sym_matrix_with_real_eigvals_2d(n: int) -> np.ndarray:
    """A random symmetric (n, n) matrix Q D Q^T whose eigenvalues D lie in +-[1, 10]."""
    n = _size("new_sym_matrix_with_real_eigvals_2d", n)
    q = new_orthonormal_matrix_2d(n)
    sym = (q * _real_eigvals(n)) @ q.T
    return (sym + sym.T) / 2.0  # exactly symmetric despite round-off


def new_matrix_with_real_eigvals_2d(n: int) -> np.ndarray:
    """A random, generally non-symmetric (n, n) matrix P D P^-1 with real eigenvalues D in
    +-[1, 10]; P = Q1 diag(s) Q2 with s in [1, 2], so P (and the result) is well conditioned."""
    n = _size("new_matrix_with_real_eigvals_2d", n)
    scales = np.random.uniform(1.0, 2.0, size=n)  # noqa: NPY002
    p = (new_orthonormal_matrix_2d(n) * scales) @ new_orthonormal_matrix_2d(n)
    return (p * _real_eigvals(n)) @ np.linalg.inv(p)


def _batched(where: str, shape: Any, make_2d: Any) -> np.ndarray:
    try:
        dims = tuple(operator.index(d) for d in shape)
    except TypeError:
        raise NNVMError(f"{where}: expects a shape tuple of ints, got {shape!r}") from None
    if len(dims) < 2 or dims[-1] != dims[-2] or any(d < 0 for d in dims):
        raise NNVMError(f"{where}: expects a shape (..., n, n) of square matrices, got {dims}")
    n = dims[-1]
    batch = int(np.prod(dims[:-2], dtype=np.int64))
    out = np.empty((batch, n, n), dtype=np.float64)
    for i in range(batch):
        out[i] = make_2d(n)
    return out.reshape(dims)


def new_matrix_with_real_eigvals_nd(shape: Any) -> np.ndarray:
    """A batch of new_matrix_with_real_eigvals_2d matrices, shape (..., n, n)."""
    return _batched("new_matrix_with_real_eigvals_nd", shape, new_matrix_with_real_eigvals_2d)


def new_sym_matrix_with_real_eigvals_nd(shape: Any) -> np.ndarray:
    """A batch of new_sym_matrix_with_real_eigvals_2d matrices, shape (..., n, n)."""
    return _batched(
        "new_sym_matrix_with_real_eigvals_nd", shape, new_sym_matrix_with_real_eigvals_2d
    )
