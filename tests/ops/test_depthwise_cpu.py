"""CPU depthwise Convolution (_depthwise_cpu.py): forward, data and weight gradients.

Checked against a float64 NumPy reference written tap by tap (a strided slice of the
padded input per tap), for 3x3 stride 1 and 2 with and without padding, odd plane
sizes, one-column planes, channel multipliers, other windows and dilations, req 'add',
float32 and float64.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy.attrs import FResourceRequest, fcompute
from nnvmpy.base import OpReqType, cpu
from nnvmpy.registry import Op
from nnvmpy.test_utils import _run_compute

# (data shape, channel multiplier, params): 2-D windows
CASES = [
    ((2, 3, 7, 9), 1, {"kernel": (3, 3), "pad": (1, 1)}),
    ((2, 3, 7, 9), 1, {"kernel": (3, 3)}),
    ((2, 3, 7, 9), 1, {"kernel": (3, 3), "stride": (2, 2), "pad": (1, 1)}),
    ((2, 3, 7, 9), 1, {"kernel": (3, 3), "stride": (2, 2)}),
    ((2, 3, 8, 6), 1, {"kernel": (3, 3), "stride": (2, 2), "pad": (1, 1)}),
    ((3, 2, 5, 1), 1, {"kernel": (3, 3), "pad": (1, 1)}),
    ((3, 2, 5, 1), 1, {"kernel": (3, 3), "stride": (2, 2), "pad": (1, 1)}),
    ((2, 3, 7, 9), 2, {"kernel": (3, 3), "stride": (2, 1), "pad": (1, 0)}),
    ((2, 2, 9, 8), 1, {"kernel": (3, 3), "pad": (2, 2), "dilate": (2, 2)}),
    ((2, 2, 9, 10), 3, {"kernel": (5, 3), "stride": (1, 2), "pad": (2, 1), "dilate": (1, 2)}),
    ((2, 3, 6, 11), 1, {"kernel": (2, 4), "stride": (3, 1), "pad": (0, 2)}),
    ((1, 2, 4, 4), 1, {"kernel": (1, 1), "stride": (2, 3), "pad": (1, 0)}),
    ((2, 2, 4, 5), 1, {"kernel": (3, 3), "pad": (3, 2)}),  # pads wider than the window
    ((2, 2, 9, 11), 1, {"kernel": (3, 3), "stride": (2, 2), "pad": (2, 2)}),
    ((2, 2, 7, 10), 1, {"kernel": (3, 2), "stride": (2, 3), "pad": (1, 1)}),
    ((2, 2, 1, 12), 2, {"kernel": (1, 3), "stride": (1, 2), "pad": (0, 1)}),  # 1-D
    ((2, 2, 6, 7), 2, {"kernel": (3, 3), "pad": (1, 1), "dilate": (1, 2)}),
]
IDS = [
    "3x3-s1-p1", "3x3-s1-p0", "3x3-s2-p1", "3x3-s2-p0", "3x3-s2-p1-even", "col-s1",
    "col-s2", "mult2", "dilate2", "5x3-mult3", "2x4-s3", "1x1-s2x3", "wide-pad", "s2-p2",
    "s2x3", "1d", "mult2-s1-dilate",
]  # fmt: skip


def _window(params: dict[str, Any], shape: tuple[int, ...]) -> tuple[int, ...]:
    kh, kw = params["kernel"]
    sh, sw = params.get("stride", (1, 1))
    ph, pw = params.get("pad", (0, 0))
    dh, dw = params.get("dilate", (1, 1))
    ho = (shape[2] + 2 * ph - (kh - 1) * dh - 1) // sh + 1
    wo = (shape[3] + 2 * pw - (kw - 1) * dw - 1) // sw + 1
    return kh, kw, sh, sw, ph, pw, dh, dw, ho, wo


def _taps(shape: tuple[int, ...], params: dict[str, Any]) -> Any:
    """(i, j, rows, cols): the padded-input slices tap (i, j) reads for all outputs."""
    kh, kw, sh, sw, _, _, dh, dw, ho, wo = _window(params, shape)
    for i in range(kh):
        for j in range(kw):
            rows = slice(i * dh, i * dh + sh * (ho - 1) + 1, sh)
            cols = slice(j * dw, j * dw + sw * (wo - 1) + 1, sw)
            yield i, j, rows, cols


def reference(
    x: np.ndarray, w: np.ndarray, b: np.ndarray | None, dy: np.ndarray, mult: int, **p: Any
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(y, dx, dw) of the depthwise convolution, in float64, one tap at a time."""
    x, w, dy = x.astype(np.float64), w.astype(np.float64), dy.astype(np.float64)
    n, c, height, width = x.shape
    _, _, _, _, ph, pw, _, _, ho, wo = _window(p, x.shape)
    f = c * mult
    xp = np.zeros((n, c, height + 2 * ph, width + 2 * pw))
    xp[:, :, ph : ph + height, pw : pw + width] = x
    xf = np.repeat(xp, mult, axis=1)  # filter f reads channel f // mult
    y = np.zeros((n, f, ho, wo))
    dxp = np.zeros_like(xf)
    dwt = np.zeros_like(w)
    with np.errstate(invalid="ignore"):  # inf * 0 in the non-finite test
        for i, j, rows, cols in _taps(x.shape, p):
            tap = w[:, 0, i, j][None, :, None, None]
            y += tap * xf[:, :, rows, cols]
            dxp[:, :, rows, cols] += tap * dy
            dwt[:, 0, i, j] = (dy * xf[:, :, rows, cols]).sum(axis=(0, 2, 3))
    if b is not None:
        y += b[None, :, None, None]
    dx = dxp.reshape(n, c, mult, *dxp.shape[2:]).sum(axis=2)
    return y, dx[:, :, ph : ph + height, pw : pw + width], dwt


