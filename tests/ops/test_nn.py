"""nn ops beyond the generic op table: loss gradients, training-mode BatchNorm, Dropout.

SoftmaxOutput's backward is the cross-entropy gradient (no head gradient needed);
BatchNorm in training uses and updates batch statistics; Dropout is random. Each is
compared with NumPy formulas or finite differences of a NumPy function, on every device
(the gpu variants run under NUMBA_ENABLE_CUDASIM=1 or on a real GPU).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from numeric_reference import numeric_grad, softmax_output_grad_ref

import nnvmpy as nv
from nnvmpy import test_utils

SIMULATOR = os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"


@pytest.fixture
def dev(ctx: nv.Context) -> Iterator[nv.Context]:
    """The device; the CUDA simulator runs one kernel at a time, so it gets NaiveEngine."""
    if ctx.device_type == "gpu" and SIMULATOR:
        with nv.engine.engine_type("NaiveEngine"):
            yield ctx
    else:
        yield ctx


def arr(x: Any, ctx: nv.Context) -> Any:
    x = np.asarray(x)
    return nv.nd.array(x, ctx=ctx, dtype=x.dtype)


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def bind_loss(sym: Any, ctx: nv.Context, **values: np.ndarray) -> Any:
    args = {k: arr(v, ctx) for k, v in values.items()}
    grads = {k: nv.nd.zeros(v.shape, ctx, dtype=v.dtype) for k, v in values.items()}
    return sym.bind(ctx, args, args_grad=grads, grad_req="write")


# -- SoftmaxOutput -------------------------------------------------------------------------------

LABEL = np.array([0, 3, -1, 2, 1, -1], dtype=np.float64)


def softmax_output_grad(p, label, classes, grad_scale, normalization, use_ignore, ignore=-1):
    """(softmax - onehot) * grad_scale / norm, rows with ignore_label zero when use_ignore."""
    onehot = np.zeros_like(p)
    for i, lab in enumerate(label.reshape(-1)):
        if 0 <= lab < classes:
            onehot.reshape(-1, classes)[i, int(lab)] = 1
    grad = (p - onehot) * grad_scale
    if use_ignore:
        grad[label.reshape(-1) == ignore] = 0
    norm = {
        "null": 1,
        "batch": label.shape[0],
        "valid": max(int((label != ignore).sum()), 1),
    }[normalization]
    return grad / norm


@pytest.mark.parametrize("normalization", ["null", "batch", "valid"])
@pytest.mark.parametrize("use_ignore", [False, True])
def test_softmax_output_gradient_needs_no_head_gradient(
    dev: nv.Context, normalization: str, use_ignore: bool
) -> None:
    x = np.random.default_rng(0).normal(size=(6, 4))
    sym = nv.sym.SoftmaxOutput(
        nv.sym.Variable("data"),
        nv.sym.Variable("label"),
        grad_scale=0.5,
        normalization=normalization,
        use_ignore=use_ignore,
    )
    exe = bind_loss(sym, dev, data=x, label=LABEL)
    out = exe.forward(is_train=True)[0].asnumpy()
    exe.backward()  # no out_grads: a loss head ignores them
    p = softmax(x)
    test_utils.assert_almost_equal(out, p, rtol=1e-10, atol=1e-12)
    want = softmax_output_grad(p, LABEL, 4, 0.5, normalization, use_ignore)
    test_utils.assert_almost_equal(exe.grad_dict["data"].asnumpy(), want, rtol=1e-10, atol=1e-12)
    assert not exe.grad_dict["label"].asnumpy().any()
    exe.forward(is_train=True)
    exe.backward([np.full((6, 4), 7.0)])  # a head gradient changes nothing
    test_utils.assert_almost_equal(exe.grad_dict["data"].asnumpy(), want, rtol=1e-10, atol=1e-12)


def test_softmax_output_gradient_adds_with_grad_req_add(dev: nv.Context) -> None:
    """'add' adds the gradient, zeros of ignored rows included, to what was there."""
    rng = np.random.default_rng(4)
    x, start = rng.normal(size=(6, 4)), rng.normal(size=(6, 4))
    kw = {"use_ignore": True, "smooth_alpha": 0.2}
    sym = nv.sym.SoftmaxOutput(nv.sym.Variable("data"), nv.sym.Variable("label"), **kw)
    grads = {"data": arr(start, dev), "label": nv.nd.zeros(LABEL.shape, dev, dtype=np.float64)}
    args = {"data": arr(x, dev), "label": arr(LABEL, dev)}
    exe = sym.bind(dev, args, args_grad=grads, grad_req={"data": "add", "label": "null"})
    exe.forward(is_train=True)
    exe.backward()
    p = softmax(x)
    want = start + softmax_output_grad_ref(p, LABEL, -1, kw, p)
    test_utils.assert_almost_equal(exe.grad_dict["data"].asnumpy(), want, rtol=1e-10, atol=1e-12)


def test_softmax_output_out_grad_multiplies_the_head_gradient(dev: nv.Context) -> None:
    rng = np.random.default_rng(1)
    x, dy = rng.normal(size=(6, 4)), rng.normal(size=(6, 4))
    sym = nv.sym.SoftmaxOutput(nv.sym.Variable("data"), nv.sym.Variable("label"), out_grad=True)
    exe = bind_loss(sym, dev, data=x, label=np.abs(LABEL))
    exe.forward(is_train=True)
    exe.backward([dy])
    want = softmax_output_grad(softmax(x), np.abs(LABEL), 4, 1.0, "null", False) * dy
    test_utils.assert_almost_equal(exe.grad_dict["data"].asnumpy(), want, rtol=1e-10, atol=1e-12)


def test_softmax_output_multi_output_and_smoothing(dev: nv.Context) -> None:
    rng = np.random.default_rng(2)
    x = rng.normal(size=(2, 3, 4))  # (N, C, d): softmax over C for each (n, d)
    label = np.array([[0, 2, -1, 1], [1, 1, 0, -1]], dtype=np.float64)
    alpha = 0.3
    sym = nv.sym.SoftmaxOutput(
        nv.sym.Variable("data"),
        nv.sym.Variable("label"),
        multi_output=True,
        use_ignore=True,
        normalization="valid",
        smooth_alpha=alpha,
    )
    exe = bind_loss(sym, dev, data=x, label=label)
    out = exe.forward(is_train=True)[0].asnumpy()
    exe.backward()
    p = softmax(x, axis=1)
    test_utils.assert_almost_equal(out, p, rtol=1e-10, atol=1e-12)
    target = np.full(x.shape, alpha / 2)  # alpha spread over the C - 1 other classes
    for n, d in np.ndindex(*label.shape):
        if label[n, d] >= 0:
            target[n, int(label[n, d]), d] = 1 - alpha
    want = (p - target) * (label != -1)[:, None, :] / 6  # 6 valid labels
    test_utils.assert_almost_equal(exe.grad_dict["data"].asnumpy(), want, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("chunk", [1, 7, 4096])
@pytest.mark.parametrize(
    ("shape", "axis", "kw"),
    [
        ((5, 9), -1, {"use_ignore": True, "normalization": "valid", "smooth_alpha": 0.2}),
        ((3, 4, 5), 1, {"multi_output": True, "use_ignore": True, "normalization": "batch"}),
        ((2, 3, 7), -1, {"preserve_shape": True, "out_grad": True, "grad_scale": 0.7}),
    ],
)
def test_softmax_output_gradient_by_chunks_of_elements(
    monkeypatch: pytest.MonkeyPatch, chunk: int, shape: tuple[int, ...], axis: int, kw: dict
) -> None:
    """The CPU computes the label gradient in chunks of elements, carrying (row, class)
    from one element to the next: chunk boundaries inside a row, at a row's end and past
    the array's end give NumPy's gradient."""
    from nnvmpy.ops.nn import loss

    monkeypatch.setattr(loss, "_CPU_CHUNK", chunk)
    rng = np.random.default_rng(chunk)
    x, dy = rng.normal(size=shape), rng.normal(size=shape)
    label_shape = tuple(d for a, d in enumerate(shape) if a != axis % len(shape))
    label = rng.integers(-1, shape[axis], label_shape).astype(np.float64)
    sym = nv.sym.SoftmaxOutput(nv.sym.Variable("data"), nv.sym.Variable("label"), **kw)
    exe = bind_loss(sym, nv.cpu(), data=x, label=label)
    p = exe.forward(is_train=True)[0].asnumpy()
    exe.backward([dy])
    want = softmax_output_grad_ref(p, label, axis, kw, dy)
    test_utils.assert_almost_equal(exe.grad_dict["data"].asnumpy(), want, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize(("normalization", "divisor"), [("null", 4), ("batch", 2 * 4)])
def test_softmax_output_multi_output_divides_by_the_spatial_size(
    normalization: str, divisor: int
) -> None:
    """MXNet: with multi_output, 'null' and 'batch' also divide by prod(d...) (here 4)."""
    rng = np.random.default_rng(4)
    x = rng.normal(size=(2, 3, 4))
    label = np.array([[0, 2, 1, 1], [1, 1, 0, 2]], dtype=np.float64)
    sym = nv.sym.SoftmaxOutput(nv.sym.Variable("data"), nv.sym.Variable("label"),
                               multi_output=True, normalization=normalization)  # fmt: skip
    exe = bind_loss(sym, nv.cpu(), data=x, label=label)
    exe.forward(is_train=True)
    exe.backward()
    one_hot = np.moveaxis(np.eye(3)[label.astype(int)], -1, 1)
    want = (softmax(x, axis=1) - one_hot) / divisor
    test_utils.assert_almost_equal(exe.grad_dict["data"].asnumpy(), want, rtol=1e-10, atol=1e-12)


def test_softmax_output_preserve_shape_and_label_inference() -> None:
    sym = nv.sym.SoftmaxOutput(nv.sym.Variable("data"), preserve_shape=True, name="softmax")
    assert sym.list_arguments() == ["data", "softmax_label"]
    assert sym.list_outputs() == ["softmax_output"]
    args, outs, _ = sym.infer_shape(data=(2, 3, 5))
    assert args == [(2, 3, 5), (2, 3)]
    assert outs == [(2, 3, 5)]
    plain = nv.sym.SoftmaxOutput(nv.sym.Variable("data"), name="sm")
    assert plain.infer_shape(data=(4, 10))[0] == [(4, 10), (4,)]
    multi = nv.sym.SoftmaxOutput(nv.sym.Variable("data"), multi_output=True, name="mo")
    assert multi.infer_shape(data=(2, 3, 4, 5))[0][1] == (2, 4, 5)
    assert multi.infer_shape(data=(2, 3, 4, 5), mo_label=(2, 20))[0][1] == (2, 20)
    alias = nv.sym.Softmax(nv.sym.Variable("data"), name="sm2")
    assert alias.infer_shape(data=(4, 10))[0] == [(4, 10), (4,)]


@pytest.mark.parametrize(("shape", "extra"), [((3, 4), {}), ((3, 4, 2), {"preserve_shape": True}),
                                             ((2, 3, 4), {"multi_output": True})])  # fmt: skip
def test_softmax_output_label_of_data_shape_is_a_target_distribution(
    dev: nv.Context, shape: tuple[int, ...], extra: dict[str, Any]
) -> None:
    """MXNet: a label shaped like data holds probabilities; d data = (p - label) * grad_scale
    with no normalization."""
    rng = np.random.default_rng(3)
    axis = 1 if extra.get("multi_output") else -1
    x, target = rng.normal(size=shape), softmax(rng.normal(size=shape), axis=axis)
    sym = nv.sym.SoftmaxOutput(nv.sym.Variable("data"), nv.sym.Variable("label"),
                               grad_scale=0.5, normalization="batch", **extra)  # fmt: skip
    assert sym.infer_shape(data=shape, label=shape)[0] == [shape, shape]
    exe = bind_loss(sym, dev, data=x, label=target)
    out = exe.forward(is_train=True)[0].asnumpy()
    exe.backward()
    p = softmax(x.reshape(shape[0], -1), axis=-1).reshape(shape) if not extra else softmax(x, axis)
    test_utils.assert_almost_equal(out, p, rtol=1e-10, atol=1e-12)
    want = 0.5 * (p - target)
    test_utils.assert_almost_equal(exe.grad_dict["data"].asnumpy(), want, rtol=1e-10, atol=1e-12)


def test_softmax_output_wrong_label_shape_is_a_named_error() -> None:
    sym = nv.sym.SoftmaxOutput(nv.sym.Variable("data"), name="softmax")
    with pytest.raises(nv.InferError, match=r"SoftmaxOutput.*'label'.*\(3, 5\).*needs.*\(3,\)"):
        sym.infer_shape(data=(3, 4), softmax_label=(3, 5))
    with pytest.raises(nv.InferError, match=r"SoftmaxOutput.*'label'"):
        nv.nd.SoftmaxOutput(nv.nd.zeros((3, 4)), nv.nd.zeros((5,)))
    # the registry and the engine are fine afterwards
    assert sym.infer_shape(data=(3, 4))[0][1] == (3,)
    ok = nv.nd.SoftmaxOutput(nv.nd.zeros((3, 4)), nv.nd.zeros((3,))).asnumpy()
    np.testing.assert_allclose(ok, np.full((3, 4), 0.25))


# -- BatchNorm -----------------------------------------------------------------------------------

EPS, MOMENTUM = 1e-3, 0.9


def bn_train_ref(x, gamma, beta, axis=1, eps=EPS):
    """Training-mode BatchNorm in NumPy: (out, batch mean, biased batch var)."""
    axes = tuple(i for i in range(x.ndim) if i != axis)
    shape = [1] * x.ndim
    shape[axis] = -1
    mean, var = x.mean(axis=axes), x.var(axis=axes)
    xhat = (x - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + eps)
    return xhat * gamma.reshape(shape) + beta.reshape(shape), mean, var


def bn_case(seed: int = 0, shape: tuple[int, ...] = (3, 2, 3, 2), axis: int = 1):
    rng = np.random.default_rng(seed)
    c = shape[axis]
    return {
        "data": rng.normal(2.0, 3.0, size=shape),
        "gamma": rng.uniform(0.5, 1.5, size=c),
        "beta": rng.normal(size=c),
        "moving_mean": rng.normal(size=c),
        "moving_var": rng.uniform(0.5, 2.0, size=c),
    }


def bind_bn(values: dict[str, np.ndarray], ctx: nv.Context, **params: Any) -> Any:
    sym = nv.sym.BatchNorm(nv.sym.Variable("data"), name="bn", **params)
    args = {"data": values["data"], "bn_gamma": values["gamma"], "bn_beta": values["beta"]}
    aux = {"bn_moving_mean": values["moving_mean"], "bn_moving_var": values["moving_var"]}
    exe = sym.bind(
        ctx,
        {k: arr(v, ctx) for k, v in args.items()},
        args_grad={k: nv.nd.zeros(v.shape, ctx, dtype=v.dtype) for k, v in args.items()},
        aux_states={k: arr(v, ctx) for k, v in aux.items()},
    )
    return sym, exe


@pytest.mark.parametrize("axis", [1, -1])
def test_batch_norm_training_matches_numpy(dev: nv.Context, axis: int) -> None:
    v = bn_case(axis=axis)
    sym, exe = bind_bn(v, dev, fix_gamma=False, axis=axis, eps=EPS, momentum=MOMENTUM)
    assert sym.list_auxiliary_states() == ["bn_moving_mean", "bn_moving_var"]
    out = exe.forward(is_train=True)[0].asnumpy()
    want, mean, var = bn_train_ref(v["data"], v["gamma"], v["beta"], axis=axis % 4)
    test_utils.assert_almost_equal(out, want, rtol=1e-10, atol=1e-10)
    # moving = momentum * moving + (1 - momentum) * batch statistic (biased variance)
    new_mean = MOMENTUM * v["moving_mean"] + (1 - MOMENTUM) * mean
    new_var = MOMENTUM * v["moving_var"] + (1 - MOMENTUM) * var
    test_utils.assert_almost_equal(exe.aux_dict["bn_moving_mean"].asnumpy(), new_mean, 1e-10, 1e-12)
    test_utils.assert_almost_equal(exe.aux_dict["bn_moving_var"].asnumpy(), new_var, 1e-10, 1e-12)

    dy = np.random.default_rng(5).normal(size=out.shape)
    exe.backward([dy])
    x, gamma, beta = (v[k].copy() for k in ("data", "gamma", "beta"))

    def loss() -> float:
        return float((bn_train_ref(x, gamma, beta, axis=axis % 4)[0] * dy).sum())

    for name, value in (("data", x), ("bn_gamma", gamma), ("bn_beta", beta)):
        test_utils.assert_almost_equal(
            exe.grad_dict[name].asnumpy(),
            numeric_grad(loss, value),
            rtol=1e-5,
            atol=1e-6,
            names=(f"gradient of {name}", "finite differences of NumPy BatchNorm"),
        )


def test_batch_norm_inference_leaves_moving_stats_and_fix_gamma(dev: nv.Context) -> None:
    v = bn_case(1)
    _, exe = bind_bn(v, dev, eps=EPS)  # fix_gamma=True: gamma is treated as 1
    out = exe.forward(is_train=False)[0].asnumpy()
    shape = (1, -1, 1, 1)
    want = (v["data"] - v["moving_mean"].reshape(shape)) / np.sqrt(
        v["moving_var"].reshape(shape) + EPS
    ) + v["beta"].reshape(shape)
    test_utils.assert_almost_equal(out, want, rtol=1e-10, atol=1e-10)
    np.testing.assert_array_equal(exe.aux_dict["bn_moving_mean"].asnumpy(), v["moving_mean"])
    np.testing.assert_array_equal(exe.aux_dict["bn_moving_var"].asnumpy(), v["moving_var"])
    exe.forward(is_train=True)
    exe.backward([np.ones(out.shape)])
    assert not exe.grad_dict["bn_gamma"].asnumpy().any()  # fixed gamma gets no gradient
    test_utils.assert_almost_equal(
        exe.grad_dict["bn_beta"].asnumpy(), np.full(2, out.size / 2), 1e-12, 1e-12
    )


def test_batch_norm_gradients_by_finite_differences() -> None:
    """Both backward formulas against finite differences of the op's own forward."""
    v = bn_case(2, shape=(2, 3, 2))
    sym = nv.sym.BatchNorm(nv.sym.Variable("data"), name="bn", fix_gamma=False)
    location = {"data": v["data"], "bn_gamma": v["gamma"], "bn_beta": v["beta"]}
    aux = {"bn_moving_mean": v["moving_mean"], "bn_moving_var": v["moving_var"]}
    test_utils.check_numeric_gradient(
        sym, location, aux_states=aux, numeric_eps=1e-5, rtol=1e-4, atol=1e-6, dtype=np.float64
    )
    frozen = nv.sym.BatchNorm(
        nv.sym.Variable("data"), name="bn", fix_gamma=False, use_global_stats=True
    )
    test_utils.check_numeric_gradient(
        frozen, location, aux_states=aux, numeric_eps=1e-5, rtol=1e-4, atol=1e-6, dtype=np.float64
    )


