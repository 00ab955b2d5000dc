"""Graph attribute keys: the names passes read and write, and the type stored under each.

The Python counterpart of nnvm/graph_attr_types.h. A `GraphAttr` is a `str` (so
`graph.attrs["shape"]` and `graph.attrs[SHAPE]` are the same slot) that also carries the
value type for mypy and a docstring with NNVM's three facts: who provides it, the default
when absent, and who reads it. Per-entry attributes are lists indexed by
`graph.indexed.entry_id(...)`; per-input attributes are lists ordered like
`graph.indexed.input_nodes`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Generic, TypeVar, overload

if TYPE_CHECKING:
    import numpy as np

    from nnvmpy.base import Shape
    from nnvmpy.graph.node import NodeEntry

T = TypeVar("T")
D = TypeVar("D")


class GraphAttr(str, Generic[T]):
    """A graph attribute name that also names the type of its value."""

    doc: str

    def __new__(cls, name: str, doc: str) -> GraphAttr[T]:
        self = super().__new__(cls, name)
        self.doc = doc
        return self

    def __repr__(self) -> str:
        return f"GraphAttr({str(self)!r})"


class GraphAttrs(dict[str, Any]):
    """The attribute dict of a Graph; reading through a GraphAttr key is typed."""

    @overload
    def __getitem__(self, key: GraphAttr[T]) -> T: ...
    @overload
    def __getitem__(self, key: str) -> Any: ...

    def __getitem__(self, key: str) -> Any:
        return super().__getitem__(key)

    @overload  # type: ignore[override]
    def get(self, key: GraphAttr[T], default: D) -> T | D: ...
    @overload
    def get(self, key: str, default: Any = None) -> Any: ...

    def get(self, key: str, default: Any = None) -> Any:
        return super().get(key, default)


#: storage id of an entry the user owns (variables, graph outputs, external_entry_ids).
EXTERNAL_STORAGE_ID = -1

# -- inputs the caller provides (apply_passes keywords) ---------------------------------------

SHAPE_INPUTS: GraphAttr[list[Shape | None]] = GraphAttr(
    "shape_inputs",
    "Shapes of the variables, ordered like indexed.input_nodes (may be shorter). Provided "
    "by the caller; read by InferShape. Absent: only hints and __shape__.",
)
DTYPE_INPUTS: GraphAttr[list[Any]] = GraphAttr(
    "dtype_inputs",
    "Dtypes of the variables, ordered like indexed.input_nodes (may be shorter). Provided "
    "by the caller; read by InferType. Absent: only hints and __dtype__.",
)
SHAPE_HINTS: GraphAttr[Mapping[str | NodeEntry, Any]] = GraphAttr(
    "shape_hints",
    "{variable name or NodeEntry: shape}; 0 or None marks an unknown dim. Provided by the "
    "caller (apply_passes(..., shapes={...}) is an alias); read by InferShape, which "
    "skips names and entries not in the graph. Absent: nothing.",
)
DTYPE_HINTS: GraphAttr[Mapping[str | NodeEntry, Any]] = GraphAttr(
    "dtype_hints",
    "{variable name or NodeEntry: dtype}. Provided by the caller (alias dtypes={...}); "
    "read by InferType. Absent: nothing.",
)
GRAD_YS: GraphAttr[list[NodeEntry]] = GraphAttr(
    "grad_ys",
    "Entries to differentiate. Provided by the caller; read by Gradient. Absent: the "
    "graph outputs.",
)
GRAD_XS: GraphAttr[list[NodeEntry]] = GraphAttr(
    "grad_xs",
    "Entries to take gradients with respect to, in output order. Provided by the caller; "
    "required by Gradient.",
)
GRAD_YS_OUT_GRAD: GraphAttr[list[NodeEntry]] = GraphAttr(
    "grad_ys_out_grad",
    "Head gradients, one per grad_ys entry (usually variables the caller made). Provided "
    "by the caller; required by Gradient. Loss heads may leave theirs unused.",
)
GRAD_AGGREGATE_OP: GraphAttr[str] = GraphAttr(
    "grad_aggregate_op",
    "Op that sums any number of gradient contributions, given num_args. Read by Gradient. "
    "Absent: 'add_n'.",
)
GRAD_ZERO_OP: GraphAttr[str] = GraphAttr(
    "grad_zero_op",
    "One-input op giving zeros shaped like its input, for xs and outputs without a "
    "gradient. Read by Gradient. Absent: 'zeros_like'.",
)
EXTERNAL_ENTRY_IDS: GraphAttr[list[int]] = GraphAttr(
    "external_entry_ids",
    "Entry ids whose memory the user owns (never pooled, shared or written in place). "
    "Provided by the caller; read by PlanMemory. Variables and graph outputs are always "
    "external. Absent: none besides those.",
)
KEEP_ENTRY_IDS: GraphAttr[list[int]] = GraphAttr(
    "keep_entry_ids",
    "Entry ids whose values must outlive the graph run (the forward values backward "
    "reads, so that backward can run again): planned like the others, but their blocks "
    "are never reused or written in place after them. Provided by the caller (the "
    "executor); read by PlanMemory. Absent: none.",
)
JSON: GraphAttr[str] = GraphAttr(
    "json",
    "MXNet symbol JSON text. Provided by SaveJSON or by the caller for LoadJSON (which "
    "consumes it).",
)

# -- results of passes ------------------------------------------------------------------------

SHAPE: GraphAttr[list[Shape | None]] = GraphAttr(
    "shape",
    "Shape of every entry, by entry id; None or None dims where unknown. Provided by "
    "InferShape; read by PlanMemory and the executor.",
)
DTYPE: GraphAttr[list[np.dtype[Any] | None]] = GraphAttr(
    "dtype",
    "numpy dtype of every entry, by entry id; None where unknown. Provided by InferType; "
    "read by PlanMemory and the executor.",
)
SHAPE_NUM_UNKNOWN_NODES: GraphAttr[int] = GraphAttr(
    "shape_num_unknown_nodes",
    "How many entries still have an unknown or partial shape after InferShape (NNVM's "
    "name). Provided by InferShape; read by infer_shape / infer_shape_partial.",
)
DTYPE_NUM_UNKNOWN_NODES: GraphAttr[int] = GraphAttr(
    "dtype_num_unknown_nodes",
    "How many entries still have an unknown dtype after InferType. Provided by InferType.",
)
STORAGE_ID: GraphAttr[list[int]] = GraphAttr(
    "storage_id",
    "Storage block of every entry, by entry id; EXTERNAL_STORAGE_ID (-1) for entries the "
    "user owns. Entries with the same id never hold live data at the same time. Provided "
    "by PlanMemory; read by the executor.",
)
STORAGE_INPLACE_INDEX: GraphAttr[list[int]] = GraphAttr(
    "storage_inplace_index",
    "For every entry: the input index of its node whose storage it reuses in place, or "
    "-1. Provided by PlanMemory; read by the executor (kWriteInplace requests).",
)
STORAGE_SIZES: GraphAttr[list[int]] = GraphAttr(
    "storage_sizes",
    "Bytes of every storage block, by storage id. Provided by PlanMemory; read by the "
    "executor to allocate the pool.",
)
STORAGE_OFFSETS: GraphAttr[list[int]] = GraphAttr(
    "storage_offsets",
    "With memory_plan 'arena': the byte offset of every storage block in one buffer of "
    "storage_allocated_bytes; blocks that share bytes have disjoint lifetimes. None "
    "with 'blocks'. Provided by PlanMemory; read by the executor.",
)
MEMORY_PLAN: GraphAttr[str] = GraphAttr(
    "memory_plan",
    "How PlanMemory lays out its blocks: 'blocks' (NNVM's: one buffer per block, the "
    "default) or 'arena' (byte ranges of one buffer, packed by lifetime: passes/_arena.py; "
    "the blocks stay where that takes no fewer bytes). Given by the caller; read by "
    "PlanMemory.",
)
STORAGE_ALLOCATED_BYTES: GraphAttr[int] = GraphAttr(
    "storage_allocated_bytes",
    "What the planned pool allocates: sum(storage_sizes), or the arena's size with "
    "memory_plan 'arena'. Provided by PlanMemory.",
)
STORAGE_NAIVE_BYTES: GraphAttr[int] = GraphAttr(
    "storage_naive_bytes",
    "Bytes one buffer per planned (non-external) entry would take; the baseline for "
    "benchmarks of storage_allocated_bytes. Provided by PlanMemory.",
)
MXNET_VERSION: GraphAttr[int] = GraphAttr(
    "mxnet_version",
    "MXNet version that wrote a JSON file (10901 for 1.9.1). Provided by LoadJSON; written "
    "by SaveJSON (default 10901).",
)

__all__ = [
    "DTYPE",
    "DTYPE_HINTS",
    "DTYPE_INPUTS",
    "DTYPE_NUM_UNKNOWN_NODES",
    "EXTERNAL_ENTRY_IDS",
    "EXTERNAL_STORAGE_ID",
    "GRAD_AGGREGATE_OP",
    "GRAD_XS",
    "GRAD_YS",
    "GRAD_YS_OUT_GRAD",
    "GRAD_ZERO_OP",
    "JSON",
    "KEEP_ENTRY_IDS",
    "MEMORY_PLAN",
    "MXNET_VERSION",
    "SHAPE",
    "SHAPE_HINTS",
    "SHAPE_INPUTS",
    "SHAPE_NUM_UNKNOWN_NODES",
    "STORAGE_ALLOCATED_BYTES",
    "STORAGE_ID",
    "STORAGE_INPLACE_INDEX",
    "STORAGE_NAIVE_BYTES",
    "STORAGE_OFFSETS",
    "STORAGE_SIZES",
    "GraphAttr",
    "GraphAttrs",
]
