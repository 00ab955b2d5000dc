"""InferShape: the shape of every entry, from variable shapes and each op's FInferShape.

Shapes are tuples with None for an unknown dimension; an unknown shape is None. Sources
for variables, merged (a disagreement is an InferError): `shape_inputs` (ordered like
indexed.input_nodes), `shape_hints` / `apply_passes(..., shapes={name: shape})`, and,
only when neither gave a shape (as in NNVM), the variable's `__shape__` attribute, which
MXNet writes into symbol JSON as "(64, 0, 7, 7)" (0 marks an unknown dimension there).

>>> from nnvmpy.graph import Graph, Node, NodeEntry, apply_passes
>>> x = Node.variable("x", {"__shape__": "(2, 0)"})
>>> g = apply_passes(Graph([NodeEntry(x)]), "InferShape")
>>> g.attrs["shape"], g.attrs["shape_num_unknown_nodes"]
([(2, None)], 1)
"""

from __future__ import annotations

import re

from ..attrs import FInferShape, FListInputNames, TIsBackward
from ..base import NNVMError, Shape
from ..graph.attrs import SHAPE, SHAPE_HINTS, SHAPE_INPUTS, SHAPE_NUM_UNKNOWN_NODES
from ..graph.graph import Graph
from ..graph.node import Node
from ..graph.pass_registry import register_pass
from ..infer import merge_shapes, partial_shape, shape_is_known, shape_str
from ..util import is_np_shape
from ._fixpoint import InferSpec, run_fixpoint

#: the variable attribute MXNet stores a declared shape under.
SHAPE_ATTR = "__shape__"

_DIM = re.compile(r"^\s*(-?\d+)L?\s*$")  # "3", "3L" (Python 2 era files), "-1"


def parse_shape_attr(text: str, what: str = "shape") -> Shape | None:
    """MXNet's TShape text "(2, 3)", "[2,3]" or "(3,)" -> (2, 3); 0 or -1 dims -> None.

    "()" is MXNet's unknown shape (ndim 0 meant "unknown" before numpy semantics).
    """
    body = text.strip()
    if len(body) >= 2 and body[0] in "([" and body[-1] in ")]":
        body = body[1:-1]
    dims = [d for d in body.split(",") if d.strip()]
    if not dims:
        return None
    parsed = []
    for d in dims:
        match = _DIM.match(d)
        if match is None:
            raise NNVMError(f"invalid {what} {text!r}: expected a tuple of ints like (2, 3)")
        parsed.append(int(match.group(1)))
    return tuple(None if d <= 0 else d for d in parsed)


def _normalize(value: object) -> Shape | None:
    if value is None or (
        isinstance(value, tuple) and all(d is None or (type(d) is int and d > 0) for d in value)
    ):
        return value
    if isinstance(value, str):
        return parse_shape_attr(value)
    if is_np_shape() and isinstance(value, tuple | list):  # 0 a real (empty) dim, -1 unknown
        return tuple(None if d is None or d < 0 else int(d) for d in value)
    return partial_shape(value)  # type: ignore[arg-type]


def _var_shape(node: Node) -> Shape | None:
    text = node.attrs.dict.get(SHAPE_ATTR)
    return None if text is None else parse_shape_attr(text, f"{SHAPE_ATTR} of '{node.name}'")


SHAPE_SPEC = InferSpec(
    pass_name="InferShape",
    what="shape",
    result=SHAPE,
    inputs=SHAPE_INPUTS,
    hints=SHAPE_HINTS,
    num_unknown=SHAPE_NUM_UNKNOWN_NODES,
    op_key=FInferShape,
    default_rule=None,
    normalize=_normalize,
    var_value=_var_shape,
    merge=merge_shapes,
    is_known=shape_is_known,
    to_str=shape_str,
)


@register_pass(
    "InferShape",
    provides=(SHAPE, SHAPE_NUM_UNKNOWN_NODES),
    op_attrs=(FInferShape, TIsBackward, FListInputNames),
)
def infer_shape(graph: Graph) -> Graph:
    """Fill graph.attrs["shape"] by entry id; ops without FInferShape leave outputs unknown."""
    return run_fixpoint(graph, SHAPE_SPEC)


__all__ = ["SHAPE_ATTR", "SHAPE_SPEC", "infer_shape", "parse_shape_attr"]