def test_batch_norm_output_mean_var(dev: nv.Context) -> None:
    v = bn_case(3)
    sym = nv.sym.BatchNorm(nv.sym.Variable("data"), name="bn", output_mean_var=True)
    assert sym.list_outputs() == ["bn_output", "bn_mean", "bn_var"]
    outs = nv.nd.BatchNorm(
        *(arr(v[k], dev) for k in ("data", "gamma", "beta", "moving_mean", "moving_var")),
        output_mean_var=True,
    )
    # at inference mean/var are the moving statistics used; "var" is, as MXNet's, the
    # inverse standard deviation 1 / sqrt(var + eps) (eps 1e-3 by default)
    assert len(outs) == 3
    np.testing.assert_allclose(outs[1].asnumpy(), v["moving_mean"])
    np.testing.assert_allclose(outs[2].asnumpy(), 1 / np.sqrt(v["moving_var"] + 1e-3))
    _, exe = bind_bn(v, dev, output_mean_var=True)
    _, mean, var = exe.forward(is_train=True)
    _, want_mean, want_var = bn_train_ref(v["data"], v["gamma"], v["beta"])
    test_utils.assert_almost_equal(mean.asnumpy(), want_mean, 1e-10, 1e-12)
    test_utils.assert_almost_equal(var.asnumpy(), 1 / np.sqrt(want_var + 1e-3), 1e-10, 1e-12)


