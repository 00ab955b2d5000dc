"""Normalisation and activation layers beyond the op table (tests/ops/cases_layers.py).

Gradients against NumPy formulas derived by hand (and MXNet's test_operator ones) on
every device, grad_req='add', rows long enough that the CPU backward sums its partials
over several chunks, rrelu's random slopes, softmax's lengths and dtypes, the
IdentityAttachKLSparseReg state update, and bad input: a named error, after which the
registry and the engine keep working.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy.base import InferError, NNVMError, ParamError
from nnvmpy.imperative import invoke
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
    sym: Any, ctx: nv.Context, args: dict[str, np.ndarray], dy: Any, req: str = "write",
    start: dict[str, np.ndarray] | None = None, is_train: bool = True,
) -> tuple[list[np.ndarray], dict[str, np.ndarray]]:  # fmt: skip
    """Forward and backward on ctx: (outputs, gradients); `start` fills grad arrays."""
    arrays = {k: nv.nd.array(v, ctx=ctx, dtype=v.dtype) for k, v in args.items()}
    grads = {
        k: nv.nd.array((start or {}).get(k, np.zeros_like(v)), ctx=ctx, dtype=v.dtype)
        for k, v in args.items()
    }
    exe = sym.bind(ctx, arrays, args_grad=grads, grad_req=req)
    outs = [o.asnumpy() for o in exe.forward(is_train=is_train)]
    heads = dy if isinstance(dy, list) else [dy]
    exe.backward([nv.nd.array(h, ctx=ctx, dtype=h.dtype) for h in heads])
    return outs, {k: g.asnumpy() for k, g in exe.grad_dict.items()}


# -- LayerNorm, GroupNorm, InstanceNorm -------------------------------------------------------


def layer_norm_grads(x, gamma, dy, axis, eps):
    """MXNet test_operator's npy_layer_norm_grad: (dx, dgamma, dbeta)."""
    mean = x.mean(axis=axis, keepdims=True)
    std = np.sqrt(x.var(axis=axis, keepdims=True) + eps)
    xhat = (x - mean) / std
    others = tuple(i for i in range(x.ndim) if i != axis % x.ndim)
    shape = [1] * x.ndim
    shape[axis] = -1
    w = dy * gamma.reshape(shape) / std
    dx = w - w.mean(axis=axis, keepdims=True) - xhat * (w * xhat).mean(axis=axis, keepdims=True)
    return dx, (xhat * dy).sum(axis=others), dy.sum(axis=others)


@pytest.mark.parametrize(
    ("shape", "axis"), [((4, 6), -1), ((3, 5, 4), 1), ((5, 3, 2), 0), ((70, 33), -1)]
)
@pytest.mark.parametrize("req", ["write", "add"])
def test_layer_norm_gradient_matches_the_formula(dev, shape, axis, req) -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=shape)
    gamma, beta = rng.normal(size=shape[axis]), rng.normal(size=shape[axis])
    dy = rng.normal(size=shape)
    start = {k: rng.normal(size=v.shape) for k, v in (("x", x), ("g", gamma), ("b", beta))}
    sym = nv.sym.LayerNorm(V("x"), V("g"), V("b"), axis=axis, eps=1e-4)
    _, got = run(sym, dev, {"x": x, "g": gamma, "b": beta}, dy, req, start)
    want = layer_norm_grads(x, gamma, dy, axis, 1e-4)
    for name, w in zip(("x", "g", "b"), want):
        expected = w + start[name] if req == "add" else w
        assert_almost_equal(got[name], expected, rtol=1e-8, atol=1e-10, names=(name, "numpy"))


