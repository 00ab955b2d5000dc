"""ROIPooling: max-pool each region of interest into a fixed pooled_size grid (Fast R-CNN).

rois (R, 5) rows are [batch_index, x1, y1, x2, y2] in image coordinates; spatial_scale
maps them onto data (N, C, H, W). For roi r and output cell (ph, pw):

    x1' = round(x1 * scale) (C's round: halves away from zero), likewise y1', x2', y2'
    bin_h = max(y2' - y1' + 1, 1) / PH,                     bin_w likewise
    rows  [floor(ph bin_h), ceil((ph + 1) bin_h)) + y1',    clipped to [0, H]
    out[r, c, ph, pw] = max of data[batch, c] over the bin (0 for an empty bin)

The hidden output maxidx (int32) keeps where each maximum was (h * W + w, -1 when
empty); the gradient adds dy there. Several rois may share a pixel. On the CPU d data is
gathered per (sample, channel) plane: one work item scans every roi of its sample and
adds into its own plane only. On the GPU those N C items (512 for VGG16 Faster R-CNN at
batch 1) are far too few, so each dy cell is an item that adds into its maximum's pixel
atomically (_atomic_grad.py), as MXNet's CUDA kernel does. rois get a zero gradient. A
batch index outside [0, N) is an NNVMError naming the roi (the forward copies the rois
to the host to check).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...attrs import (
    FCompute_cpu,
    FCompute_gpu,
    FGradient,
    FInferShape,
    FInferType,
    FListInputNames,
    FListOutputNames,
    FNumVisibleOutputs,
    TIsBackward,
)
from ...base import InferError, NNVMError
from ...graph.grad import make_grad_node
from ...graph.node import NodeEntry
from ...infer import shape_assign, shape_is_known, shape_str, type_assign
from ...kernel import device_function, parallel_for
from ...kernel.launch import NULL, WRITE, is_gpu, req_code, store, uindex
from ...param import Parameter, Shape, field
from ...registry import NodeAttrs, register_op
from .._atomic_grad import atomic_target
from .._index_kernels import atomic_add
from ..init import _fill
from ._layer_util import host_copy, via_float32

_LOWEST = -3.4028234663852886e38  # -FLT_MAX: where MXNet's max starts


class ROIPoolingParam(Parameter):
    pooled_size = field(Shape, describe="ROI pooling output shape (h,w)")
    spatial_scale = field(
        float,
        lower_bound=0.0,
        describe="Ratio of input feature map height (or w) to raw image height (or w). Equals "
        "the reciprocal of total stride in convolutional layers",
    )


def _check_pooled_size(attrs: NodeAttrs) -> tuple[int, int]:
    size = attrs.parsed.pooled_size
    if len(size) != 2 or min(size) <= 0:
        raise InferError(
            f"ROIPooling: parameter 'pooled_size' expects two positive sizes (h, w), got {size}"
        )
    return size[0], size[1]


def _infer_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    """data (N, C, H, W), rois (R, 5) -> output, maxidx (R, C, PH, PW)."""
    ph, pw = _check_pooled_size(attrs)
    data, rois = in_shapes
    if data is not None and len(data) != 4:
        raise InferError(f"ROIPooling: input 'data' has shape {shape_str(data)}; expected 4-D")
    if rois is not None and (len(rois) != 2 or rois[1] not in (5, None)):
        raise InferError(
            f"ROIPooling: input 'rois' has shape {shape_str(rois)}; expected (R, 5) rows of "
            "[batch_index, x1, y1, x2, y2]"
        )
    out = out_shapes[0] or out_shapes[1]
    r = (rois or (None,))[0] if out is None else out[0]
    c = (data or (None, None))[1] if out is None else out[1]
    shape_assign(in_shapes, 1, (r, 5), "ROIPooling: input 'rois'")
    if c is not None or data is not None:
        base = data or (None, None, None, None)
        shape_assign(in_shapes, 0, (base[0], c, base[2], base[3]), "ROIPooling: input 'data'")
    r, c = in_shapes[1][0], None if in_shapes[0] is None else in_shapes[0][1]
    for j, name in enumerate(("output", "maxidx")):
        shape_assign(out_shapes, j, (r, c, ph, pw), f"ROIPooling: output '{name}'")
    return all(shape_is_known(s) for s in [*in_shapes, *out_shapes])


def _infer_type(attrs: NodeAttrs, in_types: list[Any], out_types: list[Any]) -> bool:
    """data, rois and output share a float type; maxidx is int32."""
    slots = ((in_types, 1, "input 'rois'"), (out_types, 0, "output 'output'"))
    for types, i, _ in slots:
        type_assign(in_types, 0, types[i], "ROIPooling: input 'data'")
    for types, i, what in slots:
        type_assign(types, i, in_types[0], f"ROIPooling: {what}")
    type_assign(out_types, 1, np.int32, "ROIPooling: output 'maxidx'")
    return all(t is not None for t in [*in_types, *out_types])


# --- kernels -----------------------------------------------------------------------------------


@device_function
def _c_round(v):
    """C's round(): halves away from zero."""
    return math.floor(v + 0.5) if v >= 0 else -math.floor(-v + 0.5)


