"""Bounding-box contrib ops (MXNet's bounding_box.cc), served as nd.contrib.X / sym.contrib.X.

- box_iou(lhs (..., 4), rhs (..., 4)) -> (lhs.shape[:-1] + rhs.shape[:-1]): the
  intersection over union of every pair; 0 where the boxes do not intersect. Box areas
  with a negative width or height count as 0. Zero gradient.
- box_nms(data (..., N, W)): per batch, keep the boxes whose score > valid_thresh (and,
  when id_index >= 0, whose class id != background_id), sort them by descending score
  (ties keep input order), take the first topk, and walk them in that order: a box still
  kept suppresses every later kept box (of its class, unless force_suppress or
  id_index < 0) whose IoU with it is > overlap_thresh. The kept boxes fill the front of
  the output in that order, the other rows are -1. A hidden second output records, for
  every output row, the flat index of its input box (-1: none); the gradient copies dy of
  each output row back to its input box, 0 elsewhere. topk == 0 returns the input
  unchanged. out_format != in_format converts the output rows, skipping rows whose first
  coordinate is negative (the -1 padding; MXNet skips them the same way).
  Alias: box_non_maximum_suppression.
- bipartite_matching(data (..., N, M)) -> (..., N) column of each row, (..., M) row of
  each column (-1: unmatched): greedy matching in order of descending score (ascending
  when is_ascend; ties keep input order), stopping at the first score not better than
  threshold; topk > 0 stops after the match that makes the count exceed topk, as MXNet's
  kernel does (so up to topk + 1 matches). Zero gradient.
- box_encode(samples (B, N), matches (B, N), anchors (B, N, 4), refs (B, M, 4), means (4,),
  stds (4,)) -> targets, masks (B, N, 4): for a positive sample (> 0.5) the reference box
  refs[b, matches[b, i]] relative to anchor i, from the centres and sizes (corner input):
  ((rx - ax) / aw - m0) / s0, ((ry - ay) / ah - m1) / s1, (log(rw / aw) - m2) / s2,
  (log(rh / ah) - m3) / s3, mask 1; other samples get 0 and mask 0. Zero gradient.
- box_decode(data (B, N, 4), anchors (1, N, 4)) -> corner boxes (B, N, 4): the inverse,
  x = d0 * std0 * aw + ax, y likewise, half width = exp(d2 * std2) * aw / 2 (d2 * std2
  capped at `clip` when clip > 0), half height likewise; anchors in `format`. Zero gradient.

All run on the host on the CPU (NumPy, numba for the sequential loops), as device
kernels on a GPU (_nms_device, _bbox_device). Float types only, as in MXNet.
"""

from __future__ import annotations

from collections.abc import Sequence
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
    FListOutputNames,
    FNumVisibleOutputs,
    TIsBackward,
)
from ..base import InferError
from ..graph.grad import make_grad_node, make_zero_grad_nodes
from ..graph.node import NodeEntry
from ..infer import shape_assign, shape_is_known, shape_str, type_assign
from ..kernel.launch import req_code
from ..param import Parameter, field
from ..registry import NodeAttrs, register_op
from . import _bbox_device, _nms_device
from ._host_staged import host_compute
from ._ranking import top_order

FORMATS = {"corner": 0, "center": 1}
FLOAT_TYPES = (np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64))


# --- shared plumbing --------------------------------------------------------------------------


def float_type(op: str, what: str, dtype: Any) -> None:
    """InferError unless dtype is a float type (MXNet's MSHADOW_REAL_TYPE_SWITCH)."""
    if dtype is not None and np.dtype(dtype) not in FLOAT_TYPES:
        raise InferError(
            f"{op}: {what} has dtype {np.dtype(dtype)}; expected float16, float32 or float64"
        )


def same_float_type(op: str, in_names: Sequence[str]) -> Any:
    """FInferType: every input and output shares one float dtype."""

    def infer(attrs: NodeAttrs, in_types: list[Any], out_types: list[Any]) -> bool:
        known = next((t for t in [*in_types, *out_types] if t is not None), None)
        if known is None:
            return False
        for i, name in enumerate(in_names):
            float_type(op, f"input '{name}'", in_types[i])
        float_type(op, f"input '{in_names[0]}'", known)
        for i, name in enumerate(in_names):
            type_assign(in_types, i, known, f"{op}: input '{name}'")
        for j in range(len(out_types)):
            type_assign(out_types, j, known, f"{op}: output {j}")
        return True

    return infer