def test_sync_batch_norm_outputs_the_batch_variance_and_trains_as_batch_norm(
    dev: nv.Context,
) -> None:
    """contrib.SyncBatchNorm on one device: BatchNorm's output and gradients, but its "var"
    output is the variance (MXNet's), not BatchNorm's 1 / sqrt(var + eps)."""
    v = bn_case(3)
    outs = {}
    for op, make in (("BatchNorm", nv.sym.BatchNorm),
                     ("_contrib_SyncBatchNorm", nv.sym.contrib.SyncBatchNorm)):  # fmt: skip
        sym = make(nv.sym.Variable("data"), name="bn",
                                             output_mean_var=True, fix_gamma=False)  # fmt: skip
        exe = sym.bind(
            dev,
            {"data": arr(v["data"], dev), "bn_gamma": arr(v["gamma"], dev),
             "bn_beta": arr(v["beta"], dev)},
            args_grad={"data": nv.nd.zeros(v["data"].shape, dev, dtype=v["data"].dtype)},
            aux_states={"bn_moving_mean": arr(v["moving_mean"], dev),
                        "bn_moving_var": arr(v["moving_var"], dev)},
        )  # fmt: skip
        out, mean, var = exe.forward(is_train=True)
        exe.backward([np.ones_like(v["data"]), np.zeros(2), np.zeros(2)])
        outs[op] = (out.asnumpy(), mean.asnumpy(), var.asnumpy(), exe.grad_dict["data"].asnumpy())
    _, want_mean, want_var = bn_train_ref(v["data"], v["gamma"], v["beta"])
    bn, sync = outs["BatchNorm"], outs["_contrib_SyncBatchNorm"]
    test_utils.assert_almost_equal(sync[0], bn[0], 1e-10, 1e-12)
    test_utils.assert_almost_equal(sync[1], want_mean, 1e-10, 1e-12)
    test_utils.assert_almost_equal(sync[2], want_var, 1e-10, 1e-12)
    test_utils.assert_almost_equal(bn[2], 1 / np.sqrt(want_var + 1e-3), 1e-10, 1e-12)
    test_utils.assert_almost_equal(sync[3], bn[3], 1e-10, 1e-12)


