"""The pass registry: contracts checked before each pass, names suggested, inputs as attrs."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from nnvmpy.base import NNVMError
from nnvmpy.graph import Graph, NodeEntry, apply_passes, get_pass, list_passes, register_pass
from nnvmpy.graph.attrs import SHAPE_HINTS
from nnvmpy.graph.pass_registry import scoped_passes

Fn = Callable[..., NodeEntry]


@pytest.fixture(autouse=True)
def _scoped_passes() -> Iterator[None]:
    with scoped_passes():
        yield


def test_builtin_passes_are_listed_with_their_contracts() -> None:
    assert {"InferShape", "InferType", "PlanMemory", "Gradient", "SaveJSON", "LoadJSON"} <= set(
        list_passes()
    )
    plan = get_pass("PlanMemory")
    assert plan.requires == ("shape", "dtype")
    assert "storage_id" in plan.provides
    assert "FInplaceOption" in plan.op_attrs
    assert plan.doc


def test_missing_attribute_names_the_pass_that_provides_it(var: Fn) -> None:
    with pytest.raises(NNVMError) as err:
        apply_passes(Graph([var("x")]), ["InferType", "PlanMemory"])
    assert str(err.value) == (
        "PlanMemory needs graph attribute 'shape', which no earlier pass "
        "provided; it is provided by InferShape."
    )


def test_missing_caller_input_names_the_keyword(var: Fn) -> None:
    @register_pass("NeedsThing", requires=("thing",))
    def needs_thing(graph: Graph) -> Graph:
        return graph

    with pytest.raises(NNVMError, match=r"apply_passes\(\.\.\., thing=\.\.\.\)"):
        apply_passes(Graph([var("x")]), "NeedsThing")
    assert apply_passes(Graph([var("x")]), "NeedsThing", thing=1).attrs["thing"] == 1


def test_unknown_pass_suggests_close_names(var: Fn) -> None:
    with pytest.raises(
        NNVMError,
        match=r"unknown graph pass 'InferShapes'; did you mean "
        r"'InferShape'",
    ):
        apply_passes(Graph([var("x")]), ["InferShapes"])


def test_inputs_become_attributes_on_a_copy(var: Fn) -> None:
    seen: dict[str, object] = {}

    @register_pass("Peek")
    def peek(graph: Graph) -> Graph:
        seen.update(graph.attrs)
        return graph

    g = Graph([var("x")])
    out = apply_passes(g, "Peek", shapes={"x": (1,)}, custom=3)
    assert seen == {SHAPE_HINTS: {"x": (1,)}, "custom": 3}
    assert g.attrs == {}
    assert out is not g
    with pytest.raises(NNVMError, match="name the same graph attribute 'shape_hints'"):
        apply_passes(g, "Peek", shapes={}, shape_hints={})


def test_a_pass_must_keep_its_contract(var: Fn) -> None:
    @register_pass("Liar", provides=("promised",))
    def liar(graph: Graph) -> Graph:
        return graph

    @register_pass("NotAGraph")
    def not_a_graph(graph: Graph) -> Graph:
        return None  # type: ignore[return-value]

    with pytest.raises(NNVMError, match=r"Liar did not provide.*'promised'"):
        apply_passes(Graph([var("x")]), "Liar")
    with pytest.raises(NNVMError, match="NotAGraph returned NoneType"):
        apply_passes(Graph([var("x")]), "NotAGraph")


def test_a_name_is_registered_once() -> None:
    @register_pass("Once")
    def once(graph: Graph) -> Graph:
        return graph

    with pytest.raises(NNVMError, match="'Once' is already registered by"):

        @register_pass("Once")
        def again(graph: Graph) -> Graph:
            return graph


def test_scoped_passes_forget_registrations() -> None:
    with scoped_passes():

        @register_pass("Temporary")
        def temporary(graph: Graph) -> Graph:
            return graph

        assert "Temporary" in list_passes()
    assert "Temporary" not in list_passes()
