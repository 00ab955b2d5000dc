"""nd.linalg / sym.linalg beyond the op table (cases_linalg.py): MXNet's documented
examples, what the factorizations promise, one-triangle reads, the symmetric gradients
of potrf and syevd, the GPU kernels compiled for the CPU, and named errors.

Expected values are MXNet 1.9.1's documented examples (la_op.cc) or NumPy facts about
the result (L L^T = A, Q Q^T = I, ...), never this code's own output.
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any

import numpy as np
import op_db  # noqa: F401  (first: it loads every cases_*.py, so cases_linalg is complete)
import pytest
from cases_linalg import CASES, spd
from cases_linalg import triangular as triangular_inputs
from test_op_db import make_inputs

import nnvmpy as nv
import nnvmpy.ops.linalg as linalg_pkg
from nnvmpy import autograd
from nnvmpy.test_utils import check_numeric_gradient, check_symbolic_backward

nd, sym = nv.nd, nv.sym
DTYPES = [np.float32, np.float64]


def arr(x: Any, ctx: nv.Context, dtype: Any = np.float64) -> nv.nd.NDArray:
    return nd.array(np.asarray(x, dtype=dtype), ctx=ctx, dtype=dtype)


def close(got: Any, want: Any, dtype: Any = np.float64, scale: float = 1.0) -> None:
    tol = (1e-9 if np.dtype(dtype) == np.float64 else 2e-5) * scale
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=tol, atol=tol)


# -- MXNet's documented examples ------------------------------------------------------------------

A22 = [[1.0, 4.0], [2.0, 3.0]]
EXAMPLES = [  # (op, inputs, params, expected outputs), from MXNet 1.9.1's operator docs
    ("gemm", [[[1.0, 1.0], [1.0, 1.0]], np.ones((3, 2)), np.ones((2, 3))],
     {"transpose_b": True, "alpha": 2.0, "beta": 10.0}, [np.full((2, 3), 14.0)]),
    ("gemm", [[[[1.0, 1.0]], [[0.1, 0.1]]], [[[1.0, 1.0]], [[0.1, 0.1]]], [[[10.0]], [[0.01]]]],
     {"transpose_b": True, "alpha": 2.0, "beta": 10.0}, [[[[104.0]], [[0.14]]]]),
    ("gemm2", [[[1.0, 1.0], [1.0, 1.0]], np.ones((3, 2))], {"transpose_b": True, "alpha": 2.0},
     [np.full((2, 3), 4.0)]),
    ("potrf", [[[4.0, 1.0], [1.0, 4.25]]], {}, [[[2.0, 0.0], [0.5, 2.0]]]),
    ("potrf", [[[[4.0, 1.0], [1.0, 4.25]], [[16.0, 4.0], [4.0, 17.0]]]], {},
     [[[[2.0, 0], [0.5, 2.0]], [[4.0, 0], [1.0, 4.0]]]]),
    ("potri", [[[2.0, 0.0], [0.5, 2.0]]], {}, [[[0.265625, -0.0625], [-0.0625, 0.25]]]),
    ("trmm", [[[1.0, 0.0], [1.0, 1.0]], np.ones((2, 3))], {"alpha": 2.0},
     [[[2.0] * 3, [4.0] * 3]]),
    ("trsm", [[[1.0, 0.0], [1.0, 1.0]], [[2.0] * 3, [4.0] * 3]], {"alpha": 0.5}, [np.ones((2, 3))]),
    ("sumlogdiag", [[[[1.0, 1.0], [1.0, 7.0]], [[3.0, 0], [0, 17.0]]]], {},
     [[np.log(7.0), np.log(51.0)]]),
    ("extractdiag", [[[1.0, 2.0], [3.0, 4.0]]], {"offset": 1}, [[2.0]]),
    ("makediag", [[1.0, 2.0]], {"offset": 1}, [[[0, 1.0, 0], [0, 0, 2.0], [0, 0, 0]]]),
    ("extracttrian", [[[1.0, 2.0], [3.0, 4.0]]], {"lower": False}, [[1.0, 2.0, 4.0]]),
    # MXNet 1.9.1 packs an upper triangle column by column (its output for these inputs)
    ("extracttrian", [np.arange(16.0).reshape(4, 4)], {"lower": False},
     [[0, 1, 5, 2, 6, 10, 3, 7, 11, 15]]),
    ("maketrian", [np.arange(1.0, 7.0)], {"offset": 1},
     [[[0, 1, 2, 4], [0, 0, 3, 5], [0, 0, 0, 6], [0, 0, 0, 0]]]),
    ("maketrian", [[1.0, 2.0, 3.0]], {"offset": -1},
     [[[0, 0, 0], [1.0, 0, 0], [2.0, 3.0, 0]]]),
    ("syrk", [[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]], {"transpose": True},
     [[[17.0, 22, 27], [22, 29, 36], [27, 36, 45]]]),
    ("gelqf", [[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]], {},
     [[[-0.26726124, -0.53452248, -0.80178373], [0.87287156, 0.21821789, -0.43643578]],
      [[-3.74165739, 0.0], [-8.55235974, 1.96396101]]]),
    ("syevd", [[[[1.0, 2.0], [2.0, 4.0]], [[1.0, 2.0], [2.0, 5.0]]]], {},
     [[[[0.89442719, -0.4472136], [0.4472136, 0.89442719]],
       [[0.92387953, -0.38268343], [0.38268343, 0.92387953]]],
      [[0.0, 5.0], [0.17157288, 5.82842712]]]),
    ("inverse", [A22], {}, [[[-0.6, 0.8], [0.4, -0.2]]]),
    ("det", [[A22, [[2.0, 3.0], [1.0, 4.0]]]], {}, [[-5.0, 5.0]]),
    ("slogdet", [[[[2.0, 3.0], [1.0, 4.0]], [[1.0, 2.0], [2.0, 4.0]], [[1.0, 2.0], [4.0, 3.0]]]],
     {}, [[1.0, 0.0, -1.0], [np.log(5.0), -np.inf, np.log(5.0)]]),
]  # fmt: skip


@pytest.mark.parametrize(
    ("op", "inputs", "params", "expected"), EXAMPLES, ids=[e[0] for e in EXAMPLES]
)
def test_mxnet_documented_examples(op: str, inputs: list, params: dict, expected: list, ctx):
    got = getattr(nd.linalg, op)(*[arr(x, ctx) for x in inputs], **params)
    got = got if isinstance(got, list) else [got]
    assert len(got) == len(expected)
    for g, want in zip(got, expected):
        np.testing.assert_allclose(g.asnumpy(), want, rtol=1e-7, atol=1e-7)


# -- what the factorizations promise ----------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
def test_factorizations_reconstruct_their_input(dtype: Any, ctx: nv.Context) -> None:
    rng = np.random.default_rng(7)
    a = spd((3, 5, 5))(rng, np.float64)[0]
    for lower in (True, False):
        f = nd.linalg.potrf(arr(a, ctx, dtype), lower=lower).asnumpy().astype(np.float64)
        assert np.all(np.diagonal(f, axis1=1, axis2=2) > 0)
        assert not (np.triu(f, 1) if lower else np.tril(f, -1)).any()
        close(f @ f.transpose(0, 2, 1) if lower else f.transpose(0, 2, 1) @ f, a, dtype, 10)
        inv = nd.linalg.potri(arr(f, ctx, dtype), lower=lower).asnumpy()
        close(inv @ a, np.broadcast_to(np.eye(5), a.shape), dtype, 10)
    g = rng.standard_normal((2, 3, 6))
    q, lo = (t.asnumpy().astype(np.float64) for t in nd.linalg.gelqf(arr(g, ctx, dtype)))
    assert not np.triu(lo, 1).any()
    close(q @ q.transpose(0, 2, 1), np.broadcast_to(np.eye(3), (2, 3, 3)), dtype, 10)
    close(lo @ q, g, dtype, 10)
    u, lam = (t.asnumpy().astype(np.float64) for t in nd.linalg.syevd(arr(a, ctx, dtype)))
    assert np.all(np.diff(lam, axis=1) >= 0)
    close(u @ a, lam[..., None] * u, dtype, 100)
    close(u @ u.transpose(0, 2, 1), np.broadcast_to(np.eye(5), a.shape), dtype, 10)
    big = np.take_along_axis(u, np.abs(u).argmax(axis=2)[..., None], axis=2)
    assert np.all(big > 0)
    x = nd.linalg.inverse(arr(a, ctx, dtype)).asnumpy()
    close(a @ x, np.broadcast_to(np.eye(5), a.shape), dtype, 10)


# -- one triangle is read, and only it gets a gradient ------------------------------------------


@pytest.mark.parametrize(
    ("op", "params"),
    [
        ("potrf", {"lower": True}),
        ("potrf", {"lower": False}),
        ("potri", {"lower": False}),
        ("trsm", {"lower": False, "transpose": True}),
        ("trmm", {"rightside": True}),
        ("syevd", {}),
    ],
)
def test_only_the_named_triangle_is_read(op: str, params: dict, ctx: nv.Context) -> None:
    rng = np.random.default_rng(3)
    a = spd((2, 4, 4))(rng, np.float64)[0]
    keep = np.tril if params.get("lower", True) else np.triu
    outside = 1 - keep(np.ones((4, 4)))
    junk = a + 100.0 * outside
    extra = [arr(rng.standard_normal((2, 4, 4)), ctx)] if op in ("trsm", "trmm") else []
    clean = getattr(nd.linalg, op)(arr(a, ctx), *extra, **params)
    dirty = getattr(nd.linalg, op)(arr(junk, ctx), *extra, **params)
    for c, d in zip(*(x if isinstance(x, list) else [x] for x in (clean, dirty))):
        np.testing.assert_allclose(d.asnumpy(), c.asnumpy(), rtol=1e-12, atol=1e-12)
    if op in ("potri", "trsm", "trmm"):  # their gradient lives on the triangle
        x = arr(a, ctx)
        x.attach_grad()
        with autograd.record():
            y = getattr(nd.linalg, op)(x, *extra, **params)
        y.backward(nd.ones(y.shape, ctx=ctx, dtype=np.float64))
        assert not (x.grad.asnumpy() * outside).any()


# -- MXNet's symmetric gradients ------------------------------------------------------------------


def _symmetric(x: Any, ndim: int) -> Any:
    axes = (*range(ndim - 2), ndim - 1, ndim - 2)
    return 0.5 * (x + sym.transpose(x, axes=axes))


@pytest.mark.parametrize("lower", [True, False])
def test_potrf_gradient_along_symmetric_perturbations(lower: bool) -> None:
    a = spd((2, 4, 4))(np.random.default_rng(1), np.float64)[0]
    s = sym.linalg.potrf(_symmetric(sym.var("a"), 3), lower=lower)
    check_numeric_gradient(s, {"a": a}, numeric_eps=1e-6, rtol=1e-5, atol=1e-6, dtype=np.float64)


def test_potrf_gradient_is_symmetric() -> None:
    """MXNet spreads the gradient over both triangles: dA is a symmetric matrix."""
    a = spd((4, 4))(np.random.default_rng(2), np.float64)[0]
    x = arr(a, nv.cpu())
    x.attach_grad()
    with autograd.record():
        y = nd.linalg.potrf(x)
    y.backward(arr(np.random.default_rng(5).standard_normal((4, 4)), nv.cpu()))
    np.testing.assert_allclose(x.grad.asnumpy(), x.grad.asnumpy().T, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("output", [0, 1])
def test_syevd_gradient_along_symmetric_perturbations(output: int) -> None:
    rng = np.random.default_rng(4)
    a = CASES_BY_ID["_linalg_syevd"].make_inputs(rng, np.float64)[0]
    s = sym.linalg.syevd(_symmetric(sym.var("a"), 3))[output]
    check_numeric_gradient(s, {"a": a}, numeric_eps=1e-6, rtol=1e-4, atol=1e-6, dtype=np.float64)


def test_syevd_backward_is_mxnets_formula(ctx: nv.Context) -> None:
    """dA = U^T (diag(dL) + F) U, F_ij = (T_ij - T_ji) / (2 (L_i - L_j)), T = dU U^T."""
    rng = np.random.default_rng(6)
    a = rng.standard_normal((5, 5))
    a = a + a.T
    lam, v = np.linalg.eigh(a)
    u = v.T * np.where(v.T[np.arange(5), np.abs(v.T).argmax(1)] < 0, -1, 1)[:, None]
    du, dl = rng.standard_normal((5, 5)), rng.standard_normal(5)
    t = du @ u.T
    f = np.diag(dl)
    for i in range(5):
        for j in range(5):
            if i != j:
                f[i, j] = (t[i, j] - t[j, i]) / (2 * (lam[i] - lam[j]))
    want = u.T @ f @ u
    check_symbolic_backward(
        sym.linalg.syevd(sym.var("a")), [a], [du, dl], [want], rtol=1e-7, atol=1e-9,
        dtype=np.float64, ctx=ctx,
    )  # fmt: skip


# -- the GPU kernels, compiled by numba for the CPU -----------------------------------------------

LINALG_CASES = [c for c in CASES if c.name.startswith("_linalg_")]
CASES_BY_ID = {c.test_id: c for c in LINALG_CASES}
_MODULES = [
    importlib.import_module(f"{linalg_pkg.__name__}.{m.name}")
    for m in pkgutil.iter_modules(linalg_pkg.__path__)
]


def _forward_and_grads(case: Any, inputs: list[np.ndarray]) -> list[np.ndarray]:
    arrays = [nd.array(x, dtype=x.dtype) for x in inputs]
    for a in arrays:
        a.attach_grad()
    fn = getattr(nd._internal, case.name)
    with autograd.record():
        out = fn(*arrays, **case.params)
    out = out if isinstance(out, list) else [out]
    heads = [nd.array(np.linspace(-1, 1, o.size).reshape(o.shape), dtype=o.dtype) for o in out]
    autograd.backward(out, heads)
    return [o.asnumpy() for o in out] + [a.grad.asnumpy() for a in arrays]


@pytest.mark.parametrize("case", LINALG_CASES, ids=[c.test_id for c in LINALG_CASES])
def test_gpu_code_compiled_for_the_cpu_matches_numpy(case: Any, monkeypatch) -> None:
    """Each op through its GPU code (kernels, scratch, flags) with NumPy arrays.

    The CUDA simulator runs the kernels as Python; here numba compiles the same bodies
    for the CPU, so typing errors in them show up without a GPU.
    """
    for dtype in DTYPES:
        inputs = make_inputs(case, dtype, "kernels")
        want = _forward_and_grads(case, inputs)
        with monkeypatch.context() as patch:
            for module in _MODULES:
                if hasattr(module, "is_gpu"):
                    patch.setattr(module, "is_gpu", lambda ctx: True)
            got = _forward_and_grads(case, inputs)
        for g, w in zip(got, want):
            close(g, w, dtype, 1e3 if dtype == np.float32 else 1e4)


# -- bad input ------------------------------------------------------------------------------------


def test_shape_and_dtype_errors_name_the_op_and_the_input() -> None:
    ones = nd.ones
    cases = [
        (lambda: nd.linalg.gemm2(ones((2, 3)), ones((2, 3))), r"gemm2.*incompatible.*2 x 3.*2 x 3"),
        (lambda: nd.linalg.gemm(ones((2, 3)), ones((3, 2)), ones((3, 3))), r"gemm.*'C'"),
        (lambda: nd.linalg.gemm2(ones((2, 3, 4)), ones((3, 4, 2))), r"gemm2.*same shape except"),
        (lambda: nd.linalg.gemm2(ones((3, 3)), ones((3, 3)), axis=-1), r"gemm2.*axis -1"),
        (lambda: nd.linalg.potrf(ones((2, 3))), r"potrf.*'A'.*\(2, 3\).*square"),
        (lambda: nd.linalg.inverse(ones((3,))), r"inverse.*'A'.*matrix"),
        (lambda: nd.linalg.trsm(ones((3, 3)), ones((2, 3))), r"trsm.*incompatible.*rows"),
        (lambda: nd.linalg.trmm(ones((3, 3)), ones((3, 2)), rightside=True), r"trmm.*columns"),
        (lambda: nd.linalg.gelqf(ones((3, 2))), r"gelqf.*'A'.*\(3, 2\).*at most as many rows"),
        (lambda: nd.linalg.maketrian(ones((4,))), r"maketrian.*'A'.*m\*\(m\+1\)/2"),
        (lambda: nd.linalg.extractdiag(ones((2, 2)), offset=2), r"extractdiag.*offset 2"),
        (lambda: nd.linalg.extracttrian(ones((2, 2)), offset=-2), r"extracttrian.*offset -2"),
        (lambda: nd.linalg.det(ones((2, 2), dtype="int32")), r"det.*'A'.*int32.*float32"),
        (lambda: nd.linalg.gemm2(ones((2, 2)), ones((2, 2), dtype="float64")), r"gemm2.*'B'"),
    ]
    for call, pattern in cases:
        with pytest.raises(nv.InferError, match=pattern):
            call()
    # the registry and the engine keep working
    np.testing.assert_allclose(nd.linalg.gemm2(ones((2, 3)), ones((3, 2))).asnumpy(), 3.0)


def test_singular_and_indefinite_matrices_raise_named_errors(ctx: nv.Context) -> None:
    good = np.eye(3) * 2.0
    indefinite = np.stack([good, np.diag([1.0, -1.0, 1.0])])
    singular = np.stack([good, [[1.0, 2, 3], [2, 4, 6], [0, 0, 1]]])
    zero_diag = np.stack([good, np.tril(np.ones((3, 3))) - np.diag([0, 1.0, 0])])
    calls = [
        (lambda: nd.linalg.potrf(arr(indefinite, ctx)), r"potrf.*not symmetric.*matrix 1"),
        (lambda: nd.linalg.inverse(arr(singular, ctx)), r"inverse.*singular.*matrix 1"),
        (lambda: nd.linalg.trsm(arr(zero_diag, ctx), arr(good[None].repeat(2, 0), ctx)),
         r"trsm.*singular.*matrix 1.*zero on its diagonal"),
        (lambda: nd.linalg.potri(arr(zero_diag, ctx)), r"potri.*singular"),
    ]  # fmt: skip
    for call, pattern in calls:
        with pytest.raises(nv.NNVMError, match=pattern):
            call().asnumpy()
    # nothing is poisoned: the same ops work on good input, on the same device
    np.testing.assert_allclose(nd.linalg.potrf(arr(good, ctx)).asnumpy(), np.eye(3) * 2**0.5)
    np.testing.assert_allclose(nd.linalg.inverse(arr(good, ctx)).asnumpy(), np.eye(3) / 2)
    nd.waitall()


def test_singular_matrices_have_determinant_zero(ctx: nv.Context) -> None:
    singular = arr([[1.0, 2.0], [2.0, 4.0]], ctx)
    assert nd.linalg.det(singular).asnumpy().tolist() == [0.0]
    sign, logabs = nd.linalg.slogdet(singular)
    assert sign.asnumpy().tolist() == [0.0]
    assert logabs.asnumpy().tolist() == [-np.inf]


def test_errors_inside_a_graph_name_the_op_and_leave_the_executor_usable() -> None:
    s = sym.linalg.potrf(sym.var("a"))
    exe = s.simple_bind(nv.cpu(), a=(2, 2))
    exe.forward(a=np.array([[1.0, 2.0], [2.0, 1.0]]))
    with pytest.raises(nv.NNVMError, match=r"potrf.*positive-definite"):
        exe.outputs[0].asnumpy()
    exe.forward(a=np.array([[4.0, 2.0], [2.0, 5.0]]))
    np.testing.assert_allclose(exe.outputs[0].asnumpy(), [[2.0, 0.0], [1.0, 2.0]], rtol=1e-6)


# -- shapes, names, namespaces ------------------------------------------------------------------

NAMES = [
    "gemm", "gemm2", "potrf", "potri", "trmm", "trsm", "syrk", "gelqf", "syevd", "sumlogdiag",
    "extractdiag", "makediag", "extracttrian", "maketrian", "inverse", "det", "slogdet",
]  # fmt: skip


def test_namespaces_aliases_and_signatures() -> None:
    assert set(NAMES) <= set(dir(nd.linalg))
    assert set(NAMES) <= set(dir(sym.linalg))
    for name in NAMES:  # MXNet 1.9.1 aliases every op but syevd as linalg_<name>
        assert hasattr(nd, f"linalg_{name}") == (name != "syevd")
    a, b, c = sym.var("a"), sym.var("b"), sym.var("c")
    assert sym.linalg.gemm(a, b, c, name="g").list_arguments() == ["a", "b", "c"]
    assert sym.linalg.gemm(name="g").list_arguments() == ["g_A", "g_B", "g_C"]
    assert sym.linalg.det(a, name="d").list_outputs() == ["d_output0"]
    assert sym.linalg.slogdet(a, name="s").list_outputs() == ["s_output0", "s_output1"]
    _, outs, _ = sym.linalg.gelqf(a).infer_shape(a=(4, 2, 3))
    assert outs == [(4, 2, 3), (4, 2, 2)]
    _, outs, _ = sym.linalg.syevd(a).infer_shape(a=(3, 3))
    assert outs == [(3, 3), (3,)]
    _, outs, _ = sym.linalg.sumlogdiag(a).infer_shape(a=(3, 3))
    assert outs == [(1,)]


@pytest.mark.parametrize(
    ("op", "shapes", "out_shapes"),
    [
        ("potrf", [(0, 3, 3)], [(0, 3, 3)]),
        ("inverse", [(0, 2, 2)], [(0, 2, 2)]),
        ("det", [(2, 0, 2, 2)], [(2, 0)]),
        ("gemm2", [(0, 2, 3), (0, 3, 4)], [(0, 2, 4)]),
        ("trsm", [(0, 2, 2), (0, 2, 5)], [(0, 2, 5)]),
        ("syevd", [(0, 3, 3)], [(0, 3, 3), (0, 3)]),
        ("gelqf", [(0, 2, 3)], [(0, 2, 3), (0, 2, 2)]),
    ],
)
def test_empty_batches(op: str, shapes: list, out_shapes: list, ctx: nv.Context) -> None:
    got = getattr(nd.linalg, op)(*[nd.array(np.zeros(s), ctx=ctx) for s in shapes])
    got = got if isinstance(got, list) else [got]
    assert [g.shape for g in got] == out_shapes
    assert all(g.asnumpy().size == 0 for g in got)


def test_out_of_place_results_match_in_place_ones(ctx: nv.Context) -> None:
    """FInplaceOption pairs (potrf, potri, trsm, gemm, inverse) are safe on every device."""
    rng = np.random.default_rng(9)
    case = CASES_BY_ID["_linalg_potrf"]
    a = case.make_inputs(rng, np.float64)[0]
    x = arr(a, ctx)
    want = nd.linalg.potrf(x).asnumpy()
    nd.linalg.potrf(x, out=x)
    np.testing.assert_allclose(x.asnumpy(), want, rtol=1e-12)
    t = np.tril(a)
    b = arr(rng.standard_normal((2, 4, 3)), ctx)
    want = nd.linalg.trsm(arr(t, ctx), b).asnumpy()
    nd.linalg.trsm(arr(t, ctx), b, out=b)
    np.testing.assert_allclose(b.asnumpy(), want, rtol=1e-12)


# -- CPU paths ------------------------------------------------------------------------------------


@pytest.mark.parametrize("batch", [2, 200])  # cblas trsm per matrix; one LAPACK solve
def test_trsm_paths_solve_the_triangular_system(batch: int) -> None:
    rng = np.random.default_rng(batch)
    t = triangular_inputs((batch, 3, 3), (batch, 3, 2))(rng, np.float64)
    for lower, transpose, right in [(True, False, False), (False, True, True)]:
        b = t[1] if not right else np.swapaxes(t[1], 1, 2)
        x = nd.linalg.trsm(
            arr(t[0], nv.cpu()), arr(b, nv.cpu()), lower=lower, transpose=transpose,
            rightside=right, alpha=3.0,
        ).asnumpy()  # fmt: skip
        m = np.tril(t[0]) if lower else np.triu(t[0])
        m = np.swapaxes(m, 1, 2) if transpose else m
        close(x @ m if right else m @ x, 3.0 * b)


def test_one_blas_thread_context_restores_the_setting() -> None:
    from nnvmpy.ops.linalg import _cblas

    fn = _cblas._local_threads()
    if fn is None:
        pytest.skip("NumPy's BLAS has no thread-local thread count")
    before = fn(1)
    fn(before)
    with _cblas.one_thread_per_call():
        inside = fn(1)
    assert inside == 1
    assert fn(before) == before


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("batch", [1, 5])  # OpenBLAS's team; matrices on threads
def test_lapack_paths_from_min_order_match_numpy(batch: int, dtype: Any) -> None:
    """From _lapack.MIN_ORDER the CPU calls LAPACK's potrf / potri / getrf (+ getri) /
    geqrf + orgqr / syevd per matrix (column-major views, triangles flipped): against
    np.linalg in float64, both triangles, det and slogdet, gelqf and syevd, req 'add',
    and errors naming the first bad matrix."""
    from nnvmpy.ops.linalg import _lapack

    if not _lapack.available(dtype):
        pytest.skip("NumPy's OpenBLAS has no LAPACKE symbols")
    n = _lapack.MIN_ORDER + 7
    rng = np.random.default_rng(batch)
    g = rng.standard_normal((batch, n, n))
    a = g @ np.swapaxes(g, 1, 2) + n * np.eye(n)
    a[:, 0, -1] = 1e6  # outside the lower triangle: never read
    sym = np.tril(a) + np.swapaxes(np.tril(a, -1), 1, 2)
    chol = np.linalg.cholesky(sym)
    scale = 50.0 if dtype == np.float32 else 1.0
    for lower, want in ((True, chol), (False, np.swapaxes(chol, 1, 2))):
        src = a if lower else np.swapaxes(a, 1, 2)
        got = nd.linalg.potrf(arr(src, nv.cpu(), dtype), lower=lower).asnumpy()
        close(got, want, dtype, scale)
        factor = arr(want, nv.cpu(), dtype)
        close(nd.linalg.potri(factor, lower=lower).asnumpy(), np.linalg.inv(sym), dtype, scale)
    close(
        nd.linalg.inverse(arr(g, nv.cpu(), dtype)).asnumpy(), np.linalg.inv(g), dtype, 1e3 * scale
    )
    g_in = arr(g, nv.cpu(), dtype)
    wide = np.concatenate([g, g[:, :, :9]], axis=2)  # (n, n + 9): gelqf's m <= n
    q, lo = (t.asnumpy().astype(np.float64) for t in nd.linalg.gelqf(arr(wide, nv.cpu(), dtype)))
    q_want, r_want = np.linalg.qr(np.swapaxes(wide, 1, 2))  # the same reflectors
    close(q, np.swapaxes(q_want, 1, 2), dtype, 1e2 * scale)
    close(lo, np.swapaxes(r_want, 1, 2), dtype, 1e2 * scale)
    u, lam = (t.asnumpy().astype(np.float64) for t in nd.linalg.syevd(arr(a, nv.cpu(), dtype)))
    close(lam, np.linalg.eigvalsh(sym), dtype, 1e2 * scale)
    close(u @ sym, lam[..., None] * u, dtype, 1e3 * scale)  # rows are eigenvectors
    close(u @ np.swapaxes(u, 1, 2), np.broadcast_to(np.eye(n), u.shape), dtype, scale)
    first_largest = np.take_along_axis(u, np.abs(u).argmax(-1)[..., None], -1)
    assert (first_largest > 0).all()  # MXNet's sign for each eigenvector
    sign, logabs = np.linalg.slogdet(g)
    got_sign, got_logabs = (t.asnumpy() for t in nd.linalg.slogdet(g_in))
    np.testing.assert_array_equal(got_sign, sign)
    close(got_logabs, logabs, dtype, scale)
    close(nd.linalg.det(g_in / 4.0).asnumpy(), np.linalg.det(g / 4.0), dtype, scale)
    start = rng.standard_normal(g.shape)
    out = arr(start, nv.cpu(), dtype)
    x = arr(sym, nv.cpu(), dtype)
    out += nd.linalg.inverse(x)
    close(out.asnumpy(), start + np.linalg.inv(sym), dtype, scale)
    if batch > 1:
        bad = sym.copy()
        bad[3] = -bad[3]  # not positive definite
        with pytest.raises(nv.NNVMError, match=r"potrf.*matrix 3"):
            nd.linalg.potrf(arr(bad, nv.cpu(), dtype)).asnumpy()
        bad = g.copy()
        bad[2, :, 5] = 0.0  # singular
        with pytest.raises(nv.NNVMError, match=r"inverse.*singular.*matrix 2"):
            nd.linalg.inverse(arr(bad, nv.cpu(), dtype)).asnumpy()
