"""nv.operator.get_all_registered_operators / get_operator_arguments (MXNet's spellings)."""

from __future__ import annotations

import pytest

import nnvmpy as nv
from nnvmpy.registry import register_op

# the ops these tests register are undone afterwards (the op reference test lists them all)
pytestmark = pytest.mark.usefixtures("scoped_registry")


def test_every_registered_op_is_listed_and_new_ones_appear() -> None:
    names = nv.operator.get_all_registered_operators()
    assert isinstance(names, list)
    assert {"Activation", "Convolution", "elemwise_add", "Custom"} <= set(names)
    register_op("_test_introspect_listed").set_num_inputs(1)
    assert "_test_introspect_listed" in nv.operator.get_all_registered_operators()


def test_arguments_are_the_inputs_then_the_parameters_with_mxnet_type_strings() -> None:
    args = nv.operator.get_operator_arguments("Activation")
    assert isinstance(args, nv.operator.OperatorArguments)
    assert args.names == ["data", "act_type"]
    assert args.types[0] == "NDArray-or-Symbol"
    assert args.types[1].startswith("{'relu', 'sigmoid'")
    assert args.types[1].endswith("required")
    assert args.narg == 2
    fc = nv.operator.get_operator_arguments("FullyConnected")
    assert fc.names[:3] == ["data", "weight", "bias"]
    assert "num_hidden" in fc.names
    assert fc.narg == len(fc.names) == len(fc.types)


def test_an_unknown_op_is_a_named_error() -> None:
    with pytest.raises(nv.OpNotFoundError, match="'no_such_op'"):
        nv.operator.get_operator_arguments("no_such_op")
    with pytest.raises(nv.NNVMError, match="op_name must be a str"):
        nv.operator.get_operator_arguments(3)  # type: ignore[arg-type]


def test_custom_op_types_are_listed_apart() -> None:
    @nv.operator.register("_test_introspect_custom")
    class Prop(nv.operator.CustomOpProp):
        pass

    assert "_test_introspect_custom" in nv.operator.registered_op_types()