def _params(shape: tuple[int, ...], mult: int, p: dict[str, Any], bias: bool) -> dict[str, Any]:
    return {**p, "num_filter": shape[1] * mult, "num_group": shape[1], "no_bias": not bias}


def _forward(params, inputs, req="write", outputs=None):  # type: ignore[no-untyped-def]
    op = Op.get("Convolution")
    attrs = op.parse_attrs(params)
    from nnvmpy.imperative import infer_outputs

    shapes, dtypes = infer_outputs(attrs, [a.shape for a in inputs], [a.dtype for a in inputs], 1)
    return _run_compute(op, attrs, inputs, shapes, dtypes, OpReqType.parse(req), outputs)[0]


def _backward(params, x, w, dy, req="write", outputs=None):  # type: ignore[no-untyped-def]
    """[dx, dw] of _backward_Convolution's FCompute<cpu> (no bias); req: one for both
    or a pair."""
    from nnvmpy.engine import RunContext
    from nnvmpy.resource import OpContext, get_resource

    bwd = Op.get("_backward_Convolution")
    attrs = bwd.parse_attrs(params)
    reqs = [OpReqType.parse(r) for r in ([req] * 2 if isinstance(req, str) else req)]
    if outputs is None:
        outputs = [np.zeros(x.shape, x.dtype), np.zeros(w.shape, w.dtype)]
    requests = bwd.get_attr(FResourceRequest)
    resources = [get_resource(k, cpu())[0] for k in (requests(attrs) if requests else [])]
    ctx = OpContext(False, RunContext(cpu(), None), resources)
    bwd.get_attr(fcompute("cpu"))(attrs, ctx, [dy, x, w], reqs, outputs)
    return outputs


def _data(shape, mult, params, dtype, seed=0):  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(seed)
    c = shape[1]
    x = rng.standard_normal(shape).astype(dtype)
    w = rng.standard_normal((c * mult, 1, *params["kernel"])).astype(dtype)
    b = rng.standard_normal(c * mult).astype(dtype)
    _, _, _, _, _, _, _, _, ho, wo = _window(params, shape)
    dy = rng.standard_normal((shape[0], c * mult, ho, wo)).astype(dtype)
    return x, w, b, dy


def _tol(dtype: Any) -> dict[str, float]:
    return {"rtol": 1e-12, "atol": 1e-12} if dtype == np.float64 else {"rtol": 2e-5, "atol": 2e-5}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(("shape", "mult", "p"), CASES, ids=IDS)
