"""Type stubs for nnvmpy.ndarray.linalg, generated from the op registry by `nnvmpy stubs`.

Do not edit: `nnvmpy stubs` rewrites this file.
"""

from typing import Any, Literal, TypeAlias

import numpy as np

from nnvmpy.ndarray.ndarray import NDArray as NDArray
def _make(op: Any, name: Any = ...) -> Any: ...

_Shape: TypeAlias = tuple[int, ...] | list[int] | int
_FloatTuple: TypeAlias = tuple[float, ...] | list[float] | float
_IntOrNoneTuple: TypeAlias = tuple[int | None, ...] | list[int | None]

def det(
    A: NDArray | None = None,
    *,
    out: NDArray | list[NDArray] | None = None,
    **kwargs: Any,
) -> NDArray:
    """Compute the determinant of a matrix.
    Input is a tensor *A* of dimension *n >= 2*. If *n=2*, *A* is a square matrix. We compute: *out* = *det(A)*.

    If *n>2*, the operator is performed separately on the trailing two dimensions for all
    inputs (batch mode); a single matrix gives shape (1,).

    .. note:: The operator supports float32 and float64 data types only.

    Parameters
    ----------
    A : NDArray-or-Symbol
        Tensor of square matrix

    Returns
    -------
    out : NDArray or list of NDArrays

    Defined in nnvmpy/ops/linalg/_base.py.
    """

def extractdiag(
    A: NDArray | None = None,
    *,
    offset: int = 0,
    out: NDArray | list[NDArray] | None = None,
) -> NDArray:
    """Extracts the diagonal entries of a square matrix.
    Input is a tensor *A* of dimension *n >= 2*: a square matrix, or a batch of them on the trailing two dimensions. The diagonals are returned as an *n-1*-dimensional tensor.

    .. note:: The operator supports float32 and float64 data types only.

    Parameters
    ----------
    A : NDArray-or-Symbol
        Tensor of square matrices
    offset : int, optional, default=0
        Offset of the diagonal versus the main diagonal. 0 corresponds to the main diagonal, a negative/positive value to diagonals below/above the main diagonal.

    Returns
    -------
    out : NDArray or list of NDArrays

    Defined in nnvmpy/ops/linalg/_base.py.
    """

def extracttrian(
    A: NDArray | None = None,
    *,
    offset: int = 0,
    lower: bool | int = True,
    out: NDArray | list[NDArray] | None = None,
) -> NDArray:
    """Extracts a triangular sub-matrix from a square matrix.
    Input is a tensor *A* of dimension *n >= 2*: a square matrix, or a batch of them on the trailing two dimensions. The triangles are returned as an *n-1*-dimensional tensor.

    The *offset* and *lower* parameters determine the triangle: *offset = 0* the lower or
    upper triangle with the main diagonal, depending on *lower*; *offset = k > 0* the upper
    triangle with respect to the k-th diagonal above the main diagonal; *offset = k < 0* the
    lower triangle with respect to the k-th diagonal below it. A lower triangle is packed
    row by row, an upper one column by column.

    .. note:: The operator supports float32 and float64 data types only.

    Parameters
    ----------
    A : NDArray-or-Symbol
        Tensor of square matrices
    offset : int, optional, default=0
        Offset of the diagonal versus the main diagonal. 0 corresponds to the main diagonal, a negative/positive value to diagonals below/above the main diagonal.
    lower : boolean, optional, default=1
        Refer to the lower triangular matrix if lower=true, refer to the upper otherwise. Only relevant when offset=0

    Returns
    -------
    out : NDArray or list of NDArrays

    Defined in nnvmpy/ops/linalg/_base.py.
    """

def gelqf(
    A: NDArray | None = None,
    *,
    out: NDArray | list[NDArray] | None = None,
    **kwargs: Any,
) -> Any:
    """LQ factorization for general matrix.
    Input is a tensor *A* of dimension *n >= 2*.

    If *n=2*, we compute the LQ factorization (LAPACK *gelqf*, followed by *orglq*). *A*
    must have shape *(x, y)* with *x <= y*, and must have full rank *=x*. The LQ
    factorization consists of *L* with shape *(x, x)* and *Q* with shape *(x, y)*, so
    that: *A* = *L* * *Q*. Here, *L* is lower triangular (upper triangle equal to zero)
    with nonzero diagonal, and *Q* is row-orthonormal, meaning that *Q* * *Q*^T is equal to
    the identity matrix of shape *(x, x)*.

    If *n>2*, *gelqf* is performed separately on the trailing two dimensions for all
    inputs (batch mode).

    .. note:: The operator supports float32 and float64 data types only.

    Parameters
    ----------
    A : NDArray-or-Symbol
        Tensor of input matrices to be factorized

    Returns
    -------
    out : NDArray or list of NDArrays

    Defined in nnvmpy/ops/linalg/_base.py.
    """