def _device_compute(op: str, run: Any) -> Any:
    """FCompute<gpu> calling one of _bbox_device's run(ctx, params, inputs, outputs,
    write modes)."""

    def compute(attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any],
                outputs: list[Any]) -> None:  # fmt: skip
        run(ctx, attrs.parsed, inputs, outputs, [req_code(op, r) for r in req])

    return compute


def _check_ndim(op: str, what: str, shape: Any, at_least: int) -> None:
    if shape is not None and len(shape) < at_least:
        raise InferError(
            f"{op}: {what} has shape {shape_str(shape)}; expected at least {at_least} dimensions"
        )


def _corners(boxes: np.ndarray, fmt: int) -> tuple[np.ndarray, ...]:
    """(left, top, right, bottom) of boxes (..., 4) in either encoding, in their dtype."""
    a, b, c, d = (boxes[..., i] for i in range(4))
    if fmt == FORMATS["corner"]:
        return a, b, c, d
    hw, hh = c / 2, d / 2
    return a - hw, b - hh, a + hw, b + hh


def _areas(boxes: np.ndarray, fmt: int) -> np.ndarray:
    """width * height, 0 for a negative width or height (MXNet's BoxArea)."""
    if fmt == FORMATS["corner"]:
        w, h = boxes[..., 2] - boxes[..., 0], boxes[..., 3] - boxes[..., 1]
    else:
        w, h = boxes[..., 2], boxes[..., 3]
    area = w * h
    return np.where((w < 0) | (h < 0), np.zeros_like(area), area)


def _zero_if_nonpositive(x: np.ndarray) -> np.ndarray:
    return np.where(x > 0, x, np.zeros_like(x))


# --- box_iou ----------------------------------------------------------------------------------


class BoxOverlapParam(Parameter):
    format = field(
        str,
        default="corner",
        enum=FORMATS,
        describe='The box encoding type. \n "corner" means boxes are encoded as [xmin, ymin, '
        'xmax, ymax], "center" means boxes are encodes as [x, y, width, height].',
    )


def box_iou_np(lhs: np.ndarray, rhs: np.ndarray, fmt: str = "corner") -> np.ndarray:
    """IoU of every box of lhs (..., 4) with every box of rhs (..., 4), in lhs's dtype."""
    code = FORMATS[fmt]
    a = lhs.reshape(-1, 4)[:, None, :]
    b = rhs.reshape(-1, 4)[None, :, :]
    al, at, ar, ab = _corners(a, code)
    bl, bt, br, bb = _corners(b, code)
    iw = _zero_if_nonpositive(np.minimum(ar, br) - np.maximum(al, bl))
    ih = _zero_if_nonpositive(np.minimum(ab, bb) - np.maximum(at, bt))
    inter = iw * ih
    union = _areas(a, code) + _areas(b, code) - inter
    with np.errstate(divide="ignore", invalid="ignore"):
        iou = np.where(inter > 0, inter / np.where(inter > 0, union, 1), 0)
    return iou.astype(lhs.dtype).reshape(lhs.shape[:-1] + rhs.shape[:-1])


def _box_iou_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    op = "_contrib_box_iou"
    for i, name in enumerate(("lhs", "rhs")):
        s = in_shapes[i]
        _check_ndim(op, f"input '{name}'", s, 2)
        if s is not None and s[-1] not in (4, None):
            raise InferError(
                f"{op}: input '{name}' has shape {shape_str(s)}; its last dimension must be 4 "
                "(one box)"
            )
    lhs, rhs = in_shapes
    if lhs is None or rhs is None:
        return False
    shape_assign(out_shapes, 0, tuple(lhs[:-1]) + tuple(rhs[:-1]), f"{op}: output")
    return shape_is_known(lhs) and shape_is_known(rhs)


