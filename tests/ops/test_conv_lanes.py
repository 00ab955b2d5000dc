"""Convolution chunks dealt into partitions and run on several lanes (ops/nn/_lanes.py).

Forced here whatever the BLAS, so the split runs in CI too (where it otherwise needs
MKL's per-thread count). With the partitions fixed, the results must not depend on how
many lanes ran them (bit for bit: the load decides the lanes); one partition against a
float64 reference; epilogues, req 'add', biases, groups, small and big weights.
"""

from __future__ import annotations

import contextlib
from typing import Any

import numpy as np
import pytest

# isort: off
import op_db  # noqa: F401  (first: it loads every cases_*.py, so cases_conv is complete)
from cases_conv import TempSpace, conv_reference

# isort: on

from nnvmpy.base import OpReqType
from nnvmpy.ops.nn import _conv_cpu, _lanes
from nnvmpy.ops.nn._geometry import Window

WRITE, ADD = OpReqType.kWriteTo, OpReqType.kAddTo


@pytest.fixture(autouse=True)
def _blas_threads_restored() -> Any:
    """Give the BLAS back the current width after a test held it at one (autouse: set up
    before monkeypatch, so torn down after it has put the real setter back)."""
    yield
    from nnvmpy import threads

    threads.set_blas_threads(threads.width())


def _lanes_forced(monkeypatch: Any, n_parts: int, lanes: int) -> list[int]:
    """Deal chunks into (at most) n_parts partitions and run them on `lanes` threads,
    whatever the BLAS and the machine; returns the partition counts used.

    The BLAS's process-wide thread count is held at one meanwhile: the load governor
    (nnvmpy.threads) narrows it when other processes run, and OpenBLAS's sums change in
    their last bits with it (7x7 layer: one thread against two), which made the
    comparisons below fail in CI under load. A lane's GEMMs are one-thread anyway."""
    from nnvmpy import threads

    threads.set_blas_threads(1)
    monkeypatch.setattr(threads, "set_blas_threads", lambda n: None)  # governor: no-op
    used: list[int] = []

    def parts(items: int) -> int:
        used.append(min(n_parts, items))
        return used[-1]

    @contextlib.contextmanager
    def region(want: int | None = None) -> Any:
        yield lanes

    monkeypatch.setattr(_lanes, "parts", parts)
    monkeypatch.setattr(threads, "region", region)
    return used


# (n, c, h, w, f, kernel, stride, pad, groups): all on the im2col chunks (stride 2, or
# too few channels for the shifted GEMMs, no Winograd: gemm_only), and over 1024 output
# positions an image, so every image is a chunk of its own and three lanes get work
LAYERS = [
    (4, 3, 70, 66, 8, 7, 2, 3, 1),
    (5, 6, 66, 64, 4, 3, 2, 1, 2),
    (4, 4, 34, 32, 6, 3, 1, 1, 1),
    (3, 8, 66, 66, 8, 1, 2, 0, 4),
]


