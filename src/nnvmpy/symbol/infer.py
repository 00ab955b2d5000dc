"""Symbol.infer_shape / infer_type: the InferShape and InferType passes in MXNet's form.

Inside the passes an unknown dimension or shape is None. At this API nnvmpy speaks MXNet's
convention, in what it accepts and what it returns: 0 is an unknown dimension and () an
unknown shape; under `nv.util.np_shape()` they are -1 and None (and 0 is a real size).
Types come back as numpy scalar types (np.float32), None where unknown.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

import numpy as np

from ..base import NNVMError, as_dtype
from ..graph import Graph, apply_passes
from ..graph.attrs import DTYPE, DTYPE_NUM_UNKNOWN_NODES, SHAPE, SHAPE_NUM_UNKNOWN_NODES
from ..util import is_np_shape

if TYPE_CHECKING:
    from nnvmpy.symbol.symbol import Symbol


def input_names(graph: Graph) -> tuple[list[str], list[str]]:
    """(list_arguments(), list_auxiliary_states()) of the symbol whose heads are `graph`'s
    outputs, read off the index the passes build anyway: on a large graph each of those
    calls is a walk of its own. (The index finds auxiliary states as Symbol does: the
    variables an op's FMutateInputs names.)"""
    idx = graph.indexed
    return [idx.nodes[n].name for n in idx.arg_nodes], [idx.nodes[n].name for n in idx.aux_nodes]


def _named(
    graph: Graph, args: tuple[Any, ...], kwargs: dict[str, Any], what: str
) -> dict[str, Any]:
    """Positional values follow list_arguments(); keywords name arguments or aux states."""
    arg_names, aux_names = input_names(graph)
    if args and kwargs:
        raise NNVMError(f"{what}: pass inputs either by position or by keyword, not both")
    if len(args) > len(arg_names):
        raise NNVMError(
            f"{what}: got {len(args)} positional inputs for {len(arg_names)} arguments {arg_names}"
        )
    named = {n: v for n, v in zip(arg_names, args) if v is not None}
    valid = {*arg_names, *aux_names}
    for key, value in kwargs.items():
        if key not in valid:
            raise NNVMError(f"{what}: unknown argument {key!r}; inputs are {sorted(valid)}")
        if value is not None:
            named[key] = value
    return named


def _split(graph: Graph, key: Any) -> tuple[list[Any], list[Any], list[Any]]:
    idx = graph.indexed
    values = graph.attrs[key]
    by_name = {idx.nodes[nid].name: values[idx.entry_id(nid, 0)] for nid in idx.input_nodes}
    outs = [values[eid] for eid in idx.output_eids]
    arg_names, aux_names = input_names(graph)
    return [by_name[n] for n in arg_names], outs, [by_name[n] for n in aux_names]


# -- shapes ----------------------------------------------------------------------------------


def shape_from_user(value: Any, what: str) -> tuple[int | None, ...] | None:
    """A user's shape -> the passes' form (None for unknown dims and shapes)."""
    if isinstance(value, int | np.integer) and not isinstance(value, bool):
        value = (int(value),)
    if not isinstance(value, tuple | list) or not all(
        isinstance(d, int | np.integer) and not isinstance(d, bool) for d in value
    ):
        raise NNVMError(f"{what}: a shape must be a tuple of ints, got {value!r:.60}")
    if is_np_shape():  # -1 is unknown, 0 a real (empty) dimension
        return tuple(None if d < 0 else int(d) for d in value)
    if not value:
        return None  # () is MXNet's unknown shape
    return tuple(None if d <= 0 else int(d) for d in value)


def shape_to_user(shape: tuple[int | None, ...] | None) -> tuple[int, ...] | None:
    """The passes' form -> MXNet's: (0 dims, () shape), or (-1, None) under np_shape."""
    unknown_dim = -1 if is_np_shape() else 0
    if shape is None:
        return None if is_np_shape() else ()
    return tuple(unknown_dim if d is None else int(d) for d in shape)


def _run_shapes(
    graph: Graph, args: tuple[Any, ...], kwargs: dict[str, Any], what: str
) -> tuple[Graph, list[Any], list[Any], list[Any]]:
    named = _named(graph, args, kwargs, what)
    shapes = {k: shape_from_user(v, f"{what}: {k!r}") for k, v in named.items()}
    graph = apply_passes(graph, ["InferShape"], shapes=shapes)
    return (graph, *_split(graph, SHAPE))


def infer_shape_raw(graph: Graph, kwargs: dict[str, Any], what: str) -> tuple[Graph, Any, Any]:
    """(the graph with shapes, argument shapes, auxiliary shapes) in the passes' form, for
    binding; `graph` holds the symbol's heads as outputs."""
    shaped, arg, _, aux = _run_shapes(graph, (), kwargs, what)
    return shaped, arg, aux


def infer_shape(
    sym: Symbol, args: tuple[Any, ...], kwargs: dict[str, Any], partial: bool
) -> tuple[Any, Any, Any]:
    what = "infer_shape_partial" if partial else "infer_shape"
    graph, arg, out, aux = _run_shapes(Graph(list(sym._heads)), args, kwargs, what)
    if not partial and graph.attrs[SHAPE_NUM_UNKNOWN_NODES] > 0:
        unknown = [
            f"{n}: {shape_to_user(s)}"
            for n, s in zip(input_names(graph)[0], arg)
            if s is None or None in s
        ]
        warnings.warn(
            "Cannot decide shape for the following arguments (0s in shape means unknown "
            "dimensions). Consider providing them as input:\n\t" + "\n\t".join(unknown[:10]),
            stacklevel=3,
        )
        return None, None, None
    return (
        [shape_to_user(s) for s in arg],
        [shape_to_user(s) for s in out],
        [shape_to_user(s) for s in aux],
    )


# -- types -----------------------------------------------------------------------------------


def infer_type(
    sym: Symbol, args: tuple[Any, ...], kwargs: dict[str, Any], partial: bool = False
) -> tuple[Any, Any, Any]:
    what = "infer_type_partial" if partial else "infer_type"
    graph, arg, out, aux = infer_type_raw(Graph(list(sym._heads)), args, kwargs, what)
    if not partial and graph.attrs[DTYPE_NUM_UNKNOWN_NODES] > 0:
        return None, None, None
    return (
        [dtype_to_user(t) for t in arg],
        [dtype_to_user(t) for t in out],
        [dtype_to_user(t) for t in aux],
    )


def infer_type_raw(
    graph: Graph, args: tuple[Any, ...], kwargs: dict[str, Any], what: str
) -> tuple[Graph, list[Any], list[Any], list[Any]]:
    """(the graph with dtypes, argument, output and auxiliary dtypes) in the passes' form
    (numpy dtypes, None where unknown); `graph` holds the symbol's heads as outputs."""
    dtypes = {}
    for name, value in _named(graph, args, kwargs, what).items():
        try:
            dtypes[name] = as_dtype(value)
        except (TypeError, ValueError, NNVMError) as e:
            raise NNVMError(f"{what}: {name!r} is not a dtype ({value!r:.40}): {e}") from None
    graph = apply_passes(graph, ["InferType"], dtypes=dtypes)
    return (graph, *_split(graph, DTYPE))


def dtype_to_user(dtype: Any) -> Any:
    """A dtype of the passes -> MXNet's form: a numpy scalar type (np.float32), or None."""
    return None if dtype is None else np.dtype(dtype).type
