"""ROIAlign: a value by hand, the zero roi gradient, its errors, and the kernels'
backward against their forward."""

from __future__ import annotations

import numpy as np
import op_db  # noqa: F401  (first: it loads every cases_*.py)
import pytest
from cases_contrib_roi_align import roi_align_ref

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


def _overlapping_rois(rng: np.random.Generator, n: int, batch: int, size: float) -> np.ndarray:
    """n rois over `batch` images, most of them overlapping; the first has batch index -1."""
    corner = rng.uniform(-1, size / 2, (n, 2))
    far = corner + rng.uniform(1, size, (n, 2))
    rois = np.concatenate([rng.integers(0, batch, (n, 1)), corner, far], 1)
    rois[0, 0] = -1  # zeros, no gradient
    return rois


@pytest.mark.parametrize("device", ["cpu", pytest.param("gpu", marks=pytest.mark.gpu)])
@pytest.mark.parametrize("sensitive", [False, True])
def test_backward_is_the_adjoint_of_forward_over_overlapping_rois(
    device: str, sensitive: bool
) -> None:
    """<roi_align(x), dy> == <x, dx>: the gradient kernel (CPU: one input channel per
    item; GPU: one dy element per item, adding atomically) is the exact transpose of the
    forward, with 40 rois sharing pixels; an add request adds."""
    ctx = nv.cpu() if device == "cpu" else nv.gpu(0)
    rng = np.random.default_rng(6)
    x = rng.standard_normal((2, 8, 9, 11))
    rois = _overlapping_rois(rng, 40, 2, 6.0)
    params = {"pooled_size": (2, 2), "spatial_scale": 0.9, "position_sensitive": sensitive}
    data = nv.nd.array(x, ctx=ctx, dtype=np.float64)
    data.attach_grad(grad_req="add")
    data.grad[:] = 0.5
    boxes = nv.nd.array(rois, ctx=ctx, dtype=np.float64)
    with nv.autograd.record():
        y = nv.nd.contrib.ROIAlign(data, boxes, **params)
    dy = rng.standard_normal(y.shape)
    y.backward(nv.nd.array(dy, ctx=ctx, dtype=np.float64))
    np.testing.assert_allclose(
        y.asnumpy(), roi_align_ref(x, rois, **params), rtol=1e-10, atol=1e-12
    )
    dx = data.grad.asnumpy() - 0.5
    assert abs((y.asnumpy() * dy).sum() - (x * dx).sum()) < 1e-9 * np.abs(x * dx).sum()
    np.testing.assert_array_equal(y.asnumpy()[0], 0.0)


def test_float16_computes_through_float32() -> None:
    rng = np.random.default_rng(7)
    x = rng.standard_normal((1, 3, 6, 7)).astype(np.float16)
    rois = _overlapping_rois(rng, 6, 1, 4.0)
    params = {"pooled_size": (3, 2), "spatial_scale": 0.7}
    y = nv.nd.contrib.ROIAlign(
        nv.nd.array(x, dtype=np.float16), nv.nd.array(rois, dtype=np.float16), **params
    )
    want = roi_align_ref(x.astype(np.float64), rois.astype(np.float16).astype(np.float64), **params)
    assert y.dtype == np.float16
    np.testing.assert_allclose(y.asnumpy().astype(np.float64), want, rtol=1e-2, atol=1e-2)


def _pool_with_grad(ctx, x: np.ndarray, rois: np.ndarray, **params) -> tuple[np.ndarray, ...]:
    data = nv.nd.array(x, ctx=ctx, dtype=np.float64)
    data.attach_grad()
    with nv.autograd.record():
        y = nv.nd.contrib.ROIAlign(data, nv.nd.array(rois, ctx=ctx, dtype=np.float64), **params)
    y.backward()
    return y.asnumpy(), data.grad.asnumpy()


@pytest.mark.parametrize("device", ["cpu", pytest.param("gpu", marks=pytest.mark.gpu)])
def test_nan_and_infinite_rois_pool_nothing(device: str) -> None:
    """A roi with a NaN or infinite batch index or NaN corners pools zeros and passes no
    gradient, as one with batch index -1: the kernels never make an index from them."""
    ctx = nv.cpu() if device == "cpu" else nv.gpu(0)
    x = np.random.default_rng(9).standard_normal((2, 3, 7, 8))
    good = [1, 1.5, 0.5, 5.0, 6.0]
    bad = [[np.nan, 1, 1, 4, 4], [np.inf, 1, 1, 4, 4], [0, np.nan, 1, 4, 4], [1, 1, 1, 4, np.nan]]
    params = {"pooled_size": (2, 2), "spatial_scale": 1.0, "sample_ratio": 2}
    y, grad = _pool_with_grad(ctx, x, np.array([*bad, good]), **params)
    skipped = np.array([[-1, 1, 1, 4, 4]] * len(bad) + [good])
    want_y, want_grad = _pool_with_grad(ctx, x, skipped, **params)
    np.testing.assert_array_equal(y[: len(bad)], 0.0)
    np.testing.assert_array_equal(y, want_y)
    np.testing.assert_array_equal(grad, want_grad)


def test_a_huge_roi_samples_a_capped_grid() -> None:
    """Bins of a 1e30-wide roi would take ceil(bin) samples a side, past any loop (and
    past int64, where the kernels' int() is undefined): the grid is capped at MAX_GRID,
    a NaN bin gets none; the far samples fall off the map and the bin pools zeros."""
    from nnvmpy.ops._roi_sampling import GEOMETRY, MAX_GRID
    from nnvmpy.ops.contrib_roi_align import roi_geometry
    from nnvmpy.registry import Op

    x = np.ones((1, 2, 5, 5))
    rois = np.array([[0, 0, 0, 1e30, 1e30], [0, 0, 0, 3, 3], [0, np.nan, 0, 3, 3]])
    params = {"pooled_size": (2, 2), "spatial_scale": 1.0}
    p = Op.get("_contrib_ROIAlign").parse_attrs(params).parsed
    table = roi_geometry(p, rois, (2, 2))
    grid = table[:, [GEOMETRY.index("grid_h"), GEOMETRY.index("grid_w")]]
    np.testing.assert_array_equal(grid, [[MAX_GRID, MAX_GRID], [2, 2], [2, 0]])
    y, grad = _pool_with_grad(nv.cpu(), x, rois, **params)
    np.testing.assert_array_equal(y[0], 0.0)
    np.testing.assert_allclose(y[1], 1.0)
    assert grad.sum() == pytest.approx(2 * 4)  # only the small roi's bins, each averaging 1
