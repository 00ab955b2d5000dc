"""Loss heads: SoftmaxOutput (alias Softmax) and smooth_l1.

SoftmaxOutput's forward is a softmax; its gradient is that of the cross-entropy loss
against `label`, not of its own output, so it needs no head gradient:

    d data = (softmax(data) - target(label)) * grad_scale / norm

target is one-hot (1 - smooth_alpha on the label, smooth_alpha / (C - 1) elsewhere), rows
whose label is ignore_label get zero when use_ignore, and norm is 1 ('null'), the batch
size ('batch': the number of label rows, as MXNet's label.size(0)) or the number of
labels that are not ignore_label ('valid', at least 1); with multi_output, 'null' and
'batch' also divide by the spatial size prod(d...), as MXNet. A label of data's own shape
holds target probabilities: (softmax(data) - label) * grad_scale, unnormalized. The label
gets a zero gradient.
Layouts:

- default: data (N, ...) is a (N, K) matrix, K = data.size / N; label (N,)
- preserve_shape: softmax over the last axis; label = data.shape[:-1]
- multi_output: data (N, C, d...), softmax over axis 1; label (N, d...) or (N, prod(d))

    smooth_l1: y = 0.5 (sigma x)^2 if |x| < 1/sigma^2 else |x| - 0.5/sigma^2   (sigma = scalar)
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ... import kernel
from ...attrs import (
    FCompute_cpu,
    FCompute_gpu,
    FGradient,
    FInferShape,
    FInferType,
    FInplaceOption,
    FListInputNames,
    TIsBackward,
)
from ...base import InferError
from ...graph.grad import ElemwiseGradUseIn, make_grad_node
from ...graph.node import NodeEntry
from ...infer import shape_assign, shape_is_known, shape_str, type_assign
from ...kernel import scratch
from ...kernel.launch import NULL, flat, is_gpu, req_code, run_rows
from ...param import Parameter, field
from ...registry import NodeAttrs, register_op
from .._broadcast_map import bind_cuda, device_meta
from .._family import ScalarParam, register_backward, register_scalar
from ..init import _fill
from ._layer_util import via_float32
from .softmax import softmax_rows, store_rounded

# --- smooth_l1 -----------------------------------------------------------------------------


@kernel.elementwise
def _smooth_l1(x, sigma):
    s2 = sigma * sigma
    if abs(x) < 1.0 / s2:
        return 0.5 * s2 * x * x
    return abs(x) - 0.5 / s2


@kernel.elementwise
def _smooth_l1_grad(dy, x, sigma):  # dx = dy * (sigma^2 x if |x| < 1/sigma^2 else sign(x))
    s2 = sigma * sigma
    if abs(x) < 1.0 / s2:
        return dy * s2 * x
    return dy if x > 0 else -dy


register_scalar(
    "smooth_l1",
    _smooth_l1,
    "Calculate Smooth L1 Loss(lhs, scalar) element-wise:\n\n"
    "    f(x) = 0.5 * (sigma * x)^2   if |x| < 1 / sigma^2\n"
    "           |x| - 0.5 / sigma^2   otherwise\n\n"
    "where sigma is the scalar.",
    ElemwiseGradUseIn("_backward_smooth_l1"),
)
register_backward("_backward_smooth_l1", _smooth_l1_grad, 2, ScalarParam, ("scalar",))

# --- SoftmaxOutput -------------------------------------------------------------------------


class SoftmaxOutputParam(Parameter):
    grad_scale = field(float, default=1.0, describe="Scales the gradient by a float factor.")
    ignore_label = field(
        float,
        default=-1.0,
        describe="The instances whose labels == ignore_label are ignored during backward, "
        "if use_ignore is set to true.",
    )
    multi_output = field(
        bool,
        default=False,
        describe="If set to true, the softmax function is computed along axis 1: "
        "data (n, k, x_1, ..., x_n) gives n*x_1*...*x_n softmax outputs of k classes.",
    )
    use_ignore = field(
        bool, default=False, describe="If true, the labels equal to ignore_label get no gradient."
    )
    preserve_shape = field(
        bool, default=False, describe="If true, softmax is computed along the last axis."
    )
    normalization = field(
        str,
        default="null",
        enum={"null": 0, "batch": 1, "valid": 2},
        describe="Normalizes the gradient: 'null' not at all, 'batch' by the batch size, "
        "'valid' by the number of labels that are not ignore_label.",
    )
    out_grad = field(
        bool, default=False, describe="Multiplies the gradient with the output gradient."
    )
    smooth_alpha = field(
        float,
        default=0.0,
        describe="Label smoothing: subtracted from the one-hot target of the gold label and "
        "spread uniformly over the other labels.",
    )


def _rows(p: Any, shape: tuple[int, ...]) -> tuple[int, int, int]:
    """(outer, classes, inner) of the softmax: label entry r belongs to row r."""
    shape = tuple(shape)  # the CUDA simulator's shapes do not index from the end
    if p.multi_output:
        return shape[0], shape[1], math.prod(shape[2:])
    if p.preserve_shape:
        return math.prod(shape[:-1]), shape[-1], 1
    return shape[0], math.prod(shape[1:]), 1


def _label_shapes(p: Any, data: tuple[int, ...]) -> list[tuple[int, ...]]:
    """The label shapes this data accepts; the first is what inference assigns. The last,
    data's own shape, is a label of probabilities (a target distribution per row)."""
    if p.multi_output:
        return [(data[0], *data[2:]), (data[0], math.prod(data[2:])), tuple(data)]
    if p.preserve_shape:
        return [tuple(data[:-1]), tuple(data)]
    return [(data[0],), tuple(data)]


