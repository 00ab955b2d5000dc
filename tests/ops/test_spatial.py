"""Spatial layers beyond the op table (tests/ops/cases_layers.py): sampling, grids, ROIs.

MXNet test_operator's closed-form checks (an identity affine grid gives the pixel
coordinates, a half-size zoom crops the centre, a unit flow shifts by one pixel),
gradients on every device against the CPU's and finite differences, and bad input:
named errors, after which the engine keeps working.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import numpy as np
import op_db  # noqa: F401 - imports cases_layers: importing that first is circular
import pytest
from cases_layers import bilinear_sample_ref, off_pixel_grid, roi_pooling_ref

import nnvmpy as nv
from nnvmpy.base import InferError, NNVMError, ParamError
from nnvmpy.test_utils import assert_almost_equal, check_numeric_gradient

SIMULATOR = os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"
V = nv.sym.Variable


@pytest.fixture
def dev(ctx: nv.Context) -> Iterator[nv.Context]:
    """The device; the CUDA simulator runs one kernel at a time, so it gets NaiveEngine."""
    if ctx.device_type == "gpu" and SIMULATOR:
        with nv.engine.engine_type("NaiveEngine"):
            yield ctx
    else:
        yield ctx


def run(
    sym: Any,
    ctx: nv.Context,
    args: dict[str, np.ndarray],
    dy: np.ndarray,
    req: Any = "write",
    start: dict[str, np.ndarray] | None = None,
) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Forward (training) and backward on ctx: (output, gradients)."""
    arrays = {k: nv.nd.array(v, ctx=ctx, dtype=v.dtype) for k, v in args.items()}
    grads = {
        k: nv.nd.array((start or {}).get(k, np.zeros_like(v)), ctx=ctx, dtype=v.dtype)
        for k, v in args.items()
    }
    exe = sym.bind(ctx, arrays, args_grad=grads, grad_req=req)
    out = exe.forward(is_train=True)[0].asnumpy()
    exe.backward([nv.nd.array(dy, ctx=ctx, dtype=dy.dtype)])
    return out, {k: g.asnumpy() for k, g in exe.grad_dict.items()}


def same_on_every_device(
    sym: Any, args: dict[str, np.ndarray], dev: nv.Context, req: Any = "write"
) -> None:
    """Finite differences on the CPU; on a GPU, its forward and backward equal the CPU's."""
    if dev.device_type == "cpu":
        names = [k for k in args if req == "write" or req.get(k) != "null"]
        check_numeric_gradient(sym, args, grad_nodes=names, numeric_eps=1e-6, dtype=np.float64)
        return
    out_shape = sym.infer_shape(**{k: v.shape for k, v in args.items()})[1][0]
    dy = np.random.default_rng(0).normal(size=out_shape)
    got_out, got = run(sym, dev, args, dy, req)
    want_out, want = run(sym, nv.cpu(), args, dy, req)
    assert_almost_equal(got_out, want_out, rtol=1e-10, atol=1e-12)
    for name in want:
        assert_almost_equal(got[name], want[name], rtol=1e-10, atol=1e-12, names=(name, "cpu"))


# -- GridGenerator ------------------------------------------------------------------------------


@pytest.mark.parametrize("target", [(20, 21), (4, 3), (6, 12)])
def test_identity_affine_grid_is_the_pixel_grid_and_its_gradient(dev, target) -> None:
    """MXNet's test_grid_generator: identity theta gives each pixel's coordinates."""
    h, w = target
    sym = nv.sym.GridGenerator(V("affine"), transform_type="affine", target_shape=target)
    theta = np.array([[1.0, 0, 0, 0, 1.0, 0]])
    dy = np.random.default_rng(1).normal(size=(1, 2, h, w))
    start = np.random.default_rng(2).normal(size=(1, 6))
    grid, got = run(sym, dev, {"affine": theta}, dy, "add", {"affine": start})
    ys, xs = np.meshgrid(np.arange(h), np.arange(w), indexing="ij")
    assert_almost_equal((grid[0, 0] + 1) * (w - 1) / 2, xs, rtol=1e-10, atol=1e-10)
    assert_almost_equal((grid[0, 1] + 1) * (h - 1) / 2, ys, rtol=1e-10, atol=1e-10)
    basis = np.stack([-1 + xs.ravel() * 2 / (w - 1), -1 + ys.ravel() * 2 / (h - 1), np.ones(h * w)])
    want = (dy[0].reshape(2, -1) @ basis.T).reshape(1, 6)
    assert_almost_equal(got["affine"], want + start, rtol=1e-10, atol=1e-10)


