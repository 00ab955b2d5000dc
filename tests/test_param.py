"""Parameter / field: parsing MXNet's attribute strings, validation messages, docs, round-trips."""

from __future__ import annotations

import copy
import json
import math
import pickle
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nnvmpy.base import NNVMError, ParamError
from nnvmpy.param import (
    MISSING,
    ArgumentInfo,
    Field,
    FloatTuple,
    IntOrNoneTuple,
    Parameter,
    Shape,
    field,
)

# Reproducible; max_examples comes from the active profile (conftest: "ci" or "dev").
_SETTINGS = settings(derandomize=True, deadline=None)


class ConvParam(Parameter):
    kernel = field(Shape, describe="Convolution kernel size: (h, w).")
    stride = field(Shape, default=(), describe="Convolution stride: (h, w).")
    num_filter = field(int, lower_bound=1, upper_bound=100000, describe="Number of filters.")
    no_bias = field(bool, default=False, describe="Whether to disable the bias.")
    act_type = field(str, enum=["relu", "sigmoid", "tanh"], default="relu", describe="Act.")
    eps = field(float, default=1e-3, lower_bound=0.0)
    axis = field(int, default=None, optional=True)


class KindsParam(Parameter):
    """One field of every kind, none required, so single values can be tested alone."""

    i = field(int, default=0)
    f = field(float, default=0.0)
    b = field(bool, default=False)
    s = field(str, default="")
    e = field(str, enum={"relu": 0, "sigmoid": 1, "tanh": 2}, default="relu")
    shape = field(Shape, default=())
    ft = field(FloatTuple, default=())
    ont = field(IntOrNoneTuple, default=())
    oi = field(int, optional=True)
    os = field(str, optional=True)
    oshape = field(Shape, default=None)


def _parse_one(name: str, value: Any) -> Any:
    return getattr(KindsParam.parse({name: value}, op_name="Kinds"), name)


# -- accepted forms -------------------------------------------------------------------------


def test_parse_gives_an_instance_with_parsed_values() -> None:
    p = ConvParam.parse({"kernel": "(3, 3)", "num_filter": "8"}, op_name="Convolution")
    assert isinstance(p, ConvParam)
    assert p.kernel == (3, 3)
    assert type(p.kernel) is tuple
    assert p.num_filter == 8
    assert (p.stride, p.no_bias, p.act_type, p.eps, p.axis) == ((), False, "relu", 1e-3, None)


def test_constructor_takes_python_values_and_validates_like_parse() -> None:
    p = ConvParam(kernel=(3, 3), num_filter=8)
    assert p == ConvParam.parse({"kernel": "(3, 3)", "num_filter": "8"})
    with pytest.raises(ParamError, match=r"^ConvParam: parameter 'num_filter'"):
        ConvParam(kernel=(3, 3), num_filter=0)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("8", 8),
        (" 8 ", 8),
        ("-3", -3),
        (8, 8),
        (np.int64(8), 8),
        (np.uint8(8), 8),
        (8.0, 8),
        ("8.0", 8),
        ("1e3", 1000),
    ],
)
def test_int_forms(value: Any, expected: int) -> None:
    got = _parse_one("i", value)
    assert got == expected
    assert type(got) is int


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("1e-3", 1e-3),
        ("2e-05", 2e-5),
        (" 0.9 ", 0.9),
        ("inf", math.inf),
        ("-inf", -math.inf),
        (2, 2.0),
        (np.float32(0.5), 0.5),
        (np.int32(3), 3.0),
    ],
)
def test_float_forms(value: Any, expected: float) -> None:
    got = _parse_one("f", value)
    assert got == expected
    assert type(got) is float


def test_float_nan_string_parses_to_nan() -> None:
    assert math.isnan(_parse_one("f", "nan"))


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (True, True),
        (False, False),
        ("True", True),
        ("False", False),
        ("true", True),
        ("false", False),
        ("TRUE", True),
        ("1", True),
        ("0", False),
        (1, True),
        (0, False),
        (np.bool_(True), True),
    ],
)
def test_bool_forms(value: Any, expected: bool) -> None:
    got = _parse_one("b", value)
    assert got is expected


