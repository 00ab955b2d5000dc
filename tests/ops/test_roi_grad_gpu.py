"""The roi ops' GPU backward (one work item per dy element, atomic adds) against the CPU's
(one item per input plane, no atomics).

ROIAlign, RROIAlign, ROIPooling and PSROIPooling: several images, overlapping and
duplicated rois (their items add into the same pixels), rois partly off the map and one
with batch index -1, every write request, float16/32/64. FCompute<gpu> is called
directly (as the executor would) so that each request can be chosen; the reference is
the CPU's FCompute in float64 on the same (rounded) values. Atomics add in no fixed
order, so the GPU agrees to rounding: float64 tightly, float16 (summed in a float32
copy) to its last bit or so.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from fcompute_call import run_fcompute
from launch_spies import spy_item_launches
from roi_cases import overlapping_rois

from nnvmpy.ops import _roi_sampling_cuda, contrib_psroi_pooling
from nnvmpy.ops.nn import roi_pooling

pytestmark = pytest.mark.gpu

REQS = ("write", "add", "null")
DTYPES = (np.float64, np.float32, np.float16)
TOL = {np.float64: 1e-12, np.float32: 1e-5, np.float16: 2e-3}


def _compute(name: str, params: dict, device: str, inputs: list, outputs: list, req: str) -> list:
    """FCompute<device> of op `name` with request `req` for every output; host results."""
    return run_fcompute(name, params, inputs, outputs, [req] * len(outputs), device)


@pytest.fixture
def launches(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The item counts of the GPU backward kernels' launches."""
    return spy_item_launches(
        monkeypatch,
        _roi_sampling_cuda.roi_backward_bins,
        roi_pooling._roi_grad_cells,
        contrib_psroi_pooling._psroi_backward_bins,
    )


def _check_backward(
    name: str, params: dict, inputs: list, shapes: list, dtype: Any, launches: list[int]
) -> None:
    """The GPU backward of `name` (inputs (dy, ...); outputs (d data, d rois) of `shapes`)
    under each request equals the CPU's in float64, added to or leaving alone the start
    values."""
    rng = np.random.default_rng(3)
    typed = [a.astype(dtype) if a.dtype.kind == "f" else a for a in inputs]
    exact = [a.astype(np.float64) if a.dtype.kind == "f" else a for a in typed]
    starts = [rng.standard_normal(s).astype(dtype) for s in shapes]
    zeros = [np.zeros(s.shape) for s in starts]
    dx_want, _ = _compute(name, params, "cpu", exact, zeros, "write")
    tol = TOL[dtype] * max(1.0, float(np.abs(dx_want).max()))
    for req in REQS:
        launches.clear()
        dx, drois = _compute(name, params, "gpu", typed, starts, req)
        assert dx.dtype == dtype
        if req == "null":
            assert launches == []
            np.testing.assert_array_equal(dx, starts[0])
            np.testing.assert_array_equal(drois, starts[1])
            continue
        assert launches == [inputs[0].size], "one work item per dy element"
        base = starts[0].astype(np.float64) if req == "add" else 0.0
        want = base + dx_want
        np.testing.assert_allclose(dx.astype(np.float64), want, rtol=TOL[dtype], atol=tol)
        np.testing.assert_array_equal(drois, starts[1] if req == "add" else 0.0)


# (sample_ratio, aligned, position_sensitive)
ALIGN_CASES = [(0, False, False), (2, True, False), (2, False, True), (0, True, True)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("ratio", "aligned", "sensitive"), ALIGN_CASES)
def test_roi_align(dtype: Any, ratio: int, aligned: bool, sensitive: bool, launches) -> None:
    rng = np.random.default_rng(11)
    data = rng.standard_normal((3, 8, 6, 7))
    rois = overlapping_rois(rng, 9, 3, 8.0)
    params = {"pooled_size": (2, 2), "spatial_scale": 0.8, "sample_ratio": ratio,
              "aligned": aligned, "position_sensitive": sensitive}  # fmt: skip
    c_out = 2 if sensitive else 8
    dy = rng.standard_normal((9, c_out, 2, 2))
    _check_backward(
        "_backward_contrib_ROIAlign",
        params,
        [dy, data, rois],
        [data.shape, rois.shape],
        dtype,
        launches,
    )


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("ratio", [0, 2])
def test_rroi_align(dtype: Any, ratio: int, launches) -> None:
    rng = np.random.default_rng(12)
    data = rng.standard_normal((2, 3, 6, 7))
    centre = rng.uniform(-1, 9, (8, 2))
    size = rng.uniform(0.5, 7, (8, 2))
    angle = rng.uniform(-90, 180, (8, 1))
    rois = np.concatenate([rng.integers(0, 2, (8, 1)), centre, size, angle], 1)
    rois[2] = rois[1]
    rois[0, 0] = -1
    params = {"pooled_size": (2, 3), "spatial_scale": 0.9, "sampling_ratio": ratio}
    dy = rng.standard_normal((8, 3, 2, 3))
    _check_backward(
        "_backward_contrib_RROIAlign",
        params,
        [dy, data, rois],
        [data.shape, rois.shape],
        dtype,
        launches,
    )


@pytest.mark.parametrize("dtype", DTYPES)
def test_roi_pooling(dtype: Any, launches) -> None:
    """Bins of overlapping rois share their maximum's pixel; bins off the map are empty
    (maxidx -1) and add nothing."""
    rng = np.random.default_rng(13)
    data = rng.permutation(2 * 3 * 7 * 8).reshape(2, 3, 7, 8) / 336.0
    rois = overlapping_rois(rng, 9, 2, 9.0)
    rois[0, 0] = 1  # ROIPooling's batch indices must be in range
    params = {"pooled_size": (3, 2), "spatial_scale": 0.9}
    shapes = [(9, 3, 3, 2)] * 2
    outs = [np.zeros(shapes[0]), np.zeros(shapes[1], np.int32)]
    _, maxidx = _compute("ROIPooling", params, "cpu", [data, rois], outs, "write")
    assert (maxidx < 0).any(), "some bins lie off the map"
    dy = rng.standard_normal(shapes[0])
    _check_backward(
        "_backward_ROIPooling",
        params,
        [dy, rois, maxidx],
        [data.shape, rois.shape],
        dtype,
        launches,
    )


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("pooled", "group"), [(3, 3), (2, 3)])
def test_psroi_pooling(dtype: Any, pooled: int, group: int, launches) -> None:
    rng = np.random.default_rng(14)
    data = rng.standard_normal((2, 2 * group * group, 6, 7))
    rois = overlapping_rois(rng, 7, 2, 9.0)
    params = {"spatial_scale": 0.7, "output_dim": 2, "pooled_size": pooled,
              "group_size": group}  # fmt: skip
    dy = rng.standard_normal((7, 2, pooled, pooled))
    _check_backward(
        "_backward_contrib_PSROIPooling",
        params,
        [dy, data, rois],
        [data.shape, rois.shape],
        dtype,
        launches,
    )
