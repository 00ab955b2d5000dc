"""The fused RNN op against a NumPy reference (tests/ops/rnn_reference.py): every mode,
uni- and bidirectional, several layers, states out, sequence lengths, clipping,
gradients by finite differences, shape inference both ways and named errors."""

from __future__ import annotations

import numpy as np
import pytest
from rnn_reference import param_size, rnn_reference

import nnvmpy as nv
from nnvmpy.test_utils import check_numeric_gradient

MODES = ["rnn_relu", "rnn_tanh", "lstm", "gru"]


def _inputs(rng, mode, steps, batch, inp, hidden, layers, bidir, proj=0, dtype=np.float64):
    dirs = 2 if bidir else 1
    size = param_size(mode, layers, inp, hidden, bidir, proj)
    data = rng.uniform(-1, 1, (steps, batch, inp)).astype(dtype)
    params = rng.uniform(-0.5, 0.5, size).astype(dtype)
    hx = rng.uniform(-1, 1, (layers * dirs, batch, proj or hidden)).astype(dtype)
    cx = (
        rng.uniform(-1, 1, (layers * dirs, batch, hidden)).astype(dtype) if mode == "lstm" else None
    )
    return data, params, hx, cx


def _run(mode, data, params, hx, cx, lengths=None, **kw):
    args = [nv.nd.array(a, dtype=a.dtype) for a in (data, params, hx)]
    if cx is not None:
        args.append(nv.nd.array(cx, dtype=cx.dtype))
    if lengths is not None:
        args.append(nv.nd.array(lengths, dtype=np.int32))
        kw["use_sequence_length"] = True
    outs = nv.nd.RNN(*args, mode=mode, state_outputs=True, **kw)
    return [o.asnumpy() for o in outs]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("bidir", [False, True])
def test_forward_matches_reference(mode, bidir):
    rng = np.random.default_rng(0)
    steps, batch, inp, hidden, layers = 4, 3, 5, 6, 2
    data, params, hx, cx = _inputs(rng, mode, steps, batch, inp, hidden, layers, bidir)
    got = _run(
        mode, data, params, hx, cx, state_size=hidden, num_layers=layers, bidirectional=bidir
    )
    want = rnn_reference(data, params, hx, cx, mode=mode, state_size=hidden, num_layers=layers,
                         bidirectional=bidir)  # fmt: skip
    assert len(got) == (3 if mode == "lstm" else 2)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("mode", MODES)
def test_sequence_length(mode):
    rng = np.random.default_rng(1)
    data, params, hx, cx = _inputs(rng, mode, 5, 3, 2, 3, 2, True)
    lengths = np.array([5, 2, 1])
    got = _run(mode, data, params, hx, cx, lengths, state_size=3, num_layers=2, bidirectional=True)
    want = rnn_reference(data, params, hx, cx, lengths, mode=mode, state_size=3, num_layers=2,
                         bidirectional=True)  # fmt: skip
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)


def test_lstm_state_clip():
    rng = np.random.default_rng(2)
    data, params, hx, cx = _inputs(rng, "lstm", 4, 2, 3, 4, 1, False)
    params *= 6
    got = _run("lstm", data, params, hx, cx, state_size=4, num_layers=1,
               lstm_state_clip_min=-0.3, lstm_state_clip_max=0.4)  # fmt: skip
    want = rnn_reference(data, params, hx, cx, mode="lstm", state_size=4, num_layers=1,
                         clip=(-0.3, 0.4))  # fmt: skip
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)
    assert got[2].max() <= 0.4
    assert got[2].min() >= -0.3