class _Forward:
    """A forward case of `layer` (n, c, h, w, f, kernel, stride, pad, groups) in `mode`:
    its arrays, and `want`, the float64 reference of what _conv_cpu.forward writes."""

    def __init__(self, layer: Any, mode: str, seed: int) -> None:
        n, c, h, wd, f, kk, st, p, groups = layer
        self.ho, self.wo = (h + 2 * p - kk) // st + 1, (wd + 2 * p - kk) // st + 1
        rng = np.random.default_rng(seed)
        self.x = rng.standard_normal((n, c, 1, h, wd)).astype(np.float32)
        self.w = rng.standard_normal((f, c // groups, 1, kk, kk)).astype(np.float32)
        self.bias = rng.standard_normal(f).astype(np.float32) if mode != "write" else None
        out_shape = (n, f, 1, self.ho, self.wo)
        self.residual = rng.standard_normal(out_shape).astype(np.float32)
        self.start = rng.standard_normal(out_shape).astype(np.float32)
        window = Window(kk, kk, st, st, p, p, 1, 1, self.ho, self.wo)
        self.s = _conv_cpu.ConvShape(n, c, h, wd, f, groups, window, 1)
        self.req = ADD if mode == "add" else WRITE
        self.epilogue = (self.residual, True) if mode == "epilogue" else None
        want = _reference(self.x[:, :, 0], self.w[:, :, 0], st, p, groups)
        if self.bias is not None:
            want += self.bias[:, None, None]
        if mode == "add":
            want += self.start[:, :, 0]
        if mode == "epilogue":
            want = np.maximum(want + self.residual[:, :, 0], 0)
        self.want = want

    def run(self) -> Any:
        out = self.start.copy()
        _conv_cpu.forward(
            self.s, self.x, self.w, self.bias, out, self.req, TempSpace(),
            epilogue=self.epilogue, gemm_only=True,
        )  # fmt: skip
        return out

    def check(self, out: Any) -> None:
        err = np.abs(out[:, :, 0] - self.want).max()
        assert err <= 1e-5 * max(1.0, np.abs(self.want).max())


@pytest.mark.parametrize("layer", LAYERS)
@pytest.mark.parametrize("mode", ["write", "add", "bias", "epilogue"])
def test_lanes_match_one_lane(layer: Any, mode: str, monkeypatch: Any) -> None:
    n = layer[0]
    case = _Forward(layer, mode, sum(layer))

    def run(n_parts: int, lanes: int) -> Any:
        used = _lanes_forced(monkeypatch, n_parts, lanes)
        out = case.run()
        assert used == [min(n_parts, n)]  # the chunked path ran, one image a chunk
        return out

    one = run(1, 1)
    for lanes in (1, 2, 3):
        np.testing.assert_array_equal(run(3, lanes), one)
    case.check(one)  # and one lane is right: float64 reference, a direct loop over taps


# batch 1, at least TURNED_RATIO filters per output position and TURNED_MIN_ROWS values
# per window: the GEMM runs turned (out^T = col^T w^T, then a transposing copy)
TURNED = [(1, 128, 4, 4, 128, 3, 1, 1, 1), (1, 256, 7, 7, 256, 3, 2, 1, 2)]


@pytest.mark.parametrize("layer", TURNED)
@pytest.mark.parametrize("mode", ["write", "bias", "epilogue"])
def test_turned_gemm_matches_the_reference(layer: Any, mode: str, monkeypatch: Any) -> None:
    from nnvmpy.ops.nn import _blas

    case = _Forward(layer, mode, sum(layer) + 3)
    _lanes_forced(monkeypatch, 1, 1)
    monkeypatch.setattr(_conv_cpu, "TURNED_BLAS", (_blas.name(),))  # not MKL alone
    decided: list[bool] = []
    turned = _conv_cpu._turned
    monkeypatch.setattr(_conv_cpu, "_turned", _spy(turned, decided))
    case.check(case.run())
    assert decided
    assert all(decided)


def _spy(fn: Any, calls: list[Any]) -> Any:
    def spy(*args: Any) -> Any:
        calls.append(fn(*args))
        return calls[-1]

    return spy


def _reference(x: Any, w: Any, st: int, p: int, groups: int) -> Any:
    k = w.shape[-1]
    params = {"kernel": (k, k), "stride": (st, st), "pad": (p, p), "num_group": groups}
    return conv_reference(x.astype(np.float64), w.astype(np.float64), **params)


def test_one_partition_without_a_per_thread_blas() -> None:
    """OpenBLAS (no per-thread count) never gets more than one partition."""
    from nnvmpy.ops.nn import _blas

    with _blas.use("openblas"):
        assert _lanes.parts(8) == 1
    assert _lanes.parts(1) == 1


def _reference_grads(x: Any, w: Any, dy: Any, st: int, p: int, groups: int) -> Any:
    """float64 dx, dw of the convolution, tap by tap."""
    h, wd = x.shape[2:]
    f, cg, kk, _ = w.shape
    fg = f // groups
    ho, wo = dy.shape[2], dy.shape[3]
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (p, p), (p, p)))
    dxp = np.zeros_like(xp)
    dw = np.zeros(w.shape)
    for i in range(kk):
        for j in range(kk):
            rows, cols = slice(i, i + st * (ho - 1) + 1, st), slice(j, j + st * (wo - 1) + 1, st)
            for g in range(groups):
                fs, cs = slice(g * fg, (g + 1) * fg), slice(g * cg, (g + 1) * cg)
                dw[fs, :, i, j] = np.einsum("nfhw,nchw->fc", dy[:, fs], xp[:, cs, rows, cols])
                dxp[:, cs, rows, cols] += np.einsum("fc,nfhw->nchw", w[fs, :, i, j], dy[:, fs])
    return dxp[:, :, p : p + h, p : p + wd], dw


