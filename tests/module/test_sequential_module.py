"""nv.mod.SequentialModule: modules chained output-to-data, as MXNet 1.x's.

References are independent: the forward pass, the gradients and one SGD step written in
NumPy for the same weights, and the two modules run by hand one after the other.
"""

from __future__ import annotations

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy.base import NNVMError, ParamError

nd = nv.nd
RNG = np.random.default_rng(0)
X = RNG.normal(size=(6, 5)).astype(np.float32)
Y = np.array([0, 1, 2, 1, 0, 2], dtype=np.float32)
W1, B1 = RNG.normal(size=(4, 5)).astype(np.float32), RNG.normal(size=4).astype(np.float32)
W2, B2 = RNG.normal(size=(3, 4)).astype(np.float32), RNG.normal(size=3).astype(np.float32)
PARAMS = {"fc1_weight": W1, "fc1_bias": B1, "fc2_weight": W2, "fc2_bias": B2}


def _hidden() -> nv.mod.Module:
    net = nv.sym.FullyConnected(nv.sym.Variable("data"), num_hidden=4, name="fc1")
    return nv.mod.Module(nv.sym.Activation(net, act_type="relu", name="relu1"), label_names=None)


def _head(data: str = "data") -> nv.mod.Module:
    net = nv.sym.FullyConnected(nv.sym.Variable(data), num_hidden=3, name="fc2")
    return nv.mod.Module(nv.sym.SoftmaxOutput(net, name="softmax"), data_names=(data,))


def _softmax(z: np.ndarray) -> np.ndarray:
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _numpy_step() -> dict[str, np.ndarray]:
    """Forward, backward (SoftmaxOutput's gradient p - onehot(y)) and the gradients."""
    a1 = X @ W1.T + B1
    h = np.maximum(a1, 0)
    p = _softmax(h @ W2.T + B2)
    g2 = p - np.eye(3, dtype=np.float32)[Y.astype(int)]
    g1 = (g2 @ W2) * (a1 > 0)
    return {
        "out": p,
        "dx": g1 @ W1,
        "fc1_weight": g1.T @ X,
        "fc1_bias": g1.sum(0),
        "fc2_weight": g2.T @ h,
        "fc2_bias": g2.sum(0),
    }


def _chain(inputs_need_grad: bool = True) -> nv.mod.SequentialModule:
    seq = nv.mod.SequentialModule()
    assert seq.add(_hidden()) is seq  # add() chains
    seq.add(_head("h"), take_labels=True, auto_wiring=True)  # renames fc1's output to 'h'
    it = nv.io.NDArrayIter(X, Y, batch_size=6)
    seq.bind(it.provide_data, it.provide_label, inputs_need_grad=inputs_need_grad)
    seq.init_params(arg_params={n: nd.array(v) for n, v in PARAMS.items()}, aux_params={})
    return seq


def _batch() -> nv.io.DataBatch:
    return nv.io.DataBatch([nd.array(X)], [nd.array(Y)])


def test_forward_backward_and_update_match_numpy() -> None:
    seq = _chain()
    seq.init_optimizer(optimizer="sgd", optimizer_params={"learning_rate": 0.5})
    want = _numpy_step()
    seq.forward(_batch(), is_train=True)
    np.testing.assert_allclose(seq.get_outputs()[0].asnumpy(), want["out"], rtol=1e-5, atol=1e-6)
    seq.backward()
    np.testing.assert_allclose(seq.get_input_grads()[0].asnumpy(), want["dx"], rtol=1e-4, atol=1e-5)
    seq.update()
    arg, aux = seq.get_params()
    assert aux == {}
    assert sorted(arg) == sorted(PARAMS)
    for name, value in PARAMS.items():  # SGD: w -= lr * grad / batch size
        np.testing.assert_allclose(
            arg[name].asnumpy(), value - 0.5 * want[name] / 6, rtol=1e-4, atol=1e-5
        )


def test_outputs_equal_running_the_two_modules_by_hand() -> None:
    seq = _chain(inputs_need_grad=False)
    seq.forward(_batch(), is_train=False)
    first, second = _hidden(), _head()
    first.bind([("data", (6, 5))], for_training=False)
    first.init_params(arg_params={n: nd.array(PARAMS[n]) for n in ("fc1_weight", "fc1_bias")})
    first.forward(_batch())
    second.bind([("data", (6, 4))], [("softmax_label", (6,))], for_training=False)
    second.init_params(arg_params={n: nd.array(PARAMS[n]) for n in ("fc2_weight", "fc2_bias")})
    second.forward(nv.io.DataBatch(first.get_outputs(), [nd.array(Y)]))
    np.testing.assert_allclose(
        seq.get_outputs()[0].asnumpy(), second.get_outputs()[0].asnumpy(), rtol=1e-6
    )


def test_shapes_names_metric_and_labels_follow_the_chain() -> None:
    seq = _chain()
    assert seq.data_names == ["data"]
    assert seq.output_names == ["softmax_output"]
    assert [tuple(d) for d in seq.data_shapes] == [("data", (6, 5))]
    assert [tuple(d) for d in seq.label_shapes] == [("softmax_label", (6,))]
    assert [tuple(d) for d in seq.output_shapes] == [("softmax_output", (6, 3))]
    seq.forward(_batch(), is_train=False)
    metric = nv.metric.create("acc")
    seq.update_metric(metric, [nd.array(Y)])
    want = np.mean(_numpy_step()["out"].argmax(axis=1) == Y)
    assert metric.get() == ("accuracy", pytest.approx(want))
    # no module takes labels: the chain has none either
    plain = nv.mod.SequentialModule().add(_hidden())
    plain.bind([("data", (6, 5))], [("softmax_label", (6,))])
    assert plain.label_shapes is None