def test_str_and_enum_forms() -> None:
    assert _parse_one("s", "anything at all") == "anything at all"
    assert type(_parse_one("s", np.str_("x"))) is str
    assert _parse_one("e", "tanh") == "tanh"
    assert KindsParam.field_specs()["e"].enum == {"relu": 0, "sigmoid": 1, "tanh": 2}
    assert ConvParam.field_specs()["act_type"].enum == {"relu": 0, "sigmoid": 1, "tanh": 2}


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("(3, 3)", (3, 3)),
        ("(3,3)", (3, 3)),
        ("[3, 3]", (3, 3)),
        (" ( 3 , 3 ) ", (3, 3)),
        ("3, 3", (3, 3)),
        ("3", (3,)),
        ("(2,)", (2,)),
        ("()", ()),
        ("[]", ()),
        ("(-1, -2, 0)", (-1, -2, 0)),
        (3, (3,)),
        (np.int64(4), (4,)),
        ((3, 3), (3, 3)),
        ([3, 3], (3, 3)),
        (np.array([3, 3]), (3, 3)),
        (Shape((1, 2)), (1, 2)),
        (range(3), (0, 1, 2)),
    ],
)
def test_shape_forms(value: Any, expected: tuple[int, ...]) -> None:
    got = _parse_one("shape", value)
    assert got == expected
    assert type(got) is tuple
    assert all(type(d) is int for d in got)


@pytest.mark.parametrize(
    ("value", "expected"),
    [("(0.1, 0.2)", (0.1, 0.2)), ("[1, 2]", (1.0, 2.0)), (0.5, (0.5,)), ((1, 2.5), (1.0, 2.5))],
)
def test_float_tuple_forms(value: Any, expected: tuple[float, ...]) -> None:
    got = _parse_one("ft", value)
    assert got == expected
    assert all(type(x) is float for x in got)


@pytest.mark.parametrize(
    ("value", "expected"),
    [("(None, 2)", (None, 2)), ((None, 2), (None, 2)), ("(1,)", (1,)), ("[None]", (None,))],
)
def test_int_or_none_tuple_forms(value: Any, expected: tuple[int | None, ...]) -> None:
    assert _parse_one("ont", value) == expected


@pytest.mark.parametrize("name", ["oi", "os", "oshape"])
@pytest.mark.parametrize("value", [None, "None"])
def test_optional_fields_accept_none_and_mxnet_none_string(name: str, value: Any) -> None:
    assert _parse_one(name, value) is None
    assert KindsParam.parse({name: value}).to_dict()[name] == "None"


def test_optional_fields_accept_values_too() -> None:
    p = KindsParam.parse({"oi": "-1", "os": "abc", "oshape": "(1, 2)"})
    assert (p.oi, p.os, p.oshape) == (-1, "abc", (1, 2))


def test_a_non_optional_str_field_keeps_the_string_none() -> None:
    assert _parse_one("s", "None") == "None"


# -- rejected forms: each message names the op, the field, what came in and what fits ---------


@pytest.mark.parametrize(
    ("name", "value", "accepted"),
    [
        ("i", "abc", "int"),
        ("i", "2.5", "int"),
        ("i", True, "int"),
        ("i", "inf", "int"),
        ("i", [1], "int"),
        ("i", None, "int"),
        ("f", "abc", "float"),
        ("f", "", "float"),
        ("f", False, "float"),
        ("f", (1.0,), "float"),
        ("b", "yes", "boolean (True, False, 1 or 0)"),
        ("b", 2, "boolean"),
        ("b", 1.0, "boolean"),
        ("s", 3, "string"),
        ("e", 0, "one of {'relu', 'sigmoid', 'tanh'}"),
        ("shape", "(3, x)", "Shape(tuple) of ints such as (3, 3)"),
        ("shape", "(3, 3", "Shape(tuple)"),
        ("shape", "3, 3)", "Shape(tuple)"),
        ("shape", "(3, 3]", "Shape(tuple)"),
        ("shape", "(3,,3)", "Shape(tuple)"),
        ("shape", "(,)", "Shape(tuple)"),
        ("shape", "", "Shape(tuple)"),
        ("shape", "(3, 2.5)", "Shape(tuple)"),
        ("shape", "(None, 3)", "Shape(tuple)"),
        ("shape", True, "Shape(tuple)"),
        ("shape", {"a": 1}, "Shape(tuple)"),
        ("ft", "(0.1, x)", "tuple of floats"),
        ("ont", "(none, 1)", "tuple of ints or None"),
        ("oi", "abc", "int or None"),
        ("oshape", "x", "Shape(tuple) of ints such as (3, 3) or None"),
    ],
)
def test_bad_values_name_op_field_given_and_accepted(name: str, value: Any, accepted: str) -> None:
    with pytest.raises(ParamError) as info:
        KindsParam.parse({name: value}, op_name="MyOp")
    msg = str(info.value)
    assert msg.startswith(f"MyOp: parameter {name!r} expects {accepted}")
    assert f"got {value!r}" in msg