@parallel_for
def _roi_pool_loop(i, out, maxidx, data, rois, C, H, W, PH, PW, scale, m_out, m_idx):
    """Output cell i = (r, c, ph, pw)."""
    cells = PH * PW
    rc = i // cells
    p = i - rc * cells
    r = rc // C
    c = rc - r * C
    ph = p // PW
    pw = p - ph * PW
    b = r * 5
    x1 = _c_round(rois[b + 1] * scale)
    y1 = _c_round(rois[b + 2] * scale)
    x2 = _c_round(rois[b + 3] * scale)
    y2 = _c_round(rois[b + 4] * scale)
    bin_h = max(y2 - y1 + 1.0, 1.0) / PH
    bin_w = max(x2 - x1 + 1.0, 1.0) / PW
    h0 = int(min(max(math.floor(ph * bin_h) + y1, 0.0), H))
    h1 = int(min(max(math.ceil((ph + 1) * bin_h) + y1, 0.0), H))
    w0 = int(min(max(math.floor(pw * bin_w) + x1, 0.0), W))
    w1 = int(min(max(math.ceil((pw + 1) * bin_w) + x1, 0.0), W))
    best = 0.0
    arg = -1
    if h1 > h0 and w1 > w0:
        best = _LOWEST
        base = (int(rois[b]) * C + c) * H * W
        for h in range(h0, h1):
            for w in range(w0, w1):
                v = data[uindex(base + h * W + w)]
                if v > best:
                    best = v
                    arg = h * W + w
    store(out, i, best, m_out)
    store(maxidx, i, arg, m_idx)


@parallel_for
def _roi_grad_loop(nc, ddata, dy, rois, maxidx, R, C, HW, cells, mode):
    """Plane nc = (n, c) of d data: the maxima of every roi of sample n add dy there
    (the CPU's backward: race-free without atomics)."""
    base = nc * HW
    if mode == WRITE:
        for k in range(HW):
            ddata[uindex(base + k)] = 0.0
    n = nc // C
    c = nc - n * C
    for r in range(R):
        if int(rois[r * 5]) == n:
            cell0 = (r * C + c) * cells
            for p in range(cells):
                k = maxidx[uindex(cell0 + p)]
                if k >= 0:
                    ddata[uindex(base + k)] += dy[uindex(cell0 + p)]


@parallel_for
def _roi_grad_cells(i, ddata, dy, rois, maxidx, N, C, HW, cells):
    """dy cell i = (r, c, ph, pw) adds into its maximum's pixel; atomically (GPU), since
    overlapping rois may share that pixel. A roi whose batch index is outside [0, N) adds
    nothing, as in the plane loop."""
    k = maxidx[i]
    if k < 0:
        return
    rc = i // cells
    r = rc // C
    n = int(rois[r * 5])
    if n < 0 or n >= N:
        return
    atomic_add(ddata, (n * C + rc - r * C) * HW + k, dy[i])


