"""nansum and nanprod: sum / product over axes with NaN counted as 0 / 1.

The reduction is reduce.py's `reduce_to` ('nansum' / 'nanprod'); the gradient sends dy
to every element that is not NaN (times prod / x for nanprod), as MXNet's nan*_grad.
"""

from __future__ import annotations

from .. import kernel
from ..graph.grad import ElemwiseGradUseInOut
from .reduce import ReduceAxesParam, _backward_in_out, _forward, _register, _register_backward


@kernel.elementwise
def _nansum_grad(x, dy, y):  # 1 where x is a number, 0 where it is NaN
    return dy if x == x else dy * 0


@kernel.elementwise
def _nanprod_grad(x, dy, y):  # prod / x where x is a number
    return dy * y / x if x == x else dy * 0


_AXES = "over the given axes (all by default)"
for _name, _grad, _what in (
    ("nansum", _nansum_grad, "sum, treating NaN as 0,"),
    ("nanprod", _nanprod_grad, "product, treating NaN as 1,"),
):
    _register(
        _name,
        ReduceAxesParam,
        _forward(_name),
        ElemwiseGradUseInOut(f"_backward_{_name}"),
        f"Computes the {_what} of array elements {_AXES}.",
    )
    _register_backward(
        f"_backward_{_name}", ReduceAxesParam, _backward_in_out(lambda attrs, k=_grad: k), 3
    )