def gemm(
    A: NDArray | None = None,
    B: NDArray | None = None,
    C: NDArray | None = None,
    *,
    transpose_a: bool | int = False,
    transpose_b: bool | int = False,
    alpha: float = 1.0,
    beta: float = 1.0,
    axis: int = -2,
    out: NDArray | list[NDArray] | None = None,
) -> NDArray:
    """Performs general matrix multiplication and accumulation.
    Input are tensors *A*, *B*, *C*, each of dimension *n >= 2* and having the same shape
    on the leading *n-2* dimensions.

    If *n=2*: *out* = *alpha* * *op*(*A*) * *op*(*B*) + *beta* * *C*, where *op()* is the
    identity or the transposition (*transpose_a*, *transpose_b*).

    If *n>2*, *gemm* is performed separately for a batch of matrices. The column indices of
    the matrices are given by the last dimensions of the tensors, the row indices by the
    axis specified with the *axis* parameter (by default the trailing two dimensions hold
    the matrices). A non-default axis is equivalent to swapaxes(axis, -2) on every input,
    gemm, and swapaxes back, without the copies.

    .. note:: The operator supports float32 and float64 data types only.

    Parameters
    ----------
    A : NDArray-or-Symbol
        Tensor of input matrices
    B : NDArray-or-Symbol
        Tensor of input matrices
    C : NDArray-or-Symbol
        Tensor of input matrices
    transpose_a : boolean, optional, default=0
        Multiply with transposed of first input (A).
    transpose_b : boolean, optional, default=0
        Multiply with transposed of second input (B).
    alpha : float, optional, default=1.0
        Scalar factor multiplied with A*B.
    beta : float, optional, default=1.0
        Scalar factor multiplied with C.
    axis : int, optional, default=-2
        Axis corresponding to the matrix rows.

    Returns
    -------
    out : NDArray or list of NDArrays

    Defined in nnvmpy/ops/linalg/_base.py.
    """

def gemm2(
    A: NDArray | None = None,
    B: NDArray | None = None,
    *,
    transpose_a: bool | int = False,
    transpose_b: bool | int = False,
    alpha: float = 1.0,
    axis: int = -2,
    out: NDArray | list[NDArray] | None = None,
) -> NDArray:
    """Performs general matrix multiplication .
    Input are tensors *A*, *B*, each of dimension *n >= 2* and having the same shape
    on the leading *n-2* dimensions.

    If *n=2*: *out* = *alpha* * *op*(*A*) * *op*(*B*), where *op()* is the
    identity or the transposition (*transpose_a*, *transpose_b*).

    If *n>2*, *gemm* is performed separately for a batch of matrices. The column indices of
    the matrices are given by the last dimensions of the tensors, the row indices by the
    axis specified with the *axis* parameter (by default the trailing two dimensions hold
    the matrices). A non-default axis is equivalent to swapaxes(axis, -2) on every input,
    gemm, and swapaxes back, without the copies.

    .. note:: The operator supports float32 and float64 data types only.

    Parameters
    ----------
    A : NDArray-or-Symbol
        Tensor of input matrices
    B : NDArray-or-Symbol
        Tensor of input matrices
    transpose_a : boolean, optional, default=0
        Multiply with transposed of first input (A).
    transpose_b : boolean, optional, default=0
        Multiply with transposed of second input (B).
    alpha : float, optional, default=1.0
        Scalar factor multiplied with A*B.
    axis : int, optional, default=-2
        Axis corresponding to the matrix rows.

    Returns
    -------
    out : NDArray or list of NDArrays

    Defined in nnvmpy/ops/linalg/_base.py.
    """

