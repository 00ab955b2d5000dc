"""Correlation's GPU backward (an item per input element, gathering the outputs that read
it: ops/nn/_correlation_cuda.py) against a NumPy scatter over the outputs and the CPU's.

Settings cover FlowNet's kind (kernel 1, displacements striding by 2), a 3 x 3 window
with stride1 2 (taps whose output index does not divide fall out), padding smaller than
the displacement (the border is cut), no displacement and 1 x 1 inputs; multiplication
and absolute difference (small integer values, so a == b ties take the +1 sign); each
pair of requests for d data1 and d data2; float16/32/64. FCompute<gpu> is called directly
(tests/ops/fcompute_call.py) so each request can be chosen; the reference is float64 on
the same (rounded) values. The gather writes each element once, in a fixed order.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from correlation_inputs import correlation_inputs
from fcompute_call import run_fcompute
from launch_spies import spy_item_launches

from nnvmpy.ops.nn import _correlation_cuda, correlation

pytestmark = pytest.mark.gpu

DTYPES = (np.float64, np.float32, np.float16)
TOL = {np.float64: 1e-12, np.float32: 1e-5, np.float16: 2e-3}
REQS = [("write", "write"), ("add", "add"), ("write", "null"), ("null", "add"), ("null", "null")]

# (shape, kernel_size, max_displacement, stride1, stride2, pad_size)
CASES = [
    ((2, 3, 7, 9), 1, 4, 1, 2, 4),
    ((2, 2, 8, 7), 3, 2, 2, 1, 2),
    ((1, 3, 9, 8), 3, 3, 3, 2, 1),
    ((1, 1, 1, 1), 1, 0, 1, 1, 0),
]


@pytest.fixture
def launches(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[int]]:
    """The item counts of the gather's and the CPU loop's launches."""
    return {
        "gather": spy_item_launches(monkeypatch, _correlation_cuda._corr_grad_gather),
        "planes": spy_item_launches(monkeypatch, correlation._corr_grad_loop),
    }


def _reference(
    a: np.ndarray,
    b: np.ndarray,
    dy: np.ndarray,
    k: int,
    d: int,
    s1: int,
    s2: int,
    pad: int,
    mult: bool,
) -> tuple[np.ndarray, np.ndarray]:
    """d data1, d data2 by scattering every output's window, on padded copies."""
    N, C, H, W = a.shape
    _, DD, th, tw = dy.shape
    radius = d // s2
    D = 2 * radius + 1
    m = pad + d + k + s1  # enough margin past every slice
    ap = np.zeros((N, C, H + 2 * m, W + 2 * m))
    bp = np.zeros_like(ap)
    ap[:, :, m : m + H, m : m + W] = a
    bp[:, :, m : m + H, m : m + W] = b
    ga, gb = np.zeros_like(ap), np.zeros_like(ap)
    o = m - pad + d  # padded position of output (0, 0)'s first tap
    for t in range(DD):
        oy, ox = (t // D - radius) * s2, (t % D - radius) * s2
        g = dy[:, t][:, None] / (k * k * C)  # (N, 1, th, tw)
        for h in range(k):
            for w in range(k):
                ya = slice(o + h, o + h + s1 * th, s1)
                xa = slice(o + w, o + w + s1 * tw, s1)
                yb = slice(o + oy + h, o + oy + h + s1 * th, s1)
                xb = slice(o + ox + w, o + ox + w + s1 * tw, s1)
                va, vb = ap[:, :, ya, xa], bp[:, :, yb, xb]
                da = g * vb if mult else np.where(va >= vb, g, -g)
                db = g * va if mult else -da
                ga[:, :, ya, xa] += da
                gb[:, :, yb, xb] += db
    inner = (slice(None), slice(None), slice(m, m + H), slice(m, m + W))
    return ga[inner], gb[inner]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mult", [True, False])
@pytest.mark.parametrize(("shape", "k", "d", "s1", "s2", "pad"), CASES)
def test_correlation_backward(
    shape: tuple[int, ...],
    k: int,
    d: int,
    s1: int,
    s2: int,
    pad: int,
    mult: bool,
    dtype: Any,
    launches: dict[str, list[int]],
) -> None:
    rng = np.random.default_rng(5)
    params, a, b, dy = correlation_inputs(rng, shape, k, d, s1, s2, pad, mult, dtype)
    exact = [x.astype(np.float64) for x in (dy, a, b)]
    want = _reference(exact[1], exact[2], exact[0], k, d, s1, s2, pad, mult)
    zeros = [np.zeros(shape), np.zeros(shape)]
    cpu = run_fcompute("_backward_Correlation", params, exact, zeros, ["write"] * 2, "cpu")
    for c, ref in zip(cpu, want, strict=True):
        np.testing.assert_allclose(c, ref, rtol=1e-12, atol=1e-12)
    starts = [rng.standard_normal(shape).astype(dtype) for _ in range(2)]
    for reqs in REQS:
        launches["gather"].clear()
        launches["planes"].clear()
        got = run_fcompute("_backward_Correlation", params, [dy, a, b], starts, reqs, "gpu")
        assert launches["planes"] == []
        assert launches["gather"] == ([] if reqs == ("null", "null") else [a.size])
        for g, ref, start, req in zip(got, want, starts, reqs, strict=True):
            assert g.dtype == dtype
            if req == "null":
                np.testing.assert_array_equal(g, start)
                continue
            full = ref + (start.astype(np.float64) if req == "add" else 0.0)
            tol = TOL[dtype] * max(1.0, float(np.abs(full).max()))
            np.testing.assert_allclose(g.astype(np.float64), full, rtol=TOL[dtype], atol=tol)


def test_cpu_keeps_the_plane_loop(launches: dict[str, list[int]]) -> None:
    rng = np.random.default_rng(6)
    params = {"kernel_size": 1, "max_displacement": 2, "pad_size": 2}
    a, b = rng.standard_normal((2, 3, 5, 6)), rng.standard_normal((2, 3, 5, 6))
    dy = rng.standard_normal((2, 25, 5, 6))
    zeros = [np.zeros(a.shape)] * 2
    run_fcompute("_backward_Correlation", params, [dy, a, b], zeros, ["write"] * 2, "cpu")
    assert launches == {"gather": [], "planes": [6]}
