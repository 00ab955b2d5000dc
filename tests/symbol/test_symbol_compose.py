"""Composition by call (`net2(data=net1)`), structure (get_children, __getitem__, len,
iteration, bool), auto-created variables, debug_str, eval and _gen_atomic_symbol."""

from __future__ import annotations

import json

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy.base import NotImplementedForSymbol

sym = nv.sym


def _f64(**arrays: np.ndarray) -> dict[str, nv.nd.NDArray]:
    return {k: nv.nd.array(v, dtype="float64") for k, v in arrays.items()}


def test_call_replaces_variables_by_keyword_in_a_copy() -> None:
    data = sym.var("data")
    net1 = sym.FullyConnected(
        sym.FullyConnected(data, name="fc1", num_hidden=10), name="fc2", num_hidden=100
    )
    net2 = sym.FullyConnected(name="fc3", num_hidden=10)
    net2 = sym.FullyConnected(sym.Activation(net2, act_type="relu"), name="fc4", num_hidden=20)
    composed = net2(fc3_data=net1, name="composed")
    assert composed.list_arguments() == [
        "data", "fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias",
        "fc3_weight", "fc3_bias", "fc4_weight", "fc4_bias",
    ]  # fmt: skip
    assert composed.name == "composed"
    assert net2.list_arguments()[0] == "fc3_data"  # the original is untouched
    assert net2.name == "fc4"
    group = sym.Group([composed, net1])
    assert len(group) == len(group.list_outputs()) == 2


def test_call_by_position_follows_list_inputs_and_computes() -> None:
    a, b = sym.var("a"), sym.var("b")
    template = a * 2.0 + b
    x, y = sym.var("x"), sym.var("y")
    net = template(sym.exp(x), y)
    assert net.list_arguments() == ["x", "y"]
    xv, yv = np.array([0.5, -1.0]), np.array([3.0, 4.0])
    got = net.eval(nv.cpu(), **_f64(x=xv, y=yv))[0].asnumpy()
    np.testing.assert_allclose(got, 2 * np.exp(xv) + yv)


def test_compose_errors_name_the_problem_and_leave_the_symbol_usable() -> None:
    net = sym.relu(sym.var("a"), name="r")
    with pytest.raises(nv.NNVMError, match=r"unknown keyword arguments \['b'\]"):
        net(b=sym.var("x"))
    with pytest.raises(nv.NNVMError, match="either by position or by keyword"):
        net(sym.var("x"), a=sym.var("y"))
    with pytest.raises(nv.NNVMError, match="must be a Symbol"):
        net(a=3)
    with pytest.raises(nv.NNVMError, match="2 positional inputs for 1 variables"):
        net(sym.var("x"), sym.var("y"))
    assert net(a=sym.var("z")).list_arguments() == ["z"]
    assert net.list_arguments() == ["a"]


def test_missing_inputs_become_variables_with_the_node_attributes() -> None:
    fc = sym.FullyConnected(sym.var("data"), num_hidden=512, name="fc1")
    nodes = json.loads(fc.tojson())["nodes"]
    assert nodes[1] == {
        "op": "null",
        "name": "fc1_weight",
        "attrs": {"num_hidden": "512"},
        "inputs": [],
    }
    assert "attrs" not in nodes[0]  # the given input keeps its own (none)


def test_get_children_lists_each_node_once() -> None:
    data = sym.var("data")
    fc1 = sym.FullyConnected(data, name="fc1", num_hidden=10)
    net = sym.FullyConnected(fc1, name="fc2", num_hidden=100)
    assert net.get_children().list_outputs() == ["fc1_output", "fc2_weight", "fc2_bias"]
    assert net.get_children().get_children().list_outputs() == ["data", "fc1_weight", "fc1_bias"]
    assert net.get_children()["fc2_weight"].get_children() is None
    sliced = sym.SliceChannel(data, num_outputs=3, name="slice")
    assert sliced.get_children().list_outputs() == ["data"]  # three outputs, one node
    concat = sym.Concat(*list(sliced))
    assert concat.get_children().list_outputs() == [
        "slice_output0",
        "slice_output1",
        "slice_output2",
    ]


def test_getitem_len_iter_and_name_for_groups() -> None:
    data = sym.var("data")
    sliced = sym.SliceChannel(data, num_outputs=3, name="slice")
    assert len(sliced) == 3
    assert sliced.name == "slice"  # all outputs come from one node
    assert [s.list_outputs() for s in sliced] == [
        ["slice_output0"],
        ["slice_output1"],
        ["slice_output2"],
    ]
    assert sliced[1:].list_outputs() == ["slice_output1", "slice_output2"]
    assert sliced[-1].list_outputs() == ["slice_output2"]
    assert sliced["slice_output1"].list_outputs() == ["slice_output1"]
    assert sym.Group([data, sliced[0]]).name is None
    with pytest.raises(IndexError):
        sliced[3]
    with pytest.raises(nv.NNVMError, match="no output named 'nope'"):
        sliced["nope"]
    with pytest.raises(nv.NNVMError, match="several outputs"):
        sym.Group([data, data])["data"]
    with pytest.raises(nv.NNVMError, match="selected by int, name or slice"):
        sliced[1.5]  # type: ignore[index]


