"""The op registry (nnvmpy.registry): registration, typed attributes, plevel, scopes."""

from __future__ import annotations

import importlib.util
import sys
from typing import Any

import pytest

from nnvmpy import attrs, registry
from nnvmpy.attrs import FInferShape, FListInputNames, TIsBackward
from nnvmpy.base import NNVMError, OpNotFoundError
from nnvmpy.registry import ArgumentInfo, NodeAttrs, Op, OpMap, register_op

pytestmark = pytest.mark.usefixtures("scoped_registry")


def _line_below() -> int:
    """The number of the line after the caller's: where the statement under test stands."""
    return sys._getframe(1).f_lineno + 1


def _infer(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    return True


def _other_infer(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    return False


def assert_registry_usable() -> None:
    """After an error: a new op registers, its attributes read back, names list."""
    op = (
        register_op("_usable_after_error")
        .describe("still works")
        .set_num_inputs(2)
        .set_attr(FInferShape, _infer)
        .set_attr("_TUsableFlag", True)
    )
    assert Op.get("_usable_after_error") is op
    assert op.get_attr(FInferShape) is _infer
    assert Op.get_attr("_TUsableFlag")[op] is True
    assert op in Op.get_attr(FInferShape)
    assert "_usable_after_error" in Op.list_op_names()
    assert op.parse_attrs({"k": 1}, "n").dict == {"k": "1"}


# -- get-or-create and the fluent builder -------------------------------------------------------


def test_register_op_returns_the_same_op_for_the_same_name() -> None:
    op = register_op("_test_same")
    assert register_op("_test_same") is op
    assert Op.get("_test_same") is op
    assert op.name == "_test_same"
    assert repr(op) == "Op('_test_same')"


def test_a_second_register_op_call_adds_attributes_to_the_existing_op() -> None:
    register_op("_test_split").set_attr(FInferShape, _infer)
    register_op("_test_split").set_attr("FCompute<gpu>", _infer)
    op = Op.get("_test_split")
    assert op.get_attr(FInferShape) is _infer
    assert op.get_attr(attrs.fcompute("gpu")) is _infer


@pytest.mark.parametrize("bad", ["", None, 3])
def test_register_op_rejects_a_missing_name(bad: Any) -> None:
    with pytest.raises(NNVMError, match="non-empty op name"):
        register_op(bad)
    assert_registry_usable()


def test_op_source_is_where_it_was_first_registered() -> None:
    line = _line_below()
    op = register_op("_test_source")
    assert op.source.endswith(f"test_registry.py:{line}")


def test_fluent_builder_returns_the_op_and_stores_every_setting() -> None:
    op = register_op("_test_fluent")
    same = (
        op.describe("y = a*x^2 + b*x + c")
        .set_num_inputs(2)
        .set_num_outputs(3)
        .set_attr_parser(lambda attrs: dict(attrs.dict))
        .set_attr(FInferShape, _infer)
        .set_attr("FListInputNames", lambda attrs: ["lhs", "rhs"])
        .add_argument("lhs", "NDArray-or-Symbol", "Left operand.")
        .add_arguments(
            [
                ArgumentInfo("rhs", "NDArray-or-Symbol", "Right operand."),
                ("a", "float, optional, default=0", "Coefficient."),
            ]
        )
    )
    assert same is op
    assert op.description == "y = a*x^2 + b*x + c"
    assert (op.num_inputs, op.num_outputs) == (2, 3)
    assert op.get_num_inputs(NodeAttrs(op)) == 2
    assert op.get_num_outputs(NodeAttrs(op)) == 3
    assert [a.name for a in op.arguments] == ["lhs", "rhs", "a"]
    assert op.arguments[2] == ArgumentInfo("a", "float, optional, default=0", "Coefficient.")
    assert op.get_attr(FListInputNames)(NodeAttrs(op)) == ["lhs", "rhs"]


def test_new_op_defaults_to_one_input_one_output_and_no_parser() -> None:
    op = register_op("_test_defaults")
    assert (op.num_inputs, op.num_outputs) == (1, 1)
    assert op.attr_parser is None
    assert op.arguments == []
    assert op.attr_entries() == {}


def test_num_inputs_and_outputs_can_depend_on_the_node_attrs() -> None:
    op = (
        register_op("_test_concat")
        .set_num_inputs(lambda attrs: int(attrs.dict["num_args"]))
        .set_num_outputs(lambda attrs: int(attrs.dict["num_args"]) - 1)
    )
    node = op.parse_attrs({"num_args": 4})
    assert op.get_num_inputs(node) == 4
    assert op.get_num_outputs(node) == 3


def test_zero_inputs_is_a_valid_count() -> None:
    op = register_op("_test_zeros").set_num_inputs(0)
    assert op.get_num_inputs(NodeAttrs(op)) == 0


@pytest.mark.parametrize("bad", [-1, 1.5, "2", True, None])
@pytest.mark.parametrize("setter", ["set_num_inputs", "set_num_outputs"])
def test_bad_count_raises_type_error_naming_op_and_value(setter: str, bad: Any) -> None:
    op = register_op("_test_bad_count").set_num_inputs(2).set_num_outputs(2)
    with pytest.raises(TypeError, match=rf"'_test_bad_count': {setter} expects") as info:
        getattr(op, setter)(bad)
    assert repr(bad) in str(info.value)
    assert (op.num_inputs, op.num_outputs) == (2, 2)
    assert_registry_usable()


def test_add_argument_with_an_existing_name_replaces_it() -> None:
    op = register_op("_test_args").add_argument("data", "NDArray", "old")
    op.add_argument("data", "NDArray-or-Symbol", "new")
    assert op.arguments == [ArgumentInfo("data", "NDArray-or-Symbol", "new")]


def test_add_argument_description_defaults_to_empty() -> None:
    op = register_op("_test_args_nodesc").add_argument("data", "NDArray")
    assert op.arguments == [ArgumentInfo("data", "NDArray", "")]


# -- attribute parser and NodeAttrs -------------------------------------------------------------


def test_parse_attrs_keeps_mxnet_strings_in_dict_and_parser_output_in_parsed() -> None:
    def parser(attrs: NodeAttrs) -> dict[str, Any]:
        return {"kernel": eval(attrs.dict["kernel"]), "seen_name": attrs.name}

    op = register_op("_test_parse").set_attr_parser(parser)
    node = op.parse_attrs({"kernel": (3, 3), "no_bias": True, "eps": 0.001, "act": "relu"}, "conv0")
    assert node.op is op
    assert node.name == "conv0"
    assert node.dict == {"kernel": "(3, 3)", "no_bias": "True", "eps": "0.001", "act": "relu"}
    assert node.parsed == {"kernel": (3, 3), "seen_name": "conv0"}


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ((3, 3), "(3, 3)"),
        ([2], "(2,)"),
        ((), "()"),
        (True, "True"),
        (False, "False"),
        (0.001, "0.001"),
        (7, "7"),
        ("relu", "relu"),
        (None, "None"),
        (pytest.importorskip("numpy").float32, "float32"),
        (pytest.importorskip("numpy").dtype("int8"), "int8"),
        (pytest.importorskip("numpy").float64(0.5), "0.5"),
        (pytest.importorskip("numpy").bool_(True), "True"),
    ],
)
def test_node_attrs_dict_holds_the_mxnet_string_form(value: Any, text: str) -> None:
    op = register_op("_test_strings")
    assert op.parse_attrs({"v": value}).dict == {"v": text}
    assert NodeAttrs(op, "n", {"v": value}).dict == {"v": text}