def test_batch_norm_shape_inference_is_mutual_and_errors_are_named() -> None:
    sym = nv.sym.BatchNorm(nv.sym.Variable("data"), name="bn")
    assert sym.list_arguments() == ["data", "bn_gamma", "bn_beta"]
    args, outs, aux = sym.infer_shape(data=(2, 3, 4, 4))
    assert args == [(2, 3, 4, 4), (3,), (3,)]
    assert outs == [(2, 3, 4, 4)]
    assert aux == [(3,), (3,)]
    # the channel count comes back from gamma into a partly known data shape
    args, _, _ = sym.infer_shape_partial(data=(2, 0, 4, 4), bn_gamma=(5,))
    assert args[0] == (2, 5, 4, 4)
    with pytest.raises(nv.InferError, match=r"BatchNorm.*'gamma'.*\(4,\).*\(3,\)"):
        sym.infer_shape(data=(2, 3, 4, 4), bn_gamma=(4,))
    bad_axis = nv.sym.BatchNorm(nv.sym.Variable("data"), axis=4, name="bn2")
    with pytest.raises(nv.InferError, match=r"BatchNorm.*axis 4.*out of range"):
        bad_axis.infer_shape(data=(2, 3, 4, 4))
    assert sym.infer_shape(data=(1, 2))[0][1] == (2,)  # still usable


