"""Comparison and logical ops: 1 where the relation holds, 0 elsewhere, in the input's dtype.

Three forms per relation, as in MXNet: two arrays of one shape (`_equal`, ...), an array
and a scalar parameter (`_equal_scalar`, ...), and two arrays that broadcast
(`broadcast_equal`, ...). `NDArray.__lt__` and friends dispatch to them (ndarray/arith.py).
The output is piecewise constant in the inputs, so every gradient is zero (MXNet's
MakeZeroGradNodes). NaN compares unequal to everything, as in IEEE and NumPy.

broadcast_equal / broadcast_greater / broadcast_lesser and _equal_scalar /
_greater_scalar / _lesser_scalar live with their families (broadcast.py,
elemwise_scalar.py); this file adds the rest.
"""

from __future__ import annotations

from .. import kernel
from ..graph.grad import make_zero_grad_nodes
from ..registry import register_op
from ._family import register_binary, register_scalar
from .broadcast import register_broadcast_binary
from .elemwise_scalar import _equal, _greater, _lesser

elementwise = kernel.elementwise


@elementwise
def _not_equal(x, y):
    return 1 if x != y else 0


@elementwise
def _greater_equal(x, y):
    return 1 if x >= y else 0


@elementwise
def _lesser_equal(x, y):
    return 1 if x <= y else 0


@elementwise
def _logical_and(x, y):
    return 1 if (x != 0) and (y != 0) else 0


@elementwise
def _logical_or(x, y):
    return 1 if (x != 0) or (y != 0) else 0


@elementwise
def _logical_xor(x, y):
    return 1 if (x != 0) != (y != 0) else 0


# relation, kernel (x, y) -> 0/1, what it tests; one row registers all three forms
_RELATIONS = [
    ("equal", _equal, "lhs == rhs"),
    ("not_equal", _not_equal, "lhs != rhs"),
    ("greater", _greater, "lhs > rhs"),
    ("greater_equal", _greater_equal, "lhs >= rhs"),
    ("lesser", _lesser, "lhs < rhs"),
    ("lesser_equal", _lesser_equal, "lhs <= rhs"),
    ("logical_and", _logical_and, "lhs and rhs are both non-zero"),
    ("logical_or", _logical_or, "lhs or rhs is non-zero"),
    ("logical_xor", _logical_xor, "exactly one of lhs and rhs is non-zero"),
]
# the forms broadcast.py / elemwise_scalar.py already register
_REGISTERED = {
    "broadcast_equal",
    "broadcast_greater",
    "broadcast_lesser",
    "_equal_scalar",
    "_greater_scalar",
    "_lesser_scalar",
}


def legacy_names(rel: str) -> tuple[str, str]:
    """MXNet's older spellings of `_<rel>` and `_<rel>_scalar`, which symbol files written
    by old MXNet versions still use: `_Greater_Equal` and `_GreaterEqualScalar`."""
    words = [w.capitalize() for w in rel.split("_")]
    return "_" + "_".join(words), "_" + "".join(words) + "Scalar"


for _rel, _fn, _what in _RELATIONS:
    _doc = f"Returns 1 where {_what} and 0 elsewhere, element-wise, in the input's dtype."
    _legacy, _legacy_scalar = legacy_names(_rel)
    register_binary(f"_{_rel}", _fn, _doc + " Both inputs have one shape.", make_zero_grad_nodes)
    if f"_{_rel}_scalar" not in _REGISTERED:
        register_scalar(
            f"_{_rel}_scalar",
            _fn,
            _doc.replace("rhs", "scalar") + " rhs is the scalar parameter.",
            make_zero_grad_nodes,
        )
    register_op(f"_{_rel}").add_alias(_legacy)
    register_op(f"_{_rel}_scalar").add_alias(_legacy_scalar)
    if f"broadcast_{_rel}" not in _REGISTERED:
        register_broadcast_binary(f"broadcast_{_rel}", _fn, _doc, make_zero_grad_nodes)
