"""AdaptiveAvgPooling2D: average pooling of NCHW data onto a fixed output grid (contrib).

`_contrib_AdaptiveAvgPooling2D(data, output_size=())`: output (N, C, OH, OW) with
output_size () -> 1 x 1, (k,) or k -> k x k, (h, w) -> h x w. Output row o averages the
input rows [floor(o * H / OH), ceil((o + 1) * H / OH)), columns likewise; windows may
overlap (and OH may exceed H).

A window mean over rows then columns is separable: y = A_h x A_w^T, where row o of the
(OH, H) matrix A_h holds 1 / window length on its window. The forward is two matrix
products, and so is the gradient, dx = A_h^T dy A_w. Runs on the host (NumPy); on the GPU
through _host_staged.host_compute.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..attrs import (
    FCompute_cpu,
    FCompute_gpu,
    FGradient,
    FInferShape,
    FInferType,
    FListInputNames,
    TIsBackward,
)
from ..base import InferError
from ..graph.grad import ElemwiseGradUseIn
from ..infer import elemwise_type, shape_assign, shape_str
from ..param import Parameter, field
from ..param import Shape as ShapeField
from ..registry import NodeAttrs, register_op
from ._host_staged import host_compute

OP = "_contrib_AdaptiveAvgPooling2D"


class AdaptiveAvgPoolParam(Parameter):
    output_size = field(
        ShapeField,
        default=(),
        describe="int (output size) or a tuple of int for output (height, width).",
    )


def output_hw(p: AdaptiveAvgPoolParam) -> tuple[int, int]:
    size = tuple(p.output_size)
    if len(size) > 2 or any(s < 1 for s in size):
        raise InferError(
            f"{OP}: output_size {size} must be (), one positive int or (height, width)"
        )
    if not size:
        return 1, 1
    return (size[0], size[0]) if len(size) == 1 else (size[0], size[1])


def window_matrix(n_in: int, n_out: int) -> np.ndarray:
    """(n_out, n_in): row o is 1 / length over [floor(o n_in / n_out), ceil(...)), else 0."""
    a = np.zeros((n_out, n_in))
    for o in range(n_out):
        start = math.floor(o * n_in / n_out)
        end = math.ceil((o + 1) * n_in / n_out)
        a[o, start:end] = 1.0 / (end - start)
    return a


def _pool_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    data = in_shapes[0]
    if data is None:
        return False
    if len(data) != 4:
        raise InferError(f"{OP}: input 'data' has shape {shape_str(data)}; expected NCHW (4-D)")
    oh, ow = output_hw(attrs.parsed)
    return shape_assign(out_shapes, 0, (data[0], data[1], oh, ow), f"{OP}: output")


def _compute_type(dtype: np.dtype) -> np.dtype:
    return np.promote_types(dtype, np.float32)


def adaptive_avg_pool_np(p: AdaptiveAvgPoolParam, x: np.ndarray) -> list[np.ndarray]:
    oh, ow = output_hw(p)
    ct = _compute_type(x.dtype)
    ah = window_matrix(x.shape[2], oh).astype(ct)
    aw = window_matrix(x.shape[3], ow).astype(ct)
    return [(ah @ x.astype(ct) @ aw.T).astype(x.dtype)]


def adaptive_avg_pool_grad_np(
    p: AdaptiveAvgPoolParam, dy: np.ndarray, x: np.ndarray
) -> list[np.ndarray]:
    oh, ow = output_hw(p)
    ct = _compute_type(x.dtype)
    ah = window_matrix(x.shape[2], oh).astype(ct)
    aw = window_matrix(x.shape[3], ow).astype(ct)
    return [(ah.T @ dy.astype(ct) @ aw).astype(x.dtype)]


_forward = host_compute(OP, adaptive_avg_pool_np)
(
    register_op(OP)
    .describe(
        "Applies a 2D adaptive average pooling over a 4D input with the shape of (NCHW). "
        "The pooling kernel and stride sizes are automatically chosen for desired output "
        "sizes.\n\n"
        "- If a single integer is provided for output_size, the output size is "
        "(N x C x output_size x output_size) for any input (NCHW).\n\n"
        "- If a tuple of integers (height, width) are provided for output_size, the output "
        "size is (N x C x height x width) for any input (NCHW).\n"
    )
    .set_attr_parser(AdaptiveAvgPoolParam)
    .set_num_inputs(1)
    .set_num_outputs(1)
    .set_attr(FListInputNames, lambda attrs: ["data"])
    .set_attr(FInferShape, _pool_shape)
    .set_attr(FInferType, elemwise_type(1, 1))
    .set_attr(FCompute_cpu, _forward)
    .set_attr(FCompute_gpu, _forward)
    .set_attr(FGradient, ElemwiseGradUseIn("_backward_contrib_AdaptiveAvgPooling2D"))
    .add_argument("data", "NDArray-or-Symbol", "Input data")
    .add_arguments(AdaptiveAvgPoolParam.fields())
)
_backward = host_compute("_backward_contrib_AdaptiveAvgPooling2D", adaptive_avg_pool_grad_np)
(
    register_op("_backward_contrib_AdaptiveAvgPooling2D")
    .describe("Backward of AdaptiveAvgPooling2D: inputs (dy, data), output d data.")
    .set_attr_parser(AdaptiveAvgPoolParam)
    .set_num_inputs(2)
    .set_num_outputs(1)
    .set_attr(TIsBackward, True)
    .set_attr(FCompute_cpu, _backward)
    .set_attr(FCompute_gpu, _backward)
)