(
    register_op("_contrib_box_iou")
    .describe(
        "Bounding box overlap of two arrays.\n\n"
        "The overlap is defined as Intersection-over-Union, aka, IOU.\n"
        "- lhs: (a_1, a_2, ..., a_n, 4) array\n"
        "- rhs: (b_1, b_2, ..., b_n, 4) array\n"
        "- output: (a_1, a_2, ..., a_n, b_1, b_2, ..., b_n) array\n\n"
        "Example::\n\n"
        "  x = [[0.5, 0.5, 1.0, 1.0], [0.0, 0.0, 0.5, 0.5]]\n"
        "  y = [[0.25, 0.25, 0.75, 0.75]]\n"
        "  box_iou(x, y, format='corner') = [[0.1428], [0.1428]]\n"
    )
    .set_attr_parser(BoxOverlapParam)
    .set_num_inputs(2)
    .set_num_outputs(1)
    .set_attr(FListInputNames, lambda attrs: ["lhs", "rhs"])
    .set_attr(FInferShape, _box_iou_shape)
    .set_attr(FInferType, same_float_type("_contrib_box_iou", ("lhs", "rhs")))
    .set_attr(
        FCompute_cpu,
        host_compute("_contrib_box_iou", lambda p, a, b: [box_iou_np(a, b, p.format)]),
    )
    .set_attr(FCompute_gpu, _device_compute("_contrib_box_iou", _bbox_device.box_iou))
    .set_attr(FGradient, make_zero_grad_nodes)
    .add_argument("lhs", "NDArray-or-Symbol", "The first input")
    .add_argument("rhs", "NDArray-or-Symbol", "The second input")
    .add_arguments(BoxOverlapParam.fields())
)


# --- box_nms ----------------------------------------------------------------------------------


class BoxNMSParam(Parameter):
    overlap_thresh = field(
        float,
        default=0.5,
        describe="Overlapping(IoU) threshold to suppress object with smaller score.",
    )
    valid_thresh = field(
        float,
        default=0.0,
        describe="Filter input boxes to those whose scores greater than valid_thresh.",
    )
    topk = field(
        int,
        default=-1,
        describe="Apply nms to topk boxes with descending scores, -1 to no restriction.",
    )
    coord_start = field(int, default=2, describe="Start index of the consecutive 4 coordinates.")
    score_index = field(int, default=1, describe="Index of the scores/confidence of boxes.")
    id_index = field(
        int, default=-1, describe="Optional, index of the class categories, -1 to disable."
    )
    background_id = field(
        int, default=-1, describe="Optional, id of the background class which will be ignored "
        "in nms."
    )  # fmt: skip
    force_suppress = field(
        bool,
        default=False,
        describe="Optional, if set false and id_index is provided, nms will only apply to "
        "boxes belongs to the same category",
    )
    in_format = field(
        str,
        default="corner",
        enum=FORMATS,
        describe='The input box encoding type. \n "corner" means boxes are encoded as [xmin, '
        'ymin, xmax, ymax], "center" means boxes are encodes as [x, y, width, height].',
    )
    out_format = field(
        str,
        default="corner",
        enum=FORMATS,
        describe='The output box encoding type. \n "corner" means boxes are encoded as [xmin, '
        'ymin, xmax, ymax], "center" means boxes are encodes as [x, y, width, height].',
    )


_NMS = "_contrib_box_nms"


def _check_nms_columns(p: BoxNMSParam, width: int) -> None:
    """InferError naming the parameter when the columns do not fit a row of `width`."""
    cs, ce = p.coord_start, p.coord_start + 3
    need = 6 if p.id_index > 0 else 5
    if width < need:
        raise InferError(
            f"{_NMS}: rows of 'data' have {width} elements; expected at least {need} "
            "(score and 4 coordinates, plus the class id when id_index > 0)"
        )
    if not (cs >= 0 and ce < width):
        raise InferError(
            f"{_NMS}: coordinates [{cs}, {ce}] (coord_start={cs}) are out of range for rows of "
            f"{width} elements"
        )
    for name in ("score_index", "id_index"):
        idx = getattr(p, name)
        if name == "id_index" and idx < 0:
            continue
        if not 0 <= idx < width:
            raise InferError(f"{_NMS}: {name}={idx} is out of range for rows of {width} elements")
        if cs <= idx <= ce:
            raise InferError(
                f"{_NMS}: {name}={idx} overlaps the coordinates [{cs}, {ce}] (coord_start={cs})"
            )
    if p.id_index >= 0 and p.id_index == p.score_index:
        raise InferError(f"{_NMS}: id_index and score_index are both {p.id_index}")


def _box_nms_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    s = in_shapes[0] if in_shapes[0] is not None else out_shapes[0]
    if s is None:
        return False
    _check_ndim(_NMS, "input 'data'", s, 2)
    if s[-1] is not None:
        _check_nms_columns(attrs.parsed, s[-1])
    shape_assign(in_shapes, 0, s, f"{_NMS}: input 'data'")
    shape_assign(out_shapes, 0, s, f"{_NMS}: output 'output'")
    shape_assign(out_shapes, 1, (*tuple(s[:-1]), 1), f"{_NMS}: output 'record'")
    return shape_is_known(in_shapes[0])


