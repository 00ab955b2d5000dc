"""nv.fuse(fn): run an imperative element-wise function as one bound, fused graph.

    @nv.fuse
    def gelu(x):
        return 0.5 * x * (1 + nv.nd.tanh(0.7978845608 * (x + 0.044715 * x * x * x)))

    y = gelu(nv.nd.array(...))      # first call per (shapes, dtypes, device): traced

The first call with a new signature (the shape, dtype and device of every argument) runs
`fn` once under autograd recording on copies of the arguments, turns the recorded graph
into a symbol, fuses it (FusePointwise, whatever NNVMPY_FUSION says) and binds it; later calls
with that signature copy the arguments into the bound executor and run it. Results are
fresh arrays. `fn` must take NDArrays and return an NDArray or a tuple/list of them,
computed from its arguments only (an array it reads from elsewhere is refused: it would be
frozen into the trace), without Python control flow on array values.
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
        self._executors: dict[Any, tuple[Any, bool]] = {}
        self._lock = threading.Lock()

    def __call__(self, *arrays: Any) -> Any:
        from ..ndarray.ndarray import NDArray

        name = getattr(self.fn, "__name__", "fn")
        for i, a in enumerate(arrays):
            if not isinstance(a, NDArray):
                raise NNVMError(
                    f"nv.fuse({name}): argument {i} must be an NDArray, got {type(a).__name__}"
                )
        key = tuple((a.shape, str(a.dtype), str(a.context)) for a in arrays)
        found = self._executors.get(key)
        if found is None:
            with self._lock:
                found = self._executors.get(key)
                if found is None:
                    found = self._executors[key] = self._trace(name, arrays)
        exe, single = found
        outs = exe.forward(**{f"arg{i}": a for i, a in enumerate(arrays)})
        results = [o.copy() for o in outs]
        return results[0] if single else tuple(results)

    def symbol(self, *arrays: Any) -> Any:
        """The traced (unfused) symbol for these arguments' signature."""
        return self._record(getattr(self.fn, "__name__", "fn"), arrays)[0]

    def _record(self, name: str, arrays: tuple[Any, ...]) -> tuple[Any, bool]:
        from .. import autograd
        from ..graph.node import Node, NodeEntry, post_order
        from ..ndarray.ndarray import NDArray
        from ..registry import NodeAttrs
        from ..symbol.symbol import Symbol

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

    def _trace(self, name: str, arrays: tuple[Any, ...]) -> tuple[Any, bool]:
        from .api import optimize_for

        symbol, single = self._record(name, arrays)
        used = set(symbol.list_arguments())
        args = {f"arg{i}": a.copy() for i, a in enumerate(arrays) if f"arg{i}" in used}
        ctx = arrays[0].context
        fused = optimize_for(symbol, "fuse", args=args, ctx=ctx)
        return _Runner(fused.bind(ctx, args), used), single


class _Runner:
    """A bound executor fed only the arguments the traced graph reads."""

    def __init__(self, exe: Any, used: set[str]) -> None:
        self.exe = exe
        self.used = used

    def forward(self, **arrays: Any) -> Any:
        return self.exe.forward(**{k: v for k, v in arrays.items() if k in self.used})


def fuse(fn: Callable[..., Any]) -> FusedFunction:
    """Decorator: run `fn(*ndarrays)` as one traced, bound graph with element-wise fusion,
    traced once per input signature (see nnvmpy.fusion.trace)."""
    return FusedFunction(fn)


__all__ = ["FusedFunction", "fuse"]
