"""nv.autograd's API: scopes, variables, backward, grad, head gradients, retain_graph,
detach, get_symbol, and the bad inputs. Gradients are checked against NumPy formulas and
against the symbolic executor's gradient of the same graph."""

from __future__ import annotations

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy.base import NNVMError

nd, ag = nv.nd, nv.autograd
RNG = np.random.default_rng(19)


def arr(*shape: int, low: float = -1.0, high: float = 1.0) -> nv.nd.NDArray:
    return nd.array(RNG.uniform(low, high, size=shape))


# -- scopes and flags ----------------------------------------------------------------------------


def test_scopes_set_and_restore_the_flags() -> None:
    assert not ag.is_recording()
    assert not ag.is_training()
    with ag.record():
        assert ag.is_recording()
        assert ag.is_training()
        with ag.pause():
            assert not ag.is_recording()
            assert not ag.is_training()
            with ag.train_mode():
                assert not ag.is_recording()
                assert ag.is_training()
        with ag.predict_mode():
            assert ag.is_recording()
            assert not ag.is_training()
        assert ag.is_recording()
        assert ag.is_training()
    with ag.record(train_mode=False):
        assert ag.is_recording()
        assert not ag.is_training()
    assert not ag.is_recording()
    assert not ag.is_training()


def test_scopes_restore_the_flags_when_the_block_raises() -> None:
    with pytest.raises(ValueError), ag.record():
        raise ValueError("boom")
    assert not ag.is_recording()
    assert not ag.is_training()


def test_set_recording_and_set_training_return_the_previous_value() -> None:
    assert ag.set_recording(True) is False
    assert ag.set_recording(False) is True
    assert ag.set_training(True) is False
    assert ag.set_training(False) is True


# -- backward ------------------------------------------------------------------------------------


def test_backward_of_a_composite_function_matches_its_derivative() -> None:
    x, y = arr(3, 4), arr(3, 4, low=0.5, high=2.0)
    x.attach_grad()
    y.attach_grad()
    with ag.record():
        z = nd.exp(x) * y + x / y - 2 * x
    z.backward()
    # float64 reference; atol for entries the sum cancels to near zero (float32 rounding
    # of the ~5-sized terms is ~5e-7 there)
    xn, yn = x.asnumpy().astype(np.float64), y.asnumpy().astype(np.float64)
    want_x, want_y = np.exp(xn) * yn + 1 / yn - 2, np.exp(xn) - xn / yn**2
    np.testing.assert_allclose(x.grad.asnumpy(), want_x, rtol=1e-5, atol=2e-6)
    np.testing.assert_allclose(y.grad.asnumpy(), want_y, rtol=1e-5, atol=2e-6)


def test_an_mlp_gradient_matches_the_executor() -> None:
    shapes = {"data": (8, 5), "w1": (6, 5), "b1": (6,), "w2": (3, 6), "b2": (3,)}
    values = {k: RNG.uniform(-1, 1, size=s) for k, s in shapes.items()}
    label = RNG.integers(0, 3, size=8).astype(np.float64)
    # executor
    v = {k: nv.sym.Variable(k) for k in shapes}
    h = nv.sym.Activation(
        nv.sym.FullyConnected(v["data"], v["w1"], v["b1"], num_hidden=6), act_type="tanh"
    )
    out = nv.sym.SoftmaxOutput(
        nv.sym.FullyConnected(h, v["w2"], v["b2"], num_hidden=3), nv.sym.Variable("label")
    )
    exe = out.simple_bind(nv.cpu(), grad_req="write", label=(8,), **shapes)
    exe.forward(is_train=True, label=label, **values)
    exe.backward()
    # autograd
    a = {k: nd.array(x) for k, x in values.items()}
    for k in ("w1", "b1", "w2", "b2"):
        a[k].attach_grad()
    with ag.record():
        h2 = nd.Activation(
            nd.FullyConnected(a["data"], a["w1"], a["b1"], num_hidden=6), act_type="tanh"
        )
        y = nd.SoftmaxOutput(nd.FullyConnected(h2, a["w2"], a["b2"], num_hidden=3), nd.array(label))
    y.backward()
    np.testing.assert_allclose(y.asnumpy(), exe.outputs[0].asnumpy(), rtol=1e-6)
    for k in ("w1", "b1", "w2", "b2"):
        np.testing.assert_allclose(
            a[k].grad.asnumpy(), exe.grad_dict[k].asnumpy(), rtol=1e-5, atol=1e-7, err_msg=k
        )


def test_head_grads_weight_the_heads() -> None:
    x = arr(2, 3)
    x.attach_grad()
    with ag.record():
        a, b = x * 2, nd.square(x)
    ga, gb = arr(2, 3), arr(2, 3)
    ag.backward([a, b], [ga, gb])
    want = 2 * ga.asnumpy() + 2 * x.asnumpy() * gb.asnumpy()
    np.testing.assert_allclose(x.grad.asnumpy(), want, rtol=1e-5)


