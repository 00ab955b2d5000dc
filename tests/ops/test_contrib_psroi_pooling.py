"""PSROIPooling: which channel each bin reads, its errors, and the kernels' backward
against their forward."""

from __future__ import annotations

import numpy as np
import op_db  # noqa: F401  (first: it loads every cases_*.py)
import pytest
from cases_contrib_psroi_pooling import psroi_pooling_ref

import nnvmpy as nv


def test_each_bin_reads_its_own_channel_group() -> None:
    """Channel k holds the constant k: bin (ph, pw) of class c reads channel (c G + ph) G + pw."""
    data = np.broadcast_to(np.arange(8.0)[:, None, None], (8, 6, 6))[None].copy()
    rois = nv.nd.array([[0, 0, 0, 23, 23]])
    out = nv.nd.contrib.PSROIPooling(
        nv.nd.array(data), rois, spatial_scale=0.25, output_dim=2, pooled_size=2
    )
    want = np.arange(8.0).reshape(1, 2, 2, 2)
    np.testing.assert_array_equal(out.asnumpy(), want)


def test_channel_count_must_match_output_dim_and_groups() -> None:
    with pytest.raises(nv.NNVMError, match="expected output_dim x group_size"):
        nv.nd.contrib.PSROIPooling(
            nv.nd.ones((1, 9, 4, 4)),
            nv.nd.ones((1, 5)),
            spatial_scale=1.0,
            output_dim=2,
            pooled_size=2,
        )


@pytest.mark.parametrize("device", ["cpu", pytest.param("gpu", marks=pytest.mark.gpu)])
@pytest.mark.parametrize(("pooled", "group"), [(3, 3), (4, 2), (2, 3)])
def test_backward_is_the_adjoint_of_forward_over_overlapping_rois(
    device: str, pooled: int, group: int
) -> None:
    """<psroi(x), dy> == <x, dx> over 30 overlapping rois, with an add request: the
    gradient kernel (one input channel per item) is the forward's exact transpose."""
    ctx = nv.cpu() if device == "cpu" else nv.gpu(0)
    rng = np.random.default_rng(8)
    x = rng.standard_normal((2, 2 * group * group, 10, 9))
    corner = rng.uniform(-4, 20, (30, 2))
    far = corner + rng.uniform(0, 24, (30, 2))
    rois = np.concatenate([rng.integers(0, 2, (30, 1)), corner, far], 1)
    # a scale whose bin edges miss whole pixels: at an exact edge the reference's order of
    # operations may round to the other side of the ceil/floor than the op's (MXNet's)
    params = {"spatial_scale": 0.37, "output_dim": 2, "pooled_size": pooled, "group_size": group}
    data = nv.nd.array(x, ctx=ctx, dtype=np.float64)
    data.attach_grad(grad_req="add")
    data.grad[:] = 0.25
    with nv.autograd.record():
        y = nv.nd.contrib.PSROIPooling(data, nv.nd.array(rois, ctx=ctx, dtype=np.float64), **params)
    dy = rng.standard_normal(y.shape)
    y.backward(nv.nd.array(dy, ctx=ctx, dtype=np.float64))
    want = psroi_pooling_ref(x, rois, **params)
    np.testing.assert_allclose(y.asnumpy(), want, rtol=1e-10, atol=1e-12)
    dx = data.grad.asnumpy() - 0.25
    assert abs((y.asnumpy() * dy).sum() - (x * dx).sum()) < 1e-9 * np.abs(x * dx).sum()
