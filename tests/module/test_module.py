"""nv.mod.Module, nv.io and nv.model checkpoints: MXNet 1.x's Module workflow on nnvmpy.

References are independent: the executor's own forward/backward on the same weights,
NumPy's softmax for predictions, NumPy formulas for the metrics.
"""

from __future__ import annotations

import logging

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy.base import NNVMError, ParamError

nd = nv.nd


def _mlp(hidden: int = 16) -> nv.sym.Symbol:
    data = nv.sym.Variable("data")
    net = nv.sym.FullyConnected(data, num_hidden=hidden, name="fc1")
    net = nv.sym.Activation(net, act_type="relu", name="relu1")
    net = nv.sym.FullyConnected(net, num_hidden=2, name="fc2")
    return nv.sym.SoftmaxOutput(net, name="softmax")


def _separable(n: int = 200) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(n, 10)).astype(np.float32)
    y = (x @ rng.normal(size=10) > 0).astype(np.float32)
    return x, y


def test_fit_learns_a_separable_problem_and_score_and_predict_agree() -> None:
    x, y = _separable()
    mod = nv.mod.Module(_mlp())
    train = nv.io.NDArrayIter(x, y, batch_size=20, shuffle=True)
    mod.fit(train, num_epoch=8, optimizer_params={"learning_rate": 0.5},
            initializer=nv.init.Xavier())  # fmt: skip
    ((name, acc),) = mod.score(nv.io.NDArrayIter(x, y, batch_size=20), "acc")
    assert name == "accuracy"
    assert acc > 0.95
    # predict over another batch size without labels (the module rebinds), pads dropped
    prob = mod.predict(nv.io.NDArrayIter(x, batch_size=30))  # no labels: rebinds them too
    assert prob.shape == (200, 2)
    np.testing.assert_allclose(prob.asnumpy().sum(axis=1), 1.0, rtol=1e-5)
    assert np.mean(prob.asnumpy().argmax(axis=1) == y) == pytest.approx(acc)


def test_forward_backward_equal_the_plain_executor_on_the_same_weights() -> None:
    x, y = _separable(8)
    sym = _mlp()
    mod = nv.mod.Module(sym)
    mod.bind(data_shapes=[("data", (8, 10))], label_shapes=[("softmax_label", (8,))],
             inputs_need_grad=True)  # fmt: skip
    mod.init_params(nv.init.Uniform(0.3))
    args, _auxs = mod.get_params()
    exe = sym.simple_bind(nv.cpu(), data=(8, 10))
    for n, v in args.items():
        exe.arg_dict[n][:] = v
    batch = nv.io.DataBatch(data=[nd.array(x)], label=[nd.array(y)])
    mod.forward(batch, is_train=True)
    mod.backward()
    exe.forward(is_train=True, data=x, softmax_label=y)
    exe.backward()
    np.testing.assert_allclose(mod.get_outputs()[0].asnumpy(), exe.outputs[0].asnumpy())
    np.testing.assert_allclose(mod.get_input_grads()[0].asnumpy(), exe.grad_dict["data"].asnumpy())


@pytest.mark.parametrize("grad_req", ["write", "add", "null"])
def test_input_gradients_follow_grad_req(grad_req: str) -> None:
    data = nv.sym.Variable("data")
    y = nv.sym.FullyConnected(data, num_hidden=3, name="fc")
    mod = nv.mod.Module(y, label_names=None)
    mod.bind(data_shapes=[("data", (2, 4))], inputs_need_grad=True, grad_req=grad_req)
    mod.init_params(nv.init.One())
    batch = nv.io.DataBatch(data=[nd.ones((2, 4))])
    for _ in range(2):
        mod.forward(batch, is_train=True)
        mod.backward(out_grads=[nd.ones((2, 3))])
    grad = mod.get_input_grads()[0]
    if grad_req == "null":
        assert grad is None
    else:  # d(sum of x W^T)/dx = column sums of W = 3; twice with 'add'
        np.testing.assert_allclose(grad.asnumpy(), 3.0 * (2 if grad_req == "add" else 1))


