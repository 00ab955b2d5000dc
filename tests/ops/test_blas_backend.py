"""The cblas behind the convolution / FullyConnected GEMMs (ops/nn/_blas.py): NumPy's
OpenBLAS or Intel MKL (NNVMPY_BLAS), checked against float64 NumPy formulas.

MKL cases carry the `mkl` marker and are skipped where the optional `mkl` wheel is not
installed (CI installs no extras); with `pip install nnvmpy[mkl]` they run.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

# isort: off
import op_db  # noqa: F401  (first: it loads every cases_*.py, so cases_conv is complete)
from cases_conv import TempSpace

# isort: on

import nnvmpy as nv
from nnvmpy import threads
from nnvmpy.base import NNVMError, OpReqType
from nnvmpy.ops.nn import _blas, _conv_algo, _conv_cpu, _conv_shift
from nnvmpy.ops.nn._geometry import Window

WRITE, ADD, NULL = OpReqType.kWriteTo, OpReqType.kAddTo, OpReqType.kNullOp

HAS_MKL = _blas.mkl_path() is not None
mkl = [pytest.mark.mkl, pytest.mark.skipif(not HAS_MKL, reason="the `mkl` wheel is absent")]
BACKENDS = ["openblas", pytest.param("mkl", marks=mkl)]


@pytest.fixture(params=BACKENDS)
def backend(request: Any) -> Any:
    with _blas.use(request.param) as lib:
        assert lib is not None
        assert lib.name == request.param
        yield request.param


# ---------------------------------------------------------------- the loader
def test_knob_picks_the_library(monkeypatch: Any) -> None:
    with _blas.use("openblas"):
        assert _blas.name() == "openblas"
        assert not _blas.routes_matmul(np.float32)  # OpenBLAS: np.matmul as before
    with _blas.use("auto"):
        assert _blas.name() == ("mkl" if HAS_MKL else "openblas")
    monkeypatch.setitem(_blas._loaded, "mkl", None)  # as if the wheel were not installed
    with _blas.use("auto"):
        assert _blas.name() == "openblas"
    missing = r"NNVMPY_BLAS=mkl: the `mkl` wheel is not installed"
    with pytest.raises(NNVMError, match=missing), _blas.use("mkl"):
        pass


def test_bad_knob_value_names_the_knob_and_the_choices() -> None:
    expected = r"NNVMPY_BLAS='essl': expected one of auto, mkl"
    with pytest.raises(NNVMError, match=expected), _blas.use("essl"):
        pass


@pytest.mark.parametrize("_", [pytest.param(0, marks=mkl)])
def test_mkl_is_found_through_the_wheel_and_routes_matmul(_: int) -> None:
    with _blas.use("mkl") as lib:
        assert lib is not None
        assert "libmkl_rt.so" in lib.path
        assert _blas.routes_matmul(np.float32)
        assert _blas.routes_matmul(np.float64)
        assert not _blas.routes_matmul(np.int32)
        assert np.dtype(np.float32) in lib.batch  # cblas_sgemm_batch_strided


@pytest.mark.parametrize("_", [pytest.param(0, marks=mkl)])
def test_thread_budget_reaches_mkl(_: int) -> None:
    lib = _blas.load("mkl")
    assert lib is not None
    assert lib.get_threads is not None
    saved = threads.width()
    try:
        for n in sorted({1, threads.budget()}):
            threads.set_width(n)
            assert lib.get_threads() == n
    finally:
        threads.set_width(saved)


# ---------------------------------------------------------------- GEMM vs NumPy
def _operand(rng: Any, rows: int, cols: int, trans: bool, pad: int, dtype: Any) -> Any:
    """A (rows, cols) view: a row slice of a wider array (leading dimension > cols), or
    the transpose of one."""
    shape = (cols, rows + pad) if trans else (rows, cols + pad)
    base = rng.standard_normal(shape).astype(dtype)
    return base[:, :rows].T if trans else base[:, :cols]


TOL = {np.float32: 2e-5, np.float64: 1e-12}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("ta", [False, True])
@pytest.mark.parametrize("tb", [False, True])
@pytest.mark.parametrize("beta", [0.0, 1.0, 0.5])
def test_matmul_matches_numpy(backend: str, dtype: Any, ta: bool, tb: bool, beta: float) -> None:
    rng = np.random.default_rng(3)
    m, n, k = 17, 23, 31
    a = _operand(rng, m, k, ta, 5, dtype)
    b = _operand(rng, k, n, tb, 3, dtype)
    base = rng.standard_normal((m, n + 4)).astype(dtype)
    out = base[:, :n]  # ldc = n + 4
    want = a.astype(np.float64) @ b.astype(np.float64) + beta * out.astype(np.float64)
    untouched = base[:, n:].copy()
    _blas.matmul(a, b, out, beta)
    assert np.abs(out - want).max() <= TOL[dtype] * np.abs(want).max()
    assert np.array_equal(base[:, n:], untouched)  # the columns past n are not written


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gemm_offsets_and_leading_dimensions(backend: str, dtype: Any) -> None:
    rng = np.random.default_rng(4)
    a = rng.standard_normal(200).astype(dtype)
    b = rng.standard_normal(300).astype(dtype)
    c = rng.standard_normal(150).astype(dtype)
    m, n, k, lda, ldb, ldc = 4, 6, 5, 7, 9, 8
    av = a[3 : 3 + m * lda].reshape(m, lda)[:, :k]
    bv = b[10 : 10 + k * ldb].reshape(k, ldb)[:, :n]
    cv = c[2 : 2 + m * ldc].reshape(m, ldc)[:, :n]
    want = av.astype(np.float64) @ bv + cv
    _blas.gemm(False, False, m, n, k, a, 3, lda, b, 10, ldb, 1.0, c, 2, ldc)
    assert np.abs(cv - want).max() <= TOL[dtype] * np.abs(want).max()
    # transposed A: op(A) = A_stored^T with A_stored (k, m) at row stride lda
    at = a[0 : k * lda].reshape(k, lda)[:, :m]
    want = at.T.astype(np.float64) @ bv
    _blas.gemm(True, False, m, n, k, a, 0, lda, b, 10, ldb, 0.0, c, 2, ldc)
    assert np.abs(cv - want).max() <= TOL[dtype] * np.abs(want).max()


@pytest.mark.parametrize("beta", [0.0, 1.0])
def test_matmul_stack_matches_numpy(backend: str, beta: float) -> None:
    rng = np.random.default_rng(5)
    a = rng.standard_normal((16, 12, 9)).astype(np.float32)
    bt = rng.standard_normal((16, 20, 9)).astype(np.float32)  # b = bt^T per matrix
    out = rng.standard_normal((16, 24, 20)).astype(np.float32)[:, 4:16]  # a row slice
    want = np.matmul(a.astype(np.float64), bt.transpose(0, 2, 1)) + beta * out
    _blas.matmul_stack(a, bt.transpose(0, 2, 1), out, beta)
    assert np.abs(out - want).max() <= 2e-5 * np.abs(want).max()


def test_matmul_falls_back_for_layouts_cblas_cannot_address(backend: str) -> None:
    rng = np.random.default_rng(6)
    a = rng.standard_normal((8, 12)).astype(np.float32)[:, ::2]  # no unit stride
    b = rng.standard_normal((6, 5)).astype(np.float32)
    out = np.ones((8, 5), np.float32)
    _blas.matmul(a, b, out, 1.0)
    assert np.allclose(out, a @ b + 1, rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------- convolution through it
def _direct(x: Any, w: Any, pad: int) -> Any:
    """float64 cross-correlation of x (N, C, H, W) with w (F, C, kh, kw), stride 1."""
    x, w = x.astype(np.float64), w.astype(np.float64)
    kh, kw = w.shape[2:]
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    ho, wo = xp.shape[2] - kh + 1, xp.shape[3] - kw + 1
    y = np.zeros((x.shape[0], w.shape[0], ho, wo))
    for p in range(kh):
        for q in range(kw):
            y += np.einsum("fc,nchw->nfhw", w[:, :, p, q], xp[:, :, p : p + ho, q : q + wo])
    return y


def _grads(x: Any, w: Any, dy: Any, pad: int) -> tuple[Any, Any]:
    """float64 dx and dw of `_direct` by scattering dy through every tap."""
    x, w, dy = x.astype(np.float64), w.astype(np.float64), dy.astype(np.float64)
    kh, kw = w.shape[2:]
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    ho, wo = dy.shape[2:]
    dxp, dw = np.zeros_like(xp), np.zeros_like(w)
    for p in range(kh):
        for q in range(kw):
            dxp[:, :, p : p + ho, q : q + wo] += np.einsum("fc,nfhw->nchw", w[:, :, p, q], dy)
            dw[:, :, p, q] = np.einsum("nfhw,nchw->fc", dy, xp[:, :, p : p + ho, q : q + wo])
    h, wd = x.shape[2:]
    return dxp[:, :, pad : pad + h, pad : pad + wd], dw


# (n, c, h, w, f, k, pad, algo): shifted GEMMs (c >= 32, wide maps), im2col (c < 32),
# the 1x1 path, Winograd F(2x2) and F(4x4) (forced)
CONVS = [
    (4, 32, 20, 20, 16, 3, 1, "gemm"),
    (3, 5, 9, 7, 6, 3, 1, "gemm"),
    (2, 8, 6, 5, 4, 3, 0, "gemm"),
    (2, 12, 5, 6, 7, 1, 0, "gemm"),
    (2, 16, 9, 8, 8, 3, 1, "winograd2"),
    (2, 16, 9, 8, 8, 3, 1, "winograd4"),
]


@pytest.mark.parametrize("case", CONVS, ids=str)
def test_convolution_forward_and_backward(backend: str, case: Any, monkeypatch: Any) -> None:
    n, c, h, wd, f, k, pad, algo = case
    monkeypatch.setenv("NNVMPY_CONV_ALGO", algo)
    monkeypatch.setenv("NNVMPY_CONV_ALGO_CACHE", "")
    _conv_algo.forget()
    rng = np.random.default_rng(7)
    x = rng.standard_normal((n, c, h, wd)).astype(np.float32)
    w = rng.standard_normal((f, c, k, k)).astype(np.float32)
    b = rng.standard_normal(f).astype(np.float32)
    ho, wo = h + 2 * pad - k + 1, wd + 2 * pad - k + 1
    s = _conv_cpu.ConvShape(n, c, h, wd, f, 1, Window(k, k, 1, 1, pad, pad, 1, 1, ho, wo), 1)
    assert _conv_shift.supported(s, np.float32) == (c >= 32)  # the case takes its path
    want = _direct(x, w, pad) + b[:, None, None]
    out = np.empty((n, f, 1, ho, wo), np.float32)
    _conv_cpu.forward(s, x[:, :, None], w[:, :, None], b, out, WRITE, TempSpace())
    tol = 5e-5 if algo == "winograd4" else 2e-5
    assert np.abs(out[:, :, 0] - want).max() <= tol * np.abs(want).max()

    dy = rng.standard_normal((n, f, 1, ho, wo)).astype(np.float32)
    want_dx, want_dw = _grads(x, w, dy[:, :, 0], pad)
    dx = rng.standard_normal((n, c, 1, h, wd)).astype(np.float32)
    dw = rng.standard_normal((f, c, 1, k, k)).astype(np.float32)
    dw0 = dw.copy()
    _conv_cpu.backward(s, dy, x[:, :, None], w[:, :, None], [dx, dw], [WRITE, ADD], TempSpace())
    assert np.abs(dx[:, :, 0] - want_dx).max() <= tol * np.abs(want_dx).max()
    got_dw = dw[:, :, 0] - dw0[:, :, 0]  # kAddTo: added to what was there
    assert np.abs(got_dw - want_dw).max() <= tol * np.abs(want_dw).max()


@pytest.mark.parametrize("_", [pytest.param(0, marks=mkl)])
def test_mkl_and_openblas_convolutions_agree(_: int, monkeypatch: Any) -> None:
    """A ResNet-sized layer through both libraries: float32 rounding apart, the same."""
    monkeypatch.setenv("NNVMPY_CONV_ALGO", "gemm")
    rng = np.random.default_rng(8)
    n, c, h, f = 2, 64, 14, 64
    x = rng.standard_normal((n, c, 1, h, h)).astype(np.float32)
    w = rng.standard_normal((f, c, 1, 3, 3)).astype(np.float32)
    s = _conv_cpu.ConvShape(n, c, h, h, f, 1, Window(3, 3, 1, 1, 1, 1, 1, 1, h, h), 1)
    outs = []
    for name in ("openblas", "mkl"):
        with _blas.use(name):
            out = np.empty((n, f, 1, h, h), np.float32)
            _conv_cpu.forward(s, x, w, None, out, WRITE, TempSpace())
            outs.append(out)
    assert np.abs(outs[0] - outs[1]).max() <= 1e-5 * np.abs(outs[0]).max()


# ---------------------------------------------------------------- FullyConnected
@pytest.mark.parametrize("req", ["write", "add"])
def test_fully_connected_forward_and_backward(backend: str, req: str) -> None:
    import nnvmpy as nv

    rng = np.random.default_rng(9)
    x = rng.standard_normal((6, 2, 5)).astype(np.float32)  # flattened to (6, 10)
    w = rng.standard_normal((7, 10)).astype(np.float32)
    b = rng.standard_normal(7).astype(np.float32)
    dy = rng.standard_normal((6, 7)).astype(np.float32)
    x2 = x.reshape(6, 10).astype(np.float64)
    want = x2 @ w.T + b
    got = nv.nd.FullyConnected(nv.nd.array(x), nv.nd.array(w), nv.nd.array(b), num_hidden=7)
    assert np.allclose(got.asnumpy(), want, rtol=1e-5, atol=1e-5)

    data, weight, bias = (nv.sym.Variable(name) for name in ("data", "weight", "bias"))
    net = nv.sym.FullyConnected(data, weight, bias, num_hidden=7, name="fc")
    args = {"data": nv.nd.array(x), "weight": nv.nd.array(w), "bias": nv.nd.array(b)}
    start = {name: rng.standard_normal(a.shape).astype(np.float32) for name, a in args.items()}
    grads = {name: nv.nd.array(g) for name, g in start.items()}
    reqs = dict.fromkeys(args, req)
    exe = net.bind(nv.cpu(), args, args_grad=grads, grad_req=reqs)
    exe.forward(is_train=True)
    exe.backward([nv.nd.array(dy)])
    base = {n: start[n] if req == "add" else np.zeros_like(start[n]) for n in args}
    dyd = dy.astype(np.float64)
    expect = {"data": dyd @ w, "weight": dyd.T @ x2, "bias": dyd.sum(axis=0)}
    for name, g in expect.items():
        got_g = grads[name].asnumpy().reshape(g.shape) - np.reshape(base[name], np.shape(g))
        assert np.allclose(got_g, g, rtol=1e-4, atol=1e-4), name


# ---------------------------------------------------------------- bfloat16 building block
def _nearest_bf16(v: float) -> float:
    """The bfloat16 value nearest v (ties: even last bit), by comparing the two
    neighbours that bracket it in float64."""
    down = int(np.float32(v).view(np.uint32)) >> 16 << 16
    lo, hi = (float(np.uint32(u).view(np.float32)) for u in (down, down + 0x10000))
    if abs(v - lo) != abs(hi - v):
        return lo if abs(v - lo) < abs(hi - v) else hi
    return lo if (down >> 16) % 2 == 0 else hi


def test_to_bf16_rounds_to_nearest_even() -> None:
    halfway = [1 + 2**-8, 1 + 3 * 2**-8, 1 + 2**-8 + 2**-20]
    assert _blas.from_bf16(_blas.to_bf16(np.array(halfway, np.float32))).tolist() == [
        1.0, 1 + 2**-6, 1 + 2**-7,
    ]  # fmt: skip
    x = np.random.default_rng(11).standard_normal(500).astype(np.float32) * 1e3
    got = _blas.from_bf16(_blas.to_bf16(x))
    assert got.tolist() == [_nearest_bf16(float(v)) for v in x]
    special = _blas.from_bf16(_blas.to_bf16(np.array([np.inf, -np.inf, np.nan], np.float32)))
    assert special[0] == np.inf
    assert special[1] == -np.inf
    assert np.isnan(special[2])
    # every finite bfloat16 value survives the round trip exactly
    bits = np.arange(0, 0x7F80, 7, dtype=np.uint16)
    assert np.array_equal(_blas.to_bf16(_blas.from_bf16(bits)), bits)


@pytest.mark.parametrize("tb", [False, pytest.param(True, marks=mkl)])
def test_bf16_gemm_accumulates_in_float32(tb: bool) -> None:
    with _blas.use("mkl" if tb or HAS_MKL else "openblas"):
        if not _blas.has_bf16():
            with pytest.raises(NNVMError, match=r"bfloat16 GEMM: needs MKL"):
                _blas.matmul_bf16(np.zeros((2, 2), np.uint16), np.zeros((2, 2), np.uint16),
                                  np.zeros((2, 2), np.float32))  # fmt: skip
            return
        rng = np.random.default_rng(10)
        a = _blas.to_bf16(rng.standard_normal((33, 300)).astype(np.float32))
        b = _blas.to_bf16(rng.standard_normal((41, 300) if tb else (300, 41)).astype(np.float32))
        bop = b.T if tb else b
        out = np.ones((33, 41), np.float32)
        # exact products of the bfloat16 values, summed in float64
        want = _blas.from_bf16(a).astype(np.float64) @ _blas.from_bf16(bop) + 1.0
        _blas.matmul_bf16(a, bop, out, beta=1.0)
        assert np.abs(out - want).max() <= 1e-5 * np.abs(want).max()  # float32 accumulation


# ---------------------------------------------------------------- small GEMMs, one thread
def test_small_gemms_run_on_one_thread_where_the_library_allows() -> None:
    """Below SMALL_GEMM_MACS a call runs with the library's per-thread count at 1 and
    restores it after (also when the call raises); above, or without a per-thread
    setter (OpenBLAS), the call is made as it is."""
    calls: list[Any] = []
    lib = _blas.Library("mkl", "fake", set_local=lambda n: calls.append(("local", n)) or 0)
    small, large = _blas.SMALL_GEMM_MACS - 1, _blas.SMALL_GEMM_MACS

    _blas._sized(lib, small)(lambda *a: calls.append(("gemm", a)), 1, 2)
    assert calls == [("local", 1), ("gemm", (1, 2)), ("local", 0)]
    calls.clear()
    _blas._sized(lib, large)(lambda *a: calls.append(("gemm", a)), 3)
    assert calls == [("gemm", (3,))]
    calls.clear()

    def boom(*a: Any) -> None:
        raise RuntimeError("cblas failed")

    with pytest.raises(RuntimeError, match="cblas failed"):
        _blas._sized(lib, small)(boom)
    assert calls == [("local", 1), ("local", 0)]
    calls.clear()
    no_local = _blas.Library("openblas", "fake")
    _blas._sized(no_local, small)(lambda *a: calls.append(("gemm", a)))
    assert calls == [("gemm", ())]


@pytest.mark.parametrize("_", [pytest.param(0, marks=mkl)])
def test_mkl_has_a_per_thread_count(_: int) -> None:
    lib = _blas.load("mkl")
    assert lib is not None
    assert lib.set_local is not None


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("shape", [(3, 5, 4), (64, 300, 200)])  # below / above the bound
def test_dot_and_batch_dot_match_numpy(backend: str, shape: Any) -> None:
    """nd.dot / batch_dot run on the active library (MKL: one cblas call, or one batched
    call for a stack), transposes as strides."""
    m, k, n = shape
    rng = np.random.default_rng(sum(shape))
    a = rng.standard_normal((k, m)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    sa = rng.standard_normal((3, m, k)).astype(np.float32)
    sb = rng.standard_normal((3, n, k)).astype(np.float32)
    with _blas.use(backend):
        got = nv.nd.dot(nv.nd.array(a), nv.nd.array(b), transpose_a=True).asnumpy()
        stack = nv.nd.batch_dot(nv.nd.array(sa), nv.nd.array(sb), transpose_b=True).asnumpy()
    want = a.astype(np.float64).T @ b
    want_stack = sa.astype(np.float64) @ sb.transpose(0, 2, 1)
    assert np.abs(got - want).max() <= 1e-5 * np.abs(want).max()
    assert np.abs(stack - want_stack).max() <= 1e-5 * np.abs(want_stack).max()
