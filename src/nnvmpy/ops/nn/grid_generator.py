"""GridGenerator: the sampling grid BilinearSampler reads, from an affine map or a flow.

Grids hold normalised source coordinates in [-1, 1]: channel 0 is x (the width
position), channel 1 is y; -1 is the first pixel, 1 the last.

    affine: data theta (N, 6), target_shape (H, W):
        xt = -1 + 2 w / (W - 1),  yt = -1 + 2 h / (H - 1)
        grid[n, 0, h, w] = theta0 xt + theta1 yt + theta2
        grid[n, 1, h, w] = theta3 xt + theta4 yt + theta5
        dtheta[n, 3i + k] = sum over (h, w) of dgrid[n, i, h, w] * (xt, yt, 1)[k]
    warp: data flow (N, 2, H, W), in pixels:
        grid[n, 0] = (w + flow[n, 0]) * 2 / (W - 1) - 1,  grid[n, 1] likewise with h, H
        dflow[n, 0] = dgrid[n, 0] * 2 / (W - 1)

A size of 1 divides by zero, as in MXNet: the grid is NaN. SpatialTransformer reuses
the affine kernels (`affine_grid`, `affine_grid_backward`). dtheta takes 6 N items of
H W steps on the CPU; a GPU slices those sums when they are long (_sampler_grad_cuda.py).
"""

from __future__ import annotations

import math
from typing import Any, Self

import numpy as np

from ...attrs import (
    FCompute_cpu,
    FCompute_gpu,
    FGradient,
    FInferShape,
    FInferType,
    FListInputNames,
    TIsBackward,
)
from ...base import InferError, ParamError
from ...graph.grad import ElemwiseGradUseNone
from ...infer import elemwise_type, shape_assign, shape_is_known, shape_str
from ...kernel import parallel_for
from ...kernel.launch import ADD, NULL, is_gpu, req_code, store, uindex
from ...param import Parameter, Shape, field
from ...registry import NodeAttrs, register_op
from ._layer_util import via_float32


class GridGeneratorParam(Parameter):
    transform_type = field(
        str,
        enum={"affine": 0, "warp": 1},
        describe="The type of transformation. For `affine`, input data should be an affine "
        "matrix of size (batch, 6). For `warp`, input data should be an optical flow of size "
        "(batch, 2, h, w).",
    )
    target_shape = field(
        Shape,
        default=(0, 0),
        describe="Specifies the output shape (H, W). This is required if transformation type "
        "is `affine`. If transformation type is `warp`, this parameter is ignored.",
    )

    @classmethod
    def parse(cls, kwargs: Any, op_name: str | None = None, *, allow_unknown: bool = False) -> Self:
        param = super().parse(kwargs, op_name, allow_unknown=allow_unknown)
        shape = param.target_shape
        if param.transform_type == "affine" and (len(shape) != 2 or min(shape) <= 0):
            raise ParamError(
                f"{op_name or 'GridGenerator'}: parameter 'target_shape' expects two positive "
                f"sizes (H, W) when transform_type='affine', got {shape}"
            )
        return param


def _step(size: int) -> float:
    """2 / (size - 1): the normalised distance of one pixel (NaN for a size of 1)."""
    return 2.0 / (size - 1) if size > 1 else math.nan


# --- kernels ---------------------------------------------------------------------------------


@parallel_for
def _affine_loop(j, grid, theta, H, W, sx, sy, mode, chunk, spans):
    """Item j: `chunk` positions of grid row r = (n, h), both channels. A whole row on the
    CPU (spans 1: no division per position), one position on the GPU (spans W)."""
    r = j // spans
    w0 = (j - r * spans) * chunk
    n = r // H
    h = r - n * H
    HW = H * W
    yt = -1.0 + h * sy
    t = n * 6
    x_row = 2 * n * HW + h * W
    y_row = x_row + HW
    for w in range(w0, w0 + chunk):
        xt = -1.0 + w * sx
        store(grid, uindex(x_row + w), theta[t] * xt + theta[t + 1] * yt + theta[t + 2], mode)
        store(grid, uindex(y_row + w), theta[t + 3] * xt + theta[t + 4] * yt + theta[t + 5], mode)


@parallel_for
def _affine_grad_loop(q, dtheta, dgrid, H, W, sx, sy, mode):
    """Entry q = (n, 3 i + k) of dtheta: a sum over the grid's channel i, in order."""
    n = q // 6
    i = (q - n * 6) // 3
    k = q - n * 6 - i * 3
    base = (2 * n + i) * H * W
    s = 0.0
    for h in range(H):
        row = base + h * W
        for w in range(W):
            basis = 1.0
            if k == 0:
                basis = -1.0 + w * sx
            elif k == 1:
                basis = -1.0 + h * sy
            s += dgrid[uindex(row + w)] * basis
    store(dtheta, q, s, mode)