def test_a_head_gradient_of_none_means_ones() -> None:
    x = arr(3)
    x.attach_grad()
    with ag.record():
        a, b = x * 3, x * 5
    ag.backward([a, b], [None, nd.full((3,), 2.0)])
    np.testing.assert_allclose(x.grad.asnumpy(), np.full(3, 3 + 10.0))


def test_grad_req_write_overwrites_and_add_accumulates() -> None:
    x, y = arr(4), arr(4)
    x.attach_grad()
    y.attach_grad(grad_req="add")
    for _ in range(3):
        with ag.record():
            z = x * y
        z.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), y.asnumpy(), rtol=1e-6)
    np.testing.assert_allclose(y.grad.asnumpy(), 3 * x.asnumpy(), rtol=1e-6)


def test_a_null_request_gets_no_gradient() -> None:
    x, y = arr(4), arr(4)
    x.attach_grad()
    y.attach_grad(grad_req="null")
    with ag.record():
        z = x * y
    z.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), y.asnumpy())
    np.testing.assert_array_equal(y.grad.asnumpy(), 0)


def test_mark_variables_with_given_buffers_and_requests() -> None:
    x, y = arr(3), arr(3)
    dx, dy = nd.zeros((3,)), nd.ones((3,))
    ag.mark_variables([x, y], [dx, dy], grad_reqs=["write", "add"])
    with ag.record():
        z = x * x + y
    z.backward()
    np.testing.assert_allclose(dx.asnumpy(), 2 * x.asnumpy(), rtol=1e-6)
    np.testing.assert_allclose(dy.asnumpy(), 2.0)
    assert x.grad is dx


def test_a_variable_used_twice_sums_its_gradients() -> None:
    x = arr(5)
    x.attach_grad()
    with ag.record():
        y = x * x * x + x
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), 3 * x.asnumpy() ** 2 + 1, rtol=1e-5)


def test_retain_graph_allows_a_second_backward() -> None:
    x = arr(3)
    x.attach_grad(grad_req="add")
    with ag.record():
        y = nd.exp(x)
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), 2 * np.exp(x.asnumpy()), rtol=1e-6)
    with pytest.raises(NNVMError, match="retain_graph"):
        y.backward()


def test_detach_stops_the_gradient() -> None:
    x = arr(3)
    x.attach_grad()
    with ag.record():
        y = x * 2
        z = y.detach() * x
    z.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), 2 * x.asnumpy(), rtol=1e-6)
    assert z.detach().grad is None


def test_fresh_grad_flag() -> None:
    x = arr(2)
    x.attach_grad()
    assert x._fresh_grad is False
    with ag.record():
        y = x + 1
    y.backward()
    assert x._fresh_grad is True
    x._fresh_grad = False
    assert x._fresh_grad is False


def test_grad_returns_new_arrays_and_leaves_the_buffers_alone() -> None:
    x = arr(3)
    x.attach_grad()
    with ag.record():
        y = nd.sin(x)
    (dx,) = ag.grad(y, [x])
    np.testing.assert_allclose(dx.asnumpy(), np.cos(x.asnumpy()), rtol=1e-6)
    np.testing.assert_array_equal(x.grad.asnumpy(), 0)
    with ag.record():
        y = nd.sin(x)
    single = ag.grad(y, x)  # a list even for one NDArray variable, as MXNet 1.x returns
    assert isinstance(single, list)
    assert len(single) == 1
    np.testing.assert_allclose(single[0].asnumpy(), np.cos(x.asnumpy()), rtol=1e-6)


def test_an_output_recorded_in_predict_mode_is_still_differentiable() -> None:
    x = arr(4, 4)
    x.attach_grad()
    with ag.record(train_mode=False):
        y = nd.Dropout(x, p=0.5)
    np.testing.assert_array_equal(y.asnumpy(), x.asnumpy())
    y.backward(train_mode=False)
    np.testing.assert_array_equal(x.grad.asnumpy(), 1)


# -- train_mode reaches the ops -----------------------------------------------------------------


def test_dropout_trains_under_record_and_infers_otherwise() -> None:
    x = nd.ones((50, 40))
    x.attach_grad()
    with ag.record():
        y = nd.Dropout(x, p=0.5)
    values = set(np.unique(y.asnumpy()))
    assert values == {0.0, 2.0}
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), y.asnumpy())  # the same mask
    for scope in (ag.pause, ag.predict_mode, lambda: ag.record(train_mode=False)):
        with scope():
            np.testing.assert_array_equal(nd.Dropout(x, p=0.5).asnumpy(), 1.0)
    with ag.train_mode():
        assert set(np.unique(nd.Dropout(x, p=0.5).asnumpy())) == {0.0, 2.0}


