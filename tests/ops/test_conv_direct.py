"""The direct convolution loops for small windows (ops/nn/_im2col.py `_direct_forward`,
`_direct_weight`; chosen by _conv_cpu.direct): LeNet's first layer shape and others
with at most DIRECT_MAX_WINDOW input values per window, against float64 references, for
every request; and which layers take them.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

# isort: off
import op_db  # noqa: F401  (first: it loads every cases_*.py, so cases_conv is complete)
from cases_conv import TempSpace, conv_reference

# isort: on

from nnvmpy.base import OpReqType
from nnvmpy.ops.nn import _conv_cpu
from nnvmpy.ops.nn import _im2col as k
from nnvmpy.ops.nn._geometry import Window

WRITE, ADD, NULL = OpReqType.kWriteTo, OpReqType.kAddTo, OpReqType.kNullOp

# (n, c, h, w, f, kh, kw): LeNet's first layer at a small batch, two channels, a
# non-square kernel, output rows shorter and longer than a vector
LAYERS = [
    (3, 1, 28, 28, 20, 5, 5),
    (2, 2, 9, 11, 3, 3, 3),
    (2, 1, 7, 40, 5, 3, 5),
    (1, 3, 6, 6, 4, 3, 3),
]


def _shape(n: int, c: int, h: int, w: int, f: int, kh: int, kw: int) -> Any:
    win = Window(kh, kw, 1, 1, 0, 0, 1, 1, h - kh + 1, w - kw + 1)
    return _conv_cpu.ConvShape(n, c, h, w, f, 1, win, 1024)


def _weight_grad(x: np.ndarray, dy: np.ndarray, kh: int, kw: int) -> np.ndarray:
    """dW[f, c, i, j] = sum over n, y, z of dy[n, f, y, z] x[n, c, y + i, z + j]."""
    ho, wo = dy.shape[2:]
    out = np.empty((dy.shape[1], x.shape[1], kh, kw))
    for i in range(kh):
        for j in range(kw):
            out[:, :, i, j] = np.einsum("nfyz,ncyz->fc", dy, x[:, :, i : i + ho, j : j + wo])
    return out


@pytest.fixture
def calls(monkeypatch: Any) -> dict[str, int]:
    """How often each direct kernel ran (they still run: the spies call through)."""
    seen = {"forward": 0, "weight": 0}
    for name, key in (("_direct_forward", "forward"), ("_direct_weight", "weight")):
        real = getattr(k, name)

        def spy(*args: Any, _real: Any = real, _key: str = key) -> None:
            seen[_key] += 1
            _real(*args)

        monkeypatch.setattr(k, name, spy)
    return seen


@pytest.mark.parametrize("layer", LAYERS, ids=str)
@pytest.mark.parametrize("mode", ["bias", "no bias", "add"])
def test_forward_matches_the_reference(layer: Any, mode: str, calls: dict[str, int]) -> None:
    n, c, h, w, f, kh, kw = layer
    s = _shape(*layer)
    assert _conv_cpu.direct(s)
    rng = np.random.default_rng(3)
    x = rng.standard_normal((n, c, h, w)).astype(np.float32)
    wt = rng.standard_normal((f, c, kh, kw)).astype(np.float32)
    b = rng.standard_normal(f).astype(np.float32) if mode != "no bias" else None
    start = rng.standard_normal((n, f, 1, h - kh + 1, w - kw + 1)).astype(np.float32)
    out = start.copy()
    req = ADD if mode == "add" else WRITE
    _conv_cpu.forward(s, x[:, :, None], wt[:, :, None], b, out, req, TempSpace())
    assert calls["forward"] == 1
    want = conv_reference(x.astype(np.float64), wt.astype(np.float64), b, kernel=(kh, kw))
    if mode == "add":
        want = want + start[:, :, 0]
    np.testing.assert_allclose(out[:, :, 0], want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("layer", LAYERS, ids=str)
@pytest.mark.parametrize(("req_x", "req_w"), [(NULL, WRITE), (WRITE, ADD), (ADD, WRITE)])
def test_gradients_match_the_reference(
    layer: Any, req_x: Any, req_w: Any, calls: dict[str, int]
) -> None:
    n, c, h, w, f, kh, kw = layer
    s = _shape(*layer)
    rng = np.random.default_rng(5)
    x = rng.standard_normal((n, c, h, w)).astype(np.float32)
    wt = rng.standard_normal((f, c, kh, kw)).astype(np.float32)
    dy = rng.standard_normal((n, f, 1, h - kh + 1, w - kw + 1)).astype(np.float32)
    dx0 = rng.standard_normal((n, c, 1, h, w)).astype(np.float32)
    dw0 = rng.standard_normal((f, c, 1, kh, kw)).astype(np.float32)
    dx, dw = dx0.copy(), dw0.copy()
    _conv_cpu.backward(s, dy, x[:, :, None], wt[:, :, None], [dx, dw], [req_x, req_w], TempSpace())
    assert calls["weight"] == 1
    want_dw = _weight_grad(x.astype(np.float64), dy[:, :, 0].astype(np.float64), kh, kw)
    if req_w == ADD:
        want_dw = want_dw + dw0[:, :, 0]
    np.testing.assert_allclose(dw[:, :, 0], want_dw, rtol=1e-5, atol=1e-4)
    if req_x == NULL:
        np.testing.assert_array_equal(dx, dx0)  # not asked for: untouched
        return
    # dx (another path) = the full correlation of dy with the flipped weights
    flipped = wt[:, :, ::-1, ::-1].transpose(1, 0, 2, 3).astype(np.float64)
    padded = np.pad(dy[:, :, 0].astype(np.float64), [(0, 0), (0, 0), (kh - 1,) * 2, (kw - 1,) * 2])
    want_dx = conv_reference(padded, flipped, kernel=(kh, kw))
    if req_x == ADD:
        want_dx = want_dx + dx0[:, :, 0]
    np.testing.assert_allclose(dx[:, :, 0], want_dx, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize(
    ("layer", "window", "taken"),
    [
        ((2, 1, 28, 28, 20, 5, 5), (1, 0, 1), True),  # LeNet's first layer
        ((2, 20, 12, 12, 50, 5, 5), (1, 0, 1), False),  # its second: 500 values a window
        ((2, 1, 28, 28, 20, 5, 5), (2, 0, 1), False),  # strided
        ((2, 1, 28, 28, 20, 5, 5), (1, 2, 1), False),  # padded
        ((2, 1, 28, 28, 20, 3, 3), (1, 0, 2), False),  # dilated
    ],
)
def test_which_layers_run_direct(layer: Any, window: Any, taken: bool) -> None:
    n, c, h, w, f, kh, kw = layer
    st, pad, dil = window
    ho = (h + 2 * pad - dil * (kh - 1) - 1) // st + 1
    wo = (w + 2 * pad - dil * (kw - 1) - 1) // st + 1
    win = Window(kh, kw, st, st, pad, pad, dil, dil, ho, wo)
    assert _conv_cpu.direct(_conv_cpu.ConvShape(n, c, h, w, f, 1, win, 1024)) is taken


@pytest.mark.parametrize("layer", LAYERS[:3], ids=str)
def test_inf_and_nan_inputs_reach_only_the_taps_that_read_them(layer: Any) -> None:
    # the loops form sums over x's whole row width (values outside a tap's window meet
    # zeros or are dropped): an inf or NaN there must not leak into other taps or outputs
    n, c, h, w, f, kh, kw = layer
    s = _shape(*layer)
    rng = np.random.default_rng(8)
    x = rng.standard_normal((n, c, h, w)).astype(np.float32)
    x[0, 0, 1, w - 1] = np.inf  # the last column: read only by the last tap column
    x[n - 1, c - 1, h - 2, 0] = np.nan  # the first column: only the first tap column
    wt = rng.standard_normal((f, c, kh, kw)).astype(np.float32)
    out = np.zeros((n, f, 1, h - kh + 1, w - kw + 1), np.float32)
    _conv_cpu.forward(s, x[:, :, None], wt[:, :, None], None, out, WRITE, TempSpace())
    want = conv_reference(x.astype(np.float64), wt.astype(np.float64), None, kernel=(kh, kw))
    np.testing.assert_allclose(out[:, :, 0], want, rtol=1e-5, atol=1e-5)
    dy = rng.standard_normal(out.shape).astype(np.float32)
    dw = np.zeros((f, c, 1, kh, kw), np.float32)
    _conv_cpu.backward(s, dy, x[:, :, None], wt[:, :, None], [None, dw], [NULL, WRITE], TempSpace())
    want_dw = _weight_grad(x.astype(np.float64), dy[:, :, 0].astype(np.float64), kh, kw)
    assert np.isfinite(want_dw).any()
    assert not np.isfinite(want_dw).all()
    np.testing.assert_allclose(dw[:, :, 0], want_dw, rtol=1e-5, atol=1e-4)