def test_batch_norm_parses_what_mxnet_writes() -> None:
    """Attributes as MXNet 1.9 writes them (resnet18_v1-symbol.json), plus 1.9's new keys."""
    op = nv.Op.get("BatchNorm")
    resnet = {"axis": "1", "eps": "1e-05", "fix_gamma": "False", "momentum": "0.9"}
    parsed = op.parse_attrs({**resnet, "use_global_stats": "False"}).parsed
    assert (parsed.eps, parsed.fix_gamma, parsed.axis) == (1e-05, False, 1)
    full = {"cudnn_off": "False", "output_mean_var": "False", "min_calib_range": "None"}
    assert (
        op.parse_attrs({**resnet, **full, "max_calib_range": "1.5"}).parsed.max_calib_range == 1.5
    )
    assert nv.Op.get("Activation").parse_attrs({"act_type": "relu"}).parsed.act_type == "relu"
    assert nv.Op.get("SoftmaxOutput").parse_attrs({}).parsed.normalization == "null"
    # composed moving statistics carry MXNet's initialisers
    sym = nv.sym.BatchNorm(nv.sym.Variable("data"), name="bn")
    attrs = sym.attr_dict()
    assert attrs["bn_moving_mean"]["__init__"] == '["zero", {}]'
    assert attrs["bn_moving_var"]["__init__"] == '["one", {}]'


