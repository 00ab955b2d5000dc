"""nv.contrib.svrg_optimization: SVRGModule's full gradient and variance-reduced steps on
linear regression, checked against the gradients written in NumPy; the SVRG optimizer's
dispatch between the wrapped optimizer and assignment; the module's argument checks."""

from __future__ import annotations

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy.base import ParamError
from nnvmpy.contrib.svrg_optimization import SVRGModule, _SVRGOptimizer

N, DIM, BATCH, LR = 12, 3, 4, 0.05


def _net() -> nv.sym.Symbol:
    x = nv.sym.Variable("data")
    y = nv.sym.Variable("label")
    fc = nv.sym.FullyConnected(x, num_hidden=1, name="fc1")
    return nv.sym.LinearRegressionOutput(fc, y, name="lro")


def _data() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(5)
    x = rng.uniform(-1, 1, (N, DIM))
    return x, x @ np.array([1.0, -2.0, 0.5]) + 0.3


W0 = np.array([[0.2, 0.1, -0.3]])
B0 = np.array([0.05])


def _module(context=None, kvstore="local", update_freq=1) -> tuple[SVRGModule, nv.io.NDArrayIter]:
    x, y = _data()
    it = nv.io.NDArrayIter(x, y, batch_size=BATCH, label_name="label")
    mod = SVRGModule(_net(), ["data"], ["label"], context=context, update_freq=update_freq)
    mod.bind(data_shapes=it.provide_data, label_shapes=it.provide_label)
    mod.init_params(arg_params={"fc1_weight": nv.nd.array(W0), "fc1_bias": nv.nd.array(B0)})
    mod.init_optimizer(kvstore=kvstore, optimizer="sgd", optimizer_params={"learning_rate": LR})
    return mod, it


def _batch_grad(w, b, x, y):
    """LinearRegressionOutput's gradient summed over the batch: d/dpred = pred - label."""
    r = (x @ w.T)[:, 0] + b[0] - y
    return r @ x, np.array([r.sum()])


def _full_grad(w, b):
    x, y = _data()
    gs = [_batch_grad(w, b, x[i : i + BATCH], y[i : i + BATCH]) for i in range(0, N, BATCH)]
    return np.mean([g[0] for g in gs], axis=0), np.mean([g[1] for g in gs], axis=0)


def _params(mod):
    arg, _ = mod.get_params()
    return arg["fc1_weight"].asnumpy(), arg["fc1_bias"].asnumpy()


def test_full_gradient_is_the_mean_of_the_batch_gradients():
    mod, it = _module()
    mod.update_full_grads(it)
    mu_w, mu_b = _full_grad(W0, B0)
    np.testing.assert_allclose(mod._param_dict[0]["fc1_weight"].asnumpy()[0], mu_w, rtol=1e-5)
    np.testing.assert_allclose(mod._param_dict[0]["fc1_bias"].asnumpy(), mu_b, rtol=1e-5)


