"""_contrib_BatchNormWithReLU's kernels (relu inside BatchNorm's, both directions) on the
CPU and the GPU, called as FCompute, against NumPy formulas.

Forward: out (=|+=) relu(BatchNorm(x)) and the moving statistics. Backward
(_backward_contrib_BatchNormWithReLU on dy, x, gamma, mean, invstd, y): BatchNorm's
gradient of g = relu's gradient of dy at the given output y (dy where y > 0, NaN where y
is, else dy * 0), for any y, so the kernels must read y and not recompute it. Shapes
cover inner 1, axis != 1, and on the GPU more elements than four passes of the apply
kernel's grid and several statistics blocks a channel.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy import Op
from nnvmpy.attrs import fcompute
from nnvmpy.base import OpReqType
from nnvmpy.engine.base import RunContext
from nnvmpy.resource import OpContext

# the simulator runs the statistics kernels' barriers: a finer switch interval (conftest)
pytestmark = pytest.mark.sim_barriers

W, A = OpReqType.kWriteTo, OpReqType.kAddTo
EPS, MOMENTUM = 1e-3, 0.9
SHAPES = [((2, 3, 4, 5), 1), ((70, 3), 1), ((3, 4, 5), -1), ((4, 5, 11, 13), 1)]
DEVICES = [pytest.param("cpu", id="cpu"), pytest.param("gpu", id="gpu", marks=pytest.mark.gpu)]


def _run(device: str, name: str, params: dict, train: bool, inputs: list, reqs: list,
         outputs: list) -> tuple[list, list]:  # fmt: skip
    """FCompute<device> of op `name`: (outputs, inputs) back as NumPy arrays."""
    op = Op.get(name)
    attrs = op.parse_attrs(params)
    if device == "cpu":
        ctx = OpContext(train, RunContext(nv.cpu(), None), [])
        op.get_attr(fcompute("cpu"))(attrs, ctx, inputs, reqs, outputs)
        return outputs, inputs
    from numba import cuda

    dev_in = [cuda.to_device(a) for a in inputs]
    dev_out = [cuda.to_device(o) for o in outputs]
    ctx = OpContext(train, RunContext(nv.gpu(0), None), [])
    op.get_attr(fcompute("gpu"))(attrs, ctx, dev_in, reqs, dev_out)
    return [o.copy_to_host() for o in dev_out], [a.copy_to_host() for a in dev_in]


def _channel_view(shape: tuple, axis: int) -> tuple[tuple[int, ...], list[int]]:
    axes = [i for i in range(len(shape)) if i != axis % len(shape)]
    bshape = [1] * len(shape)
    bshape[axis] = -1
    return tuple(axes), bshape


def _relu_grad(dy: np.ndarray, y: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        return np.where(y > 0, dy, np.where(np.isnan(y), y, dy - dy))


def _inputs(shape: tuple, axis: int, dtype: Any, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    c = shape[axis]
    x = rng.normal(0.3, 1.5, shape).astype(dtype)
    gamma = rng.uniform(0.5, 1.5, c).astype(dtype)
    beta = rng.normal(0, 0.5, c).astype(dtype)
    return [x, gamma, beta, rng.normal(size=c).astype(dtype), rng.uniform(0.5, 2, c).astype(dtype)]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize(("shape", "axis"), SHAPES)
@pytest.mark.parametrize("req", [W, A], ids=["write", "add"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_forward_is_relu_of_batch_norm(
    device: str, shape: tuple, axis: int, req: OpReqType, dtype: Any
) -> None:
    x, gamma, beta, mm, mv = _inputs(shape, axis, dtype, 1)
    c = shape[axis]
    old = np.random.default_rng(2).normal(size=shape).astype(dtype)
    outputs = [old.copy(), np.zeros(c, dtype), np.zeros(c, dtype)]
    params = {"fix_gamma": False, "axis": axis, "eps": EPS, "momentum": MOMENTUM}
    (out, mean, invstd), (_, _, _, mm2, mv2) = _run(
        device, "_contrib_BatchNormWithReLU", params, True, [x, gamma, beta, mm.copy(),
        mv.copy()], [req, W, W], outputs,
    )  # fmt: skip
    axes, bshape = _channel_view(shape, axis)
    x64 = x.astype(np.float64)
    mu, var = x64.mean(axis=axes), x64.var(axis=axes)
    bn = (x64 - mu.reshape(bshape)) / np.sqrt(var.reshape(bshape) + EPS)
    want = np.maximum(bn * gamma.reshape(bshape) + beta.reshape(bshape), 0)
    if req == A:
        want = want + old
    tol = {"rtol": 1e-4, "atol": 1e-5} if dtype == np.float32 else {"rtol": 1e-10, "atol": 1e-12}
    np.testing.assert_allclose(out, want, **tol)
    if req == W:
        assert (out == 0).any()
        assert (out > 0).any()
        assert not np.signbit(out).any(), "relu writes +0"
    np.testing.assert_allclose(mean, mu, **tol)
    np.testing.assert_allclose(invstd, 1 / np.sqrt(var + EPS), **tol)
    np.testing.assert_allclose(mm2, MOMENTUM * mm + (1 - MOMENTUM) * mu, **tol)
    np.testing.assert_allclose(mv2, MOMENTUM * mv + (1 - MOMENTUM) * var, **tol)


def _backward_ref(dy, x, gamma, y, axis, fix_gamma, batch):  # type: ignore[no-untyped-def]
    """(dx, dgamma, dbeta) of BatchNorm at its batch statistics (or global ones: mean 0,
    var 1), dy taken through relu's gradient at y."""
    axes, bshape = _channel_view(x.shape, axis)
    g = _relu_grad(dy.astype(np.float64), y.astype(np.float64))
    x64 = x.astype(np.float64)
    mu = x64.mean(axis=axes) if batch else np.zeros(x.shape[axis])
    invstd = 1 / np.sqrt((x64.var(axis=axes) if batch else np.ones(x.shape[axis])) + EPS)
    xhat = (x64 - mu.reshape(bshape)) * invstd.reshape(bshape)
    gam = np.ones_like(invstd) if fix_gamma else gamma.astype(np.float64)
    dbeta, dgamma = g.sum(axis=axes), (g * xhat).sum(axis=axes)
    k = (gam * invstd).reshape(bshape)
    if batch:
        m = x.size // x.shape[axis]
        dx = k * (g - (dbeta / m).reshape(bshape) - xhat * (dgamma / m).reshape(bshape))
    else:
        dx = k * g
    return dx, (0 * dgamma if fix_gamma else dgamma), dbeta, mu, invstd


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize(("shape", "axis"), SHAPES)
@pytest.mark.parametrize("req", [W, A], ids=["write", "add"])
@pytest.mark.parametrize(
    ("batch", "fix_gamma"), [(True, False), (True, True), (False, False)],
    ids=["batch", "fix_gamma", "global"],
)  # fmt: skip
def test_backward_takes_dy_through_relu_at_the_given_output(
    device: str, shape: tuple, axis: int, req: OpReqType, batch: bool, fix_gamma: bool
) -> None:
    rng = np.random.default_rng(3)
    x, gamma = _inputs(shape, axis, np.float64, 4)[:2]
    dy = rng.normal(size=shape)
    # any output: half zeros, the rest positive; not relu of this x
    y = np.where(rng.random(shape) < 0.5, 0.0, rng.uniform(0.1, 2, shape))
    want = _backward_ref(dy, x, gamma, y, axis, fix_gamma, batch)
    mean, invstd = want[3], want[4]
    olds = [rng.normal(size=shape), rng.normal(size=shape[axis]), rng.normal(size=shape[axis])]
    params = {"fix_gamma": fix_gamma, "axis": axis, "eps": EPS, "use_global_stats": not batch}
    got, _ = _run(
        device, "_backward_contrib_BatchNormWithReLU", params, True,
        [dy, x, gamma, mean, invstd, y], [req] * 3, [o.copy() for o in olds],
    )  # fmt: skip
    for name, g, w, old in zip(("dx", "dgamma", "dbeta"), got, want, olds):
        np.testing.assert_allclose(g, w + old if req == A else w, rtol=1e-9, atol=1e-11,
                                   err_msg=name)  # fmt: skip