def inverse(
    A: NDArray | None = None,
    *,
    out: NDArray | list[NDArray] | None = None,
    **kwargs: Any,
) -> NDArray:
    """Compute the inverse of a matrix.
    Input is a tensor *A* of dimension *n >= 2*.

    If *n=2*, *A* is a square matrix. We compute: *out* = *A*^-1. A singular matrix raises
    an error.

    If *n>2*, *inverse* is performed separately on the trailing two dimensions for all inputs
    (batch mode).

    .. note:: The operator supports float32 and float64 data types only.

    Parameters
    ----------
    A : NDArray-or-Symbol
        Tensor of square matrix

    Returns
    -------
    out : NDArray or list of NDArrays

    Defined in nnvmpy/ops/linalg/_base.py.
    """

def makediag(
    A: NDArray | None = None,
    *,
    offset: int = 0,
    out: NDArray | list[NDArray] | None = None,
) -> NDArray:
    """Constructs a square matrix with the input as diagonal.
    Input is a tensor *A* of dimension *n >= 1*: the diagonal entries of a square matrix, or a batch of them. The matrices are returned as an *n+1*-dimensional tensor.

    .. note:: The operator supports float32 and float64 data types only.

    Parameters
    ----------
    A : NDArray-or-Symbol
        Tensor of diagonal entries
    offset : int, optional, default=0
        Offset of the diagonal versus the main diagonal. 0 corresponds to the main diagonal, a negative/positive value to diagonals below/above the main diagonal.

    Returns
    -------
    out : NDArray or list of NDArrays

    Defined in nnvmpy/ops/linalg/_base.py.
    """

def maketrian(
    A: NDArray | None = None,
    *,
    offset: int = 0,
    lower: bool | int = True,
    out: NDArray | list[NDArray] | None = None,
) -> NDArray:
    """Constructs a square matrix with the input representing a specific triangular sub-matrix.
    This is the inverse of *linalg.extracttrian*. Input is a tensor *A* of dimension *n >= 1*: a packed triangle, or a batch of them. The square matrices (zeros outside the triangle) are returned as an *n+1*-dimensional tensor.

    The *offset* and *lower* parameters determine the triangle: *offset = 0* the lower or
    upper triangle with the main diagonal, depending on *lower*; *offset = k > 0* the upper
    triangle with respect to the k-th diagonal above the main diagonal; *offset = k < 0* the
    lower triangle with respect to the k-th diagonal below it. A lower triangle is packed
    row by row, an upper one column by column.

    .. note:: The operator supports float32 and float64 data types only.

    Parameters
    ----------
    A : NDArray-or-Symbol
        Tensor of triangular matrices stored as vectors
    offset : int, optional, default=0
        Offset of the diagonal versus the main diagonal. 0 corresponds to the main diagonal, a negative/positive value to diagonals below/above the main diagonal.
    lower : boolean, optional, default=1
        Refer to the lower triangular matrix if lower=true, refer to the upper otherwise. Only relevant when offset=0

    Returns
    -------
    out : NDArray or list of NDArrays

    Defined in nnvmpy/ops/linalg/_base.py.
    """

def potrf(
    A: NDArray | None = None,
    *,
    lower: bool | int = True,
    out: NDArray | list[NDArray] | None = None,
) -> NDArray:
    """Performs Cholesky factorization of a symmetric positive-definite matrix.
    Input is a tensor *A* of dimension *n >= 2*.

    If *n=2*, the Cholesky factor *B* of the symmetric, positive definite matrix *A* is
    computed. *B* is triangular (entries of upper or lower triangle are all zero), has
    positive diagonal entries, and: *A* = *B* * *B*^T if *lower* = *true*, *A* = *B*^T *
    *B* if *lower* = *false*. Only that triangle of *A* is read.

    If *n>2*, *potrf* is performed separately on the trailing two dimensions for all inputs
    (batch mode). A matrix that is not positive-definite raises an error.

    .. note:: The operator supports float32 and float64 data types only.

    Parameters
    ----------
    A : NDArray-or-Symbol
        Tensor of input matrices to be decomposed
    lower : boolean, optional, default=1
        True if the triangular matrix is lower triangular, false if it is upper triangular.

    Returns
    -------
    out : NDArray or list of NDArrays

    Defined in nnvmpy/ops/linalg/_base.py.
    """