def test_parse_attrs_without_parser_leaves_parsed_none() -> None:
    node = register_op("_test_noparser").parse_attrs({"a": 1})
    assert node.parsed is None
    assert node.name == ""
    assert "_test_noparser" in repr(node)


def test_node_attrs_of_a_variable_has_no_op() -> None:
    node = NodeAttrs(None, "x")
    assert node.op is None
    assert node.dict == {}
    assert repr(node) == "NodeAttrs(op='null', name='x', dict={})"


@pytest.mark.parametrize("bad", [42, "parser", None])
def test_set_attr_parser_rejects_a_non_callable(bad: Any) -> None:
    op = register_op("_test_bad_parser")
    with pytest.raises(TypeError, match=r"'_test_bad_parser': set_attr_parser expects") as info:
        op.set_attr_parser(bad)
    assert type(bad).__name__ in str(info.value)
    assert op.attr_parser is None
    assert_registry_usable()


def test_failing_attr_parser_raises_nnvm_error_naming_op_and_node() -> None:
    def parser(attrs: NodeAttrs) -> int:
        return int(attrs.dict["num_args"])

    op = register_op("_test_failing_parser").set_attr_parser(parser)
    with pytest.raises(NNVMError, match=r"'_test_failing_parser' \(node 'cat0'\)") as info:
        op.parse_attrs({"num_args": "three"}, "cat0")
    assert isinstance(info.value.__cause__, ValueError)
    assert "three" in str(info.value)
    assert op.parse_attrs({"num_args": 3}).parsed == 3
    assert_registry_usable()