def test_a_python_loss_module_ends_the_chain() -> None:
    """FC then PythonLossModule(grad_func): the FC's weight gradient is grad^T x."""

    def grad_func(scores: nv.nd.NDArray, labels: nv.nd.NDArray) -> np.ndarray:
        return scores.asnumpy() - np.eye(3, dtype=np.float32)[labels.asnumpy().astype(int)]

    fc = nv.mod.Module(
        nv.sym.FullyConnected(nv.sym.Variable("data"), num_hidden=3, name="fc3"), label_names=None
    )
    seq = nv.mod.SequentialModule().add(fc)
    seq.add(nv.mod.PythonLossModule(grad_func=grad_func), take_labels=True, auto_wiring=True)
    seq.bind([("data", (6, 5))], [("softmax_label", (6,))])
    w = RNG.normal(size=(3, 5)).astype(np.float32)
    seq.init_params(arg_params={"fc3_weight": nd.array(w), "fc3_bias": nd.zeros((3,))})
    seq.init_optimizer(optimizer_params={"learning_rate": 1.0})
    seq.forward(_batch())
    scores = X @ w.T
    np.testing.assert_allclose(seq.get_outputs()[0].asnumpy(), scores, rtol=1e-5, atol=1e-6)
    seq.backward()
    seq.update()
    g = grad_func(nd.array(scores), nd.array(Y))
    got = seq.get_params()[0]["fc3_weight"].asnumpy()
    np.testing.assert_allclose(got, w - g.T @ X / 6, rtol=1e-4, atol=1e-5)
    assert seq.output_shapes == [("pyloss_output", (6, 3))]


def test_fit_trains_the_chain() -> None:
    rng = np.random.default_rng(1)
    x = rng.normal(size=(120, 5)).astype(np.float32)
    y = (x @ rng.normal(size=5) > 0).astype(np.float32)
    head = nv.sym.SoftmaxOutput(
        nv.sym.FullyConnected(nv.sym.Variable("data"), num_hidden=2, name="fc2"), name="softmax"
    )
    seq = nv.mod.SequentialModule().add(_hidden())
    seq.add(nv.mod.Module(head), take_labels=True, auto_wiring=True)
    train = nv.io.NDArrayIter(x, y, batch_size=20, shuffle=True)
    seq.fit(train, num_epoch=10, optimizer_params={"learning_rate": 0.5},
            initializer=nv.init.Xavier())  # fmt: skip
    ((_, acc),) = seq.score(nv.io.NDArrayIter(x, y, batch_size=20), "acc")
    assert acc > 0.9


def test_bad_use_gives_named_errors() -> None:
    seq = nv.mod.SequentialModule()
    with pytest.raises(ParamError, match=r"SequentialModule.add: module must be a module"):
        seq.add(_hidden().symbol)
    with pytest.raises(ParamError, match=r"SequentialModule.add: unknown meta \['take_label'\]"):
        seq.add(_hidden(), take_label=True)
    with pytest.raises(NNVMError, match=r"SequentialModule.bind: the chain is empty"):
        seq.bind([("data", (6, 5))])
    seq.add(_hidden())
    with pytest.raises(NNVMError, match=r"SequentialModule.forward: call bind\(\) first"):
        seq.forward(_batch())
    seq.add(_hidden())  # the same parameter names twice
    with pytest.raises(ParamError, match=r"data_shapes name \['relu1_output'\]"):
        seq.bind([("data", (6, 5))])  # without auto_wiring the names must already match
    dup = nv.mod.SequentialModule().add(_hidden()).add(_hidden(), auto_wiring=True)
    dup.bind([("data", (6, 4))])
    with pytest.raises(ParamError, match=r"parameter 'fc1_weight' of module 1 .* module 0"):
        dup.init_params()
    wired = nv.mod.SequentialModule().add(_hidden()).add(_head("h"), auto_wiring=True)
    with pytest.raises(ParamError, match=r"module 0 \(auto_wiring\) has data_names \['data'\]"):
        nv.mod.SequentialModule().add(_hidden(), auto_wiring=True).bind(
            [("a", (6, 5)), ("b", (6, 5))]
        )
    wired.bind([("data", (6, 5))], for_training=False)
    wired.init_params()
    with pytest.raises(NNVMError, match=r"get_input_grads: bind with inputs_need_grad=True"):
        wired.get_input_grads()
    with pytest.raises(ParamError, match=r"\['extra'\] are parameters of no module"):
        wired.init_params(arg_params={**{n: nd.array(v) for n, v in PARAMS.items()},
                                      "extra": nd.ones((1,))}, force_init=True)  # fmt: skip
    wired.forward(nv.io.DataBatch([nd.array(X)]))  # still usable
    assert wired.get_outputs()[0].shape == (6, 3)


def test_save_and_load_params_cover_every_module(tmp_path) -> None:
    fname = str(tmp_path / "chain.params")
    _chain().save_params(fname)
    assert sorted(nd.load(fname)) == sorted(f"arg:{n}" for n in PARAMS)
    fresh = nv.mod.SequentialModule().add(_hidden()).add(_head("h"), take_labels=True,
                                                         auto_wiring=True)  # fmt: skip
    fresh.bind([("data", (6, 5))], [("softmax_label", (6,))], for_training=False)
    fresh.init_params(nv.init.Zero())
    fresh.load_params(fname)
    for name, value in fresh.get_params()[0].items():
        np.testing.assert_array_equal(value.asnumpy(), PARAMS[name])
    fresh.forward(_batch())
    np.testing.assert_allclose(
        fresh.get_outputs()[0].asnumpy(), _numpy_step()["out"], rtol=1e-5, atol=1e-6
    )
