"""The deformable convolution kernels (ops/_deformable.py) against vectorised NumPy
(deformable_numpy.py): the forward and every gradient of DCNv1 and DCNv2 over strides,
dilations, groups and deformable groups, offsets that cross the border or land on whole
pixels, batches split into chunks of one image, write and add requests; CPU and GPU."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from deformable_numpy import deformable_forward_np, deformable_grads_np

import nnvmpy as nv
from nnvmpy.ops._deformable import DeformShape


def _geometry(n, c, hw, f, kernel, stride, dilate, pad, groups, deformable_groups):
    return {
        "n": n, "c": c, "hw": hw, "f": f, "kernel": kernel, "stride": stride,
        "dilate": dilate, "pad": pad, "num_group": groups,
        "num_deformable_group": deformable_groups,
    }  # fmt: skip


GEOMETRIES = {
    "3x3": _geometry(2, 4, (7, 6), 6, (3, 3), (1, 1), (1, 1), (1, 1), 1, 1),
    "strided-groups": _geometry(3, 6, (9, 8), 4, (3, 2), (2, 1), (1, 2), (1, 0), 2, 3),
    "1x1": _geometry(1, 4, (5, 5), 2, (1, 1), (1, 1), (1, 1), (0, 0), 2, 2),
    "small": _geometry(2, 4, (5, 4), 2, (2, 2), (2, 1), (1, 2), (1, 0), 2, 2),  # the GPU's
}
CASES = [
    *(pytest.param("cpu", name, id=f"cpu-{name}") for name in GEOMETRIES),
    pytest.param("gpu", "small", id="gpu-small", marks=pytest.mark.gpu),
]


def _out_hw(g: dict[str, Any]) -> tuple[int, int]:
    return tuple(  # type: ignore[return-value]
        (size + 2 * p - d * (k - 1) - 1) // s + 1
        for size, k, s, d, p in zip(g["hw"], g["kernel"], g["stride"], g["dilate"], g["pad"])
    )


def _arrays(g: dict[str, Any], rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Inputs with offsets up to 3 pixels (many samples leave the map, some by exactly one
    pixel) and every third offset a whole number (the floor's edge case)."""
    taps = g["num_deformable_group"] * g["kernel"][0] * g["kernel"][1]
    oh, ow = _out_hw(g)
    offset = rng.uniform(-3, 3, (g["n"], 2 * taps, oh, ow))
    offset[..., ::3] = np.round(offset[..., ::3])
    return {
        "data": rng.standard_normal((g["n"], g["c"], *g["hw"])),
        "offset": offset,
        "mask": rng.uniform(-0.5, 1.5, (g["n"], taps, oh, ow)),
        "weight": rng.standard_normal((g["f"], g["c"] // g["num_group"], *g["kernel"])),
        "bias": rng.standard_normal(g["f"]),
    }


def _params(g: dict[str, Any]) -> dict[str, Any]:
    keys = ("kernel", "stride", "dilate", "pad", "num_group", "num_deformable_group")
    return {"num_filter": g["f"], **{k: g[k] for k in keys}}


def _run(
    g: dict[str, Any], modulated: bool, dtype: Any, ctx: Any, start: float, **extra: Any
) -> tuple[dict[str, np.ndarray], list[np.ndarray], np.ndarray, np.ndarray]:
    """(inputs, gradients less `start`, output, dy): gradients accumulate onto `start`
    (an add request) or replace it (start 0, a write request)."""
    host = _arrays(g, np.random.default_rng(sum(map(ord, str(g)))))
    names = ["data", "offset", *(["mask"] if modulated else []), "weight", "bias"]
    req = "add" if start else "write"
    arrays = {k: nv.nd.array(host[k], ctx=ctx, dtype=dtype) for k in names}
    for a in arrays.values():
        a.attach_grad(grad_req=req)
        a.grad[:] = start
    op = (
        nv.nd.contrib.ModulatedDeformableConvolution
        if modulated
        else nv.nd.contrib.DeformableConvolution
    )
    with nv.autograd.record():
        y = op(*arrays.values(), **_params(g), **extra)
    dy = np.random.default_rng(1).standard_normal(y.shape)
    y.backward(nv.nd.array(dy, ctx=ctx, dtype=dtype))
    grads = [arrays[k].grad.asnumpy().astype(np.float64) - start for k in names]
    cast = {k: host[k].astype(dtype).astype(np.float64) for k in names}
    return cast, grads, y.asnumpy().astype(np.float64), dy.astype(dtype).astype(np.float64)


def _reference(g: dict[str, Any], x: dict[str, np.ndarray], dy: np.ndarray, modulated: bool):
    p = SimpleNamespace(**_params(g))
    mask = x["mask"] if modulated else None
    args = (x["data"], x["offset"], mask, x["weight"], x["bias"])
    return deformable_forward_np(p, *args)[0], deformable_grads_np(p, dy, *args)


@pytest.mark.parametrize("modulated", [False, True], ids=["v1", "v2"])
@pytest.mark.parametrize(("device", "name"), CASES)
def test_forward_and_gradients_match_numpy(device: str, modulated: bool, name: str) -> None:
    """float64, add requests, one image per chunk (workspace=0)."""
    ctx = nv.cpu() if device == "cpu" else nv.gpu(0)
    g = GEOMETRIES[name]
    x, grads, y, dy = _run(g, modulated, np.float64, ctx, 0.5, workspace=0)
    want_y, want_grads = _reference(g, x, dy, modulated)
    np.testing.assert_allclose(y, want_y, rtol=1e-10, atol=1e-10)
    assert len(grads) == len(want_grads)
    for got, want in zip(grads, want_grads):
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("workspace", [0, 1024], ids=["chunked", "one-chunk"])
@pytest.mark.parametrize("modulated", [False, True], ids=["v1", "v2"])
def test_float32_write_requests(modulated: bool, workspace: int) -> None:
    """Write requests, the batch of 3 in one chunk or three (the weight's gradient is
    written by the first and added to by the others)."""
    g = GEOMETRIES["strided-groups"]
    x, grads, y, dy = _run(g, modulated, np.float32, nv.cpu(), 0.0, workspace=workspace)
    want_y, want_grads = _reference(g, x, dy, modulated)
    np.testing.assert_allclose(y, want_y, rtol=1e-4, atol=1e-4)
    for got, want in zip(grads, want_grads):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_float16_computes_through_float32() -> None:
    g = GEOMETRIES["3x3"]
    x, grads, y, dy = _run(g, True, np.float16, nv.cpu(), 0.0)
    want_y, want_grads = _reference(g, x, dy, True)
    np.testing.assert_allclose(y, want_y, rtol=2e-2, atol=5e-2)
    np.testing.assert_allclose(grads[0], want_grads[0], rtol=2e-2, atol=5e-2)


def test_no_bias_and_null_requests() -> None:
    """Only the offset's gradient asked for (the others kNullOp): it matches, nothing else
    is touched."""
    g = GEOMETRIES["3x3"]
    host = _arrays(g, np.random.default_rng(3))
    data, offset, weight = (
        nv.nd.array(host[k], dtype=np.float64) for k in ("data", "offset", "weight")
    )
    offset.attach_grad()
    with nv.autograd.record():
        y = nv.nd.contrib.DeformableConvolution(data, offset, weight, no_bias=True, **_params(g))
    y.backward()
    p = SimpleNamespace(**_params(g))
    want = deformable_grads_np(
        p, np.ones(y.shape), host["data"], host["offset"], None, host["weight"], None
    )
    np.testing.assert_allclose(offset.grad.asnumpy(), want[1], rtol=1e-9, atol=1e-9)
    assert data.grad is None
    assert weight.grad is None


@pytest.mark.parametrize("block", [2, 4, 6])
def test_data_gradient_over_channel_blocks(monkeypatch: pytest.MonkeyPatch, block: int) -> None:
    """The CPU's data-gradient items take several channels (a block per item, a last
    one short when the block does not divide the group's channels: 4 of 6)."""
    monkeypatch.setattr(DeformShape, "channel_block", lambda self, images: block)
    g = GEOMETRIES["strided-groups"] | {"num_deformable_group": 1}
    x, grads, _, dy = _run(g, True, np.float64, nv.cpu(), 0.0)
    _, want_grads = _reference(g, x, dy, True)
    np.testing.assert_allclose(grads[0], want_grads[0], rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize(("device", "name"), CASES)
def test_nan_offsets_sample_nothing(device: str, name: str) -> None:
    """A NaN offset leaves its tap off the map (0, no gradient), as one far outside
    does; no index is made from it."""
    g = GEOMETRIES[name]
    ctx = nv.cpu() if device == "cpu" else nv.gpu(0)
    host = _arrays(g, np.random.default_rng(8))
    far = host["offset"].copy()
    far.reshape(-1)[::7] = 1e6
    nan = far.copy()
    nan[far == 1e6] = np.nan
    runs = []
    for offset in (far, nan):
        arrays = [nv.nd.array(a, ctx=ctx, dtype=np.float64)
                  for a in (host["data"], offset, host["mask"], host["weight"])]  # fmt: skip
        for a in arrays:
            a.attach_grad()
        with nv.autograd.record():
            y = nv.nd.contrib.ModulatedDeformableConvolution(*arrays, no_bias=True, **_params(g))
        y.backward()
        runs.append([y.asnumpy(), *(a.grad.asnumpy() for a in arrays)])
    for got, want in zip(runs[1], runs[0]):
        np.testing.assert_array_equal(got, want)