def test_layer_norm_float32_rows_longer_than_a_vector() -> None:
    """A BERT-sized row in float32, many rows: partial sums over chunks of rows."""
    rng = np.random.default_rng(1)
    x = rng.normal(3.0, 2.0, size=(257, 768)).astype(np.float32)
    gamma = rng.uniform(0.5, 1.5, 768).astype(np.float32)
    beta = rng.normal(size=768).astype(np.float32)
    dy = rng.normal(size=x.shape).astype(np.float32)
    sym = nv.sym.LayerNorm(V("x"), V("g"), V("b"))
    (out,), got = run(sym, nv.cpu(), {"x": x, "g": gamma, "b": beta}, dy)
    x64 = x.astype(np.float64)
    xhat = (x64 - x64.mean(-1, keepdims=True)) / np.sqrt(x64.var(-1, keepdims=True) + 1e-5)
    assert_almost_equal(out, xhat * gamma + beta, rtol=1e-4, atol=1e-4)
    want = layer_norm_grads(x64, gamma.astype(np.float64), dy.astype(np.float64), -1, 1e-5)
    for name, w in zip(("x", "g", "b"), want):
        assert_almost_equal(got[name], w, rtol=1e-3, atol=1e-3, names=(name, "numpy"))


def test_layer_norm_float32_column_sums_over_many_rows_stay_accurate() -> None:
    """dgamma/dbeta of 8192 float32 rows: each chunk adds ~1000 products per column, which
    in float32 drifted 1.8e-4 from the exact sum (MXNet's test_layer_norm asks 1e-4);
    float64 partials leave the final float32 rounding (~1e-5 at |sum| ~ 100)."""
    rng = np.random.default_rng(7)
    x = rng.normal(size=(8192, 256)).astype(np.float32)
    gamma = rng.normal(size=256).astype(np.float32)
    dy = rng.normal(size=x.shape).astype(np.float32)
    sym = nv.sym.LayerNorm(V("x"), V("g"), V("b"), eps=1e-3)
    _, got = run(sym, nv.cpu(), {"x": x, "g": gamma, "b": np.zeros_like(gamma)}, dy)
    x64, dy64 = x.astype(np.float64), dy.astype(np.float64)
    xhat = (x64 - x64.mean(-1, keepdims=True)) / np.sqrt(x64.var(-1, keepdims=True) + 1e-3)
    np.testing.assert_allclose(got["g"], (xhat * dy64).sum(0), rtol=0, atol=5e-5)
    np.testing.assert_allclose(got["b"], dy64.sum(0), rtol=0, atol=5e-5)


def test_layer_norm_output_mean_var_outputs_and_names() -> None:
    sym = nv.sym.LayerNorm(V("x"), output_mean_var=True, axis=1, name="ln")
    assert sym.list_arguments() == ["x", "ln_gamma", "ln_beta"]
    assert sym.list_outputs() == ["ln_output", "ln_mean", "ln_std"]
    args, outs, _ = sym.infer_shape(x=(2, 3, 4))
    assert args == [(2, 3, 4), (3,), (3,)]
    assert outs == [(2, 3, 4), (2, 1, 4), (2, 1, 4)]
    assert nv.sym.LayerNorm(V("x"), name="ln").list_outputs() == ["ln_output"]
    # gamma's shape gives the axis length back to a partly known data shape
    args, _, _ = nv.sym.LayerNorm(V("x"), name="ln").infer_shape_partial(x=(2, 0), ln_gamma=(7,))
    assert args[0] == (2, 7)


def group_norm_grads(x, gamma, dy, groups, eps):
    """dx, dgamma, dbeta with one gamma per group (MXNet 1.9.1's np_groupnorm_grad)."""
    n = x.shape[0]
    xg, dyg = x.reshape(n, groups, -1), dy.reshape(n, groups, -1)
    std = np.sqrt(xg.var(axis=2, keepdims=True) + eps)
    xhat = (xg - xg.mean(axis=2, keepdims=True)) / std
    w = dyg * gamma.reshape(1, -1, 1) / std
    dx = w - w.mean(axis=2, keepdims=True) - xhat * (w * xhat).mean(axis=2, keepdims=True)
    return dx.reshape(x.shape), (xhat * dyg).sum(axis=(0, 2)), dyg.sum(axis=(0, 2))


