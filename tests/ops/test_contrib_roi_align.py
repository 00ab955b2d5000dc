"""ROIAlign: a value by hand, the zero roi gradient, and its errors."""

from __future__ import annotations

import numpy as np
import pytest

import nnvmpy as nv


def _ramp() -> np.ndarray:
    """data[0, 0, y, x] = 2x + 3y: bilinear sampling of it is exact."""
    y, x = np.mgrid[0:5, 0:7]
    return (2.0 * x + 3.0 * y).reshape(1, 1, 5, 7)


def test_bins_of_a_linear_map_average_to_their_centres() -> None:
    rois = nv.nd.array([[0, 1, 1, 5, 3]])
    out = nv.nd.contrib.ROIAlign(
        nv.nd.array(_ramp()), rois, pooled_size=(1, 2), spatial_scale=1.0, sample_ratio=2
    )
    np.testing.assert_allclose(out.asnumpy().ravel(), [2 * 2 + 3 * 2, 2 * 4 + 3 * 2], rtol=1e-6)


def test_negative_batch_index_gives_zeros_and_rois_get_no_gradient() -> None:
    data = nv.nd.array(_ramp())
    rois = nv.nd.array([[-1, 1, 1, 5, 3], [0, 0, 0, 2, 2]])
    data.attach_grad()
    rois.attach_grad()
    with nv.autograd.record():
        out = nv.nd.contrib.ROIAlign(data, rois, pooled_size=(2, 2), spatial_scale=1.0)
    out.backward()
    assert not out.asnumpy()[0].any()
    assert not rois.grad.asnumpy().any()
    np.testing.assert_allclose(data.grad.asnumpy().sum(), 4.0)  # 4 bins, each spreads 1


def test_errors_name_the_argument() -> None:
    data = nv.nd.ones((1, 6, 4, 4))
    with pytest.raises(nv.NNVMError, match="rois"):
        nv.nd.contrib.ROIAlign(data, nv.nd.ones((2, 4)), pooled_size=(2, 2), spatial_scale=1.0)
    with pytest.raises(nv.NNVMError, match="pooled_size"):
        nv.nd.contrib.ROIAlign(data, nv.nd.ones((2, 5)), pooled_size=(2,), spatial_scale=1.0)
    with pytest.raises(nv.NNVMError, match="multiple of pooled height x width = 4"):
        nv.nd.contrib.ROIAlign(
            data, nv.nd.ones((2, 5)), pooled_size=(2, 2), spatial_scale=1.0, position_sensitive=True
        )


def test_rroi_align_at_zero_degrees_is_roi_align_and_180_flips_the_bins() -> None:
    data = nv.nd.array(np.random.default_rng(1).normal(size=(1, 2, 8, 9)))
    kw = {"pooled_size": (2, 3), "spatial_scale": 0.5}
    aligned = nv.nd.contrib.ROIAlign(data, nv.nd.array([[0, 2, 3, 12, 9]]), sample_ratio=2, **kw)
    turned = [
        nv.nd.contrib.RROIAlign(data, nv.nd.array([[0, 7, 6, 10, 6, a]]), sampling_ratio=2, **kw)
        for a in (0, 180)
    ]
    np.testing.assert_allclose(turned[0].asnumpy(), aligned.asnumpy(), rtol=1e-5, atol=1e-6)
    flipped = turned[0].asnumpy()[:, :, ::-1, ::-1]
    np.testing.assert_allclose(turned[1].asnumpy(), flipped, rtol=1e-4, atol=1e-5)
