"""Winograd 3x3 convolution (ops/nn/_conv_winograd.py) and the per-layer algorithm choice
(ops/nn/_conv_algo.py), against a float64 NumPy direct convolution written here."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

# isort: off
import op_db  # noqa: F401  (first: it loads every cases_*.py, so cases_conv is complete)
from cases_conv import TempSpace

# isort: on

import nnvmpy as nv
from nnvmpy.base import NNVMError, OpReqType
from nnvmpy.ops.nn import _conv_algo, _conv_cpu, _conv_winograd
from nnvmpy.ops.nn._geometry import Window

WRITE, ADD, NULL = OpReqType.kWriteTo, OpReqType.kAddTo, OpReqType.kNullOp


def direct(x: Any, w: Any, pad: tuple[int, int], groups: int) -> Any:
    """float64 y[n, f, i, j] = sum_{c, p, q} xpad[n, g*cg + c, i + p, j + q] w[f, c, p, q]."""
    x, w = x.astype(np.float64), w.astype(np.float64)
    n, c, h, wd = x.shape
    f = w.shape[0]
    cg, fg = c // groups, f // groups
    xp = np.pad(x, ((0, 0), (0, 0), (pad[0], pad[0]), (pad[1], pad[1])))
    ho, wo = h + 2 * pad[0] - 2, wd + 2 * pad[1] - 2
    y = np.zeros((n, f, ho, wo))
    for g in range(groups):
        for p in range(3):
            for q in range(3):
                patch = xp[:, g * cg : (g + 1) * cg, p : p + ho, q : q + wo]
                y[:, g * fg : (g + 1) * fg] += np.einsum(
                    "fc,nchw->nfhw", w[g * fg : (g + 1) * fg, :, p, q], patch
                )
    return y


def direct_grad_x(dy: Any, w: Any, xshape: tuple[int, ...], pad: tuple[int, int], groups: int):
    """float64 dx of `direct` by scattering dy through every tap (no convolution reused)."""
    dy, w = dy.astype(np.float64), w.astype(np.float64)
    n, c, h, wd = xshape
    f = w.shape[0]
    cg, fg = c // groups, f // groups
    ho, wo = dy.shape[2], dy.shape[3]
    dxp = np.zeros((n, c, h + 2 * pad[0], wd + 2 * pad[1]))
    for g in range(groups):
        for p in range(3):
            for q in range(3):
                dxp[:, g * cg : (g + 1) * cg, p : p + ho, q : q + wo] += np.einsum(
                    "fc,nfhw->nchw", w[g * fg : (g + 1) * fg, :, p, q], dy[:, g * fg : (g + 1) * fg]
                )
    return dxp[:, :, pad[0] : pad[0] + h, pad[1] : pad[1] + wd]


def rel_err(got: Any, want: Any) -> float:
    return float(np.abs(got - want).max() / max(np.abs(want).max(), 1e-30))


# float32 tolerance relative to the largest output: F(4x4) scales its transforms by up to
# 8 and 1/24, measured ~3e-6 on these shapes; F(2x2) stays ~2e-7
TOL = {2: 2e-5, 4: 5e-5}

# (n, c, h, w, f, pad, groups): odd sizes, pads 0..2, groups, C and F multiples of nothing
SHAPES = [
    (1, 3, 7, 9, 5, (1, 1), 1),
    (2, 8, 5, 6, 4, (0, 2), 2),
    (3, 17, 14, 13, 11, (1, 1), 1),
    (2, 6, 3, 3, 6, (2, 2), 3),
    (1, 5, 4, 11, 7, (2, 0), 1),
    (4, 12, 9, 8, 9, (1, 2), 3),
    (2, 1, 3, 4, 1, (0, 0), 1),
]


@pytest.fixture(autouse=True)
def _isolated_choices(tmp_path: Any, monkeypatch: Any) -> Any:
    """A file of choices per test, and the width held where it is: algorithm choices
    are kept per thread width (_conv_algo.key), so when the load governor (nnvmpy.threads)
    changed it inside a test (CI: two xdist workers on two cores; tools/blas_chaos.py),
    a lookup missed the entry just measured (KeyError) or a choice was measured again
    (the planted timings ran out). The tests that are about the width set it themselves."""
    monkeypatch.setenv("NNVMPY_THREADS_ADAPT", "0")  # read per governor sample
    monkeypatch.setenv("NNVMPY_CONV_ALGO_CACHE", str(tmp_path / "conv_algo.json"))
    _conv_algo.forget()
    _conv_winograd.clear_cache()
    yield
    _conv_algo.forget()


def _shape(n: int, c: int, h: int, w: int, f: int, pad: Any, groups: int) -> Any:
    ho, wo = h + 2 * pad[0] - 2, w + 2 * pad[1] - 2
    return _conv_cpu.ConvShape(n, c, h, w, f, groups, Window(3, 3, 1, 1, *pad, 1, 1, ho, wo), 1)


def _data(shape: Any, seed: int = 0, dtype: Any = np.float32) -> tuple[Any, Any, Any]:
    n, c, h, w, f, _, groups = shape
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, c, h, w)).astype(dtype)
    wt = rng.standard_normal((f, c // groups, 3, 3)).astype(dtype)
    b = rng.standard_normal(f).astype(dtype)
    return x, wt, b


@pytest.mark.parametrize("m", [2, 4])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_winograd_matches_direct_convolution(shape: Any, m: int) -> None:
    x, w, _ = _data(shape)
    pad, groups = shape[5], shape[6]
    want = direct(x, w, pad, groups)
    out = np.full(want.shape, np.nan, np.float32)
    _conv_winograd.conv3x3(x, w, None, out, pad, groups, False, TempSpace(), 1 << 20, m)
    assert rel_err(out, want) < TOL[m]


@pytest.mark.parametrize("m", [2, 4])
def test_small_workspace_chunks_the_batch(m: int) -> None:
    shape = (5, 6, 9, 7, 4, (1, 1), 1)
    x, w, _ = _data(shape)
    want = direct(x, w, (1, 1), 1)
    out = np.empty(want.shape, np.float32)
    _conv_winograd.conv3x3(x, w, None, out, (1, 1), 1, False, TempSpace(), 1, m)  # 1 image/chunk
    assert rel_err(out, want) < TOL[m]


def test_float64_is_near_exact() -> None:
    shape = (2, 9, 10, 7, 5, (1, 1), 1)
    x, w, _ = _data(shape, dtype=np.float64)
    want = direct(x, w, (1, 1), 1)
    for m in (2, 4):
        out = np.empty(want.shape)
        _conv_winograd.conv3x3(x, w, None, out, (1, 1), 1, False, TempSpace(), 1 << 20, m)
        assert rel_err(out, want) < 1e-12


@pytest.mark.parametrize("algo", ["winograd2", "winograd4", "gemm"])
@pytest.mark.parametrize("shape", SHAPES[:4], ids=str)
def test_forced_algorithm_through_conv_cpu_bias_and_req_add(
    shape: Any, algo: str, monkeypatch: Any
) -> None:
    monkeypatch.setenv("NNVMPY_CONV_ALGO", algo)
    x, w, b = _data(shape)
    n, f, pad, groups = shape[0], shape[4], shape[5], shape[6]
    s = _shape(*shape)
    want = direct(x, w, pad, groups) + b[None, :, None, None]
    out = np.full((n, f, 1, *want.shape[2:]), np.nan, np.float32)
    _conv_cpu.forward(s, x[:, :, None], w[:, :, None], b, out, WRITE, TempSpace())
    assert rel_err(out[:, :, 0], want) < 5e-5
    before = np.random.default_rng(1).standard_normal(out.shape).astype(np.float32)
    out[...] = before
    _conv_cpu.forward(s, x[:, :, None], w[:, :, None], b, out, ADD, TempSpace())
    assert rel_err(out[:, :, 0], want + before[:, :, 0]) < 5e-5


@pytest.mark.parametrize("algo", ["winograd2", "winograd4", "gemm"])
@pytest.mark.parametrize("residual", [True, False])
def test_epilogue_residual_and_relu(algo: str, residual: bool, monkeypatch: Any) -> None:
    monkeypatch.setenv("NNVMPY_CONV_ALGO", algo)
    shape = (3, 10, 9, 9, 10, (1, 1), 1)
    x, w, b = _data(shape)
    s = _shape(*shape)
    r = np.random.default_rng(2).standard_normal((3, 10, 1, 9, 9)).astype(np.float32)
    want = direct(x, w, (1, 1), 1) + b[None, :, None, None]
    if residual:
        want += r[:, :, 0]
    want = np.maximum(want, 0)
    assert (want == 0).mean() > 0.2  # relu really cuts
    out = np.full((3, 10, 1, 9, 9), np.nan, np.float32)
    epi = (r if residual else None, True)
    _conv_cpu.forward(s, x[:, :, None], w[:, :, None], b, out, WRITE, TempSpace(), epi)
    assert rel_err(out[:, :, 0], want) < 5e-5


@pytest.mark.parametrize("algo", ["winograd2", "winograd4", "gemm"])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_backward_data(shape: Any, algo: str, monkeypatch: Any) -> None:
    monkeypatch.setenv("NNVMPY_CONV_ALGO", algo)
    x, w, _ = _data(shape)
    n, c, h, wd, f, pad, groups = shape
    s = _shape(*shape)
    dy = np.random.default_rng(3).standard_normal((n, f, 1, s.win.ho, s.win.wo))
    dy = dy.astype(np.float32)
    want = direct_grad_x(dy[:, :, 0], w, x.shape, pad, groups)
    dx = np.full((n, c, 1, h, wd), np.nan, np.float32)
    dw = np.empty((f, c // groups, 1, 3, 3), np.float32)
    reqs = [WRITE, WRITE]
    _conv_cpu.backward(s, dy, x[:, :, None], w[:, :, None], [dx, dw], reqs, TempSpace())
    assert rel_err(dx[:, :, 0], want) < 5e-5
    # the weight gradient (still the GEMM paths) beside it
    assert rel_err(dw[:, :, 0], direct_grad_w(x, dy[:, :, 0], pad, groups)) < 5e-5
    base = np.random.default_rng(4).standard_normal(dx.shape).astype(np.float32)
    dx[...] = base
    _conv_cpu.backward(s, dy, None, w[:, :, None], [dx, None], [ADD, NULL], TempSpace())
    assert rel_err(dx[:, :, 0], want + base[:, :, 0]) < 5e-5


def direct_grad_w(x: Any, dy: Any, pad: tuple[int, int], groups: int) -> Any:
    """float64 dw[f, c, p, q] = sum over n, i, j of dy[n, f, i, j] xpad[n, c, i + p, j + q]."""
    c = x.shape[1]
    f, ho, wo = dy.shape[1:]
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad[0],) * 2, (pad[1],) * 2))
    cg, fg = c // groups, f // groups
    want = np.zeros((f, cg, 3, 3))
    for g in range(groups):
        for p in range(3):
            for q in range(3):
                want[g * fg : (g + 1) * fg, :, p, q] = np.einsum(
                    "nfhw,nchw->fc",
                    dy[:, g * fg : (g + 1) * fg].astype(np.float64),
                    xp[:, g * cg : (g + 1) * cg, p : p + ho, q : q + wo],
                )
    return want


@pytest.mark.parametrize("m", [2, 4])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_weight_gradient_matches_direct(shape: Any, m: int) -> None:
    x = _data(shape)[0]
    n, _, h, wd, f, pad, groups = shape
    ho, wo = h + 2 * pad[0] - 2, wd + 2 * pad[1] - 2
    dy = np.random.default_rng(8).standard_normal((n, f, ho, wo)).astype(np.float32)
    want = direct_grad_w(x, dy, pad, groups)
    dw = np.full(want.shape, np.nan, np.float32)
    _conv_winograd.weight_grad3x3(x, dy, dw, pad, groups, False, TempSpace(), 1 << 20, m)
    assert rel_err(dw, want) < TOL[m]
    start = np.random.default_rng(9).standard_normal(want.shape).astype(np.float32)
    dw[...] = start
    _conv_winograd.weight_grad3x3(x, dy, dw, pad, groups, True, TempSpace(), 1, m)  # small blocks
    assert rel_err(dw, want + start) < TOL[m]


def test_changed_weight_is_transformed_again(monkeypatch: Any) -> None:
    monkeypatch.setenv("NNVMPY_CONV_ALGO", "winograd")
    shape = (2, 4, 6, 6, 3, (1, 1), 1)
    x, w, _ = _data(shape)
    s = _shape(*shape)
    out = np.empty((2, 3, 1, 6, 6), np.float32)
    w5 = w[:, :, None]
    _conv_cpu.forward(s, x[:, :, None], w5, None, out, WRITE, TempSpace())
    made = _conv_winograd.stats["transforms"]
    _conv_cpu.forward(s, x[:, :, None], w5, None, out, WRITE, TempSpace())
    assert _conv_winograd.stats["transforms"] == made  # same weights: cached
    w5[1, 2, 0, 0, 1] += 0.5  # in place, same buffer: one element
    _conv_cpu.forward(s, x[:, :, None], w5, None, out, WRITE, TempSpace())
    assert _conv_winograd.stats["transforms"] == made + 1
    assert rel_err(out[:, :, 0], direct(x, w, (1, 1), 1)) < 2e-5


def test_auto_measures_once_and_keeps_the_choice_on_disk(tmp_path: Any, monkeypatch: Any) -> None:
    path = tmp_path / "conv_algo.json"
    monkeypatch.setenv("NNVMPY_CONV_ALGO", "auto")
    monkeypatch.setattr(_conv_algo, "MIN_AUTO_FLOPS", 0)
    shape = (2, 16, 8, 8, 16, (1, 1), 1)
    x, w, b = _data(shape)
    s = _shape(*shape)
    out = np.empty((2, 16, 1, 8, 8), np.float32)
    _conv_cpu.forward(s, x[:, :, None], w[:, :, None], b, out, WRITE, TempSpace(), training=False)
    assert rel_err(out[:, :, 0], direct(x, w, (1, 1), 1) + b[:, None, None]) < 5e-5
    saved = json.loads(path.read_text())
    k = _conv_algo.key("forward", s, np.float32)
    assert saved[k]["algo"] in ("gemm", "winograd2", "winograd4")
    assert set(saved[k]["ms"]) == {"gemm", "winograd2", "winograd4"}
    # a later process reads the file and does not measure: plant a choice and check it is used
    saved[k] = {"algo": "winograd4"}
    path.write_text(json.dumps(saved))
    _conv_algo.forget()
    calls: list[str] = []
    monkeypatch.setattr(_conv_algo, "_time", lambda fn: calls.append("t") or 0.0)
    tile = _conv_algo.forward_tile(s, x[:, :, None], w[:, :, None], b, TempSpace(), training=False)
    assert tile == 4
    assert calls == []
    # no file: measured, once
    path.unlink()
    _conv_algo.forget()
    _conv_algo.forward_tile(s, x[:, :, None], w[:, :, None], b, TempSpace(), training=False)
    assert len(calls) == 3
    _conv_algo.forward_tile(s, x[:, :, None], w[:, :, None], b, TempSpace(), training=False)
    assert len(calls) == 3
    # a choice saved by an older version of the algorithms is stale: measured again
    monkeypatch.setattr(_conv_algo, "ALGO_VERSION", _conv_algo.ALGO_VERSION + 1)
    _conv_algo.forget()
    _conv_algo.forward_tile(s, x[:, :, None], w[:, :, None], b, TempSpace(), training=False)
    assert len(calls) == 6
    assert len(json.loads(path.read_text())) == 2  # both versions' entries, in one file


def test_a_decision_is_remembered_until_a_knob_it_depends_on_changes(monkeypatch: Any) -> None:
    """After the first call a convolution's algorithm comes from `_decisions` (no
    candidates built, no cache key or file looked at); a forced NNVMPY_CONV_ALGO, another
    thread width and forget() each decide again."""
    from nnvmpy import threads

    monkeypatch.setenv("NNVMPY_CONV_ALGO", "auto")
    monkeypatch.setattr(_conv_algo, "MIN_AUTO_FLOPS", 0)
    shape = (2, 16, 8, 8, 16, (1, 1), 1)
    x, w, b = _data(shape)
    s, args = _shape(*shape), (x[:, :, None], w[:, :, None], b, TempSpace())
    timed: list[int] = []
    monkeypatch.setattr(_conv_algo, "_time", lambda fn: timed.append(1) or len(timed))
    assert _conv_algo.forward_algo(s, *args, training=False) == "gemm"  # timed first: fastest
    assert len(timed) == 3
    keys: list[str] = []
    real_key = _conv_algo.key
    monkeypatch.setattr(_conv_algo, "key", lambda *a: keys.append(a[0]) or real_key(*a))
    for _ in range(3):
        assert _conv_algo.forward_algo(s, *args, training=False) == "gemm"
    assert keys == []  # remembered: no cache lookup
    monkeypatch.setenv("NNVMPY_CONV_ALGO", "winograd4")
    assert _conv_algo.forward_algo(s, *args, training=False) == "winograd4"
    monkeypatch.setenv("NNVMPY_CONV_ALGO", "auto")
    assert _conv_algo.forward_algo(s, *args, training=False) == "gemm"
    monkeypatch.setattr(_conv_algo, "_time", lambda fn: timed.append(1) or -len(timed))
    saved = threads.width()
    try:
        threads.set_width(1 if saved > 1 else 2)
        if threads.width() != saved:  # a one-core budget cannot change the width
            assert _conv_algo.forward_algo(s, *args, training=False) == "winograd4"  # last
    finally:
        threads.set_width(saved)
    _conv_algo.forget()
    assert _conv_algo.forward_algo(s, *args, training=False) == "gemm"  # the file's choice
    assert keys  # decided again, through the cache key


def test_auto_never_gives_a_training_forward_f4x4(tmp_path: Any, monkeypatch: Any) -> None:
    """A training step's forward feeds gradients: F(4x4) is not a candidate there, and an
    inference choice of F(4x4) for the same layer does not carry over."""
    path = tmp_path / "conv_algo.json"  # the autouse fixture's file
    monkeypatch.setenv("NNVMPY_CONV_ALGO", "auto")
    monkeypatch.setattr(_conv_algo, "MIN_AUTO_FLOPS", 0)
    timed: list[int] = []
    # every candidate "takes" less time than the one before: the last offered would win
    monkeypatch.setattr(_conv_algo, "_time", lambda fn: timed.append(1) or -len(timed))
    shape = (2, 16, 8, 8, 16, (1, 1), 1)
    x, w, b = _data(shape)
    s = _shape(*shape)
    args = (s, x[:, :, None], w[:, :, None], b, TempSpace())
    assert _conv_algo.forward_tile(*args, training=False) == 4
    assert _conv_algo.forward_tile(*args, training=True) == 2
    saved = json.loads(path.read_text())
    assert set(saved[_conv_algo.key("forward_train", s, np.float32)]["ms"]) == {
        "gemm",
        "winograd2",
    }
    assert saved[_conv_algo.key("forward", s, np.float32)]["algo"] == "winograd4"


def test_auto_chooses_per_thread_width(monkeypatch: Any) -> None:
    """The best algorithm depends on how many threads the layer gets: a choice timed
    while the load governor ran one-thread teams is not reused at two threads."""
    from nnvmpy import threads

    monkeypatch.setenv("NNVMPY_CONV_ALGO", "auto")
    monkeypatch.setattr(_conv_algo, "MIN_AUTO_FLOPS", 0)
    shape = (2, 16, 8, 8, 16, (1, 1), 1)
    x, w, b = _data(shape)
    s = _shape(*shape)
    args = (s, x[:, :, None], w[:, :, None], b, TempSpace())
    # one thread: Winograd "is faster"; two: the GEMM paths
    fake = {1: {"gemm": 2.0, "winograd2": 1.0}, 2: {"gemm": 1.0, "winograd2": 2.0}}
    width = {"now": 1}
    monkeypatch.setattr(threads, "width", lambda: width["now"])
    order = iter(["gemm", "winograd2"] * 2)
    monkeypatch.setattr(_conv_algo, "_time", lambda fn: fake[width["now"]][next(order)])
    assert _conv_algo.forward_tile(*args, training=True) == 2
    width["now"] = 2
    assert _conv_algo.forward_tile(*args, training=True) == 0
    width["now"] = 1  # remembered per width, not measured again
    monkeypatch.setattr(_conv_algo, "_time", lambda fn: pytest.fail("measured again"))
    assert _conv_algo.forward_tile(*args, training=True) == 2


def test_auto_filter_gradient_may_take_im2col_over_shifted_gemms(
    tmp_path: Any, monkeypatch: Any
) -> None:
    """Where 'gemm' means the shifted GEMMs, im2col chunks are a third measured candidate
    for the filter gradient; when they win, backward runs them and dW is still right."""
    from nnvmpy.ops.nn import _conv_shift

    monkeypatch.setenv("NNVMPY_CONV_ALGO", "auto")
    monkeypatch.setattr(_conv_algo, "MIN_AUTO_FLOPS", 0)
    shape = (2, 32, 30, 30, 8, (1, 1), 1)  # 32 channels, wide padded rows: shifted GEMMs
    x, w, _ = _data(shape)
    s = _shape(*shape)
    assert _conv_shift.supported(s, np.float32)
    dy = np.random.default_rng(3).standard_normal((2, 8, 1, 30, 30)).astype(np.float32)
    times = iter([3.0, 2.0, 1.0])  # gemm, winograd2, im2col: the last wins
    monkeypatch.setattr(_conv_algo, "_time", lambda fn: next(times))
    args = (s, dy, x[:, :, None], w[:, :, None], TempSpace())
    assert _conv_algo.backward_weight_algo(*args) == _conv_algo.IM2COL
    saved = json.loads((tmp_path / "conv_algo.json").read_text())
    assert set(saved[_conv_algo.key("backward_weight", s, np.float32)]["ms"]) == {
        "gemm", "winograd2", _conv_algo.IM2COL,
    }  # fmt: skip
    assert _conv_algo.backward_weight_tile(*args) == 0
    chunks: list[int] = []
    real = _conv_cpu._backward_chunks
    monkeypatch.setattr(_conv_cpu, "_backward_chunks", lambda *a: chunks.append(1) or real(*a))
    dw = np.full((8, 32, 1, 3, 3), np.nan, np.float32)
    _conv_cpu.backward(s, dy, x[:, :, None], w[:, :, None], [None, dw], [NULL, WRITE], TempSpace())
    assert chunks == [1]
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
    want = np.zeros((8, 32, 3, 3))
    for p in range(3):
        for q in range(3):
            want[:, :, p, q] = np.einsum(
                "nfhw,nchw->fc", dy[:, :, 0], xp[:, :, p : p + 30, q : q + 30]
            )
    assert rel_err(dw[:, :, 0], want) < 1e-5


@pytest.mark.parametrize("epilogue", [False, True])
def test_auto_forward_and_data_gradient_may_take_im2col(epilogue: bool, monkeypatch: Any) -> None:
    """The same third candidate for the forward (with and without an epilogue) and the
    data gradient: when it wins, the shifted GEMMs never run and the results are right."""
    from nnvmpy.ops.nn import _conv_shift

    monkeypatch.setenv("NNVMPY_CONV_ALGO", "auto")
    monkeypatch.setattr(_conv_algo, "MIN_AUTO_FLOPS", 0)
    shape = (2, 32, 30, 30, 8, (1, 1), 1)
    x, w, b = _data(shape)
    s = _shape(*shape)
    fake = {"gemm": 3.0, "winograd2": 2.0, "winograd4": 2.0, _conv_algo.IM2COL: 1.0}
    # the order the candidates are timed in: forward (F(4x4) too at inference), data grad
    forward = ["gemm", "winograd2", *(["winograd4"] if epilogue else []), _conv_algo.IM2COL]
    names = iter([*forward, "gemm", "winograd2", _conv_algo.IM2COL])
    monkeypatch.setattr(_conv_algo, "_time", lambda fn: fake[next(names)])
    monkeypatch.setattr(_conv_shift, "forward", lambda *a: pytest.fail("shifted forward"))
    monkeypatch.setattr(_conv_shift, "backward", lambda *a: pytest.fail("shifted backward"))
    rng = np.random.default_rng(4)
    residual = rng.standard_normal((2, 8, 30, 30)).astype(np.float32)
    out = np.full((2, 8, 1, 30, 30), np.nan, np.float32)
    want = direct(x, w, (1, 1), 1) + b[:, None, None]
    if epilogue:
        _conv_cpu.forward(
            s, x[:, :, None], w[:, :, None], b, out, WRITE, TempSpace(),
            epilogue=(residual[:, :, None], True), training=False,
        )  # fmt: skip
        want = np.maximum(want + residual, 0)
    else:
        _conv_cpu.forward(s, x[:, :, None], w[:, :, None], b, out, WRITE, TempSpace())
    assert rel_err(out[:, :, 0], want) < 1e-5
    dy = rng.standard_normal((2, 8, 1, 30, 30)).astype(np.float32)
    dx = np.full((2, 32, 1, 30, 30), np.nan, np.float32)
    _conv_cpu.backward(s, dy, None, w[:, :, None], [dx, None], [WRITE, NULL], TempSpace())
    want_dx = direct_grad_x(dy[:, :, 0], w, x.shape, (1, 1), 1)
    assert rel_err(dx[:, :, 0], want_dx) < 1e-5


def test_im2col_is_no_candidate_where_gemm_already_is_im2col(monkeypatch: Any) -> None:
    monkeypatch.setenv("NNVMPY_CONV_ALGO", "auto")
    monkeypatch.setattr(_conv_algo, "MIN_AUTO_FLOPS", 0)
    shape = (2, 8, 8, 8, 8, (1, 1), 1)  # 8 channels: too few for the shifted GEMMs
    x, w, _ = _data(shape)
    timed: list[int] = []
    monkeypatch.setattr(_conv_algo, "_time", lambda fn: timed.append(1) or -len(timed))
    dy = np.zeros((2, 8, 1, 8, 8), np.float32)
    algo = _conv_algo.backward_weight_algo(
        _shape(*shape), dy, x[:, :, None], w[:, :, None], TempSpace()
    )
    assert algo == "winograd2"
    assert len(timed) == 2  # gemm and winograd2 only


def test_auto_keeps_small_layers_on_gemm_without_measuring(monkeypatch: Any) -> None:
    monkeypatch.setenv("NNVMPY_CONV_ALGO", "auto")
    monkeypatch.setattr(_conv_algo, "_time", lambda fn: pytest.fail("measured"))
    shape = (2, 16, 8, 8, 16, (1, 1), 1)  # 0.6 MFLOP
    x, w, b = _data(shape)
    s = _shape(*shape)
    assert _conv_algo.forward_tile(s, x[:, :, None], w[:, :, None], b, TempSpace()) == 0
    dy = np.zeros((2, 16, 1, 8, 8), np.float32)
    assert _conv_algo.backward_data_tile(s, dy, w[:, :, None], TempSpace()) == 0
    assert _conv_algo.backward_weight_tile(s, dy, x[:, :, None], w[:, :, None], TempSpace()) == 0


def test_bad_algorithm_name_is_refused(monkeypatch: Any) -> None:
    monkeypatch.setenv("NNVMPY_CONV_ALGO", "fft")
    s = _shape(1, 2, 4, 4, 2, (1, 1), 1)
    x = np.zeros((1, 2, 1, 4, 4), np.float32)
    w = np.zeros((2, 2, 1, 3, 3), np.float32)
    with pytest.raises(NNVMError, match="NNVMPY_CONV_ALGO"):
        _conv_cpu.forward(s, x, w, None, np.empty_like(x), WRITE, TempSpace())


def test_not_eligible_layers_keep_the_gemm_paths(monkeypatch: Any) -> None:
    monkeypatch.setenv("NNVMPY_CONV_ALGO", "winograd")
    strided = _conv_cpu.ConvShape(1, 4, 8, 8, 4, 1, Window(3, 3, 2, 2, 1, 1, 1, 1, 4, 4), 1)
    five = _conv_cpu.ConvShape(1, 4, 8, 8, 4, 1, Window(5, 5, 1, 1, 2, 2, 1, 1, 8, 8), 1)
    depthwise = _shape(1, 4, 8, 8, 4, (1, 1), 4)
    for s in (strided, five, depthwise):
        assert not _conv_algo.eligible(s, np.float32)
    assert not _conv_algo.eligible(_shape(1, 4, 8, 8, 4, (3, 3), 1), np.float32)


def test_through_nd_convolution_with_autograd(monkeypatch: Any) -> None:
    monkeypatch.setenv("NNVMPY_CONV_ALGO", "winograd4")
    shape = (2, 6, 7, 7, 8, (1, 1), 2)
    x, w, b = _data(shape)
    xs, ws, bs = (nv.nd.array(a) for a in (x, w, b))
    xs.attach_grad()
    ws.attach_grad()
    with nv.autograd.record():
        y = nv.nd.Convolution(xs, ws, bs, kernel=(3, 3), pad=(1, 1), num_filter=8, num_group=2)
    dy = np.random.default_rng(5).standard_normal(y.shape).astype(np.float32)
    y.backward(nv.nd.array(dy))
    assert rel_err(y.asnumpy(), direct(x, w, (1, 1), 2) + b[:, None, None]) < 5e-5
    assert rel_err(xs.grad.asnumpy(), direct_grad_x(dy, w, x.shape, (1, 1), 2)) < 5e-5
    assert rel_err(ws.grad.asnumpy(), direct_grad_w(x, dy, (1, 1), 2)) < 5e-5


@pytest.mark.parametrize("m", [2, 4])
def test_transforms_split_across_threads(m: int, monkeypatch: Any) -> None:
    import contextlib

    from nnvmpy import threads

    @contextlib.contextmanager
    def three(want: int = 0) -> Any:
        yield 3  # as if the machine were idle with 3 cores: 3 channel ranges

    monkeypatch.setattr(_conv_winograd, "PARALLEL_CUTOFF", 0)
    monkeypatch.setattr(threads, "region", three)
    shape = (3, 7, 10, 9, 5, (1, 1), 1)
    x, w, b = _data(shape)
    r = np.random.default_rng(6).standard_normal((3, 5, 10, 9)).astype(np.float32)
    want = np.maximum(direct(x, w, (1, 1), 1) + b[:, None, None] + r, 0)
    out = np.full(want.shape, np.nan, np.float32)
    _conv_winograd.conv3x3(x, w, b, out, (1, 1), 1, False, TempSpace(), 1 << 20, m, r, True)
    assert rel_err(out, want) < TOL[m]


@pytest.mark.parametrize("transpose", [False, True])
@pytest.mark.parametrize("m", [2, 4])
def test_weight_transform_is_g_w_gt_per_filter(m: int, transpose: bool) -> None:
    """U[xi, f, c] = (G w[f, c] G^T)[xi] (NumPy), the backward filter flipped and with
    groups' F and C swapped; over several filter ranges (threads) as over one."""
    _conv_winograd.clear_cache()
    f, cg, groups = 6, 70, 2  # 70 channels: vector loops with a remainder
    w = np.random.default_rng(11).standard_normal((f, cg, 3, 3)).astype(np.float32)
    _, g, _ = _conv_winograd.matrices(m, np.float32)
    src = w.astype(np.float64)
    if transpose:  # w'[g*cg + c, f'] = w[g*fg + f', c] flipped
        src = src.reshape(groups, f // groups, cg, 3, 3).transpose(0, 2, 1, 3, 4)
        src = src.reshape(groups * cg, f // groups, 3, 3)[:, :, ::-1, ::-1]
    want = np.einsum("ki,fcij,lj->klfc", g, src, g).reshape((m + 2) ** 2, *src.shape[:2])
    u = _conv_winograd.transformed_weights(w, groups, m, transpose)
    assert np.allclose(u, want, rtol=1e-6, atol=1e-6)
    out = np.empty_like(u)
    n = src.shape[0]
    for lo, hi in ((0, 1), (1, n // 2), (n // 2, n)):  # filter ranges, as _split gives them
        _conv_winograd._weight_transform(
            np.ascontiguousarray(src, np.float32), out, g, False, lo, hi
        )
    assert np.array_equal(out, u) if not transpose else np.allclose(out, u, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("m", [2, 4])
def test_weight_gradient_back_transform_is_gt_acc_g(m: int) -> None:
    """dw[f, c] = G^T acc[:, f, c] G (NumPy), written or added, over filter ranges."""
    a = m + 2
    f, cg = 5, 37
    rng = np.random.default_rng(12)
    acc = rng.standard_normal((a * a, f, cg)).astype(np.float32)
    _, g, _ = _conv_winograd.matrices(m, np.float32)
    want = np.einsum("kp,klfc,lq->fcpq", g, acc.reshape(a, a, f, cg).astype(np.float64), g)
    dw = np.full((f, cg, 3, 3), np.nan, np.float32)
    for lo, hi in ((0, 2), (2, f)):
        _conv_winograd._weight_grad_back(acc, dw, g, False, lo, hi)
    assert np.allclose(dw, want, rtol=1e-5, atol=1e-5)
    start = rng.standard_normal(dw.shape).astype(np.float32)
    dw[...] = start
    _conv_winograd._weight_grad_back(acc, dw, g, True, 0, f)
    assert np.allclose(dw, want + start, rtol=1e-5, atol=1e-5)


def test_changed_weight_is_transformed_into_the_same_buffer() -> None:
    """An optimizer step changes the weights in place: U is rewritten where it was (no
    fresh 38 MB array, whose page faults cost more than the transform), and is right."""
    _conv_winograd.clear_cache()
    w = np.random.default_rng(13).standard_normal((4, 3, 3, 3)).astype(np.float32)
    _, g, _ = _conv_winograd.matrices(4, np.float32)
    u1 = _conv_winograd.transformed_weights(w, 1, 4)
    made = _conv_winograd.stats["transforms"]
    w *= 0.5  # in place: same buffer, new values
    u2 = _conv_winograd.transformed_weights(w, 1, 4)
    assert u2 is u1
    assert _conv_winograd.stats["transforms"] == made + 1
    want = np.einsum("ki,fcij,lj->klfc", g, w.astype(np.float64), g).reshape(36, 4, 3)
    assert np.allclose(u2, want, rtol=1e-6, atol=1e-6)
    assert _conv_winograd.transformed_weights(w, 1, 4) is u1  # unchanged: a hit
    assert _conv_winograd.stats["transforms"] == made + 1


# -- the input transform reads x itself: padding at the borders, none in the interior ----------


def _tiles_reference(x: Any, bt: Any, m: int, n0: int, nb: int, y0: int, pw: int, th: int, tw: int):
    """float64 V[k1*a + k2, c, (ty*tw + tx)*nb + b] = (bt d bt^T)[k1, k2], d the kt x kt tile of
    image n0 + b at rows y0 + m*ty.., columns m*tx - pw.. of x zero-padded (NumPy only)."""
    a, kt = bt.shape
    n, c, h, w = x.shape
    big = 2 * kt + m * max(th, tw)  # zeros on every side, more than any tile reaches
    xp = np.zeros((n, c, h + 2 * big, w + 2 * big))
    xp[:, :, big : big + h, big : big + w] = x
    v = np.empty((a * a, c, th * tw * nb))
    b64 = bt.astype(np.float64)
    for ty in range(th):
        for tx in range(tw):
            r, s = big + y0 + m * ty, big - pw + m * tx
            d = xp[n0 : n0 + nb, :, r : r + kt, s : s + kt]  # (nb, c, kt, kt)
            t = np.einsum("ki,bcij,lj->klcb", b64, d, b64).reshape(a * a, c, nb)
            v[:, :, (ty * tw + tx) * nb : (ty * tw + tx + 1) * nb] = t
    return v


@pytest.mark.parametrize("m", [2, 4])
@pytest.mark.parametrize("kind", ["x", "dy"])
@pytest.mark.parametrize(
    ("h", "w", "ph", "pw"),
    [
        (7, 9, 1, 1),
        (3, 3, 2, 2),
        (8, 5, 0, 2),
        (5, 11, 2, 0),
        (6, 6, 1, 2),
        (4, 13, 0, 0),
        (3, 4, 2, 1),
    ],
)
@pytest.mark.parametrize("nb", [1, 3])
def test_input_transform_pads_at_the_borders(
    m: int, kind: str, h: int, w: int, ph: int, pw: int, nb: int
) -> None:
    """Odd sizes, sizes not multiples of m, pads 0..2 on each side, one image per block
    (the m = 2 interior copy) and several: V equals B^T d B of NumPy-padded tiles, for
    every block of tile rows (y0 = m*ty0 - ph) and over two channel ranges (threads)."""
    n, c = 4, 5
    x = np.random.default_rng(21).standard_normal((n, c, h, w)).astype(np.float32)
    bt_x, _, at = _conv_winograd.matrices(m, np.float32)
    if kind == "x":
        bt, ho, wo = bt_x, h + 2 * ph - 2, w + 2 * pw - 2
    else:  # dy tiles of the weight gradient: A (a x m), no padding, m x m tiles
        bt, ho, wo, ph, pw = np.ascontiguousarray(at.T), h, w, 0, 0
    th, tw = -(-ho // m), -(-wo // m)
    for ty0, rows in ((0, th), (th // 2, th - th // 2)):  # whole images, and a row block
        if rows == 0:
            continue
        want = _tiles_reference(x, bt, m, 1, nb, m * ty0 - ph, pw, rows, tw)
        v = np.full(want.shape, np.nan, np.float32)
        args = (x, v, bt, 1, nb, m * ty0 - ph, pw, rows, tw, m)
        _conv_winograd._input_transform(*args, 0, 2)
        _conv_winograd._input_transform(*args, 2, c)
        scale = max(np.abs(want).max(), 1.0)
        assert np.abs(v - want).max() <= 1e-6 * scale, (ty0, rows)


# (n, c, h, w, f, pad, groups): batch 1, groups, sizes not multiples of 2 or 4, pads 0..2
BORDER_SHAPES = [
    (1, 4, 3, 3, 2, (0, 0), 1),
    (1, 6, 9, 7, 4, (2, 2), 2),
    (1, 3, 10, 13, 5, (1, 0), 1),
    (3, 4, 6, 9, 6, (0, 1), 2),
    (2, 9, 11, 5, 6, (2, 1), 3),
    (5, 2, 4, 4, 3, (1, 2), 1),
]


@pytest.mark.parametrize("budget", [1, 1 << 20])  # tile-row blocks of one image / many images
@pytest.mark.parametrize("m", [2, 4])
@pytest.mark.parametrize("shape", BORDER_SHAPES, ids=str)
def test_forward_and_both_gradients_at_the_borders(shape: Any, m: int, budget: int) -> None:
    x, w, b = _data(shape, seed=5)
    pad, groups = shape[5], shape[6]
    want = direct(x, w, pad, groups) + b[None, :, None, None]
    out = np.full(want.shape, np.nan, np.float32)
    _conv_winograd.conv3x3(x, w, b, out, pad, groups, False, TempSpace(), budget, m)
    assert rel_err(out, want) < TOL[m]
    dy = np.random.default_rng(6).standard_normal(want.shape).astype(np.float32)
    dx = np.full(x.shape, np.nan, np.float32)
    dpad = (2 - pad[0], 2 - pad[1])
    _conv_winograd.conv3x3(
        dy, w, None, dx, dpad, groups, False, TempSpace(), budget, m, transpose_w=True
    )
    assert rel_err(dx, direct_grad_x(dy, w, x.shape, pad, groups)) < TOL[m]
    want_dw = direct_grad_w(x, dy, pad, groups)
    dw = np.full(w.shape, np.nan, np.float32)
    _conv_winograd.weight_grad3x3(x, dy, dw, pad, groups, False, TempSpace(), budget, m)
    assert rel_err(dw, want_dw) < TOL[m]


@pytest.mark.parametrize("m", [2, 4])
def test_tile_transform_rows_fit_the_one_pass_sums(m: int) -> None:
    """_lincomb sums at most MAX_TERMS products per row: B^T's and A's rows have no more."""
    bt, _, at = _conv_winograd.matrices(m, np.float32)
    for mat in (bt, at.T):
        assert 0 < (mat != 0).sum(axis=1).max() <= _conv_winograd.MAX_TERMS


def _term_by_term(coef: Any, rows: list) -> Any:
    """float32 sum of coef[i] * rows[i] over the nonzero coef, left to right, the first
    product alone (what one pass per term computes)."""
    out = None
    for c, r in zip(coef, rows, strict=True):
        if c != 0:
            out = c * r if out is None else out + c * r
    return out


@pytest.mark.parametrize("m", [2, 4])
@pytest.mark.parametrize("nb", [1, 2])
def test_input_transform_bits_equal_a_term_by_term_sum(m: int, nb: int) -> None:
    """Bitwise: rows (B^T d) then columns, each a float32 sum of the nonzero terms in order,
    as NumPy computes it here without fused multiply-adds; zero padding at the borders."""
    x = np.random.default_rng(22).standard_normal((3, 2, 9, 7)).astype(np.float32)
    bt, _, _ = _conv_winograd.matrices(m, np.float32)
    a, ph, pw = m + 2, 1, 2
    ho, wo = 9 + 2 * ph - 2, 7 + 2 * pw - 2
    th, tw = -(-ho // m), -(-wo // m)
    xp = np.zeros((3, 2, m * th + 2, m * tw + 2), np.float32)
    xp[:, :, ph : ph + 9, pw : pw + 7] = x
    want = np.empty((a * a, 2, th * tw * nb), np.float32)
    for ty in range(th):
        for tx in range(tw):
            d = xp[1 : 1 + nb, :, m * ty : m * ty + a, m * tx : m * tx + a]  # (nb, c, a, a)
            s = [_term_by_term(bt[k1], [d[:, :, i, :] for i in range(a)]) for k1 in range(a)]
            for k1 in range(a):
                for k2 in range(a):
                    t = _term_by_term(bt[k2], [s[k1][:, :, j] for j in range(a)])
                    want[k1 * a + k2, :, (ty * tw + tx) * nb : (ty * tw + tx + 1) * nb] = t.T
    v = np.full(want.shape, np.nan, np.float32)
    _conv_winograd._input_transform(x, v, bt, 1, nb, -ph, pw, th, tw, m, 0, 2)
    assert np.array_equal(v.view(np.uint32), want.view(np.uint32))


# -- the plane layout (blocks of one image) and lanes ------------------------------------------


@pytest.mark.parametrize("kind", ["x", "dy"])
@pytest.mark.parametrize("m", [2, 4])
@pytest.mark.parametrize(
    ("h", "w", "ph", "pw"), [(7, 9, 1, 1), (3, 3, 2, 2), (8, 5, 0, 2), (6, 13, 2, 0)]
)
def test_plane_input_transform_is_the_tile_rows_with_a_junk_column(
    m: int, h: int, w: int, ph: int, pw: int, kind: str
) -> None:
    """The plane layout's V: tile rows of tw + 1 columns, the first tw of each equal to
    B^T d B of the NumPy-padded tiles, bitwise as the tile-row kernel's; every value written
    and finite (the junk column too: a garbage denormal there once slowed MKL's GEMM 20x)."""
    c = 5
    x = np.random.default_rng(23).standard_normal((3, c, h, w)).astype(np.float32)
    bt, _, at = _conv_winograd.matrices(m, np.float32)
    a, ho, wo = m + 2, h + 2 * ph - 2, w + 2 * pw - 2
    if kind == "dy":  # dy tiles of the weight gradient: A (a x m), no padding
        bt, ho, wo, ph, pw = np.ascontiguousarray(at.T), h, w, 0, 0
    th, tw = -(-ho // m), -(-wo // m)
    for ty0, rows in ((0, th), (th // 2, th - th // 2)):
        if rows == 0:
            continue
        y0 = m * ty0 - ph
        plane = np.full((a * a, c, rows * (tw + 1)), np.nan, np.float32)
        _conv_winograd._input_transform_plane(x, plane, bt, 2, y0, pw, rows, tw, m, 0, 2)
        _conv_winograd._input_transform_plane(x, plane, bt, 2, y0, pw, rows, tw, m, 2, c)
        assert np.isfinite(plane).all()
        rowwise = np.full((a * a, c, rows * tw), np.nan, np.float32)
        _conv_winograd._input_transform(x, rowwise, bt, 2, 1, y0, pw, rows, tw, m, 0, c)
        tiles = plane.reshape(a * a, c, rows, tw + 1)
        kept = tiles[..., :tw].reshape(rowwise.shape)
        assert np.array_equal(kept.view(np.uint32), rowwise.view(np.uint32)), (ty0, rows)
        if kind == "dy":  # its junk tiles lie right of dy: zero, they add nothing to dW
            assert not tiles[..., tw].any()


@pytest.mark.parametrize("lanes", [1, 2, 3])
@pytest.mark.parametrize("m", [2, 4])
@pytest.mark.parametrize("shape", [*BORDER_SHAPES, (1, 8, 17, 15, 6, (1, 1), 1)], ids=str)
def test_blocks_on_lanes_match_direct_whatever_the_lanes(
    shape: Any, m: int, lanes: int, monkeypatch: Any
) -> None:
    """Blocks dealt to partitions (as under MKL, forced here for any BLAS), run on 1..3
    lanes: bias, residual, relu and req 'add' as the direct convolution gives them, and the
    same bits whatever number of lanes ran the partitions."""
    import contextlib

    from nnvmpy import threads
    from nnvmpy.ops.nn import _lanes

    @contextlib.contextmanager
    def granted(want: int = 0) -> Any:
        yield lanes

    monkeypatch.setattr(_lanes, "parts", lambda items: max(1, min(2, items)))
    monkeypatch.setattr(_lanes, "one_openmp", lambda: False)  # batch 1 on lanes too
    monkeypatch.setattr(threads, "region", granted)
    x, w, b = _data(shape)
    pad, groups = shape[5], shape[6]
    base = direct(x, w, pad, groups)
    r = np.random.default_rng(7).standard_normal(base.shape).astype(np.float32)
    old = np.random.default_rng(8).standard_normal(base.shape).astype(np.float32)
    want = old + np.maximum(base + b[:, None, None] + r, 0)
    out = old.copy()
    _conv_winograd.conv3x3(x, w, b, out, pad, groups, True, TempSpace(), 1 << 20, m, r, True)
    assert rel_err(out, want) < TOL[m]
    if lanes == 1:
        return
    monkeypatch.setattr(threads, "region", lambda want=0: contextlib.nullcontext(1))
    one = old.copy()
    _conv_winograd.conv3x3(x, w, b, one, pad, groups, True, TempSpace(), 1 << 20, m, r, True)
    assert np.array_equal(one.view(np.uint32), out.view(np.uint32))


@pytest.mark.parametrize("lanes", [1, 2, 3])
@pytest.mark.parametrize("m", [2, 4])
@pytest.mark.parametrize("shape", [*BORDER_SHAPES, (1, 8, 17, 15, 6, (1, 1), 1)], ids=str)
def test_weight_gradient_on_lanes_matches_direct_whatever_the_lanes(
    shape: Any, m: int, lanes: int, monkeypatch: Any
) -> None:
    """The filter gradient's blocks dealt to partitions, each with its own accumulator,
    added in order: the direct gradient (req 'add' too), the same bits on 1..3 lanes."""
    import contextlib

    from nnvmpy import threads
    from nnvmpy.ops.nn import _lanes

    monkeypatch.setattr(_lanes, "parts", lambda items: max(1, min(2, items)))
    monkeypatch.setattr(_lanes, "one_openmp", lambda: False)  # batch 1 on lanes too
    monkeypatch.setattr(threads, "region", lambda want=0: contextlib.nullcontext(lanes))
    x = _data(shape)[0]
    n, c, h, wd, f, pad, groups = shape
    dy = np.random.default_rng(10).standard_normal((n, f, h + 2 * pad[0] - 2, wd + 2 * pad[1] - 2))
    dy = dy.astype(np.float32)
    start = np.random.default_rng(11).standard_normal((f, c // groups, 3, 3)).astype(np.float32)
    dw = start.copy()
    _conv_winograd.weight_grad3x3(x, dy, dw, pad, groups, True, TempSpace(), 1 << 20, m)
    assert rel_err(dw, direct_grad_w(x, dy, pad, groups) + start) < TOL[m]
    monkeypatch.setattr(threads, "region", lambda want=0: contextlib.nullcontext(1))
    one = start.copy()
    _conv_winograd.weight_grad3x3(x, dy, one, pad, groups, True, TempSpace(), 1 << 20, m)
    assert np.array_equal(one.view(np.uint32), dw.view(np.uint32))


@pytest.mark.parametrize("parts", [1, 2, 3])
@pytest.mark.parametrize("m", [2, 4])
def test_team_transforms_are_the_serial_ones_bitwise(m: int, parts: int) -> None:
    """The plane transforms' numba-parallel twins (channel / filter ranges per thread)
    write the same bits as the serial kernels, whatever the number of ranges."""
    c, f, h, w, pw = 7, 5, 13, 11, 1
    rng = np.random.default_rng(31)
    x = rng.standard_normal((2, c, h, w)).astype(np.float32)
    bt, _, at = _conv_winograd.matrices(m, np.float32)
    a, th, tw = m + 2, -(-h // m), -(-w // m)
    serial = np.full((a * a, c, th * (tw + 1)), np.nan, np.float32)
    team = serial.copy()
    _conv_winograd._input_transform_plane(x, serial, bt, 1, -pw, pw, th, tw, m, 0, c)
    _conv_winograd._input_transform_plane_team(x, team, bt, 1, -pw, pw, th, tw, m, 0, c, parts)
    assert np.array_equal(team.view(np.uint32), serial.view(np.uint32))
    mm = rng.standard_normal((a * a, f, th * (tw + 1))).astype(np.float32)
    bias = rng.standard_normal(f).astype(np.float32)
    res = rng.standard_normal((2, f, h, w)).astype(np.float32)
    start = rng.standard_normal((2, f, h, w)).astype(np.float32)
    one, many = start.copy(), start.copy()
    args = (at, bias, True, res, True, True, True, 1, 0, th, tw, m, 0, f)
    _conv_winograd._output_transform_plane(mm, one, *args)
    _conv_winograd._output_transform_plane_team(mm, many, *args, parts)
    assert np.array_equal(many.view(np.uint32), one.view(np.uint32))


@pytest.mark.parametrize("m", [2, 4])
@pytest.mark.parametrize("shape", [s for s in BORDER_SHAPES if s[0] == 1], ids=str)
def test_one_image_is_one_block_with_team_transforms(shape: Any, m: int, monkeypatch: Any) -> None:
    """Where numba's team and the BLAS share one OpenMP runtime (MKL; forced here for any
    BLAS), one image runs as one block: no lanes, the plane transforms as numba parallel
    loops; forward (bias, residual, relu, req 'add'), data and filter gradients as the
    direct convolution gives them."""
    from nnvmpy.ops.nn import _lanes

    monkeypatch.setattr(_lanes, "parts", lambda items: max(1, min(2, items)))
    monkeypatch.setattr(_lanes, "one_openmp", lambda: True)
    monkeypatch.setattr(_conv_winograd, "PARALLEL_CUTOFF", 0)
    ran = {"team": 0, "lanes": 0}
    real_run = _lanes.run

    def counted_run(n_parts: int, work: Any) -> None:
        ran["lanes"] += n_parts > 1
        real_run(n_parts, work)

    monkeypatch.setattr(_lanes, "run", counted_run)
    for plain, twin in list(_conv_winograd._TEAM_TWINS.items()):

        def spy(*args: Any, _twin: Any = twin) -> None:
            ran["team"] += 1
            _twin(*args)

        monkeypatch.setitem(_conv_winograd._TEAM_TWINS, plain, spy)
    x, w, b = _data(shape)
    pad, groups = shape[5], shape[6]
    base = direct(x, w, pad, groups)
    r = np.random.default_rng(7).standard_normal(base.shape).astype(np.float32)
    old = np.random.default_rng(8).standard_normal(base.shape).astype(np.float32)
    out = old.copy()
    _conv_winograd.conv3x3(x, w, b, out, pad, groups, True, TempSpace(), 1 << 20, m, r, True)
    assert rel_err(out, old + np.maximum(base + b[:, None, None] + r, 0)) < TOL[m]
    assert ran == {"team": 2, "lanes": 0}
    dy = np.random.default_rng(9).standard_normal(base.shape).astype(np.float32)
    dx = np.zeros_like(x)
    _conv_winograd.conv3x3(
        dy, w, None, dx, (2 - pad[0], 2 - pad[1]), groups, False, TempSpace(), 1 << 20, m,
        transpose_w=True,
    )  # fmt: skip
    assert rel_err(dx, direct_grad_x(dy, w, x.shape, pad, groups)) < TOL[m]
    dw = np.zeros_like(w)
    _conv_winograd.weight_grad3x3(x, dy, dw, pad, groups, False, TempSpace(), 1 << 20, m)
    assert rel_err(dw, direct_grad_w(x, dy, pad, groups)) < 4 * TOL[m]
    assert ran == {"team": 6, "lanes": 0}  # + dx's two transforms, x's and dy's for dW


def test_auto_charges_winograd_for_reading_its_larger_filter(monkeypatch: Any) -> None:
    """A Winograd candidate's timed run is charged its U's bytes beyond the weights' at
    COLD_WEIGHT_BYTES_PER_S (its timing ran with U in the cache; a network evicts it)."""
    monkeypatch.setenv("NNVMPY_CONV_ALGO", "auto")
    monkeypatch.setattr(_conv_algo, "MIN_AUTO_FLOPS", 0)
    shape = (1, 16, 8, 8, 24, (1, 1), 1)
    x, w, b = _data(shape)
    s = _shape(*shape)
    extra2 = (16 - 9) * 24 * 16 * 4  # F(2x2): a = 4
    assert _conv_algo.cold_charge("gemm", s, np.float32) == 0.0
    assert _conv_algo.cold_charge("winograd2", s, np.float32) == pytest.approx(
        extra2 / _conv_algo.COLD_WEIGHT_BYTES_PER_S
    )
    assert _conv_algo.cold_charge("winograd4", s, np.float32) == pytest.approx(
        (36 - 9) * 24 * 16 * 4 / _conv_algo.COLD_WEIGHT_BYTES_PER_S
    )

    def choice(rate: float) -> int:
        timed = iter([1.0e-3, 0.8e-3, 0.5e-3])  # gemm, winograd2, winograd4, in that order
        monkeypatch.setattr(_conv_algo, "_time", lambda fn: next(timed))
        monkeypatch.setattr(_conv_algo, "COLD_WEIGHT_BYTES_PER_S", rate)
        _conv_algo.forget()
        monkeypatch.setenv("NNVMPY_CONV_ALGO_CACHE", "")  # measure, keep nothing on disk
        return _conv_algo.forward_tile(s, x[:, :, None], w[:, :, None], b, TempSpace(), False)

    assert choice(1e30) == 4  # no charge: the fastest timed run
    assert choice(extra2 / 0.05e-3) == 4  # F(2x2) charged 0.05 ms, F(4x4) 0.19: 0.69 ms
    assert choice(extra2 / 0.15e-3) == 2  # 0.15 and 0.58: F(2x2) at 0.95 ms
    assert choice(extra2 / 0.3e-3) == 0  # 0.3 and 1.16: the GEMM's 1 ms wins