def test_batchnorm_uses_batch_statistics_only_in_training() -> None:
    x = arr(6, 3, low=0.0, high=4.0)
    gamma, beta = nd.ones((3,)), nd.zeros((3,))
    mean, var = nd.full((3,), 0.5), nd.full((3,), 2.0)
    xn = x.asnumpy()
    eps = 1e-3
    with ag.record():
        train = nd.BatchNorm(x, gamma, beta, mean, var, fix_gamma=False, eps=eps)
    want = (xn - xn.mean(0)) / np.sqrt(xn.var(0) + eps)
    np.testing.assert_allclose(train.asnumpy(), want, rtol=1e-4, atol=1e-5)
    mean, var = nd.full((3,), 0.5), nd.full((3,), 2.0)
    with ag.record(train_mode=False):
        infer = nd.BatchNorm(x, gamma, beta, mean, var, fix_gamma=False, eps=eps)
    np.testing.assert_allclose(infer.asnumpy(), (xn - 0.5) / np.sqrt(2.0 + eps), rtol=1e-5)


# -- get_symbol ----------------------------------------------------------------------------------


def test_get_symbol_gives_the_recorded_graph() -> None:
    x, z = arr(2, 3), arr(2, 3)
    x.attach_grad()
    z.attach_grad()
    with ag.record():
        y = x * x + 2 * z - 1
    s = ag.get_symbol(y)
    names = s.list_arguments()
    assert len(names) == 2
    exe = s.bind(nv.cpu(), dict(zip(names, [x, z])))
    (out,) = exe.forward()
    np.testing.assert_allclose(out.asnumpy(), y.asnumpy(), rtol=1e-6)


# -- bad input -----------------------------------------------------------------------------------


def _still_works() -> None:
    x = nd.array([1.0, 2.0])
    x.attach_grad()
    with ag.record():
        y = x * x
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [2.0, 4.0])


def test_backward_on_an_unrecorded_array_is_an_error() -> None:
    with pytest.raises(NNVMError, match="not in a recorded graph"):
        nd.ones((2,)).backward()
    _still_works()


def test_head_grads_of_the_wrong_shape_are_an_error() -> None:
    x = arr(2, 3)
    x.attach_grad()
    with ag.record():
        y = x * 2
    with pytest.raises(NNVMError, match=r"head_grads\[0\] has shape \(3, 2\)"):
        y.backward(nd.ones((3, 2)))
    with pytest.raises(NNVMError, match="2 head_grads"):
        ag.backward([y], [nd.ones((2, 3)), nd.ones((2, 3))])
    y.backward(nd.ones((2, 3)))  # the graph survived the refused calls
    _still_works()


def test_unknown_grad_req_is_an_error() -> None:
    x = arr(2)
    with pytest.raises(NNVMError, match="grad_req 'sum'"):
        x.attach_grad(grad_req="sum")
    with pytest.raises(NNVMError, match="grad_req 'w'"):
        ag.mark_variables([x], [nd.zeros((2,))], grad_reqs="w")
    assert x.grad is None
    _still_works()


def test_differentiating_through_an_op_without_fgradient_names_it(scoped_registry: None) -> None:
    def compute(attrs, ctx, inputs, req, outputs):  # type: ignore[no-untyped-def]
        outputs[0][...] = inputs[0] * 2

    (
        nv.register_op("t_no_gradient")
        .set_attr("FInferShape", nv.elemwise_shape(1, 1))
        .set_attr("FInferType", nv.elemwise_type(1, 1))
        .set_attr("FCompute<cpu>", compute)
    )
    x = arr(3)
    x.attach_grad()
    with ag.record():
        y = nd.t_no_gradient(x) + 1
    np.testing.assert_allclose(y.asnumpy(), 2 * x.asnumpy() + 1)
    with pytest.raises(NNVMError, match=r"t_no_gradient.*no FGradient"):
        y.backward()
    _still_works()


def test_grad_of_a_variable_not_in_the_graph_is_an_error() -> None:
    x, w = arr(3), arr(3)
    x.attach_grad()
    w.attach_grad()
    with ag.record():
        y = x * 2
    with pytest.raises(NNVMError, match=r"variable 1 .*not in the graph"):
        ag.grad(y, [x, w])
    with pytest.raises(NNVMError, match="does not require a gradient"):
        ag.grad(y, [nd.ones((3,))])
    _still_works()