def test_param_error_is_an_nnvm_error_and_a_value_error() -> None:
    with pytest.raises(NNVMError):
        KindsParam.parse({"i": "abc"})
    with pytest.raises(ValueError, match="expects int"):
        KindsParam.parse({"i": "abc"})


def test_non_integral_int_says_so() -> None:
    with pytest.raises(ParamError, match=r"got 2\.5 \(not an integer\)$"):
        KindsParam.parse({"i": 2.5})


def test_bad_shape_element_is_named() -> None:
    with pytest.raises(ParamError, match=r"got '\(3, x\)' \('x' is not an int\)$"):
        KindsParam.parse({"shape": "(3, x)"})


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("0", "Convolution: parameter 'num_filter' expects int in [1, 100000], got '0'"),
        (100001, "Convolution: parameter 'num_filter' expects int in [1, 100000], got 100001"),
    ],
)
def test_out_of_range_int(value: Any, message: str) -> None:
    with pytest.raises(ParamError) as info:
        ConvParam.parse({"kernel": "(3, 3)", "num_filter": value}, op_name="Convolution")
    assert str(info.value) == message


def test_bounds_are_inclusive() -> None:
    for n in (1, 100000):
        assert ConvParam(kernel=3, num_filter=n).num_filter == n
    assert ConvParam(kernel=3, num_filter=1, eps=0).eps == 0.0


@pytest.mark.parametrize("value", ["-1e-9", "-inf", "nan"])
def test_out_of_range_float_including_nan(value: str) -> None:
    with pytest.raises(ParamError, match=r"^Conv: parameter 'eps' expects float >= 0\.0, got"):
        ConvParam.parse({"kernel": "3", "num_filter": "1", "eps": value}, op_name="Conv")


def test_one_sided_bounds_are_described() -> None:
    class P(Parameter):
        lo = field(float, default=1.0, lower_bound=0.5)
        hi = field(int, default=0, upper_bound=3)

    with pytest.raises(ParamError, match=r"'lo' expects float >= 0\.5, got 0\.25$"):
        P(lo=0.25)
    with pytest.raises(ParamError, match=r"'hi' expects int <= 3, got 4$"):
        P(hi=4)


def test_bad_enum_lists_choices() -> None:
    with pytest.raises(ParamError) as info:
        ConvParam.parse({"kernel": "3", "num_filter": "1", "act_type": "gelu"}, "Activation")
    assert str(info.value).startswith(
        "Activation: parameter 'act_type' expects one of {'relu', 'sigmoid', 'tanh'}, got 'gelu'"
    )
    with pytest.raises(ParamError) as info:
        ConvParam.parse({"kernel": "3", "num_filter": "1", "act_type": "xyz"}, "Activation")
    assert str(info.value) == (
        "Activation: parameter 'act_type' expects one of {'relu', 'sigmoid', 'tanh'}, got 'xyz'"
    )


def test_bad_enum_suggests_a_close_choice() -> None:
    with pytest.raises(ParamError, match=r"got 'Relu'; did you mean 'relu'\?$"):
        ConvParam.parse({"kernel": "3", "num_filter": "1", "act_type": "Relu"}, "Activation")
    with pytest.raises(ParamError, match=r"got 'sigmod'; did you mean 'sigmoid'\?$"):
        ConvParam.parse({"kernel": "3", "num_filter": "1", "act_type": "sigmod"}, "Activation")


