"""Module over several devices, BucketingModule, DataParallelExecutorGroup and nv.mon.Monitor,
checked against NumPy formulas (MXNet 1.x semantics)."""

from __future__ import annotations

from collections import namedtuple

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy import nd
from nnvmpy.module.executor_group import DataParallelExecutorGroup, split_slices
from nnvmpy.test_utils import same_array

TWO = [nv.cpu(0), nv.cpu(1)]


def _fc(num_hidden: int = 3) -> nv.sym.Symbol:
    return nv.sym.FullyConnected(nv.sym.Variable("data"), num_hidden=num_hidden, name="fc")


def test_split_slices_follow_the_workload() -> None:
    assert split_slices(10, [1, 1]) == [slice(0, 5), slice(5, 10)]
    assert split_slices(9, [1, 2]) == [slice(0, 3), slice(3, 9)]
    with pytest.raises(nv.NNVMError, match="slice would be empty"):
        split_slices(1, [1, 1])


def test_two_devices_split_the_batch_and_merge_outputs_and_gradients() -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((6, 4)).astype(np.float32)
    w = rng.standard_normal((3, 4)).astype(np.float32)
    b = rng.standard_normal(3).astype(np.float32)
    mod = nv.mod.Module(_fc(), ("data",), None, context=TWO)
    mod.bind(data_shapes=[("data", (6, 4))], inputs_need_grad=True)
    mod.init_params(arg_params={"fc_weight": nd.array(w), "fc_bias": nd.array(b)})
    mod.forward(nv.io.DataBatch(data=[nd.array(x)]))
    np.testing.assert_allclose(mod.get_outputs()[0].asnumpy(), x @ w.T + b, rtol=1e-5)
    parts = mod.get_outputs(merge_multi_context=False)[0]
    assert [p.shape for p in parts] == [(3, 3), (3, 3)]
    og = rng.standard_normal((6, 3)).astype(np.float32)
    mod.backward([nd.array(og)])
    np.testing.assert_allclose(mod.get_input_grads()[0].asnumpy(), og @ w, rtol=1e-5, atol=1e-6)
    # one SGD step: the bias gradient is summed over both devices, rescaled by 1/batch
    mod.init_optimizer(optimizer_params={"learning_rate": 1.0})
    mod.update()
    bias = mod.get_params()[0]["fc_bias"].asnumpy()
    np.testing.assert_allclose(bias, b - og.sum(axis=0) / 6, rtol=1e-5, atol=1e-6)


def test_the_layout_names_the_batch_axis() -> None:
    data = nv.sym.Variable("data")
    sym = nv.sym.Activation(data, act_type="relu", __layout__="TNC")
    mod = nv.mod.Module(sym, ("data",), None, context=TWO)
    mod.bind(data_shapes=[nv.io.DataDesc("data", (3, 8, 7), layout="TNC")])
    mod.init_params()
    x = np.random.default_rng(1).standard_normal((3, 8, 7)).astype(np.float32)
    mod.forward(nv.io.DataBatch(data=[nd.array(x)]))
    assert [p.shape for p in mod.get_outputs(merge_multi_context=False)[0]] == [(3, 4, 7)] * 2
    np.testing.assert_allclose(mod.get_outputs()[0].asnumpy(), np.maximum(x, 0))


def test_set_params_missing_is_a_runtime_error_and_extra_a_value_error() -> None:
    mod = nv.mod.Module(_fc(2), ("data",), None)
    mod.bind(data_shapes=[("data", (1, 2))])
    w, b = nd.ones((2, 2)), nd.ones((2,))
    mod.set_params({"fc_weight": w}, {}, allow_missing=True)
    with pytest.raises(RuntimeError, match="'fc_bias' is missing"):
        mod.set_params({"fc_weight": w, "other": b}, {})
    with pytest.raises(ValueError, match="'other' is not an argument"):
        mod.set_params({"fc_weight": w, "other": b}, {}, allow_missing=True)
    mod.set_params({"fc_weight": w, "fc_bias": b, "other": b}, {}, allow_extra=True)
    np.testing.assert_array_equal(mod.get_params()[0]["fc_bias"].asnumpy(), np.ones(2))


def test_bind_refuses_a_shape_that_is_not_a_tuple_of_ints() -> None:
    mod = nv.mod.Module(_fc(), ("data",), None)
    with pytest.raises(TypeError, match="must be a tuple of ints"):
        mod.bind(data_shapes=[("data", nd.array([10, 10]))])
    assert not mod.binded


def test_forward_takes_any_batch_with_data_and_rebinds_for_new_shapes() -> None:
    mod = nv.mod.Module(nv.sym.Variable("data") * 2, label_names=None)
    mod.bind(data_shapes=[("data", (1, 10))])
    mod.init_params()
    batch = namedtuple("Batch", ["data"])
    mod.forward(batch([nd.ones((3, 5))]))
    np.testing.assert_array_equal(mod.get_outputs()[0].asnumpy(), np.full((3, 5), 2.0))
    assert mod.predict(nd.ones((1, 10))).shape == (1, 10)


def test_executor_groups_share_parameters_and_input_buffers() -> None:
    sym = _fc()
    params = ["fc_weight", "fc_bias"]
    g1 = DataParallelExecutorGroup(sym, TWO, [1, 1], [("data", (4, 5))], None, params, True, False)
    assert [sorted(d) for d in g1.shared_data_arrays] == [["data"], ["data"]]
    g2 = DataParallelExecutorGroup(
        sym, TWO, [1, 1], [("data", (2, 5))], None, params, True, False, shared_group=g1
    )
    for e1, e2 in zip(g1.execs, g2.execs):
        for n in params:
            assert same_array(e1.arg_dict[n], e2.arg_dict[n])
            assert same_array(e1.grad_dict[n], e2.grad_dict[n])
    assert g2.shared_data_arrays is g1.shared_data_arrays
    assert g1.grad_req == {"data": "null", "fc_weight": "write", "fc_bias": "write"}


