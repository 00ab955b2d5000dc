"""Executor API beyond forward/backward: reshape, copy_params_from, monitor callbacks,
shared memory (shared_exec, shared_buffer, shared_arg_names), group2ctx, NumPy inputs,
get_optimized_symbol — and that an executor keeps working after each error."""

from __future__ import annotations

import re

import numpy as np
import pytest

import nnvmpy as nv

sym = nv.sym


def _fc_executor(batch: int = 5) -> nv.executor.Executor:
    x = sym.var("x")
    y = sym.FullyConnected(x, num_hidden=4, name="fc")
    exe = y.simple_bind(nv.cpu(), x=(batch, 4), grad_req="null")
    exe.arg_dict["x"][:] = 1
    exe.arg_dict["fc_weight"][:] = nv.nd.ones((4, 4))
    exe.arg_dict["fc_bias"][:] = 0
    return exe


def test_reshape_shares_arguments_and_output_memory() -> None:
    exe = _fc_executor()
    small = exe.reshape(x=(3, 4))
    small.forward(is_train=False)
    np.testing.assert_array_equal(small.outputs[0].asnumpy(), np.full((3, 4), 4.0))
    np.testing.assert_array_equal(exe.outputs[0].asnumpy()[:3], np.full((3, 4), 4.0))  # shared
    exe.forward()
    np.testing.assert_array_equal(exe.outputs[0].asnumpy(), np.full((5, 4), 4.0))
    small.arg_dict["fc_weight"][:] = 2  # the weight is one array for both
    exe.forward()
    np.testing.assert_array_equal(exe.outputs[0].asnumpy(), np.full((5, 4), 8.0))


def test_reshape_up_sizing_needs_permission_and_then_allocates() -> None:
    exe = _fc_executor()
    with pytest.raises(nv.NNVMError, match="grows from"):
        exe.reshape(x=(6, 4))
    big = exe.reshape(allow_up_sizing=True, x=(6, 4))
    big.arg_arrays[0][:] = 0
    np.testing.assert_array_equal(exe.arg_arrays[0].asnumpy(), np.ones((5, 4)))
    np.testing.assert_array_equal(big.arg_arrays[1].asnumpy(), np.ones((4, 4)))
    big.forward()
    np.testing.assert_array_equal(big.outputs[0].asnumpy(), np.zeros((6, 4)))


def test_reshape_refuses_silent_shape_changes_and_keeps_the_executor() -> None:
    exe = _fc_executor()
    with pytest.raises(nv.NNVMError, match="argument 'fc_weight' changes"):
        exe.reshape(x=(5, 3))  # fewer features: the weight would have to become (4, 3)
    assert exe.reshape(partial_shaping=True, x=(5, 3)).arg_dict["fc_weight"].shape == (4, 3)
    x, w = sym.var("x"), sym.var("w")
    add = sym.broadcast_add(x, w).simple_bind(nv.cpu(), x=(4, 3), w=(1, 3), grad_req="null")
    with pytest.raises(nv.NNVMError, match=r"do not determine \['w'\]"):
        add.reshape(x=(2, 3))
    add.forward(x=np.ones((4, 3)), w=np.full((1, 3), 2.0))
    np.testing.assert_array_equal(add.outputs[0].asnumpy(), np.full((4, 3), 3.0))
    exe.forward()
    np.testing.assert_array_equal(exe.outputs[0].asnumpy(), np.full((5, 4), 4.0))


def test_reshape_keeps_gradients_shared() -> None:
    x = sym.var("x")
    y = sym.FullyConnected(x, num_hidden=2, name="fc", no_bias=True)
    exe = y.simple_bind(nv.cpu(), x=(4, 3))
    small = exe.reshape(x=(2, 3))
    rng = np.random.default_rng(0)
    xv, wv = rng.standard_normal((2, 3)), rng.standard_normal((2, 3))
    small.forward(is_train=True, x=xv, fc_weight=wv)
    small.backward(nv.nd.ones((2, 2)))
    want = np.ones((2, 2)).T @ xv  # dW = dy^T x
    np.testing.assert_allclose(exe.grad_dict["fc_weight"].asnumpy(), want, rtol=1e-5)