@kernel.cpu_kernel(parallel=False)
def _suppress(boxes, ids, thresh, use_ids, center):  # pragma: no cover - compiled
    """Keep flags of boxes (k, 4) sorted by score: greedy NMS, IoU > thresh suppresses."""
    k = boxes.shape[0]
    keep = np.ones(k, np.bool_)
    left = np.empty(k, boxes.dtype)
    top = np.empty(k, boxes.dtype)
    right = np.empty(k, boxes.dtype)
    bottom = np.empty(k, boxes.dtype)
    area = np.empty(k, boxes.dtype)
    for i in range(k):
        a, b, c, d = boxes[i, 0], boxes[i, 1], boxes[i, 2], boxes[i, 3]
        if center:
            left[i], top[i], right[i], bottom[i] = a - c / 2, b - d / 2, a + c / 2, b + d / 2
            w, h = c, d
        else:
            left[i], top[i], right[i], bottom[i] = a, b, c, d
            w, h = c - a, d - b
        area[i] = 0 if (w < 0 or h < 0) else w * h
    for i in range(k):
        if not keep[i]:
            continue
        for j in range(i + 1, k):
            if not keep[j] or (use_ids and ids[j] != ids[i]):
                continue
            iw = min(right[i], right[j]) - max(left[i], left[j])
            ih = min(bottom[i], bottom[j]) - max(top[i], top[j])
            inter = max(iw, 0.0) * max(ih, 0.0)
            if inter / (area[i] + area[j] - inter) > thresh:  # NaN (0 / 0) keeps the box
                keep[j] = False
    return keep


def _compute_dtype(a: np.ndarray) -> np.ndarray:
    return a.astype(np.float32) if a.dtype == np.float16 else a


def _convert_rows(rows: np.ndarray, cs: int, to_center: bool) -> None:
    """Re-encode the 4 coordinates from cs in place, skipping rows whose first one is < 0."""
    box = rows[:, cs : cs + 4]
    todo = box[:, 0] >= 0
    a, b, c, d = (box[todo, i].copy() for i in range(4))
    if to_center:
        box[todo] = np.stack([(a + c) / 2, (b + d) / 2, c - a, d - b], axis=1)
    else:
        hw, hh = c / 2, d / 2
        box[todo] = np.stack([a - hw, b - hh, a + hw, b + hh], axis=1)


def box_nms_np(p: BoxNMSParam, data: np.ndarray) -> list[np.ndarray]:
    """(output, record) of box_nms for data (..., N, W); see the module docstring."""
    n, width = data.shape[-2], data.shape[-1]
    x = data.reshape(-1, n, width)
    batches = x.shape[0]
    record = np.full((batches, n), -1, dtype=data.dtype)
    topk = n if p.topk < 0 else min(n, p.topk)
    if topk < 1:
        record[...] = np.arange(batches * n).reshape(batches, n)
        return [data.copy(), record.reshape((*data.shape[:-1], 1))]
    out = np.full_like(x, -1)
    cs = p.coord_start
    center = p.in_format == "center"
    use_ids = p.id_index >= 0 and not p.force_suppress
    for b in range(batches):
        rows = x[b]
        scores = rows[:, p.score_index]
        valid = scores > p.valid_thresh
        if p.id_index >= 0:
            valid &= rows[:, p.id_index] != p.background_id
        idx = np.flatnonzero(valid)
        order = idx[top_order(scores[idx], topk)]
        ids = (
            rows[order, p.id_index].astype(np.int64)
            if p.id_index >= 0
            else np.zeros(len(order), np.int64)
        )
        boxes = np.ascontiguousarray(_compute_dtype(rows[order, cs : cs + 4]))
        kept = order[_suppress(boxes, ids, p.overlap_thresh, use_ids, center)]
        out[b, : len(kept)] = rows[kept]
        record[b, : len(kept)] = b * n + kept
    if p.in_format != p.out_format:
        _convert_rows(out.reshape(-1, width), cs, p.out_format == "center")
    return [out.reshape(data.shape), record.reshape((*data.shape[:-1], 1))]


