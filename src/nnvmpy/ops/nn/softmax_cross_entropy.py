"""softmax_cross_entropy: the summed cross-entropy of softmax(data) against class labels.

    out[0]  = sum_n ( logsumexp(data[n]) - data[n, label[n]] )       data (N, K), label (N,)
    d data  = (softmax(data) - one_hot(label)) * dy[0];   label gets a zero gradient

An ordinary op (its gradient multiplies the head gradient), computed stably in float64
per row; the rows' losses are summed by one more work item, so nothing waits for the
host but the label check: a label outside [0, K) is a named error.

A row is a thread's work item (a numba prange iteration on the CPU). On a GPU a row of
MIN_ROW (32) or more classes takes a thread block instead, as softmax's rows do
(_block_rows.py): threads next to each other read classes next to each other, and a
shared-memory tree gives the row's max and sum; a block likewise sums 32 or more rows'
losses. Those sums add in another order than a row loop's (and the block kernels
widen every element to float64), so results may differ from the CPU's in the last bits.

The label check copies the labels to the host and waits for them: it is this module's
own documented error (MXNet reads any label unchecked), raised by the forward and the
backward call before they write anything, and any check that raises it must wait for
the device; a flag computed there would save only the copy of N labels.
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
    FResourceRequest,
    TIsBackward,
)
from ...base import InferError, NNVMError
from ...graph.grad import make_grad_node
from ...infer import shape_assign, shape_is_known, shape_str, type_assign
from ...kernel import device_function, parallel_for
from ...kernel.launch import NULL, cuda, gpu_kernel, req_code, store
from ...registry import NodeAttrs, register_op
from ...resource import ResourceRequest
from ..init import _fill
from ._block_rows import BLOCK, block_max, block_sum, by_block, launch_blocks, run_block_rows
from ._layer_util import host_copy, via_float32

_NAME = "softmax_cross_entropy"


@parallel_for
def _row_loss(r, x, losses, label, k_len):
    """losses[r] = logsumexp(x[r]) - x[r, label[r]]."""
    base = r * k_len
    m = x[base]
    for k in range(1, k_len):
        m = max(m, x[base + k])
    s = 0.0
    for k in range(k_len):
        s += math.exp(x[base + k] - m)
    losses[r] = m + math.log(s) - x[base + int(label[r])]


@parallel_for
def _sum_losses(i, out, losses, rows, mode):
    total = 0.0
    for r in range(rows):
        total += losses[r]
    store(out, 0, total, mode)


@parallel_for
def _row_grad(r, dx, x, label, dy, k_len, mode):
    """dx[r] = (softmax(x[r]) - one_hot(label[r])) * dy[0]."""
    base = r * k_len
    m = x[base]
    for k in range(1, k_len):
        m = max(m, x[base + k])
    s = 0.0
    for k in range(k_len):
        s += math.exp(x[base + k] - m)
    gold = int(label[r])
    g = dy[0]
    for k in range(k_len):
        p = math.exp(x[base + k] - m) / s
        store(dx, base + k, (p - 1.0 if k == gold else p) * g, mode)


# --- a block per row (GPU, rows of MIN_ROW or more classes) -------------------------------


@device_function
def _block_row_max_sum(sh, tid, nt, x, base, k_len):
    """(max, sum of exp(x - max)) of row x[base : base + k_len], in float64, block-wide."""
    m = -math.inf
    for k in range(tid, k_len, nt):  # neighbouring threads read neighbouring classes
        m = max(m, np.float64(x[base + k]))
    m = block_max(sh, tid, nt, m)
    s = np.float64(0.0)
    for k in range(tid, k_len, nt):
        s += math.exp(np.float64(x[base + k]) - m)
    return m, block_sum(sh, tid, nt, s)


@gpu_kernel
def _row_loss_block_cuda(rows, x, losses, label, k_len):
    """_row_loss with a block per row."""
    tid, nt = cuda.threadIdx.x, cuda.blockDim.x
    sh = cuda.shared.array(BLOCK, np.float64)
    for r in range(cuda.blockIdx.x, rows, cuda.gridDim.x):
        base = r * k_len
        m, s = _block_row_max_sum(sh, tid, nt, x, base, k_len)
        if tid == 0:
            losses[r] = m + math.log(s) - np.float64(x[base + int(label[r])])


@gpu_kernel
def _row_grad_block_cuda(rows, dx, x, label, dy, k_len, mode):
    """_row_grad with a block per row."""
    tid, nt = cuda.threadIdx.x, cuda.blockDim.x
    sh = cuda.shared.array(BLOCK, np.float64)
    for r in range(cuda.blockIdx.x, rows, cuda.gridDim.x):
        base = r * k_len
        m, s = _block_row_max_sum(sh, tid, nt, x, base, k_len)
        gold = int(label[r])
        g = np.float64(dy[0])
        for k in range(tid, k_len, nt):
            p = math.exp(np.float64(x[base + k]) - m) / s
            store(dx, base + k, (p - 1.0 if k == gold else p) * g, mode)


@gpu_kernel
def _sum_losses_block_cuda(items, out, losses, rows, mode):
    """_sum_losses by one block: its threads stride the losses, a shared tree adds them."""
    tid, nt = cuda.threadIdx.x, cuda.blockDim.x
    sh = cuda.shared.array(BLOCK, np.float64)
    s = np.float64(0.0)
    for r in range(tid, rows, nt):
        s += losses[r]
    s = block_sum(sh, tid, nt, s)
    if tid == 0 and cuda.blockIdx.x < items:
        store(out, 0, s, mode)


def _sum_rows(ctx: Any, out: Any, losses: Any, rows: int, mode: int) -> None:
    """out[0] (+)= sum(losses): one work item, or on a GPU one block for 32 or more rows."""
    if by_block(ctx, rows, 1):
        launch_blocks(ctx, _NAME, _sum_losses_block_cuda, 1, rows, out, losses, rows, mode)
    else:
        _sum_losses.launch(ctx, 1, out, losses, rows, mode, work=rows)


def _check_labels(ctx: Any, name: str, label: Any, classes: int) -> None:
    values = host_copy(ctx, label).reshape(-1)
    with np.errstate(invalid="ignore"):
        bad = np.flatnonzero(~((values >= 0) & (values < classes)))
    if bad.size:
        i = int(bad[0])
        raise NNVMError(
            f"{name}: label[{i}] = {values[i]} is not a class of data with {classes} "
            f"classes; expected 0 <= label < {classes}"
        )


def _infer_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    """data (N, K), label (N,), out (1,); N flows both ways between data and label."""
    data, label = in_shapes
    if data is not None and len(data) != 2:
        raise InferError(f"{_NAME}: input 'data' has shape {shape_str(data)}; expected (N, K)")
    if label is not None and len(label) != 1:
        raise InferError(f"{_NAME}: input 'label' has shape {shape_str(label)}; expected (N,)")
    if data is not None:
        shape_assign(in_shapes, 1, (data[0],), f"{_NAME}: input 'label'")
    if in_shapes[1] is not None:
        shape_assign(in_shapes, 0, (in_shapes[1][0], None), f"{_NAME}: input 'data'")
    shape_assign(out_shapes, 0, (1,), f"{_NAME}: output 'output'")
    return shape_is_known(in_shapes[0]) and shape_is_known(in_shapes[1])


def _infer_type(attrs: NodeAttrs, in_types: list[Any], out_types: list[Any]) -> bool:
    # the label may have its own dtype (int class ids); by default it follows data
    type_assign(in_types, 0, out_types[0], f"{_NAME}: input 'data'")
    type_assign(out_types, 0, in_types[0], f"{_NAME}: output 'output'")
    if in_types[1] is None:
        type_assign(in_types, 1, in_types[0])
    return in_types[0] is not None and in_types[1] is not None


@via_float32
def _forward(attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]):
    x, label = inputs
    mode = req_code(_NAME, req[0])
    if mode == NULL:
        return
    rows, k_len = (int(d) for d in x.shape)
    if rows == 0:
        _fill.launch(ctx, outputs[0], req[0], 0.0)
        return
    _check_labels(ctx, _NAME, label, k_len)
    losses = ctx.requested[0].get_space((rows,), "float64")
    args = (x, losses, label, k_len)
    run_block_rows(ctx, _NAME, _row_loss, _row_loss_block_cuda, rows, k_len, 1, *args)
    _sum_rows(ctx, outputs[0].reshape(-1), losses, rows, mode)


@via_float32
def _backward(attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]):
    dy, x, label = inputs
    name = f"_backward_{_NAME}"
    _fill.launch(ctx, outputs[1], req[1], 0.0)
    mode = req_code(name, req[0])
    rows, k_len = (int(d) for d in x.shape)
    if mode == NULL or rows == 0:
        return
    _check_labels(ctx, name, label, k_len)
    args = (outputs[0], x, label, dy, k_len, mode)
    run_block_rows(ctx, name, _row_grad, _row_grad_block_cuda, rows, k_len, 1, *args)


def _gradient(node: Any, ograds: list[Any]) -> list[Any]:
    return make_grad_node(f"_backward_{_NAME}", node, [ograds[0], *node.inputs])


(
    register_op(_NAME)
    .describe(
        "Calculate cross entropy of softmax output and one-hot label: the sum over the "
        "batch of -log(softmax(data)[n, label[n]]), for data (N, K) and label (N,) of class "
        "ids; the output has shape (1,)."
    )
    .set_num_inputs(2)
    .set_num_outputs(1)
    .set_attr(FListInputNames, lambda attrs: ["data", "label"])
    .set_attr(FInferShape, _infer_shape)
    .set_attr(FInferType, _infer_type)
    .set_attr(FResourceRequest, lambda attrs: [ResourceRequest.kTempSpace])
    .set_attr(FCompute_cpu, _forward)
    .set_attr(FCompute_gpu, _forward)
    .set_attr(FGradient, _gradient)
    .add_argument("data", "NDArray-or-Symbol", "Input data")
    .add_argument("label", "NDArray-or-Symbol", "Input label")
)
(
    register_op(f"_backward_{_NAME}")
    .describe(f"Backward of {_NAME}: inputs (dy, data, label).")
    .set_num_inputs(3)
    .set_num_outputs(2)
    .set_attr(TIsBackward, True)
    .set_attr(FCompute_cpu, _backward)
    .set_attr(FCompute_gpu, _backward)
)
