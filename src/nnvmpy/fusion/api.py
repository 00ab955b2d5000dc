"""Public entry points: Symbol.optimize_for('fuse') returns the fused symbol for inspection;
optimize_for('default' | 'default_v2') partitions by registered op names (passes/partition.py)."""

from __future__ import annotations

from typing import Any

from ..base import NNVMError

#: optimize_for backends: the pass each runs
BACKENDS = {"fuse": "FusePointwise", "FusePointwise": "FusePointwise"}


def optimize_for(
    symbol: Any, backend: str, args: Any = None, aux: Any = None, ctx: Any = None, **kwargs: Any
) -> Any:
    """`symbol` with its element-wise groups fused (MXNet 1.9's optimize_for signature).

    With `args` / `aux` (dicts or lists of arrays, as bind takes them) the graph is first
    typed and shaped from them, so groups are restricted to one shape and to dtypes the
    kernels compute in; without them every chain of element-wise ops fuses (they are
    shape-preserving by declaration). With `ctx` a CPU context, large float ops that
    NumPy computes faster (exp, tanh, ...) stay out of groups, as at bind. Other keyword
    arguments are accepted and ignored, as MXNet passes them to its backend.
    """
    from nnvmpy.graph import Graph, apply_passes
    from nnvmpy.passes.partition import (
        SUBGRAPH_BACKENDS,
        partition_by_op_names,
        subgraph_op_names,
    )
    from nnvmpy.symbol.symbol import Symbol

    if backend in SUBGRAPH_BACKENDS:  # MXNet's partitioning by op names
        names = subgraph_op_names(backend)
        if names is None:
            raise NNVMError(
                f"optimize_for: no op names are registered for subgraph backend {backend!r} "
                "(MXSetSubgraphPropertyOpNamesV2 / passes.partition.set_subgraph_op_names)"
            )
        return partition_by_op_names(symbol, names, backend)
    if backend not in BACKENDS:
        known = sorted(BACKENDS) + list(SUBGRAPH_BACKENDS)
        raise NNVMError(f"optimize_for: unknown backend {backend!r}; nnvmpy has {known}")
    graph = Graph(symbol._heads)
    hints = _hints(symbol, args, aux)
    if hints is not None:
        graph = apply_passes(graph, ["InferShape", "InferType"], shapes=hints[0], dtypes=hints[1])
    device = getattr(ctx, "device_type", None)
    extra = {"fuse_device": "gpu" if device == "gpu" else "cpu"} if device else {}
    fused = apply_passes(graph, [BACKENDS[backend]], **extra)
    return Symbol(fused.outputs)


def _hints(symbol: Any, args: Any, aux: Any) -> tuple[dict[str, Any], dict[str, Any]] | None:
    if args is None and aux is None:
        return None
    shapes: dict[str, Any] = {}
    dtypes: dict[str, Any] = {}
    for names, given, what in (
        (symbol.list_arguments(), args, "args"),
        (symbol.list_auxiliary_states(), aux, "aux"),
    ):
        if given is None:
            continue
        pairs = given.items() if isinstance(given, dict) else zip(names, given)
        for name, arr in pairs:
            if not hasattr(arr, "shape") or not hasattr(arr, "dtype"):
                raise NNVMError(
                    f"optimize_for: {what}[{name!r}] must be an array, got {type(arr).__name__}"
                )
            shapes[name], dtypes[name] = tuple(arr.shape), arr.dtype
    return shapes, dtypes


__all__ = ["BACKENDS", "optimize_for"]
