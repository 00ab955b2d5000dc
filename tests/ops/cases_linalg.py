"""OpCase rows of the linalg ops (nd.linalg / sym.linalg: `_linalg_*` and MXNet's `linalg_*`).

References are written from the math with other NumPy routines than the op uses, or by
hand: a loop Cholesky, a Householder LQ, eigenvalues of the general eigensolver (geev),
the determinant as the product of the eigenvalues, inverses by solving with the
identity, diagonals and triangles by index loops. Inputs are kept well conditioned
(SPD with a margin, triangles with |diagonal| >= 1), so float32 results and finite
differences are meaningful. potrf and syevd have MXNet's symmetric gradient, which
finite differences of a non-symmetric perturbation do not give: their rows check
gradients only for 1 x 1 matrices, and tests/ops/test_linalg.py checks them through a
symmetrising graph.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from op_db import Inputs, OpCase

LINALG_TOLS = {np.float32: (2e-3, 2e-4)}  # factorizations amplify float32 rounding a little


def swap(x: np.ndarray) -> np.ndarray:
    return np.swapaxes(x, -1, -2)


def tri(x: np.ndarray, lower: bool) -> np.ndarray:
    return np.tril(x) if lower else np.triu(x)


# -- input generators ---------------------------------------------------------------------------


def spd(shape: tuple[int, ...]) -> Any:
    """Symmetric positive-definite matrices (eigenvalues >= n / 2)."""

    def make(rng: np.random.Generator, dtype: Any) -> Inputs:
        x = rng.uniform(-1, 1, size=shape)
        n = shape[-1]
        return [(x @ swap(x) + 0.5 * n * np.eye(n)).astype(dtype)]

    return make


def triangular(shape: tuple[int, ...], *others: tuple[int, ...]) -> Any:
    """Matrices with a diagonal of magnitude 1..2 (either triangle nonsingular), then others."""

    def make(rng: np.random.Generator, dtype: Any) -> Inputs:
        x = rng.uniform(-0.5, 0.5, size=shape)
        n = shape[-1]
        sign = np.where(rng.uniform(size=shape[:-1]) < 0.5, -1.0, 1.0)
        x[..., np.arange(n), np.arange(n)] = sign * rng.uniform(1, 2, size=shape[:-1])
        rest = [rng.uniform(-1, 1, size=s) for s in others]
        return [a.astype(dtype) for a in (x, *rest)]

    return make


def well_conditioned(shape: tuple[int, ...]) -> Any:
    """General matrices A + n I with A uniform in [-1, 1]: far from singular."""

    def make(rng: np.random.Generator, dtype: Any) -> Inputs:
        n = shape[-1]
        return [(rng.uniform(-1, 1, size=shape) + n * np.eye(n)).astype(dtype)]

    return make


def distinct_spectrum(shape: tuple[int, ...]) -> Any:
    """Symmetric matrices with eigenvalues 1, 2, ..., n: well separated."""

    def make(rng: np.random.Generator, dtype: Any) -> Inputs:
        n = shape[-1]
        q, _ = np.linalg.qr(rng.standard_normal(shape))
        s = q @ (np.arange(1, n + 1)[:, None] * swap(q))
        return [s.astype(dtype)]

    return make


# -- references ---------------------------------------------------------------------------------


def gemm_ref(a, b, c=None, transpose_a=False, transpose_b=False, alpha=1.0, beta=1.0, axis=-2):
    # MXNet: a non-default axis is swapaxes(axis, -2), gemm, swapaxes back
    a, b = np.swapaxes(a, axis, -2), np.swapaxes(b, axis, -2)
    out = alpha * np.einsum(
        "...ij,...jk->...ik", swap(a) if transpose_a else a, swap(b) if transpose_b else b
    )
    if c is not None:
        out = out + beta * np.swapaxes(c, axis, -2)
    return np.swapaxes(out, axis, -2)


def gemm2_ref(a, b, transpose_a=False, transpose_b=False, alpha=1.0, axis=-2):
    return gemm_ref(a, b, None, transpose_a, transpose_b, alpha, 0.0, axis)


def syrk_ref(a, transpose=False, alpha=1.0):
    return alpha * (swap(a) @ a if transpose else a @ swap(a))


def trmm_ref(a, b, transpose=False, rightside=False, lower=True, alpha=1.0):
    m = tri(a, lower)
    m = swap(m) if transpose else m
    return alpha * (b @ m if rightside else m @ b)


def trsm_ref(a, b, transpose=False, rightside=False, lower=True, alpha=1.0):
    m = tri(a, lower)
    inv = np.linalg.inv(swap(m) if transpose else m)
    return alpha * (b @ inv if rightside else inv @ b)


def cholesky_loop(a: np.ndarray) -> np.ndarray:
    """Cholesky-Banachiewicz on the lower triangle of each matrix of a stack."""
    flat = a.reshape(-1, *a.shape[-2:])
    out = np.zeros_like(flat)
    n = a.shape[-1]
    for z in range(len(flat)):
        for i in range(n):
            for j in range(i + 1):
                s = flat[z, i, j] - out[z, i, :j] @ out[z, j, :j]
                out[z, i, j] = np.sqrt(s) if i == j else s / out[z, j, j]
    return out.reshape(a.shape)


def potrf_ref(a, lower=True):
    return cholesky_loop(a) if lower else swap(cholesky_loop(swap(a)))


def potri_ref(a, lower=True):
    m = tri(a, lower)
    b = m @ swap(m) if lower else swap(m) @ m
    return np.linalg.solve(b, np.broadcast_to(np.eye(a.shape[-1]), a.shape))


def sumlogdiag_ref(a):
    out = np.log(np.diagonal(a, axis1=-2, axis2=-1)).sum(axis=-1)
    return out.reshape(a.shape[:-2] or (1,))


def extractdiag_ref(a, offset=0):
    n = a.shape[-1]
    idx = [(r, r + offset) for r in range(n) if 0 <= r + offset < n]
    return np.stack([a[..., r, c] for r, c in idx], axis=-1)


def makediag_ref(d, offset=0):
    m = d.shape[-1]
    n = m + abs(offset)
    out = np.zeros((*d.shape[:-1], n, n))
    for t in range(m):
        out[..., t + max(-offset, 0), t + max(offset, 0)] = d[..., t]
    return out


def triangle_positions(n: int, offset: int, lower: bool) -> list[tuple[int, int]]:
    """(r, c) of MXNet's triangle in packing order: below diagonal `offset` (offset < 0,
    or offset 0 and lower) row by row, else above it column by column."""
    if offset < 0 or (offset == 0 and lower):
        return [(r, c) for r in range(n) for c in range(n) if c - r <= offset]
    return [(r, c) for c in range(n) for r in range(n) if c - r >= offset]


def extracttrian_ref(a, offset=0, lower=True):
    pos = triangle_positions(a.shape[-1], offset, lower)
    return np.stack([a[..., r, c] for r, c in pos], axis=-1)


def maketrian_ref(v, offset=0, lower=True):
    size = v.shape[-1]
    m = round((np.sqrt(8 * size + 1) - 1) / 2)
    n = m + abs(offset)
    out = np.zeros((*v.shape[:-1], n, n))
    for t, (r, c) in enumerate(triangle_positions(n, offset, lower)):
        out[..., r, c] = v[..., t]
    return out


def householder_lq(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """LAPACK's LQ (gelqf + orglq), reflector by reflector, for one m x n matrix."""
    m, n = a.shape
    work = a.copy()
    q = np.eye(n)
    for i in range(m):
        x = work[i, i:].copy()
        if np.linalg.norm(x[1:]) == 0:
            continue  # H = I (tau = 0)
        beta = -np.copysign(np.linalg.norm(x), x[0])
        v = x.copy()
        v[0] -= beta
        v /= v[0]
        tau = (beta - x[0]) / beta
        h = np.eye(n)
        h[i:, i:] -= tau * np.outer(v, v)
        work = work @ h
        q = h @ q
    return q[:m], np.tril(work[:, :m])


