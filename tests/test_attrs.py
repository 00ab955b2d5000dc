"""The attribute key table (nnvmpy.attrs): built-in keys, device keys, undeclared keys."""

from __future__ import annotations

import pytest

from nnvmpy import attrs
from nnvmpy.attrs import CALLABLE, AttrKey
from nnvmpy.registry import register_op

# DESIGN.md §2, in its order.
BUILTIN_KEYS = [
    "FInferShape",
    "FInferType",
    "FInplaceOption",
    "FInplaceIdentity",
    "FGradient",
    "FCompute<cpu>",
    "FCompute<gpu>",
    "FCreateOpState",
    "FStatefulCompute<cpu>",
    "FStatefulCompute<gpu>",
    "FListInputNames",
    "FListOutputNames",
    "FNumVisibleOutputs",
    "FMutateInputs",
    "FResourceRequest",
    "TIsBackward",
    "FSetInputVarAttrOnCompose",
]

# The Python constant of each key (device keys are spelled FCompute_cpu).
CONSTANTS = {name: name.replace("<", "_").rstrip(">") for name in BUILTIN_KEYS}


@pytest.mark.parametrize("name", BUILTIN_KEYS)
def test_builtin_key_is_declared_with_a_doc_naming_who_reads_it(name: str) -> None:
    key = attrs.get_key(name)
    assert isinstance(key, AttrKey)
    assert key.name == name
    assert key.declared
    assert key.doc.strip()
    assert "Read by " in key.doc


@pytest.mark.parametrize("name", BUILTIN_KEYS)
def test_builtin_key_doc_says_what_happens_when_it_is_absent(name: str) -> None:
    doc = attrs.get_key(name).doc  # type: ignore[union-attr]
    assert "Absent:" in doc


@pytest.mark.parametrize("name", BUILTIN_KEYS)
def test_builtin_key_has_a_module_constant_that_is_the_table_entry(name: str) -> None:
    constant = getattr(attrs, CONSTANTS[name])
    assert constant is attrs.get_key(name)
    assert CONSTANTS[name] in attrs.__all__


def test_list_keys_holds_every_builtin_key() -> None:
    assert set(BUILTIN_KEYS) <= {key.name for key in attrs.list_keys()}


def test_tis_backward_is_typed_bool_and_every_other_builtin_is_callable() -> None:
    assert attrs.TIsBackward.value_type is bool
    others = [attrs.get_key(name) for name in BUILTIN_KEYS if name != "TIsBackward"]
    assert all(key.value_type == CALLABLE for key in others)  # type: ignore[union-attr]


def test_fcompute_cpu_key_is_named_like_mxnet() -> None:
    assert attrs.fcompute("cpu").name == "FCompute<cpu>"
    assert attrs.fcompute("gpu").name == "FCompute<gpu>"
    assert attrs.fstateful_compute("cpu").name == "FStatefulCompute<cpu>"


def test_device_key_string_resolves_to_the_same_key_object() -> None:
    key = attrs.fcompute("cpu")
    assert attrs.fcompute("cpu") is key
    assert attrs.get_key("FCompute<cpu>") is key
    assert attrs.resolve_key("FCompute<cpu>", lambda *a: None) is key
    assert key is attrs.FCompute_cpu
    assert attrs.get_key("FStatefulCompute<gpu>") is attrs.FStatefulCompute_gpu


@pytest.mark.usefixtures("scoped_registry")
def test_unknown_device_in_a_compute_key_makes_a_new_device_key() -> None:
    key = attrs.get_key("FCompute<tpu>")
    assert isinstance(key, AttrKey)
    assert key.name == "FCompute<tpu>"
    assert key not in (attrs.FCompute_cpu, attrs.FCompute_gpu)
    assert key.value_type == CALLABLE
    assert key.declared
    assert "tpu" in key.doc
    assert "Read by " in key.doc
    assert attrs.fcompute("tpu") is key
    assert attrs.fstateful_compute("tpu") is not key


