"""A few test ops for the graph-core tests (names start with "tg_"), undone per module."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from nnvmpy import registry
from nnvmpy.attrs import FMutateInputs
from nnvmpy.graph import Node, NodeEntry, make_node
from nnvmpy.registry import register_op

OpFn = Callable[..., NodeEntry]


@pytest.fixture(scope="module", autouse=True)
def graph_test_ops() -> Iterator[None]:
    with registry.scoped_registry():
        register_op("tg_add").set_num_inputs(2)
        register_op("tg_split").set_num_outputs(2)
        register_op("tg_update").set_num_inputs(2).set_attr(FMutateInputs, lambda attrs: [1])
        yield


def _op(op_name: str, *inputs: NodeEntry, name: str | None = None, **attrs: Any) -> NodeEntry:
    return NodeEntry(make_node(op_name, name or op_name, list(inputs), attrs))


def _var(name: str, **attrs: str) -> NodeEntry:
    return NodeEntry(Node.variable(name, attrs))


@pytest.fixture
def op() -> OpFn:
    """op("tg_add", a, b, name="s") -> NodeEntry of output 0 of a new node."""
    return _op


@pytest.fixture
def var() -> OpFn:
    """var("x") -> NodeEntry of a new variable."""
    return _var