def box_nms_grad_np(p: BoxNMSParam, dy: np.ndarray, record: np.ndarray) -> list[np.ndarray]:
    """d data: row record[i] of the input gets dy's row i; rows no output came from get 0."""
    width = dy.shape[-1]
    rows = dy.reshape(-1, width)
    where = record.reshape(-1).astype(np.int64)
    grad = np.zeros_like(rows)
    hit = where >= 0
    grad[where[hit]] = rows[hit]
    return [grad.reshape(dy.shape)]


def _box_nms_gradient(node: Any, ograds: list[Any]) -> list[Any]:
    return make_grad_node("_backward_contrib_box_nms", node, [ograds[0], NodeEntry(node, 1)])


def _nms_gpu(attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
             ) -> None:  # fmt: skip
    modes = [req_code(_NMS, r) for r in req]
    _nms_device.box_nms(ctx, attrs.parsed, inputs[0], outputs[0], outputs[1], modes)


def _nms_grad_gpu(attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any],
                  outputs: list[Any]) -> None:  # fmt: skip
    _nms_device.box_nms_grad(ctx, inputs[0], inputs[1], outputs[0], req_code(_NMS, req[0]))


_nms_compute = host_compute(_NMS, box_nms_np)
(
    register_op(_NMS)
    .describe(
        "Apply non-maximum suppression to input.\n\n"
        "The output will be sorted in descending order according to `score`. Boxes with "
        "overlaps larger than `overlap_thresh`, smaller scores and background boxes will be "
        "removed and filled with -1, the corresponding position will be recorded for "
        "backward propogation.\n\n"
        "During back-propagation, the gradient will be copied to the original position "
        "according to the input index. For positions that have been suppressed, the "
        "in_grad will be assigned 0.\n"
        "In summary, gradients are sticked to its boxes, will either be moved or discarded "
        "according to its original index in input.\n\n"
        "Input requirements::\n\n"
        "  1. Input tensor have at least 2 dimensions, (n, k), any higher dims will be "
        "regarded as batch, e.g. (a, b, c, d, n, k) == (a*b*c*d, n, k)\n"
        "  2. n is the number of boxes in each batch\n"
        "  3. k is the width of each box item.\n\n"
        "By default, a box is [id, score, xmin, ymin, xmax, ymax, ...], additional elements "
        "are allowed.\n\n"
        "- `id_index`: optional, use -1 to ignore, useful if `force_suppress=False`, which "
        "means we will skip highly overlapped boxes if one is `apple` while the other is "
        "`car`.\n"
        "- `background_id`: optional, default=-1, class id for background boxes, useful when "
        "`id_index >= 0` which means boxes with background id will be filtered before nms.\n"
        "- `coord_start`: required, default=2, the starting index of the 4 coordinates.\n"
        "- `score_index`: required, default=1, box score/confidence.\n"
        "- `in_format` and `out_format`: default='corner', specify in/out box formats.\n\n"
        "Example::\n\n"
        "  x = [[0, 0.5, 0.1, 0.1, 0.2, 0.2], [1, 0.4, 0.1, 0.1, 0.2, 0.2],\n"
        "       [0, 0.3, 0.1, 0.1, 0.14, 0.14], [2, 0.6, 0.5, 0.5, 0.7, 0.8]]\n"
        "  box_nms(x, overlap_thresh=0.1, coord_start=2, score_index=1, id_index=0,\n"
        "      force_suppress=True, in_format='corner', out_typ='corner') =\n"
        "      [[2, 0.6, 0.5, 0.5, 0.7, 0.8], [0, 0.5, 0.1, 0.1, 0.2, 0.2],\n"
        "       [-1, -1, -1, -1, -1, -1], [-1, -1, -1, -1, -1, -1]]\n"
    )
    .set_attr_parser(BoxNMSParam)
    .set_num_inputs(1)
    .set_num_outputs(2)
    .set_attr(FListInputNames, lambda attrs: ["data"])
    .set_attr(FListOutputNames, lambda attrs: ["output", "record"])
    .set_attr(FNumVisibleOutputs, lambda attrs: 1)
    .set_attr(FInferShape, _box_nms_shape)
    .set_attr(FInferType, same_float_type(_NMS, ("data",)))
    .set_attr(FCompute_cpu, _nms_compute)
    .set_attr(FCompute_gpu, _nms_gpu)
    .set_attr(FGradient, _box_nms_gradient)
    .add_argument("data", "NDArray-or-Symbol", "The input")
    .add_arguments(BoxNMSParam.fields())
)
_nms_grad_compute = host_compute("_backward_contrib_box_nms", box_nms_grad_np)
(
    register_op("_backward_contrib_box_nms")
    .describe("Backward of box_nms: inputs (dy, record), output d data.")
    .set_attr_parser(BoxNMSParam)
    .set_num_inputs(2)
    .set_num_outputs(1)
    .set_attr(TIsBackward, True)
    .set_attr(FCompute_cpu, _nms_grad_compute)
    .set_attr(FCompute_gpu, _nms_grad_gpu)
)