@pytest.mark.parametrize("req", ["write", "add"])
def test_group_norm_gradient_matches_the_formula(dev, req) -> None:
    rng = np.random.default_rng(2)
    x, dy = rng.uniform(0.2, 1.0, size=(3, 6, 2, 3)), rng.normal(size=(3, 6, 2, 3))
    gamma, beta = rng.normal(size=3), rng.normal(size=3)
    start = {"x": rng.normal(size=x.shape), "g": rng.normal(size=3), "b": rng.normal(size=3)}
    sym = nv.sym.GroupNorm(V("x"), V("g"), V("b"), num_groups=3)
    _, got = run(sym, dev, {"x": x, "g": gamma, "b": beta}, dy, req, start)
    for name, w in zip(("x", "g", "b"), group_norm_grads(x, gamma, dy, 3, 1e-5)):
        expected = w + start[name] if req == "add" else w
        assert_almost_equal(got[name], expected, rtol=1e-8, atol=1e-10, names=(name, "numpy"))


def test_group_norm_gamma_is_per_group_and_shapes_infer_both_ways() -> None:
    sym = nv.sym.GroupNorm(V("x"), num_groups=2, output_mean_var=True, name="gn")
    args, outs, _ = sym.infer_shape(x=(4, 6, 3, 3))
    assert args == [(4, 6, 3, 3), (2,), (2,)]
    assert outs == [(4, 6, 3, 3), (4, 2), (4, 2)]
    args, _, _ = nv.sym.GroupNorm(V("x"), num_groups=3).infer_shape_partial()
    assert args[1:] == [(3,), (3,)]  # gamma's shape needs no data


@pytest.mark.parametrize("shape", [(1, 1, 1), (2, 1, 2), (2, 4, 5, 6), (3, 3, 2, 3, 2, 1, 1)])
def test_instance_norm_forward_and_gradient(dev, shape) -> None:
    """MXNet's test_instance_normalization shapes; the gradient by finite differences."""
    rng = np.random.default_rng(3)
    x, gamma, beta = rng.normal(size=shape), rng.normal(size=shape[1]), rng.normal(size=shape[1])
    sym = nv.sym.InstanceNorm(V("x"), V("g"), V("b"), eps=1e-3)
    axes = tuple(range(2, len(shape)))
    xhat = (x - x.mean(axes, keepdims=True)) / np.sqrt(x.var(axes, keepdims=True) + 1e-3)
    bshape = (1, -1) + (1,) * (len(shape) - 2)
    want = xhat * gamma.reshape(bshape) + beta.reshape(bshape)
    out = nv.nd.InstanceNorm(*(nv.nd.array(a, ctx=dev, dtype=a.dtype) for a in (x, gamma, beta)))
    assert_almost_equal(out.asnumpy(), want, rtol=1e-10, atol=1e-12)
    if dev.device_type == "cpu":
        check_numeric_gradient(
            sym, {"x": x, "g": gamma, "b": beta}, numeric_eps=1e-6, dtype=np.float64
        )
    else:  # the GPU kernels agree with the CPU's
        dy = rng.normal(size=shape)
        _, on_gpu = run(sym, dev, {"x": x, "g": gamma, "b": beta}, dy)
        _, on_cpu = run(sym, nv.cpu(), {"x": x, "g": gamma, "b": beta}, dy)
        for name in on_cpu:
            assert_almost_equal(on_gpu[name], on_cpu[name], rtol=1e-10, atol=1e-12)


# -- L2Normalization, LRN ---------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["instance", "channel", "spatial"])
def test_l2_normalization_gradient_matches_the_formula(dev, mode) -> None:
    """dx = (dy - y * sum(dy * y)) / norm over the mode's axes."""
    rng = np.random.default_rng(4)
    x, dy = rng.uniform(-1, 1, size=(3, 4, 5)), rng.normal(size=(3, 4, 5))
    axes = {"instance": (1, 2), "channel": (1,), "spatial": (2,)}[mode]
    norm = np.sqrt((x * x).sum(axis=axes, keepdims=True) + 1e-10)
    y = x / norm
    want = (dy - y * (dy * y).sum(axis=axes, keepdims=True)) / norm
    (out,), got = run(nv.sym.L2Normalization(V("x"), mode=mode), dev, {"x": x}, dy)
    assert_almost_equal(out, y, rtol=1e-12, atol=1e-14)
    assert_almost_equal(got["x"], want, rtol=1e-10, atol=1e-12)