def _softmax_output_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    p = attrs.parsed
    shape_assign(in_shapes, 0, out_shapes[0], "SoftmaxOutput: input 'data'")
    shape_assign(out_shapes, 0, in_shapes[0], "SoftmaxOutput: output 'output'")
    data = in_shapes[0]
    if not shape_is_known(data):
        return False
    need = 2 if p.multi_output else 1
    if len(data) < need:
        raise InferError(
            f"SoftmaxOutput: input 'data' has shape {shape_str(data)}, but "
            f"{'multi_output needs (N, C, ...)' if p.multi_output else 'needs (N, ...)'}"
        )
    accepted = _label_shapes(p, data)
    label = in_shapes[1]
    if label is None:
        in_shapes[1] = accepted[0]
        return True
    for shape in accepted:
        if _fits(label, shape):
            in_shapes[1] = shape
            return True
    options = " or ".join(shape_str(s) for s in accepted)
    node = f" (node '{attrs.name}')" if attrs.name else ""
    raise InferError(
        f"SoftmaxOutput{node}: input 'label' has shape {shape_str(label)}, but data of shape "
        f"{shape_str(data)} needs label shape {options}"
    )


def _fits(label: tuple[Any, ...], shape: tuple[int, ...]) -> bool:
    return len(label) == len(shape) and all(d is None or d == s for d, s in zip(label, shape))


def _softmax_output_type(attrs: NodeAttrs, in_types: list[Any], out_types: list[Any]) -> bool:
    # the label may have its own dtype (e.g. int32 class ids); by default it follows data
    type_assign(in_types, 0, out_types[0], "SoftmaxOutput: input 'data'")
    type_assign(out_types, 0, in_types[0], "SoftmaxOutput: output 'output'")
    if in_types[1] is None:
        type_assign(in_types, 1, in_types[0])
    return in_types[0] is not None and in_types[1] is not None


@via_float32
def _softmax_output_forward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    mode = req_code("SoftmaxOutput", req[0])
    sizes = _rows(attrs.parsed, inputs[0].shape)
    softmax_rows(ctx, "SoftmaxOutput", outputs[0], inputs[0], sizes, 1.0, False, mode)


# d data_k = (p_k - target_k) * scale (* dy_k), zero on ignored rows. Work item t takes
# the elements [t * chunk, (t + 1) * chunk) of the data viewed as (outer, n, inner): element
# j = (o * n + k) * inner + i of row r = o * inner + i (label[r]) and class k. A GPU runs a
# thread per element (chunk 1: neighbours read neighbours); the CPU runs long chunks, whose
# (o, k, i) are carried from element to element instead of divided out of each j.
# float16 as the CPU computes it from float32 copies (softmax.py's kernels say how): `half`
# is dx's dtype, which is also out's and dy's; values in float64, stored as float32(v).
# `count[0]` divides scale too: the valid labels' count (normalization='valid', counted
# where the labels are: on a GPU no copy to the host and no wait; at least 1), else 1.
@kernel.parallel_for
def _softmax_output_label_grad(
    t, dx, out, label, dy, n, inner, chunk, total, scale, count, on, off, use_ignore, ignore,
    use_dy, mode, half,
):  # fmt: skip
    start = t * chunk
    end = min(start + chunk, total)
    q = start // inner  # o * n + k
    i = start - q * inner
    o = q // n
    k = q - o * n
    s = scale / max(count[0], 1)
    for j in range(start, end):
        lab = label[o * inner + i]
        v = np.float64(0.0)
        if not (use_ignore and lab == ignore):
            v = (np.float64(out[j]) - (on if k == int(lab) else off)) * s
            if use_dy:
                v *= np.float64(dy[j])
        store_rounded(dx, j, mode, v, half)
        i += 1
        if i == inner:
            i = 0
            k += 1
            if k == n:
                k = 0
                o += 1


