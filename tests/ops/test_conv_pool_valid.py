"""The CPU fast paths for unpadded windows (LeNet's layers): against plain NumPy references.

- im2col / col2im without padding (_im2col._im2col_valid, _col2im_valid): forward and
  both gradients against the einsum reference and exact (adjoint) gradients, one image
  per chunk and all images in one chunk, req 'add';
- the bias gradient through BLAS (_conv_cpu.bias_grad) against a float64 sum;
- the chunk size kept in cache (_conv_cpu.ConvShape.chunk);
- max pooling whose windows all lie inside the image (_pool_cpu._max_pool_inside; 2x2:
  _max_pool_2x2; 3x3, padded too: _max_pool_3x3) and its 2x2 backward
  (_max_pool_backward_2x2, against first-maximum routing by explicit windows, with
  ties), and the windows that must not take them (padding, a clipped last window).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

# isort: off
import op_db  # noqa: F401  (first: it loads every cases_*.py, so cases_conv is complete)
from cases_conv import conv_reference, pool_reference
from test_conv_pool import _adjoint_grads, _backward_inputs, _direct

# isort: on

import nnvmpy as nv
from nnvmpy.base import OpReqType
from nnvmpy.registry import Op
from nnvmpy.test_utils import check_symbolic_forward

VALID = [
    {"kernel": (5, 5)},  # LeNet
    {"kernel": (3, 2), "stride": (2, 3)},
    {"kernel": (2, 3), "dilate": (2, 1), "num_group": 2},
    {"kernel": (1, 3), "stride": (1, 2)},
]


@pytest.mark.parametrize("weights", ["small", "big"])
@pytest.mark.parametrize("params", VALID, ids=["5x5", "stride", "dilate-group", "1x3"])
def test_unpadded_im2col_matches_reference(
    params: dict[str, Any], weights: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both backward GEMM orientations: on transposed weights (small) and as before (big)."""
    from nnvmpy.ops.nn import _conv_cpu, _conv_shift, _im2col

    monkeypatch.setattr(_conv_shift, "MIN_CHANNELS", 1 << 30)  # im2col, not shifted GEMMs
    if weights == "big":
        monkeypatch.setattr(_conv_cpu, "CACHE_BYTES", 8)  # every weight counts as big
    calls = []
    for name in ("_im2col_valid", "_col2im_valid"):
        real = getattr(_im2col, name)
        monkeypatch.setattr(_im2col, name, lambda *a, r=real, n=name: calls.append(n) or r(*a))
    rng = np.random.default_rng(5)
    groups = params.get("num_group", 1)
    x = rng.standard_normal((3, 4, 9, 8))
    w = rng.standard_normal((6, 4 // groups, *params["kernel"]))
    b = rng.standard_normal(6)
    params = {**params, "num_filter": 6}
    want = conv_reference(x, w, b, **params)
    dy = rng.standard_normal(want.shape)
    dx, dw = _adjoint_grads(x, w, dy, **params)
    for workspace in (0, 1024):  # one image per chunk, all images in one chunk
        p = {**params, "workspace": workspace}
        (got,) = _direct("Convolution", p, [x, w, b])
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)
        start = rng.standard_normal(want.shape)
        (added,) = _direct("Convolution", p, [x, w, b], "add", [start.copy()])
        np.testing.assert_allclose(added, start + want, rtol=1e-10, atol=1e-10)
        grads = _backward_inputs(p, x, w, dy)
        np.testing.assert_allclose(grads[0], dx, rtol=1e-9, atol=1e-10)
        np.testing.assert_allclose(grads[1], dw, rtol=1e-9, atol=1e-10)
        np.testing.assert_allclose(grads[2], dy.sum(axis=(0, 2, 3)), rtol=1e-12, atol=1e-12)
        old = [rng.standard_normal(g.shape) for g in grads]
        summed = _backward_inputs(p, x, w, dy, "add", [o.copy() for o in old])
        for got_g, o, g in zip(summed, old, grads):
            np.testing.assert_allclose(got_g, o + g, rtol=1e-9, atol=1e-10)
    assert {"_im2col_valid", "_col2im_valid"} <= set(calls)


def test_padded_convolution_keeps_the_general_im2col() -> None:
    """With padding the valid kernels would read outside the image: the general ones run."""
    rng = np.random.default_rng(6)
    x, w = rng.standard_normal((2, 3, 7, 6)), rng.standard_normal((4, 3, 3, 3))
    p = {"kernel": (3, 3), "stride": (2, 2), "pad": (1, 0), "num_filter": 4, "no_bias": True}
    (got,) = _direct("Convolution", p, [x, w])
    np.testing.assert_allclose(got, conv_reference(x, w, **p), rtol=1e-10, atol=1e-10)


def test_bias_gradient_matches_a_float64_sum() -> None:
    from nnvmpy.ops.nn._conv_cpu import bias_grad

    rng = np.random.default_rng(8)
    dy = rng.standard_normal((64, 20, 576)).astype(np.float32)  # LeNet conv1's output grad
    got = bias_grad(dy)
    assert got.dtype == np.float32
    want = dy.astype(np.float64).sum(axis=(0, 2))
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-3)  # |sum| ~ 190, float32 GEMV