# --- bipartite_matching -----------------------------------------------------------------------


class BipartiteMatchingParam(Parameter):
    is_ascend = field(
        bool,
        default=False,
        describe="Use ascend order for scores instead of descending. Please set threshold "
        "accordingly.",
    )
    threshold = field(
        float,
        describe="Ignore matching when score < thresh, if is_ascend=false, or ignore score > "
        "thresh, if is_ascend=true.",
    )
    topk = field(
        int, default=-1, describe="Limit the number of matches to topk, set -1 for no limit"
    )


@kernel.cpu_kernel(parallel=False)
def _greedy_match(order, scores, ncol, threshold, ascend, topk, rows, cols):  # pragma: no cover
    """Match (row, col) pairs in `order` while both are free and the score passes."""
    count = 0
    for t in range(order.shape[0]):
        j = order[t]
        r = j // ncol
        c = j - r * ncol
        if rows[r] != -1 or cols[c] != -1:
            continue
        s = scores[j]
        if not ((not ascend and s > threshold) or (ascend and s < threshold)):
            break  # sorted: every later score is worse
        rows[r] = c
        cols[c] = r
        count += 1
        if topk > 0 and count > topk:
            break


def bipartite_matching_np(p: BipartiteMatchingParam, data: np.ndarray) -> list[np.ndarray]:
    """(row markers, column markers) of bipartite_matching; see the module docstring."""
    nrow, ncol = data.shape[-2], data.shape[-1]
    x = _compute_dtype(data).reshape(-1, nrow * ncol)
    rows = np.full((x.shape[0], nrow), -1, np.int64)
    cols = np.full((x.shape[0], ncol), -1, np.int64)
    for b in range(x.shape[0]):
        s = np.ascontiguousarray(x[b])
        order = np.argsort(s if p.is_ascend else -s, kind="stable")
        _greedy_match(order, s, ncol, p.threshold, p.is_ascend, p.topk, rows[b], cols[b])
    lead = data.shape[:-2]
    return [
        rows.astype(data.dtype).reshape((*lead, nrow)),
        cols.astype(data.dtype).reshape((*lead, ncol)),
    ]


def _matching_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    op = "_contrib_bipartite_matching"
    s = in_shapes[0]
    if s is None:
        return False
    _check_ndim(op, "input 'data'", s, 2)
    shape_assign(out_shapes, 0, tuple(s[:-1]), f"{op}: output 0 (row matches)")
    shape_assign(out_shapes, 1, (*tuple(s[:-2]), s[-1]), f"{op}: output 1 (column matches)")
    return shape_is_known(s)


_match_compute = host_compute("_contrib_bipartite_matching", bipartite_matching_np)
(
    register_op("_contrib_bipartite_matching")
    .describe(
        "Compute bipartite matching.\n"
        "  The matching is performed on score matrix with shape [B, N, M]\n"
        "  - B: batch_size\n"
        "  - N: number of rows to match\n"
        "  - M: number of columns as reference to be matched against.\n\n"
        "  Returns:\n"
        "  x : matched column indices. -1 indicating non-matched elements in rows.\n"
        "  y : matched row indices.\n\n"
        "  Note::\n\n"
        "    Zero gradients are back-propagated in this op for now.\n\n"
        "  Example::\n\n"
        "    s = [[0.5, 0.6], [0.1, 0.2], [0.3, 0.4]]\n"
        "    x, y = bipartite_matching(x, threshold=1e-12, is_ascend=False)\n"
        "    x = [1, -1, 0]\n"
        "    y = [2, 0]\n"
    )
    .set_attr_parser(BipartiteMatchingParam)
    .set_num_inputs(1)
    .set_num_outputs(2)
    .set_attr(FListInputNames, lambda attrs: ["data"])
    .set_attr(FInferShape, _matching_shape)
    .set_attr(FInferType, same_float_type("_contrib_bipartite_matching", ("data",)))
    .set_attr(FCompute_cpu, _match_compute)
    .set_attr(
        FCompute_gpu,
        _device_compute("_contrib_bipartite_matching", _bbox_device.bipartite_matching),
    )
    .set_attr(FGradient, make_zero_grad_nodes)
    .add_argument("data", "NDArray-or-Symbol", "The input")
    .add_arguments(BipartiteMatchingParam.fields())
)


