"""ChannelsLast: the layers that are faster on (N, H, W, C) data run in that layout.

References: direct NumPy convolutions (a sum over the kernel taps in float64), the
channels-first Pooling op on transposed data, and the same symbols bound with
NNVMPY_CHANNELS_LAST=0 ("plain").
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy import sym
from nnvmpy.base import ParamError
from nnvmpy.graph import Graph, apply_passes
from nnvmpy.ops.nn import _conv_nhwc, _pool_nhwc, _winograd_nhwc
from nnvmpy.ops.nn.channels_last import CONV_OP, POOL_OP, WEIGHT_OP

RNG = np.random.default_rng(17)


class _Space:
    """The temp-space resource's get_space, for calling the kernels directly."""

    def get_space(self, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
        return np.full(shape, np.nan, dtype)  # NaN: a kernel reading unwritten scratch shows


def _reference(x: np.ndarray, w: np.ndarray, stride: Any, pad: Any, dilate: Any) -> np.ndarray:
    """conv of x (N, H, W, C) with w (F, kh, kw, C) in float64, (N, Ho, Wo, F)."""
    n, h, wd, c = x.shape
    f, kh, kw, _ = w.shape
    ho = (h + 2 * pad[0] - dilate[0] * (kh - 1) - 1) // stride[0] + 1
    wo = (wd + 2 * pad[1] - dilate[1] * (kw - 1) - 1) // stride[1] + 1
    xp = np.zeros((n, h + 2 * pad[0], wd + 2 * pad[1], c))
    xp[:, pad[0] : pad[0] + h, pad[1] : pad[1] + wd] = x
    out = np.zeros((n, ho, wo, f))
    for i, j in itertools.product(range(kh), range(kw)):
        y0, x0 = i * dilate[0], j * dilate[1]
        taps = xp[:, y0 : y0 + stride[0] * (ho - 1) + 1 : stride[0],
                  x0 : x0 + stride[1] * (wo - 1) + 1 : stride[1]]  # fmt: skip
        out += taps @ w[:, i, j, :].T.astype(np.float64)
    return out


def _expected(x, w, bias, stride, pad, dilate, residual, relu, before, add):
    y = _reference(x, w, stride, pad, dilate)
    if bias is not None:
        y = y + bias
    if residual is not None:
        y = y + residual
    if relu:
        y = np.maximum(y, 0)
    return y + before if add else y


def _tol(dtype: Any) -> dict[str, float]:
    return {"rtol": 2e-5, "atol": 2e-4} if dtype == np.float32 else {"rtol": 1e-10, "atol": 1e-9}


# (data (N, H, W, C), filters, kernel, stride, pad, dilate)
GEOMETRIES = {
    "3x3-pad": ((2, 7, 9, 3), 5, (3, 3), (1, 1), (1, 1), (1, 1)),
    "3x3-stride2": ((1, 8, 8, 4), 6, (3, 3), (2, 2), (1, 1), (1, 1)),
    "1x1": ((3, 6, 5, 2), 4, (1, 1), (1, 1), (0, 0), (1, 1)),
    "1x1-stride2": ((2, 9, 9, 3), 4, (1, 1), (2, 2), (0, 0), (1, 1)),
    "dilated-uneven": ((1, 10, 11, 3), 2, (3, 2), (2, 1), (2, 0), (2, 3)),
    "7x7-stem": ((1, 15, 15, 3), 8, (7, 7), (2, 2), (3, 3), (1, 1)),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("geometry", GEOMETRIES.values(), ids=GEOMETRIES.keys())
def test_im2row_convolution_matches_the_direct_sum(geometry: Any, dtype: Any) -> None:
    shape, f, kernel, stride, pad, dilate = geometry
    x = RNG.standard_normal(shape).astype(dtype)
    w = RNG.standard_normal((f, *kernel, shape[3])).astype(dtype)
    ho = (shape[1] + 2 * pad[0] - dilate[0] * (kernel[0] - 1) - 1) // stride[0] + 1
    wo = (shape[2] + 2 * pad[1] - dilate[1] * (kernel[1] - 1) - 1) // stride[1] + 1
    for bias_on, res_on, relu, add in itertools.product([False, True], repeat=4):
        bias = RNG.standard_normal(f).astype(dtype) if bias_on else None
        residual = RNG.standard_normal((shape[0], ho, wo, f)).astype(dtype) if res_on else None
        before = RNG.standard_normal((shape[0], ho, wo, f)).astype(dtype)
        out = before.copy()
        _conv_nhwc.forward(x, w, bias, out, add, _Space(), stride, pad, dilate, residual, relu)
        want = _expected(x, w, bias, stride, pad, dilate, residual, relu, before, add)
        np.testing.assert_allclose(out, want, **_tol(dtype))


def test_im2row_convolution_in_many_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rows split into chunks (and partitions) that cut through images give the same sums."""
    monkeypatch.setattr(_conv_nhwc, "CHUNK_BYTES", 1)
    monkeypatch.setattr(_conv_nhwc, "MIN_ROWS", 7)  # 7 rows a chunk: not a multiple of Wo
    x = RNG.standard_normal((3, 6, 6, 5)).astype(np.float32)
    w = RNG.standard_normal((4, 3, 3, 5)).astype(np.float32)
    bias = RNG.standard_normal(4).astype(np.float32)
    residual = RNG.standard_normal((3, 6, 6, 4)).astype(np.float32)
    for add in (False, True):
        before = RNG.standard_normal((3, 6, 6, 4)).astype(np.float32)
        out = before.copy()
        relu = not add
        _conv_nhwc.forward(x, w, bias, out, add, _Space(), (1, 1), (1, 1), (1, 1),
                           None if add else residual, relu)  # fmt: skip
        want = _expected(x, w, bias, (1, 1), (1, 1), (1, 1), None if add else residual,
                         relu, before, add)  # fmt: skip
        np.testing.assert_allclose(out, want, **_tol(np.float32))


# (data (N, H, W, C), filters, pad)
WINOGRAD = {
    "odd-size": ((2, 7, 9, 3), 5, (1, 1)),
    "no-pad": ((1, 8, 8, 4), 6, (0, 0)),
    "pad-2-1": ((3, 6, 5, 2), 4, (2, 1)),
    "14x14": ((1, 14, 14, 16), 8, (1, 1)),
    "tiny": ((2, 3, 3, 3), 3, (2, 2)),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("tile", [2, 4])
@pytest.mark.parametrize("case", WINOGRAD.values(), ids=WINOGRAD.keys())
def test_winograd_matches_the_direct_sum(case: Any, tile: int, dtype: Any) -> None:
    shape, f, pad = case
    x = RNG.standard_normal(shape).astype(dtype)
    w = RNG.standard_normal((f, shape[3], 3, 3)).astype(dtype)  # channels-first, as bound
    u = np.empty(((tile + 2) ** 2, shape[3], f), dtype)
    _winograd_nhwc.weights(w, tile, u)
    ho, wo = shape[1] + 2 * pad[0] - 2, shape[2] + 2 * pad[1] - 2
    w_last = w.transpose(0, 2, 3, 1)
    for bias_on, res_on, relu, add in itertools.product([False, True], repeat=4):
        bias = RNG.standard_normal(f).astype(dtype) if bias_on else None
        residual = RNG.standard_normal((shape[0], ho, wo, f)).astype(dtype) if res_on else None
        before = RNG.standard_normal((shape[0], ho, wo, f)).astype(dtype)
        out = before.copy()
        _winograd_nhwc.forward(x, u, bias, out, add, _Space(), pad, tile, residual, relu)
        want = _expected(x, w_last, bias, (1, 1), pad, (1, 1), residual, relu, before, add)
        np.testing.assert_allclose(out, want, **_tol(dtype))


def test_winograd_in_chunks_of_one_image(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_winograd_nhwc, "CHUNK_BYTES", 1)
    x = RNG.standard_normal((5, 9, 7, 4)).astype(np.float32)
    w = RNG.standard_normal((6, 4, 3, 3)).astype(np.float32)
    u = np.empty((36, 4, 6), np.float32)
    _winograd_nhwc.weights(w, 4, u)
    out = np.empty((5, 9, 7, 6), np.float32)
    _winograd_nhwc.forward(x, u, None, out, False, _Space(), (1, 1), 4)
    want = _reference(x, w.transpose(0, 2, 3, 1), (1, 1), (1, 1), (1, 1))
    np.testing.assert_allclose(out, want, **_tol(np.float32))


POOLS = {
    "max-3x3-s2-p1": {"pool_type": "max", "kernel": (3, 3), "stride": (2, 2), "pad": (1, 1)},
    "max-full": {"pool_type": "max", "kernel": (2, 3), "stride": (2, 2),
                 "pooling_convention": "full"},
    "avg-pad": {"pool_type": "avg", "kernel": (3, 3), "stride": (2, 1), "pad": (1, 1)},
    "avg-valid-only": {"pool_type": "avg", "kernel": (3, 3), "pad": (1, 1),
                       "count_include_pad": False},
    "avg-same": {"pool_type": "avg", "kernel": (3, 2), "stride": (2, 2),
                 "pooling_convention": "same"},
    "sum": {"pool_type": "sum", "kernel": (2, 2), "stride": (1, 2)},
    "global-avg": {"pool_type": "avg", "global_pool": True},
    "global-max": {"pool_type": "max", "global_pool": True, "kernel": (1, 1)},
}  # fmt: skip


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("params", POOLS.values(), ids=POOLS.keys())
def test_pooling_matches_channels_first_pooling(params: dict[str, Any], dtype: Any) -> None:
    """With NaNs too: max pooling skips them in both layouts (NaN only for an all-NaN
    window; an average or sum takes them in)."""
    rng = np.random.default_rng(21)
    x = rng.standard_normal((2, 3, 7, 8)).astype(dtype)  # (N, C, H, W)
    x[rng.random(x.shape) < 0.2] = np.nan
    x[0, 0, :3, :3] = np.nan  # an all-NaN window
    want = nv.nd.Pooling(nv.nd.array(x, dtype=dtype), **params).asnumpy().transpose(0, 2, 3, 1)
    out = _pool_last(x, params, want.shape)
    np.testing.assert_allclose(out, want, rtol=1e-6 if dtype == np.float32 else 1e-12)


def _pool_last(x: np.ndarray, params: dict[str, Any], shape: tuple[int, ...]) -> np.ndarray:
    """The twin's kernel on x (N, C, H, W) transposed: its (N, Ho, Wo, C) output."""
    from nnvmpy.ops.nn.channels_last import _POOL_MODES, _pool_window

    p = nv.ops.nn.pooling.PoolingParam.parse({k: str(v) for k, v in params.items()})
    x_last = np.ascontiguousarray(x.transpose(0, 2, 3, 1))
    out = np.full(shape, 7.0, x.dtype)
    include = p.count_include_pad is not False
    win = _pool_window(p, x_last.shape)
    _pool_nhwc.forward(x_last, out, _POOL_MODES[p.pool_type], win, include)
    return out


def test_max_pooling_skips_nan() -> None:
    """Pooling's NaN rule (_pool_window.replaces): a window's largest non-NaN value, NaN
    only where the whole window is NaN."""
    x = RNG.standard_normal((1, 2, 5, 5))
    x[0, 0, 0, 0] = np.nan  # first in the window of output (0, 0)
    x[0, 1, 1, 0] = np.nan  # inside the window of output (0, 0), not first
    x[0, 0, 2:4, 2:4] = np.nan  # the whole window of output (1, 1)
    params = {"pool_type": "max", "kernel": (2, 2), "stride": (2, 2), "pooling_convention": "full"}
    out = _pool_last(x, params, (1, 3, 3, 2))
    assert out[0, 0, 0, 0] == np.nanmax(x[0, 0, :2, :2])
    assert out[0, 0, 0, 1] == np.nanmax(x[0, 1, :2, :2])
    assert np.isnan(out[0, 1, 1, 0])
    assert out[0, 1, 1, 1] == x[0, 1, 2:4, 2:4].max()
    assert out[0, 2, 2, 0] == x[0, 0, 4, 4]  # a 1x1 window, clipped by 'full' at the end


# -- the pass, in executors -----------------------------------------------------------------------


def _net() -> Any:
    """A ResNet-style stage: conv-bn-relu-conv-bn plus a strided 1x1 shortcut, add, relu,
    max pool, global pool, dense."""
    x = sym.var("x")
    a = sym.Convolution(x, kernel=(3, 3), stride=(2, 2), pad=(1, 1), num_filter=8, name="a")
    a = sym.relu(sym.BatchNorm(a, name="bn_a"))
    b = sym.Convolution(a, kernel=(3, 3), pad=(1, 1), num_filter=8, no_bias=True, name="b")
    b = sym.BatchNorm(b, name="bn_b")
    s = sym.Convolution(x, kernel=(1, 1), stride=(2, 2), num_filter=8, name="s")
    y = sym.relu(b + s)
    y = sym.Pooling(y, kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="max", name="mp")
    y = sym.Pooling(y, global_pool=True, pool_type="avg", name="gp")
    return sym.FullyConnected(sym.flatten(y), num_hidden=5, name="fc")


def _bind(net: Any, args: Any, aux: Any, on: bool, mp: pytest.MonkeyPatch) -> Any:
    mp.setenv("NNVMPY_CHANNELS_LAST", "1" if on else "0")
    try:
        return net.bind(nv.cpu(), args, aux_states=aux, grad_req="null")
    finally:
        mp.delenv("NNVMPY_CHANNELS_LAST")


def _arrays(net: Any, dtype: Any = np.float32, **shapes: Any) -> tuple[dict, dict]:
    arg_shapes, _, aux_shapes = net.infer_shape(**shapes)
    args = {n: nv.nd.array(RNG.standard_normal(s), dtype=dtype)
            for n, s in zip(net.list_arguments(), arg_shapes)}  # fmt: skip
    aux = {n: nv.nd.array(RNG.uniform(0.5, 2.0, s), dtype=dtype)
           for n, s in zip(net.list_auxiliary_states(), aux_shapes)}  # fmt: skip
    return args, aux


def _ops(exe: Any) -> list[str]:
    return [n.op.name for n in exe._graph.indexed.nodes if n.op is not None]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("batch", [1, 3])
def test_a_resnet_stage_runs_channels_last_with_the_same_result(
    batch: int, dtype: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    net = _net()
    args, aux = _arrays(net, dtype, x=(batch, 4, 12, 12))
    exe, plain = (_bind(net, args, aux, on, monkeypatch) for on in (True, False))
    ops = _ops(exe)
    assert "Convolution" not in ops
    assert "Pooling" not in ops
    assert "Convolution" in _ops(plain)
    assert ops.count(WEIGHT_OP) == 3
    assert ops.count(POOL_OP) == 2
    # a and b take their relu (and b the residual add) in their output loops
    epilogues = [
        n.attrs.parsed for n in exe._graph.indexed.nodes if n.op and n.op.name == "_Epilogue"
    ]
    assert sorted(e.base.name for e in epilogues) == ["a", "b"]
    assert {e.base.op.name for e in epilogues} == {CONV_OP}
    # one transpose in (x), one out (after the global pool): the layout is kept between
    assert ops.count("transpose") == 2
    notes = exe._simplified
    assert notes["s"].endswith(f"Convolution: as {CONV_OP} (N, H, W, C)")
    assert notes["mp"] == f"Pooling: as {POOL_OP} (N, H, W, C)"
    tol = {"rtol": 1e-4, "atol": 1e-4} if dtype == np.float32 else {"rtol": 1e-10, "atol": 1e-10}
    np.testing.assert_allclose(exe.forward()[0].asnumpy(), plain.forward()[0].asnumpy(), **tol)


def test_new_weights_reach_the_packed_weights(monkeypatch: pytest.MonkeyPatch) -> None:
    """The memoized _ChannelsLastWeight reruns when its weight (or a statistic folded into
    it) is written after bind."""
    net = _net()
    args, aux = _arrays(net, x=(2, 4, 12, 12))
    exe, plain = (_bind(net, args, aux, on, monkeypatch) for on in (True, False))
    first = exe.forward()[0].asnumpy()
    np.testing.assert_allclose(first, plain.forward()[0].asnumpy(), rtol=1e-4, atol=1e-4)
    for name in ("b_weight", "s_weight"):
        args[name][:] = RNG.standard_normal(args[name].shape)
    aux["bn_b_moving_var"][:] = RNG.uniform(0.5, 2.0, aux["bn_b_moving_var"].shape)
    second = exe.forward()[0].asnumpy()
    assert not np.allclose(first, second)
    np.testing.assert_allclose(second, plain.forward()[0].asnumpy(), rtol=1e-4, atol=1e-4)


def test_a_lone_convolution_stays_channels_first(monkeypatch: pytest.MonkeyPatch) -> None:
    """One twin alone would pay a transpose in and out for what it saves."""
    x = sym.var("x")
    net = sym.relu(sym.Convolution(x, kernel=(3, 3), pad=(1, 1), num_filter=4, name="c") + x)
    args, aux = _arrays(net, x=(2, 4, 6, 6))
    exe = _bind(net, args, aux, True, monkeypatch)
    assert "transpose" not in _ops(exe)
    assert all("channels" not in str(v) for v in exe._simplified.values())


def test_what_has_no_twin_stays_channels_first(monkeypatch: pytest.MonkeyPatch) -> None:
    """Grouped convolutions, lp pooling and 1-D convolutions keep their own layout; the
    knob turns the pass off."""
    x = sym.var("x")
    y = sym.Convolution(x, kernel=(3, 3), pad=(1, 1), num_filter=4, num_group=2, name="g")
    y = sym.Pooling(y, kernel=(2, 2), pool_type="lp", p_value=2, name="lp")
    y = sym.Convolution(y, kernel=(1, 1), num_filter=4, num_group=4, name="dw")
    args, aux = _arrays(y, x=(1, 4, 6, 6))
    assert _ops(_bind(y, args, aux, True, monkeypatch)) == ["Convolution", "Pooling", "Convolution"]
    net = _net()
    args, aux = _arrays(net, x=(1, 4, 12, 12))
    assert CONV_OP not in str(_ops(_bind(net, args, aux, False, monkeypatch)))


def test_a_max_pool_first_keeps_its_layout() -> None:
    """Pooling follows (it never starts the layout); a convolution pair still does."""
    x = sym.var("x")
    y = sym.Pooling(x, kernel=(2, 2), stride=(2, 2), name="p")
    y = sym.Convolution(y, kernel=(1, 1), num_filter=4, name="c1")
    y = sym.Convolution(y, kernel=(3, 3), pad=(1, 1), num_filter=4, name="c2")
    g = apply_passes(Graph(y._heads), ["InferShape", "InferType", "ChannelsLast"],
                     shapes={"x": (1, 3, 8, 8)}, dtypes={"x": "float32"})  # fmt: skip
    ops = [n.op.name for n in g.indexed.nodes if n.op is not None]
    assert ops == ["Pooling", "transpose", WEIGHT_OP, CONV_OP, WEIGHT_OP, CONV_OP, "transpose"]
    assert g.attrs["channels_last"]["p_nhwc"] == "transpose: 'p' to channels-last"


def test_a_begin_state_learns_its_batch_through_the_twins(monkeypatch: pytest.MonkeyPatch) -> None:
    """A zeros input of unknown batch size gets it from the layer reading it (as MXNet's
    Convolution infers it), through the transposes and twins too."""
    x = sym.var("x")
    state = sym.zeros(shape=(0, 4, 5, 5))
    h = sym.Convolution(state, kernel=(3, 3), pad=(1, 1), num_filter=4, name="h2h")
    i = sym.Convolution(x, kernel=(3, 3), pad=(1, 1), num_filter=4, name="i2h")
    net = sym.relu(h + i)
    args, aux = _arrays(net, x=(3, 2, 5, 5))
    exe, plain = (_bind(net, args, aux, on, monkeypatch) for on in (True, False))
    assert CONV_OP in str(_ops(exe))
    np.testing.assert_allclose(exe.forward()[0].asnumpy(), plain.forward()[0].asnumpy(),
                               rtol=1e-5, atol=1e-5)  # fmt: skip


@pytest.mark.parametrize("op", [WEIGHT_OP, CONV_OP, POOL_OP])
def test_the_twins_are_made_by_the_pass_only(op: str) -> None:
    with pytest.raises(ParamError, match=f"{op}: node 'n' cannot be made .* ChannelsLast pass"):
        nv.Op.get(op).parse_attrs({"kernel": "(3, 3)"}, "n")


def _random_net(rng: np.random.Generator) -> tuple[Any, tuple[int, ...]]:
    """A random chain of 2-D layers a twin may replace (or not), with skips where shapes
    allow: convolutions of any window, pooling of every type and convention, BatchNorm,
    relu, residual adds, a 1-D-free mix of what the pass meets in image networks."""
    shape = (int(rng.integers(1, 3)), int(rng.integers(1, 7)), *rng.integers(6, 13, 2))
    y = sym.var("x")
    cur = tuple(int(d) for d in shape)
    seen = {cur: y}
    for i in range(int(rng.integers(3, 8))):
        kind = rng.choice(["conv", "conv", "conv", "pool", "relu", "bn", "add"])
        h, w = cur[2], cur[3]
        if kind == "conv":
            k = int(rng.integers(1, 4))
            s, d = int(rng.integers(1, 3)), int(rng.integers(1, 3))
            p = int(rng.integers(0, k))
            if (k - 1) * d + 1 > min(h, w) + 2 * p:
                continue
            f, g = int(rng.integers(1, 7)), 1
            if rng.random() < 0.2 and cur[1] % 2 == 0 and f % 2 == 0:
                g = 2  # grouped: no twin
            y = sym.Convolution(y, kernel=(k, k), stride=(s, s), pad=(p, p), dilate=(d, d),
                                num_filter=f, num_group=g, no_bias=bool(rng.random() < 0.3),
                                name=f"c{i}")  # fmt: skip
            ho, wo = ((x + 2 * p - (k - 1) * d - 1) // s + 1 for x in (h, w))
            cur = (cur[0], f, ho, wo)
        elif kind == "pool":
            k = int(rng.integers(1, 4))
            if k > min(h, w):
                continue
            s, p = int(rng.integers(1, 3)), int(rng.integers(0, k))
            conv = str(rng.choice(["valid", "full"]))
            y = sym.Pooling(y, kernel=(k, k), stride=(s, s), pad=(p, p), name=f"p{i}",
                            pool_type=str(rng.choice(["max", "avg", "sum"])),
                            pooling_convention=conv)  # fmt: skip
            up = -(-(h + 2 * p - k) // s) if conv == "full" else (h + 2 * p - k) // s
            wp = -(-(w + 2 * p - k) // s) if conv == "full" else (w + 2 * p - k) // s
            cur = (cur[0], cur[1], up + 1, wp + 1)
        elif kind == "relu":
            y = sym.relu(y)
        elif kind == "bn":
            y = sym.BatchNorm(y, name=f"bn{i}")
        elif cur in seen and seen[cur] is not y:
            y = y + seen[cur]
        seen[cur] = y
        if min(cur[2:]) < 1:
            return _random_net(rng)
    return sym.Pooling(y, global_pool=True, pool_type="avg"), shape


@pytest.mark.parametrize("seed", range(24))
def test_random_image_networks_agree_with_the_channels_first_graph(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = np.random.default_rng(seed)
    net, shape = _random_net(rng)
    arg_shapes, _, aux_shapes = net.infer_shape(x=shape)
    args = {
        n: nv.nd.array(rng.standard_normal(s)) for n, s in zip(net.list_arguments(), arg_shapes)
    }
    aux = {n: nv.nd.array(rng.uniform(0.5, 2.0, s))
           for n, s in zip(net.list_auxiliary_states(), aux_shapes)}  # fmt: skip
    exe, plain = (_bind(net, args, aux, on, monkeypatch) for on in (True, False))
    np.testing.assert_allclose(exe.forward()[0].asnumpy(), plain.forward()[0].asnumpy(),
                               rtol=1e-4, atol=1e-4)  # fmt: skip
