"""Flat indices and multi-indices: _ravel_multi_index and _unravel_index (and their aliases).

    ravel_multi_index(data, shape)   data (ndim, ...) of coordinates -> flat indices (...)
                                     flat = ((c0 * s1 + c1) * s2 + c2) ...
    unravel_index(data, shape)       flat indices (...) -> coordinates (ndim, ...)

shape[0] may be -1 (unknown): it does not enter the flat index, and unravel_index gives
the remaining quotient as the first coordinate. Results have the input's dtype (so the
flat index range is float32's 2^24 for float32 inputs, as in MXNet). No gradient.
"""

from __future__ import annotations

from typing import Any

from .. import kernel
from ..attrs import (
    FCompute_cpu,
    FCompute_gpu,
    FGradient,
    FInferShape,
    FInferType,
    FListInputNames,
)
from ..base import InferError
from ..graph.grad import make_zero_grad_nodes
from ..infer import elemwise_type, shape_assign, shape_is_known, shape_str
from ..kernel.launch import NULL, flat, req_code
from ..param import Parameter, field
from ..param import Shape as ShapeField
from ..registry import NodeAttrs, register_op
from ._index_kernels import device_ints, half_as_float32


class RavelParam(Parameter):
    shape = field(
        ShapeField,
        default=(),
        describe="Shape of the array into which the multi-indices apply.",
    )


@kernel.parallel_for
def _ravel(i, out, data, shape, ndim, n, mode):
    # out[i] = sum_a data[a, i] * prod(shape[a+1:])
    v = 0
    for a in range(ndim):
        v = v * shape[a] + int(data[a * n + i])
    if mode == 2:
        out[i] += v
    else:
        out[i] = v


@kernel.parallel_for
def _unravel(i, out, data, shape, ndim, n, mode):
    # out[a, i] = (data[i] // prod(shape[a+1:])) % shape[a]; out[0, i] the rest
    v = int(data[i])
    for a in range(ndim - 1, -1, -1):
        c = v
        if a > 0:
            q = v // shape[a]
            c = v - q * shape[a]
            v = q
        if mode == 2:
            out[a * n + i] += c
        else:
            out[a * n + i] = c


def _shape(op: str, attrs: NodeAttrs) -> tuple[int, ...]:
    shape = tuple(attrs.parsed.shape)
    if not shape or any(d < 1 for d in shape[1:]) or shape[0] == 0 or shape[0] < -1:
        raise InferError(
            f"{op}: parameter 'shape' must be a non-empty shape of positive sizes (the first "
            f"may be -1), got {shape_str(shape)}"
        )
    return shape


def _ravel_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    """data (ndim, ...) -> out (...), and back."""
    op = attrs.op.name if attrs.op is not None else "_ravel_multi_index"
    ndim = len(_shape(op, attrs))
    data = in_shapes[0]
    if data is not None:
        if not data or data[0] not in (None, ndim):
            raise InferError(
                f"{op}: input 'data' has shape {shape_str(data)} but its first dimension must "
                f"be len(shape)={ndim}"
            )
        shape_assign(out_shapes, 0, tuple(data[1:]), f"{op}: output")
    if out_shapes[0] is not None:
        shape_assign(in_shapes, 0, (ndim, *out_shapes[0]), f"{op}: input 'data'")
    return shape_is_known(in_shapes[0])


def _unravel_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    """data (...) -> out (ndim, ...), and back."""
    op = attrs.op.name if attrs.op is not None else "_unravel_index"
    ndim = len(_shape(op, attrs))
    if in_shapes[0] is not None:
        shape_assign(out_shapes, 0, (ndim, *in_shapes[0]), f"{op}: output")
    out = out_shapes[0]
    if out is not None:
        if not out or out[0] not in (None, ndim):
            raise InferError(
                f"{op}: output has shape {shape_str(out)} but its first dimension must be "
                f"len(shape)={ndim}"
            )
        shape_assign(in_shapes, 0, tuple(out[1:]), f"{op}: input 'data'")
    return shape_is_known(in_shapes[0])


def _compute(body: Any, name: str, rows_of: Any) -> Any:
    def compute(
        attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
    ) -> None:
        op = attrs.op.name if attrs.op is not None else name
        (data,), out = inputs, outputs[0]
        mode = req_code(op, req[0])
        if mode == NULL or out.size == 0:
            return
        shape = _shape(op, attrs)
        n = rows_of(data, out)
        with half_as_float32(ctx, [out], [mode], [data]) as ([o], [d]):
            args = (flat(o), flat(d), device_ints(ctx, shape), len(shape), n, mode)
            body.launch(ctx, n, *args)

    return compute


_RAVEL_DOC = (
    "Converts a batch of index arrays into an array of flat indices. The operator follows "
    "numpy conventions so a single multi index is given by a column of the input matrix. "
    "The leading dimension may be left unspecified by using -1 as placeholder.\n\n"
    "Examples::\n\n"
    "    A = [[3, 6, 6], [4, 5, 1]]\n"
    "    ravel(A, shape=(7, 6)) = [22, 41, 37]\n"
    "    ravel(A, shape=(-1, 6)) = [22, 41, 37]"
)
_UNRAVEL_DOC = (
    "Converts an array of flat indices into a batch of index arrays. The operator follows "
    "numpy conventions so a single multi index is given by a column of the output matrix. "
    "The leading dimension may be left unspecified by using -1 as placeholder.\n\n"
    "Examples::\n\n"
    "    A = [22, 41, 37]\n"
    "    unravel(A, shape=(7, 6)) = [[3, 6, 6], [4, 5, 1]]\n"
    "    unravel(A, shape=(-1, 6)) = [[3, 6, 6], [4, 5, 1]]"
)

for _name, _doc, _infer, _fn in (
    ("_ravel_multi_index", _RAVEL_DOC, _ravel_shape, _compute(
        _ravel, "_ravel_multi_index", lambda data, out: int(out.size))),
    ("_unravel_index", _UNRAVEL_DOC, _unravel_shape, _compute(
        _unravel, "_unravel_index", lambda data, out: int(data.size))),
):  # fmt: skip
    (
        register_op(_name)
        .describe(_doc)
        .set_attr_parser(RavelParam)
        .set_num_inputs(1)
        .set_num_outputs(1)
        .set_attr(FListInputNames, lambda attrs: ["data"])
        .set_attr(FInferShape, _infer)
        .set_attr(FInferType, elemwise_type(1, 1))
        .set_attr(FCompute_cpu, _fn)
        .set_attr(FCompute_gpu, _fn)
        .set_attr(FGradient, make_zero_grad_nodes)
        .add_argument("data", "NDArray-or-Symbol", "Batch of multi-indices")
        .add_arguments(RavelParam.fields())
    )
    register_op(_name).add_alias(_name[1:])  # MXNet's public name