@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")  # the simulator's inf * 0
@pytest.mark.parametrize("device", DEVICES)
def test_backward_special_values_as_relu_grad(device: str) -> None:
    """dy = inf where y == 0 makes relu's gradient NaN (inf * 0), hence its channel's sums
    and dx; NaN in y does the same; -0 and 0 in y cut dy. Other channels stay finite."""
    shape = (4, 3, 5)
    rng = np.random.default_rng(5)
    x, gamma = _inputs(shape, 1, np.float32, 6)[:2]
    dy = rng.normal(size=shape).astype(np.float32)
    y = rng.uniform(0.1, 1, shape).astype(np.float32)
    y[:, 2, :2] = -0.0
    y[1, 0, 3], dy[1, 0, 3] = 0.0, np.inf  # channel 0: inf * 0
    y[2, 1, 4] = np.nan  # channel 1: NaN output
    _, _, _, mean, invstd = _backward_ref(dy, x, gamma, y, 1, False, True)
    got, _ = _run(
        device, "_backward_contrib_BatchNormWithReLU", {"fix_gamma": False, "eps": EPS}, True,
        [dy, x, gamma, mean.astype(np.float32), invstd.astype(np.float32), y], [W] * 3,
        [np.zeros(shape, np.float32), np.zeros(3, np.float32), np.zeros(3, np.float32)],
    )  # fmt: skip
    dx, dgamma, dbeta = got
    assert np.isnan(dx[:, :2]).all()
    assert np.isnan(dbeta[:2]).all()
    assert np.isnan(dgamma[:2]).all()
    assert np.isfinite(dx[:, 2]).all()
    assert np.isfinite(dbeta[2])
    np.testing.assert_allclose(dbeta[2], dy[:, 2][y[:, 2] > 0].sum(dtype=np.float64), rtol=1e-5)