def test_float32_and_default_outputs():
    rng = np.random.default_rng(3)
    data, params, hx, _ = _inputs(rng, "gru", 3, 2, 4, 5, 1, False, dtype=np.float32)
    out = nv.nd.RNN(nv.nd.array(data), nv.nd.array(params), nv.nd.array(hx), mode="gru",
                    state_size=5, num_layers=1)  # fmt: skip
    assert out.dtype == np.float32
    assert out.shape == (3, 2, 5)
    want = rnn_reference(data, params, hx, mode="gru", state_size=5, num_layers=1)[0]
    np.testing.assert_allclose(out.asnumpy(), want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("bidir", [False, True])
def test_gradients_finite_differences(mode, bidir):
    rng = np.random.default_rng(4)
    data, params, hx, cx = _inputs(rng, mode, 3, 2, 2, 3, 2, bidir)
    if mode == "rnn_relu":  # keep pre-activations away from the kink
        params = np.abs(params) + 0.05
        data, hx = np.abs(data) + 0.1, np.abs(hx) + 0.1
    names = ["data", "parameters", "state"] + (["state_cell"] if cx is not None else [])
    syms = [nv.sym.Variable(n) for n in names]
    s = nv.sym.RNN(*syms, mode=mode, state_size=3, num_layers=2, bidirectional=bidir,
                   state_outputs=True)  # fmt: skip
    loc = dict(zip(names, [a for a in (data, params, hx, cx) if a is not None]))
    check_numeric_gradient(s, loc, numeric_eps=1e-6, rtol=1e-4, atol=1e-6, dtype=np.float64)


def test_gradient_with_sequence_length():
    rng = np.random.default_rng(5)
    data, params, hx, cx = _inputs(rng, "lstm", 4, 3, 2, 2, 1, True)
    names = ["data", "parameters", "state", "state_cell"]
    s = nv.sym.RNN(*[nv.sym.Variable(n) for n in names], nv.sym.Variable("len"), mode="lstm",
                   state_size=2, num_layers=1, bidirectional=True, state_outputs=True,
                   use_sequence_length=True)  # fmt: skip
    loc = dict(zip(names, (data, params, hx, cx)))
    loc["len"] = np.array([4.0, 1.0, 3.0])
    check_numeric_gradient(s, loc, grad_nodes=names, numeric_eps=1e-6, rtol=1e-4, atol=1e-6,
                           dtype=np.float64)  # fmt: skip


def test_parameter_gradient_write_and_add_agree():
    # grad_req='write' lets the CPU backward write d(parameters) straight into the bound
    # gradient array; 'add' goes through a temporary and accumulates: the two must agree
    rng = np.random.default_rng(6)
    data, params, hx, cx = _inputs(rng, "lstm", 5, 3, 4, 8, 2, False)
    names = ["data", "parameters", "state", "state_cell"]
    s = nv.sym.RNN(*[nv.sym.Variable(n) for n in names], mode="lstm", state_size=8,
                   num_layers=2, state_outputs=True)  # fmt: skip
    shapes = {n: a.shape for n, a in zip(names, (data, params, hx, cx))}
    types = dict.fromkeys(names, np.float64)
    grads = {}
    for req in ("write", "add"):
        exe = s.simple_bind(nv.cpu(), grad_req=req, type_dict=types, **shapes)
        for n, a in zip(names, (data, params, hx, cx)):
            exe.arg_dict[n][:] = a
        exe.grad_dict["parameters"][:] = np.nan if req == "write" else 1.0
        draw = np.random.default_rng(7)  # the same head gradients for both binds
        heads = [nv.nd.array(draw.uniform(-1, 1, o.shape), dtype=np.float64) for o in exe.outputs]
        for _ in range(1 if req == "write" else 2):
            exe.forward(is_train=True)
            exe.backward(heads)
        grads[req] = exe.grad_dict["parameters"].asnumpy()
    assert np.isfinite(grads["write"]).all()
    np.testing.assert_allclose(grads["add"], 1.0 + 2 * grads["write"], rtol=1e-12, atol=1e-12)


def test_infer_shape_both_ways():
    s = nv.sym.RNN(mode="lstm", state_size=8, num_layers=2, bidirectional=True, name="rnn",
                   state_outputs=True)  # fmt: skip
    assert s.list_arguments() == ["rnn_data", "rnn_parameters", "rnn_state", "rnn_state_cell"]
    assert s.list_outputs() == ["rnn_output", "rnn_state_output", "rnn_statecell_output"]
    args, outs, _ = s.infer_shape(rnn_data=(5, 4, 3))
    size = param_size("lstm", 2, 3, 8, True)
    assert args == [(5, 4, 3), (size,), (4, 4, 8), (4, 4, 8)]
    assert outs == [(5, 4, 16), (4, 4, 8), (4, 4, 8)]
    # the data's feature size from the parameter vector, the batch from the state
    args, _, _ = nv.sym.RNN(mode="gru", state_size=8, num_layers=3, name="g").infer_shape_partial(
        g_parameters=(param_size("gru", 3, 7, 8, False),), g_state=(3, 2, 8)
    )
    assert args[0] == (None, 2, 7) or args[0] == (0, 2, 7)


def test_bad_input_named_errors():
    s = nv.sym.RNN(mode="lstm", state_size=4, num_layers=1, name="rnn")
    with pytest.raises(nv.NNVMError, match=r"RNN.*state"):
        s.infer_shape(rnn_data=(3, 2, 5), rnn_state=(1, 3, 4))
    with pytest.raises(nv.NNVMError, match=r"RNN.*parameters"):
        s.infer_shape(rnn_data=(3, 2, 5), rnn_parameters=(17,))
    with pytest.raises(nv.NNVMError, match="mode"):
        nv.sym.RNN(mode="lstmx", state_size=4, num_layers=1)
    rng = np.random.default_rng(6)
    data, params, hx, cx = _inputs(rng, "lstm", 3, 2, 5, 4, 1, False)
    with pytest.raises(nv.NNVMError, match=r"RNN.*sequence_length"):
        _run("lstm", data, params, hx, cx, np.array([3, 4]), state_size=4, num_layers=1)
    clip_one = nv.sym.RNN(mode="lstm", state_size=4, num_layers=1, lstm_state_clip_min=-1.0)
    with pytest.raises(nv.NNVMError, match="lstm_state_clip_max"):
        clip_one.infer_shape(**{clip_one.list_arguments()[0]: (3, 2, 5)})
    # still works afterwards
    data, params, hx, cx = _inputs(np.random.default_rng(7), "lstm", 3, 2, 5, 4, 1, False)
    assert _run("lstm", data, params, hx, cx, state_size=4, num_layers=1)[0].shape == (3, 2, 4)


@pytest.mark.parametrize("bidir", [False, True])
def test_lstm_projection(bidir):
    rng = np.random.default_rng(8)
    data, params, hx, cx = _inputs(rng, "lstm", 3, 2, 4, 5, 2, bidir, proj=3)
    kw = {"state_size": 5, "num_layers": 2, "bidirectional": bidir}
    got = _run("lstm", data, params, hx, cx, projection_size=3, **kw)
    want = rnn_reference(data, params, hx, cx, mode="lstm", projection_size=3, **kw)
    assert got[0].shape == (3, 2, 3 * (2 if bidir else 1))
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)
    names = ["data", "parameters", "state", "state_cell"]
    s = nv.sym.RNN(*[nv.sym.Variable(n) for n in names], mode="lstm", projection_size=3,
                   state_outputs=True, **kw)  # fmt: skip
    loc = dict(zip(names, (data, params, hx, cx)))
    check_numeric_gradient(s, loc, numeric_eps=1e-6, rtol=1e-4, atol=1e-6, dtype=np.float64)