def test_copy_params_from_copies_known_names_and_checks_the_rest() -> None:
    exe = _fc_executor()
    w = np.arange(16.0).reshape(4, 4)
    exe.copy_params_from({"fc_weight": nv.nd.array(w), "fc_bias": np.ones(4)})
    np.testing.assert_array_equal(exe.arg_dict["fc_weight"].asnumpy(), w)
    with pytest.raises(nv.NNVMError, match="'extra' is not an argument"):
        exe.copy_params_from({"extra": np.ones(2)})
    exe.copy_params_from({"extra": np.ones(2)}, {"also": np.ones(1)}, allow_extra_params=True)
    with pytest.raises(nv.NNVMError, match=r"has shape \(3,\), expected \(4,\)"):
        exe.copy_params_from({"fc_bias": np.ones(3)})
    exe.forward()
    want = np.ones((5, 4)) @ w.T + 1
    np.testing.assert_array_equal(exe.outputs[0].asnumpy(), want)


def test_monitor_callback_sees_every_output_and_inputs_with_monitor_all() -> None:
    x = sym.var("x")
    y = sym.sigmoid(sym.relu(x, name="r"), name="s")
    exe = y.simple_bind(nv.cpu(), x=(2, 3), grad_req="null")
    seen: dict[str, np.ndarray] = {}
    exe.set_monitor_callback(lambda name, arr: seen.__setitem__(name, arr.asnumpy()))
    xv = np.array([[-1.0, 0.5, 2.0], [3.0, -0.1, 0.0]])
    exe.forward(x=xv)
    relu = np.maximum(xv, 0)
    assert set(seen) == {"r_output", "s_output"}
    np.testing.assert_allclose(seen["r_output"], relu)
    np.testing.assert_allclose(seen["s_output"], 1 / (1 + np.exp(-relu)), rtol=1e-6)
    seen.clear()
    exe.set_monitor_callback(
        lambda name, arr: seen.__setitem__(name, arr.asnumpy()), monitor_all=True
    )
    exe.forward(x=xv)
    # MXNet's order and names: a variable input under its own name, then as the node's
    # input (FListInputNames, else input<i>), then the node's outputs
    assert list(seen) == ["x", "r_input0", "r_output", "s_input0", "s_output"]
    np.testing.assert_allclose(seen["r_input0"], xv)
    np.testing.assert_allclose(seen["s_input0"], relu)
    names: list[str] = []
    fc = sym.FullyConnected(sym.var("data"), num_hidden=2, name="fc")
    fc_exe = fc.simple_bind(nv.cpu(), data=(3, 4), grad_req="null")
    fc_exe.set_monitor_callback(lambda name, arr: names.append(name), monitor_all=True)
    fc_exe.forward()
    assert names == ["data", "fc_data", "fc_weight", "fc_weight", "fc_bias", "fc_bias", "fc_output"]
    with pytest.raises(nv.NNVMError, match="callback must be callable"):
        exe.set_monitor_callback("print")  # type: ignore[arg-type]


def test_a_reshaped_executor_keeps_the_monitor_callback() -> None:
    """MXNet's Reshape carries the callback over (its test_monitor_with_variable_input_shape:
    a Module reshaped for a new input shape still reports to the monitor)."""
    x = sym.var("x")
    exe = sym.relu(x, name="r").simple_bind(nv.cpu(), x=(2, 3), grad_req="null")
    seen: dict[str, tuple[int, ...]] = {}
    exe.set_monitor_callback(lambda name, arr: seen.__setitem__(name, arr.shape), True)
    bigger = exe.reshape(allow_up_sizing=True, x=(4, 3))
    bigger.forward(x=-np.ones((4, 3)))
    assert seen == {"x": (4, 3), "r_input0": (4, 3), "r_output": (4, 3)}