def test_lrn_matches_mxnet_values_and_has_mxnets_outputs(dev) -> None:
    """Values MXNet 1.9.1 gives for x = 1..4 across channels, nsize 3, alpha=beta=knorm=1."""
    x = nv.nd.array(np.arange(1.0, 5.0).reshape(1, 4, 1, 1), ctx=dev)
    y = nv.nd.LRN(x, nsize=3, alpha=1.0, beta=1.0, knorm=1.0).asnumpy().ravel()
    assert_almost_equal(y, [0.375, 0.3529412, 0.28125, 0.42857143], rtol=1e-6, atol=1e-7)
    sym = nv.sym.LRN(V("data"), nsize=1, name="lrn")
    assert sym.list_outputs() == ["lrn_output"]
    assert output_names("LRN") == ["output", "tmp_norm"]


def output_names(name: str) -> list[str]:
    op = nv.Op.get(name)
    return list(op.get_attr("FListOutputNames")(op.parse_attrs({"nsize": 1})))


@pytest.mark.parametrize("nsize", [1, 3, 4])
def test_lrn_gradient(dev, nsize) -> None:
    rng = np.random.default_rng(5)
    x = rng.normal(size=(2, 6, 3))
    sym = nv.sym.LRN(V("x"), nsize=nsize, alpha=0.5, beta=0.75, knorm=1.5)
    if dev.device_type == "cpu":
        check_numeric_gradient(sym, {"x": x}, numeric_eps=1e-6, dtype=np.float64)
    else:
        dy = rng.normal(size=x.shape)
        _, on_gpu = run(sym, dev, {"x": x}, dy)
        _, on_cpu = run(sym, nv.cpu(), {"x": x}, dy)
        assert_almost_equal(on_gpu["x"], on_cpu["x"], rtol=1e-10, atol=1e-12)


def lrn_reference(x, dy, nsize, alpha, beta, knorm):
    """(y, tmp_norm, dx) by the formulas of lrn.py's docstring, in float64."""
    C, h = x.shape[1], nsize // 2
    sq = x * x
    t = np.empty_like(x)
    for c in range(C):
        t[:, c] = knorm + alpha / nsize * sq[:, max(c - h, 0) : min(c - h + nsize, C)].sum(1)
    q = dy * x * t ** (-beta - 1)
    dx = dy * t**-beta
    for c in range(C):  # the windows holding c start at c + h - nsize + 1 .. c + h
        window = q[:, max(c + h - nsize + 1, 0) : min(c + h + 1, C)].sum(1)
        dx[:, c] -= 2 * beta * alpha / nsize * x[:, c] * window
    return x * t**-beta, t, dx


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(
    ("shape", "nsize"), [((2, 7, 17, 19), 5), ((3, 4, 600), 2), ((2, 3, 5), 7)]
)
def test_lrn_values_and_gradient_match_the_formulas(dev, shape, nsize, dtype) -> None:
    """Positions beyond one CPU task's span (256) with a tail, even and wider-than-C
    windows; the output, tmp_norm and the gradient (written and added) against float64
    formulas, float32 within a few ulps."""
    rng = np.random.default_rng(8)
    x = rng.normal(size=shape).astype(dtype)
    dy = rng.normal(size=shape).astype(dtype)
    p = {"nsize": nsize, "alpha": 0.3, "beta": 0.7, "knorm": 1.5}
    y, t, dx = lrn_reference(x.astype(np.float64), dy.astype(np.float64), **p)
    rtol = 1e-5 if dtype == np.float32 else 1e-12
    out, tmp = invoke(nv.Op.get("LRN"), [nv.nd.array(x, ctx=dev, dtype=dtype)], p)
    assert_almost_equal(out.asnumpy(), y, rtol=rtol, atol=0)
    assert_almost_equal(tmp.asnumpy(), t, rtol=rtol, atol=0)
    start = rng.normal(size=shape).astype(dtype)
    for req, base in (("write", 0), ("add", start)):
        _, got = run(nv.sym.LRN(V("x"), **p), dev, {"x": x}, dy, req=req, start={"x": start})
        assert_almost_equal(got["x"], dx + base, rtol=rtol, atol=rtol)