def test_dropout_between_layers_only_while_training():
    rng = np.random.default_rng(9)
    data, params, hx, _ = _inputs(rng, "rnn_tanh", 4, 8, 3, 16, 2, False)
    names = ["data", "parameters", "state"]
    kw = {"mode": "rnn_tanh", "state_size": 16, "num_layers": 2}
    s = nv.sym.RNN(*[nv.sym.Variable(n) for n in names], p=0.5, **kw)
    args = {n: nv.nd.array(a, dtype=np.float64) for n, a in zip(names, (data, params, hx))}
    grads = {n: nv.nd.zeros(a.shape, dtype=np.float64) for n, a in args.items()}
    exe = s.bind(nv.cpu(), args, args_grad=grads)
    plain = rnn_reference(data, params, hx, state_size=16, num_layers=2, mode="rnn_tanh")[0]
    np.testing.assert_allclose(exe.forward(is_train=False)[0].asnumpy(), plain, rtol=1e-10)
    trained = exe.forward(is_train=True)[0].asnumpy()
    assert np.abs(trained - plain).max() > 1e-3  # the second layer saw a dropped input
    exe.backward(nv.nd.ones(trained.shape, dtype=np.float64))
    assert np.isfinite(exe.grad_dict["data"].asnumpy()).all()
    # the first layer's weights see no dropout: p=0.5 with one layer is exact
    one = nv.sym.RNN(*[nv.sym.Variable(n) for n in names], p=0.5, mode="rnn_tanh",
                     state_size=16, num_layers=1)  # fmt: skip
    sizes = param_size("rnn_tanh", 1, 3, 16, False)
    args1 = {**args, "parameters": nv.nd.array(params[:sizes], dtype=np.float64)}
    args1["state"] = nv.nd.array(hx[:1], dtype=np.float64)
    got = one.bind(nv.cpu(), args1).forward(is_train=True)[0].asnumpy()
    want = rnn_reference(data, params[:sizes], hx[:1], state_size=16, num_layers=1, mode="rnn_tanh")
    np.testing.assert_allclose(got, want[0], rtol=1e-10)


