"""argmax, argmin, argmax_channel: the index of the largest / smallest element along an axis.

As MXNet 1.x: the index is returned in the input's dtype (float32 in, float32 out);
`axis=None` searches the flattened array (output shape (1,), or all ones with keepdims);
the first occurrence wins a tie, and a NaN beats every number (the first NaN is
returned, for argmin too). argmax_channel is argmax over axis 1. The indices are piecewise
constant in the input, so the gradient is zero.

One kernel body (nv.kernel.parallel_for) serves both devices: work item i scans one
line x[o, :, j] of the (outer, n, inner) view of the input. Float rows along the last
axis take _argmax_cpu.py's vector passes on the CPU instead. On a GPU, lines near the last
axis (inner < 32) of 32 elements or more take a block each, or several blocks each when
they are too few to fill the device; axis=None is one such line. Farther in, lines too
few to fill the device are cut into slices of a thread each (_argmax_cuda.py).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import kernel
from ..attrs import FCompute_cpu, FCompute_gpu, FGradient, FInferShape, FInferType
from ..base import InferError, Shape
from ..graph.grad import make_zero_grad_nodes
from ..infer import elemwise_type, shape_assign, shape_is_known, shape_str
from ..kernel import half
from ..kernel.launch import ADD, NULL, flat, is_gpu, normalize_axis, req_code, split_axis
from ..param import Parameter, field
from ..registry import NodeAttrs, register_op


class ReduceAxisParam(Parameter):
    axis = field(
        int,
        default=None,
        describe="The axis along which to perform the reduction. Negative values means "
        "indexing from right to left. ``Requires axis to be set as int, because global "
        "reduction is not supported yet.``",
    )
    keepdims = field(
        bool,
        default=False,
        describe="If this is set to `True`, the reduced axis is left in the result as "
        "dimension with size one.",
    )


@kernel.device_function
def _wins(v, best, largest):
    """v replaces the best so far: larger (smaller), or the first NaN."""
    if best != best:
        return False
    if v != v:
        return True
    return v > best if largest else v < best


@kernel.parallel_for
def _arg_line(i, out, x, n, inner, largest, mode):
    o = i // inner
    j = i - o * inner
    base = o * n * inner + j
    best = x[base]
    at = 0
    for k in range(1, n):
        v = x[base + k * inner]
        if _wins(v, best, largest):
            best = v
            at = k
    if mode == ADD:
        out[i] += at
    else:
        out[i] = at


def arg_shape(name: str, shape: Shape, axis: int | None, keepdims: bool) -> Shape:
    """The output shape: `shape` without `axis` (size 1 with keepdims); (1,) for None."""
    if axis is None:
        return tuple(1 for _ in shape) if keepdims and shape else (1,)
    ndim = len(shape)
    if not -ndim <= axis < ndim:
        raise InferError(
            f"{name}: axis {axis} is out of range for input 'data' of shape "
            f"{shape_str(shape)} (expected -{ndim} <= axis < {ndim})"
        )
    a = axis % ndim
    if shape[a] == 0:
        raise InferError(
            f"{name}: cannot reduce over axis {axis} of size 0 (shape {shape_str(shape)})"
        )
    if keepdims:
        return tuple(1 if d == a else s for d, s in enumerate(shape))
    return tuple(s for d, s in enumerate(shape) if d != a)


def _axis(attrs: NodeAttrs) -> tuple[int | None, bool]:
    if attrs.op is not None and attrs.op.name == "argmax_channel":
        return 1, False
    return attrs.parsed.axis, attrs.parsed.keepdims


def _infer(attrs: NodeAttrs, in_shapes: list[Shape | None], out_shapes: list[Shape | None]) -> bool:
    name = attrs.op.name  # type: ignore[union-attr]
    src = in_shapes[0]
    if src is None:
        return False
    axis, keepdims = _axis(attrs)
    if axis is None and not shape_is_known(src):
        return False
    if axis is None and 0 in src:
        raise InferError(f"{name}: cannot reduce an empty array (shape {shape_str(src)})")
    shape_assign(out_shapes, 0, arg_shape(name, src, axis, keepdims), f"{name}: output 'output'")
    return shape_is_known(src) and shape_is_known(out_shapes[0])


def _compute(largest: bool) -> Any:
    def compute(
        attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
    ) -> None:
        name = attrs.op.name  # type: ignore[union-attr]
        mode = req_code(name, req[0])
        x, out = inputs[0], outputs[0]
        if mode == NULL or out.size == 0:
            return
        axis, _ = _axis(attrs)
        if axis is None:
            outer, n, inner = 1, x.size, 1
        else:
            outer, n, inner = split_axis(x.shape, normalize_axis(name, axis, x.shape))
        if is_gpu(ctx):
            from nnvmpy.ops._argmax_cuda import arg_gpu

            if arg_gpu(ctx, name, out, x, (outer, n, inner), largest, mode):
                return
        if isinstance(x, np.ndarray) and x.dtype == np.float16:  # numba: no float16 on cpu
            x = half.to_float32(x)
        target = out
        if isinstance(out, np.ndarray) and out.dtype == np.float16:
            target = half.to_float32(out) if mode == ADD else np.empty(out.shape, np.float32)
        if inner == 1 and not is_gpu(ctx) and x.dtype.kind == "f" and n >= 16:
            from nnvmpy.ops import _argmax_cpu

            rows = np.ascontiguousarray(x).reshape(-1)
            _argmax_cpu.arg_rows(rows, flat(target), n, 1 if largest else -1, mode == ADD)
        else:
            _arg_line.launch(
                ctx, outer * inner, flat(target), flat(x), n, inner, largest, mode, work=x.size
            )
        if target is not out:
            half.store(out, target)

    return compute


def _register(name: str, largest: bool, describe: str, param: bool = True) -> None:
    op = (
        register_op(name)
        .describe(describe)
        .set_num_inputs(1)
        .set_num_outputs(1)
        .set_attr(FInferShape, _infer)
        .set_attr(FInferType, elemwise_type(1, 1))
        .set_attr(FCompute_cpu, _compute(largest))
        .set_attr(FCompute_gpu, _compute(largest))
        .set_attr(FGradient, make_zero_grad_nodes)
        .add_argument("data", "NDArray-or-Symbol", "The input")
    )
    if param:
        op.set_attr_parser(ReduceAxisParam).add_arguments(ReduceAxisParam.fields())


_TIES = "The first occurrence wins a tie; NaN counts as the extreme value."
_register("argmax", True, f"Returns indices of the maximum values along an axis. {_TIES}")
_register("argmin", False, f"Returns indices of the minimum values along an axis. {_TIES}")
_register(
    "argmax_channel",
    True,
    f"Returns argmax indices of each channel (along axis 1) of the input array. {_TIES}",
    param=False,
)

__all__ = ["ReduceAxisParam", "arg_shape"]
