"""The CPU kernels of im2col / col2im (ops/_im2col_op_cpu.py) and of Correlation
(ops/nn/_correlation_cpu.py, and the plane loop of its backward in correlation.py)
against float64 NumPy references written as explicit loops over MXNet's formulas.

Each FCompute<cpu> is called directly (fcompute_call.py), so every request is checked:
'write', 'add' onto random starting values, and 'null' (the output left alone). The
settings cover strides, dilations and paddings per axis, odd sizes, 1-d and 3-d windows,
an even correlation kernel (its taps reach one past the padded input), displacements
cut by a small padding, float64, float32 and float16 (through float32 copies). Every
case runs twice: on the calling thread (the serial kernels) and as the parallel (team)
kernels split into 3 uneven parts (and Correlation's backward as the parallel build of
its plane loop), whatever the input size and the machine's load.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest
from correlation_inputs import correlation_geometry, correlation_inputs
from fcompute_call import run_fcompute

import nnvmpy as nv
from nnvmpy import threads
from nnvmpy.kernel import device as kernel_device
from nnvmpy.ops import im2col_ops
from nnvmpy.ops.nn import correlation

nd = nv.nd

TOL = {np.float64: 1e-12, np.float32: 2e-5, np.float16: 4e-3}
REQS = ("write", "add", "null")


class _Three:
    """threads.region granting a team of 3."""

    def __init__(self, want: int | None = None) -> None:
        pass

    def __enter__(self) -> int:
        return 3

    def __exit__(self, *exc: object) -> None:
        pass


@pytest.fixture(params=["serial", "team"])
def variant(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The serial kernels for any size, or the team kernels (3 parts) for any size."""
    team = request.param == "team"
    for module in (im2col_ops, correlation, kernel_device):  # (the backward's plane loop)
        monkeypatch.setattr(module, "SERIAL_CUTOFF", 1 if team else 1 << 62)
    if team:
        monkeypatch.setattr(threads, "region", _Three)
    return request.param


def _check(got: np.ndarray, want: np.ndarray, start: np.ndarray, req: str, dtype: Any) -> None:
    assert got.dtype == dtype
    if req == "null":
        np.testing.assert_array_equal(got, start)
        return
    full = want + (start.astype(np.float64) if req == "add" else 0.0)
    atol = TOL[dtype] * max(1.0, float(np.abs(full).max()))
    np.testing.assert_allclose(got.astype(np.float64), full, rtol=TOL[dtype], atol=atol)


# -- im2col / col2im ------------------------------------------------------------------------------