def potri(
    A: NDArray | None = None,
    *,
    lower: bool | int = True,
    out: NDArray | list[NDArray] | None = None,
) -> NDArray:
    """Performs matrix inversion from a Cholesky factorization.
    Input is a tensor *A* of dimension *n >= 2*.

    If *n=2*, *A* is a triangular matrix (entries of upper or lower triangle are all zero)
    with positive diagonal. We compute: *out* = *A*^-T * *A*^-1 if *lower* = *true*,
    *out* = *A*^-1 * *A*^-T if *lower* = *false*. In other words, if *A* is the Cholesky
    factor of a symmetric positive definite matrix *B* (obtained by *potrf*), then
    *out* = *B*^-1. Only the triangle of *A* selected by *lower* is read.

    If *n>2*, *potri* is performed separately on the trailing two dimensions for all inputs
    (batch mode).

    .. note:: The operator supports float32 and float64 data types only.

    .. note:: Use this operator only if you are certain you need the inverse of *B*, and
              cannot use the Cholesky factor *A* (*potrf*), together with backsubstitution
              (*trsm*). The latter is numerically much safer, and also cheaper.

    Parameters
    ----------
    A : NDArray-or-Symbol
        Tensor of lower triangular matrices
    lower : boolean, optional, default=1
        True if the triangular matrix is lower triangular, false if it is upper triangular.

    Returns
    -------
    out : NDArray or list of NDArrays

    Defined in nnvmpy/ops/linalg/_base.py.
    """

def slogdet(
    A: NDArray | None = None,
    *,
    out: NDArray | list[NDArray] | None = None,
    **kwargs: Any,
) -> Any:
    """Compute the sign and log of the determinant of a matrix.
    Input is a tensor *A* of dimension *n >= 2*. If *n=2*, *A* is a square matrix. We compute: *sign* = *sign(det(A))*, *logabsdet* = *log(abs(det(A)))*. The gradient is not defined on sign, so it is not propagated back.

    If *n>2*, the operator is performed separately on the trailing two dimensions for all
    inputs (batch mode); a single matrix gives shape (1,).

    .. note:: The operator supports float32 and float64 data types only.

    Parameters
    ----------
    A : NDArray-or-Symbol
        Tensor of square matrix

    Returns
    -------
    out : NDArray or list of NDArrays

    Defined in nnvmpy/ops/linalg/_base.py.
    """

def sumlogdiag(
    A: NDArray | None = None,
    *,
    out: NDArray | list[NDArray] | None = None,
    **kwargs: Any,
) -> NDArray:
    """Computes the sum of the logarithms of the diagonal elements of a square matrix.
    Input is a tensor *A* of dimension *n >= 2*.

    If *n=2*, *A* must be square with positive diagonal entries. We sum the natural
    logarithms of the diagonal elements, the result has shape (1,).

    If *n>2*, *sumlogdiag* is performed separately on the trailing two dimensions for all
    inputs (batch mode).

    .. note:: The operator supports float32 and float64 data types only.

    Parameters
    ----------
    A : NDArray-or-Symbol
        Tensor of square matrices

    Returns
    -------
    out : NDArray or list of NDArrays

    Defined in nnvmpy/ops/linalg/_base.py.
    """

def syevd(
    A: NDArray | None = None,
    *,
    out: NDArray | list[NDArray] | None = None,
    **kwargs: Any,
) -> Any:
    """Eigendecomposition for symmetric matrix.
    Input is a tensor *A* of dimension *n >= 2*.

    If *n=2*, *A* must be symmetric, of shape *(x, x)* (its lower triangle is read). We
    compute the eigendecomposition, resulting in the orthonormal matrix *U* of eigenvectors,
    shape *(x, x)*, and the vector *L* of eigenvalues, shape *(x,)*, so that: *U* * *A* =
    *diag(L)* * *U*. Here: *U* * *U*^T = *U*^T * *U* = *I* where *I* is the identity
    matrix. Also, *L(0) <= L(1) <= L(2) <= ...* (ascending order).

    If *n>2*, *syevd* is performed separately on the trailing two dimensions of *A* (batch
    mode). In this case, *U* has *n* dimensions like *A*, and *L* has *n-1* dimensions.

    .. note:: The operator supports float32 and float64 data types only.

    .. note:: Derivatives for this operator are defined only if *A* is such that all its
              eigenvalues are distinct, and the eigengaps are not too small. If you need
              gradients, do not apply this operator to matrices with multiple eigenvalues.

    Parameters
    ----------
    A : NDArray-or-Symbol
        Tensor of input matrices to be factorized

    Returns
    -------
    out : NDArray or list of NDArrays

    Defined in nnvmpy/ops/linalg/_base.py.
    """