@kernel.device_function
def _off_class_grads(dx, out, dy, j0, j1, s, off, use_dy, mode, half):
    """dx[j] for the elements j in [j0, j1) of a row that are not its label's class."""
    for j in range(j0, j1):
        v = (np.float64(out[j]) - off) * s
        if use_dy:
            v *= np.float64(dy[j])
        store_rounded(dx, j, mode, v, half)


# inner 1 (a label per row) on the CPU: an item per row r of (rows, n), the label read
# once and the class compared once, so the rest of the row is one straight loop (the
# same values as _softmax_output_label_grad's, element for element)
@kernel.parallel_for
def _softmax_output_row_grad(
    r, dx, out, label, dy, n, scale, count, on, off, use_ignore, ignore, use_dy, mode, half,
):  # fmt: skip
    s = scale / max(count[0], 1)
    lab = label[r]
    base = r * n
    if use_ignore and lab == ignore:
        for j in range(base, base + n):
            store_rounded(dx, j, mode, np.float64(0.0), half)
    else:
        c = int(lab)
        cut = min(max(c, 0), n)
        _off_class_grads(dx, out, dy, base, base + cut, s, off, use_dy, mode, half)
        if c >= 0 and c < n:
            v = (np.float64(out[base + c]) - on) * s
            if use_dy:
                v *= np.float64(dy[base + c])
            store_rounded(dx, base + c, mode, v, half)
            cut = c + 1
        _off_class_grads(dx, out, dy, base + cut, base + n, s, off, use_dy, mode, half)


# a label of probabilities (label.shape == data.shape): d data = (p - label) * scale (* dy);
# p - label in the arrays' precision (float32 for float16 ones, as the CPU's copies)
@kernel.parallel_for
def _softmax_output_prob_grad(j, dx, out, label, dy, scale, use_dy, mode, half):
    d = np.float32(out[j]) - label[j] if half else out[j] - label[j]
    v = np.float64(d) * scale
    if use_dy:
        v *= np.float64(dy[j])
    store_rounded(dx, j, mode, v, half)


_CPU_CHUNK = 4096  # elements per CPU work item of _softmax_output_label_grad


def _norm(p: Any, label: Any) -> float:
    """The divisor of the gradient for normalization 'batch' or 'null' (see the module
    docstring; 'valid' counts the labels where they are, _valid_count)."""
    if p.normalization == "batch":
        return float(max(label.shape[0] if len(label.shape) else 1, 1))
    return 1.0


@kernel.parallel_for
def _label_is_valid(i, valid, label, ignore):
    valid[i] = 1 if label[i] != ignore else 0


def _valid_count(ctx: Any, name: str, p: Any, label: Any) -> Any:
    """A one-element int64 array where the kernels run: the number of labels that are not
    ignore_label for normalization 'valid' (the kernel reads at least 1), else 1."""
    if not is_gpu(ctx):
        valid = np.count_nonzero(label != p.ignore_label) if p.normalization == "valid" else 1
        return np.array([max(int(valid), 1)], np.int64)
    if p.normalization != "valid":
        bind_cuda(name)
        return device_meta(ctx, name, (1,))  # cached on the device
    return _valid_count_gpu(ctx, name, flat(label), float(p.ignore_label))


def _valid_count_gpu(ctx: Any, name: str, labels: Any, ignore: float) -> Any:
    """The labels != ignore counted on the op's stream, with no copy to the host and no
    wait: a 0/1 byte per label, a thread each, then summed by the reduction kernels, which
    split long sums across blocks (one block counting took ~4M labels of a segmentation
    batch with multi_output on 128 threads)."""
    from nnvmpy.ops._reduce_cuda import reduce_gpu

    valid = scratch.empty(ctx, labels.size, np.uint8)
    _label_is_valid.launch(ctx, labels.size, valid, labels, ignore)
    count = scratch.empty(ctx, 1, np.int64)
    reduce_gpu(ctx, count, False, valid, (1,), "sum", 1.0, name)
    return count


