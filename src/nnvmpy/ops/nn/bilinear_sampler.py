"""BilinearSampler: sample data (N, C, H, W) at the grid's points (N, 2, Ho, Wo).

The grid holds normalised source coordinates (x, y) in [-1, 1] (GridGenerator's), so

    x = (gx + 1) (W - 1) / 2,  x0 = floor(x),  wx = 1 - (x - x0)       (y likewise)
    out = wy wx v(y0, x0) + wy (1 - wx) v(y0, x0 + 1)
          + (1 - wy) wx v(y0 + 1, x0) + (1 - wy) (1 - wx) v(y0 + 1, x0 + 1)

where v is 0 outside the image (zero padding), as in MXNet. The gradient:

    d data: each output spreads dy over its four corners with the same weights
    d gx = sum_c dy [wy (v01 - v00) + (1 - wy) (v11 - v10)] (W - 1) / 2
    d gy = sum_c dy [wx (v10 - v00) + (1 - wx) (v11 - v01)] (H - 1) / 2

Corners are shared between outputs, so on the CPU d data is gathered per (sample,
channel) plane: one work item walks every output point of its plane and adds into its
own plane only, which needs no atomics. Those N C items are far too few for a GPU, where
each dy element is an item adding into its corners atomically (_sampler_grad_cuda.py).
d grid has one work item per grid point (summing over the channels); on a GPU, few
points over many channels are cut into channel slices instead (_sampler_grad_cuda.py).
SpatialTransformer reuses `sample` and `sample_backward`.
"""

from __future__ import annotations

import math
from typing import Any

from ...attrs import (
    FCompute_cpu,
    FCompute_gpu,
    FGradient,
    FInferShape,
    FInferType,
    FListInputNames,
    TIsBackward,
)
from ...base import InferError
from ...graph.grad import ElemwiseGradUseIn
from ...infer import elemwise_type, shape_assign, shape_is_known, shape_str
from ...kernel import device_function, parallel_for
from ...kernel.launch import ADD, NULL, WRITE, is_gpu, req_code, store, uindex
from ...param import Parameter, field
from ...registry import NodeAttrs, register_op
from ._layer_util import via_float32


class BilinearSamplerParam(Parameter):
    cudnn_off = field(
        bool, default=None, describe="whether to turn cudnn off (accepted; nnvmpy has no cuDNN)"
    )


# --- kernels -----------------------------------------------------------------------------------


@device_function
def _source(g, size):
    """(top-left index, its weight) of normalised coordinate g on an axis of `size`."""
    p = (g + 1.0) * (size - 1) * 0.5
    p0 = math.floor(p)
    return int(p0), 1.0 - (p - p0)


@device_function
def _pixel(data, base, y, x, H, W):
    """data[base + y * W + x], or 0 outside the image."""
    if 0 <= y < H and 0 <= x < W:
        return data[uindex(base + y * W + x)]
    return 0.0


@parallel_for
def _sample_loop(i, out, data, grid, C, H, W, Ho, Wo, mode):
    """Output element i = (n, c, h, w)."""
    HWo = Ho * Wo
    nc = i // HWo
    p = i - nc * HWo
    n = nc // C
    g = 2 * n * HWo + p
    x0, wx = _source(grid[uindex(g)], W)
    y0, wy = _source(grid[uindex(g + HWo)], H)
    base = nc * H * W
    v = wy * (
        wx * _pixel(data, base, y0, x0, H, W) + (1.0 - wx) * _pixel(data, base, y0, x0 + 1, H, W)
    )
    v += (1.0 - wy) * (
        wx * _pixel(data, base, y0 + 1, x0, H, W)
        + (1.0 - wx) * _pixel(data, base, y0 + 1, x0 + 1, H, W)
    )
    store(out, i, v, mode)


@device_function
def _spread(ddata, base, y, x, H, W, v):
    if 0 <= y < H and 0 <= x < W:
        ddata[uindex(base + y * W + x)] += v


