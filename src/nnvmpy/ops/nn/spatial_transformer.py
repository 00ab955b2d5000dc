"""SpatialTransformer: an affine grid from `loc`, then bilinear sampling of `data` on it.

    grid = GridGenerator(loc, 'affine', target_shape)       (N, 2, h, w), a hidden output
    out  = BilinearSampler(data, grid)                      (N, C, h, w)

The backward runs the sampler's backward (d data, and d grid into temp space), then the
affine grid's backward (d loc). The kernels are those of grid_generator.py and
bilinear_sampler.py.
"""

from __future__ import annotations

from typing import Any, Self

from ...attrs import (
    FCompute_cpu,
    FCompute_gpu,
    FGradient,
    FInferShape,
    FInferType,
    FListInputNames,
    FListOutputNames,
    FNumVisibleOutputs,
    FResourceRequest,
    TIsBackward,
)
from ...base import InferError, ParamError
from ...graph.grad import make_grad_node
from ...graph.node import NodeEntry
from ...infer import elemwise_type, shape_assign, shape_is_known, shape_str
from ...kernel.launch import NULL, WRITE, req_code
from ...param import Parameter, Shape, field
from ...registry import NodeAttrs, register_op
from ...resource import ResourceRequest
from ._layer_util import via_float32
from .bilinear_sampler import sample, sample_backward
from .grid_generator import affine_grid, affine_grid_backward


class SpatialTransformerParam(Parameter):
    target_shape = field(
        Shape,
        default=(0, 0),
        describe="output shape(h, w) of spatial transformer: (y, x)",
    )
    transform_type = field(str, enum={"affine": 0}, describe="transformation type")
    sampler_type = field(str, enum={"bilinear": 0}, describe="sampling type")
    cudnn_off = field(
        bool, default=None, describe="whether to turn cudnn off (accepted; nnvmpy has no cuDNN)"
    )

    @classmethod
    def parse(cls, kwargs: Any, op_name: str | None = None, *, allow_unknown: bool = False) -> Self:
        param = super().parse(kwargs, op_name, allow_unknown=allow_unknown)
        shape = param.target_shape
        if len(shape) != 2 or min(shape) <= 0:
            raise ParamError(
                f"{op_name or 'SpatialTransformer'}: parameter 'target_shape' expects two "
                f"positive sizes (h, w), got {shape}"
            )
        return param


def _infer_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    """data (N, C, H, W), loc (N, 6) -> output (N, C, h, w), grid (N, 2, h, w)."""
    data, loc = in_shapes
    if data is not None and len(data) != 4:
        raise InferError(
            f"SpatialTransformer: input 'data' has shape {shape_str(data)}; expected (N, C, H, W)"
        )
    if loc is not None and (len(loc) != 2 or loc[1] not in (6, None)):
        raise InferError(
            f"SpatialTransformer: input 'loc' has shape {shape_str(loc)}; expected (N, 6) "
            "affine matrices"
        )
    h, w = attrs.parsed.target_shape
    known = [s[0] for s in (data, loc, *out_shapes) if s is not None and s[0] is not None]
    n = known[0] if known else None
    out = out_shapes[0]
    shape_assign(
        in_shapes,
        0,
        (n, None if out is None else out[1], None, None),
        "SpatialTransformer: input 'data'",
    )
    shape_assign(in_shapes, 1, (n, 6), "SpatialTransformer: input 'loc'")
    c = in_shapes[0][1]
    shape_assign(out_shapes, 0, (n, c, h, w), "SpatialTransformer: output 'output'")
    shape_assign(out_shapes, 1, (n, 2, h, w), "SpatialTransformer: output 'grid'")
    return all(shape_is_known(s) for s in [*in_shapes, *out_shapes])


@via_float32
def _forward(attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]):
    data, loc = inputs
    out, grid = outputs
    m_out, m_grid = (req_code("SpatialTransformer", r) for r in req)
    if m_out == NULL:
        affine_grid(ctx, grid, loc, m_grid)
        return
    if m_grid != WRITE:  # the sampler needs the grid itself
        grid = ctx.requested[0].get_space(tuple(grid.shape), data.dtype)
        if m_grid != NULL:
            affine_grid(ctx, outputs[1], loc, m_grid)
    affine_grid(ctx, grid, loc, WRITE)
    sample(ctx, out, data, grid, m_out)


@via_float32
def _backward(attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]):
    dy, data, grid = inputs  # grid: the forward's hidden output
    m_data, m_loc = (req_code("_backward_SpatialTransformer", r) for r in req)
    dgrid = ctx.requested[0].get_space(tuple(grid.shape), grid.dtype)
    sample_backward(ctx, outputs[0], dgrid, dy, data, grid, [m_data, WRITE if m_loc else NULL])
    affine_grid_backward(ctx, outputs[1], dgrid, m_loc)


def _gradient(node: Any, ograds: list[Any]) -> list[Any]:
    heads = [ograds[0], node.inputs[0], NodeEntry(node, 1)]
    return make_grad_node("_backward_SpatialTransformer", node, heads)


_TEMP = lambda attrs: [ResourceRequest.kTempSpace]  # noqa: E731

(
    register_op("SpatialTransformer")
    .describe(
        "Applies a spatial transformer: an affine sampling grid of shape target_shape is "
        "made from loc (N, 6), one 2x3 matrix per sample, and data is sampled on it "
        "bilinearly (GridGenerator then BilinearSampler in one op)."
    )
    .set_attr_parser(SpatialTransformerParam)
    .set_num_inputs(2)
    .set_num_outputs(2)
    .set_attr(FListInputNames, lambda attrs: ["data", "loc"])
    .set_attr(FListOutputNames, lambda attrs: ["output", "grid"])
    .set_attr(FNumVisibleOutputs, lambda attrs: 1)
    .set_attr(FInferShape, _infer_shape)
    .set_attr(FInferType, elemwise_type(2, 2))
    .set_attr(FResourceRequest, _TEMP)
    .set_attr(FCompute_cpu, _forward)
    .set_attr(FCompute_gpu, _forward)
    .set_attr(FGradient, _gradient)
    .add_argument("data", "NDArray-or-Symbol", "Input data to the SpatialTransformerOp.")
    .add_argument(
        "loc",
        "NDArray-or-Symbol",
        "localisation net, the output dim should be 6 when transform_type is affine. You "
        "shold initialize the weight and bias with identity tranform.",
    )
    .add_arguments(SpatialTransformerParam.fields())
)
(
    register_op("_backward_SpatialTransformer")
    .describe("Backward of SpatialTransformer: inputs (dy, data, grid).")
    .set_attr_parser(SpatialTransformerParam)
    .set_num_inputs(3)
    .set_num_outputs(2)
    .set_attr(TIsBackward, True)
    .set_attr(FResourceRequest, _TEMP)
    .set_attr(FCompute_cpu, _backward)
    .set_attr(FCompute_gpu, _backward)
)
