"""softmax and log_softmax along one axis, with their backward ops.

    softmax(x)_k     = exp(x_k / T - m) / sum_j exp(x_j / T - m),    m = max_j x_j / T
    log_softmax(x)_k = x_k / T - m - log(sum_j exp(x_j / T - m))

Subtracting the row maximum m keeps exp from overflowing. The array is viewed as
(outer, n, inner) around the axis; each of the outer*inner rows (elements `inner` apart)
is one work item of a `kernel.parallel_for` body: a numba prange iteration on the CPU,
one thread on the GPU (threads next to each other read neighbouring rows, so a non-last
axis reads coalesced). SoftmaxOutput (loss.py) reuses these row loops.

The helpers every hand-written nn kernel uses live in kernel/launch.py; this module still
re-exports them for importers not yet moved over.
"""

from __future__ import annotations

import math
from typing import Any, Self

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
from ...base import ParamError
from ...graph.grad import ElemwiseGradUseOut
from ...infer import elemwise_shape, elemwise_type
from ...kernel.launch import (  # re-exported: dropout.py imports `is_gpu` from here
    ADD,
    NULL,
    SERIAL_CUTOFF,
    WRITE,
    check_cpu_dtypes,
    cpu_parallel,
    flat,
    gpu_kernel,
    is_gpu,
    launch_rows,
    normalize_axis,
    req_code,
    run_rows,
    split_axis,
)
from ...param import Parameter, field
from ...registry import NodeAttrs, register_op, skip_in_source_locations

skip_in_source_locations(__file__)


# --- kernels -------------------------------------------------------------------------------


@kernel.parallel_for
def _softmax_row(r, out, x, n, inner, inv_t, log, mode):
    o = r // inner
    base = o * n * inner + (r - o * inner)
    m = x[base] * inv_t
    for k in range(1, n):
        v = x[base + k * inner] * inv_t
        if v > m:
            m = v
    s = 0.0
    if mode == 1 and not log:  # one exp per element: keep e in out, then scale
        for k in range(n):
            e = math.exp(x[base + k * inner] * inv_t - m)
            out[base + k * inner] = e
            s += e
        inv_s = 1.0 / s
        for k in range(n):
            out[base + k * inner] *= inv_s
    else:
        for k in range(n):
            s += math.exp(x[base + k * inner] * inv_t - m)
        log_s = math.log(s)
        for k in range(n):
            j = base + k * inner
            v = (x[j] * inv_t - m) - log_s  # not x - (m + log_s): m may be large
            if not log:
                v = math.exp(v)
            if mode == 2:
                out[j] += v
            else:
                out[j] = v


# softmax:     dx_k = y_k (dy_k - sum_j dy_j y_j) / T
# log_softmax: dx_k = (dy_k - exp(y_k) sum_j dy_j) / T
@kernel.parallel_for
def _softmax_grad_row(r, dx, dy, y, n, inner, inv_t, log, mode):
    o = r // inner
    base = o * n * inner + (r - o * inner)
    s = 0.0
    for k in range(n):
        j = base + k * inner
        s += dy[j] if log else dy[j] * y[j]
    for k in range(n):
        j = base + k * inner
        v = inv_t * (dy[j] - math.exp(y[j]) * s) if log else inv_t * y[j] * (dy[j] - s)
        if mode == 2:
            dx[j] += v
        else:
            dx[j] = v


def softmax_rows(
    ctx: Any,
    name: str,
    out: Any,
    x: Any,
    sizes: tuple[int, int, int],
    inv_t: float,
    log: bool,
    mode: int,
) -> None:
    """out = (log_)softmax(x * inv_t) over axis 1 of x viewed as sizes = (outer, n, inner)."""
    outer, n, inner = sizes
    if mode == NULL or n == 0:
        return
    run_rows(ctx, name, _softmax_row, outer * inner, out, x, n, inner, inv_t, log, mode)


# --- ops -----------------------------------------------------------------------------------