def syrk(
    A: NDArray | None = None,
    *,
    transpose: bool | int = False,
    alpha: float = 1.0,
    out: NDArray | list[NDArray] | None = None,
) -> NDArray:
    """Multiplication of matrix with its transpose.
    Input is a tensor *A* of dimension *n >= 2*.

    If *n=2*: *out* = *alpha* * *A* * *A*^T if *transpose=False*, or *alpha* * *A*^T * *A*
    if *transpose=True*. If *n>2*, *syrk* is performed separately on the trailing two
    dimensions for all inputs (batch mode).

    .. note:: The operator supports float32 and float64 data types only.

    Parameters
    ----------
    A : NDArray-or-Symbol
        Tensor of input matrices
    transpose : boolean, optional, default=0
        Use transpose of input matrix.
    alpha : float, optional, default=1.0
        Scalar factor to be applied to the result.

    Returns
    -------
    out : NDArray or list of NDArrays

    Defined in nnvmpy/ops/linalg/_base.py.
    """

def trmm(
    A: NDArray | None = None,
    B: NDArray | None = None,
    *,
    transpose: bool | int = False,
    rightside: bool | int = False,
    lower: bool | int = True,
    alpha: float = 1.0,
    out: NDArray | list[NDArray] | None = None,
) -> NDArray:
    """Performs multiplication with a lower triangular matrix.
    Input are tensors *A*, *B*, each of dimension *n >= 2* and having the same shape
    on the leading *n-2* dimensions.

    If *n=2*, *A* must be triangular. The operator performs the BLAS3 function *trmm*:
    *out* = *alpha* * *op*(*A*) * *B* if *rightside=False*, or *out* = *alpha* * *B* *
    *op*(*A*) if *rightside=True*. Here, *alpha* is a scalar parameter, and *op()* is either
    the identity or the matrix transposition (depending on *transpose*). Only the triangle
    of *A* selected by *lower* is read.

    If *n>2*, *trmm* is performed separately on the trailing two dimensions for all inputs
    (batch mode).

    .. note:: The operator supports float32 and float64 data types only.

    Parameters
    ----------
    A : NDArray-or-Symbol
        Tensor of lower triangular matrices
    B : NDArray-or-Symbol
        Tensor of matrices
    transpose : boolean, optional, default=0
        Use transposed of the triangular matrix
    rightside : boolean, optional, default=0
        Multiply triangular matrix from the right to non-triangular one.
    lower : boolean, optional, default=1
        True if the triangular matrix is lower triangular, false if it is upper triangular.
    alpha : float, optional, default=1.0
        Scalar factor to be applied to the result.

    Returns
    -------
    out : NDArray or list of NDArrays

    Defined in nnvmpy/ops/linalg/_base.py.
    """

def trsm(
    A: NDArray | None = None,
    B: NDArray | None = None,
    *,
    transpose: bool | int = False,
    rightside: bool | int = False,
    lower: bool | int = True,
    alpha: float = 1.0,
    out: NDArray | list[NDArray] | None = None,
) -> NDArray:
    """Solves matrix equation involving a lower triangular matrix.
    Input are tensors *A*, *B*, each of dimension *n >= 2* and having the same shape
    on the leading *n-2* dimensions.

    If *n=2*, *A* must be triangular. The operator performs the BLAS3 function *trsm*,
    solving for *out* in: *op*(*A*) * *out* = *alpha* * *B* if *rightside=False*, or
    *out* * *op*(*A*) = *alpha* * *B* if *rightside=True*. Here, *alpha* is a scalar
    parameter, and *op()* is either the identity or the matrix transposition (depending on
    *transpose*). Only the triangle of *A* selected by *lower* is read; a zero on its
    diagonal raises an error.

    If *n>2*, *trsm* is performed separately on the trailing two dimensions for all inputs
    (batch mode).

    .. note:: The operator supports float32 and float64 data types only.

    Parameters
    ----------
    A : NDArray-or-Symbol
        Tensor of lower triangular matrices
    B : NDArray-or-Symbol
        Tensor of matrices
    transpose : boolean, optional, default=0
        Use transposed of the triangular matrix
    rightside : boolean, optional, default=0
        Multiply triangular matrix from the right to non-triangular one.
    lower : boolean, optional, default=1
        True if the triangular matrix is lower triangular, false if it is upper triangular.
    alpha : float, optional, default=1.0
        Scalar factor to be applied to the result.

    Returns
    -------
    out : NDArray or list of NDArrays

    Defined in nnvmpy/ops/linalg/_base.py.
    """
