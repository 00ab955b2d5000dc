"""cumsum: the cumulative sum along an axis (MXNet 1.9's `cumsum`, numpy-style).

`axis=None` sums over the flattened array (a 1-d output); `dtype` sets the output type
(the input's by default). The gradient is the reversed cumulative sum of dy along the
same axis: dx_k = sum_{j >= k} dy_j.

One kernel body (nv.kernel.parallel_for) serves both devices: work item i runs along one
line of the (outer, n, inner) view, accumulating in float64 (int64 for integer outputs
from integer inputs). On a GPU, lines near the last axis (inner < 32) of 32 elements or
more are scanned in parallel instead, by a block each or by several blocks each when
they are too few to fill the device; axis=None is one such line. Farther in, lines too
few to fill the device are cut into slices of a thread each (_cumsum_cuda.py).
"""

from __future__ import annotations

import math
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
    TIsBackward,
)
from ..base import InferError, Shape
from ..graph.grad import ElemwiseGradUseNone
from ..infer import shape_assign, shape_is_known, shape_str, type_assign
from ..kernel.launch import ADD, NULL, flat, is_gpu, req_code, split_axis
from ..param import Parameter, field
from ..registry import NodeAttrs, register_op

_DTYPES = ["float16", "float32", "float64", "int32", "int64", "int8"]


class CumsumParam(Parameter):
    axis = field(
        int,
        default=None,
        describe="Axis along which the cumulative sum is computed. The default (None) is "
        "to compute the cumsum over the flattened array.",
    )
    dtype = field(
        str,
        default=None,
        enum=_DTYPES,
        describe="Type of the returned array and of the accumulator in which the elements "
        "are summed. If dtype is not specified, it defaults to the dtype of a.",
    )


@kernel.parallel_for
def _scan_line(i, out, x, n, inner, reverse, zero, mode):
    """out along line i = running sum of x (from the end when reverse)."""
    o = i // inner
    base = o * n * inner + (i - o * inner)
    acc = zero
    for t in range(n):
        k = n - 1 - t if reverse else t
        at = base + k * inner
        acc += x[at]
        if mode == ADD:
            out[at] += acc
        else:
            out[at] = acc


def _line_view(name: str, shape: tuple[int, ...], axis: int | None) -> tuple[int, int, int]:
    if axis is None:
        return 1, int(np.prod(shape, dtype=np.int64)), 1
    ndim = len(shape)
    if not -ndim <= axis < ndim:
        raise InferError(
            f"{name}: axis {axis} is out of range for input 'a' of shape {shape_str(shape)} "
            f"(expected -{ndim} <= axis < {ndim})"
        )
    return split_axis(shape, axis % ndim)


def scan(name: str, ctx: Any, out: Any, req: Any, x: Any, axis: int | None, reverse: bool) -> None:
    """out (+)= cumulative sum of x along axis (x's shape); the kernel of both ops."""
    mode = req_code(name, req)
    if mode == NULL or x.size == 0:
        return
    outer, n, inner = _line_view(name, tuple(x.shape), axis)
    if is_gpu(ctx):
        from nnvmpy.ops._cumsum_cuda import scan_gpu

        if scan_gpu(ctx, name, out, x, (outer, n, inner), reverse, mode):
            return
    on_cpu = isinstance(out, np.ndarray)
    target = out
    if on_cpu and out.dtype == np.float16:  # numba cannot compute in float16 on the cpu
        target = out.astype(np.float32) if mode == ADD else np.empty(out.shape, np.float32)
    if on_cpu and x.dtype == np.float16:
        x = x.astype(np.float32)
    # typed zeros: the same types as 0.0 / 0 to numba, but the simulator runs NumPy, where
    # a Python float + float32 stays float32 (it summed a float32 output in float32)
    zero = np.float64(0.0) if np.dtype(target.dtype).kind == "f" else np.int64(0)
    kernel_args = (flat(target), flat(x), n, inner, reverse, zero, mode)
    _scan_line.launch(ctx, outer * inner, *kernel_args, work=x.size)
    if target is not out:
        np.copyto(out, target, casting="unsafe")


def _infer_shape(
    attrs: NodeAttrs, in_shapes: list[Shape | None], out_shapes: list[Shape | None]
) -> bool:
    name, axis = attrs.op.name, attrs.parsed.axis  # type: ignore[union-attr]
    src = in_shapes[0]
    if src is None:
        return False
    if axis is None:
        if not shape_is_known(src):
            return False
        out: Shape = (math.prod(d or 0 for d in src),)
    else:
        _line_view(name, tuple(d or 1 for d in src), axis)  # checks the axis
        out = tuple(src)
    shape_assign(out_shapes, 0, out, f"{name}: output 'output'")
    if axis is not None:
        shape_assign(in_shapes, 0, out_shapes[0], f"{name}: input 'a'")
    return shape_is_known(in_shapes[0]) and shape_is_known(out_shapes[0])


def _infer_type(attrs: NodeAttrs, in_types: list[Any], out_types: list[Any]) -> bool:
    name, dtype = attrs.op.name, attrs.parsed.dtype  # type: ignore[union-attr]
    if dtype is not None:
        type_assign(out_types, 0, np.dtype(dtype), f"{name}: output 'output'")
    elif in_types[0] is not None:
        type_assign(out_types, 0, in_types[0], f"{name}: output 'output'")
    elif out_types[0] is not None:
        type_assign(in_types, 0, out_types[0], f"{name}: input 'a'")
    return in_types[0] is not None and out_types[0] is not None


def _input_names(attrs: NodeAttrs) -> list[str]:
    return ["a"]


def _forward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    scan("cumsum", ctx, outputs[0], req[0], inputs[0], attrs.parsed.axis, False)


def _backward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    dx = outputs[0]  # dy has dx's size: flattened when axis is None
    dy = inputs[0].reshape(dx.shape)
    scan("_backward_cumsum", ctx, dx, req[0], dy, attrs.parsed.axis, True)


(
    register_op("cumsum")
    .add_alias("_np_cumsum")  # the name MXNet 1.9.1 registers it under
    .describe(
        "Return the cumulative sum of the elements along a given axis (the flattened array "
        "when axis is None)."
    )
    .set_attr_parser(CumsumParam)
    .set_num_inputs(1)
    .set_num_outputs(1)
    .set_attr(FListInputNames, _input_names)
    .set_attr(FInferShape, _infer_shape)
    .set_attr(FInferType, _infer_type)
    .set_attr(FCompute_cpu, _forward)
    .set_attr(FCompute_gpu, _forward)
    .set_attr(FGradient, ElemwiseGradUseNone("_backward_cumsum"))
    .add_argument("a", "NDArray-or-Symbol", "Input ndarray")
    .add_arguments(CumsumParam.fields())
)
(
    register_op("_backward_cumsum")
    .set_attr_parser(CumsumParam)
    .set_num_inputs(1)
    .set_num_outputs(1)
    .set_attr(TIsBackward, True)
    .set_attr(FCompute_cpu, _backward)
    .set_attr(FCompute_gpu, _backward)
)