def gelqf_ref(a):
    pairs = [householder_lq(m) for m in a.reshape(-1, *a.shape[-2:])]
    q = np.stack([p[0] for p in pairs]).reshape(a.shape)
    lo = np.stack([p[1] for p in pairs]).reshape(*a.shape[:-1], a.shape[-2])
    return [q, lo]


def syevd_ref(a):
    """Eigenvectors as rows, ascending eigenvalues, rows signed by their largest entry."""
    flat = np.tril(a.reshape(-1, *a.shape[-2:]))
    sym = flat + swap(np.tril(flat, -1))
    us, lams = [], []
    for s in sym:
        lam, v = np.linalg.eig(s)  # the general solver: another LAPACK path than syevd
        order = np.argsort(lam.real)
        u = v.real[:, order].T
        for row in u:
            if row[np.argmax(np.abs(row))] < 0:
                row *= -1
        us.append(u)
        lams.append(lam.real[order])
    return [np.stack(us).reshape(a.shape), np.stack(lams).reshape(a.shape[:-1])]


def inverse_ref(a):
    return np.linalg.solve(a, np.broadcast_to(np.eye(a.shape[-1]), a.shape))


def det_ref(a):
    det = np.prod(np.linalg.eigvals(a), axis=-1).real
    return det.reshape(a.shape[:-2] or (1,))


