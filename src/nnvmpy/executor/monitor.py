"""Executor.set_monitor_callback: see every intermediate array as the graph runs.

The callback is called from the thread that runs forward/backward, right after a node is
pushed, with the node's output arrays (and, with monitor_all, right before, with its
inputs). Reading an array there (`asnumpy()`) waits for that node only; the values stay
valid until a later node reuses the memory, so copy what you keep.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..attrs import FListInputNames
from ..ndarray.ndarray import NDArray
from ..symbol.symbol import output_names
from .node_run import NodeRun


class Monitor:
    """MXNet's names: a node's outputs `<node>_<output>`; with monitor_all, before the node
    runs, each input as `<node>_<input>` (FListInputNames, else `input<i>`), preceded by
    the variable's own name when the input is a variable."""

    def __init__(self, callback: Callable[[str, NDArray], Any], monitor_all: bool) -> None:
        self.callback = callback
        self.monitor_all = monitor_all
        self._names: dict[int, tuple[list[tuple[str, int]], list[str]]] = {}

    def _names_of(self, run: NodeRun) -> tuple[list[tuple[str, int]], list[str]]:
        names = self._names.get(id(run))
        if names is None:
            node, op = run.node, run.node.op
            assert op is not None
            fn = op.get_attr(FListInputNames)
            listed = list(fn(node.attrs)) if fn is not None else []
            ins: list[tuple[str, int]] = []
            for i, entry in enumerate(node.inputs):
                if entry.node.is_variable():
                    ins.append((entry.node.name, i))
                label = listed[i] if i < len(listed) else f"input{i}"
                ins.append((f"{node.name}_{label}", i))
            outs = output_names(node)
            outs += [f"output{i}" for i in range(len(outs), len(run.outputs))]
            names = self._names[id(run)] = (ins, [f"{node.name}_{n}" for n in outs])
        return names

    def before(self, run: NodeRun) -> None:
        if _fused_spec(run) is not None:
            return  # after() shows the members, inputs and outputs, in order
        if self.monitor_all:
            for name, i in self._names_of(run)[0]:
                self.callback(name, run.inputs[i])

    def after(self, run: NodeRun) -> None:
        spec = _fused_spec(run)
        if spec is not None:
            self._after_fused(run, spec)
            return
        for name, arr in zip(self._names_of(run)[1], run.outputs):
            self.callback(name, arr)

    def _after_fused(self, run: NodeRun, spec: Any) -> None:
        """A fused node: each member as if it had run alone (values recomputed, as copies)."""
        from nnvmpy.fusion.compute import member_values
        from nnvmpy.graph.node import Node
        from nnvmpy.ndarray.ndarray import array

        ctx = run.outputs[0].context
        ins = [a.asnumpy() for a in run.inputs]
        values = member_values(run.node.name, spec, ins)
        for m, member in enumerate(spec.members):
            node = Node(member.attrs)
            if self.monitor_all:
                fn = member.attrs.op.get_attr(FListInputNames)
                listed = list(fn(member.attrs)) if fn is not None else []
                for i, (src, k) in enumerate(member.args):
                    label = listed[i] if i < len(listed) else f"input{i}"
                    value = ins[k] if src < 0 else values[src][k]
                    if src < 0 and run.node.inputs[k].node.is_variable():
                        self.callback(run.node.inputs[k].node.name, run.inputs[k])
                    self.callback(f"{member.name}_{label}", array(value, ctx, value.dtype))
            for out_name, value in zip(output_names(node), values[m]):
                self.callback(f"{member.name}_{out_name}", array(value, ctx, value.dtype))


def _fused_spec(run: NodeRun) -> Any:
    from nnvmpy.fusion.spec import FusedSpec

    parsed = run.node.attrs.parsed
    return parsed if isinstance(parsed, FusedSpec) else None


__all__ = ["Monitor"]