def _check_batch_index(ctx: Any, rois: Any, batch: int) -> None:
    index = host_copy(ctx, rois).reshape(-1, 5)[:, 0]
    bad = np.flatnonzero(~((index >= 0) & (index < batch)))
    if bad.size:
        r = int(bad[0])
        raise NNVMError(
            f"ROIPooling: rois[{r}] has batch index {index[r]:g}, but data holds {batch} "
            f"images; expected 0 <= index < {batch}"
        )


@via_float32
def _forward(attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]):
    data, rois = inputs
    m_out, m_idx = (req_code("ROIPooling", r) for r in req)
    out, maxidx = outputs
    if (m_out == NULL and m_idx == NULL) or out.size == 0:
        return
    N, C, H, W = data.shape
    _check_batch_index(ctx, rois, N)
    PH, PW = _check_pooled_size(attrs)
    flat = [a.reshape(-1) for a in (out, maxidx, data, rois)]
    scalars = (C, H, W, PH, PW, attrs.parsed.spatial_scale, m_out, m_idx)
    _roi_pool_loop.launch(ctx, out.size, *flat, *scalars)


@via_float32
def _backward(attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]):
    dy, rois, maxidx = inputs  # maxidx: the forward's hidden output
    ddata, drois = outputs
    _fill.launch(ctx, drois, req[1], 0.0)
    mode = req_code("_backward_ROIPooling", req[0])
    if mode == NULL or ddata.size == 0:
        return
    N, C, H, W = ddata.shape
    R, _, PH, PW = dy.shape
    if is_gpu(ctx):
        with atomic_target(ctx, ddata, mode) as acc:
            flat = [a.reshape(-1) for a in (dy, rois, maxidx)]
            _roi_grad_cells.launch(ctx, dy.size, acc, *flat, N, C, H * W, PH * PW)
        return
    flat = [a.reshape(-1) for a in (ddata, dy, rois, maxidx)]
    _roi_grad_loop.launch(ctx, N * C, *flat, R, C, H * W, PH * PW, mode, work=ddata.size + dy.size)


def _gradient(node: Any, ograds: list[Any]) -> list[Any]:
    heads = [ograds[0], node.inputs[1], NodeEntry(node, 1)]
    return make_grad_node("_backward_ROIPooling", node, heads)


(
    register_op("ROIPooling")
    .describe(
        "Performs region of interest pooling: each roi [batch_index, x1, y1, x2, y2] "
        "(scaled by spatial_scale onto data) is divided into a pooled_size grid of bins, "
        "and each bin takes the maximum of data over it (0 for an empty bin)."
    )
    .set_attr_parser(ROIPoolingParam)
    .set_num_inputs(2)
    .set_num_outputs(2)
    .set_attr(FListInputNames, lambda attrs: ["data", "rois"])
    .set_attr(FListOutputNames, lambda attrs: ["output", "maxidx"])
    .set_attr(FNumVisibleOutputs, lambda attrs: 1)
    .set_attr(FInferShape, _infer_shape)
    .set_attr(FInferType, _infer_type)
    .set_attr(FCompute_cpu, _forward)
    .set_attr(FCompute_gpu, _forward)
    .set_attr(FGradient, _gradient)
    .add_argument(
        "data", "NDArray-or-Symbol", "The input array to the pooling operator,  a 4D Feature maps "
    )
    .add_argument(
        "rois",
        "NDArray-or-Symbol",
        "Bounding box coordinates, a 2D array of [[batch_index, x1, y1, x2, y2]], where (x1, "
        "y1) and (x2, y2) are top left and bottom right corners of designated region of "
        "interest. `batch_index` indicates the index of corresponding image in the input array",
    )
    .add_arguments(ROIPoolingParam.fields())
)
(
    register_op("_backward_ROIPooling")
    .describe("Backward of ROIPooling: inputs (dy, rois, maxidx).")
    .set_attr_parser(ROIPoolingParam)
    .set_num_inputs(3)
    .set_num_outputs(2)
    .set_attr(TIsBackward, True)
    .set_attr(FCompute_cpu, _backward)
    .set_attr(FCompute_gpu, _backward)
)
