"""The sampling loop ROIAlign and RROIAlign share: bilinear samples averaged per bin.

Each roi comes as one row of `geometry` (see GEOMETRY): its batch index, the top-left
corner and bin size of its (unrotated) grid, the sample grid per bin, and a rotation
(cos, sin) about a centre (cx, cy). Sample (xx, yy) of the grid lands on the map at

    x = xx cos + yy sin + cx,    y = yy cos - xx sin + cy

(ROIAlign: cos 1, sin 0, centre 0). A sample more than one pixel outside the map counts
0; otherwise it is clamped onto the map and blends its four neighbouring pixels. Bins
average their samples. The backward pass spreads dy / count onto the same pixels with
the same weights.

Kernels (kernel.parallel_for, one body for both devices; the geometry rows are made from
the rois by NumPy on the CPU, by a thread per roi on the GPU: _roi_table_cuda.py).
Forward: one roi bin per item, each sample's pixels and weights found once and applied to
every channel. Backward on the CPU: one input channel per item, walking every roi and bin
that reads that channel, so no two items write the same pixel (bins of overlapping rois
share pixels). Samples accumulate in the output's type, as MXNet's kernels do (the CPU
computes float16 in float32). They replace one serial host loop, which the GPU reached by
copying the feature map to the host and back: 256 rois, 7x7 bins, 2x2 samples over
2x256x50x84 float32 on two cores, forward 120 -> 18 ms, forward and backward 251 -> 80 ms.
Backward on the GPU: one dy element per item, adding atomically (_roi_sampling_cuda.py).

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
from ..kernel import uindex
from ..kernel.launch import NULL, WRITE, flat, is_gpu, req_code, store
from ..param import Parameter
from ..registry import register_op, skip_in_source_locations
from ._host_staged import to_host
from ._index_kernels import half_as_float32, to_ctx, zero
from .contrib_bbox import same_float_type

skip_in_source_locations(__file__)  # registrations name the op's own file

GEOMETRY = ("batch", "x0", "y0", "bin_w", "bin_h", "grid_w", "grid_h", "cos", "sin", "cx", "cy")


_G = len(GEOMETRY)


@kernel.device_function
def sample_at(geo, g, ph, pw, iy, ix, step_h, step_w, height, width):
    """Sample (iy, ix) of bin (ph, pw) of the roi whose geometry row starts at geo[g]
    (step_h, step_w: the bin's size over its sample grid), rotated about the centre onto
    the map: (counts, yl, xl, yh, xh, w1, w2, w3, w4), its four pixels and weights."""
    yy = geo[g + 2] + ph * geo[g + 4] + (iy + 0.5) * step_h
    xx = geo[g + 1] + pw * geo[g + 3] + (ix + 0.5) * step_w
    cos = geo[g + 7]
    sin = geo[g + 8]
    cx = geo[g + 9]
    cy = geo[g + 10]
    x = xx * cos + yy * sin + cx
    y = yy * cos - xx * sin + cy
    if not (y >= -1.0 and y <= height and x >= -1.0 and x <= width):  # NaN too
        return False, 0, 0, 0, 0, 0.0, 0.0, 0.0, 0.0
    y = min(max(y, 0.0), height - 1.0)
    x = min(max(x, 0.0), width - 1.0)
    yl = min(int(y), height - 1)
    xl = min(int(x), width - 1)
    ly = y - yl
    lx = x - xl
    return (
        True, yl, xl, min(yl + 1, height - 1), min(xl + 1, width - 1),
        (1 - ly) * (1 - lx), (1 - ly) * lx, ly * (1 - lx), ly * lx,
    )  # fmt: skip


@kernel.device_function
def zero_channel(dx, ci, n_batch, channels, plane):
    """dx[b, ci] = 0 for every image b: a gradient item that owns channel ci starts so."""
    for b in range(n_batch):
        for k in range(plane):
            dx[uindex((b * channels + ci) * plane + k)] = 0


@kernel.parallel_for
def roi_forward(item, out, data, geo, n_batch, channels, height, width, c_out, ph_n, pw_n,
                sensitive, mode):  # fmt: skip
    """Bin `item` = (r, ph, pw) of every output channel: the mean of its samples (0 for a
    roi whose batch index is out of range). Each sample's pixels and weights are found
    once and applied to every channel (per output they were found again per channel: 3x
    the time). With `sensitive`, bin (ph, pw) of output channel c reads input channel
    (c PH + ph) PW + pw."""
    pw = item % pw_n
    t = item // pw_n
    ph = t % ph_n
    r = t // ph_n
    g = r * _G
    plane = height * width
    grid_w = int(geo[g + 5])
    grid_h = int(geo[g + 6])
    b = int(geo[g])
    first = (r * c_out * ph_n + ph) * pw_n + pw  # out[r, 0, ph, pw]; channels step ph_n pw_n
    step = ph_n * pw_n
    if mode == WRITE or b < 0 or b >= n_batch:
        for c in range(c_out):
            store(out, first + c * step, 0.0, mode)
    if b < 0 or b >= n_batch:
        return
    scale = 1.0 / max(grid_h * grid_w, 1)
    step_h = geo[g + 4] / grid_h
    step_w = geo[g + 3] / grid_w
    for iy in range(grid_h):
        for ix in range(grid_w):
            ok, yl, xl, yh, xh, w1, w2, w3, w4 = sample_at(
                geo, g, ph, pw, iy, ix, step_h, step_w, height, width
            )
            if ok:
                for c in range(c_out):
                    ci = (c * ph_n + ph) * pw_n + pw if sensitive else c
                    base = (b * channels + ci) * plane
                    v = (
                        w1 * data[uindex(base + yl * width + xl)]
                        + w2 * data[uindex(base + yl * width + xh)]
                        + w3 * data[uindex(base + yh * width + xl)]
                        + w4 * data[uindex(base + yh * width + xh)]
                    )
                    out[uindex(first + c * step)] += scale * v


@kernel.parallel_for
def roi_backward(ci, dx, dy, geo, n_rois, n_batch, channels, height, width, c_out, ph_n, pw_n,
                 sensitive, mode):  # fmt: skip
    """Input channel `ci` (of every image): dy / count of each bin reading it, spread onto
    its samples' pixels. Only this item writes channel ci, so overlapping rois are safe
    without atomics (the CPU's backward; the GPU's is _roi_sampling_cuda.roi_backward_bins)."""
    plane = height * width
    if mode == WRITE:
        zero_channel(dx, ci, n_batch, channels, plane)
    c = ci
    ph0, ph1, pw0, pw1 = 0, ph_n, 0, pw_n
    if sensitive:  # channel ci is read by one bin of one output channel
        c = ci // (ph_n * pw_n)
        ph0 = (ci // pw_n) % ph_n
        pw0 = ci % pw_n
        ph1 = ph0 + 1
        pw1 = pw0 + 1
    for r in range(n_rois):
        g = r * _G
        b = int(geo[g])
        if b < 0 or b >= n_batch:
            continue
        base = (b * channels + ci) * plane
        grid_w = int(geo[g + 5])
        grid_h = int(geo[g + 6])
        count = max(grid_h * grid_w, 1)
        step_h = geo[g + 4] / grid_h
        step_w = geo[g + 3] / grid_w
        for ph in range(ph0, ph1):
            for pw in range(pw0, pw1):
                d = dy[uindex(((r * c_out + c) * ph_n + ph) * pw_n + pw)] / count
                for iy in range(grid_h):
                    for ix in range(grid_w):
                        ok, yl, xl, yh, xh, w1, w2, w3, w4 = sample_at(
                            geo, g, ph, pw, iy, ix, step_h, step_w, height, width
                        )
                        if ok:
                            dx[uindex(base + yl * width + xl)] += d * w1
                            dx[uindex(base + yl * width + xh)] += d * w2
                            dx[uindex(base + yh * width + xl)] += d * w3
                            dx[uindex(base + yh * width + xh)] += d * w4


def table_on(ctx: Any, table: Callable[..., np.ndarray], p: Any, rois: Any,
             device_table: Callable[..., Any] | None = None) -> Any:  # fmt: skip
    """table(p, rois) as a flat float64 array on ctx: on a GPU device_table(ctx, p, rois)
    makes it there if given, else the rois are copied to the host for table."""
    if device_table is not None and is_gpu(ctx):
        return device_table(ctx, p, rois)
    host = to_host(ctx, rois) if is_gpu(ctx) else rois
    return to_ctx(ctx, np.ascontiguousarray(table(p, host), np.float64).reshape(-1))


def roi_kernel_computes(
    op: str,
    table: Callable[..., np.ndarray],
    forward_kernel: Any,
    backward_kernel: Any,
    extra: Callable[[Any], tuple[Any, ...]],
    gpu_backward_kernel: Any = None,
    *,
    device_table: Callable[..., Any] | None = None,
) -> tuple[Any, Any]:
    """FCompute of `op` and of its backward from parallel_for kernels:

        forward_kernel(bin, out, data, table, N, C, H, W, C', PH, PW, *extra, mode)
            over the R x PH x PW bins (each bin writes every output channel);
        backward_kernel(ci, dx, dy, table, R, N, C, H, W, C', PH, PW, *extra, mode)
            over the C input channels (only item ci writes channel ci);
        gpu_backward_kernel(i, dx, ...the same...) on a GPU, if given, over the dy
            elements instead, adding atomically into dx (zeroed first for a write).

    table(params, host rois) is the rois' per-row table, device_table(ctx, params, rois)
    the same made on a GPU (table_on); extra(params) the kernels' own parameters. The
    rois get a zero gradient, as in MXNet."""

    def forward(attrs: Any, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]):
        mode = req_code(op, req[0])
        data, rois = inputs
        out = outputs[0]
        if mode == NULL or out.size == 0:
            return
        rows = table_on(ctx, table, attrs.parsed, rois, device_table)
        with half_as_float32(ctx, [out], [mode], [data]) as ([o], [d]):
            args = (flat(o), flat(d), rows, *data.shape, *out.shape[1:], *extra(attrs.parsed))
            bins = out.shape[0] * out.shape[2] * out.shape[3]
            forward_kernel.launch(ctx, bins, *args, mode, work=out.size)

    def backward(attrs: Any, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]):
        modes = [req_code(f"_backward{op}", r) for r in req]
        dy, data, rois = inputs
        if modes[1] == WRITE:
            zero(ctx, outputs[1])
        if modes[0] == NULL or data.size == 0:
            return
        rows = table_on(ctx, table, attrs.parsed, rois, device_table)
        if gpu_backward_kernel is not None and is_gpu(ctx):
            from nnvmpy.ops._roi_sampling_cuda import backward_bins_gpu

            args = (rows, rois.shape[0], *data.shape, *dy.shape[1:], *extra(attrs.parsed))
            backward_bins_gpu(ctx, gpu_backward_kernel, outputs[0], dy, args, modes[0])
            return
        with half_as_float32(ctx, outputs[:1], modes[:1], [dy]) as ([d], [g]):
            args = (flat(d), flat(g), rows, rois.shape[0], *data.shape, *dy.shape[1:])
            backward_kernel.launch(ctx, data.shape[1], *args, *extra(attrs.parsed), modes[0],
                                   work=dy.size + data.size)  # fmt: skip

    return forward, backward


def _sensitive(p: Any) -> tuple[bool]:
    return (bool(getattr(p, "position_sensitive", False)),)


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
    away from zero (C's round), as PSROIPooling and DeformablePSROIPooling take them,
    and the batch index as `batch_indices` gives it."""
    out = np.array(rois, dtype=np.float64)
    v = out[:, 1:5]
    out[:, 1:5] = np.where(v >= 0, np.floor(v + 0.5), np.ceil(v - 0.5))
    out[:, 0] = batch_indices(out[:, 0])
    return out


def batch_indices(v: np.ndarray) -> np.ndarray:
    """The rois' batch-index column truncated (C's cast), as the kernels' int() reads it;
    NaN, infinite or beyond-int32 entries give -1 (no image: the roi pools zeros), since
    a kernel's int() of them is undefined."""
    ok = np.isfinite(v) & (np.abs(v) < 2.0**31)
    return np.where(ok, np.trunc(np.where(ok, v, 0.0)), -1.0)


#: most samples per side of a roi bin (a sampling grid of ceil(bin size))
MAX_GRID = 1024


def sample_grid(bin_size: np.ndarray) -> np.ndarray:
    """ceil(bin_size) samples per bin side, none for a NaN or negative size and at most
    MAX_GRID: a bin over 1024 pixels wide lies mostly off any feature map, and an uncapped
    grid of a huge roi would loop for ever (the kernels' int() of a grid past 2^63, or of
    an aligned roi's -inf, is undefined; a grid <= 0 samples nothing either way)."""
    grid = np.ceil(np.where(np.isnan(bin_size), 0.0, bin_size))
    return np.clip(grid, 0.0, MAX_GRID)


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
    data_doc: str,
    rois_doc: str,
    geometry: Callable[..., np.ndarray] | None = None,
    kernels: tuple[Any, ...] | None = None,
    device_table: Callable[..., Any] | None = None,
) -> None:
    """Register `op` (inputs data and rois, one output) and `_backward_<op>` (inputs dy,
    data, rois; outputs d data and a zero d rois). Computed by the sampling kernels, given
    geometry(params, rois) -> GEOMETRY rows; or by other kernels, given kernels = (table,
    forward_kernel, backward_kernel, extra[, gpu_backward_kernel]) as roi_kernel_computes
    takes them. device_table(ctx, params, rois): the table made on a GPU."""
    backward_op = f"_backward{op}"
    title = op.removeprefix("_contrib_")

    def gradient(node: Any, ograds: list[Any]) -> list[Any]:
        return make_grad_node(backward_op, node, [ograds[0], *node.inputs])

    if geometry is not None:
        from nnvmpy.ops._roi_sampling_cuda import roi_backward_bins

        kernels = (geometry, roi_forward, roi_backward, _sensitive, roi_backward_bins)
    if kernels is None:
        raise TypeError(f"register_roi_op({op!r}): give geometry or kernels")
    forward_compute, backward_compute = roi_kernel_computes(op, *kernels, device_table=device_table)
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