def test_depthwise_matches_the_reference(shape, mult, p, dtype) -> None:  # type: ignore[no-untyped-def]
    x, w, b, dy = _data(shape, mult, p, dtype)
    y_ref, dx_ref, dw_ref = reference(x, w, b, dy, mult, **p)
    params = _params(shape, mult, p, bias=True)
    y = _forward(params, [x, w, b])
    assert y.dtype == dtype
    np.testing.assert_allclose(y, y_ref, **_tol(dtype))
    dx, dwt = _backward(_params(shape, mult, p, bias=False), x, w, dy)
    np.testing.assert_allclose(dx, dx_ref, **_tol(dtype))
    np.testing.assert_allclose(dwt, dw_ref, **_tol(dtype))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(
    ("shape", "mult", "p"), [CASES[0], CASES[2], CASES[9]], ids=["3x3-s1", "3x3-s2", "5x3"]
)
def test_depthwise_req_add_and_null(shape, mult, p, dtype) -> None:  # type: ignore[no-untyped-def]
    x, w, _, dy = _data(shape, mult, p, dtype, seed=1)
    y_ref, dx_ref, dw_ref = reference(x, w, None, dy, mult, **p)
    params = _params(shape, mult, p, bias=False)
    rng = np.random.default_rng(2)
    old = [rng.standard_normal(a.shape).astype(dtype) for a in (y_ref, x, w)]
    y = _forward(params, [x, w], "add", [old[0].copy()])
    np.testing.assert_allclose(y, old[0] + y_ref, **_tol(dtype))
    dx, dwt = _backward(params, x, w, dy, "add", [old[1].copy(), old[2].copy()])
    np.testing.assert_allclose(dx, old[1] + dx_ref, **_tol(dtype))
    np.testing.assert_allclose(dwt, old[2] + dw_ref, **_tol(dtype))
    # null leaves its output alone; the other gradient is still written
    dx, dwt = _backward(params, x, w, dy, ["null", "write"], [old[1].copy(), old[2].copy()])
    np.testing.assert_array_equal(dx, old[1])
    np.testing.assert_allclose(dwt, dw_ref, **_tol(dtype))
    dx, dwt = _backward(params, x, w, dy, ["write", "null"], [old[1].copy(), old[2].copy()])
    np.testing.assert_allclose(dx, dx_ref, **_tol(dtype))
    np.testing.assert_array_equal(dwt, old[2])


