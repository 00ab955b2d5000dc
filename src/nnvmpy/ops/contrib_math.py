"""Element-wise contrib ops, served as nd.contrib.X / sym.contrib.X (`_contrib_X`).

- isnan / isinf / isfinite: 1 or 0 in the input's dtype (MXNet has them as Python
  functions in nd.contrib; registered ops here, so sym.contrib has them too). Zero
  gradient.
- round_ste / sign_ste: round (half away from zero) and sign, with the straight-through
  estimator: the gradient passes dy unchanged.
- gradientmultiplier: the identity forward; the gradient is dy * scalar.
- div_sqrt_dim: x / sqrt(x.shape[-1]) (scaled dot-product attention); linear, so its
  gradient is the same op applied to dy.
- quadratic: a*x^2 + b*x + c, MXNet's contrib name for the tutorial op (ops/quadratic.py).
"""

from __future__ import annotations

import math
from typing import Any

from .. import kernel
from ..attrs import FGradient
from ..graph.grad import ElemwiseGradUseNone, make_zero_grad_nodes
from ..registry import NodeAttrs
from . import quadratic as _quadratic  # noqa: F401 - registered before its alias below
from ._family import ScalarParam, _elemwise, register_unary
from .aliases import register_copy
from .elemwise_scalar import _div as _div_scalar
from .elemwise_unary import _identity, _round, _sign

elementwise = kernel.elementwise
INF = math.inf


@elementwise
def _isnan(x):
    return 1 if x != x else 0


@elementwise
def _isinf(x):
    return 1 if x == INF or x == -INF else 0


@elementwise
def _isfinite(x):
    return 1 if x == x and x != INF and x != -INF else 0


for _name, _fn, _what in (
    ("isnan", _isnan, "NaN"),
    ("isinf", _isinf, "+inf or -inf"),
    ("isfinite", _isfinite, "neither NaN nor infinite"),
):
    register_unary(
        f"_contrib_{_name}",
        _fn,
        f"1 where x is {_what}, else 0, in x's dtype.",
        make_zero_grad_nodes,
    )

register_unary(
    "_contrib_round_ste",
    _round,
    "Round half away from zero, with a straight-through gradient (dy passes unchanged).",
    ElemwiseGradUseNone("_copy"),
)
register_unary(
    "_contrib_sign_ste",
    _sign,
    "Sign of x, with a straight-through gradient (dy passes unchanged).",
    ElemwiseGradUseNone("_copy"),
)


def _identity_compute(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    _identity.launch(ctx, outputs[0], req[0], inputs[0])


(
    _elemwise(
        "_contrib_gradientmultiplier",
        1,
        1,
        _identity_compute,
        ["data"],
        "The identity in the forward pass; multiplies the gradient by `scalar` in the "
        "backward pass (e.g. -1 for a gradient reversal layer).",
    )
    .set_attr_parser(ScalarParam)
    .add_arguments(ScalarParam.fields())
    .set_attr(FGradient, ElemwiseGradUseNone("_mul_scalar"))
)


def _div_sqrt_dim_compute(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    x = inputs[0]
    shape = tuple(x.shape)  # the CUDA simulator's shapes do not index from the end
    last = shape[-1] if shape else 1
    _div_scalar.launch(ctx, outputs[0], req[0], x, math.sqrt(last))


_elemwise(
    "_contrib_div_sqrt_dim",
    1,
    1,
    _div_sqrt_dim_compute,
    ["data"],
    "Rescale the input by the square root of its last dimension: x / sqrt(x.shape[-1]).",
).set_attr(FGradient, ElemwiseGradUseNone("_contrib_div_sqrt_dim"))

register_copy("_contrib_quadratic", "quadratic")
