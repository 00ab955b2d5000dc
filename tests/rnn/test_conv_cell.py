"""nv.rnn's convolutional cells (ConvRNNCell, ConvLSTMCell, ConvGRUCell) against the
recurrences written in NumPy with a direct convolution; their names, state shapes and
argument checks; containers listing their children's weights."""

from __future__ import annotations

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy import rnn

N, C, HGT, WID, HID, T = 2, 3, 5, 4, 4, 2


def conv2d(x, w, b, stride=(1, 1), pad=(0, 0), dilate=(1, 1)):
    """NCHW cross-correlation, the direct sum (the reference for Convolution)."""
    n, _, h, wd = x.shape
    f, _, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad[0], pad[0]), (pad[1], pad[1])))
    oh = (h + 2 * pad[0] - dilate[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (wd + 2 * pad[1] - dilate[1] * (kw - 1) - 1) // stride[1] + 1
    out = np.zeros((n, f, oh, ow))
    for i in range(oh):
        for j in range(ow):
            r0, c0 = i * stride[0], j * stride[1]
            patch = xp[:, :, r0 : r0 + dilate[0] * (kh - 1) + 1 : dilate[0],
                       c0 : c0 + dilate[1] * (kw - 1) + 1 : dilate[1]]  # fmt: skip
            out[:, :, i, j] = np.einsum("nchw,fchw->nf", patch, w)
    return out + b.reshape(1, -1, 1, 1)


def leaky(x):
    return np.where(x > 0, x, 0.2 * x)


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def _run(cell, gates, seed=0, **conv):
    """Unroll `cell` for T steps on random data and weights; (outputs, inputs, weights)."""
    rng = np.random.default_rng(seed)
    inputs = [nv.sym.Variable(f"x{t}") for t in range(T)]
    outputs, _ = cell.unroll(T, inputs, begin_state=cell.begin_state(dtype="float64"))
    group = nv.sym.Group(outputs)
    kh = conv.get("i2h_kernel", (3, 3))
    hk = conv.get("h2h_kernel", (3, 3))
    args = {f"x{t}": rng.uniform(-1, 1, (N, C, HGT, WID)) for t in range(T)}
    args.update(
        cell_i2h_weight=rng.uniform(-0.5, 0.5, (gates * HID, C, *kh)),
        cell_i2h_bias=rng.uniform(-0.5, 0.5, (gates * HID,)),
        cell_h2h_weight=rng.uniform(-0.5, 0.5, (gates * HID, HID, *hk)),
        cell_h2h_bias=rng.uniform(-0.5, 0.5, (gates * HID,)),
    )
    out = group.eval(**{k: nv.nd.array(v, dtype="float64") for k, v in args.items()})
    return [o.asnumpy() for o in out], args


def _convs(args, t, h, **conv):
    hk = conv.get("h2h_kernel", (3, 3))
    hd = conv.get("h2h_dilate", (1, 1))
    i2h = conv2d(
        args[f"x{t}"], args["cell_i2h_weight"], args["cell_i2h_bias"],
        conv.get("i2h_stride", (1, 1)), conv.get("i2h_pad", (1, 1)), conv.get("i2h_dilate", (1, 1)),
    )  # fmt: skip
    h_pad = tuple(d * (k - 1) // 2 for k, d in zip(hk, hd))
    h2h = conv2d(h, args["cell_h2h_weight"], args["cell_h2h_bias"], (1, 1), h_pad, hd)
    return i2h, h2h


def test_conv_rnn_matches_numpy_recurrence():
    cell = rnn.ConvRNNCell((N, C, HGT, WID), HID, prefix="cell_")
    outs, args = _run(cell, 1)
    h = np.zeros((N, HID, HGT, WID))
    for t in range(T):
        i2h, h2h = _convs(args, t, h)
        h = leaky(i2h + h2h)
        np.testing.assert_allclose(outs[t], h, rtol=1e-10, atol=1e-12)


def test_conv_lstm_matches_numpy_recurrence():
    cell = rnn.ConvLSTMCell((N, C, HGT, WID), HID, prefix="cell_")
    outs, args = _run(cell, 4)
    h = c = np.zeros((N, HID, HGT, WID))
    for t in range(T):
        i2h, h2h = _convs(args, t, h)
        g = np.split(i2h + h2h, 4, axis=1)
        c = sigmoid(g[1]) * c + sigmoid(g[0]) * leaky(g[2])
        h = sigmoid(g[3]) * leaky(c)
        np.testing.assert_allclose(outs[t], h, rtol=1e-10, atol=1e-12)


def test_conv_gru_matches_numpy_recurrence_with_dilation_and_tanh():
    conv = {"h2h_kernel": (3, 1), "h2h_dilate": (2, 1), "i2h_kernel": (3, 3), "i2h_dilate": (1, 1)}
    cell = rnn.ConvGRUCell((N, C, HGT, WID), HID, activation="tanh", prefix="cell_", **conv)
    outs, args = _run(cell, 3, **conv)
    h = np.zeros((N, HID, HGT, WID))
    for t in range(T):
        i2h, h2h = _convs(args, t, h, **conv)
        ir, iz, i_n = np.split(i2h, 3, axis=1)
        hr, hz, h_n = np.split(h2h, 3, axis=1)
        r, z = sigmoid(ir + hr), sigmoid(iz + hz)
        h = (1 - z) * np.tanh(i_n + r * h_n) + z * h
        np.testing.assert_allclose(outs[t], h, rtol=1e-10, atol=1e-12)


def test_state_shape_follows_the_input_to_state_convolution():
    cell = rnn.ConvLSTMCell(
        (1, 3, 16, 10), 6, i2h_kernel=(3, 3), i2h_stride=(2, 2), i2h_pad=(1, 1), prefix="s_"
    )
    # (16 + 2 - 3) // 2 + 1 = 8, (10 + 2 - 3) // 2 + 1 = 5; batch left open
    assert cell.state_info == [{"shape": (0, 6, 8, 5), "__layout__": "NCHW"}] * 2
    outs, _ = cell.unroll(2, [nv.sym.Variable("a"), nv.sym.Variable("b")])
    _, out_shapes, _ = nv.sym.Group(outs).infer_shape(a=(4, 3, 16, 10), b=(4, 3, 16, 10))
    assert out_shapes == [(4, 6, 8, 5), (4, 6, 8, 5)]


def test_names_defaults_and_bias_initializer():
    cell = rnn.ConvGRUCell((1, 2, 4, 4), 3)
    assert sorted(cell.params._params) == [
        "ConvGRU_h2h_bias", "ConvGRU_h2h_weight", "ConvGRU_i2h_bias", "ConvGRU_i2h_weight",
    ]  # fmt: skip
    outs, _ = cell.unroll(2, [nv.sym.Variable("a"), nv.sym.Variable("b")])
    assert nv.sym.Group(outs).list_outputs() == ["ConvGRU_t0_out_output", "ConvGRU_t1_out_output"]
    assert cell.params._params["ConvGRU_i2h_bias"].attr("__init__") == "zeros"
    assert cell.params._params["ConvGRU_i2h_weight"].attr("__init__") is None
    assert rnn.ConvRNNCell((1, 2, 4, 4), 3)._prefix == "ConvRNN_"
    assert rnn.ConvLSTMCell((1, 2, 4, 4), 3)._gate_names == ("_i", "_f", "_c", "_o")


def test_even_state_kernel_is_rejected():
    with pytest.raises(nv.NNVMError, match=r"ConvRNNCell: h2h_kernel must be odd.*\(2, 3\)"):
        rnn.ConvRNNCell((1, 2, 4, 4), 3, h2h_kernel=(2, 3))


def test_unpack_pack_round_trip_of_conv_weights():
    cell = rnn.ConvLSTMCell((1, 2, 4, 4), 3, prefix="c_")
    rng = np.random.default_rng(1)
    args = {
        "c_i2h_weight": nv.nd.array(rng.normal(size=(12, 2, 3, 3))),
        "c_i2h_bias": nv.nd.array(rng.normal(size=(12,))),
        "c_h2h_weight": nv.nd.array(rng.normal(size=(12, 3, 3, 3))),
        "c_h2h_bias": nv.nd.array(rng.normal(size=(12,))),
    }
    unpacked = cell.unpack_weights(args)
    np.testing.assert_array_equal(
        unpacked["c_i2h_f_weight"].asnumpy(), args["c_i2h_weight"].asnumpy()[3:6]
    )
    packed = cell.pack_weights(unpacked)
    for k, v in args.items():
        np.testing.assert_array_equal(packed[k].asnumpy(), v.asnumpy())


def test_containers_list_their_childrens_weights():
    stack = rnn.SequentialRNNCell()
    stack.add(rnn.LSTMCell(4, prefix="a_"))
    stack.add(rnn.ResidualCell(rnn.GRUCell(4, prefix="b_")))
    bi = rnn.BidirectionalCell(rnn.RNNCell(4, prefix="l_"), rnn.RNNCell(4, prefix="r_"))
    stack.add(bi)
    expected = sorted(
        f"{p}_{g}_{k}" for p in "ablr" for g in ("i2h", "h2h") for k in ("weight", "bias")
    )
    assert sorted(stack.params._params) == expected
    assert sorted(bi.params._params) == [n for n in expected if n[0] in "lr"]
