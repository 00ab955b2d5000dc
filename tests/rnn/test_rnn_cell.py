"""nv.rnn cells: the fused cell (one RNN op) against the same network unrolled from
step cells (FullyConnected + activations), weights moved by unpack/pack; one LSTM step
against the NumPy formula; the packing round trip and MXNet's weight names."""

from __future__ import annotations

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy import rnn

T, N, C_IN, H = 3, 2, 4, 5


def _stack(mode: str, layers: int, bidir: bool):
    def make(prefix):
        if mode == "lstm":
            return rnn.LSTMCell(H, prefix=prefix)
        if mode == "gru":
            return rnn.GRUCell(H, prefix=prefix)
        return rnn.RNNCell(H, activation=mode[4:], prefix=prefix)

    stack = rnn.SequentialRNNCell()
    for i in range(layers):
        if bidir:
            stack.add(
                rnn.BidirectionalCell(make(f"l{i}_"), make(f"r{i}_"), output_prefix=f"bi{i}_")
            )
        else:
            stack.add(make(f"l{i}_"))
    return stack


def _bind(cell, rng_args, dy=None):
    data = nv.sym.Variable("data")
    begin = cell.begin_state(dtype="float64")
    out, _ = cell.unroll(T, data, begin_state=begin, layout="NTC", merge_outputs=True)
    shapes, _, _ = out.infer_shape(data=(N, T, C_IN))
    names = out.list_arguments()
    args = {n: nv.nd.array(rng_args[n], dtype=np.float64) for n in names}
    grads = {n: nv.nd.zeros(s, dtype=np.float64) for n, s in zip(names, shapes)}
    exe = out.bind(nv.cpu(), args, args_grad=grads)
    y = exe.forward(is_train=True)[0].asnumpy()
    exe.backward([nv.nd.array(dy, dtype=np.float64)] if dy is not None else None)
    return y, {n: g.asnumpy() for n, g in exe.grad_dict.items()}