# --- box_encode / box_decode ------------------------------------------------------------------


def _centres(boxes: np.ndarray) -> tuple[np.ndarray, ...]:
    """(x, y, width, height) of corner boxes (..., 4)."""
    w = boxes[..., 2] - boxes[..., 0]
    h = boxes[..., 3] - boxes[..., 1]
    return boxes[..., 0] + w / 2, boxes[..., 1] + h / 2, w, h


def box_encode_np(
    p: Any, samples: np.ndarray, matches: np.ndarray, anchors: np.ndarray, refs: np.ndarray,
    means: np.ndarray, stds: np.ndarray,
) -> list[np.ndarray]:  # fmt: skip
    """(targets, masks) of box_encode; see the module docstring."""
    batch = np.arange(refs.shape[0])[:, None]
    idx = np.clip(matches.astype(np.int64), 0, refs.shape[1] - 1)
    rx, ry, rw, rh = _centres(refs[batch, idx])
    ax, ay, aw, ah = _centres(anchors)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.stack([(rx - ax) / aw, (ry - ay) / ah, np.log(rw / aw), np.log(rh / ah)], axis=-1)
        t = (t - means) / stds
    positive = (samples > 0.5)[..., None]
    zero = np.zeros((), anchors.dtype)
    targets = np.where(positive, t, zero).astype(anchors.dtype)
    masks = np.broadcast_to(positive, targets.shape).astype(anchors.dtype)
    return [targets, masks]


def _box_encode_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    op = "_contrib_box_encode"
    samples, _matches, anchors, refs, _means, _stds = in_shapes
    if samples is not None:
        _check_ndim(op, "input 'samples'", samples, 2)
        if len(samples) != 2:
            raise InferError(
                f"{op}: input 'samples' has shape {shape_str(samples)}; expected (B, N)"
            )
        shape_assign(in_shapes, 1, samples, f"{op}: input 'matches'")
        shape_assign(in_shapes, 2, (*tuple(samples), 4), f"{op}: input 'anchors'")
    for i, name in ((4, "means"), (5, "stds")):
        shape_assign(in_shapes, i, (4,), f"{op}: input '{name}'")
    if refs is not None and (len(refs) != 3 or refs[-1] not in (4, None)):
        raise InferError(f"{op}: input 'refs' has shape {shape_str(refs)}; expected (B, M, 4)")
    anchors = in_shapes[2]
    if anchors is None:
        return False
    if len(anchors) != 3 or anchors[-1] not in (4, None):
        raise InferError(
            f"{op}: input 'anchors' has shape {shape_str(anchors)}; expected (B, N, 4)"
        )
    shape_assign(out_shapes, 0, anchors, f"{op}: output 'targets'")
    shape_assign(out_shapes, 1, anchors, f"{op}: output 'masks'")
    return all(shape_is_known(s) for s in in_shapes)


_ENCODE_INPUTS = ("samples", "matches", "anchors", "refs", "means", "stds")
_encode_compute = host_compute("_contrib_box_encode", box_encode_np)
(
    register_op("_contrib_box_encode")
    .describe(
        "Encode bounding boxes training target with normalized center offsets.\n"
        "    Input bounding boxes are using corner type: `x_{min}, y_{min}, x_{max}, y_{max}`."
    )
    .set_num_inputs(6)
    .set_num_outputs(2)
    .set_attr(FListInputNames, lambda attrs: list(_ENCODE_INPUTS))
    .set_attr(FInferShape, _box_encode_shape)
    .set_attr(FInferType, same_float_type("_contrib_box_encode", _ENCODE_INPUTS))
    .set_attr(FCompute_cpu, _encode_compute)
    .set_attr(FCompute_gpu, _device_compute("_contrib_box_encode", _bbox_device.box_encode))
    .set_attr(FGradient, make_zero_grad_nodes)
    .add_argument(
        "samples", "NDArray-or-Symbol", "(B, N) value +1 (positive), -1 (negative), 0 (ignore)"
    )
    .add_argument("matches", "NDArray-or-Symbol", "(B, N) value range [0, M)")
    .add_argument("anchors", "NDArray-or-Symbol", "(B, N, 4) encoded in corner")
    .add_argument("refs", "NDArray-or-Symbol", "(B, M, 4) encoded in corner")
    .add_argument(
        "means", "NDArray-or-Symbol", "(4,) Mean value to be subtracted from encoded values"
    )
    .add_argument("stds", "NDArray-or-Symbol", "(4,) Std value to be divided from encoded values")
)


