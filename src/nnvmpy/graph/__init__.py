"""Computation graphs: nodes, entries, graphs, and the pass registry (nv.graph)."""

from . import attrs
from .grad import (
    ElemwiseGradUseIn,
    ElemwiseGradUseInOut,
    ElemwiseGradUseNone,
    ElemwiseGradUseOut,
    make_grad_node,
    make_node,
    make_zero_grad_nodes,
)
from .graph import Graph, IndexedEntry, IndexedGraph, IndexedNode
from .node import Node, NodeEntry, post_order
from .pass_registry import apply_passes, get_pass, list_passes, register_pass

__all__ = [
    "ElemwiseGradUseIn",
    "ElemwiseGradUseInOut",
    "ElemwiseGradUseNone",
    "ElemwiseGradUseOut",
    "Graph",
    "IndexedEntry",
    "IndexedGraph",
    "IndexedNode",
    "Node",
    "NodeEntry",
    "apply_passes",
    "attrs",
    "get_pass",
    "list_passes",
    "make_grad_node",
    "make_node",
    "make_zero_grad_nodes",
    "post_order",
    "register_pass",
]
