"""nd.CachedOp: a symbol called like an op on NDArrays (MXNet's CachedOp).

    op = nv.nd.CachedOp(sym)
    y = op(data, weight, bias)          # inputs in sym.list_inputs() order

The graph is prepared once (topological order, parsed attributes, which entry feeds
which input) and each call runs its nodes through imperative invoke, one push per node.
So a call under `autograd.record()` is recorded node by node and differentiates like the
same ops called one by one, auxiliary states (BatchNorm's moving statistics) are updated
in the caller's arrays, and nothing is copied in or out. MXNet's flags (static_alloc,
static_shape, data_indices, ...) tune its own memory reuse; they are accepted and checked
for form, and change nothing here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .base import NNVMError
from .graph.node import post_order

if TYPE_CHECKING:
    from nnvmpy.ndarray.ndarray import NDArray
    from nnvmpy.symbol.symbol import Symbol


class CachedOp:
    """A symbol as a callable on NDArrays: `op(*inputs, out=None)`."""

    def __init__(self, sym: Symbol, flags: Sequence[Any] = (), thread_safe: bool = False) -> None:
        from nnvmpy.symbol.symbol import Symbol

        if not isinstance(sym, Symbol):
            raise NNVMError(f"CachedOp: expected a Symbol, got {type(sym).__name__}")
        self.flags = _check_flags(flags)
        self._symbol = sym
        nodes = post_order(sym._heads)
        self._input_names = [n.name for n in nodes if n.is_variable()]
        slot = {id(n): i for i, n in enumerate(n for n in nodes if n.is_variable())}
        # (node, where each input comes from: ("arg", i) or ("node", position, index))
        self._steps: list[tuple[Any, list[tuple[str, int, int]]]] = []
        position: dict[int, int] = {}
        for node in nodes:
            if node.is_variable():
                continue
            sources = []
            for e in node.inputs:
                if e.node.is_variable():
                    sources.append(("arg", slot[id(e.node)], 0))
                else:
                    sources.append(("node", position[id(e.node)], e.index))
            position[id(node)] = len(self._steps)
            self._steps.append((node, sources))
        self._heads = [
            ("arg", slot[id(h.node)], 0)
            if h.node.is_variable()
            else ("node", position[id(h.node)], h.index)
            for h in sym._heads
        ]

    def __call__(self, *args: NDArray, out: Any = None, default_ctx: Any = None) -> Any:
        from nnvmpy.imperative import invoke
        from nnvmpy.ndarray.ndarray import NDArray

        if len(args) != len(self._input_names):
            raise NNVMError(
                f"CachedOp: expects {len(self._input_names)} inputs {self._input_names}, "
                f"got {len(args)}"
            )
        for name, a in zip(self._input_names, args):
            if not isinstance(a, NDArray):
                raise NNVMError(
                    f"CachedOp: input {name!r} must be an NDArray, got {type(a).__name__}"
                )
        results: list[list[NDArray]] = []

        def value(source: tuple[str, int, int]) -> NDArray:
            kind, i, index = source
            return args[i] if kind == "arg" else results[i][index]

        for node, sources in self._steps:
            results.append(invoke(node.op, [value(s) for s in sources], node.attrs))
        outputs = [value(h) for h in self._heads]
        if out is not None:
            targets = [out] if isinstance(out, NDArray) else list(out)
            if len(targets) != len(outputs):
                raise NNVMError(
                    f"CachedOp: out= needs {len(outputs)} arrays "
                    f"({self._symbol.list_outputs()}), got {len(targets)}"
                )
            for src, dst in zip(outputs, targets):
                src.copyto(dst)
            return out
        return outputs[0] if len(outputs) == 1 else outputs

    def __repr__(self) -> str:
        return f"<CachedOp {self._symbol.list_outputs()} of inputs {self._input_names}>"


def _check_flags(flags: Any) -> dict[str, str]:
    """MXNet's flags: a sequence of (name, value) pairs (or a dict)."""
    items = flags.items() if isinstance(flags, dict) else flags
    result = {}
    try:
        for key, value in items:
            if not isinstance(key, str):
                raise TypeError
            result[key] = str(value)
    except (TypeError, ValueError):
        raise NNVMError(
            f"CachedOp: flags must be (name, value) pairs, e.g. [('static_alloc', True)], "
            f"got {flags!r:.80}"
        ) from None
    return result


__all__ = ["CachedOp"]
