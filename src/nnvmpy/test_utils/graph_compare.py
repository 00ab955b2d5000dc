"""same_symbol_structure: do two symbols compute with the same graph, names aside?

Graph passes (fusion, partitioning, conversion) are tested by comparing the graph they
produce with one written by hand; the node names and attributes then differ, the structure
must not.
"""

from __future__ import annotations

import json
from typing import Any

from ..base import NNVMError


def _structure(where: str, sym: Any) -> tuple[list[tuple[str, list[list[int]]]], list[list[int]]]:
    tojson = getattr(sym, "tojson", None)
    if tojson is None:
        raise NNVMError(f"{where}: expects Symbols, got {type(sym).__name__}")
    graph = json.loads(tojson())
    nodes = [
        (node["op"], [list(entry[:2]) for entry in node.get("inputs", [])])
        for node in graph["nodes"]
    ]
    heads = [list(entry[:2]) for entry in graph.get("heads", [])]
    return nodes, heads


def same_symbol_structure(sym1: Any, sym2: Any) -> bool:
    """True when both symbols have the same nodes in the same topological order, each with
    the same operator fed by the same (node, output) entries, and the same outputs; node
    names and operator attributes are not compared."""
    return _structure("same_symbol_structure", sym1) == _structure("same_symbol_structure", sym2)
