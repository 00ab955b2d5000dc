"""InferType: dtypes from inputs, hints and MXNet's __dtype__ flags; NNVM's default rule."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from nnvmpy.base import InferError, NNVMError
from nnvmpy.graph import Graph, NodeEntry, apply_passes, make_grad_node
from nnvmpy.graph.attrs import DTYPE, DTYPE_NUM_UNKNOWN_NODES
from nnvmpy.passes.infer_type import MX_TYPE_FLAGS, dtype_from_flag, dtype_to_flag

Fn = Callable[..., NodeEntry]


def dtypes_of(graph: Graph, *entries: NodeEntry) -> list[Any]:
    return [graph.attrs[DTYPE][graph.indexed.entry_id(e)] for e in entries]


def test_dtype_flows_forward_and_backward(op: Fn, var: Fn) -> None:
    a, b = var("a"), var("b")
    s = op("t_add", a, b)
    y = op("t_relu", s)
    g = apply_passes(Graph([y]), "InferType", dtypes={"b": "float16"})
    assert dtypes_of(g, a, b, s, y) == [np.dtype(np.float16)] * 4
    assert g.attrs[DTYPE_NUM_UNKNOWN_NODES] == 0


def test_mxnet_dtype_flag_on_a_variable_is_read(op: Fn, var: Fn) -> None:
    w = var("w", __dtype__="6")
    g = apply_passes(Graph([op("t_relu", w)]), "InferType")
    assert dtypes_of(g, w) == [np.dtype(np.int64)]


def test_op_without_rule_uses_one_dtype_for_everything(op: Fn, var: Fn) -> None:
    # t_fc registers no FInferType: NNVM's default makes inputs and outputs agree
    x, w = var("x"), var("w")
    fc = op("t_fc", x, w, num_hidden=2)
    g = apply_passes(Graph([fc]), "InferType", dtype_inputs=[np.float64])
    assert dtypes_of(g, w, fc) == [np.dtype(np.float64)] * 2


def test_backward_node_takes_forward_input_dtypes(op: Fn, var: Fn) -> None:
    x, w, dy = var("x"), var("w"), var("dy")
    fc = op("t_fc", x, w, num_hidden=2)
    dx, dw = make_grad_node("_t_backward_fc", fc.node, [dy, x, w])
    g = apply_passes(Graph([dx, dw]), "InferType", dtypes={"x": np.float32})
    assert dtypes_of(g, dx, dw) == [np.dtype(np.float32)] * 2


def test_conflict_names_node_op_and_both_dtypes(op: Fn, var: Fn) -> None:
    s = op("t_add", var("a"), var("b"), name="plus")
    with pytest.raises(InferError) as err:
        apply_passes(Graph([s]), "InferType", dtypes={"a": "float32", "b": "int32"})
    for part in ("InferType", "plus", "t_add", "float32", "int32"):
        assert part in str(err.value)


def test_unknown_dtypes_are_counted(op: Fn, var: Fn) -> None:
    g = apply_passes(Graph([op("t_add", var("a"), var("b"))]), "InferType")
    assert g.attrs[DTYPE_NUM_UNKNOWN_NODES] == 3


def test_type_flags_round_trip() -> None:
    for flag, dtype in MX_TYPE_FLAGS.items():
        assert dtype_to_flag(dtype) == flag
        assert dtype_from_flag(str(flag)) == dtype
    with pytest.raises(NNVMError, match="unknown MXNet type flag 99"):
        dtype_from_flag(99)
    with pytest.raises(NNVMError, match="complex64 has no MXNet type flag"):
        dtype_to_flag(np.complex64)


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("(-1, 3)", "unknown dtype"),  # NumPy raises ValueError parsing it
        ("i4,(2", "unknown dtype"),  # and SyntaxError for this one
        ("(2,3)f4", "is not supported"),  # NumPy parses these into dtypes no array has
        ("f4,i4", "is not supported"),
        ("O", "is not supported"),
        ("U10", "is not supported"),
        ("99", "unknown MXNet type flag"),
    ],
)
def test_a_corrupt_dtype_attribute_names_the_variable(op: Fn, var: Fn, text: str, why: str) -> None:
    w = var("w", __dtype__=text)  # what a corrupted model file may hold
    with pytest.raises(NNVMError, match=why) as err:
        apply_passes(Graph([op("t_relu", w)]), "InferType")
    assert "variable 'w': attribute __dtype__" in str(err.value)


def test_a_given_dtype_must_be_an_array_element_type(op: Fn, var: Fn) -> None:
    y = op("t_relu", var("x"))
    for given in ("complex64", "object", "(2,3)f4"):
        with pytest.raises(NNVMError, match="is not supported; expected one of float32"):
            apply_passes(Graph([y]), "InferType", dtypes={"x": given})
    assert dtypes_of(apply_passes(Graph([y]), "InferType", dtypes={"x": "int16"}), y) == [
        np.dtype(np.int16)
    ]
