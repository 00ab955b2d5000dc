"""nv.fuse(fn): run an imperative element-wise function as one traced, fused graph.

    @nv.fuse
    def gelu(x):
        return 0.5 * x * (1 + nv.nd.tanh(0.7978845608 * (x + 0.044715 * x * x * x)))

    y = gelu(nv.nd.array(...))      # first call per (shapes, dtypes, device): traced
    adam(w, g, m, v, out=(w, m, v)) # results written into given arrays, inputs included

The first call with a new signature (the shape, dtype and device of every argument) runs
`fn` once under autograd recording on copies of the arguments, turns the recorded graph
into a symbol and fuses it (FusePointwise, whatever NNVMPY_FUSION says). Every call then
pushes the fused graph's nodes on the caller's arrays, as imperative ops: nothing is
copied in or out, usually one generated kernel per call. Results are fresh arrays, or
`out=` (one array per result): a fused node may write a result over one of its own
arguments, since its kernel reads element i of every input before writing element i, so
an optimizer step can update its state in place. Under `autograd.record()` fn runs op by
op instead (recorded, so it differentiates; a fused node has no gradient of its own).

`fn` must take NDArrays and return an NDArray or a tuple/list of them, computed from its
arguments only (an array it reads from elsewhere is refused: it would be frozen into the
trace), without Python control flow on array values.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any

from ..base import NNVMError


class FusedFunction:
    """`fn` traced once per input signature into a fused, bound graph."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.fn = fn
        functools.update_wrapper(self, fn)
        self._programs: dict[Any, tuple[_Program, bool]] = {}
        self._lock = threading.Lock()

    def __call__(self, *arrays: Any, out: Any = None) -> Any:
        from nnvmpy import autograd
        from nnvmpy.ndarray.ndarray import NDArray

        name = getattr(self.fn, "__name__", "fn")
        for i, a in enumerate(arrays):
            if not isinstance(a, NDArray):
                raise NNVMError(
                    f"nv.fuse({name}): argument {i} must be an NDArray, got {type(a).__name__}"
                )
        if autograd.is_recording():
            result = self.fn(*arrays)
            return result if out is None else _copy_into(name, result, out)
        key = tuple((a.shape, str(a.dtype), str(a.context)) for a in arrays)
        found = self._programs.get(key)
        if found is None:
            with self._lock:
                found = self._programs.get(key)
                if found is None:
                    found = self._programs[key] = self._trace(name, arrays)
        program, single = found
        results = program.run(name, arrays, out)
        if out is not None:
            return out
        return results[0] if single else tuple(results)

    def symbol(self, *arrays: Any) -> Any:
        """The traced (unfused) symbol for these arguments' signature."""
        return self._record(getattr(self.fn, "__name__", "fn"), arrays)[0]

    def _record(self, name: str, arrays: tuple[Any, ...]) -> tuple[Any, bool]:
        from nnvmpy import autograd
        from nnvmpy.graph.node import Node, NodeEntry, post_order
        from nnvmpy.ndarray.ndarray import NDArray
        from nnvmpy.registry import NodeAttrs
        from nnvmpy.symbol.symbol import Symbol

        copies = [a.copy() for a in arrays]
        for c in copies:
            c.attach_grad()
        with autograd.record(train_mode=False):
            result = self.fn(*copies)
        single = isinstance(result, NDArray)
        outs = [result] if single else list(result) if isinstance(result, list | tuple) else None
        if not outs or not all(isinstance(o, NDArray) for o in outs):
            raise NNVMError(
                f"nv.fuse({name}): fn must return an NDArray or a tuple/list of NDArrays, "
                f"got {type(result).__name__}"
            )
        heads = [autograd.entry_of(o) for o in outs]
        inputs = {id(autograd.entry_of(c).node): i for i, c in enumerate(copies)}  # type: ignore[union-attr]
        for k, h in enumerate(heads):
            if h is None:
                raise NNVMError(f"nv.fuse({name}): output {k} is not computed from the arguments")
        made: dict[int, Node] = {}
        counts: dict[str, int] = {}
        for node in post_order([h for h in heads if h is not None]):
            if node.is_variable():
                if id(node) not in inputs:
                    raise NNVMError(
                        f"nv.fuse({name}): fn reads an array that is not one of its arguments; "
                        "pass it as an argument"
                    )
                made[id(node)] = Node.variable(f"arg{inputs[id(node)]}")
                continue
            assert node.op is not None
            label = node.op.name.lower()
            i = counts.get(label, 0)
            counts[label] = i + 1
            attrs = NodeAttrs(node.op, f"{label}{i}", node.attrs.dict, node.attrs.parsed)
            ins = [NodeEntry(made[id(e.node)], e.index, e.version) for e in node.inputs]
            made[id(node)] = Node(attrs, ins)
        symbol = Symbol([NodeEntry(made[id(h.node)], h.index) for h in heads if h is not None])
        return symbol, single

    def _trace(self, name: str, arrays: tuple[Any, ...]) -> tuple[_Program, bool]:
        from nnvmpy.fusion.api import optimize_for

        symbol, single = self._record(name, arrays)
        used = set(symbol.list_arguments())
        args = {f"arg{i}": a.copy() for i, a in enumerate(arrays) if f"arg{i}" in used}
        fused = optimize_for(symbol, "fuse", args=args, ctx=arrays[0].context)
        return _Program(fused), single


