"""Calibration: smoothing, the entropy threshold and the histogram merge, against values
worked out by hand and against properties every correct answer has."""

from __future__ import annotations

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy.contrib import _calibration
from nnvmpy.contrib import quantization as quant


def test_smooth_distribution_moves_eps_to_the_empty_bins() -> None:
    p = np.array([0.0, 0.0, 1.0, 0.0, 0.0])
    want = np.array([1e-3, 1e-3, 1.0 - 4e-3, 1e-3, 1e-3])
    np.testing.assert_allclose(quant._smooth_distribution(p, eps=1e-3), want, rtol=1e-6)
    assert abs(quant._smooth_distribution(p, eps=1e-3).sum() - 1.0) < 1e-6


def test_smooth_distribution_rejects_an_empty_histogram() -> None:
    with pytest.raises(ValueError, match="All entries are 0"):
        quant._smooth_distribution(np.zeros(4), eps=1e-3)


def _hist(values: np.ndarray, bins: int = 2001) -> tuple:
    th = float(np.abs(values).max())
    hist, edges = np.histogram(values, bins=bins, range=(-th, th))
    return hist, edges, float(values.min()), float(values.max()), th


def test_threshold_of_mass_at_the_edge_is_the_edge() -> None:
    """All the mass in the last bin: any narrower threshold clips it all, so the best is
    the full range."""
    hist = np.zeros(1001)
    hist[-1] = 1000
    edges = np.linspace(-2.0, 2.0, 1002)
    for dtype in ("int8", "uint8", "auto"):
        _lo, _hi, th, _ = quant._get_optimal_threshold((hist, edges, -2.0, 2.0, 2.0), dtype, 5)
        assert abs(float(th[0]) - 2.0) < 1e-5


def test_threshold_of_uniform_data_is_its_maximum() -> None:
    """Uniform data loses only by clipping: the best threshold is (close to) max |x|."""
    x = np.random.default_rng(0).uniform(-10.5, 11.3, 50000)
    ranges = quant._get_optimal_thresholds({"layer": _hist(x)}, "int8")
    lo, hi = ranges["layer"]
    assert lo == -hi
    assert abs(hi - np.abs(x).max()) / np.abs(x).max() < 2e-2


def test_threshold_of_a_long_tail_clips_it() -> None:
    """A normal sample with a few far outliers: clipping them costs less than the
    resolution lost to reach them."""
    rng = np.random.default_rng(1)
    x = np.r_[rng.normal(size=100000), [40.0, -40.0]]
    _lo, hi = quant._get_optimal_thresholds({"l": _hist(x)}, "int8")["l"]
    assert 2.0 < hi < 20.0


def test_non_negative_layers_get_a_uint8_range_from_zero() -> None:
    x = np.random.default_rng(2).uniform(0.0, 3.0, 20000)
    assert quant._get_optimal_thresholds({"relu": _hist(x)}, "uint8")["relu"][0] == 0.0
    assert quant._get_optimal_thresholds({"relu": _hist(x)}, "int8")["relu"][0] < 0.0


def test_calibrate_entropy_op_checks_its_inputs() -> None:
    with pytest.raises(nv.NNVMError, match="must be 1-D"):
        nv.nd.contrib.calibrate_entropy(nv.nd.zeros((3, 4)), nv.nd.zeros((5,)))
    scalar = nv.nd.array(np.float32(1.0))  # a known 0-d shape is no 1-D histogram either
    with pytest.raises(nv.NNVMError, match="must be 1-D"):
        nv.nd.contrib.calibrate_entropy(scalar, scalar)


@pytest.mark.parametrize(
    ("bins", "threshold", "divergence"),
    [(511, 3.8016603, 0.0172813963), (512, 3.8016603, 0.0167875774), (8001, 3.2021651, 0.1079208)],
)
def test_calibrate_entropy_gives_mxnet_1_9_1s_values(
    bins: int, threshold: float, divergence: float
) -> None:
    """np.histogram of 5000 normal samples (RandomState(0)), as MXNet 1.9.1's
    calibrate_entropy computed them on this machine (an even bin count included)."""
    sample = np.random.RandomState(0).normal(size=5000)
    hist, edges = np.histogram(sample, bins=bins)
    t, d = nv.nd.contrib.calibrate_entropy(
        nv.nd.array(hist.astype(np.float32)), nv.nd.array(edges.astype(np.float32))
    )
    assert abs(t.asscalar() - threshold) < 1e-6
    assert abs(d.asscalar() - divergence) < 1e-7


def test_histogram_merge_keeps_every_count_and_the_bin_width() -> None:
    rng = np.random.default_rng(3)
    a, b = rng.uniform(-1, 1, 1000), rng.uniform(-3, 3, 1000)
    merged = _calibration.histograms([{"l": a}, {"l": b}], num_bins=101)["l"]
    hist, edges, lo, hi, th = merged
    assert hist.sum() == 2000
    assert len(hist) % 2 == 1
    np.testing.assert_allclose(np.diff(edges), 2 * np.abs(a).max() / 101, rtol=1e-9)
    assert th >= np.abs(b).max()
    assert lo == min(a.min(), b.min())
    assert hi == max(a.max(), b.max())
    first = np.abs(a).max()
    direct, _ = np.histogram(a, bins=101, range=(-first, first))
    k = (len(hist) - 101) // 2
    assert (hist[k : k + 101] >= direct).all()


def test_naive_ranges_are_min_and_max_over_batches() -> None:
    batches = [{"x": np.array([0.5, -2.0])}, {"x": np.array([3.0, 1.0])}]
    assert _calibration.naive_ranges(batches) == {"x": (-2.0, 3.0)}