@pytest.mark.parametrize(
    ("context", "kvstore"),
    [(None, "local"), ([nv.cpu(0), nv.cpu(1)], "local")],
    ids=["one-device", "two-devices-kvstore"],
)
def test_steps_follow_the_variance_reduced_gradient(context, kvstore):
    mod, it = _module(context, kvstore)
    mod.update_full_grads(it)
    x, y = _data()
    snap_w, snap_b = W0[0], B0
    mu_w, mu_b = _full_grad(W0, B0)
    w, b = W0[0].copy(), B0.copy()
    for step in range(3):
        sl = slice(step * BATCH, (step + 1) * BATCH)
        mod.forward_backward(nv.io.DataBatch([nv.nd.array(x[sl])], [nv.nd.array(y[sl])]))
        mod.update()
        gw, gb = _batch_grad(w[None], b, x[sl], y[sl])
        sw, sb = _batch_grad(snap_w[None], snap_b, x[sl], y[sl])
        # SGD, rescale_grad = 1 / batch, on g(w) - g(w~) + mu
        w = w - LR / BATCH * (gw - sw + mu_w)
        b = b - LR / BATCH * (gb - sb + mu_b)
        got_w, got_b = _params(mod)
        np.testing.assert_allclose(got_w[0], w, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(got_b, b, rtol=1e-5, atol=1e-6)
    if kvstore is not None and context is not None:  # the store summed the devices' means
        np.testing.assert_allclose(mod._param_dict[1]["fc1_weight"].asnumpy()[0], mu_w, rtol=1e-5)


def test_fit_recomputes_the_full_gradient_every_update_freq_epochs(monkeypatch):
    x, y = _data()
    it = nv.io.NDArrayIter(x, y, batch_size=BATCH, label_name="label")
    mod = SVRGModule(_net(), ["data"], ["label"], update_freq=2)
    epochs = []
    real = mod.update_full_grads

    def counting(data):
        epochs.append(len(epochs))
        real(data)

    monkeypatch.setattr(mod, "update_full_grads", counting)
    mod.fit(it, eval_metric="mse", optimizer="sgd", num_epoch=20,
            optimizer_params={"learning_rate": 0.5})  # fmt: skip
    assert len(epochs) == 10  # epochs 0, 2, ..., 18
    assert mod.score(it, "mse")[0][1] < 1e-4


def test_update_before_any_full_gradient_is_a_plain_step():
    mod, _ = _module()
    x, y = _data()
    mod.forward_backward(nv.io.DataBatch([nv.nd.array(x[:BATCH])], [nv.nd.array(y[:BATCH])]))
    mod.update()
    gw, _ = _batch_grad(W0, B0, x[:BATCH], y[:BATCH])
    np.testing.assert_allclose(_params(mod)[0][0], W0[0] - LR / BATCH * gw, rtol=1e-5)


def test_init_optimizer_wraps_the_optimizer_and_adds_full_keys():
    kv = nv.kv.create("local")
    mod, _ = _module(kvstore=kv)
    assert type(mod._optimizer) is _SVRGOptimizer
    assert type(mod._optimizer.default_opt).__name__ == "SGD"
    assert mod._optimizer.default_opt.lr == LR
    out = nv.nd.ones((1, DIM))
    kv.pull("fc1_weight_full", out=out)  # created, zero until update_full_grads
    np.testing.assert_array_equal(out.asnumpy(), np.zeros((1, DIM)))


def test_svrg_optimizer_assigns_full_keys_and_steps_weights():
    names = {0: "fullyconnected0_weight", 1: "fullyconnected0_weight_full"}
    svrg = _SVRGOptimizer(default_optimizer="sgd", param_idx2name=names, learning_rate=0.5)
    by_index, by_name = nv.kv.create("local"), nv.kv.create("local")  # one key type each
    got = {}
    for kv, keys in ((by_index, (0, 1)), (by_name, ("w_full", "w"))):
        kv.set_optimizer(svrg)
        for key in keys:
            kv.init(key, nv.nd.array([1.0, 2.0]))
            kv.push(key, [nv.nd.array([1.0, 2.0]), nv.nd.array([3.0, 4.0])])  # summed
            out = nv.nd.zeros((2,))
            kv.pull(key, out=out)
            got[key] = out.asnumpy()
    # "full" inside a layer's name is not a full-gradient key: an SGD step
    np.testing.assert_allclose(got[0], [1.0 - 0.5 * 4.0, 2.0 - 0.5 * 6.0])
    np.testing.assert_allclose(got[1], [4.0, 6.0])
    np.testing.assert_allclose(got["w_full"], [4.0, 6.0])  # a store keyed by names
    np.testing.assert_allclose(got["w"], got[0])


def test_svrg_optimizer_takes_an_optimizer_instance():
    inner = nv.optimizer.SGD(learning_rate=0.25, momentum=0.9)
    svrg = _SVRGOptimizer(default_optimizer=inner)
    assert svrg.default_opt is inner
    with pytest.raises(ParamError, match="default_optimizer must be an optimizer name"):
        _SVRGOptimizer(default_optimizer=3)


@pytest.mark.parametrize("freq", [None, 0, -1, 1.5, True])
def test_update_freq_must_be_a_positive_int(freq):
    with pytest.raises(ParamError, match="update_freq"):
        SVRGModule(_net(), ["data"], ["label"], update_freq=freq)


def test_bind_rejects_malformed_data_shapes_with_type_error():
    mod = SVRGModule(_net(), ["data"], ["label"], update_freq=2)
    with pytest.raises(TypeError, match=r"expected DataDesc or \(name, shape\) pairs"):
        mod.bind(data_shapes=["data", nv.nd.zeros((2, 1))])
    mod.bind(data_shapes=[("data", (2, DIM))], label_shapes=[("label", (2,))])
    assert mod.binded
    assert mod._mod_aux.binded


def test_update_full_grads_needs_an_optimizer_and_data():
    x, y = _data()
    mod = SVRGModule(_net(), ["data"], ["label"], update_freq=1)
    mod.bind(data_shapes=[("data", (BATCH, DIM))], label_shapes=[("label", (BATCH,))])
    mod.init_params()
    it = nv.io.NDArrayIter(x, y, batch_size=BATCH, label_name="label")
    with pytest.raises(nv.NNVMError, match="call init_optimizer"):
        mod.update_full_grads(it)