class SoftmaxParam(Parameter):
    axis = field(int, default=-1, describe="The axis along which to compute softmax.")
    temperature = field(
        float, default=None, describe="Temperature parameter in softmax (None means 1.0)."
    )

    @classmethod
    def parse(cls, kwargs: Any, op_name: str | None = None, *, allow_unknown: bool = False) -> Self:
        param = super().parse(kwargs, op_name, allow_unknown=allow_unknown)
        if param.temperature == 0:
            raise ParamError(
                f"{op_name or cls.__name__}: parameter 'temperature' expects a non-zero "
                f"float or None, got {kwargs.get('temperature')!r}"
            )
        return param

    @property
    def inv_t(self) -> float:
        return 1.0 if self.temperature is None else 1.0 / self.temperature


_same_shape = elemwise_shape(1, 1)


def _infer_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    known = _same_shape(attrs, in_shapes, out_shapes)
    if out_shapes[0] is not None:
        normalize_axis(attrs.op.name if attrs.op else "softmax", attrs.parsed.axis, out_shapes[0])
    return bool(known)


def _forward(log: bool) -> Any:
    def compute(
        attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
    ) -> None:
        p, x = attrs.parsed, inputs[0]
        name = "log_softmax" if log else "softmax"
        sizes = split_axis(x.shape, normalize_axis(name, p.axis, x.shape))
        softmax_rows(ctx, name, outputs[0], x, sizes, p.inv_t, log, req_code(name, req[0]))

    return compute


def _backward(log: bool) -> Any:
    def compute(
        attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
    ) -> None:
        p, (dy, y), dx = attrs.parsed, inputs, outputs[0]
        name = "_backward_log_softmax" if log else "_backward_softmax"
        mode = req_code(name, req[0])
        if mode == NULL:
            return
        outer, n, inner = split_axis(y.shape, normalize_axis(name, p.axis, y.shape))
        rows = outer * inner if n else 0
        run_rows(ctx, name, _softmax_grad_row, rows, dx, dy, y, n, inner, p.inv_t, log, mode)

    return compute


def _same_slot(attrs: NodeAttrs) -> list[tuple[int, int]]:
    return [(0, 0)]


_DESCRIBE = {
    "softmax": "Applies the softmax function along an axis: exp(x/T) / sum(exp(x/T)).\n\n"
    "The result sums to 1 along `axis`; computed stably by subtracting the maximum.",
    "log_softmax": "Computes the log of softmax along an axis: x/T - log(sum(exp(x/T))).\n\n"
    "More accurate than log(softmax(x)) for very small probabilities.",
}

for _name, _log in (("softmax", False), ("log_softmax", True)):
    (
        register_op(_name)
        .describe(_DESCRIBE[_name])
        .set_attr_parser(SoftmaxParam)
        .set_num_inputs(1)
        .set_num_outputs(1)
        .set_attr(FListInputNames, lambda attrs: ["data"])
        .set_attr(FInferShape, _infer_shape)
        .set_attr(FInferType, elemwise_type(1, 1))
        .set_attr(FInplaceOption, _same_slot)
        .set_attr(FCompute_cpu, _forward(_log))
        .set_attr(FCompute_gpu, _forward(_log))
        .set_attr(FGradient, ElemwiseGradUseOut(f"_backward_{_name}"))
        .add_argument("data", "NDArray-or-Symbol", "The input array.")
        .add_arguments(SoftmaxParam.fields())
    )
    (
        register_op(f"_backward_{_name}")
        .describe(f"Backward of {_name}: inputs (dy, y).")
        .set_attr_parser(SoftmaxParam)
        .set_num_inputs(2)
        .set_num_outputs(1)
        .set_attr(TIsBackward, True)
        .set_attr(FInferShape, elemwise_shape(2, 1))
        .set_attr(FInferType, elemwise_type(2, 1))
        .set_attr(FInplaceOption, _same_slot)
        .set_attr(FCompute_cpu, _backward(_log))
        .set_attr(FCompute_gpu, _backward(_log))
    )

__all__ = [
    "ADD",
    "NULL",
    "SERIAL_CUTOFF",
    "WRITE",
    "SoftmaxParam",
    "check_cpu_dtypes",
    "cpu_parallel",
    "flat",
    "gpu_kernel",
    "is_gpu",
    "launch_rows",
    "normalize_axis",
    "req_code",
    "run_rows",
    "softmax_rows",
    "split_axis",
]
