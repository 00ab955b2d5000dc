"""Symbol.debug_str: the graph as text, in the layout of NNVM's Symbol::Print."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from nnvmpy.symbol.symbol import Symbol


def symbol_debug_str(sym: Symbol) -> str:
    """Outputs, then every node in topological order: variables by name, ops with their
    inputs (`node(output index) version=v`), attributes and control dependencies."""
    lines = ["Symbol Outputs:"]
    lines += [f"\toutput[{i}]={h.node.name}({h.index})" for i, h in enumerate(sym._heads)]
    for node in sym._nodes():
        if node.is_variable():
            lines.append(f"Variable:{node.name}")
            continue
        assert node.op is not None
        lines += ["-" * 20, f"Op:{node.op.name}, Name={node.name}", "Inputs:"]
        lines += [
            f"\targ[{i}]={e.node.name}({e.index}) version={e.version}"
            for i, e in enumerate(node.inputs)
        ]
        if node.attrs.dict:
            lines.append("Attrs:")
            lines += [f"\t{k}={v}" for k, v in sorted(node.attrs.dict.items())]
        if node.control_deps:
            lines.append("Control deps:")
            lines += [f"\tcdep[{i}]={d.name}" for i, d in enumerate(node.control_deps)]
    return "\n".join(lines) + "\n"


__all__ = ["symbol_debug_str"]