def test_unknown_key_lists_valid_parameters_and_suggests_one() -> None:
    with pytest.raises(ParamError) as info:
        ConvParam.parse({"kernal": "(3, 3)", "num_filter": "8"}, op_name="Convolution")
    assert str(info.value) == (
        "Convolution: unknown parameter 'kernal'; valid parameters are "
        "['kernel', 'stride', 'num_filter', 'no_bias', 'act_type', 'eps', 'axis']; "
        "did you mean 'kernel'?"
    )


def test_unknown_key_without_close_match_has_no_suggestion() -> None:
    with pytest.raises(ParamError) as info:
        ConvParam.parse({"kernel": "3", "num_filter": "8", "zzzzzz": "1"}, op_name="Convolution")
    msg = str(info.value)
    assert msg.startswith("Convolution: unknown parameter 'zzzzzz'; valid parameters are [")
    assert "did you mean" not in msg


def test_unknown_key_is_reported_before_bad_values() -> None:
    with pytest.raises(ParamError, match="unknown parameter 'bogus'"):
        ConvParam.parse({"num_filter": "0", "bogus": 1})


def test_unknown_keys_pass_with_allow_unknown() -> None:
    p = ConvParam.parse({"kernel": "3", "num_filter": "2", "extra": "x"}, allow_unknown=True)
    assert p == ConvParam(kernel=(3,), num_filter=2)


@pytest.mark.parametrize(
    "key", ["__shape__", "__dtype__", "__lr_mult__", "__init__", "__wd_mult__"]
)
def test_mxnet_hidden_dunder_keys_are_ignored(key: str) -> None:
    p = ConvParam.parse({"kernel": "3", "num_filter": "2", key: "(1, 2)"}, op_name="Convolution")
    assert p == ConvParam(kernel=3, num_filter=2)
    assert key not in p.to_dict()


@pytest.mark.parametrize("key", ["_shape", "__shape", "shape__", "____"])
def test_only_full_dunder_keys_are_hidden(key: str) -> None:
    with pytest.raises(ParamError, match=f"unknown parameter {key!r}"):
        ConvParam.parse({"kernel": "3", "num_filter": "2", key: "1"})


def test_missing_required_parameter() -> None:
    with pytest.raises(ParamError) as info:
        ConvParam.parse({"num_filter": "8"}, op_name="Convolution")
    assert str(info.value) == (
        "Convolution: missing required parameter 'kernel' (Shape(tuple) of ints such as (3, 3))"
    )


def test_missing_required_parameters_are_all_named() -> None:
    with pytest.raises(ParamError) as info:
        ConvParam.parse({"__shape__": "(1,)"}, op_name="Convolution")
    msg = str(info.value)
    assert msg.startswith("Convolution: missing required parameters 'kernel' (")
    assert "'num_filter' (int in [1, 100000])" in msg


def test_errors_name_the_class_without_an_op_name() -> None:
    with pytest.raises(ParamError, match=r"^ConvParam: missing required parameter 'kernel'"):
        ConvParam(num_filter=8)
    with pytest.raises(ParamError, match=r"^ConvParam: unknown parameter 'kernal'"):
        ConvParam.parse({"kernal": 3})


def test_a_failed_parse_leaves_the_class_usable() -> None:
    with pytest.raises(ParamError):
        ConvParam.parse({"kernel": "(3, x)", "num_filter": "8"})
    assert ConvParam.parse({"kernel": "(3, 3)", "num_filter": "8"}).kernel == (3, 3)


# -- docs: fields() / ArgumentInfo ----------------------------------------------------------


def test_fields_describe_each_field_in_declaration_order() -> None:
    assert ConvParam.fields() == [
        ArgumentInfo("kernel", "Shape(tuple), required", "Convolution kernel size: (h, w)."),
        ArgumentInfo("stride", "Shape(tuple), optional, default=()", "Convolution stride: (h, w)."),
        ArgumentInfo("num_filter", "int (non-negative), required", "Number of filters."),
        ArgumentInfo("no_bias", "boolean, optional, default=0", "Whether to disable the bias."),
        ArgumentInfo("act_type", "{'relu', 'sigmoid', 'tanh'}, optional, default='relu'", "Act."),
        ArgumentInfo("eps", "float, optional, default=0.001", ""),
        ArgumentInfo("axis", "int or None, optional, default=None", ""),
    ]
    info = ConvParam.fields()[0]
    assert (info.name, info.type_info, info.description) == tuple(info)