# -- Dropout -------------------------------------------------------------------------------------


@pytest.mark.parametrize("p", [0.25, 0.6])
def test_dropout_training_statistics_and_gradient(dev: nv.Context, p: float) -> None:
    x = np.random.default_rng(3).uniform(1.0, 2.0, size=(100, 100))  # no zeros of its own
    sym = nv.sym.Dropout(nv.sym.Variable("data"), p=p)
    exe = bind_loss(sym, dev, data=x)
    out = exe.forward(is_train=True)[0].asnumpy()
    kept = out != 0
    assert abs(kept.mean() - (1 - p)) < 0.03  # 10^4 draws: the std is below 0.005
    test_utils.assert_almost_equal(out[kept], x[kept] / (1 - p), 1e-12, 1e-12)
    dy = np.random.default_rng(4).normal(size=x.shape)
    exe.backward([dy])
    test_utils.assert_almost_equal(
        exe.grad_dict["data"].asnumpy(), dy * kept / (1 - p), 1e-12, 1e-12
    )
    second = exe.forward(is_train=True)[0].asnumpy()
    assert ((second != 0) != kept).any()  # a new mask every forward pass


def test_dropout_inference_is_exact_and_mode_always_is_random(dev: nv.Context) -> None:
    x = np.random.default_rng(5).uniform(1.0, 2.0, size=(50, 40))
    np.testing.assert_array_equal(nv.nd.Dropout(arr(x, dev), p=0.5).asnumpy(), x)
    exe = bind_loss(nv.sym.Dropout(nv.sym.Variable("data"), p=0.5), dev, data=x)
    np.testing.assert_array_equal(exe.forward(is_train=False)[0].asnumpy(), x)
    exe.backward([np.ones(x.shape)])  # after an inference pass the mask is all ones
    np.testing.assert_array_equal(exe.grad_dict["data"].asnumpy(), np.ones(x.shape))
    always = nv.nd.Dropout(arr(x, dev), p=0.5, mode="always").asnumpy()  # nd: not training
    assert 0.4 < (always == 0).mean() < 0.6
    # MXNet scales kept values by 1/(1-p): with p=1 every x * 0 * inf is NaN (its test_dropout)
    dropped_all = nv.nd.Dropout(arr(x, dev), p=1.0, mode="always").asnumpy()
    assert np.isnan(dropped_all).all()