# -- _BatchNormAddReLU: relu(BatchNorm(x) + residual), and the residual's gradient ---------


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize(("shape", "axis"), SHAPES)
@pytest.mark.parametrize("req", [W, A], ids=["write", "add"])
def test_forward_adds_the_residual_before_relu(
    device: str, shape: tuple, axis: int, req: OpReqType
) -> None:
    x, gamma, beta, mm, mv = _inputs(shape, axis, np.float64, 7)
    res = np.random.default_rng(8).normal(size=shape)
    c = shape[axis]
    old = np.random.default_rng(9).normal(size=shape)
    params = {"fix_gamma": False, "axis": axis, "eps": EPS, "momentum": MOMENTUM}
    (out, mean, _), _ = _run(
        device, "_BatchNormAddReLU", params, True, [x, gamma, beta, mm, mv, res],
        [req, W, W], [old.copy(), np.zeros(c), np.zeros(c)],
    )  # fmt: skip
    axes, bshape = _channel_view(shape, axis)
    mu, var = x.mean(axis=axes), x.var(axis=axes)
    bn = (x - mu.reshape(bshape)) / np.sqrt(var.reshape(bshape) + EPS)
    want = np.maximum(bn * gamma.reshape(bshape) + beta.reshape(bshape) + res, 0)
    np.testing.assert_allclose(out, want + old if req == A else want, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(mean, mu, rtol=1e-10)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize(("shape", "axis"), SHAPES[:3])
@pytest.mark.parametrize(
    ("req", "req_res"), [(W, W), (W, A), (A, W), (W, OpReqType.kNullOp)],
    ids=["write", "res-add", "dx-add", "res-null"],
)  # fmt: skip
def test_backward_writes_relus_gradient_as_the_residuals(
    device: str, shape: tuple, axis: int, req: OpReqType, req_res: OpReqType
) -> None:
    """d residual (=|+=) relu's gradient of dy at y; d data from it as BatchNorm's (the
    second pass reads it back from d residual when that was written alone)."""
    rng = np.random.default_rng(10)
    x, gamma = _inputs(shape, axis, np.float64, 11)[:2]
    dy = rng.normal(size=shape)
    y = np.where(rng.random(shape) < 0.5, 0.0, rng.uniform(0.1, 2, shape))
    dx, dgamma, dbeta, mean, invstd = _backward_ref(dy, x, gamma, y, axis, False, True)
    c = shape[axis]
    olds = [rng.normal(size=shape), rng.normal(size=c), rng.normal(size=c), rng.normal(size=shape)]
    got, _ = _run(
        device, "_backward_BatchNormAddReLU", {"fix_gamma": False, "axis": axis, "eps": EPS},
        True, [dy, x, gamma, mean, invstd, y], [req, W, W, req_res], [o.copy() for o in olds],
    )  # fmt: skip
    dres = {W: _relu_grad(dy, y), A: olds[3] + _relu_grad(dy, y), OpReqType.kNullOp: olds[3]}
    wants = [dx + olds[0] if req == A else dx, dgamma, dbeta, dres[req_res]]
    for name, g, w in zip(("dx", "dgamma", "dbeta", "dres"), got, wants):
        np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-11, err_msg=name)


