"""autograd.get_symbol: the recorded graph of an array as a Symbol.

Tape nodes carry no names (naming each recorded op would cost every imperative call), so
the graph is copied into named nodes: variables `var0, var1, ...` in topological order
(marked variables and unmarked inputs alike), ops `<op lower-case><i>` as nv.sym names
them. The copy shares nothing with the tape: the Symbol can be bound, saved, or composed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..base import NNVMError
from ..graph.node import Node, NodeEntry, post_order
from ..registry import NodeAttrs
from .tape import entry_of

if TYPE_CHECKING:
    from nnvmpy.ndarray.ndarray import NDArray
    from nnvmpy.symbol.symbol import Symbol


def tape_symbol(x: NDArray) -> Symbol:
    from nnvmpy.symbol.symbol import Symbol

    head = entry_of(x)
    if head is None:
        raise NNVMError(
            "autograd.get_symbol: the array is not in a recorded graph (compute it inside "
            "autograd.record(); backward without retain_graph frees the graph)"
        )
    copies: dict[int, Node] = {}
    counts: dict[str, int] = {}
    for node in post_order([head]):
        if node.is_variable():
            label = "var"
        else:
            assert node.op is not None
            label = node.op.name.lower()
        i = counts.get(label, 0)
        counts[label] = i + 1
        attrs = NodeAttrs(node.op, f"{label}{i}", node.attrs.dict, node.attrs.parsed)
        inputs = [NodeEntry(copies[id(e.node)], e.index, e.version) for e in node.inputs]
        copies[id(node)] = Node(attrs, inputs)
    return Symbol([NodeEntry(copies[id(head.node)], head.index)])


__all__ = ["tape_symbol"]
