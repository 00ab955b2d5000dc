"""infer_shape / infer_shape_partial / infer_type at the user API, in MXNet's conventions:
0 unknown dim, () unknown shape (-1 and None under np_shape), numpy types, None triples."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import nnvmpy as nv

sym = nv.sym


def _rnn_cell() -> nv.sym.Symbol:
    data, prev = sym.var("data"), sym.var("prevstate")
    x2h = sym.FullyConnected(data=data, name="x2h", num_hidden=128)
    h2h = sym.FullyConnected(data=prev, name="h2h", num_hidden=128)
    return sym.Activation(sym.elemwise_add(x2h, h2h), name="out", act_type="relu")


def test_incomplete_infer_shape_returns_none_triple_and_warns() -> None:
    out = _rnn_cell()
    with pytest.warns(UserWarning, match=r"prevstate: \(\)"):
        assert out.infer_shape(data=(10, 64)) == (None, None, None)
    arg, outs, _ = out.infer_shape_partial(data=(10, 64))
    shapes = dict(zip(out.list_arguments(), arg))
    assert shapes["data"] == (10, 64)
    assert shapes["x2h_weight"] == (128, 64)
    assert shapes["h2h_weight"] == ()  # nothing is known before the data's rank
    assert outs == [(10, 128)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        arg, _, _ = out.infer_shape(data=(10, 64), prevstate=outs[0])
    assert dict(zip(out.list_arguments(), arg))["h2h_weight"] == (128, 128)


def test_partial_dims_are_zero_in_and_out() -> None:
    data = sym.var("data", shape=(1, 0, 0, 0))
    weight = sym.var("weight")
    conv = sym.Convolution(data=data, weight=weight, pad=(3, 3), num_filter=64, stride=(2, 2),
                           no_bias=True, kernel=(7, 7))  # fmt: skip
    arg, out, _ = conv.infer_shape_partial()
    assert dict(zip(conv.list_arguments(), arg)) == {"data": (1, 0, 0, 0), "weight": (64, 0, 7, 7)}
    assert out == [(1, 64, 0, 0)]


def test_np_shape_semantics_use_minus_one_and_none() -> None:
    x, y = sym.var("x"), sym.var("y")
    z = sym.dot(x, y)
    with nv.util.np_shape(True):
        _, out, _ = z.infer_shape_partial(x=(-1, 3, 4), y=(4, 5))
        assert out == [(-1, 3, 5)]
        arg, out, _ = sym.sin(x).infer_shape_partial()
        assert arg == [None]
        assert out == [None]
    _, out, _ = z.infer_shape_partial(x=(0, 3, 4), y=(4, 5))
    assert out == [(0, 3, 5)]


def test_np_shape_binds_zero_size_arrays() -> None:
    """Under np_shape a 0 in a bound array's shape is a real empty dimension (MXNet's
    test_index_array zero-size cases), not an unknown one."""
    x = sym.var("x")
    with nv.util.np_shape(True):
        exe = (sym.contrib.index_array(x) * 2).bind(
            nv.cpu(), {"x": nv.nd.ones((0, 3))}, args_grad={"x": nv.nd.zeros((0, 3))}
        )
        exe.forward(is_train=True)
        assert exe.outputs[0].shape == (0, 3, 2)
        exe.backward([nv.nd.ones((0, 3, 2))])
        assert exe.grad_arrays[0].shape == (0, 3)


def test_given_shapes_override_the_variable_shape_attribute() -> None:
    a, b = sym.var("a", shape=(2, 3)), sym.var("b")
    c = sym.elemwise_add(a, b)
    assert c.infer_shape() == ([(2, 3), (2, 3)], [(2, 3)], [])
    assert c.infer_shape(a=(5, 6)) == ([(5, 6), (5, 6)], [(5, 6)], [])
    assert c.infer_shape(b=(2, 3)) == ([(2, 3), (2, 3)], [(2, 3)], [])
    with pytest.raises(nv.NNVMError, match=r"\(2, 3\).*\(4, 4\)|\(4, 4\).*\(2, 3\)"):
        c.infer_shape(b=(4, 4))  # a's declared shape against the given b's


def test_shape_arguments_are_validated() -> None:
    x = sym.relu(sym.var("x"))
    with pytest.raises(nv.NNVMError, match="tuple of ints"):
        x.infer_shape(x=(2, "3"))
    with pytest.raises(nv.NNVMError, match="unknown argument 'y'"):
        x.infer_shape(y=(2, 3))
    with pytest.raises(nv.NNVMError, match="either by position or by keyword"):
        x.infer_shape((2,), x=(2,))
    assert x.infer_shape((4,)) == ([(4,)], [(4,)], [])
    assert x.infer_shape(x=[4, 2]) == ([(4, 2)], [(4, 2)], [])


def test_infer_type_returns_numpy_types_and_partial_results() -> None:
    data = sym.var("data")
    f32 = sym.Cast(data=data, dtype="float32")
    mlp = sym.SoftmaxOutput(sym.FullyConnected(f32, name="fc1", num_hidden=8), name="softmax")
    arg, out, aux = mlp.infer_type(data=np.float16)
    assert arg == [np.float16, np.float32, np.float32, np.float32]
    assert all(isinstance(t, type) and issubclass(t, np.generic) for t in [*arg, *out])
    assert out == [np.float32]
    assert aux == []
    arg, out, aux = mlp.infer_type_partial()
    assert arg == [None, np.float32, np.float32, np.float32]
    assert out == [np.float32]
    assert sym.relu(data).infer_type() == (None, None, None)
    assert sym.relu(data).infer_type("float64") == ([np.float64], [np.float64], [])
    with pytest.raises(nv.NNVMError, match="'data' is not a dtype"):
        sym.relu(data).infer_type(data="no-such-type")


def test_tojson_marks_np_shape_graphs() -> None:
    import json

    net = sym.FullyConnected(sym.var("data"), sym.var("weight", shape=(8, 0)), num_hidden=8)
    assert "is_np_shape" not in json.loads(net.tojson())["attrs"]
    with nv.util.np_shape(True):
        assert json.loads(net.tojson())["attrs"]["is_np_shape"] == ["int", 1]
    loaded = sym.load_json(net.tojson())
    arg, out, _ = loaded.infer_shape(data=(4, 5))
    assert arg == [(4, 5), (8, 5), (8,)]
    assert out == [(4, 8)]


def test_shapes_flow_backwards_through_a_stride_one_convolution() -> None:
    # out = in + 2 * pad - dilate * (kernel - 1) at stride 1, so in = 32 + 2 - 2 * 1 - 2
    a = sym.var("a", shape=(0, 10, 0, 0))
    conv = sym.Convolution(data=a, num_filter=21, kernel=(3, 3), dilate=(2, 1), pad=(1, 1))
    d = conv + sym.var("c", shape=(5, 21, 32, 32))
    arg, _, _ = d.infer_shape()
    assert dict(zip(d.list_arguments(), arg))["a"] == (5, 10, 34, 32)
    strided = sym.Convolution(data=a, num_filter=21, kernel=(3, 3), stride=(2, 2), pad=(1, 1))
    arg, _, _ = (strided + sym.var("c", shape=(5, 21, 16, 16))).infer_shape_partial()
    assert arg[0] == (5, 10, 0, 0)  # a stride > 1 leaves the size ambiguous