@via_float32
def _softmax_output_backward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    # inputs: (output, label) or, with out_grad, (output, label, head gradient)
    p = attrs.parsed
    out, label = inputs[0], inputs[1]
    dy = inputs[2] if p.out_grad else out
    _fill.launch(ctx, outputs[1], req[1], 0.0)
    mode = req_code("_backward_SoftmaxOutput", req[0])
    if mode == NULL:
        return
    if tuple(label.shape) == tuple(out.shape):  # probabilities: MXNet normalizes nothing
        half = outputs[0].dtype == np.float16
        prob = (outputs[0], out, label, dy, p.grad_scale, p.out_grad, mode, half)
        run_rows(ctx, "_backward_SoftmaxOutput", _softmax_output_prob_grad, out.size, *prob)
        return
    _, n, inner = _rows(p, out.shape)
    on = 1.0 - p.smooth_alpha
    off = p.smooth_alpha / (n - 1) if n > 1 else 0.0
    scale = p.grad_scale / _norm(p, label)
    if p.multi_output and p.normalization != "valid":
        scale /= max(inner, 1)
    count = _valid_count(ctx, "_backward_SoftmaxOutput", p, label)
    total = out.size
    flags = (p.use_ignore, p.ignore_label, p.out_grad, mode, outputs[0].dtype == np.float16)
    if inner == 1 and n > 0 and not is_gpu(ctx):
        args = (outputs[0], out, label, dy, n, scale, count, on, off)
        run_rows(
            ctx, "_backward_SoftmaxOutput", _softmax_output_row_grad, total // n, *args, *flags
        )
        return
    chunk = 1 if is_gpu(ctx) else _CPU_CHUNK
    args = (outputs[0], out, label, dy, n, inner, chunk, total, scale, count, on, off)
    items = -(-total // chunk)
    run_rows(ctx, "_backward_SoftmaxOutput", _softmax_output_label_grad, items, *args, *flags)


def _softmax_output_grad(node: Any, ograds: list[Any]) -> list[Any]:
    """The loss gradient from (output, label); the head gradient only with out_grad."""
    heads = [NodeEntry(node, 0), node.inputs[1]]
    if node.attrs.parsed.out_grad:
        heads.append(ograds[0])
    return make_grad_node("_backward_SoftmaxOutput", node, heads)


_SOFTMAX_OUTPUT_DOC = (
    "Computes the gradient of cross entropy loss with respect to softmax output.\n\n"
    "The forward output is softmax(data); the backward gives (softmax(data) - "
    "one_hot(label)) * grad_scale / norm to data, ignoring the head gradient unless "
    "out_grad is set. See the module docstring of nnvmpy.ops.nn.loss for the layouts."
)

(
    register_op("SoftmaxOutput")
    .describe(_SOFTMAX_OUTPUT_DOC)
    .set_attr_parser(SoftmaxOutputParam)
    .set_num_inputs(2)
    .set_num_outputs(1)
    .set_attr(FListInputNames, lambda attrs: ["data", "label"])
    .set_attr(FInferShape, _softmax_output_shape)
    .set_attr(FInferType, _softmax_output_type)
    .set_attr(FInplaceOption, lambda attrs: [(0, 0)])
    .set_attr(FCompute_cpu, _softmax_output_forward)
    .set_attr(FCompute_gpu, _softmax_output_forward)
    .set_attr(FGradient, _softmax_output_grad)
    .add_argument("data", "NDArray-or-Symbol", "Input array.")
    .add_argument("label", "NDArray-or-Symbol", "Ground truth label.")
    .add_arguments(SoftmaxOutputParam.fields())
)

register_op("SoftmaxOutput").add_alias("Softmax")
(
    register_op("_backward_SoftmaxOutput")
    .describe("Backward of SoftmaxOutput: inputs (output, label[, head gradient]).")
    .set_attr_parser(SoftmaxOutputParam)
    .set_num_inputs(lambda attrs: 3 if attrs.parsed.out_grad else 2)
    .set_num_outputs(2)
    .set_attr(TIsBackward, True)
    .set_attr(FCompute_cpu, _softmax_output_backward)
    .set_attr(FCompute_gpu, _softmax_output_backward)
)