@pytest.fixture
def device_schedule(monkeypatch):
    """Run the GPU's schedule (device GEMMs + gate kernels) on the CPU."""
    from nnvmpy.ops.nn import rnn

    monkeypatch.setattr(rnn, "FORCE_DEVICE_PATH", True)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("bidir", [False, True])
def test_device_schedule_forward_and_gradients(device_schedule, mode, bidir):
    rng = np.random.default_rng(10)
    data, params, hx, cx = _inputs(rng, mode, 3, 2, 2, 3, 2, bidir)
    if mode == "rnn_relu":
        params = np.abs(params) + 0.05
        data, hx = np.abs(data) + 0.1, np.abs(hx) + 0.1
    kw = {"state_size": 3, "num_layers": 2, "bidirectional": bidir}
    got = _run(mode, data, params, hx, cx, **kw)
    want = rnn_reference(data, params, hx, cx, mode=mode, **kw)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)
    names = ["data", "parameters", "state"] + (["state_cell"] if cx is not None else [])
    s = nv.sym.RNN(*[nv.sym.Variable(n) for n in names], mode=mode, state_outputs=True, **kw)
    loc = dict(zip(names, [a for a in (data, params, hx, cx) if a is not None]))
    check_numeric_gradient(s, loc, numeric_eps=1e-6, rtol=1e-4, atol=1e-6, dtype=np.float64)


def test_every_device_forward_backward_and_lengths(ctx):
    """The GPU's schedule (lengths included) against the reference."""
    rng = np.random.default_rng(11)
    data, params, hx, cx = _inputs(rng, "lstm", 3, 2, 2, 3, 2, True)
    kw = {"mode": "lstm", "state_size": 3, "num_layers": 2, "bidirectional": True}
    names = ["data", "parameters", "state", "state_cell"]
    s = nv.sym.RNN(*[nv.sym.Variable(n) for n in names], state_outputs=True, **kw)
    args = {
        n: nv.nd.array(a, ctx=ctx, dtype=np.float64) for n, a in zip(names, (data, params, hx, cx))
    }
    grads = {n: nv.nd.zeros(a.shape, ctx=ctx, dtype=np.float64) for n, a in args.items()}
    exe = s.bind(ctx, args, args_grad=grads)
    outs = [o.asnumpy() for o in exe.forward(is_train=True)]
    for g, w in zip(outs, rnn_reference(data, params, hx, cx, **kw)):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)
    exe.backward([nv.nd.ones(o.shape, ctx=ctx, dtype=np.float64) for o in outs])
    zeros = {k: nv.nd.zeros(v.shape, dtype=np.float64) for k, v in args.items()}
    cpu = s.bind(nv.cpu(), {k: v.as_in_context(nv.cpu()) for k, v in args.items()}, args_grad=zeros)
    cpu.forward(is_train=True)
    cpu.backward([nv.nd.ones(o.shape, dtype=np.float64) for o in outs])
    for n in names:
        np.testing.assert_allclose(
            exe.grad_dict[n].asnumpy(), cpu.grad_dict[n].asnumpy(), rtol=1e-9
        )
    lengths = nv.nd.array([3, 1], ctx=ctx, dtype=np.int32)
    got = nv.nd.RNN(*args.values(), lengths, use_sequence_length=True, **kw).asnumpy()
    want = rnn_reference(data, params, hx, cx, [3, 1], **kw)[0]
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


@pytest.mark.timeout(30)
def test_a_huge_num_layers_is_sized_at_once():
    """The packed parameter size is a closed form: num_layers=10**9 (a fuzzed value) used
    to loop over every layer in shape inference and hang the call."""
    layers, hidden, features = 10**9, 8, 5
    net = nv.sym.RNN(nv.sym.var("data"), nv.sym.var("parameters"), nv.sym.var("state"),
                     nv.sym.var("state_cell"), mode="lstm", state_size=hidden,
                     num_layers=layers)  # fmt: skip
    arg_shapes, _, _ = net.infer_shape(data=(3, 2, features))
    params = dict(zip(net.list_arguments(), arg_shapes))["parameters"]
    gates = 4 * hidden  # an LSTM layer: W_x (4H x in), W_h (4H x H), two biases of 4H
    first = gates * features + gates * hidden
    others = gates * hidden + gates * hidden
    assert params == (first + (layers - 1) * others + layers * 2 * gates,)
