"""Symbol.infer_shape / infer_type: the InferShape and InferType passes, MXNet's return form."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..base import NNVMError
from ..graph import Graph, apply_passes
from ..graph.attrs import DTYPE, SHAPE
from ..infer import partial_shape, shape_is_known

if TYPE_CHECKING:
    from .symbol import Symbol


def _named(sym: Symbol, args: tuple[Any, ...], kwargs: dict[str, Any], what: str) -> dict[str, Any]:
    """Positional values follow list_arguments(); keywords name arguments or aux states."""
    arg_names = sym.list_arguments()
    if args and kwargs:
        raise NNVMError(f"{what}: pass inputs either by position or by keyword, not both")
    if len(args) > len(arg_names):
        raise NNVMError(
            f"{what}: got {len(args)} positional inputs for {len(arg_names)} arguments {arg_names}"
        )
    named = {n: v for n, v in zip(arg_names, args) if v is not None}
    valid = set(sym.list_inputs())
    for key, value in kwargs.items():
        if key not in valid:
            raise NNVMError(f"{what}: unknown argument {key!r}; inputs are {sorted(valid)}")
        if value is not None:
            named[key] = value
    return named


def _split(sym: Symbol, graph: Graph, key: str) -> tuple[list[Any], list[Any], list[Any]]:
    idx = graph.indexed
    values = graph.attrs[key]
    by_name = {idx.nodes[nid].name: values[idx.entry_id(nid, 0)] for nid in idx.input_nodes}
    outs = [values[eid] for eid in idx.output_eids]
    return (
        [by_name[n] for n in sym.list_arguments()],
        outs,
        [by_name[n] for n in sym.list_auxiliary_states()],
    )


def infer_shape(
    sym: Symbol, args: tuple[Any, ...], kwargs: dict[str, Any], partial: bool
) -> tuple[Any, Any, Any]:
    what = "infer_shape_partial" if partial else "infer_shape"
    shapes = {k: partial_shape(v) for k, v in _named(sym, args, kwargs, what).items()}
    graph = apply_passes(Graph(list(sym._heads)), ["InferShape"], shapes=shapes)
    arg, out, aux = _split(sym, graph, SHAPE)
    if not partial and not all(shape_is_known(s) for s in [*arg, *out, *aux]):
        return None, None, None
    return arg, out, aux


def infer_type(
    sym: Symbol, args: tuple[Any, ...], kwargs: dict[str, Any], partial: bool = False
) -> tuple[Any, Any, Any]:
    what = "infer_type_partial" if partial else "infer_type"
    dtypes = _named(sym, args, kwargs, what)
    graph = apply_passes(Graph(list(sym._heads)), ["InferType"], dtypes=dtypes)
    arg, out, aux = _split(sym, graph, DTYPE)
    if not partial and any(t is None for t in [*arg, *out, *aux]):
        return None, None, None
    return arg, out, aux