# -- LeakyReLU: prelu and rrelu ---------------------------------------------------------------


@pytest.mark.parametrize("gshape", [(4,), (3, 4), (1,)])
def test_prelu_gradient_sums_over_the_shared_elements(dev, gshape) -> None:
    """MXNet's test_prelu reference: dgamma sums x (x <= 0) over each gamma's elements."""
    rng = np.random.default_rng(6)
    x = rng.uniform(-1, 1, size=(3, 4, 5))
    gamma = rng.uniform(0.1, 0.4, size=gshape)
    dy = rng.normal(size=x.shape)
    g = gamma.reshape(gshape + (1,) * (3 - len(gshape))) if len(gshape) == 2 else gamma
    g = g.reshape(1, 4, 1) if gshape == (4,) else g
    neg = np.where(x > 0, 0.0, x) * dy
    if gshape == (4,):
        dgamma = neg.sum(axis=(0, 2))
    elif gshape == (3, 4):
        dgamma = neg.sum(axis=2)
    else:
        dgamma = neg.sum(keepdims=True).reshape(1)
    sym = nv.sym.LeakyReLU(V("x"), V("g"), act_type="prelu")
    (out,), got = run(sym, dev, {"x": x, "g": gamma}, dy)
    assert_almost_equal(out, np.where(x > 0, x, g * x), rtol=1e-12, atol=1e-14)
    assert_almost_equal(got["x"], np.where(x > 0, 1.0, g) * dy, rtol=1e-12, atol=1e-14)
    assert_almost_equal(got["g"], dgamma, rtol=1e-10, atol=1e-12)


def test_prelu_gamma_defaults_to_channels_and_bad_gamma_is_named() -> None:
    sym = nv.sym.LeakyReLU(V("x"), act_type="prelu", name="act")
    assert sym.list_arguments() == ["x", "act_gamma"]
    assert sym.infer_shape(x=(2, 5, 3))[0] == [(2, 5, 3), (5,)]
    with pytest.raises(InferError, match=r"gamma.*cannot broadcast"):
        nv.nd.LeakyReLU(nv.nd.ones((2, 5, 3)), nv.nd.ones((3,)), act_type="prelu")
    assert nv.nd.LeakyReLU(nv.nd.array([-2.0, 2.0])).asnumpy().tolist() == [-0.5, 2.0]


def test_rrelu_draws_slopes_in_training_and_uses_their_mean_at_inference(dev) -> None:
    rng = np.random.default_rng(7)
    x = rng.uniform(-1, 1, size=(50, 40))
    x[np.abs(x) < 1e-3] = 0.5
    dy = rng.normal(size=x.shape)
    sym = nv.sym.LeakyReLU(V("x"), act_type="rrelu", lower_bound=0.1, upper_bound=0.4, name="r")
    assert sym.list_outputs() == ["r_output", "r_mask"]
    nv.random.seed(11)
    (out, mask), got = run(sym, dev, {"x": x}, [dy, np.zeros_like(dy)])
    assert ((mask >= 0.1) & (mask < 0.4)).all()
    assert abs(mask.mean() - 0.25) < 0.01  # uniform on [0.1, 0.4): mean 0.25, sd 0.087/sqrt(2000)
    assert len(np.unique(mask)) > 1000
    assert_almost_equal(out, np.where(x > 0, x, mask * x), rtol=1e-12, atol=1e-14)
    assert_almost_equal(got["x"], np.where(x > 0, 1.0, mask) * dy, rtol=1e-12, atol=1e-14)
    nv.random.seed(11)  # the same seed draws the same slopes
    (_, again), _ = run(sym, dev, {"x": x}, [dy, np.zeros_like(dy)])
    np.testing.assert_array_equal(again, mask)
    out, mask = nv.nd.LeakyReLU(
        nv.nd.array(x, ctx=dev), act_type="rrelu", lower_bound=0.1, upper_bound=0.4
    )
    assert_almost_equal(mask.asnumpy(), np.full(x.shape, 0.25), rtol=1e-6, atol=1e-7)
    assert_almost_equal(out.asnumpy(), np.where(x > 0, x, 0.25 * x), rtol=1e-6, atol=1e-7)