def test_backward_without_any_variable_is_an_error() -> None:
    x = arr(3)
    with ag.record():
        y = x * 2  # no input on the tape: not recorded (as MXNet)
    with pytest.raises(NNVMError, match="not in a recorded graph"):
        y.backward()
    x.attach_grad(grad_req="null")
    with ag.record():
        y = x * 2
    with pytest.raises(NNVMError, match="requires a gradient"):
        y.backward()
    _still_works()


def test_writing_into_a_recorded_array_while_recording_is_an_error() -> None:
    x = arr(3)
    x.attach_grad()
    with ag.record():
        y = x * 2
        with pytest.raises(NNVMError, match="already in a recorded graph"):
            nd.relu(y, out=x)
        fresh = nd.zeros((3,))
        nd.relu(y, out=fresh)  # a fresh array may be an out=
    fresh.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), 2 * (x.asnumpy() > 0))


# -- devices -------------------------------------------------------------------------------------


def test_backward_on_every_device(ctx: nv.Context) -> None:
    xn, wn = RNG.uniform(-1, 1, (4, 3)), RNG.uniform(-1, 1, (2, 3))
    x, w = nd.array(xn, ctx=ctx), nd.array(wn, ctx=ctx)
    x.attach_grad()
    w.attach_grad(grad_req="add")
    with ag.record():
        h = nd.FullyConnected(x, w, num_hidden=2, no_bias=True)
        y = nd.relu(h) * h
    y.backward()
    assert x.grad.context == ctx
    hn = xn @ wn.T
    dh = 2 * hn * (hn > 0)
    np.testing.assert_allclose(x.grad.asnumpy(), dh @ wn, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(w.grad.asnumpy(), dh.T @ xn, rtol=1e-5, atol=1e-6)


# -- the backward plan cache ---------------------------------------------------------------------


def test_a_repeated_graph_compiles_its_backward_once(monkeypatch: pytest.MonkeyPatch) -> None:
    from nnvmpy.autograd import backprop

    compiled: list[int] = []
    real = backprop.compile_plan

    def counting(*args, **kwargs):  # type: ignore[no-untyped-def]
        compiled.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(backprop, "compile_plan", counting)
    backprop._plans.clear()
    w = arr(4, 3)
    w.attach_grad()
    for step in range(4):
        x = arr(2, 3)
        with ag.record():
            y = nd.FullyConnected(x, w, num_hidden=4, no_bias=True, flatten=False)
            z = nd.tanh(y) * y
        z.backward()
        h = x.asnumpy() @ w.asnumpy().T
        t = np.tanh(h)
        dh = t + h * (1 - t * t)
        np.testing.assert_allclose(w.grad.asnumpy(), dh.T @ x.asnumpy(), rtol=1e-5, atol=1e-6)
        assert len(compiled) == 1, f"step {step} compiled again"
    # another shape is another graph: compiled anew, and right
    x = arr(5, 3)
    with ag.record():
        z = nd.FullyConnected(x, w, num_hidden=4, no_bias=True, flatten=False)
    z.backward()
    assert len(compiled) == 2
    np.testing.assert_allclose(w.grad.asnumpy(), np.ones((4, 5)) @ x.asnumpy(), rtol=1e-5)


def test_the_demo_shows_the_imperative_gradient() -> None:
    from nnvmpy import demo

    lines: list[str] = []
    grad = demo.autograd_step(report=lines.append)
    assert "x.grad" in lines[0]
    assert lines[1].startswith("max |x.grad - (2ax+b)|: ")
    assert grad.shape == (2, 3)


# -- views, copies and in-place writes -----------------------------------------------------------


@pytest.mark.parametrize(
    "view",
    [
        lambda x: x[1:3],
        lambda x: x[1],
        lambda x: x[:, 1:3],
        lambda x: x.reshape((4, 3)),
        lambda x: x.T,
        lambda x: x.copy(),
    ],
    ids=["rows", "row", "columns", "reshape", "T", "copy"],
)
def test_views_and_copies_pass_gradients_back(view) -> None:  # type: ignore[no-untyped-def]
    xn = RNG.uniform(-1, 1, (3, 4))
    x = nd.array(xn)
    x.attach_grad()
    with ag.record():
        v = view(x)
        y = v * v
    y.backward()
    mask = np.zeros_like(xn)
    probe = view(nd.array(np.arange(12.0).reshape(3, 4))).asnumpy().ravel().astype(int)
    mask.ravel()[probe] = 1  # the elements the view reads
    np.testing.assert_allclose(x.grad.asnumpy(), 2 * xn * mask, rtol=1e-6)


def test_in_place_writes_to_recorded_arrays_are_refused_while_recording() -> None:
    x = arr(3)
    x.attach_grad()
    with ag.record():
        y = x * 2
        for write in (lambda: y.__iadd__(1.0), lambda: y.__setitem__(slice(None), 0.0)):
            with pytest.raises(NNVMError):
                write()
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), 2.0)