def test_forward_takes_numpy_or_ndarray_and_reports_bad_inputs() -> None:
    x = sym.var("x")
    exe = (x * 2.0).simple_bind(nv.cpu(), x=(2,), grad_req="null")
    np.testing.assert_array_equal(exe.forward(x=np.array([1.0, 2.0]))[0].asnumpy(), [2.0, 4.0])
    np.testing.assert_array_equal(exe.forward(x=nv.nd.array([3.0, 4.0]))[0].asnumpy(), [6.0, 8.0])
    assert list(exe.output_dict.values()) == exe.outputs
    with pytest.raises(nv.NNVMError, match=r"must be an NDArray or a numpy\.ndarray"):
        exe.forward(x=[1.0, 2.0])
    with pytest.raises(nv.NNVMError, match=r"has shape \(3,\), expected \(2,\)"):
        exe.forward(x=np.ones(3))
    with pytest.raises(nv.NNVMError, match="unknown argument 'y'"):
        exe.forward(y=np.ones(2))
    np.testing.assert_array_equal(exe.forward(x=np.array([0.5, 1.0]))[0].asnumpy(), [1.0, 2.0])


def test_bind_with_shared_exec_reuses_its_memory() -> None:
    x = sym.var("x")
    y = sym.relu(sym.exp(x))
    first = y.simple_bind(nv.cpu(), x=(8,), grad_req="null")
    second = y.bind(nv.cpu(), {"x": nv.nd.zeros((4,))}, shared_exec=first)
    assert second.outputs[0]._chunk is first.outputs[0]._chunk
    second.forward(x=np.zeros(4))
    np.testing.assert_allclose(first.outputs[0].asnumpy()[:4], np.ones(4))
    with pytest.raises(nv.NNVMError, match="shared_exec must be an Executor"):
        y.bind(nv.cpu(), {"x": nv.nd.zeros((4,))}, shared_exec="exe")


def test_simple_bind_reuses_shared_buffer_and_shared_arguments() -> None:
    x = sym.var("x")
    y = sym.FullyConnected(x, num_hidden=3, name="fc")
    buffer: dict[str, nv.nd.NDArray] = {}
    big = y.simple_bind(nv.cpu(), x=(6, 2), shared_buffer=buffer)
    assert set(buffer) == {
        "x",
        "fc_weight",
        "fc_bias",
        "grad of x",
        "grad of fc_weight",
        "grad of fc_bias",
    }
    small = y.simple_bind(
        nv.cpu(),
        x=(3, 2),
        shared_buffer=buffer,
        shared_exec=big,
        shared_arg_names=["fc_weight", "fc_bias"],
    )
    assert small.arg_dict["fc_weight"] is big.arg_dict["fc_weight"]
    assert small.arg_dict["x"]._chunk is buffer["x"]._chunk  # a view of the larger array
    with pytest.raises(nv.NNVMError, match="shared argument 'fc_weight'"):
        sym.FullyConnected(x, num_hidden=5, name="fc").simple_bind(
            nv.cpu(), x=(3, 2), shared_exec=big, shared_arg_names=["fc_weight"]
        )


def test_group2ctx_is_validated() -> None:
    x = sym.var("x")
    exe = (x + 1.0).simple_bind(nv.cpu(), x=(2,), group2ctx={"stage1": nv.cpu()})
    exe.forward(x=np.zeros(2))
    with pytest.raises(nv.NNVMError, match="group2ctx must map group names to Contexts"):
        (x + 1.0).simple_bind(nv.cpu(), x=(2,), group2ctx={"stage1": "cpu"})