def slogdet_ref(a):
    det = det_ref(a)
    return [np.sign(det), np.log(np.abs(det))]


# -- the rows -----------------------------------------------------------------------------------

M = (2, 3, 3)  # a batch of two 3 x 3 matrices

CASES = [
    # -- gemm / gemm2 / syrk --
    OpCase("_linalg_gemm", [(2, 3, 4), (2, 4, 5), (2, 3, 5)], gemm_ref,
           {"alpha": 2.0, "beta": 0.5}),
    OpCase("_linalg_gemm", [(3, 4), (5, 3), (4, 5)], gemm_ref,
           {"transpose_a": True, "transpose_b": True, "alpha": -1.5, "beta": 3.0}, id="tt"),
    OpCase("_linalg_gemm", [(3, 2, 4, 2), (3, 2, 4, 5), (2, 2, 4, 5)], gemm_ref,
           {"axis": 0, "transpose_a": True, "alpha": 0.5}, id="axis0"),
    OpCase("_linalg_gemm2", [(2, 3, 4), (2, 4, 2)], gemm2_ref, {"alpha": 4.0}),
    OpCase("_linalg_gemm2", [(4, 2, 3), (5, 2, 3)], gemm2_ref,
           {"axis": -3, "transpose_b": True}, id="axis-3"),
    OpCase("_linalg_syrk", [(2, 3, 4)], syrk_ref, {"alpha": -2.0}),
    OpCase("_linalg_syrk", [(3, 2)], syrk_ref, {"transpose": True, "alpha": 0.5}, id="t"),
    # -- trmm / trsm --
    OpCase("_linalg_trmm", [M, (2, 3, 4)], trmm_ref, {"alpha": 2.0}),
    OpCase("_linalg_trmm", [M, (2, 4, 3)], trmm_ref,
           {"rightside": True, "transpose": True, "lower": False, "alpha": -1.0}, id="right-upper"),
    OpCase("_linalg_trsm", [M, (2, 3, 4)], trsm_ref, {"alpha": 7.0},
           inputs=triangular(M, (2, 3, 4)), tols=LINALG_TOLS, low=1.0, high=2.0),
    OpCase("_linalg_trsm", [M, (2, 4, 3)], trsm_ref,
           {"rightside": True, "transpose": True, "lower": False, "alpha": -0.5},
           inputs=triangular(M, (2, 4, 3)), tols=LINALG_TOLS, low=1.0, high=2.0,
           id="right-upper"),
    OpCase("_linalg_trsm", [(3, 3), (3, 2)], trsm_ref, {"transpose": True},
           inputs=triangular((3, 3), (3, 2)), tols=LINALG_TOLS, low=1.0, high=2.0, id="t"),
    # -- potrf / potri / sumlogdiag --
    OpCase("_linalg_potrf", [(2, 4, 4)], potrf_ref, inputs=spd((2, 4, 4)), tols=LINALG_TOLS,
           grad=False, check_op=False),  # symmetric gradient (test_linalg.py); SPD input
    OpCase("_linalg_potrf", [(2, 4, 4)], potrf_ref, {"lower": False}, inputs=spd((2, 4, 4)),
           tols=LINALG_TOLS, grad=False, check_op=False, id="upper"),
    OpCase("_linalg_potrf", [(3, 1, 1)], potrf_ref, low=0.5, high=2.0, id="1x1"),
    OpCase("_linalg_potri", [M], potri_ref, inputs=triangular(M), tols=LINALG_TOLS,
           low=1.0, high=2.0),
    OpCase("_linalg_potri", [M], potri_ref, {"lower": False}, inputs=triangular(M),
           tols=LINALG_TOLS, low=1.0, high=2.0, id="upper"),
    OpCase("_linalg_sumlogdiag", [M], sumlogdiag_ref, low=0.5, high=2.0),
    OpCase("_linalg_sumlogdiag", [(4, 4)], sumlogdiag_ref, low=0.5, high=2.0, id="single"),
    # -- diagonals and triangles --
    OpCase("_linalg_extractdiag", [(2, 4, 4)], extractdiag_ref),
    OpCase("_linalg_extractdiag", [(4, 4)], extractdiag_ref, {"offset": -2}, id="below"),
    OpCase("_linalg_makediag", [(2, 3)], makediag_ref),
    OpCase("_linalg_makediag", [(3,)], makediag_ref, {"offset": 1}, id="above"),
    OpCase("_linalg_extracttrian", [(2, 4, 4)], extracttrian_ref),
    OpCase("_linalg_extracttrian", [(3, 3)], extracttrian_ref, {"lower": False}, id="upper"),
    OpCase("_linalg_extracttrian", [(2, 4, 4)], extracttrian_ref, {"offset": -1}, id="below"),
    OpCase("_linalg_extracttrian", [(4, 4)], extracttrian_ref, {"offset": 2}, id="above"),
    OpCase("_linalg_maketrian", [(2, 6)], maketrian_ref),
    OpCase("_linalg_maketrian", [(6,)], maketrian_ref, {"lower": False}, id="upper"),
    OpCase("_linalg_maketrian", [(2, 3)], maketrian_ref, {"offset": 1}, id="above"),
    OpCase("_linalg_maketrian", [(3,)], maketrian_ref, {"offset": -2}, id="below"),
    # -- factorizations --
    OpCase("_linalg_gelqf", [(2, 3, 5)], gelqf_ref, tols=LINALG_TOLS),
    OpCase("_linalg_gelqf", [(4, 4)], gelqf_ref, tols=LINALG_TOLS, id="square"),
    OpCase("_linalg_syevd", [(2, 4, 4)], syevd_ref, inputs=distinct_spectrum((2, 4, 4)),
           tols={np.float32: (1e-2, 1e-3)}, grad=False),  # symmetric gradient
    OpCase("_linalg_syevd", [(2, 1, 1)], syevd_ref, id="1x1"),
    # -- inverse, det, slogdet --
    OpCase("_linalg_inverse", [M], inverse_ref, inputs=well_conditioned(M), tols=LINALG_TOLS),
    OpCase("_linalg_det", [M], det_ref, inputs=well_conditioned(M), tols=LINALG_TOLS),
    OpCase("_linalg_det", [(3, 3)], det_ref, inputs=well_conditioned((3, 3)),
           tols=LINALG_TOLS, id="single"),
    OpCase("_linalg_slogdet", [M], slogdet_ref, inputs=well_conditioned(M), tols=LINALG_TOLS,
           grad_inputs=[0]),
]  # fmt: skip

# MXNet 1.9.1's aliases (linalg_gemm, ...; syevd has none): the first row of each op again
_first = {c.name: c for c in reversed(CASES)}
CASES += [
    OpCase(
        "linalg_" + name[len("_linalg_") :],
        c.shapes,
        c.reference,
        dict(c.params),
        low=c.low,
        high=c.high,
        inputs=c.inputs,
        tols=c.tols,
        grad=c.grad,
        check_op=c.check_op,
        id="alias",
    )
    for name, c in _first.items()
    if name != "_linalg_syevd"
]