def test_chunks_stay_in_cache_but_keep_wide_gemms() -> None:
    from nnvmpy.ops.nn import _conv_cpu
    from nnvmpy.ops.nn._geometry import Window

    def shape(c: int, h: int, f: int, k: int) -> Any:
        ho = h - k + 1
        win = Window(k, k, 1, 1, 0, 0, 1, 1, ho, ho)
        return _conv_cpu.ConvShape(64, c, h, h, f, 1, win, 1024)

    conv2 = shape(20, 12, 50, 5)  # LeNet's conv2: 550 floats a column, 64 columns an image
    nb = conv2.chunk(4, conv2.rows + conv2.fg)
    assert nb * conv2.hw >= _conv_cpu.MIN_COLUMNS
    assert nb < _conv_cpu.TARGET_COLUMNS // conv2.hw  # the cache, not the width, decides
    # a wide layer: the cache cap would allow no image at all; the minimum width wins
    wide = shape(256, 16, 512, 3)
    assert wide.chunk(4, wide.rows + wide.fg) * wide.hw >= _conv_cpu.MIN_COLUMNS
    # big weights (4.7 MB): chunks as wide as TARGET_COLUMNS allows, not cache-sized
    assert not wide.small_weights(4)
    assert wide.chunk(4, wide.rows + wide.fg) == _conv_cpu.TARGET_COLUMNS // wide.hw


# -- max pooling with every window inside the image ----------------------------------------------

INSIDE = [
    {"kernel": (2, 2), "stride": (2, 2)},  # LeNet
    {"kernel": (3, 3), "stride": (2, 2)},  # overlapping
    {"kernel": (2, 3), "stride": (1, 2)},
    {"kernel": (1, 1), "stride": (3, 1)},
]
OUTSIDE = [
    {"kernel": (3, 3), "stride": (2, 2), "pad": (1, 1)},
    {"kernel": (2, 2), "stride": (2, 2), "pooling_convention": "full"},  # 9x11: clipped end
]