def test_unit_flow_shifts_the_grid_by_one_pixel(dev) -> None:
    h, w = 4, 6
    sym = nv.sym.GridGenerator(V("flow"), transform_type="warp")
    dy = np.random.default_rng(3).normal(size=(1, 2, h, w))
    grid, got = run(sym, dev, {"flow": np.ones((1, 2, h, w))}, dy)
    ys, xs = np.meshgrid(np.arange(h) + 1, np.arange(w) + 1, indexing="ij")
    assert_almost_equal((grid[0, 0] + 1) * (w - 1) / 2, xs, rtol=1e-10, atol=1e-10)
    assert_almost_equal((grid[0, 1] + 1) * (h - 1) / 2, ys, rtol=1e-10, atol=1e-10)
    want = np.stack([dy[0, 0] * 2 / (w - 1), dy[0, 1] * 2 / (h - 1)])[None]
    assert_almost_equal(got["flow"], want, rtol=1e-10, atol=1e-12)


# -- BilinearSampler ----------------------------------------------------------------------------


def test_bilinear_sampler_matches_mxnet_values_outside_the_image_too() -> None:
    """Values MXNet 1.9.1 gives: corners, points between pixels, points off the image."""
    data = nv.nd.array(np.arange(16.0).reshape(1, 1, 4, 4))
    grid = nv.nd.array([[[[-1.0, 1.0, 1.2, -1.5, 0.1]], [[-1.0, 1.0, 0.3, 0.0, -1.2]]]])
    out = nv.nd.BilinearSampler(data, grid).asnumpy().ravel()
    assert_almost_equal(out, [0.0, 15.0, 7.56, 1.5, 1.155], rtol=1e-5, atol=1e-5)


def test_bilinear_sampler_gradients(dev) -> None:
    rng = np.random.default_rng(4)
    data = rng.normal(size=(2, 3, 4, 5))
    grid = off_pixel_grid(rng, (2, 2, 3, 4), (4, 5))
    sym = nv.sym.BilinearSampler(V("data"), V("grid"))
    assert_almost_equal(
        nv.nd.BilinearSampler(
            nv.nd.array(data, ctx=dev, dtype=np.float64),
            nv.nd.array(grid, ctx=dev, dtype=np.float64),
        ).asnumpy(),
        bilinear_sample_ref(data, grid),
        rtol=1e-12,
        atol=1e-12,
    )
    same_on_every_device(sym, {"data": data, "grid": grid}, dev)


# -- SpatialTransformer -------------------------------------------------------------------------