@parallel_for
def _data_grad_loop(nc, ddata, dy, grid, C, H, W, Ho, Wo, mode):
    """Plane nc = (n, c) of d data: every output point of the plane adds its share."""
    base = nc * H * W
    if mode == WRITE:
        for k in range(H * W):
            ddata[uindex(base + k)] = 0.0
    HWo = Ho * Wo
    n = nc // C
    for p in range(HWo):
        g = 2 * n * HWo + p
        x0, wx = _source(grid[uindex(g)], W)
        y0, wy = _source(grid[uindex(g + HWo)], H)
        d = dy[uindex(nc * HWo + p)]
        _spread(ddata, base, y0, x0, H, W, d * wy * wx)
        _spread(ddata, base, y0, x0 + 1, H, W, d * wy * (1.0 - wx))
        _spread(ddata, base, y0 + 1, x0, H, W, d * (1.0 - wy) * wx)
        _spread(ddata, base, y0 + 1, x0 + 1, H, W, d * (1.0 - wy) * (1.0 - wx))


@parallel_for
def _grid_grad_loop(q, dgrid, dy, data, grid, C, H, W, Ho, Wo, mode):
    """Grid point q = (n, h, w): both channels of d grid, summed over the C planes."""
    HWo = Ho * Wo
    n = q // HWo
    p = q - n * HWo
    g = 2 * n * HWo + p
    x0, wx = _source(grid[uindex(g)], W)
    y0, wy = _source(grid[uindex(g + HWo)], H)
    gx = 0.0
    gy = 0.0
    for c in range(C):
        base = (n * C + c) * H * W
        v00 = _pixel(data, base, y0, x0, H, W)
        v01 = _pixel(data, base, y0, x0 + 1, H, W)
        v10 = _pixel(data, base, y0 + 1, x0, H, W)
        v11 = _pixel(data, base, y0 + 1, x0 + 1, H, W)
        d = dy[uindex((n * C + c) * HWo + p)]
        gx += d * (wy * (v01 - v00) + (1.0 - wy) * (v11 - v10))
        gy += d * (wx * (v10 - v00) + (1.0 - wx) * (v11 - v01))
    if mode == ADD:
        dgrid[uindex(g)] += gx * (W - 1) * 0.5
        dgrid[uindex(g + HWo)] += gy * (H - 1) * 0.5
    elif mode == WRITE:
        dgrid[uindex(g)] = gx * (W - 1) * 0.5
        dgrid[uindex(g + HWo)] = gy * (H - 1) * 0.5


def sample(ctx: Any, out: Any, data: Any, grid: Any, mode: int) -> None:
    """out (N, C, Ho, Wo) = data (N, C, H, W) sampled at grid (N, 2, Ho, Wo)."""
    _, C, H, W = data.shape
    Ho, Wo = grid.shape[2], grid.shape[3]
    if mode != NULL and out.size:
        flat = (out.reshape(-1), data.reshape(-1), grid.reshape(-1))
        _sample_loop.launch(ctx, out.size, *flat, C, H, W, Ho, Wo, mode)


def sample_backward(
    ctx: Any, ddata: Any, dgrid: Any, dy: Any, data: Any, grid: Any, modes: list[int]
) -> None:
    """d data and d grid of `sample` (modes: their write requests)."""
    N, C, H, W = data.shape
    Ho, Wo = grid.shape[2], grid.shape[3]
    dims = (C, H, W, Ho, Wo)
    dy1, data1, grid1 = dy.reshape(-1), data.reshape(-1), grid.reshape(-1)
    if modes[0] != NULL and data.size:
        if is_gpu(ctx):  # an item per dy element, adding atomically
            from nnvmpy.ops.nn._sampler_grad_cuda import sample_data_grad_gpu

            sample_data_grad_gpu(ctx, ddata, dy, grid, modes[0])
        else:
            dd = ddata.reshape(-1)
            _data_grad_loop.launch(ctx, N * C, dd, dy1, grid1, *dims, modes[0], work=dy.size)
    if modes[1] != NULL and N * Ho * Wo:
        S = 1
        if is_gpu(ctx):  # few points, many channels: sliced (_sampler_grad_cuda.py)
            from nnvmpy.ops.nn import _sampler_grad_cuda as gpu

            S = gpu.grid_slices(N * Ho * Wo, C)
            if S > 1:
                gpu.sample_grid_grad_gpu(ctx, dgrid, dy, data, grid, S, modes[1])
        if S == 1:
            dg = dgrid.reshape(-1)
            _grid_grad_loop.launch(
                ctx, N * Ho * Wo, dg, dy1, data1, grid1, *dims, modes[1], work=dy.size
            )


