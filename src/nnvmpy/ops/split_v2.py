"""_split_v2: cut an array along an axis at given indices (NumPy's split), and its backward.

    outputs = [x[indices[0]:indices[1]], x[indices[1]:indices[2]], ..., x[indices[-1]:]]

along `axis`; with `sections` > 0 the axis is cut into that many equal parts instead.
An index past the axis gives an empty part. squeeze_axis drops the axis from parts of
length 1. The gradient joins the output gradients back (Concat's band copy), so parts
share the (outer, axis, inner) view with concat.py. nd.split_v2 / sym.split_v2 (the
functions MXNet users call) turn `indices_or_sections` into these parameters.
"""

from __future__ import annotations

from typing import Any

from ..attrs import (
    FCompute_cpu,
    FCompute_gpu,
    FGradient,
    FInferShape,
    FInferType,
    TIsBackward,
)
from ..base import InferError
from ..graph.grad import ElemwiseGradUseNone
from ..infer import elemwise_type, shape_assign, shape_is_known, shape_str
from ..param import Parameter, field
from ..param import Shape as ShapeField
from ..registry import NodeAttrs, register_op
from .concat import _bands
from .shape import normalize_axis


class SplitParam(Parameter):
    indices = field(ShapeField, describe="Indices of splits. The elements should denote the "
                    "boundaries of at which split is performed along the `axis`.")  # fmt: skip
    axis = field(int, default=1, describe="Axis along which to split.")
    squeeze_axis = field(
        bool,
        default=False,
        describe="If true, Removes the axis with length 1 from the shapes of the output "
        "arrays. **Note** that setting `squeeze_axis` to ``true`` removes axis with length 1 "
        "only along the `axis` which it is split. Also `squeeze_axis` can be set to ``true`` "
        "only if ``input.shape[axis] == num_outputs``.",
    )
    sections = field(int, default=0, lower_bound=0, describe="Number of sections if equally split. "
                     "Default to 0 which means split by indices.")  # fmt: skip


def _num_outputs(attrs: NodeAttrs) -> int:
    p = attrs.parsed
    return p.sections if p.sections > 0 else len(p.indices)


def section_bounds(p: Any, dim: int) -> list[tuple[int, int]]:
    """(begin, end) of each part along an axis of length dim."""
    if p.sections > 0:
        if dim % p.sections:
            raise InferError(
                f"_split_v2: axis of length {dim} cannot be split into {p.sections} equal sections"
            )
        step = dim // p.sections
        return [(i * step, (i + 1) * step) for i in range(p.sections)]
    if not p.indices:
        raise InferError("_split_v2: parameter 'indices' is empty; give at least (0,)")
    starts = list(p.indices)
    if starts[0] != 0 or any(b > a for a, b in zip(starts[1:], starts)):
        raise InferError(
            f"_split_v2: parameter 'indices' {tuple(starts)} must be sorted and start at 0 "
            "(nd.split_v2 prepends the 0)"
        )
    ends = [*starts[1:], dim]
    return [(min(b, dim), min(max(e, b), dim)) for b, e in zip(starts, ends)]


def _split_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    p, dshape = attrs.parsed, in_shapes[0]
    if dshape is None:
        return False
    axis = normalize_axis("_split_v2", "axis", p.axis, len(dshape))
    if dshape[axis] is None:
        return False
    for i, (b, e) in enumerate(section_bounds(p, dshape[axis])):
        if p.squeeze_axis:
            if e - b != 1:
                raise InferError(
                    f"_split_v2: squeeze_axis needs parts of length 1 along axis {axis}, but "
                    f"part {i} of input 'data' {shape_str(dshape)} has {e - b}"
                )
            part = (*dshape[:axis], *dshape[axis + 1 :])
        else:
            part = (*dshape[:axis], e - b, *dshape[axis + 1 :])
        shape_assign(out_shapes, i, part, f"_split_v2: output {i}")
    return shape_is_known(dshape)


def _axis(attrs: NodeAttrs, ndim: int) -> int:
    return normalize_axis("_split_v2", "axis", attrs.parsed.axis, ndim)


def _split_forward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    # the parts tile the axis from 0 in order (section_bounds checks it), as _bands copies
    x = inputs[0]
    _bands(ctx, req, x, outputs, _axis(attrs, x.ndim), join=False)


def _split_backward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    dx = outputs[0]
    _bands(ctx, req, dx, inputs, _axis(attrs, dx.ndim), join=True)


(
    register_op("_split_v2")
    .describe(
        "Splits an array along `axis` at `indices` (the start of each part), or into "
        "`sections` equal parts, as numpy.split. Parts past the end are empty."
    )
    .set_attr_parser(SplitParam)
    .set_num_inputs(1)
    .set_num_outputs(_num_outputs)
    .set_attr(FInferShape, _split_shape)
    .set_attr(FInferType, elemwise_type(1, -1))
    .set_attr(FCompute_cpu, _split_forward)
    .set_attr(FCompute_gpu, _split_forward)
    .set_attr(FGradient, ElemwiseGradUseNone("_split_v2_backward"))
    .add_argument("data", "NDArray-or-Symbol", "The input")
    .add_arguments(SplitParam.fields())
)

(  # inputs: one gradient per part -> the input's gradient; its shape from the forward node
    register_op("_split_v2_backward")
    .set_attr_parser(SplitParam)
    .set_num_inputs(_num_outputs)
    .set_num_outputs(1)
    .set_attr(TIsBackward, True)
    .set_attr(FCompute_cpu, _split_backward)
    .set_attr(FCompute_gpu, _split_backward)
)
