"""_contrib_allclose (nd.contrib.allclose): 1 if every a_i is close to b_i, else 0.

As MXNet: close means |a - b| <= atol + rtol * |b| (NumPy's isclose), equal infinities
are close, and two NaNs are close when equal_nan; the output is a 0-d uint8 array. No
gradient (the output is piecewise constant).

One body (nv.kernel.parallel_for) per device: the flag starts at 1 and every element that
is not close writes 0 to it (the same value from any thread, so no atomics are needed).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import kernel
from ..attrs import (
    FCompute_cpu,
    FCompute_gpu,
    FGradient,
    FInferShape,
    FInferType,
    FListInputNames,
    FResourceRequest,
)
from ..base import InferError, Shape
from ..graph.grad import make_zero_grad_nodes
from ..infer import shape_assign, shape_str, type_assign
from ..kernel.launch import ADD, NULL, flat, req_code
from ..param import Parameter, field
from ..registry import NodeAttrs, register_op
from ..resource import ResourceRequest
from .elemwise_unary import _identity


class AllCloseParam(Parameter):
    rtol = field(float, default=1e-05, describe="Relative tolerance.")
    atol = field(float, default=1e-08, describe="Absolute tolerance.")
    equal_nan = field(
        bool,
        default=True,
        describe="Whether to compare NaN's as equal. If True, NaN's in A will be considered "
        "equal to NaN's in B in the output array.",
    )


@kernel.parallel_for
def _set_one(i, flag):
    flag[i] = 1


@kernel.parallel_for
def _check_item(i, flag, a, b, rtol, atol, equal_nan):
    x = a[i]
    y = b[i]
    if x != x or y != y:
        ok = equal_nan and x != x and y != y
    else:
        ok = x == y or abs(x - y) <= atol + rtol * abs(y)
    if not ok:
        flag[0] = 0


def _infer_shape(
    attrs: NodeAttrs, in_shapes: list[Shape | None], out_shapes: list[Shape | None]
) -> bool:
    a, b = in_shapes
    if a is not None and b is not None and None not in a and None not in b and a != b:
        raise InferError(
            f"_contrib_allclose: inputs 'a' {shape_str(a)} and 'b' {shape_str(b)} must have "
            "the same shape"
        )
    if b is not None:
        shape_assign(in_shapes, 0, b, "_contrib_allclose: input 'a'")
    if a is not None:
        shape_assign(in_shapes, 1, a, "_contrib_allclose: input 'b'")
    shape_assign(out_shapes, 0, (), "_contrib_allclose: output 'output'")
    return in_shapes[0] is not None and None not in in_shapes[0]


def _infer_type(attrs: NodeAttrs, in_types: list[Any], out_types: list[Any]) -> bool:
    type_assign(out_types, 0, np.uint8, "_contrib_allclose: output 'output'")
    return in_types[0] is not None and in_types[1] is not None


def _compute(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    mode = req_code("_contrib_allclose", req[0])
    if mode == NULL:
        return
    a, b = inputs
    p = attrs.parsed
    out = outputs[0]
    flag = ctx.requested[0].get_space((1,), np.uint8) if mode == ADD else out.reshape(1)
    if isinstance(a, np.ndarray):  # numba cannot compute in float16 on the cpu
        a = a.astype(np.float32) if a.dtype == np.float16 else a
        b = b.astype(np.float32) if b.dtype == np.float16 else b
    _set_one.launch(ctx, 1, flag)
    _check_item.launch(ctx, a.size, flag, flat(a), flat(b), p.rtol, p.atol, p.equal_nan)
    if mode == ADD:
        _identity.launch(ctx, out.reshape(1), req[0], flag)


def _input_names(attrs: NodeAttrs) -> list[str]:
    return ["a", "b"]


def _temp_space(attrs: NodeAttrs) -> list[ResourceRequest]:
    return [ResourceRequest.kTempSpace]


(
    register_op("_contrib_allclose")
    .describe(
        "Compares all elements of two arrays: 1 if |a - b| <= atol + rtol * |b| everywhere "
        "(NaN equal to NaN with equal_nan), else 0; a 0-d uint8 array."
    )
    .set_attr_parser(AllCloseParam)
    .set_num_inputs(2)
    .set_num_outputs(1)
    .set_attr(FListInputNames, _input_names)
    .set_attr(FInferShape, _infer_shape)
    .set_attr(FInferType, _infer_type)
    .set_attr(FResourceRequest, _temp_space)
    .set_attr(FCompute_cpu, _compute)
    .set_attr(FCompute_gpu, _compute)
    .set_attr(FGradient, make_zero_grad_nodes)
    .add_argument("a", "NDArray-or-Symbol", "Input array a")
    .add_argument("b", "NDArray-or-Symbol", "Input array b")
    .add_arguments(AllCloseParam.fields())
)