# --- the op ------------------------------------------------------------------------------------


def _infer_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    """data (N, C, H, W), grid (N, 2, Ho, Wo) -> output (N, C, Ho, Wo)."""
    data, grid, out = in_shapes[0], in_shapes[1], out_shapes[0]
    for what, shape in (("data", data), ("grid", grid), ("output", out)):
        if shape is not None and len(shape) != 4:
            raise InferError(
                f"BilinearSampler: {what} has shape {shape_str(shape)}; expected 4 dimensions"
            )
    if grid is not None and grid[1] not in (2, None):
        raise InferError(
            f"BilinearSampler: input 'grid' has shape {shape_str(grid)}; expected (N, 2, H, W)"
        )
    d = data or (None,) * 4
    g = grid or (None,) * 4
    o = out or (None,) * 4
    batch = [d[0], g[0], o[0]]
    n = next((b for b in batch if b is not None), None)
    shape_assign(in_shapes, 0, (n, o[1], d[2], d[3]), "BilinearSampler: input 'data'")
    shape_assign(in_shapes, 1, (n, 2, o[2], o[3]), "BilinearSampler: input 'grid'")
    d, g = in_shapes[0], in_shapes[1]
    shape_assign(out_shapes, 0, (n, d[1], g[2], g[3]), "BilinearSampler: output 'output'")
    return all(shape_is_known(s) for s in [*in_shapes, *out_shapes])


@via_float32
def _forward(attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]):
    sample(ctx, outputs[0], inputs[0], inputs[1], req_code("BilinearSampler", req[0]))


@via_float32
def _backward(attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]):
    dy, data, grid = inputs
    modes = [req_code("_backward_BilinearSampler", r) for r in req]
    sample_backward(ctx, outputs[0], outputs[1], dy, data, grid, modes)


(
    register_op("BilinearSampler")
    .describe(
        "Applies bilinear sampling to the input feature map: output[n, c, h, w] is "
        "data[n, c] interpolated at the point grid[n, :, h, w], whose two channels are x "
        "and y normalised to [-1, 1] (GridGenerator makes such grids). Points outside the "
        "map read zeros."
    )
    .set_attr_parser(BilinearSamplerParam)
    .set_num_inputs(2)
    .set_num_outputs(1)
    .set_attr(FListInputNames, lambda attrs: ["data", "grid"])
    .set_attr(FInferShape, _infer_shape)
    .set_attr(FInferType, elemwise_type(2, 1))
    .set_attr(FCompute_cpu, _forward)
    .set_attr(FCompute_gpu, _forward)
    .set_attr(FGradient, ElemwiseGradUseIn("_backward_BilinearSampler"))
    .add_argument("data", "NDArray-or-Symbol", "Input data to the BilinearsamplerOp.")
    .add_argument(
        "grid",
        "NDArray-or-Symbol",
        "Input grid to the BilinearsamplerOp.grid has two channels: x_src, y_src",
    )
    .add_arguments(BilinearSamplerParam.fields())
)
(
    register_op("_backward_BilinearSampler")
    .describe("Backward of BilinearSampler: inputs (dy, data, grid).")
    .set_attr_parser(BilinearSamplerParam)
    .set_num_inputs(3)
    .set_num_outputs(2)
    .set_attr(TIsBackward, True)
    .set_attr(FCompute_cpu, _backward)
    .set_attr(FCompute_gpu, _backward)
)

__all__ = ["BilinearSamplerParam", "sample", "sample_backward"]