def test_type_info_of_other_kinds() -> None:
    class P(Parameter):
        a = field(str, default="NCHW")
        b = field(str, enum=["NHWC", "NCHW"], optional=True)
        c = field(FloatTuple, default=(0.5,))
        d = field(IntOrNoneTuple, default=(None, 1))
        e = field(bool, default=True)
        f = field(int, default=-1)
        g = field(Shape, default=None)
        h = field(int, lower_bound=-1)

    assert [a.type_info for a in P.fields()] == [
        "string, optional, default='NCHW'",
        "{None, 'NCHW', 'NHWC'}, optional, default=None",
        "tuple of <float>, optional, default=(0.5,)",
        "tuple of <int or None>, optional, default=(None, 1)",
        "boolean, optional, default=1",
        "int, optional, default=-1",
        "Shape(tuple) or None, optional, default=None",
        "int, required",
    ]


def test_field_names_defaults_and_specs() -> None:
    assert ConvParam.field_names() == [
        "kernel",
        "stride",
        "num_filter",
        "no_bias",
        "act_type",
        "eps",
        "axis",
    ]
    assert ConvParam.defaults() == {
        "stride": (),
        "no_bias": False,
        "act_type": "relu",
        "eps": 1e-3,
        "axis": None,
    }
    specs = ConvParam.field_specs()
    assert isinstance(specs["kernel"], Field)
    assert specs["kernel"].required
    assert specs["kernel"].default is MISSING
    assert specs["num_filter"].lower_bound == 1
    assert specs["axis"].optional
    # class attribute access gives the Field (typed as the value, like dataclasses.field)
    assert ConvParam.kernel is specs["kernel"]  # type: ignore[comparison-overlap]
    with pytest.raises(TypeError):
        specs["new"] = specs["kernel"]  # type: ignore[index]


def test_defaults_are_normalised_to_parsed_values() -> None:
    class P(Parameter):
        s = field(Shape, default=[1, 1])
        f = field(float, default=1)

    assert P.defaults() == {"s": (1, 1), "f": 1.0}
    assert type(P().f) is float


# -- string form: to_dict (GetParams) --------------------------------------------------------


def test_to_dict_gives_mxnet_strings_for_every_field() -> None:
    p = ConvParam.parse({"kernel": "(3,3)", "num_filter": "8", "stride": "[2]"})
    assert p.to_dict() == {
        "kernel": "(3, 3)",
        "stride": "(2,)",
        "num_filter": "8",
        "no_bias": "False",
        "act_type": "relu",
        "eps": "0.001",
        "axis": "None",
    }


def test_to_dict_of_other_kinds() -> None:
    p = KindsParam(f=2e-5, b=True, ft=(0.1, 2), ont=(None, -1), oi=3, shape=())
    d = p.to_dict()
    assert (d["f"], d["b"], d["ft"], d["ont"], d["oi"], d["shape"]) == (
        "2e-05",
        "True",
        "(0.1, 2.0)",
        "(None, -1)",
        "3",
        "()",
    )


# -- value semantics -------------------------------------------------------------------------


def test_equality_hash_and_repr() -> None:
    p = ConvParam(kernel=(3, 3), num_filter=8)
    q = ConvParam.parse({"kernel": "[3, 3]", "num_filter": "8"})
    assert p == q
    assert hash(p) == hash(q)
    assert p != ConvParam(kernel=(3, 3), num_filter=9)
    assert p != KindsParam()
    assert repr(p) == (
        "ConvParam(kernel=(3, 3), stride=(), num_filter=8, no_bias=False, "
        "act_type='relu', eps=0.001, axis=None)"
    )
    assert p.values() == {
        "kernel": (3, 3),
        "stride": (),
        "num_filter": 8,
        "no_bias": False,
        "act_type": "relu",
        "eps": 0.001,
        "axis": None,
    }


def test_instances_are_immutable() -> None:
    p = ConvParam(kernel=3, num_filter=8)
    with pytest.raises(AttributeError, match="immutable"):
        p.num_filter = 9
    with pytest.raises(AttributeError, match="immutable"):
        del p.num_filter
    assert p.num_filter == 8