def test_attr_parser_nnvm_errors_pass_through_unchanged() -> None:
    error = NNVMError("_test_parser_error: parameter 'a' expects float, got 'abc'")

    def parser(attrs: NodeAttrs) -> None:
        raise error

    op = register_op("_test_parser_error").set_attr_parser(parser)
    with pytest.raises(NNVMError) as info:
        op.parse_attrs({"a": "abc"})
    assert info.value is error


def test_parameter_class_as_attr_parser() -> None:
    if importlib.util.find_spec("nnvmpy.param") is None:
        pytest.skip("nnvmpy.param is not written yet")
    from nnvmpy.base import ParamError
    from nnvmpy.param import Parameter, Shape, field

    class ConvParam(Parameter):
        kernel = field(Shape, describe="Window (h, w).")
        no_bias = field(bool, default=False, describe="Skip the bias.")
        eps = field(float, default=1e-5, lower_bound=0.0, describe="Epsilon.")

    op = register_op("_test_conv").set_attr_parser(ConvParam).add_arguments(ConvParam.fields())
    node = op.parse_attrs({"kernel": (3, 3), "no_bias": True, "eps": 0.001}, "conv0")
    assert node.dict == {"kernel": "(3, 3)", "no_bias": "True", "eps": "0.001"}
    assert isinstance(node.parsed, ConvParam)
    assert (node.parsed.kernel, node.parsed.no_bias, node.parsed.eps) == ((3, 3), True, 0.001)
    assert op.param_cls is ConvParam
    assert [a.name for a in op.arguments] == ["kernel", "no_bias", "eps"]
    with pytest.raises(ParamError, match=r"_test_conv.*'eps'"):
        op.parse_attrs({"kernel": "(3, 3)", "eps": "-1"})
    assert_registry_usable()


# -- set_attr / get_attr / OpMap ----------------------------------------------------------------


def test_string_and_key_spellings_store_and_read_the_same_attribute() -> None:
    op = register_op("_test_spelling").set_attr("FInferShape", _infer)
    assert op.get_attr(FInferShape) is _infer
    assert op.get_attr("FInferShape") is _infer
    assert op.has_attr(FInferShape)
    assert op.has_attr("FInferShape")
    assert Op.get_attr(FInferShape)[op] is _infer


def test_op_get_attr_returns_the_default_when_absent() -> None:
    op = register_op("_test_absent")
    assert op.get_attr(FInferShape) is None
    assert op.get_attr(TIsBackward, False) is False
    assert op.get_attr("_NeverRegistered", "fallback") == "fallback"
    assert not op.has_attr(FInferShape)


def test_op_map_indexes_by_op_or_name_and_checks_membership() -> None:
    with_attr = register_op("_test_map_a").set_attr(TIsBackward, True)
    without = register_op("_test_map_b")
    opmap = Op.get_attr(TIsBackward)
    assert isinstance(opmap, OpMap)
    assert opmap[with_attr] is True
    assert opmap["_test_map_a"] is True
    assert with_attr in opmap
    assert "_test_map_a" in opmap
    assert without not in opmap
    assert "_test_map_b" not in opmap
    assert "_no_such_op" not in opmap
    assert 3 not in opmap
    assert opmap.get(with_attr) is True
    assert opmap.get(without) is None
    assert opmap.get(without, False) is False
    assert opmap.get(None, "d") == "d"
    assert (with_attr, True) in list(opmap.items())
    assert all(op is not without for op, _ in opmap.items())


def test_op_map_sees_attributes_registered_after_it_was_made() -> None:
    opmap = Op.get_attr("FInferShape")
    op = register_op("_test_map_late").set_attr(FInferShape, _infer)
    assert opmap[op] is _infer


def test_op_map_getitem_of_an_op_without_the_attribute_raises_naming_both() -> None:
    op = register_op("_test_map_missing")
    with pytest.raises(NNVMError, match=r"'_test_map_missing' has no attribute FInferShape"):
        Op.get_attr(FInferShape)[op]
    assert_registry_usable()