def test_checkpoints_round_trip(tmp_path) -> None:
    x, y = _separable(40)
    mod = nv.mod.Module(_mlp())
    mod.fit(nv.io.NDArrayIter(x, y, batch_size=10), num_epoch=1,
            initializer=nv.init.Xavier())  # fmt: skip
    prefix = str(tmp_path / "mlp")
    mod.save_checkpoint(prefix, 3)
    sym, args, _auxs = nv.model.load_checkpoint(prefix, 3)
    assert sym.list_arguments() == _mlp().list_arguments()
    mine, _ = mod.get_params()
    assert sorted(args) == sorted(mine)
    for n in mine:
        np.testing.assert_array_equal(args[n].asnumpy(), mine[n].asnumpy())
    loaded = nv.mod.Module.load(prefix, 3)
    loaded.bind(data_shapes=[("data", (10, 10))], for_training=False)
    batch = nv.io.DataBatch(data=[nd.array(x[:10])])
    loaded.forward(batch)
    mod.forward(batch, is_train=False)
    np.testing.assert_allclose(loaded.get_outputs()[0].asnumpy(), mod.get_outputs()[0].asnumpy())


def test_bad_use_gives_named_errors_and_leaves_the_module_usable(caplog) -> None:
    mod = nv.mod.Module(_mlp())
    batch = nv.io.DataBatch(data=[nd.ones((4, 10))], label=[nd.zeros((4,))])
    with pytest.raises(NNVMError, match=r"Module.forward: call bind\(\) first"):
        mod.forward(batch)
    with pytest.raises(ParamError, match=r"Module.bind: data_shapes name \['x'\]"):
        mod.bind(data_shapes=[("x", (4, 10))])
    with pytest.raises(ParamError, match=r"data name 'image' is not an argument"):
        nv.mod.Module(_mlp(), data_names=("image",))
    with pytest.raises(ParamError, match=r"context is an empty list"):
        nv.mod.Module(_mlp(), context=[])
    mod.bind(data_shapes=[("data", (4, 10))], label_shapes=[("softmax_label", (4,))])
    with pytest.raises(NNVMError, match=r"Module.forward: call init_params\(\)"):
        mod.forward(batch)
    with caplog.at_level(logging.WARNING):
        mod.bind(data_shapes=[("data", (4, 10))])  # twice without force_rebind: ignored
    assert "already bound" in caplog.text
    with pytest.raises(NNVMError, match=r"'fc1_weight' is missing"):
        mod.init_params(arg_params={"fc2_weight": nd.zeros((2, 16))})
    mod.init_params()
    with pytest.raises(NNVMError, match=r"Module.update: call init_optimizer\(\) first"):
        mod.update()
    with pytest.raises(NNVMError, match=r"Module.get_input_grads: bind with inputs_need_grad"):
        mod.get_input_grads()
    mod.forward(batch, is_train=False)
    assert mod.get_outputs()[0].shape == (4, 2)


def test_ndarray_iter_pads_discards_and_rolls_over() -> None:
    x = np.arange(10, dtype=np.float32).reshape(10, 1)

    def epoch(it: nv.io.NDArrayIter) -> list[tuple[list[float], int]]:
        out = [(b.data[0].asnumpy().ravel().tolist(), b.pad) for b in it]
        it.reset()
        return out

    pad = nv.io.NDArrayIter(x, batch_size=4, last_batch_handle="pad")
    assert epoch(pad)[-1] == ([8, 9, 0, 1], 2)
    discard = nv.io.NDArrayIter(x, batch_size=4, last_batch_handle="discard")
    assert [b for b, _ in epoch(discard)] == [[0, 1, 2, 3], [4, 5, 6, 7]]
    roll = nv.io.NDArrayIter(x, batch_size=4, last_batch_handle="roll_over")
    assert [b for b, _ in epoch(roll)] == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert [b for b, _ in epoch(roll)] == [[8, 9, 0, 1], [2, 3, 4, 5], [6, 7, 8, 9]]
    named = nv.io.NDArrayIter({"a": x, "b": x * 2}, {"lab": x[:, 0]}, batch_size=5)
    assert [d.name for d in named.provide_data] == ["a", "b"]
    assert named.provide_label[0].shape == (5,)
    with pytest.raises(ParamError, match=r"same first dimension"):
        nv.io.NDArrayIter(x, np.zeros(3), batch_size=2)
    with pytest.raises(ParamError, match=r"last_batch_handle must be"):
        nv.io.NDArrayIter(x, batch_size=2, last_batch_handle="wrap")
