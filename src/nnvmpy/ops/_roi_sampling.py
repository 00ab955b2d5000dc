"""The sampling loop ROIAlign and RROIAlign share: bilinear samples averaged per bin.

Each roi comes as one row of `geometry` (see GEOMETRY): its batch index, the top-left
corner and bin size of its (unrotated) grid, the sample grid per bin, and a rotation
(cos, sin) about a centre (cx, cy). Sample (xx, yy) of the grid lands on the map at

    x = xx cos + yy sin + cx,    y = yy cos - xx sin + cy

(ROIAlign: cos 1, sin 0, centre 0). A sample more than one pixel outside the map counts
0; otherwise it is clamped onto the map and blends its four neighbouring pixels. Bins
average their samples. The backward pass spreads dy / count onto the same pixels with
the same weights; it runs sequentially, since bins share pixels.

Also what the roi ops (ROIAlign, RROIAlign, PSROIPooling, DeformablePSROIPooling) share:
the checks of their data and rois inputs and of pooled_size, and the registration of an
op whose backward takes (dy, data, rois) and gives (d data, d rois = 0).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
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
from ..base import InferError
from ..graph.grad import make_grad_node
from ..infer import shape_str
from ..param import Parameter
from ..registry import register_op, skip_in_source_locations
from ._host_staged import host_compute
from .contrib_bbox import same_float_type

skip_in_source_locations(__file__)  # registrations name the op's own file

GEOMETRY = ("batch", "x0", "y0", "bin_w", "bin_h", "grid_w", "grid_h", "cos", "sin", "cx", "cy")


@kernel.cpu_kernel(parallel=False)
def roi_bins(data, geometry, dy, out, sensitive, backward):  # pragma: no cover - compiled
    """Forward (backward False): out (R, C', PH, PW) from data. Backward: data += spread dy.

    With `sensitive`, bin (ph, pw) of output channel c reads channel (c PH + ph) PW + pw.
    """
    n_batch, _, height, width = data.shape
    n_rois, c_out, ph_n, pw_n = dy.shape if backward else out.shape
    for r in range(n_rois):
        b = int(geometry[r, 0])
        if b < 0 or b >= n_batch:
            continue
        x0, y0 = geometry[r, 1], geometry[r, 2]
        bin_w, bin_h = geometry[r, 3], geometry[r, 4]
        grid_w, grid_h = int(geometry[r, 5]), int(geometry[r, 6])
        cos, sin, cx, cy = geometry[r, 7], geometry[r, 8], geometry[r, 9], geometry[r, 10]
        count = max(grid_h * grid_w, 1)
        for c in range(c_out):
            for ph in range(ph_n):
                for pw in range(pw_n):
                    ci = (c * ph_n + ph) * pw_n + pw if sensitive else c
                    g = dy[r, c, ph, pw] / count if backward else 0.0
                    total = 0.0
                    for iy in range(grid_h):
                        yy = y0 + ph * bin_h + (iy + 0.5) * bin_h / grid_h
                        for ix in range(grid_w):
                            xx = x0 + pw * bin_w + (ix + 0.5) * bin_w / grid_w
                            x = xx * cos + yy * sin + cx
                            y = yy * cos - xx * sin + cy
                            if y < -1.0 or y > height or x < -1.0 or x > width:
                                continue
                            y = min(max(y, 0.0), height - 1.0)
                            x = min(max(x, 0.0), width - 1.0)
                            yl = min(int(y), height - 1)
                            xl = min(int(x), width - 1)
                            yh = min(yl + 1, height - 1)
                            xh = min(xl + 1, width - 1)
                            ly = y - yl
                            lx = x - xl
                            w1 = (1 - ly) * (1 - lx)
                            w2 = (1 - ly) * lx
                            w3 = ly * (1 - lx)
                            w4 = ly * lx
                            if backward:
                                data[b, ci, yl, xl] += g * w1
                                data[b, ci, yl, xh] += g * w2
                                data[b, ci, yh, xl] += g * w3
                                data[b, ci, yh, xh] += g * w4
                            else:
                                total += (
                                    w1 * data[b, ci, yl, xl]
                                    + w2 * data[b, ci, yl, xh]
                                    + w3 * data[b, ci, yh, xl]
                                    + w4 * data[b, ci, yh, xh]
                                )
                    if not backward:
                        out[r, c, ph, pw] = total / count


def sample_forward(data: np.ndarray, geometry: np.ndarray, out_shape: tuple, sensitive: bool):
    """out (float64) of roi_bins for host arrays."""
    out = np.zeros(out_shape)
    x = np.ascontiguousarray(data, np.float64)
    geo = np.ascontiguousarray(geometry, np.float64)
    roi_bins(x, geo, out, out, sensitive, False)
    return out


def sample_backward(dy: np.ndarray, geometry: np.ndarray, data_shape: tuple, sensitive: bool):
    """d data (float64) of roi_bins for host arrays."""
    dx = np.zeros(data_shape)
    geo = np.ascontiguousarray(geometry, np.float64)
    roi_bins(dx, geo, np.ascontiguousarray(dy, np.float64), dx, sensitive, True)
    return dx


# --- argument checks -------------------------------------------------------------------------

#: the columns of a roi row of ROIAlign, PSROIPooling and DeformablePSROIPooling
ROI_ROW = ("batch index", "x1", "y1", "x2", "y2")


def check_roi_inputs(op: str, data: Any, rois: Any, row: Sequence[str]) -> None:
    """InferError unless `data` is NCHW and `rois` is (R, len(row)), one roi per row with
    the columns `row` names (a shape may be None: unknown)."""
    if data is not None and len(data) != 4:
        raise InferError(f"{op}: input 'data' has shape {shape_str(data)}; expected NCHW (4-D)")
    if rois is not None and (len(rois) != 2 or rois[1] not in (None, len(row))):
        raise InferError(
            f"{op}: input 'rois' has shape {shape_str(rois)}; expected (R, {len(row)}) rows of "
            f"({', '.join(row)})"
        )


def rounded_rois(rois: np.ndarray) -> np.ndarray:
    """A float64 copy of (batch index, x1, y1, x2, y2) rows with the corners rounded half
    away from zero (C's round), as PSROIPooling and DeformablePSROIPooling take them."""
    out = np.array(rois, dtype=np.float64)
    v = out[:, 1:5]
    out[:, 1:5] = np.where(v >= 0, np.floor(v + 0.5), np.ceil(v - 0.5))
    return out


def pooled_hw(op: str, pooled_size: Sequence[int]) -> tuple[int, int]:
    """(height, width) of a pooled_size that must be two positive ints."""
    size = tuple(pooled_size)
    if len(size) != 2 or min(size) < 1:
        raise InferError(f"{op}: pooled_size {size} must be two positive ints (h, w)")
    return size[0], size[1]


# --- registration ----------------------------------------------------------------------------


def register_roi_op(
    op: str,
    *,
    param: type[Parameter],
    describe: str,
    infer_shape: Callable[..., bool],
    forward: Callable[..., list[np.ndarray]],
    backward: Callable[..., list[np.ndarray]],
    data_doc: str,
    rois_doc: str,
) -> None:
    """Register `op` (inputs data and rois, one output) and `_backward_<op>` (inputs dy,
    data, rois; outputs d data and a zero d rois), both computed on the host by the NumPy
    functions forward(params, data, rois) and backward(params, dy, data, rois)."""
    backward_op = f"_backward{op}"
    title = op.removeprefix("_contrib_")

    def gradient(node: Any, ograds: list[Any]) -> list[Any]:
        return make_grad_node(backward_op, node, [ograds[0], *node.inputs])

    forward_compute = host_compute(op, forward)
    (
        register_op(op)
        .describe(describe)
        .set_attr_parser(param)
        .set_num_inputs(2)
        .set_num_outputs(1)
        .set_attr(FListInputNames, lambda attrs: ["data", "rois"])
        .set_attr(FInferShape, infer_shape)
        .set_attr(FInferType, same_float_type(op, ("data", "rois")))
        .set_attr(FCompute_cpu, forward_compute)
        .set_attr(FCompute_gpu, forward_compute)
        .set_attr(FGradient, gradient)
        .add_argument("data", "NDArray-or-Symbol", data_doc)
        .add_argument("rois", "NDArray-or-Symbol", rois_doc)
        .add_arguments(param.fields())
    )
    backward_compute = host_compute(backward_op, backward)
    (
        register_op(backward_op)
        .describe(f"Backward of {title}: inputs (dy, data, rois), outputs (d data, d rois = 0).")
        .set_attr_parser(param)
        .set_num_inputs(3)
        .set_num_outputs(2)
        .set_attr(TIsBackward, True)
        .set_attr(FCompute_cpu, backward_compute)
        .set_attr(FCompute_gpu, backward_compute)
    )