class BoxDecodeParam(Parameter):
    std0 = field(float, default=1.0, describe="value to be divided from the 1st encoded values")
    std1 = field(float, default=1.0, describe="value to be divided from the 2nd encoded values")
    std2 = field(float, default=1.0, describe="value to be divided from the 3rd encoded values")
    std3 = field(float, default=1.0, describe="value to be divided from the 4th encoded values")
    clip = field(
        float,
        default=-1.0,
        describe="If larger than 0, bounding box target will be clipped to this value.",
    )
    format = field(
        str,
        default="center",
        enum=FORMATS,
        describe='The box encoding type. \n "corner" means boxes are encoded as [xmin, ymin, '
        'xmax, ymax], "center" means boxes are encodes as [x, y, width, height].',
    )


def box_decode_np(p: BoxDecodeParam, data: np.ndarray, anchors: np.ndarray) -> list[np.ndarray]:
    """Corner boxes of box_decode; see the module docstring."""
    a = anchors.reshape(-1, 4)
    if p.format == "corner":
        ax, ay, aw, ah = _centres(a)
    else:
        ax, ay, aw, ah = (a[:, i] for i in range(4))
    dt = data.dtype.type
    x = data[..., 0] * dt(p.std0) * aw + ax
    y = data[..., 1] * dt(p.std1) * ah + ay
    ew, eh = data[..., 2] * dt(p.std2), data[..., 3] * dt(p.std3)
    if p.clip > 0:
        ew, eh = np.minimum(ew, dt(p.clip)), np.minimum(eh, dt(p.clip))
    hw, hh = np.exp(ew) * aw / 2, np.exp(eh) * ah / 2
    return [np.stack([x - hw, y - hh, x + hw, y + hh], axis=-1).astype(data.dtype)]


def _box_decode_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    op = "_contrib_box_decode"
    data = in_shapes[0] if in_shapes[0] is not None else out_shapes[0]
    if data is not None and (len(data) != 3 or data[-1] not in (4, None)):
        raise InferError(f"{op}: input 'data' has shape {shape_str(data)}; expected (B, N, 4)")
    anchors = in_shapes[1]
    if anchors is not None and (
        len(anchors) != 3 or anchors[0] != 1 or anchors[-1] not in (4, None)
    ):
        raise InferError(
            f"{op}: input 'anchors' has shape {shape_str(anchors)}; expected (1, N, 4)"
        )
    if data is None:
        return False
    shape_assign(in_shapes, 0, data, f"{op}: input 'data'")
    shape_assign(in_shapes, 1, (1, data[1], 4), f"{op}: input 'anchors'")
    shape_assign(out_shapes, 0, data, f"{op}: output")
    return shape_is_known(in_shapes[0]) and shape_is_known(in_shapes[1])


_decode_compute = host_compute("_contrib_box_decode", box_decode_np)
(
    register_op("_contrib_box_decode")
    .describe(
        "Decode bounding boxes training target with normalized center offsets.\n"
        "    Input bounding boxes are using corner type: `x_{min}, y_{min}, x_{max}, y_{max}`\n"
        "    or center type: `x, y, width, height.) array"
    )
    .set_attr_parser(BoxDecodeParam)
    .set_num_inputs(2)
    .set_num_outputs(1)
    .set_attr(FListInputNames, lambda attrs: ["data", "anchors"])
    .set_attr(FInferShape, _box_decode_shape)
    .set_attr(FInferType, same_float_type("_contrib_box_decode", ("data", "anchors")))
    .set_attr(FCompute_cpu, _decode_compute)
    .set_attr(FCompute_gpu, _device_compute("_contrib_box_decode", _bbox_device.box_decode))
    .set_attr(FGradient, make_zero_grad_nodes)
    .add_argument("data", "NDArray-or-Symbol", "(B, N, 4) predicted bbox offset")
    .add_argument("anchors", "NDArray-or-Symbol", "(1, N, 4) encoded in corner or center")
    .add_arguments(BoxDecodeParam.fields())
)

register_op(_NMS).add_alias("_contrib_box_non_maximum_suppression")