def test_replace_validates_the_changes() -> None:
    p = ConvParam(kernel=3, num_filter=8)
    q = p.replace(num_filter="16", axis=1)
    assert (q.num_filter, q.axis, q.kernel) == (16, 1, (3,))
    assert p.num_filter == 8
    with pytest.raises(ParamError, match="'num_filter'"):
        p.replace(num_filter=0)


def test_pickle_and_copy_keep_the_value() -> None:
    p = ConvParam(kernel=(3, 3), num_filter=8, axis=1)
    assert pickle.loads(pickle.dumps(p)) == p
    assert copy.copy(p) == p
    assert copy.deepcopy(p) == p


# -- inheritance -----------------------------------------------------------------------------


def test_subclasses_inherit_and_override_fields() -> None:
    class Base(Parameter):
        a = field(int, default=1)
        b = field(float, default=0.5)

    class Child(Base):
        c = field(str, default="x")
        a = field(int, default=2, lower_bound=0)  # replaced in place, keeps its position

    assert Child.field_names() == ["a", "b", "c"]
    assert Child() == Child(a=2, b=0.5, c="x")
    assert Base.field_names() == ["a", "b"]
    assert Base().a == 1
    with pytest.raises(ParamError, match=r"^Child: parameter 'a' expects int >= 0"):
        Child(a=-1)
    with pytest.raises(ParamError, match="unknown parameter 'c'"):
        Base(c="y")


def test_a_shared_field_object_is_bound_per_name() -> None:
    shared = field(int, default=0)

    class P(Parameter):
        x = shared
        y = shared

    with pytest.raises(ParamError, match="parameter 'y' expects int"):
        P(y="q")
    assert P.field_specs()["x"].name == "x"


# -- declaration errors ----------------------------------------------------------------------


def test_field_rejects_bad_declarations() -> None:
    with pytest.raises(TypeError, match="unsupported type"):
        field(list)
    with pytest.raises(TypeError, match="enum needs type str"):
        field(int, enum=["a"])
    with pytest.raises(TypeError, match="enum must be non-empty strings"):
        field(str, enum=[])
    with pytest.raises(TypeError, match="bounds need type int or float"):
        field(str, lower_bound=0)
    with pytest.raises(TypeError, match="lower_bound 2 > upper_bound 1"):
        field(int, lower_bound=2, upper_bound=1)


def test_class_creation_rejects_bad_defaults_and_names() -> None:
    with pytest.raises(TypeError, match=r"P\.n: invalid default 0: .*expects int >= 1"):

        class P(Parameter):
            n = field(int, default=0, lower_bound=1)

    with pytest.raises(TypeError, match=r"Q\.act: invalid default 'gelu'"):

        class Q(Parameter):
            act = field(str, enum=["relu"], default="gelu")

    with pytest.raises(TypeError, match="shadow Parameter API"):

        class R(Parameter):
            fields = field(int, default=0)  # type: ignore[assignment]

    with pytest.raises(TypeError, match="must not start with '_'"):

        class S(Parameter):
            _hidden = field(int, default=0)


def test_an_empty_parameter_class_parses_only_hidden_keys() -> None:
    class NoParam(Parameter):
        pass

    assert NoParam.parse({"__shape__": "(1,)"}).to_dict() == {}
    with pytest.raises(ParamError, match=r"unknown parameter 'x'; valid parameters are \[\]$"):
        NoParam.parse({"x": "1"}, op_name="Flatten")


# -- MXNet symbol-file attribute strings -----------------------------------------------------


class _Convolution(Parameter):
    kernel = field(Shape)
    stride = field(Shape, default=())
    dilate = field(Shape, default=())
    pad = field(Shape, default=())
    num_filter = field(int, lower_bound=1, upper_bound=100000)
    num_group = field(int, default=1)
    no_bias = field(bool, default=False)
    layout = field(str, enum=["NCW", "NCHW", "NCDHW", "NHWC", "NDHWC"], optional=True)