# the same layers, plus one whose weights are big (no transposed small-weight GEMMs)
BACKWARD_LAYERS = [*LAYERS, (3, 64, 66, 64, 64, 3, 2, 1, 1)]


@pytest.mark.parametrize("layer", BACKWARD_LAYERS)
@pytest.mark.parametrize("req", ["write", "add"])
def test_backward_lanes_match_one_lane_and_reference(
    layer: Any, req: str, monkeypatch: Any
) -> None:
    n, c, h, wd, f, kk, st, p, groups = layer
    ho, wo = (h + 2 * p - kk) // st + 1, (wd + 2 * p - kk) // st + 1
    rng = np.random.default_rng(sum(layer) + 1)
    x = rng.standard_normal((n, c, 1, h, wd)).astype(np.float32)
    w = rng.standard_normal((f, c // groups, 1, kk, kk)).astype(np.float32)
    dy = rng.standard_normal((n, f, 1, ho, wo)).astype(np.float32)
    dx0 = rng.standard_normal(x.shape).astype(np.float32)
    dw0 = rng.standard_normal(w.shape).astype(np.float32)
    s = _conv_cpu.ConvShape(n, c, h, wd, f, groups, Window(kk, kk, st, st, p, p, 1, 1, ho, wo), 1)
    mode = ADD if req == "add" else WRITE

    def run(n_parts: int, lanes: int) -> Any:
        used = _lanes_forced(monkeypatch, n_parts, lanes)
        dx, dw = dx0.copy(), dw0.copy()
        _conv_cpu.backward(s, dy, x, w, [dx, dw], [mode, mode], TempSpace(), gemm_only=True)
        assert used == [min(n_parts, n)]
        return dx, dw

    (dx1, dw1), (dx3, dw3) = run(1, 1), run(3, 3)
    np.testing.assert_array_equal(dx3, dx1)  # images are the partitions' own: same sums
    for lanes in (1, 2):  # the same partitions on fewer lanes: the same numbers
        dx_l, dw_l = run(3, lanes)
        np.testing.assert_array_equal(dx_l, dx3)
        np.testing.assert_array_equal(dw_l, dw3)
    want_dx, want_dw = _reference_grads(x[:, :, 0], w[:, :, 0], dy[:, :, 0], st, p, groups)
    if req == "add":
        want_dx, want_dw = want_dx + dx0[:, :, 0], want_dw + dw0[:, :, 0]
    for got in (dw1, dw3):  # dW: the lanes' partial sums are added at the end
        assert np.abs(got[:, :, 0] - want_dw).max() <= 2e-5 * np.abs(want_dw).max()
    assert np.abs(dx1[:, :, 0] - want_dx).max() <= 2e-5 * np.abs(want_dx).max()


# batch 1 with at least BAND_RATIO output positions per filter: bands of output rows go
# to the lanes (the 7x7/2 stem's shape among them)
ONE_IMAGE = [
    (1, 3, 70, 66, 4, 7, 2, 3, 1),
    (1, 2, 40, 37, 2, 3, 1, 1, 1),
    (1, 4, 31, 30, 1, 5, 2, 2, 1),
    (1, 3, 33, 35, 2, 3, 2, 0, 1),
]


@pytest.mark.parametrize("layer", ONE_IMAGE)
@pytest.mark.parametrize("mode", ["write", "add", "bias", "epilogue"])
def test_one_image_bands_match_the_reference_on_any_lanes(
    layer: Any, mode: str, monkeypatch: Any
) -> None:
    case = _Forward(layer, mode, sum(layer) + 2)
    assert case.ho * case.wo >= _conv_cpu.BAND_RATIO * layer[4]
    monkeypatch.setattr(_lanes, "one_openmp", lambda: False)  # bands: OpenBLAS's batch 1

    def run(n_parts: int, lanes: int) -> Any:
        used = _lanes_forced(monkeypatch, n_parts, lanes)
        out = case.run()
        # req 'add' keeps the chunk path (one image: one partition); else one band a part
        assert used[0] == (1 if mode == "add" else min(n_parts, case.ho))
        return out

    three = run(3, 3)
    for lanes in (1, 2):  # the same bands on fewer lanes: the same numbers
        np.testing.assert_array_equal(run(3, lanes), three)
    case.check(three)
    case.check(run(1, 1))