def test_ctx_groups_place_arguments_and_gradients_on_their_contexts() -> None:
    with nv.AttrScope(ctx_group="dev1"):
        a = nv.sym.Variable("a") * 2
    with nv.AttrScope(ctx_group="dev2"):
        c = a + nv.sym.Variable("b")
    mod = nv.mod.Module(c, ("a", "b"), None, group2ctxs={"dev1": nv.cpu(1), "dev2": nv.cpu(2)})
    mod.bind(data_shapes=[("a", (2, 3)), ("b", (2, 3))], inputs_need_grad=True)
    mod.init_params()
    mod.forward(nv.io.DataBatch(data=[nd.ones((2, 3)), nd.ones((2, 3))]), is_train=True)
    mod.backward([nd.ones((2, 3))])
    ga, gb = mod.get_input_grads()
    assert (ga.context, gb.context) == (nv.cpu(1), nv.cpu(2))
    np.testing.assert_array_equal(ga.asnumpy(), np.full((2, 3), 2.0))
    np.testing.assert_array_equal(gb.asnumpy(), np.ones((2, 3)))


def _bucket_sym(_key: int):
    data = nv.sym.Variable("data")
    weight = nv.sym.Variable("a", shape=(1,), init=nv.init.One())
    return nv.sym.make_loss(nv.sym.broadcast_mul(data, weight)), ("data",), None


@pytest.mark.parametrize(("req", "second"), [("write", 2.0), ("add", 4.0)])
def test_buckets_share_parameters_and_gradients(req: str, second: float) -> None:
    mod = nv.mod.BucketingModule(sym_gen=_bucket_sym, default_bucket_key=10)
    mod.bind(data_shapes=[("data", (2,))], for_training=True, grad_req=req)
    mod.init_params()

    def step(key: int) -> float:
        desc = [nv.io.DataDesc("data", (2,), layout="N")]
        batch = nv.io.DataBatch([nd.ones((2,))], None, provide_data=desc, bucket_key=key)
        mod.forward_backward(batch)
        return mod._curr_module._exec_group.execs[0].grad_dict["a"].asscalar()

    assert step(10) == 2.0  # d(sum(data * a))/da = sum(data)
    assert step(5) == second
    assert sorted(mod._buckets) == [5, 10]
    w10 = mod._buckets[10]._exec_group.execs[0].arg_dict["a"]
    assert same_array(w10, mod._buckets[5]._exec_group.execs[0].arg_dict["a"])


def test_monitor_reports_node_outputs_and_arguments() -> None:
    x = nv.sym.FullyConnected(nv.sym.Variable("data"), num_hidden=2, name="fc")
    sym = nv.sym.Activation(x, act_type="relu", name="act")
    mon = nv.mon.Monitor(1, stat_func=lambda a: nd.sum(nd.abs(a)), pattern="fc_.*|act_.*")
    mod = nv.mod.Module(sym, ("data",), None)
    mod.bind(data_shapes=[("data", (1, 2))], for_training=False)
    mod.install_monitor(mon)
    w = np.array([[1.0, -2.0], [0.5, 0.25]], np.float32)
    mod.init_params(arg_params={"fc_weight": nd.array(w), "fc_bias": nd.zeros((2,))})
    mon.tic()
    mod.forward(nv.io.DataBatch(data=[nd.array([[1.0, 1.0]])]))
    res = {name: float(text) for _, name, text in mon.toc()}
    fc = np.array([1.0, 1.0]) @ w.T
    assert res == pytest.approx(
        {
            "fc_output": np.abs(fc).sum(),
            "act_output": np.maximum(fc, 0).sum(),
            "fc_weight": np.abs(w).sum(),
            "fc_bias": 0.0,
        }
    )
    assert mon.toc() == []  # inactive until the next tic


@pytest.mark.parametrize("on_kvstore", ["1", "0"])
def test_two_devices_train_as_one_device_on_the_whole_batch(monkeypatch, on_kvstore: str) -> None:
    monkeypatch.setenv("MXNET_UPDATE_ON_KVSTORE", on_kvstore)
    rng = np.random.default_rng(2)
    x = nd.array(rng.standard_normal((4, 5)).astype(np.float32))
    og = nd.array(rng.standard_normal((4, 3)).astype(np.float32))
    w0 = {"fc_weight": nd.array(rng.standard_normal((3, 5))), "fc_bias": nd.zeros((3,))}
    weights = []
    for ctx in (nv.cpu(), TWO):
        mod = nv.mod.Module(_fc(), ("data",), None, context=ctx)
        mod.bind(data_shapes=[("data", (4, 5))])
        mod.init_params(arg_params=w0)
        mod.init_optimizer(optimizer_params={"learning_rate": 0.5, "momentum": 0.9})
        for _ in range(3):
            mod.forward(nv.io.DataBatch(data=[x]))
            mod.backward([og])
            mod.update()
        execs = mod._exec_group.execs
        for e in execs[1:]:  # the devices' copies stay equal
            np.testing.assert_allclose(e.arg_dict["fc_weight"].asnumpy(),
                                       execs[0].arg_dict["fc_weight"].asnumpy())  # fmt: skip
        weights.append(mod.get_params()[0]["fc_weight"].asnumpy())
    np.testing.assert_allclose(weights[1], weights[0], rtol=1e-5, atol=1e-6)
