"""InferShape: forward and backward sweeps, mutual inference, partial shapes, named errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from nnvmpy.attrs import FInferShape
from nnvmpy.base import InferError, NNVMError
from nnvmpy.graph import Graph, NodeEntry, apply_passes, make_grad_node
from nnvmpy.graph.attrs import SHAPE, SHAPE_NUM_UNKNOWN_NODES
from nnvmpy.passes.infer_shape import parse_shape_attr
from nnvmpy.registry import register_op

Fn = Callable[..., NodeEntry]


def shapes_of(graph: Graph, *entries: NodeEntry) -> list[Any]:
    idx = graph.indexed
    return [graph.attrs[SHAPE][idx.entry_id(e)] for e in entries]


def infer(outputs: list[NodeEntry], **inputs: Any) -> Graph:
    return apply_passes(Graph(outputs), ["InferShape"], **inputs)


def test_tutorial_mutual_inference_fills_every_shape(op: Fn, var: Fn) -> None:
    # the MXNet tutorial: a=(2,0), c=(0,3), d = a*b + b*c -> everything is (2, 3)
    a, b, c = var("a"), var("b"), var("c")
    ab, bc = op("t_mul", a, b, name="ab"), op("t_mul", b, c, name="bc")
    d = op("t_add", ab, bc, name="d")
    g = infer([d], shapes={"a": (2, 0), "c": (0, 3)})
    assert shapes_of(g, a, b, c, ab, bc, d) == [(2, 3)] * 6
    assert g.attrs[SHAPE_NUM_UNKNOWN_NODES] == 0


def test_op_rule_fills_its_inputs_and_they_reach_other_consumers(op: Fn, var: Fn) -> None:
    # fc fills its weight from data and num_hidden; the weight's other consumer gets it too
    x, w, other = var("x"), var("w"), var("other")
    fc = op("t_fc", x, w, name="fc", num_hidden=3)
    w_plus = op("t_add", w, other, name="w_plus")
    g = infer([fc, w_plus], shapes={"x": (4, 5)})
    assert shapes_of(g, w, fc, other, w_plus) == [(3, 5), (4, 3), (3, 5), (3, 5)]


def test_backward_sweep_infers_data_from_output_and_weight(op: Fn, var: Fn) -> None:
    x, w = var("x"), var("w")
    fc = op("t_fc", x, w, name="fc", num_hidden=3)
    y = op("t_relu", fc, name="y")
    g = infer([y], shape_hints={y: (4, 3), "w": (3, 5)})
    assert shapes_of(g, x, fc) == [(4, 5), (4, 3)]


def test_partial_shapes_stay_partial_and_are_counted(op: Fn, var: Fn) -> None:
    a, b = var("a"), var("b")
    s = op("t_add", a, b, name="s")
    g = infer([s], shapes={"a": (2, 0)})
    assert shapes_of(g, a, b, s) == [(2, None)] * 3
    assert g.attrs[SHAPE_NUM_UNKNOWN_NODES] == 3


def test_shape_inputs_follow_input_node_order(op: Fn, var: Fn) -> None:
    a, b = var("a"), var("b")
    s = op("t_add", a, b)
    g = infer([s], shape_inputs=[None, (7,)])
    assert shapes_of(g, a, s) == [(7,), (7,)]


def test_variable_shape_attribute_is_read(op: Fn, var: Fn) -> None:
    w = var("w", __shape__="(64, 0, 7, 7)")
    g = infer([op("t_relu", w)])
    assert shapes_of(g, w) == [(64, None, 7, 7)]


def test_given_shape_overrides_the_shape_attribute(op: Fn, var: Fn) -> None:
    """As MXNet: the declared __shape__ only fills a shape the caller did not give."""
    w = var("w", __shape__="(3, 4)")
    g = infer([op("t_relu", w)], shapes={"w": (5, 4)})
    assert shapes_of(g, w) == [(5, 4)]


def test_conflict_inside_an_op_rule_names_node_op_input_and_shapes(op: Fn, var: Fn) -> None:
    a, b = var("a"), var("b")
    s = op("t_add", a, b, name="plus")
    with pytest.raises(InferError) as err:
        infer([s], shapes={"a": (2, 3), "b": (3, 2)})
    msg = str(err.value)
    for part in ("InferShape", "plus", "t_add", "rhs", "(3, 2)", "(2, 3)"):
        assert part in msg


def test_conflict_with_a_written_shape_names_the_input(op: Fn, var: Fn) -> None:
    x, w = var("x"), var("w")
    fc = op("t_fc", x, w, name="fc0", num_hidden=10)
    with pytest.raises(
        InferError,
        match=r"node 'fc0' \(t_fc\) input 'weight' has shape "
        r"\(10, 5\) but \(10, 20\) was inferred",
    ):
        infer([fc], shapes={"x": (2, 20), "w": (10, 5)})


def test_rule_errors_without_names_get_node_and_op(scoped_registry: None, op: Fn, var: Fn) -> None:
    def bad(attrs: Any, ins: list[Any], outs: list[Any]) -> bool:
        raise InferError("kernel must be odd")

    def buggy(attrs: Any, ins: list[Any], outs: list[Any]) -> bool:
        return ins[5]  # type: ignore[no-any-return]

    register_op("t_bad").set_attr(FInferShape, bad)
    register_op("t_buggy").set_attr(FInferShape, buggy)
    with pytest.raises(InferError, match=r"node 'b0' \(t_bad\): kernel must be odd"):
        infer([op("t_bad", var("x"), name="b0")])
    with pytest.raises(NNVMError, match=r"node 'b1' \(t_buggy\).*IndexError"):
        infer([op("t_buggy", var("x"), name="b1")])
    # the registry and the pass still work afterwards
    g = infer([op("t_relu", var("x"))], shapes={"x": (2,)})
    assert g.attrs[SHAPE_NUM_UNKNOWN_NODES] == 0


def test_op_without_rule_leaves_outputs_unknown(op: Fn, var: Fn) -> None:
    x = var("x")
    n = op("t_noshape", x)
    y = op("t_relu", n)
    g = infer([y], shapes={"x": (2, 2)})
    assert shapes_of(g, x, n, y) == [(2, 2), None, None]
    assert g.attrs[SHAPE_NUM_UNKNOWN_NODES] == 2


def test_backward_node_outputs_take_forward_input_shapes(op: Fn, var: Fn) -> None:
    x, w, dy = var("x"), var("w"), var("dy")
    fc = op("t_fc", x, w, name="fc", num_hidden=3)
    dx, dw = make_grad_node("_t_backward_fc", fc.node, [dy, x, w])
    g = infer([dx, dw], shapes={"x": (4, 5)})
    assert shapes_of(g, dx, dw) == [(4, 5), (3, 5)]


def test_backward_output_shape_flows_to_the_forward_input(op: Fn, var: Fn) -> None:
    x, w, dy = var("x"), var("w"), var("dy")
    fc = op("t_fc", x, w, name="fc", num_hidden=3)
    dx, dw = make_grad_node("_t_backward_fc", fc.node, [dy, x, w])
    g = infer([dx, dw], shape_hints={dx: (4, 5)})
    assert shapes_of(g, x, w, fc) == [(4, 5), (3, 5), (4, 3)]


def test_hints_for_names_not_in_the_graph_are_skipped(op: Fn, var: Fn) -> None:
    # callers merge hints for several graphs (e.g. an unused head gradient of a loss)
    g = infer([op("t_relu", var("data"))], shapes={"data": (1,), "unused_head": (1,)})
    assert g.attrs[SHAPE_NUM_UNKNOWN_NODES] == 0


def test_more_shape_inputs_than_inputs_is_an_error(op: Fn, var: Fn) -> None:
    with pytest.raises(NNVMError, match="2 shape_inputs"):
        infer([op("t_relu", var("x"))], shape_inputs=[(1,), (2,)])


@pytest.mark.parametrize(
    ("text", "shape"),
    [
        ("(2, 3)", (2, 3)),
        ("[2,3]", (2, 3)),
        ("(3,)", (3,)),
        ("(64, 0, 7, 7)", (64, None, 7, 7)),
        ("(2L, 3L)", (2, 3)),
        ("()", None),
        ("(-1, 4)", (None, 4)),
    ],
)
def test_parse_shape_attr(text: str, shape: Any) -> None:
    assert parse_shape_attr(text) == shape


def test_parse_shape_attr_rejects_garbage() -> None:
    with pytest.raises(NNVMError, match="invalid shape"):
        parse_shape_attr("(a, b)")


def test_a_partial_shape_travels_back_through_an_elementwise_op() -> None:
    """Convolution knows its weight is (64, ?, 7, 7) before the channels are known; the
    weight behind a cast must learn that too (MXNet's test_symbol_infer_shape): the sweeps
    go on while values become more specific, not only while entries become fully known."""
    import nnvmpy as nv

    weight = nv.sym.Variable("weight")
    data = nv.sym.Variable("data", shape=(1, 0, 0, 0))
    conv = nv.sym.Convolution(data=nv.sym.cast(data, dtype="float16"),
                              weight=nv.sym.cast(weight, dtype="float16"),
                              kernel=(7, 7), num_filter=64, no_bias=True)  # fmt: skip
    args, _, _ = conv.infer_shape_partial()
    assert dict(zip(conv.list_arguments(), args)) == {"data": (1, 0, 0, 0), "weight": (64, 0, 7, 7)}


def test_every_rule_runs_once_its_inputs_are_known_even_when_neighbours_filled_it() -> None:
    """transpose(v) + (x + v), x (2, 3): the forward sweep meets the transpose before v
    is known, and the add then fills the transpose's output with (2, 3). Every entry is
    known after one sweep, but the transpose's rule has not seen v yet: it must still run
    and refuse (MXNet names transpose0, for infer_shape and simple_bind alike)."""
    import nnvmpy as nv

    v, x = nv.sym.var("v"), nv.sym.var("x")
    s = nv.sym.transpose(v, name="transpose0") + (x + v)
    want = r"transpose0.*\(2, 3\) but \(3, 2\)"
    with pytest.raises(NNVMError, match=want):
        s.infer_shape(x=(2, 3))
    with pytest.raises(NNVMError, match=want):
        s.simple_bind(nv.cpu(), x=(2, 3), grad_req="null")
    ok = nv.sym.transpose(v) + (x + nv.sym.transpose(v))
    assert ok.infer_shape(x=(3, 2))[0] == [(2, 3), (3, 2)]