def test_depthwise_float32_weight_gradient_of_a_large_batch() -> None:
    """Long sums (32 images x 28x28 positions per weight) keep float32 accuracy."""
    shape, p = (32, 4, 28, 28), {"kernel": (3, 3), "pad": (1, 1)}
    x, w, _, dy = _data(shape, 1, p, np.float32, seed=3)
    x += 3  # a mean: the terms do not cancel on average
    _, dx_ref, dw_ref = reference(x, w, None, dy, 1, **p)
    dx, dwt = _backward(_params(shape, 1, p, bias=False), x, w, dy)
    np.testing.assert_allclose(dx, dx_ref, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(dwt, dw_ref, rtol=1e-5, atol=1e-3)


@pytest.mark.parametrize(
    ("shape", "mult", "p"), [CASES[2], CASES[9], CASES[5]], ids=["3x3", "5x3", "col"]
)
def test_depthwise_kernels_do_not_depend_on_the_task_ranges(shape, mult, p) -> None:  # type: ignore[no-untyped-def]
    from nnvmpy.ops.nn import _depthwise_cpu as dwk

    x, w, b, dy = _data(shape, mult, p, np.float32, seed=4)
    win = _window(p, shape)
    geo = dwk.geometry(shape[2], shape[3], *win)
    results = []
    for parts in (1, 2, 5):
        y = np.full(dy.shape, np.nan, np.float32)
        dx = np.full(x.shape, np.nan, np.float32)
        dwt = np.full(w.shape, np.nan, np.float32)
        dwk.dw_forward(x, w, b, y, True, False, *win, *geo, parts)
        flat = [a.reshape(-1) for a in (dy, w, x, dx, dwt)]
        dims = (shape[0], shape[1], shape[1] * mult, shape[2], shape[3])
        dwk.dw_backward(*flat, *dims, True, False, True, False, *win, *geo, parts)
        results.append((y, dx, dwt))
    for got in results[1:]:
        for a, c in zip(results[0], got):
            np.testing.assert_array_equal(a, c)
    y_ref, dx_ref, dw_ref = reference(x, w, b, dy, mult, **p)
    for a, ref in zip(results[0], (y_ref, dx_ref, dw_ref)):
        np.testing.assert_allclose(a, ref, rtol=2e-5, atol=2e-5)


def test_depthwise_through_autograd() -> None:
    """The imperative path (nd.Convolution under autograd.record) reaches the same kernels."""
    shape, p = (2, 4, 9, 7), {"kernel": (3, 3), "stride": (2, 2), "pad": (1, 1)}
    x, w, _, _ = _data(shape, 1, p, np.float32, seed=5)
    xn, wn = nv.nd.array(x), nv.nd.array(w)
    xn.attach_grad()
    wn.attach_grad()
    with nv.autograd.record():
        y = nv.nd.Convolution(xn, wn, num_filter=4, num_group=4, no_bias=True, **p)
    y.backward()
    y_ref, dx_ref, dw_ref = reference(x, w, None, np.ones(y.shape, np.float32), 1, **p)
    np.testing.assert_allclose(y.asnumpy(), y_ref, rtol=2e-5, atol=2e-5)
    np.testing.assert_allclose(xn.grad.asnumpy(), dx_ref, rtol=2e-5, atol=2e-5)
    np.testing.assert_allclose(wn.grad.asnumpy(), dw_ref, rtol=2e-5, atol=2e-5)


@pytest.mark.parametrize("stride", [1, 2])
def test_depthwise_non_finite_values_stay_in_their_windows(stride: int) -> None:
    """An inf or NaN in x reaches only the weight gradients of the taps that read it, an
    inf weight only the data gradient positions its tap reaches (the whole-plane sums
    would spread them through the junk columns)."""
    shape, p = (2, 3, 7, 9), {"kernel": (3, 3), "stride": (stride, stride), "pad": (1, 1)}
    x, w, _, dy = _data(shape, 1, p, np.float64, seed=6)
    x[0, 0, 0, 0] = np.nan  # tap (2, 2) never reads it
    x[1, 1, 6, 8] = np.inf  # nor does tap (0, 0)
    w[2, 0, 0, 0] = np.inf
    _, dx_ref, dw_ref = reference(x, w, None, dy, 1, **p)
    dx, dwt = _backward(_params(shape, 1, p, bias=False), x, w, dy)
    assert np.isfinite(dw_ref[0, 0, 2, 2])
    assert np.isfinite(dw_ref[1, 0, 0, 0])
    assert np.isfinite(dx_ref[0, 2, -1, :]).any()
    np.testing.assert_allclose(dx, dx_ref, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(dwt, dw_ref, rtol=1e-12, atol=1e-12)


def test_depthwise_strided_arrays() -> None:
    """Non-contiguous inputs and outputs (the kernels take flat views) are honoured."""
    from nnvmpy.ops.nn import _conv_cpu

    shape, p = (2, 3, 7, 9), {"kernel": (3, 3), "stride": (2, 2), "pad": (1, 1)}
    x, w, b, dy = _data(shape, 1, p, np.float64, seed=7)
    y_ref, dx_ref, dw_ref = reference(x, w, b, dy, 1, **p)
    win = _conv_cpu.Window(*_window(p, shape))
    s = _conv_cpu.ConvShape(2, 3, 7, 9, 3, 3, win, 1024)

    def strided(a: np.ndarray) -> np.ndarray:  # a 5-D (N, C, 1, H, W) view, every other row
        big = np.zeros((*a.shape[:2], 1, 2 * a.shape[2], a.shape[3]), a.dtype)
        big[:, :, 0, ::2] = a
        return big[:, :, :, ::2]

    out = strided(np.zeros_like(y_ref))
    _conv_cpu.forward(s, strided(x), w[:, :, None], b, out, OpReqType.kWriteTo, None)
    np.testing.assert_allclose(out[:, :, 0], y_ref, rtol=1e-12, atol=1e-12)
    dx, dwt = strided(np.ones_like(x)), np.ones_like(w)[:, :, None]
    add, write = OpReqType.kAddTo, OpReqType.kWriteTo
    _conv_cpu.backward(s, strided(dy), strided(x), w[:, :, None], [dx, dwt], [add, write], None)
    np.testing.assert_allclose(dx[:, :, 0], 1 + dx_ref, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(dwt[:, :, 0], dw_ref, rtol=1e-12, atol=1e-12)