def test_op_map_getitem_of_an_unknown_name_raises_op_not_found() -> None:
    with pytest.raises(OpNotFoundError, match="_no_such_op"):
        Op.get_attr(FInferShape)["_no_such_op"]


def test_attr_entries_record_value_plevel_and_source_in_order() -> None:
    line = _line_below()
    op = register_op("_test_entries").set_attr(FInferShape, _infer).set_attr(TIsBackward, True, 5)
    entries = op.attr_entries()
    assert list(entries) == ["FInferShape", "TIsBackward"]
    assert entries["TIsBackward"].value is True
    assert entries["TIsBackward"].plevel == 5
    assert entries["FInferShape"].plevel == 10
    assert entries["FInferShape"].source.endswith(f"test_registry.py:{line}")


# -- typed values -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "value", "expected", "given"),
    [
        (FInferShape, 3, "callable", "int"),
        ("FInferShape", "not a function", "callable", "str"),
        ("FCompute<cpu>", None, "callable", "NoneType"),
        (TIsBackward, 1, "bool", "int"),
        ("TIsBackward", "True", "bool", "str"),
    ],
)
def test_set_attr_with_a_wrong_type_names_op_key_expected_and_given(
    key: Any, value: Any, expected: str, given: str
) -> None:
    op = register_op("_test_wrong_type")
    name = key if isinstance(key, str) else key.name
    with pytest.raises(TypeError) as info:
        op.set_attr(key, value)
    message = str(info.value)
    for part in ("'_test_wrong_type'", name, f"expects {expected}", f"got {given}"):
        assert part in message
    assert not op.has_attr(name)
    assert_registry_usable()


def test_undeclared_key_takes_its_type_from_the_first_registration() -> None:
    first = register_op("_test_undeclared_a").set_attr("_TTestLayout", "NCHW")
    register_op("_test_undeclared_b").set_attr("_TTestLayout", "NHWC")
    with pytest.raises(
        TypeError,
        match=r"'_test_undeclared_c': attribute _TTestLayout expects "
        r"str, got int",
    ):
        register_op("_test_undeclared_c").set_attr("_TTestLayout", 4)
    assert first.get_attr("_TTestLayout") == "NCHW"
    assert not register_op("_test_undeclared_c").has_attr("_TTestLayout")
    assert_registry_usable()


def test_undeclared_key_whose_first_value_is_callable_takes_any_callable() -> None:
    register_op("_test_callable_a").set_attr("_FTestHook", _infer)
    register_op("_test_callable_b").set_attr("_FTestHook", len)
    with pytest.raises(TypeError, match=r"_FTestHook expects callable, got list"):
        register_op("_test_callable_c").set_attr("_FTestHook", [1])
    assert_registry_usable()


# -- plevel ---------------------------------------------------------------------------------------


def test_set_attr_with_equal_plevel_names_earlier_source() -> None:
    op = register_op("_test_plevel_equal")
    line = _line_below()
    op.set_attr(FInferShape, _infer)
    with pytest.raises(NNVMError) as info:
        op.set_attr(FInferShape, _other_infer)
    message = str(info.value)
    assert f"test_registry.py:{line}" in message
    assert "'_test_plevel_equal'" in message
    assert "FInferShape" in message
    assert "plevel 10" in message
    assert op.get_attr(FInferShape) is _infer
    assert_registry_usable()


def test_set_attr_with_lower_plevel_names_earlier_source() -> None:
    op = register_op("_test_plevel_lower")
    line = _line_below()
    op.set_attr("FInferShape", _infer, plevel=20)
    with pytest.raises(NNVMError, match=rf"test_registry\.py:{line} with plevel 20") as info:
        op.set_attr("FInferShape", _other_infer, plevel=15)
    assert "got 15" in str(info.value)
    assert op.get_attr(FInferShape) is _infer
    assert op.attr_entries()["FInferShape"].plevel == 20
    assert_registry_usable()


def test_set_attr_with_higher_plevel_overrides() -> None:
    op = register_op("_test_plevel_higher").set_attr(FInferShape, _infer)
    line = _line_below()
    op.set_attr(FInferShape, _other_infer, plevel=11)
    assert op.get_attr(FInferShape) is _other_infer
    assert Op.get_attr(FInferShape)[op] is _other_infer
    entry = op.attr_entries()["FInferShape"]
    assert entry.plevel == 11
    assert entry.source.endswith(f"test_registry.py:{line}")
    with pytest.raises(NNVMError, match=rf"test_registry\.py:{line} with plevel 11"):
        op.set_attr(FInferShape, _infer, plevel=11)