@pytest.mark.parametrize("params", INSIDE + OUTSIDE)
@pytest.mark.parametrize("req", ["write", "add"])
def test_max_pooling_inside_path_matches_windows(
    params: dict[str, Any], req: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from nnvmpy.ops.nn import _pool_cpu

    calls = []
    for name in ("_max_pool_inside", "_max_pool_2x2", "_max_pool_3x3"):
        real = getattr(_pool_cpu, name)
        monkeypatch.setattr(_pool_cpu, name, lambda *a, r=real, n=name: calls.append(n) or r(*a))
    rng = np.random.default_rng(9)
    x = rng.standard_normal((2, 3, 9, 11)).astype(np.float32)
    p = {"pool_type": "max", **params}
    want = pool_reference(x.astype(np.float64), **p)
    start = rng.standard_normal(want.shape).astype(np.float32)
    op = Op.get("Pooling")
    attrs = op.parse_attrs(p)
    outs = [start.copy(), np.zeros(want.shape, np.int32)]
    reqs = [OpReqType.parse(req), OpReqType.kNullOp]  # in a graph nothing reads the mask
    op.get_attr("FCompute<cpu>")(attrs, None, [x], reqs, outs)
    expected = want + start if req == "add" else want
    np.testing.assert_allclose(outs[0], expected, rtol=1e-6, atol=1e-6)
    kernels = {(2, 2): "_max_pool_2x2", (3, 3): "_max_pool_3x3"}  # 3x3: padded or not
    if params in INSIDE or params["kernel"] == (3, 3):
        assert calls == [kernels.get(params["kernel"], "_max_pool_inside")]
    else:
        assert not calls


def test_max_pooling_inside_path_in_a_graph_with_gradient() -> None:
    """LeNet's pooling bound in a graph: forward (inside path) and the gradient of the first
    maximum, against the window reference and a gradient routed by NumPy."""
    rng = np.random.default_rng(10)
    x = rng.permutation(2 * 3 * 8 * 6).reshape(2, 3, 8, 6).astype(np.float64)  # distinct
    net = nv.sym.Pooling(nv.sym.Variable("data"), kernel=(2, 2), stride=(2, 2))
    want = pool_reference(x, kernel=(2, 2), stride=(2, 2), pool_type="max")
    check_symbolic_forward(net, {"data": x}, [want], rtol=0, atol=0, dtype=np.float64)
    windows = x.reshape(2, 3, 4, 2, 3, 2).transpose(0, 1, 2, 4, 3, 5).reshape(2, 3, 4, 3, 4)
    dy = rng.standard_normal(want.shape)
    routed = (windows == windows.max(axis=-1, keepdims=True)) * dy[..., None]
    dx = routed.reshape(2, 3, 4, 3, 2, 2).transpose(0, 1, 2, 4, 3, 5).reshape(x.shape)
    exe = net.simple_bind(nv.cpu(), data=x.shape, type_dict={"data": np.float64})
    exe.forward(is_train=True, data=x)
    exe.backward([nv.nd.array(dy, dtype=np.float64)])
    np.testing.assert_array_equal(exe.grad_dict["data"].asnumpy(), dx)


def _first_max_gradient(x: np.ndarray, dy: np.ndarray, p: dict[str, Any]) -> np.ndarray:
    """dx of max pooling by explicit windows: each dy goes to its window's first maximum
    (row-major), windows clipped to the image (padding is never the maximum)."""
    (kh, kw), (sh, sw) = p["kernel"], p.get("stride", (1, 1))
    ph, pw = p.get("pad", (0, 0))
    dx = np.zeros_like(x)
    for n, c, y, z in np.ndindex(dy.shape):
        h0, w0 = y * sh - ph, z * sw - pw
        hs, ws = (
            slice(max(h0, 0), min(h0 + kh, x.shape[2])),
            slice(max(w0, 0), min(w0 + kw, x.shape[3])),
        )
        win = x[n, c, hs, ws]
        i, j = np.unravel_index(np.argmax(win), win.shape)  # argmax: the first maximum
        dx[n, c, hs.start + i, ws.start + j] += dy[n, c, y, z]
    return dx


BACKWARD = [
    {"kernel": (2, 2), "stride": (2, 2)},  # LeNet
    {"kernel": (2, 2), "stride": (1, 1)},  # overlapping windows add up
    {"kernel": (2, 2), "stride": (3, 2)},  # rows no window reads
    {"kernel": (2, 2), "stride": (2, 2), "pad": (1, 1)},
    {"kernel": (2, 2), "stride": (2, 2), "pooling_convention": "full"},  # clipped end
    {"kernel": (3, 3), "stride": (2, 2)},
]


@pytest.mark.parametrize("params", BACKWARD)
@pytest.mark.parametrize("req", ["write", "add"])
def test_max_pooling_backward_2x2_path_routes_to_the_first_maximum(
    params: dict[str, Any], req: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from nnvmpy.ops.nn import _pool_cpu

    calls = []
    real = _pool_cpu._max_pool_backward_2x2
    monkeypatch.setattr(_pool_cpu, "_max_pool_backward_2x2", lambda *a: calls.append(1) or real(*a))
    rng = np.random.default_rng(11)
    x = rng.integers(0, 4, size=(2, 3, 9, 11)).astype(np.float32)  # many ties
    p = {"pool_type": "max", **params}
    y = pool_reference(x.astype(np.float64), **p).astype(np.float32)
    dy = rng.standard_normal(y.shape).astype(np.float32)
    want = _first_max_gradient(x, dy, p)
    start = rng.standard_normal(x.shape).astype(np.float32)
    op = Op.get("_backward_Pooling")
    outs = [start.copy()]
    op.get_attr("FCompute<cpu>")(op.parse_attrs(p), None, [dy, x, y], [OpReqType.parse(req)], outs)
    expected = want + start if req == "add" else want
    np.testing.assert_allclose(outs[0], expected, rtol=1e-6, atol=1e-6)
    inside = (
        params["kernel"] == (2, 2) and "pad" not in params and "pooling_convention" not in params
    )
    assert bool(calls) == inside
