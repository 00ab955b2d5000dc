"""MXNet's linalg operators (`_linalg_*`: nd.linalg / sym.linalg), batched over leading axes.

    gemm.py        gemm, gemm2, syrk                 products (BLAS-3)
    triangular.py  trmm, trsm                        triangular multiply and solve
    cholesky.py    potrf, potri, sumlogdiag          Cholesky factor, inverse from it
    factor.py      gelqf, syevd                      LQ and symmetric eigendecomposition
    inverse.py     inverse, det, slogdet             through an LU factorization
    diag.py        extractdiag, makediag, extracttrian, maketrian

CPU: NumPy's BLAS (np.matmul) and its own LAPACK (np.linalg: cholesky, inv, solve, qr,
eigh, det, slogdet), which work on whole stacks of matrices at once; from order 32 the
routines np.linalg lacks or runs slower (potrf, potri, getrf, getri) are called from
the OpenBLAS NumPy bundles, per matrix across threads (_lapack.py; cblas trsm:
_cblas.py). SciPy is not a runtime dependency. GPU: numba.cuda kernels (nv.kernel.parallel_for), one
work item per output element, solved vector or small matrix (_kernels.py and the
factorization modules); factorizations of larger matrices take a thread block per matrix
(_blocked_cuda.py: potrf, potri, LU; _factor_cuda.py: gelqf, syevd), and their triangular
solves a block per group of right-hand sides (_solve_cuda.py: trsm, A^-1 from the LU).
They also pass on numba's CUDA simulator.
"""

from . import cholesky, diag, factor, gemm, inverse, triangular  # noqa: F401 - registrations