class _Program:
    """A fused symbol's nodes in order, each pushed as an imperative op on the caller's
    arrays (its parsed attributes reused: `_FusedOp` has no string form)."""

    def __init__(self, symbol: Any) -> None:
        from nnvmpy.graph.node import post_order

        self.symbol = symbol
        position: dict[int, int] = {}
        # (op, attrs, inputs) per node; an input is ("arg", i) or ("node", step, index)
        self.steps: list[tuple[Any, Any, list[tuple[str, int, int]]]] = []
        for node in post_order(symbol._heads):
            if node.is_variable():
                continue
            sources = [_source(e, position) for e in node.inputs]
            position[id(node)] = len(self.steps)
            self.steps.append((node.op, node.attrs, sources))
        self.heads = [_source(h, position) for h in symbol._heads]
        # one node whose outputs are the results (in any order): out= goes straight to
        # it, out[k] as the output that result k is
        self.direct: list[int] | None = None
        if len(self.steps) == 1:
            op, attrs, _ = self.steps[0]
            order = [index for kind, _, index in self.heads if kind == "node"]
            if sorted(order) == list(range(op.get_num_outputs(attrs))):
                self.direct = [order.index(j) for j in range(len(order))]

    def run(self, name: str, arrays: tuple[Any, ...], out: Any) -> list[Any]:
        from nnvmpy.imperative import invoke

        if out is not None and self.direct is not None:
            op, attrs, sources = self.steps[0]
            targets = _targets(name, out, len(self.heads))
            ins = [arrays[i] for _, i, _ in sources]
            return invoke(op, ins, attrs, out=[targets[k] for k in self.direct])
        results: list[list[Any]] = []

        def value(source: tuple[str, int, int]) -> Any:
            kind, i, index = source
            return arrays[i] if kind == "arg" else results[i][index]

        for op, attrs, sources in self.steps:
            results.append(invoke(op, [value(s) for s in sources], attrs))
        # an argument returned as it is comes back as a copy, like every other result
        outs = [value(h) if h[0] == "node" else value(h).copy() for h in self.heads]
        if out is not None:
            _copy_into(name, outs, out)
        return outs


def _source(entry: Any, position: dict[int, int]) -> tuple[str, int, int]:
    if entry.node.is_variable():
        return ("arg", int(entry.node.name[len("arg") :]), 0)
    return ("node", position[id(entry.node)], entry.index)


def _targets(name: str, out: Any, n: int) -> list[Any]:
    from nnvmpy.ndarray.ndarray import NDArray

    targets = (
        [out] if isinstance(out, NDArray) else list(out) if isinstance(out, list | tuple) else None
    )
    if targets is None or len(targets) != n:
        got = len(targets) if targets is not None else type(out).__name__
        raise NNVMError(f"nv.fuse({name}): out= needs {n} NDArray(s), one per result; got {got}")
    return targets


def _copy_into(name: str, result: Any, out: Any) -> Any:
    results = list(result) if isinstance(result, list | tuple) else [result]
    for src, dst in zip(results, _targets(name, out, len(results))):
        src.copyto(dst)
    return out


def fuse(fn: Callable[..., Any]) -> FusedFunction:
    """Decorator: run `fn(*ndarrays)` as one traced, bound graph with element-wise fusion,
    traced once per input signature (see nnvmpy.fusion.trace)."""
    return FusedFunction(fn)


__all__ = ["FusedFunction", "fuse"]