@parallel_for
def _warp_loop(i, grid, flow, H, W, sx, sy, mode):
    """Element i of the (N, 2, H, W) grid."""
    HW = H * W
    c = (i // HW) % 2
    p = i % HW
    h = p // W
    if c == 0:
        store(grid, i, ((p - h * W) + flow[i]) * sx - 1.0, mode)
    else:
        store(grid, i, (h + flow[i]) * sy - 1.0, mode)


@parallel_for
def _warp_grad_loop(i, dflow, dgrid, HW, sx, sy, mode):
    store(dflow, i, dgrid[i] * (sx if (i // HW) % 2 == 0 else sy), mode)


def affine_grid(ctx: Any, grid: Any, theta: Any, mode: int) -> None:
    """grid (N, 2, H, W) from theta (N, 6)."""
    n, _, H, W = grid.shape
    if mode != NULL and n * H * W:
        spans = W if is_gpu(ctx) else 1  # items per grid row
        args = (grid.reshape(-1), theta.reshape(-1), H, W, _step(W), _step(H), mode)
        _affine_loop.launch(ctx, n * H * spans, *args, W // spans, spans, work=grid.size)


def affine_grid_backward(ctx: Any, dtheta: Any, dgrid: Any, mode: int) -> None:
    """dtheta (N, 6) from dgrid (N, 2, H, W)."""
    n, _, H, W = dgrid.shape
    if mode == NULL or not n:
        return
    scalars = (H, W, _step(W), _step(H), mode)
    if not is_gpu(ctx) and isinstance(dtheta, np.ndarray) and dtheta.flags.c_contiguous:
        from nnvmpy.ops.nn import _affine_grad_cpu

        _affine_grad_cpu.affine_grad(
            dtheta.reshape(-1), np.ascontiguousarray(dgrid).reshape(-1), *scalars[:4],
            mode == ADD,
        )  # fmt: skip
        return
    if is_gpu(ctx):
        from nnvmpy.ops.nn import _sampler_grad_cuda as gpu

        S = gpu.slices(n, H * W)
        if S > 1:  # long sums: sliced, the partials reduced (_sampler_grad_cuda.py)
            gpu.affine_grad_gpu(ctx, dtheta, dgrid, S, scalars)
            return
    _affine_grad_loop.launch(
        ctx, n * 6, dtheta.reshape(-1), dgrid.reshape(-1), *scalars, work=dgrid.size
    )


# --- the op ------------------------------------------------------------------------------------


def _infer_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    p = attrs.parsed
    if p.transform_type == "warp":
        shape_assign(in_shapes, 0, out_shapes[0], "GridGenerator: input 'data'")
        shape_assign(out_shapes, 0, in_shapes[0], "GridGenerator: output 'output'")
        data = in_shapes[0]
        if data is not None and (len(data) != 4 or data[1] not in (2, None)):
            raise InferError(
                f"GridGenerator (transform_type='warp'): input 'data' has shape "
                f"{shape_str(data)}; expected a flow (N, 2, H, W)"
            )
    else:
        data = in_shapes[0]
        if data is not None and (len(data) != 2 or data[1] not in (6, None)):
            raise InferError(
                f"GridGenerator (transform_type='affine'): input 'data' has shape "
                f"{shape_str(data)}; expected affine matrices (N, 6)"
            )
        out = out_shapes[0]
        batch = None if out is None else out[0]
        shape_assign(in_shapes, 0, (batch, 6), "GridGenerator: input 'data'")
        grid = (in_shapes[0][0], 2, *p.target_shape)
        shape_assign(out_shapes, 0, grid, "GridGenerator: output 'output'")
    return all(shape_is_known(s) for s in [*in_shapes, *out_shapes])


@via_float32
def _forward(attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]):
    data, grid = inputs[0], outputs[0]
    mode = req_code("GridGenerator", req[0])
    if attrs.parsed.transform_type == "affine":
        affine_grid(ctx, grid, data, mode)
        return
    _, _, H, W = grid.shape
    if mode != NULL and grid.size:
        args = (grid.reshape(-1), data.reshape(-1), H, W, _step(W), _step(H), mode)
        _warp_loop.launch(ctx, grid.size, *args)


@via_float32
def _backward(attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]):
    dgrid, ddata = inputs[0], outputs[0]
    mode = req_code("_backward_GridGenerator", req[0])
    if attrs.parsed.transform_type == "affine":
        affine_grid_backward(ctx, ddata, dgrid, mode)
        return
    _, _, H, W = dgrid.shape
    if mode != NULL and dgrid.size:
        args = (ddata.reshape(-1), dgrid.reshape(-1), H * W, _step(W), _step(H), mode)
        _warp_grad_loop.launch(ctx, dgrid.size, *args)


(
    register_op("GridGenerator")
    .describe(
        "Generates a sampling grid for BilinearSampler (normalised source coordinates in "
        "[-1, 1]; channel 0 is x, channel 1 is y).\n\n"
        "- affine: data (N, 6) holds a 2x3 affine matrix per sample, applied to the target "
        "grid of shape target_shape\n"
        "- warp: data (N, 2, H, W) is an optical flow in pixels added to each position"
    )
    .set_attr_parser(GridGeneratorParam)
    .set_num_inputs(1)
    .set_num_outputs(1)
    .set_attr(FListInputNames, lambda attrs: ["data"])
    .set_attr(FInferShape, _infer_shape)
    .set_attr(FInferType, elemwise_type(1, 1))
    .set_attr(FCompute_cpu, _forward)
    .set_attr(FCompute_gpu, _forward)
    .set_attr(FGradient, ElemwiseGradUseNone("_backward_GridGenerator"))
    .add_argument("data", "NDArray-or-Symbol", "Input data to the function.")
    .add_arguments(GridGeneratorParam.fields())
)
(
    register_op("_backward_GridGenerator")
    .describe("Backward of GridGenerator: input dgrid.")
    .set_attr_parser(GridGeneratorParam)
    .set_num_inputs(1)
    .set_num_outputs(1)
    .set_attr(TIsBackward, True)
    .set_attr(FCompute_cpu, _backward)
    .set_attr(FCompute_gpu, _backward)
)

__all__ = ["GridGeneratorParam", "affine_grid", "affine_grid_backward"]