def test_common_expressions_are_merged_unless_switched_off(monkeypatch: pytest.MonkeyPatch) -> None:
    a, b = sym.var("a"), sym.var("b")
    net = sym.Group([(a + b) * (a + b), (a + b) * (a + b)])
    shapes = {"a": (3,), "b": (3,)}
    merged = net.simple_bind(nv.cpu(), **shapes)
    monkeypatch.setenv("MXNET_ELIMINATE_COMMON_EXPR", "0")
    plain = net.simple_bind(nv.cpu(), **shapes)
    # merged: a, b, one add, one mul, and a _copy so the two outputs stay distinct
    assert len(merged.get_optimized_symbol().get_internals()) == 5
    assert len(plain.get_optimized_symbol().get_internals()) == 8
    av, bv = np.array([1.0, 2.0, 3.0]), np.array([0.5, 0.5, -1.0])
    for exe in (merged, plain):
        outs = exe.forward(is_train=True, a=av, b=bv)
        for o in outs:
            np.testing.assert_allclose(o.asnumpy(), (av + bv) ** 2, rtol=1e-6)
        exe.backward([nv.nd.ones((3,)), nv.nd.ones((3,))])
        np.testing.assert_allclose(exe.grad_dict["a"].asnumpy(), 4 * (av + bv), rtol=1e-6)


def test_debug_str_total_line_is_mxnets() -> None:
    x = sym.var("x")
    exe = sym.relu(sym.exp(x)).simple_bind(nv.cpu(), x=(1024, 1024), grad_req="null")
    total = re.search(r"Total (\d+) MB allocated \((\d+) bytes", exe.debug_str())
    assert total is not None
    assert int(total.group(1)) == exe.storage_bytes >> 20
    assert int(total.group(2)) == exe.storage_bytes


def test_backward_ignores_head_gradients_nothing_reads_and_runs_nothing_without_grads() -> None:
    a = sym.var("a")
    out = sym.Group([sym.argmax(a, axis=1, keepdims=True), a * 3.0])
    exe = out.simple_bind(nv.cpu(), a=(2, 3))
    exe.forward(is_train=True, a=np.arange(6.0).reshape(2, 3))
    # argmax's gradient is zero whatever its head gradient: a mis-shaped one is ignored
    exe.backward([nv.nd.ones((2, 3)), nv.nd.ones((2, 3))])
    np.testing.assert_array_equal(exe.grad_dict["a"].asnumpy(), np.full((2, 3), 3.0))
    with pytest.raises(nv.NNVMError, match=r"out_grad for '_mulscalar\d+_output'"):
        exe.backward([nv.nd.ones((2, 3)), nv.nd.ones((3, 3))])
    frozen = out.simple_bind(nv.cpu(), a=(2, 3), grad_req="null")
    frozen.forward(a=np.ones((2, 3)))
    frozen.backward()  # nothing wants a gradient: a no-op, as in MXNet
    assert frozen.grad_dict == {}


def test_a_backward_that_reads_no_forward_value_may_run_without_forward() -> None:
    """repeat's gradient only sums out_grad: MXNet runs backward() on a fresh executor."""
    x = np.arange(12.0).reshape(3, 4)
    exe = nv.sym.repeat(nv.sym.Variable("data"), repeats=2, axis=0).bind(
        nv.cpu(), args=[nv.nd.array(x)], args_grad=[nv.nd.empty((3, 4))]
    )
    for scale in (1.0, 2.0):  # and again, still without a forward
        g = scale * np.arange(24.0).reshape(6, 4)
        exe.backward(nv.nd.array(g))
        np.testing.assert_array_equal(exe.grad_arrays[0].asnumpy(), g[0::2] + g[1::2])


def test_a_backward_that_reads_forward_values_still_needs_a_forward() -> None:
    x = nv.nd.array(np.zeros((2, 2)))
    exe = nv.sym.sigmoid(nv.sym.Variable("data")).bind(
        nv.cpu(), args=[x], args_grad=[nv.nd.empty((2, 2))]
    )
    with pytest.raises(nv.NNVMError, match=r"forward\(is_train=True\) first"):
        exe.backward(nv.nd.ones((2, 2)))
    exe.forward(is_train=True)
    exe.backward(nv.nd.ones((2, 2)))
    np.testing.assert_allclose(exe.grad_arrays[0].asnumpy(), np.full((2, 2), 0.25))