def test_bool_of_a_symbol_raises_as_in_mxnet() -> None:
    x = sym.var("x")
    with pytest.raises(NotImplementedForSymbol, match="bool"):
        bool(x)
    with pytest.raises(NotImplementedForSymbol):
        assert x == 1  # a comparison builds a symbol; it has no truth value
    assert {x: 1}[x] == 1  # hashable by identity


def test_debug_str_prints_outputs_variables_ops_and_attributes() -> None:
    data = sym.var("data")
    fc = sym.FullyConnected(data, num_hidden=8, name="fc1")
    text = fc.debug_str()
    assert text.startswith("Symbol Outputs:\n\toutput[0]=fc1(0)\n")
    for line in ("Variable:data", "Variable:fc1_weight", "Op:FullyConnected, Name=fc1",
                 "\targ[0]=data(0) version=0", "Attrs:", "\tnum_hidden=8"):  # fmt: skip
        assert line in text


def test_eval_binds_the_given_arrays_and_needs_all_of_them() -> None:
    a, b = sym.var("a"), sym.var("b")
    out = sym.Group([a + b, a * b])
    av, bv = np.array([1.0, 2.0]), np.array([3.0, 5.0])
    got = [o.asnumpy() for o in out.eval(nv.cpu(), **_f64(a=av, b=bv))]
    np.testing.assert_allclose(got[0], av + bv)
    np.testing.assert_allclose(got[1], av * bv)
    with pytest.raises(nv.NNVMError, match=r"missing \['b'\]"):
        out.eval(nv.cpu(), **_f64(a=av))


def test_gen_atomic_symbol_makes_a_fresh_node_of_the_same_op() -> None:
    fc = sym.FullyConnected(sym.var("x"), num_hidden=5, name="fc")
    atomic = fc._gen_atomic_symbol()
    assert atomic.attr("op_name") == "FullyConnected"
    assert atomic.attr("num_hidden") == "5"
    assert atomic.list_arguments() == ["fc_data", "fc_weight", "fc_bias"]
    with pytest.raises(nv.NNVMError, match="one op"):
        sym.var("x")._gen_atomic_symbol()


def test_variadic_ops_take_inputs_by_keyword_in_order() -> None:
    a, b = sym.var("a"), sym.var("b")
    s = sym.add_n(x=a, y=b, name="s")
    assert s.list_arguments() == ["a", "b"]
    with pytest.raises(nv.NNVMError, match="either by position or by keyword"):
        sym.add_n(a, y=b)


def test_a_positional_none_is_an_input_not_given() -> None:
    x, w = sym.var("x"), sym.var("w")
    conv = sym.Convolution(x, w, None, num_filter=2, kernel=(1, 1), no_bias=True, name="c")
    assert conv.list_arguments() == ["x", "w"]
    fc = sym.FullyConnected(x, None, num_hidden=3, name="fc")
    assert fc.list_arguments() == ["x", "fc_weight", "fc_bias"]
    assert sym.add_n(x, None, w).list_arguments() == ["x", "w"]
    with pytest.raises(nv.NNVMError, match="takes 2 inputs"):
        sym.Convolution(x, w, sym.var("b"), num_filter=2, kernel=(1, 1), no_bias=True)


def test_group_takes_create_fn_and_refuses_what_mxnet_refuses() -> None:
    # MXNet 1.9.1: Group(symbols, create_fn=Symbol); TypeError for [] or a non-Symbol
    class Tagged(nv.sym.Symbol):
        pass

    a, b = sym.var("a"), sym.var("b")
    g = sym.Group([a * 2, b], create_fn=Tagged)
    assert type(g) is Tagged
    assert len(g.list_outputs()) == 2
    assert g.list_outputs()[1] == "b"
    got = [o.asnumpy() for o in g.eval(nv.cpu(), **_f64(a=np.ones(2), b=np.zeros(2)))]
    np.testing.assert_array_equal(got[0], [2.0, 2.0])
    for bad, match in (([], "got an empty list"), ([a, 1], "got int")):
        with pytest.raises(TypeError, match=f"Group expects .*{match}") as info:
            sym.Group(bad)  # type: ignore[arg-type]
        assert isinstance(info.value, nv.NNVMError)