@pytest.mark.usefixtures("scoped_registry")
def test_set_attr_with_a_new_device_key_string_uses_the_device_key() -> None:
    def compute(*args: object) -> None:
        return None

    op = register_op("_test_attrs_tpu_op").set_attr("FCompute<tpu>", compute)
    assert op.get_attr(attrs.fcompute("tpu")) is compute
    with pytest.raises(TypeError, match=r"FCompute<tpu> expects callable"):
        register_op("_test_attrs_tpu_op2").set_attr("FCompute<tpu>", 3)


def test_get_key_of_an_unknown_name_is_none_and_creates_nothing() -> None:
    before = {key.name for key in attrs.list_keys()}
    assert attrs.get_key("_NoSuchKeyForTests") is None
    assert {key.name for key in attrs.list_keys()} == before


@pytest.mark.usefixtures("scoped_registry")
def test_resolving_an_undeclared_name_types_the_key_by_the_first_value() -> None:
    key = attrs.resolve_key("_TTestFlag", True)
    assert key.name == "_TTestFlag"
    assert key.value_type is bool
    assert not key.declared
    assert attrs.resolve_key("_TTestFlag", "ignored once declared") is key
    assert attrs.resolve_key("_FTestFn", len).value_type == CALLABLE


@pytest.mark.usefixtures("scoped_registry")
def test_declare_adds_a_key_that_strings_resolve_to() -> None:
    key = attrs.declare(AttrKey("_TTestLevel", "An int. Read by tests. Absent: 0.", int))
    assert attrs.get_key("_TTestLevel") is key
    assert attrs.resolve_key("_TTestLevel", 3) is key
    with pytest.raises(TypeError, match=r"_TTestLevel expects int, got str"):
        register_op("_test_attrs_level").set_attr("_TTestLevel", "3")


def test_declaring_a_builtin_name_again_raises_and_keeps_the_original() -> None:
    original = attrs.FInferShape
    with pytest.raises(ValueError, match="FInferShape"):
        attrs.declare(AttrKey("FInferShape", "another doc", int))
    assert attrs.get_key("FInferShape") is original


@pytest.mark.usefixtures("scoped_registry")
def test_key_object_made_without_declare_cannot_retype_a_declared_name() -> None:
    impostor: AttrKey[int] = AttrKey("FInferShape", "not the real one", int)
    with pytest.raises(TypeError, match=r"FInferShape expects callable, got int"):
        register_op("_test_attrs_impostor").set_attr(impostor, 3)
    assert attrs.get_key("FInferShape") is attrs.FInferShape
    op = register_op("_test_attrs_impostor").set_attr("FInferShape", len)
    assert op.get_attr(attrs.FInferShape) is len


@pytest.mark.usefixtures("scoped_registry")
def test_key_object_made_without_declare_fixes_the_type_for_its_name() -> None:
    flag: AttrKey[bool] = AttrKey("_TTestOwnFlag", "A bool. Read by tests. Absent: False.", bool)
    register_op("_test_attrs_own_a").set_attr(flag, True)
    assert attrs.get_key("_TTestOwnFlag") is flag
    with pytest.raises(TypeError, match=r"_TTestOwnFlag expects bool, got str"):
        register_op("_test_attrs_own_b").set_attr("_TTestOwnFlag", "yes")


@pytest.mark.parametrize(
    ("value_type", "good", "bad"),
    [(CALLABLE, len, 3), (bool, False, 0), (int, 3, "3"), (str, "relu", None)],
)
def test_attr_key_accepts_only_its_value_type(
    value_type: type | str, good: object, bad: object
) -> None:
    key: AttrKey[object] = AttrKey("_TTestAccepts", "doc", value_type)
    assert key.accepts(good)
    assert not key.accepts(bad)
    expected_name = value_type if isinstance(value_type, str) else value_type.__name__
    assert key.type_name() == expected_name


def test_attr_key_repr_names_the_key() -> None:
    assert repr(attrs.FInferShape) == "AttrKey('FInferShape')"
    assert repr(attrs.fcompute("gpu")) == "AttrKey('FCompute<gpu>')"