def _blocks(size: tuple[int, ...], k, s, d, p) -> list[int]:
    return [(size[a] + 2 * p[a] - d[a] * (k[a] - 1) - 1) // s[a] + 1 for a in range(len(k))]


def im2col_ref(x: np.ndarray, k, s, d, p) -> np.ndarray:
    """MXNet's im2col: col[n, c*K + kk, l] = x[n, c, o(l)*s - p + tap(kk)*d], 0 outside."""
    n_img, n_c, size = x.shape[0], x.shape[1], x.shape[2:]
    blocks = _blocks(size, k, s, d, p)
    taps = list(itertools.product(*[range(v) for v in k]))
    out = np.zeros((n_img, n_c * len(taps), int(np.prod(blocks))))
    for n in range(n_img):
        for c in range(n_c):
            for kk, tap in enumerate(taps):
                for col, pos in enumerate(itertools.product(*[range(v) for v in blocks])):
                    q = tuple(pos[a] * s[a] - p[a] + tap[a] * d[a] for a in range(len(k)))
                    if all(0 <= q[a] < size[a] for a in range(len(k))):
                        out[n, c * len(taps) + kk, col] = x[(n, c, *q)]
    return out


def col2im_ref(col: np.ndarray, size: tuple[int, ...], k, s, d, p) -> np.ndarray:
    """MXNet's col2im: im2col's adjoint, each column entry added where im2col took it."""
    blocks = _blocks(size, k, s, d, p)
    taps = list(itertools.product(*[range(v) for v in k]))
    n_img, n_c = col.shape[0], col.shape[1] // len(taps)
    out = np.zeros((n_img, n_c, *size))
    for n in range(n_img):
        for c in range(n_c):
            for kk, tap in enumerate(taps):
                for l_, pos in enumerate(itertools.product(*[range(v) for v in blocks])):
                    q = tuple(pos[a] * s[a] - p[a] + tap[a] * d[a] for a in range(len(k)))
                    if all(0 <= q[a] < size[a] for a in range(len(k))):
                        out[(n, c, *q)] += col[n, c * len(taps) + kk, l_]
    return out


# (image shape, kernel, stride, dilate, pad)
WINDOWS = [
    ((2, 3, 7, 6), (3, 3), (1, 1), (1, 1), (1, 1)),
    ((2, 3, 9, 8), (3, 2), (2, 3), (2, 1), (2, 0)),
    ((1, 2, 5, 11), (2, 4), (3, 1), (1, 2), (0, 3)),
    ((3, 1, 4, 4), (4, 4), (1, 1), (1, 1), (0, 0)),
    ((2, 2, 11), (3,), (2,), (2,), (1,)),
    ((1, 2, 5, 6, 7), (2, 3, 2), (1, 2, 3), (2, 1, 1), (1, 0, 2)),
    ((2, 2, 13, 12), (3, 3), (1, 2), (1, 1), (1, 2)),
]


def _window(win: tuple) -> dict[str, Any]:
    return dict(zip(("kernel", "stride", "dilate", "pad"), win[1:], strict=True))


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16])
@pytest.mark.parametrize("win", WINDOWS, ids=lambda w: "x".join(map(str, w[0])))
def test_im2col_and_col2im_against_loops(win: tuple, dtype: Any, variant: str) -> None:
    shape, k, s, d, p = win
    rng = np.random.default_rng(len(shape) + shape[-1])
    x = rng.standard_normal(shape).astype(dtype)
    want_col = im2col_ref(x.astype(np.float64), k, s, d, p)
    col = rng.standard_normal(want_col.shape).astype(dtype)
    want_im = col2im_ref(col.astype(np.float64), shape[2:], k, s, d, p)
    params = _window(win)
    for req in REQS:
        start = rng.standard_normal(want_col.shape).astype(dtype)
        # im2col, and col2im's gradient (the same computation)
        for op, extra in (("im2col", {}), ("_backward_col2im", {"output_size": shape[2:]})):
            (got,) = run_fcompute(op, {**params, **extra}, [x], [start], [req], "cpu")
            _check(got, want_col, start, req, dtype)
        start = rng.standard_normal(shape).astype(dtype)
        for op, extra in (("col2im", {"output_size": shape[2:]}), ("_backward_im2col", {})):
            (got,) = run_fcompute(op, {**params, **extra}, [col], [start], [req], "cpu")
            _check(got, want_im, start, req, dtype)


@pytest.mark.parametrize("win", WINDOWS[:3] + WINDOWS[-1:], ids=lambda w: "x".join(map(str, w[0])))
def test_im2col_col2im_gradients_through_autograd(win: tuple, variant: str) -> None:
    """The gradient of im2col is col2im of dy (and vice versa), through nd and autograd."""
    shape, k, s, d, p = win
    rng = np.random.default_rng(11)
    params = _window(win)
    x = nd.array(rng.standard_normal(shape), dtype=np.float64)
    x.attach_grad()
    with nv.autograd.record():
        y = nd.im2col(x, **params)
    dy = rng.standard_normal(y.shape)
    y.backward(nd.array(dy, dtype=np.float64))
    np.testing.assert_allclose(y.asnumpy(), im2col_ref(x.asnumpy(), k, s, d, p), rtol=1e-12)
    np.testing.assert_allclose(x.grad.asnumpy(), col2im_ref(dy, shape[2:], k, s, d, p), rtol=1e-12)
    c = nd.array(dy, dtype=np.float64)
    c.attach_grad()
    with nv.autograd.record():
        z = nd.col2im(c, output_size=shape[2:], **params)
    dz = rng.standard_normal(z.shape)
    z.backward(nd.array(dz, dtype=np.float64))
    np.testing.assert_allclose(z.asnumpy(), col2im_ref(dy, shape[2:], k, s, d, p), rtol=1e-12)
    np.testing.assert_allclose(c.grad.asnumpy(), im2col_ref(dz, k, s, d, p), rtol=1e-12)