# -- softmax: use_length, dtype, softmin ------------------------------------------------------


def test_softmax_use_length_forward_and_gradient(dev) -> None:
    rng = np.random.default_rng(8)
    x, dy = rng.normal(size=(2, 5, 3)), rng.normal(size=(2, 5, 3))
    length = np.array([[1, 5, 0], [3, 2, 4]], dtype=np.int32)
    sym = nv.sym.softmax(V("x"), V("len"), axis=1, use_length=True)
    assert sym.list_arguments() == ["x", "len"]
    (y,), got = run(sym, dev, {"x": x, "len": length}, dy)
    want_y, want_dx = np.zeros_like(x), np.zeros_like(x)
    for i in range(2):
        for j in range(3):
            n = length[i, j]
            e = np.exp(x[i, :n, j] - x[i, :n, j].max()) if n else np.zeros(0)
            p = e / e.sum() if n else e
            want_y[i, :n, j] = p
            want_dx[i, :n, j] = p * (dy[i, :n, j] - (p * dy[i, :n, j]).sum())
    assert_almost_equal(y, want_y, rtol=1e-12, atol=1e-14)
    assert_almost_equal(got["x"], want_dx, rtol=1e-10, atol=1e-12)
    assert got["len"].dtype == np.int32
    assert not got["len"].any()


def test_softmax_length_out_of_range_is_named_and_the_engine_goes_on() -> None:
    x = nv.nd.ones((2, 3))
    bad = nv.nd.softmax(x, nv.nd.array([4, 1], dtype="int32"), use_length=True)
    with pytest.raises(NNVMError, match=r"softmax: length\[0\] = 4 is out of range"):
        bad.asnumpy()
    with pytest.raises(InferError, match="integer dtype"):
        nv.nd.softmax(x, nv.nd.array([1.0, 2.0]), use_length=True)
    with pytest.raises(ParamError, match="use_length"):
        nv.nd.log_softmax(x, use_length=True)
    ok = nv.nd.softmax(x, nv.nd.array([3, 1], dtype="int32"), use_length=True).asnumpy()
    assert_almost_equal(ok, [[1 / 3] * 3, [1, 0, 0]], rtol=1e-6, atol=1e-7)


def test_softmax_dtype_sets_the_output_type_and_infers_both_ways() -> None:
    x = nv.nd.array([[1.0, 2.0, 3.0]], dtype="float16")
    y = nv.nd.softmax(x, dtype="float32")
    assert y.dtype == np.float32
    e = np.exp([1.0, 2.0, 3.0])
    assert_almost_equal(y.asnumpy()[0], e / e.sum(), rtol=1e-3, atol=1e-3)
    arg, out, _ = nv.sym.softmax(V("x"), dtype="float64").infer_type(x=np.float32)
    assert (arg, out) == ([np.float32], [np.float64])
    arg, out, _ = nv.sym.log_softmax(V("x")).infer_type(x=np.float16)
    assert (arg, out) == ([np.float16], [np.float16])


def test_softmin_and_its_gradient(dev) -> None:
    rng = np.random.default_rng(9)
    x, dy = rng.normal(size=(3, 4)), rng.normal(size=(3, 4))
    (y,), got = run(nv.sym.softmin(V("x"), axis=0, temperature=0.5), dev, {"x": x}, dy)
    e = np.exp(-x / 0.5 - (-x / 0.5).max(axis=0))
    p = e / e.sum(axis=0)
    assert_almost_equal(y, p, rtol=1e-12, atol=1e-14)
    assert_almost_equal(got["x"], -p * (dy - (p * dy).sum(axis=0)) / 0.5, rtol=1e-10, atol=1e-12)


# -- IdentityAttachKLSparseReg ----------------------------------------------------------------