@pytest.mark.parametrize("mode", ["lstm", "gru", "rnn_tanh", "rnn_relu"])
@pytest.mark.parametrize("bidir", [False, True])
def test_fused_matches_unrolled_cells(mode, bidir):
    rng = np.random.default_rng(0)
    layers = 2
    stack = _stack(mode, layers, bidir)
    fused = rnn.FusedRNNCell(H, num_layers=layers, mode=mode, bidirectional=bidir, prefix="")
    data = nv.sym.Variable("data")
    out, _ = stack.unroll(T, data, layout="NTC", merge_outputs=True)
    shapes, _, _ = out.infer_shape(data=(N, T, C_IN))
    stack_args = {
        n: rng.uniform(-0.5, 0.5, s) for n, s in zip(out.list_arguments(), shapes) if n != "data"
    }
    x = rng.uniform(-1, 1, (N, T, C_IN))
    dy = rng.uniform(-1, 1, (N, T, H * (2 if bidir else 1)))
    nd_args = {k: nv.nd.array(v, dtype=np.float64) for k, v in stack_args.items()}
    fused_args = fused.pack_weights(stack.unpack_weights(nd_args))
    assert list(fused_args) == ["parameters"]
    y1, g1 = _bind(stack, {**stack_args, "data": x}, dy)
    y2, g2 = _bind(fused, {"parameters": fused_args["parameters"].asnumpy(), "data": x}, dy)
    np.testing.assert_allclose(y2, y1, rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(g2["data"], g1["data"], rtol=1e-9, atol=1e-10)
    # the parameter gradient, unpacked, is the cells' weight gradients
    unpacked = fused.unpack_weights({"parameters": nv.nd.array(g2["parameters"])})
    g1_cells = stack.unpack_weights({k: nv.nd.array(v) for k, v in g1.items() if k != "data"})
    for name, value in g1_cells.items():
        np.testing.assert_allclose(unpacked[name].asnumpy(), value.asnumpy(), rtol=1e-6, atol=1e-8)


def test_unpack_names_and_round_trip():
    fused = rnn.FusedRNNCell(H, num_layers=2, mode="gru", bidirectional=True, prefix="g_")
    size = 2 * (3 * H * (C_IN + H + 2)) + 2 * (3 * H * (2 * H + H + 2))
    packed = np.arange(size, dtype=np.float32)
    args = fused.unpack_weights({"g_parameters": nv.nd.array(packed)})
    assert "g_l0_i2h_r_weight" in args
    assert args["g_l0_i2h_r_weight"].shape == (H, C_IN)
    assert args["g_r1_i2h_o_weight"].shape == (H, 2 * H)
    assert args["g_r1_h2h_z_bias"].shape == (H,)
    # MXNet's order: layer 0 direction l, i2h gates r, z, o first
    np.testing.assert_array_equal(args["g_l0_i2h_r_weight"].asnumpy().ravel(), packed[: H * C_IN])
    back = fused.pack_weights(args)
    np.testing.assert_array_equal(back["g_parameters"].asnumpy(), packed)
    with pytest.raises(nv.NNVMError, match="FusedRNNCell"):
        fused.unpack_weights({"g_parameters": nv.nd.zeros((size + 1,))})


def test_lstm_cell_step_matches_formula():
    rng = np.random.default_rng(1)
    cell = rnn.LSTMCell(H, prefix="c_")
    x, h, c = nv.sym.Variable("x"), nv.sym.Variable("h"), nv.sym.Variable("c")
    out, (h1, c1) = cell(x, [h, c])
    group = nv.sym.Group([out, c1])
    vals = {
        "x": rng.uniform(-1, 1, (N, C_IN)), "h": rng.uniform(-1, 1, (N, H)),
        "c": rng.uniform(-1, 1, (N, H)), "c_i2h_weight": rng.uniform(-1, 1, (4 * H, C_IN)),
        "c_i2h_bias": rng.uniform(-1, 1, 4 * H), "c_h2h_weight": rng.uniform(-1, 1, (4 * H, H)),
        "c_h2h_bias": rng.uniform(-1, 1, 4 * H),
    }  # fmt: skip
    exe = group.bind(nv.cpu(), {k: nv.nd.array(v, dtype=np.float64) for k, v in vals.items()})
    got_h, got_c = (o.asnumpy() for o in exe.forward())
    pre = vals["x"] @ vals["c_i2h_weight"].T + vals["c_i2h_bias"]
    pre += vals["h"] @ vals["c_h2h_weight"].T + vals["c_h2h_bias"]
    sig = lambda a: 1 / (1 + np.exp(-a))  # noqa: E731
    i, f, g, o = (
        sig(pre[:, :H]),
        sig(pre[:, H : 2 * H]),
        np.tanh(pre[:, 2 * H : 3 * H]),
        sig(pre[:, 3 * H :]),
    )
    want_c = f * vals["c"] + i * g
    np.testing.assert_allclose(got_c, want_c, rtol=1e-12)
    np.testing.assert_allclose(got_h, o * np.tanh(want_c), rtol=1e-12)
    assert h1 is out


def test_begin_state_names_and_shapes():
    cell = rnn.FusedRNNCell(H, num_layers=3, mode="lstm", bidirectional=True, prefix="f_")
    assert cell.state_shape == [(6, 0, H), (6, 0, H)]
    states = cell.begin_state()
    assert [s.name for s in states] == ["f_begin_state_0", "f_begin_state_1"]
    seq = rnn.SequentialRNNCell()
    seq.add(rnn.GRUCell(H, prefix="a_"))
    seq.add(rnn.DropoutCell(0.5))
    seq.add(rnn.ResidualCell(rnn.GRUCell(H, prefix="b_")))
    assert len(seq.begin_state()) == 2
    out, states = seq.unroll(T, nv.sym.Variable("data"), layout="NTC", merge_outputs=True)
    _, shapes, _ = out.infer_shape(data=(N, T, H))
    assert shapes == [(N, T, H)]
    assert len(states) == 2


def test_fused_unroll_tnc_list_outputs_and_states():
    cell = rnn.FusedRNNCell(H, num_layers=1, mode="gru", get_next_state=True, prefix="q_")
    inputs = [nv.sym.Variable(f"x{t}") for t in range(T)]
    outs, states = cell.unroll(T, inputs, layout="TNC", merge_outputs=False)
    assert len(outs) == T
    assert len(states) == 1
    _, shapes, _ = nv.sym.Group([*outs, *states]).infer_shape(
        **{f"x{t}": (N, C_IN) for t in range(T)}
    )
    assert shapes == [(N, H)] * T + [(1, N, H)]
    with pytest.raises(nv.NNVMError, match="mode"):
        rnn.FusedRNNCell(H, mode="lstmx")


def test_fused_rnn_initializer_fills_gate_by_gate():
    cell = rnn.FusedRNNCell(H, num_layers=1, mode="lstm", prefix="f_", forget_bias=2.0)
    attrs = cell.unroll(T, nv.sym.Variable("data"))[0].attr_dict()["f_parameters"]
    assert nv.initializer.create(attrs["__init__"]).dumps() == attrs["__init__"]
    arr = nv.nd.zeros((4 * H * (C_IN + H + 2),))
    # the global initializer hands the variable to the initializer its '__init__' names
    nv.initializer.Uniform(0.1)(nv.initializer.InitDesc("f_parameters", attrs), arr)
    args = cell.unpack_weights({"f_parameters": arr})
    np.testing.assert_array_equal(args["f_l0_i2h_f_bias"].asnumpy(), 2.0)
    np.testing.assert_array_equal(args["f_l0_h2h_i_bias"].asnumpy(), 0.0)
    weight = args["f_l0_i2h_c_weight"].asnumpy()
    assert np.abs(weight).max() <= 0.1
    assert np.abs(weight).min() > 0 or weight.std() > 0.01