def test_plevel_is_per_op_and_per_key() -> None:
    register_op("_test_plevel_a").set_attr(FInferShape, _infer).set_attr(TIsBackward, True)
    register_op("_test_plevel_b").set_attr(FInferShape, _other_infer)
    assert Op.get("_test_plevel_b").get_attr(FInferShape) is _other_infer


# -- lookup ---------------------------------------------------------------------------------------


def test_unknown_op_name_raises_with_close_match_suggestions() -> None:
    register_op("_test_quadratic")
    with pytest.raises(NNVMError, match=r"'_test_quadratc' is not registered") as info:
        Op.get("_test_quadratc")
    assert isinstance(info.value, OpNotFoundError)
    assert "did you mean '_test_quadratic'" in str(info.value)
    assert_registry_usable()


def test_unknown_op_name_without_close_match_has_no_suggestion() -> None:
    with pytest.raises(OpNotFoundError) as info:
        Op.get("_zzz_nothing_like_it_qqq")
    assert "did you mean" not in str(info.value)
    assert_registry_usable()


def test_list_op_names_is_sorted_and_holds_registered_ops() -> None:
    register_op("_test_list_b")
    register_op("_test_list_a")
    names = Op.list_op_names()
    assert names == sorted(names)
    assert {"_test_list_a", "_test_list_b"} <= set(names)


# -- scoped registrations -------------------------------------------------------------------------


def test_scope_removes_ops_and_undeclared_keys_registered_inside() -> None:
    with registry.scoped_registry():
        register_op("_test_scoped_op").set_attr("_TTestScopedKey", 1)
        assert "_test_scoped_op" in Op.list_op_names()
        assert attrs.get_key("_TTestScopedKey") is not None
    assert "_test_scoped_op" not in Op.list_op_names()
    with pytest.raises(OpNotFoundError):
        Op.get("_test_scoped_op")
    assert attrs.get_key("_TTestScopedKey") is None
    # the name is free again: its type comes from the next first registration
    register_op("_test_after_scope").set_attr("_TTestScopedKey", "now a str")
    assert attrs.get_key("_TTestScopedKey").value_type is str  # type: ignore[union-attr]


def test_scope_removes_attributes_added_to_an_existing_op_and_keeps_earlier_ones() -> None:
    op = (
        register_op("_test_existing")
        .describe("before")
        .set_num_inputs(2)
        .set_attr(FInferShape, _infer)
        .add_argument("data", "NDArray")
    )
    with registry.scoped_registry():
        same = register_op("_test_existing")
        assert same is op
        (
            same.describe("inside")
            .set_num_inputs(3)
            .set_attr(TIsBackward, True)
            .set_attr(FInferShape, _other_infer, plevel=20)
            .add_argument("extra", "int")
        )
        assert op.get_attr(FInferShape) is _other_infer
    assert Op.get("_test_existing") is op
    assert op.get_attr(FInferShape) is _infer
    assert op.attr_entries()["FInferShape"].plevel == 10
    assert not op.has_attr(TIsBackward)
    assert op not in Op.get_attr(TIsBackward)
    assert (op.description, op.num_inputs) == ("before", 2)
    assert [a.name for a in op.arguments] == ["data"]
    op.set_attr(TIsBackward, True)  # no leftover entry blocks a new registration
    assert op.get_attr(TIsBackward) is True


def test_scope_is_undone_when_the_block_raises() -> None:
    def register_then_fail() -> None:
        with registry.scoped_registry():
            register_op("_test_scoped_raise")
            raise RuntimeError("inside")

    with pytest.raises(RuntimeError, match="inside"):
        register_then_fail()
    assert "_test_scoped_raise" not in Op.list_op_names()
    assert_registry_usable()


def test_nested_scopes_undo_only_their_own_registrations() -> None:
    with registry.scoped_registry():
        register_op("_test_outer")
        with registry.scoped_registry():
            register_op("_test_inner")
        assert "_test_inner" not in Op.list_op_names()
        assert "_test_outer" in Op.list_op_names()
    assert "_test_outer" not in Op.list_op_names()