def test_dropout_axes_share_one_draw_along_them(dev: nv.Context) -> None:
    x = np.ones((40, 3, 30))
    out = nv.nd.Dropout(arr(x, dev), p=0.5, mode="always", axes=(1,)).asnumpy()
    assert (out == out[:, :1, :]).all()  # constant along axis 1
    assert 0.35 < (out[:, 0, :] == 0).mean() < 0.65


# -- bad parameters: named errors, and the system keeps working ---------------------------------


def test_bad_parameters_name_the_op_the_argument_and_the_valid_values() -> None:
    x = nv.nd.array(np.linspace(-1, 1, 6).reshape(2, 3))
    with pytest.raises(nv.ParamError, match=r"Activation.*'act_type'.*'relu'.*'tanh'.*'gelu'"):
        nv.nd.Activation(x, act_type="gelu")
    with pytest.raises(nv.ParamError, match=r"Activation.*missing.*'act_type'"):
        nv.sym.Activation(nv.sym.Variable("x"))
    with pytest.raises(nv.ParamError, match=r"LeakyReLU.*'act_type'.*'elu'.*'prelu'"):
        nv.nd.LeakyReLU(x, act_type="swish")
    for p in (-0.1, 1.5):
        with pytest.raises(nv.ParamError, match=r"Dropout.*'p'.*\[0.0, 1.0\]"):
            nv.nd.Dropout(x, p=p)
    with pytest.raises(nv.ParamError, match=r"softmax.*'temperature'.*non-zero"):
        nv.nd.softmax(x, temperature=0)
    with pytest.raises(nv.InferError, match=r"softmax.*axis 2.*out of range"):
        nv.nd.softmax(x, axis=2)
    with pytest.raises(nv.ParamError, match=r"SoftmaxOutput.*'normalization'.*'batch'"):
        nv.sym.SoftmaxOutput(nv.sym.Variable("x"), normalization="mean")
    with pytest.raises(nv.ParamError, match=r"BatchNorm.*unknown parameter 'fixgamma'"):
        nv.sym.BatchNorm(nv.sym.Variable("x"), fixgamma=True)
    # nothing is left broken
    y = nv.nd.Activation(x, act_type="relu").asnumpy()
    np.testing.assert_array_equal(y, np.maximum(x.asnumpy(), 0))
    np.testing.assert_allclose(nv.nd.softmax(x).asnumpy().sum(axis=1), [1.0, 1.0], rtol=1e-6)


def test_softmax_is_stable_for_large_inputs(dev: nv.Context) -> None:
    x = np.array([[1000.0, 1001.0, 1002.0], [-1000.0, -1000.0, -1000.0]], dtype=np.float32)
    y = nv.nd.softmax(arr(x, dev)).asnumpy()
    np.testing.assert_allclose(y, softmax(x.astype(np.float64)), rtol=1e-6)
    logy = nv.nd.log_softmax(arr(x, dev)).asnumpy()
    np.testing.assert_allclose(logy[0], [-2.4076059, -1.4076059, -0.4076059], rtol=1e-6)