# -- Correlation ----------------------------------------------------------------------------------


def correlation_ref(a, b, dy, k, d, s1, s2, pad, mult):
    """Correlation's output and its gradients (d data1, d data2 for output gradient dy),
    one output element at a time, as MXNet documents it: in padded coordinates output
    (n, t = ty*D + tx, i, j) is the mean over c and the k x k window (h, w) of
    f(data1[n, c, y1 + h, x1 + w], data2[n, c, y2 + h, x2 + w]), x1 = j*s1 + d,
    x2 = x1 + (tx - radius)*s2 (y likewise), f = a*b or |a - b| (d/da: +1 where a >= b);
    values in the padding are 0 and get no gradient."""
    N, C, H, W = a.shape
    radius, D, th, tw = correlation_geometry(a.shape, k, d, s1, s2, pad)
    out = np.zeros((N, D * D, th, tw))
    ga, gb = np.zeros(a.shape), np.zeros(b.shape)
    norm = k * k * C
    for n, c in itertools.product(range(N), range(C)):
        for t, i, j in itertools.product(range(D * D), range(th), range(tw)):
            ty, tx = divmod(t, D)
            y1, x1 = i * s1 + d - pad, j * s1 + d - pad  # unpadded coordinates
            y2, x2 = y1 + (ty - radius) * s2, x1 + (tx - radius) * s2
            g = dy[n, t, i, j] / norm
            for h, w in itertools.product(range(k), range(k)):
                in_a = 0 <= y1 + h < H and 0 <= x1 + w < W
                in_b = 0 <= y2 + h < H and 0 <= x2 + w < W
                va = a[n, c, y1 + h, x1 + w] if in_a else 0.0
                vb = b[n, c, y2 + h, x2 + w] if in_b else 0.0
                out[n, t, i, j] += (va * vb if mult else abs(va - vb)) / norm
                da = g * vb if mult else (g if va >= vb else -g)
                db = g * va if mult else -da
                if in_a:
                    ga[n, c, y1 + h, x1 + w] += da
                if in_b:
                    gb[n, c, y2 + h, x2 + w] += db
    return out, ga, gb


# (shape, kernel_size, max_displacement, stride1, stride2, pad_size)
CORR_CASES = [
    ((2, 3, 7, 9), 1, 4, 1, 2, 4),
    ((2, 2, 8, 7), 3, 2, 2, 1, 2),
    ((1, 3, 9, 8), 3, 3, 3, 2, 1),
    ((1, 2, 9, 10), 2, 2, 1, 1, 2),  # even kernel: a tap one past the padded input
    ((2, 3, 6, 7), 2, 3, 2, 2, 3),
    ((1, 1, 1, 1), 1, 0, 1, 1, 0),
    ((2, 4, 10, 9), 1, 3, 1, 1, 3),
]


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16])
@pytest.mark.parametrize("mult", [True, False])
@pytest.mark.parametrize(("shape", "k", "d", "s1", "s2", "pad"), CORR_CASES)
def test_correlation_against_loops(
    shape, k, d, s1, s2, pad, mult: bool, dtype: Any, variant: str
) -> None:
    rng = np.random.default_rng(5)
    params, a, b, dy = correlation_inputs(rng, shape, k, d, s1, s2, pad, mult, dtype)
    exact = [x.astype(np.float64) for x in (a, b, dy)]
    out, ga, gb = correlation_ref(*exact, k, d, s1, s2, pad, mult)
    for req in REQS:
        start = rng.standard_normal(out.shape).astype(dtype)
        (got,) = run_fcompute("Correlation", params, [a, b], [start], [req], "cpu")
        _check(got, out, start, req, dtype)
    for reqs in (("write", "write"), ("add", "add"), ("write", "null"), ("null", "add")):
        starts = [rng.standard_normal(shape).astype(dtype) for _ in range(2)]
        got = run_fcompute("_backward_Correlation", params, [dy, a, b], starts, reqs, "cpu")
        for g, want, start, req in zip(got, (ga, gb), starts, reqs, strict=True):
            _check(g, want, start, req, dtype)
