"""calibrate_entropy's kernels (one item per candidate width) against the explicit-sum
reference of the op table (cases_quantization.calibrate_ref): histograms of several
sizes and bin counts, sparse ones (candidates that cannot be smoothed), all-empty ones;
CPU and GPU."""

from __future__ import annotations

from typing import Any

import numpy as np
import op_db  # noqa: F401  (first: it loads every cases_*.py)
import pytest
from cases_quantization import calibrate_ref

import nnvmpy as nv

DEVICES = ["cpu", pytest.param("gpu", marks=pytest.mark.gpu)]


def _run(device: str, hist: np.ndarray, edges: np.ndarray, n_quantized: int) -> tuple[Any, Any]:
    ctx = nv.cpu() if device == "cpu" else nv.gpu(0)
    threshold, divergence = nv.nd.contrib.calibrate_entropy(
        nv.nd.array(hist, ctx=ctx), nv.nd.array(edges, ctx=ctx), num_quantized_bins=n_quantized
    )
    return threshold.asnumpy()[0], divergence.asnumpy()[0]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize(
    ("bins", "n_quantized", "sparse"),
    [(21, 5, False), (41, 7, True), (101, 15, False), (401, 31, True)],
)
def test_matches_the_reference(device: str, bins: int, n_quantized: int, sparse: bool) -> None:
    if device == "gpu" and bins > 101:
        pytest.skip("the simulator runs each candidate in Python")
    rng = np.random.default_rng(bins)
    data = rng.standard_t(4, size=5000) if not sparse else rng.normal(size=300)
    hist, edges = np.histogram(data, bins=bins, range=(-6.0, 6.0))
    hist, edges = hist.astype(np.float32), edges.astype(np.float32)
    want_t, want_d = (a[0] for a in calibrate_ref(hist, edges, num_quantized_bins=n_quantized))
    got_t, got_d = _run(device, hist, edges, n_quantized)
    assert got_t == np.float32(want_t)
    np.testing.assert_allclose(got_d, want_d, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("device", DEVICES)
def test_empty_histogram_gives_the_last_edge_and_inf(device: str) -> None:
    edges = np.linspace(-1, 1, 12).astype(np.float32)
    t, d = _run(device, np.zeros(11, np.float32), edges, 3)
    assert t == edges[-1]
    assert np.isinf(d)


@pytest.mark.parametrize("device", DEVICES)
def test_empty_end_bins_filled_by_the_outliers(device: str) -> None:
    """Gaps in the tails: many candidates' end bins are empty in hist but not in p (the
    clipped outliers land there), which changes how many bins smoothing sees."""
    hist = np.array([2, 0, 0, 1, 0, 4, 6, 9, 12, 15, 20, 14, 10, 0, 7, 0, 0, 3, 0, 0, 5],
                    np.float32)  # fmt: skip
    edges = np.linspace(-4, 4, 22).astype(np.float32)
    for n_quantized in (3, 5):
        want_t, want_d = (a[0] for a in calibrate_ref(hist, edges, num_quantized_bins=n_quantized))
        got_t, got_d = _run(device, hist, edges, n_quantized)
        assert got_t == np.float32(want_t)
        np.testing.assert_allclose(got_d, want_d, rtol=1e-4, atol=1e-6)