@pytest.mark.parametrize(("n", "c", "h", "w"), [(1, 1, 5, 5), (2, 3, 9, 13), (3, 2, 17, 9)])
def test_half_zoom_crops_the_centre_and_routes_gradients_there(dev, n, c, h, w) -> None:
    """MXNet's test_stn: loc = [0.5, 0, 0, 0, 0.5, 0] samples the centre half, pixel for pixel."""
    target = ((h + 1) // 2, (w + 1) // 2)
    data = np.random.default_rng(5).normal(size=(n, c, h, w))
    loc = np.tile([0.5, 0, 0, 0, 0.5, 0], (n, 1))
    sym = nv.sym.SpatialTransformer(
        V("data"), V("loc"), target_shape=target, transform_type="affine", sampler_type="bilinear"
    )
    dy = np.ones((n, c, *target))
    out, got = run(sym, dev, {"data": data, "loc": loc}, dy)
    crop = (slice(None), slice(None), slice(h // 4, h - h // 4), slice(w // 4, w - w // 4))
    assert_almost_equal(out, data[crop], rtol=1e-10, atol=1e-10)
    assert_almost_equal(got["data"][crop], dy, rtol=1e-10, atol=1e-10)
    got["data"][crop] = 0
    assert not got["data"].any()


def test_spatial_transformer_gradients(dev) -> None:
    rng = np.random.default_rng(6)
    data = rng.normal(size=(2, 3, 5, 6))
    loc = np.array([[0.55, 0.05, 0.03, -0.04, 0.45, 0.02], [0.6, -0.05, -0.07, 0.03, 0.52, 0.06]])
    sym = nv.sym.SpatialTransformer(
        V("data"), V("loc"), target_shape=(3, 4), transform_type="affine", sampler_type="bilinear"
    )
    assert sym.infer_shape(data=(2, 3, 5, 6))[0] == [(2, 3, 5, 6), (2, 6)]
    same_on_every_device(sym, {"data": data, "loc": loc}, dev)


# -- ROIPooling -----------------------------------------------------------------------------------


def test_roi_pooling_mxnet_case_and_its_gradient(dev) -> None:
    """MXNet's test_roipooling rois (one of them a single pixel), gradient for data only."""
    rng = np.random.default_rng(1234)
    data = rng.permutation(4 * 3 * 12 * 8).reshape(4, 3, 12, 8) / 384.0
    rois = np.array(
        [
            [0, 1.1, 1.1, 6.2, 6.2],
            [2, 6.1, 2.1, 8.2, 11.2],
            [1, 3.1, 1.1, 5.2, 10.2],
            [0, 3, 3, 3, 3],
        ]
    )
    sym = nv.sym.ROIPooling(V("data"), V("rois"), pooled_size=(4, 4), spatial_scale=1)
    out = nv.nd.ROIPooling(
        nv.nd.array(data, ctx=dev, dtype=np.float64),
        nv.nd.array(rois, ctx=dev, dtype=np.float64),
        pooled_size=(4, 4),
        spatial_scale=1,
    )
    assert_almost_equal(out.asnumpy(), roi_pooling_ref(data, rois, (4, 4), 1.0), rtol=0, atol=0)
    same_on_every_device(sym, {"data": data, "rois": rois}, dev, {"data": "write", "rois": "null"})


def test_roi_pooling_bad_batch_index_is_named_and_the_engine_goes_on() -> None:
    data = nv.nd.ones((2, 1, 4, 4))
    bad = nv.nd.ROIPooling(
        data, nv.nd.array([[0, 0, 0, 1, 1], [2, 0, 0, 1, 1.0]]), pooled_size=(1, 1), spatial_scale=1
    )
    with pytest.raises(NNVMError, match=r"rois\[1\] has batch index 2"):
        bad.asnumpy()
    with pytest.raises(InferError, match=r"\(R, 5\)"):
        nv.nd.ROIPooling(data, nv.nd.ones((2, 4)), pooled_size=(1, 1), spatial_scale=1)
    ok = nv.nd.ROIPooling(
        data, nv.nd.array([[1, 0, 0, 3, 3.0]]), pooled_size=(2, 2), spatial_scale=1
    )
    assert ok.asnumpy().tolist() == [[[[1.0, 1.0], [1.0, 1.0]]]]


# -- Correlation ----------------------------------------------------------------------------------


@pytest.mark.parametrize("mult", [True, False])
def test_correlation_gradients(dev, mult) -> None:
    rng = np.random.default_rng(7)
    a, b = rng.random((2, 2, 5, 6)), rng.random((2, 2, 5, 6))
    sym = nv.sym.Correlation(
        V("a"), V("b"), kernel_size=3, max_displacement=2, stride2=2, pad_size=2, is_multiply=mult
    )
    same_on_every_device(sym, {"a": a, "b": b}, dev)


def test_correlation_shapes_types_and_bad_settings() -> None:
    sym = nv.sym.Correlation(V("a"), V("b"), kernel_size=1, max_displacement=1, stride1=2)
    assert sym.infer_shape(a=(1, 1, 9, 9))[1] == [(1, 9, 4, 4)]  # ceil((9 - 2) / 2): as MXNet
    assert sym.infer_type(b=np.float16)[0] == [np.float16, np.float16]
    with pytest.raises(InferError, match="do not fit"):
        nv.nd.Correlation(nv.nd.ones((1, 1, 28, 28)), nv.nd.ones((1, 1, 28, 28)), kernel_size=28)
    with pytest.raises(ParamError, match="stride1"):
        nv.nd.Correlation(nv.nd.ones((1, 1, 8, 8)), nv.nd.ones((1, 1, 8, 8)), stride1=0)
    out = nv.nd.Correlation(nv.nd.ones((1, 1, 28, 28)), nv.nd.ones((1, 1, 28, 28)), kernel_size=9)
    assert out.shape == (1, 9, 18, 18)
    assert_almost_equal(out.asnumpy()[0, 4], np.ones((18, 18)), rtol=1e-6, atol=1e-6)


# -- bad parameters -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("make", "error", "match"),
    [
        (lambda: nv.sym.GridGenerator(V("a"), transform_type="affine"), ParamError, "target_shape"),
        (
            lambda: nv.sym.GridGenerator(
                V("a"), transform_type="affine", target_shape=(3, 3)
            ).infer_shape(a=(2, 5)),
            InferError,
            r"\(N, 6\)",
        ),
        (
            lambda: nv.sym.GridGenerator(V("a"), transform_type="warp").infer_shape(a=(2, 3, 4, 4)),
            InferError,
            "flow",
        ),
        (
            lambda: nv.sym.BilinearSampler(V("d"), V("g")).infer_shape(
                d=(2, 3, 4, 4), g=(2, 3, 4, 4)
            ),
            InferError,
            "grid",
        ),
        (
            lambda: nv.sym.BilinearSampler(V("d"), V("g")).infer_shape(
                d=(2, 3, 4, 4), g=(1, 2, 4, 4)
            ),
            InferError,
            "BilinearSampler",
        ),
        (
            lambda: nv.sym.SpatialTransformer(
                V("d"), V("l"), transform_type="affine", sampler_type="bilinear"
            ),
            ParamError,
            "target_shape",
        ),
        (
            lambda: nv.sym.ROIPooling(
                V("d"), V("r"), pooled_size=(0, 2), spatial_scale=1.0
            ).infer_shape(d=(1, 1, 4, 4), r=(1, 5)),
            InferError,
            "pooled_size",
        ),
    ],
)
def test_bad_input_is_a_named_error(make, error, match) -> None:
    with pytest.raises(error, match=match):
        make()
    grid = nv.nd.GridGenerator(
        nv.nd.array([[1.0, 0, 0, 0, 1, 0]]), transform_type="affine", target_shape=(2, 2)
    )
    assert_almost_equal(grid.asnumpy()[0, 0], [[-1, 1], [-1, 1]], rtol=0, atol=1e-7)
