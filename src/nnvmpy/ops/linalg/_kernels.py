"""GPU kernel bodies of the batched BLAS-3 primitives (one body, nv.kernel.parallel_for).

Arrays are flat and C-ordered. A stack of matrices is addressed in MXNet's gemm layout
(P, rows, Q, cols): the matrix of batch item (p, q) is x[p, :, q, :] — Q = 1 for the
usual trailing-two-axes layout, Q > 1 when `axis` puts the rows elsewhere. Triangle
codes: 0 the whole matrix, 1 its lower triangle (diagonal included), 2 its upper one.
Mode is the write request (launch.WRITE or launch.ADD).

These kernels also run on the CPU (numba) when launched with NumPy arrays; the ops
themselves use NumPy's BLAS/LAPACK there (see _batched.py).
"""

from __future__ import annotations

from ... import kernel
from ...kernel.launch import store


@kernel.device_function
def in_triangle(r, c, tri):
    """Whether (r, c) lies in the triangle `tri` (0 all, 1 lower, 2 upper)."""
    if tri == 1:
        return c <= r
    if tri == 2:
        return c >= r
    return True


@kernel.parallel_for
def gemm_elem(
    i, out, a, b, c, m, n, k, nq, a_rows, a_cols, b_rows, b_cols, ta, tb, alpha, beta,
    tri_a, tri_b, tri_out, mode,
):  # fmt: skip
    """out[p, r, q, col] (+)= alpha * sum_s op(A)[r, s] op(B)[s, col] + beta * C[...]."""
    col = i % n
    t = i // n
    q = t % nq
    t = t // nq
    r = t % m
    p = t // m
    v = 0.0
    if in_triangle(r, col, tri_out):
        s = 0.0
        for kk in range(k):
            if ta:
                ar = kk
                ac = r
            else:
                ar = r
                ac = kk
            if tb:
                br = col
                bc = kk
            else:
                br = kk
                bc = col
            if in_triangle(ar, ac, tri_a) and in_triangle(br, bc, tri_b):
                x = a[((p * a_rows + ar) * nq + q) * a_cols + ac]
                s += x * b[((p * b_rows + br) * nq + q) * b_cols + bc]
        v = alpha * s
        if beta != 0.0:
            v += beta * c[i]
    store(out, i, v, mode)


@kernel.device_function
def tri_at(t, base, n, r, c, transposed):
    """Entry (r, c) of the n x n matrix at t[base], or of its transpose."""
    if transposed:
        return t[base + c * n + r]
    return t[base + r * n + c]


@kernel.parallel_for
def trsm_vec(i, x, b, t, n, nvec, right, lower_type, transposed, alpha):
    """Solve N y = alpha * b for one right-hand side by substitution, y into x.

    N is the triangle of t (transposed when `transposed`), lower when lower_type. Left
    side: b is column j of an (n, nvec) matrix; right side: row j of an (nvec, n) one.
    x may be b itself: entry r of b is read just before entry r of x is written.
    """
    z = i // nvec
    j = i - z * nvec
    if right:
        base = (z * nvec + j) * n
        stride = 1
    else:
        base = z * n * nvec + j
        stride = nvec
    tb = z * n * n
    for step in range(n):
        r = step if lower_type else n - 1 - step
        s = alpha * b[base + r * stride]
        if lower_type:
            for q in range(r):
                s -= tri_at(t, tb, n, r, q, transposed) * x[base + q * stride]
        else:
            for q in range(r + 1, n):
                s -= tri_at(t, tb, n, r, q, transposed) * x[base + q * stride]
        x[base + r * stride] = s / tri_at(t, tb, n, r, r, transposed)


@kernel.parallel_for
def scale_elem(i, out, x, alpha, mode):
    """out (+)= alpha * x."""
    store(out, i, alpha * x[i], mode)


@kernel.parallel_for
def triangle_elem(i, out, x, n, tri, mode):
    """out (+)= x inside the triangle `tri` of each n x n matrix, 0 outside."""
    c = i % n
    r = (i // n) % n
    store(out, i, x[i] if in_triangle(r, c, tri) else 0.0, mode)


@kernel.parallel_for
def mirror_lower_elem(i, x, n):
    """x[r, c] = x[c, r] above the diagonal: the symmetric matrix of the lower triangle."""
    c = i % n
    t = i // n
    r = t % n
    if c > r:
        x[i] = x[(t - r + c) * n + r]


@kernel.parallel_for
def zero_diagonal_flag(z, flags, t, n):
    """flags[z] = 1 when the n x n matrix z of t has a zero on its diagonal, else 0."""
    flag = 0.0
    for r in range(n):
        if t[(z * n + r) * n + r] == 0.0:
            flag = 1.0
    flags[z] = flag