def test_kl_sparse_reg_updates_its_average_and_adds_the_penalty(dev) -> None:
    rng = np.random.default_rng(10)
    x, dy = rng.uniform(0.05, 0.95, size=(6, 3, 2)), rng.normal(size=(6, 3, 2))
    sym = nv.sym.IdentityAttachKLSparseReg(
        V("x"), sparseness_target=0.2, penalty=0.01, momentum=0.8, name="kl"
    )
    assert sym.list_auxiliary_states() == ["kl_moving_avg"]
    exe = sym.simple_bind(dev, x=x.shape, type_dict={"x": np.float64})
    exe.aux_dict["kl_moving_avg"][:] = 0.5
    out = exe.forward(is_train=True, x=x)[0].asnumpy()
    np.testing.assert_array_equal(out, x)
    exe.backward(nv.nd.array(dy, ctx=dev, dtype=np.float64))
    avg = 0.8 * 0.5 + 0.2 * x.mean(axis=(0, 2))
    assert_almost_equal(exe.aux_dict["kl_moving_avg"].asnumpy(), avg, rtol=1e-12, atol=1e-14)
    reg = 0.01 * (-0.2 / avg + 0.8 / (1 - avg))
    assert_almost_equal(
        exe.grad_dict["x"].asnumpy(), dy + reg.reshape(1, 3, 1), rtol=1e-12, atol=1e-14
    )


# -- bad input --------------------------------------------------------------------------------


def finish(result: Any) -> None:
    """Wait for an NDArray (its kernel's errors surface there); symbols are done."""
    if isinstance(result, nv.nd.NDArray):
        result.asnumpy()


@pytest.mark.parametrize(
    ("make", "error", "match"),
    [
        (
            lambda: nv.nd.GroupNorm(
                nv.nd.ones((2, 3, 4)), nv.nd.ones(2), nv.nd.ones(2), num_groups=2
            ),
            InferError,
            "does not divide",
        ),
        (
            lambda: nv.nd.GroupNorm(nv.nd.ones((2, 4)), nv.nd.ones(1), nv.nd.ones(1)),
            InferError,
            "at least 3 dimensions",
        ),
        (
            lambda: nv.nd.GroupNorm(
                nv.nd.ones((2, 4, 2)), nv.nd.ones(1), nv.nd.ones(1), num_groups=0
            ),
            ParamError,
            "num_groups",
        ),
        (
            lambda: nv.nd.LayerNorm(nv.nd.ones((2, 4)), nv.nd.ones(4), nv.nd.ones(4), axis=2),
            InferError,
            "axis 2 is out of range",
        ),
        (
            lambda: nv.nd.LayerNorm(nv.nd.ones((2, 4)), nv.nd.ones(3), nv.nd.ones(4)),
            InferError,
            "gamma",
        ),
        (
            lambda: nv.nd.InstanceNorm(nv.nd.ones((2, 4)), nv.nd.ones(4), nv.nd.ones(4)),
            InferError,
            "InstanceNorm",
        ),
        (
            lambda: nv.nd.L2Normalization(nv.nd.ones((2, 4)), mode="channel"),
            InferError,
            "L2Normalization",
        ),
        (lambda: nv.nd.L2Normalization(nv.nd.ones((2, 4)), mode="pixel"), ParamError, "mode"),
        (lambda: nv.nd.LRN(nv.nd.ones((2, 4, 3))), ParamError, "nsize"),
        (lambda: nv.nd.LRN(nv.nd.ones((2, 4, 3)), nsize=0), ParamError, "nsize"),
        (
            lambda: nv.nd.SoftmaxActivation(nv.nd.ones((2, 4)), mode="channel"),
            InferError,
            "at least 3",
        ),
        (
            lambda: nv.sym.LeakyReLU(V("x"), act_type="prelu").infer_shape(x=(4,)),
            InferError,
            "gamma",
        ),
        (lambda: nv.nd.softmax(nv.nd.ones((2, 4)), temperature=0.0), ParamError, "temperature"),
    ],
)
def test_bad_input_is_a_named_error_and_nothing_is_poisoned(make, error, match) -> None:
    with pytest.raises(error, match=match):
        finish(make())
    x = nv.nd.array([[1.0, 2.0], [3.0, 5.0]])
    y = nv.nd.LayerNorm(x, nv.nd.ones(2), nv.nd.zeros(2), eps=0.0).asnumpy()
    assert_almost_equal(y, [[-1.0, 1.0], [-1.0, 1.0]], rtol=1e-5, atol=1e-5)
    nv.nd.waitall()