# -- under autograd (bench_gpu's BatchNorm+relu row runs this way) ---------------------------


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("residual", [False, True], ids=["relu", "add-relu"])
def test_autograd_gradients(device: str, residual: bool) -> None:
    """Recorded imperatively, the fused ops' FGradient gives BatchNorm's gradient of relu's
    gradient of dy, and the residual gets relu's gradient of dy itself."""
    ctx = nv.cpu() if device == "cpu" else nv.gpu(0)
    shape, axis = (3, 4, 5, 2), 1
    x, gamma, beta, mm, mv = _inputs(shape, axis, np.float64, 12)
    res = np.random.default_rng(13).normal(size=shape)
    dy = np.random.default_rng(14).normal(size=shape)
    arrays = [nv.nd.array(a, ctx=ctx, dtype=np.float64) for a in (x, gamma, beta, mm, mv, res)]
    for a in (arrays[0], arrays[1], arrays[2], arrays[5]):
        a.attach_grad()
    params = {"fix_gamma": False, "eps": EPS}
    with nv.autograd.record():
        if residual:
            y = nv.nd._internal._BatchNormAddReLU(*arrays, **params)
        else:
            y = nv.nd.contrib.BatchNormWithReLU(*arrays[:5], **params)
    y.backward(nv.nd.array(dy, ctx=ctx, dtype=np.float64))
    out = y.asnumpy()
    axes, bshape = _channel_view(shape, axis)
    bn = (x - x.mean(axis=axes).reshape(bshape)) / np.sqrt(x.var(axis=axes).reshape(bshape) + EPS)
    pre = bn * gamma.reshape(bshape) + beta.reshape(bshape) + (res if residual else 0)
    np.testing.assert_allclose(out, np.maximum(pre, 0), rtol=1e-10, atol=1e-12)
    dx, dgamma, dbeta = _backward_ref(dy, x, gamma, out, axis, False, True)[:3]
    got = [arrays[0].grad, arrays[1].grad, arrays[2].grad]
    for name, g, w in zip(("dx", "dgamma", "dbeta"), got, (dx, dgamma, dbeta)):
        np.testing.assert_allclose(g.asnumpy(), w, rtol=1e-9, atol=1e-11, err_msg=name)
    if residual:
        np.testing.assert_allclose(arrays[5].grad.asnumpy(), _relu_grad(dy, out))