class _Pooling(Parameter):
    kernel = field(Shape, default=())
    pool_type = field(str, enum=["avg", "lp", "max", "sum"], default="max")
    global_pool = field(bool, default=False)
    pooling_convention = field(str, enum=["full", "same", "valid"], default="valid")
    stride = field(Shape, default=())
    pad = field(Shape, default=())
    layout = field(str, enum=["NCW", "NCHW", "NCDHW", "NHWC", "NDHWC"], optional=True)


class _BatchNorm(Parameter):
    eps = field(float, default=1e-3)
    momentum = field(float, default=0.9)
    fix_gamma = field(bool, default=True)
    use_global_stats = field(bool, default=False)
    axis = field(int, default=1)


class _FullyConnected(Parameter):
    num_hidden = field(int, lower_bound=1)
    no_bias = field(bool, default=False)
    flatten = field(bool, default=True)


class _Activation(Parameter):
    act_type = field(str, enum=["relu", "sigmoid", "softrelu", "softsign", "tanh"])


_PARAMS_BY_OP: dict[str, type[Parameter]] = {
    "Convolution": _Convolution,
    "Pooling": _Pooling,
    "BatchNorm": _BatchNorm,
    "FullyConnected": _FullyConnected,
    "Activation": _Activation,
}

# Copied from /work/shared/models/resnet18_v1-symbol.json, written by MXNet 1.9.1.
_RESNET18_SAMPLES = [
    (
        "Convolution",
        {
            "dilate": "(1, 1)",
            "kernel": "(7, 7)",
            "layout": "NCHW",
            "no_bias": "True",
            "num_filter": "64",
            "num_group": "1",
            "pad": "(3, 3)",
            "stride": "(2, 2)",
        },
    ),
    (
        "BatchNorm",
        {
            "axis": "1",
            "eps": "1e-05",
            "fix_gamma": "False",
            "momentum": "0.9",
            "use_global_stats": "False",
        },
    ),
    (
        "Pooling",
        {
            "global_pool": "False",
            "kernel": "(3, 3)",
            "layout": "NCHW",
            "pad": "(1, 1)",
            "pool_type": "max",
            "pooling_convention": "valid",
            "stride": "(2, 2)",
        },
    ),
    (
        "Pooling",
        {
            "global_pool": "True",
            "kernel": "(1, 1)",
            "layout": "NCHW",
            "pad": "(0, 0)",
            "pool_type": "avg",
            "pooling_convention": "full",
            "stride": "(1, 1)",
        },
    ),
    ("FullyConnected", {"flatten": "True", "no_bias": "False", "num_hidden": "1000"}),
    ("Activation", {"act_type": "relu"}),
]


@pytest.mark.parametrize(("op", "attrs"), _RESNET18_SAMPLES)
def test_mxnet_attribute_strings_parse_and_print_back_unchanged(
    op: str, attrs: dict[str, str]
) -> None:
    p = _PARAMS_BY_OP[op].parse(attrs, op_name=op)
    assert {k: p.to_dict()[k] for k in attrs} == attrs


def test_parsed_resnet18_values() -> None:
    conv = _Convolution.parse(_RESNET18_SAMPLES[0][1], op_name="Convolution")
    assert (conv.kernel, conv.stride, conv.pad, conv.no_bias, conv.layout) == (
        (7, 7),
        (2, 2),
        (3, 3),
        True,
        "NCHW",
    )
    bn = _BatchNorm.parse(_RESNET18_SAMPLES[1][1], op_name="BatchNorm")
    assert (bn.eps, bn.momentum, bn.fix_gamma, bn.axis) == (1e-5, 0.9, False, 1)
    pool = _Pooling.parse(_RESNET18_SAMPLES[3][1], op_name="Pooling")
    assert (pool.global_pool, pool.pool_type, pool.pooling_convention) == (True, "avg", "full")


# CI clones the repository with shared/ beside it; a developer machine has /work/shared
_MODELS = next(
    (
        p
        for p in (
            Path(__file__).resolve().parents[1].parent / "shared" / "models",
            Path("/work/shared/models"),
        )
        if p.is_dir()
    ),
    Path("/work/shared/models"),
)


