"""Helpers for FInferShape / FInferType (nnvmpy.infer): merging, assigning, element-wise rules."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from nnvmpy.base import InferError, NNVMError, Shape
from nnvmpy.infer import (
    elemwise_shape,
    elemwise_type,
    merge_shapes,
    partial_shape,
    shape_assign,
    shape_is_known,
    shape_str,
    type_assign,
)
from nnvmpy.registry import NodeAttrs, register_op


@pytest.fixture
def add_attrs(scoped_registry: None) -> NodeAttrs:
    """A node 'plus0' of a two-input op whose inputs are named lhs and rhs."""
    op = (
        register_op("_test_infer_add")
        .set_num_inputs(2)
        .set_attr("FListInputNames", lambda attrs: ["lhs", "rhs"])
        .set_attr("FListOutputNames", lambda attrs: ["sum"])
    )
    return op.parse_attrs({}, "plus0")


@pytest.fixture
def plain_attrs(scoped_registry: None) -> NodeAttrs:
    """A nameless node of an op without FListInputNames."""
    return register_op("_test_infer_plain").set_num_inputs(2).parse_attrs({})


# -- partial shapes -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("user", "ours"),
    [
        ((2, 0), (2, None)),
        ((0, 3), (None, 3)),
        ([2, 3], (2, 3)),
        ((2, None), (2, None)),
        ((0,), (None,)),
        ((), ()),
        (5, (5,)),
        (np.int64(4), (4,)),
        ((np.int64(2), 3), (2, 3)),
        (None, None),
    ],
)
def test_partial_shape_reads_zero_as_an_unknown_dim(user: Any, ours: Shape | None) -> None:
    result = partial_shape(user)
    assert result == ours
    assert result is None or all(d is None or type(d) is int for d in result)


@pytest.mark.parametrize(
    ("shape", "known", "text"),
    [
        (None, False, "?"),
        ((), True, "()"),
        ((3,), True, "(3,)"),
        ((2, 3), True, "(2, 3)"),
        ((2, None), False, "(2, ?)"),
        ((None,), False, "(?,)"),
    ],
)
def test_shape_is_known_and_shape_str(shape: Shape | None, known: bool, text: str) -> None:
    assert shape_is_known(shape) is known
    assert shape_str(shape) == text


# -- merge_shapes / shape_assign ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b", "merged"),
    [
        (None, None, None),
        (None, (2, 3), (2, 3)),
        ((2, None), None, (2, None)),
        ((2, None), (None, 3), (2, 3)),
        ((2, 3), (2, 3), (2, 3)),
        ((), (), ()),
    ],
)
def test_merge_shapes_keeps_every_known_dim(
    a: Shape | None, b: Shape | None, merged: Shape | None
) -> None:
    assert merge_shapes(a, b) == merged
    assert merge_shapes(b, a) == merged


@pytest.mark.parametrize(
    ("a", "b", "reason"),
    [
        ((2, 3), (2, 4), "disagree"),
        ((2, None), (3, None), "disagree"),
        ((2,), (2, 3), "rank"),
        ((), (1,), "rank"),
    ],
)
def test_merge_shapes_of_conflicting_shapes_raises_naming_both(
    a: Shape, b: Shape, reason: str
) -> None:
    with pytest.raises(InferError, match=reason) as info:
        merge_shapes(a, b)
    assert shape_str(a) in str(info.value)
    assert shape_str(b) in str(info.value)


def test_shape_assign_fills_an_unknown_slot_and_reports_whether_it_is_known() -> None:
    shapes: list[Shape | None] = [None, (2, None)]
    assert shape_assign(shapes, 0, (4, 5)) is True
    assert shape_assign(shapes, 1, (None, 7)) is True
    assert shapes == [(4, 5), (2, 7)]


def test_shape_assign_of_partial_or_unknown_knowledge_returns_false() -> None:
    shapes: list[Shape | None] = [None, None]
    assert shape_assign(shapes, 0, (2, None)) is False
    assert shape_assign(shapes, 1, None) is False
    assert shapes == [(2, None), None]


def test_shape_assign_conflict_names_the_slot_and_both_shapes_and_keeps_the_old() -> None:
    shapes: list[Shape | None] = [(10, 5)]
    with pytest.raises(InferError) as info:
        shape_assign(shapes, 0, (10, 20), "FullyConnected (node 'fc0'): input 'weight'")
    assert str(info.value) == (
        "FullyConnected (node 'fc0'): input 'weight' has shape (10, 5) but (10, 20) was inferred"
    )
    assert shapes == [(10, 5)]


def test_shape_assign_conflict_without_a_name_says_which_entry() -> None:
    shapes: list[Shape | None] = [None, (3,)]
    with pytest.raises(InferError, match=r"entry 1 has shape \(3,\) but \(3, 1\) was inferred"):
        shape_assign(shapes, 1, (3, 1))


# -- type_assign ----------------------------------------------------------------------------------


def test_type_assign_fills_an_unknown_dtype_from_any_dtype_spelling() -> None:
    types: list[Any] = [None, None, None]
    assert type_assign(types, 0, np.float32) is True
    assert type_assign(types, 1, "int8") is True
    assert type_assign(types, 2, np.dtype("float16")) is True
    assert types == [np.dtype(np.float32), np.dtype(np.int8), np.dtype(np.float16)]
    assert all(isinstance(t, np.dtype) for t in types)


def test_type_assign_of_unknown_keeps_the_slot_and_reports_whether_it_is_known() -> None:
    types: list[Any] = [None, np.dtype(np.float32)]
    assert type_assign(types, 0, None) is False
    assert type_assign(types, 1, None) is True
    assert type_assign(types, 1, "float32") is True
    assert types == [None, np.dtype(np.float32)]


def test_type_assign_conflict_names_the_slot_and_both_dtypes() -> None:
    types: list[Any] = [np.dtype(np.float32)]
    with pytest.raises(InferError) as info:
        type_assign(types, 0, np.float64, "Cast (node 'c0'): output 'output'")
    assert str(info.value) == (
        "Cast (node 'c0'): output 'output' has dtype float32 but float64 was inferred"
    )
    assert types == [np.dtype(np.float32)]
    with pytest.raises(InferError, match="entry 0 has dtype float32 but int32"):
        type_assign(types, 0, np.int32)


# -- elemwise_shape -------------------------------------------------------------------------------


def test_elemwise_shape_fills_outputs_from_inputs(add_attrs: NodeAttrs) -> None:
    ins: list[Shape | None] = [(2, 3), None]
    outs: list[Shape | None] = [None]
    assert elemwise_shape(2, 1)(add_attrs, ins, outs) is True
    assert ins == [(2, 3), (2, 3)]
    assert outs == [(2, 3)]


def test_elemwise_shape_fills_inputs_from_outputs(add_attrs: NodeAttrs) -> None:
    ins: list[Shape | None] = [None, None]
    outs: list[Shape | None] = [(4,)]
    assert elemwise_shape(2, 1)(add_attrs, ins, outs) is True
    assert ins == [(4,), (4,)]
    assert outs == [(4,)]


def test_elemwise_shape_merges_partial_dims_from_inputs_and_outputs(add_attrs: NodeAttrs) -> None:
    ins: list[Shape | None] = [(2, None, None), None]
    outs: list[Shape | None] = [(None, 3, None)]
    assert elemwise_shape(2, 1)(add_attrs, ins, outs) is False  # the last dim is still unknown
    assert ins == [(2, 3, None), (2, 3, None)]
    assert outs == [(2, 3, None)]
    ins[1] = (None, None, 5)
    assert elemwise_shape(2, 1)(add_attrs, ins, outs) is True
    assert ins == [(2, 3, 5), (2, 3, 5)]
    assert outs == [(2, 3, 5)]


def test_elemwise_shape_returns_false_when_nothing_is_known(add_attrs: NodeAttrs) -> None:
    ins: list[Shape | None] = [None, None]
    outs: list[Shape | None] = [None]
    assert elemwise_shape(2, 1)(add_attrs, ins, outs) is False
    assert ins == [None, None]
    assert outs == [None]


def test_elemwise_shape_conflict_names_op_node_input_and_both_shapes(add_attrs: NodeAttrs) -> None:
    ins: list[Shape | None] = [(2, 3), (2, 4)]
    with pytest.raises(InferError) as info:
        elemwise_shape(2, 1)(add_attrs, ins, [None])
    assert str(info.value) == (
        "_test_infer_add (node 'plus0'): input 'rhs' has shape (2, 4) but (2, 3) was inferred"
    )
    assert isinstance(info.value, NNVMError)


def test_elemwise_shape_conflict_on_an_output_names_it(add_attrs: NodeAttrs) -> None:
    with pytest.raises(InferError, match=r"output 'sum' has shape \(5,\) but \(2, 3\)"):
        elemwise_shape(2, 1)(add_attrs, [(2, 3), None], [(5,)])


def test_elemwise_shape_conflict_without_input_names_uses_positions(plain_attrs: NodeAttrs) -> None:
    with pytest.raises(InferError, match=r"^_test_infer_plain: input '#1' has shape \(3,\)"):
        elemwise_shape(2, 1)(plain_attrs, [(2,), (3,)], [None])


def test_elemwise_shape_with_wrong_counts_raises_naming_the_op(add_attrs: NodeAttrs) -> None:
    with pytest.raises(
        InferError,
        match=r"_test_infer_add: .*expects 2 inputs and 1 outputs, "
        r"got 3 and 1",
    ):
        elemwise_shape(2, 1)(add_attrs, [None, None, None], [None])


def test_elemwise_shape_with_minus_one_takes_any_count(add_attrs: NodeAttrs) -> None:
    ins: list[Shape | None] = [None, (7,), None, None]
    outs: list[Shape | None] = [None]
    assert elemwise_shape(-1, 1)(add_attrs, ins, outs) is True
    assert ins == [(7,)] * 4
    assert outs == [(7,)]


# -- elemwise_type --------------------------------------------------------------------------------


def test_elemwise_type_fills_outputs_from_inputs(add_attrs: NodeAttrs) -> None:
    ins: list[Any] = [np.float16, None]
    outs: list[Any] = [None]
    assert elemwise_type(2, 1)(add_attrs, ins, outs) is True
    assert ins == outs + outs
    assert outs == [np.dtype(np.float16)]


def test_elemwise_type_fills_inputs_from_outputs(add_attrs: NodeAttrs) -> None:
    ins: list[Any] = [None, None]
    outs: list[Any] = [np.dtype(np.int32)]
    assert elemwise_type(2, 1)(add_attrs, ins, outs) is True
    assert ins == [np.dtype(np.int32)] * 2


def test_elemwise_type_returns_false_when_nothing_is_known(add_attrs: NodeAttrs) -> None:
    ins: list[Any] = [None, None]
    outs: list[Any] = [None]
    assert elemwise_type(2, 1)(add_attrs, ins, outs) is False
    assert ins == [None, None]
    assert outs == [None]


def test_elemwise_type_conflict_names_op_node_input_and_both_dtypes(add_attrs: NodeAttrs) -> None:
    with pytest.raises(InferError) as info:
        elemwise_type(2, 1)(add_attrs, [np.float32, np.float64], [None])
    assert str(info.value) == (
        "_test_infer_add (node 'plus0'): input 'rhs' has dtype float64 but float32 was inferred"
    )


def test_elemwise_type_with_wrong_counts_raises_naming_the_op(add_attrs: NodeAttrs) -> None:
    with pytest.raises(InferError, match=r"_test_infer_add: elemwise type inference expects"):
        elemwise_type(2, 1)(add_attrs, [None], [None])


def test_elemwise_rules_work_as_registered_attributes(scoped_registry: None) -> None:
    op = (
        register_op("_test_infer_registered")
        .set_attr("FInferShape", elemwise_shape(1, 1))
        .set_attr("FInferType", elemwise_type(1, 1))
    )
    node = op.parse_attrs({}, "n0")
    shapes: tuple[list[Shape | None], list[Shape | None]] = ([None], [(3,)])
    assert op.get_attr("FInferShape")(node, *shapes) is True
    types: tuple[list[Any], list[Any]] = ([np.float32], [None])
    assert op.get_attr("FInferType")(node, *types) is True
    assert shapes == ([(3,)], [(3,)])
    assert types == ([np.dtype(np.float32)], [np.dtype(np.float32)])


# -- properties of merging ------------------------------------------------------------------------

DIM = st.integers(min_value=1, max_value=4)


@st.composite
def compatible_shapes(draw: st.DrawFn) -> list[Shape | None]:
    """Partial views of one full shape: some dims hidden, some whole shapes unknown."""
    full = draw(st.lists(DIM, max_size=4))
    views = st.none() | st.tuples(*[st.sampled_from([d, None]) for d in full])
    return draw(st.lists(views, min_size=1, max_size=6))


PARTIAL = st.none() | st.lists(st.none() | DIM, max_size=3).map(tuple)


def _expected_merge(shapes: list[Shape | None]) -> Shape | None:
    """Independent oracle: every known value of a dim must agree; ranks must agree."""
    known = [s for s in shapes if s is not None]
    if not known:
        return None
    if len({len(s) for s in known}) > 1:
        raise InferError("rank")
    merged = []
    for dim in zip(*known):
        values = {d for d in dim if d is not None}
        if len(values) > 1:
            raise InferError("disagree")
        merged.append(values.pop() if values else None)
    return tuple(merged)


def _merge_all(shapes: list[Shape | None]) -> Shape | None:
    return functools.reduce(merge_shapes, shapes, None)


def _assign_all(shapes: list[Shape | None]) -> Shape | None:
    slot: list[Shape | None] = [None]
    for shape in shapes:
        shape_assign(slot, 0, shape)
    return slot[0]


@given(st.data(), compatible_shapes())
def test_merging_compatible_shapes_is_order_independent(
    data: st.DataObject, shapes: list[Shape | None]
) -> None:
    expected = _expected_merge(shapes)
    order = data.draw(st.permutations(shapes))
    assert _merge_all(shapes) == expected
    assert _merge_all(order) == expected
    assert _assign_all(order) == expected


@given(st.data(), st.lists(PARTIAL, min_size=1, max_size=5))
def test_merging_any_shapes_agrees_with_the_oracle_in_every_order(
    data: st.DataObject, shapes: list[Shape | None]
) -> None:
    order = data.draw(st.permutations(shapes))
    try:
        expected = _expected_merge(shapes)
    except InferError:
        with pytest.raises(InferError):
            _merge_all(order)
        with pytest.raises(InferError):
            _assign_all(order)
    else:
        assert _merge_all(order) == expected
        assert _assign_all(order) == expected


@given(PARTIAL, PARTIAL)
def test_merging_is_idempotent(a: Shape | None, b: Shape | None) -> None:
    assert merge_shapes(a, a) == a
    try:
        merged = merge_shapes(a, b)
    except InferError:
        return
    assert merge_shapes(merged, a) == merged
    assert merge_shapes(merged, b) == merged
    slot: list[Shape | None] = [merged]
    shape_assign(slot, 0, merged)
    assert slot == [merged]


@given(st.lists(st.none() | st.integers(min_value=0, max_value=5), max_size=4))
def test_partial_shape_marks_exactly_the_zero_dims_unknown(dims: list[int | None]) -> None:
    result = partial_shape(dims)
    assert result is not None
    assert [d is None for d in result] == [d is None or d == 0 for d in dims]
    assert merge_shapes(result, result) == result