@pytest.mark.skipif(not _MODELS.is_dir(), reason="shared model files not present")
def test_every_node_of_the_shared_symbol_files_parses() -> None:
    seen = 0
    for path in sorted(_MODELS.glob("*-symbol.json")):
        for node in json.loads(path.read_text())["nodes"]:
            param_cls = _PARAMS_BY_OP.get(node["op"])
            if param_cls is None:
                continue
            attrs = node.get("attrs", {})
            p = param_cls.parse(attrs, op_name=node["op"])
            assert {k: p.to_dict()[k] for k in attrs} == attrs, (path.name, node["name"])
            seen += 1
    assert seen > 20


# -- properties --------------------------------------------------------------------------------

_ints = st.integers(min_value=-(2**40), max_value=2**40)
_floats = st.floats(allow_nan=False)  # nan != nan, so nan cannot compare equal after a trip
_texts = st.text(st.characters(blacklist_categories=["Cs"]), max_size=12)
_VALUES: dict[Any, st.SearchStrategy[Any]] = {
    int: _ints,
    float: _floats,
    bool: st.booleans(),
    str: _texts,
    Shape: st.lists(_ints, max_size=5).map(tuple),
    FloatTuple: st.lists(_floats, max_size=5).map(tuple),
    IntOrNoneTuple: st.lists(st.none() | _ints, max_size=5).map(tuple),
}


@st.composite
def _random_param_class(draw: st.DrawFn) -> type[Parameter]:
    """A Parameter subclass with random field kinds, enums, bounds and optionality."""
    namespace: dict[str, Any] = {}
    for i in range(draw(st.integers(0, 6))):
        kind = draw(st.sampled_from(list(_VALUES)))
        optional = draw(st.booleans())
        kwargs: dict[str, Any] = {"optional": optional}
        if kind is str and draw(st.booleans()):
            kwargs["enum"] = draw(st.lists(_texts, min_size=1, max_size=4, unique=True))
        if kind in (int, float) and draw(st.booleans()):
            lo, hi = sorted(draw(st.lists(_ints, min_size=2, max_size=2)))
            kwargs.update(lower_bound=lo, upper_bound=hi)
        namespace[f"f{i}"] = field(kind, **kwargs)
    return type("RandomParam", (Parameter,), namespace)


def _value_for(f: Field) -> st.SearchStrategy[Any]:
    if f.enum is not None:
        strategy: st.SearchStrategy[Any] = st.sampled_from(sorted(f.enum))
    elif f.lower_bound is not None and f.upper_bound is not None:
        lo, hi = f.lower_bound, f.upper_bound
        strategy = st.integers(int(lo), int(hi)) if f.type is int else st.floats(lo, hi)
    else:
        strategy = _VALUES[f.type]
    if f.optional:
        # MXNet writes None as "None", so an optional string field cannot hold "None" itself.
        strategy = st.none() | strategy.filter(lambda v: v != "None")
    return strategy


@st.composite
def _random_param(draw: st.DrawFn) -> Parameter:
    cls = draw(_random_param_class())
    values = {name: draw(_value_for(f)) for name, f in cls.field_specs().items()}
    return cls(**values)


@_SETTINGS
@given(_random_param())
def test_random_parameters_round_trip_through_to_dict(p: Parameter) -> None:
    strings = p.to_dict()
    assert all(isinstance(v, str) for v in strings.values())
    q = type(p).parse(strings)
    assert q == p
    assert q.to_dict() == strings


@_SETTINGS
@given(_random_param())
def test_python_values_round_trip_through_the_constructor(p: Parameter) -> None:
    assert type(p)(**p.values()) == p
    assert p.replace() == p


@_SETTINGS
@given(
    st.lists(_ints, max_size=5),
    st.sampled_from(["({})", "[{}]", "{}"]),
    st.sampled_from([",", ", ", " , "]),
    st.booleans(),
)
def test_shape_string_spellings_agree(
    dims: list[int], brackets: str, sep: str, trailing_comma: bool
) -> None:
    if not dims and brackets == "{}":
        return  # a bare empty string is not a shape
    body = sep.join(str(d) for d in dims) + ("," if trailing_comma and dims else "")
    assert _parse_one("shape", brackets.format(body)) == tuple(dims)


@_SETTINGS
@given(_floats)
def test_float_strings_round_trip_exactly(x: float) -> None:
    p = KindsParam(f=x)
    assert KindsParam.parse(p.to_dict()).f == x
