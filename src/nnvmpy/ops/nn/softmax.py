"""softmax, log_softmax and softmin along one axis, with their backward ops.

    softmax(x)_k     = exp(x_k / T - m) / sum_j exp(x_j / T - m),    m = max_j x_j / T
    log_softmax(x)_k = x_k / T - m - log(sum_j exp(x_j / T - m))
    softmin(x)       = softmax(-x)

Subtracting the row maximum m keeps exp from overflowing. `dtype` picks the output's
float type (the input's by default); softmax's `use_length` takes a second input of
integer lengths, one per row (the data's shape without `axis`): row r is the softmax of
its first length[r] elements and zero after them; lengths outside [0, n] are an error.

The array is viewed as (outer, n, inner) around the axis; each of the outer*inner rows
(elements `inner` apart) is one work item of a `kernel.parallel_for` body: a numba
prange iteration on the CPU, one thread on the GPU (threads next to each other read
neighbouring rows, so an axis with inner >= 32 reads coalesced). Nearer the last axis a
GPU gives each row of 32 or more elements a thread block instead, whose threads read the
row side by side and reduce in shared memory (_softmax_block_cuda.py, in two passes where
the row loop takes three); its sums add in another order than a row loop's, so float64
results may differ from the CPU's in the last bit. SoftmaxOutput (loss.py) and
SoftmaxActivation (softmax_activation.py) reuse these row loops.

The helpers every hand-written nn kernel uses live in kernel/launch.py; this module still
re-exports them for importers not yet moved over.
"""

from __future__ import annotations

import math
from typing import Any, Self

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
from ...base import InferError, NNVMError, ParamError
from ...graph.grad import make_grad_node
from ...graph.node import NodeEntry
from ...infer import shape_assign, shape_is_known, type_assign
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
from ..init import _fill
from ._block_rows import run_block_rows
from ._layer_util import host_copy, to_device, via_float32
from ._softmax_block_cuda import (  # store_rounded: re-exported for loss.py
    _softmax_block_cuda,
    _softmax_grad_block_cuda,
    grad_put,
    grad_term,
    store_rounded,
)
from ._softmax_block_cuda import row_start as _row_start
from ._softmax_f32 import softmax_grad_rows_f32, softmax_rows_f32

skip_in_source_locations(__file__)

_HALF = np.dtype(np.float16)


# --- kernels -------------------------------------------------------------------------------
# float16 computes as the CPU computes it: there via_float32 hands the loops float32 copies,
# so every value below is float64 (x * inv_t, exp, sums) or float32 (a float32 array's
# products, expf), a result is rounded to float32 and then once more to float16. The GPU
# reads float16 directly, so the loops widen explicitly: `np.float64(x[j])` is exact for
# every float dtype and is the promotion numba performs anyway for `x[j] * inv_t` (float32
# and float64 compute as before); on numba's simulator, which runs NumPy, a Python float is
# weak and `x[j] * inv_t` would stay float16 (or float32) there. A float16 output (`half`)
# stores float32(v), never v itself: hardware would round a float64 once, the CPU twice.


@kernel.device_function
def _exp_term(out, x, j, inv_t, m, keep):
    """e = exp(x[j] / T - m), kept in out[j] when `keep` (the softmax's one exp each)."""
    e = math.exp(np.float64(x[j]) * inv_t - m)
    if keep:
        out[j] = e
    return e


@kernel.device_function
def _softmax_store(out, x, j, inv_t, m, inv_s, log_s, log, mode, half):
    """Element j of the result from the row's max m and its sum s = 1 / inv_s."""
    if mode == 1 and not log:
        if half:  # float16 cannot hold e: recompute it, round as float32 (the CPU)
            e32 = np.float32(math.exp(np.float64(x[j]) * inv_t - m))
            out[j] = np.float32(np.float64(e32) * inv_s)
        else:  # e, kept by _exp_term
            out[j] = np.float64(out[j]) * inv_s
    else:
        v = (np.float64(x[j]) * inv_t - m) - log_s  # not x - (m + log_s): m may be large
        if not log:
            v = math.exp(v)
        store_rounded(out, j, mode, v, half)


@kernel.parallel_for
def _softmax_row(r, out, x, n, inner, inv_t, log, mode, length, use_len, half):
    base, m_n = _row_start(r, n, inner, length, use_len)
    if m_n > 0:
        m = np.float64(x[base]) * inv_t
        for k in range(1, m_n):
            v = np.float64(x[base + k * inner]) * inv_t
            if v > m:
                m = v
        keep = mode == 1 and not log and not half
        s = np.float64(0.0)
        for k in range(m_n):
            s += _exp_term(out, x, base + k * inner, inv_t, m, keep)
        inv_s, log_s = 1.0 / s, math.log(s)
        for k in range(m_n):
            _softmax_store(out, x, base + k * inner, inv_t, m, inv_s, log_s, log, mode, half)
    if mode == 1:  # past the length: zero
        for k in range(m_n, n):
            out[base + k * inner] = 0.0


@kernel.parallel_for
def _softmax_grad_row(r, dx, dy, y, n, inner, inv_t, log, mode, length, use_len, half_in, half_out):
    # dx from dy and y (_softmax_block_cuda.py has the formulas)
    base, m_n = _row_start(r, n, inner, length, use_len)
    s = np.float64(0.0)
    for k in range(m_n):
        j = base + k * inner
        s += grad_term(dy[j], y[j], log, half_in)
    for k in range(m_n):
        j = base + k * inner
        grad_put(dx, j, dy[j], y[j], inv_t, s, log, mode, half_in, half_out)
    if mode == 1:
        for k in range(m_n, n):
            dx[base + k * inner] = 0.0


def softmax_rows(
    ctx: Any,
    name: str,
    out: Any,
    x: Any,
    sizes: tuple[int, int, int],
    inv_t: float,
    log: bool,
    mode: int,
    length: Any = None,
) -> None:
    """out = (log_)softmax(x * inv_t) over axis 1 of x viewed as sizes = (outer, n, inner);
    with `length` (one int per row, in [0, n]) only a row's first length[r] elements."""
    outer, n, inner = sizes
    if mode == NULL or n == 0:
        return
    if _contiguous_f32(ctx, out, x, inner, mode, length):
        softmax_rows_f32(ctx, name, out, x, outer, n, inv_t, log)
        return
    half = out.dtype == _HALF
    tail = (_no_length(ctx), False) if length is None else (length, True)
    args = (out, x, n, inner, inv_t, log, mode, *tail, half)
    run_block_rows(ctx, name, _softmax_row, _softmax_block_cuda, outer * inner, n, inner, *args)


def _contiguous_f32(ctx: Any, out: Any, x: Any, inner: int, mode: int, length: Any) -> bool:
    """Rows _softmax_f32 takes: the last axis, float32 in and out, written, no lengths,
    on the CPU."""
    f32 = np.dtype(np.float32)
    return (
        inner == 1
        and mode == WRITE
        and length is None
        and x.dtype == f32
        and out.dtype == f32
        and not is_gpu(ctx)
    )


def softmax_grad_rows(
    ctx: Any,
    name: str,
    dx: Any,
    dy: Any,
    y: Any,
    sizes: tuple[int, int, int],
    inv_t: float,
    log: bool,
    mode: int,
    length: Any = None,
) -> None:
    """dx from dy and y = (log_)softmax(x * inv_t), rows as in softmax_rows."""
    outer, n, inner = sizes
    if mode == NULL or n == 0:
        return
    if _contiguous_f32(ctx, dx, dy, inner, mode, length) and y.dtype == dy.dtype:
        softmax_grad_rows_f32(ctx, name, dx, dy, y, outer, n, inv_t, log)
        return
    halves = (y.dtype == _HALF, dx.dtype == _HALF)
    tail = (_no_length(ctx), False) if length is None else (length, True)
    args = (dx, dy, y, n, inner, inv_t, log, mode, *tail, *halves)
    rows = outer * inner
    run_block_rows(ctx, name, _softmax_grad_row, _softmax_grad_block_cuda, rows, n, inner, *args)


# --- ops -----------------------------------------------------------------------------------


class SoftmaxParam(Parameter):
    axis = field(int, default=-1, describe="The axis along which to compute softmax.")
    temperature = field(
        float, default=None, describe="Temperature parameter in softmax (None means 1.0)."
    )
    dtype = field(
        str,
        default=None,
        enum={"float16": 2, "float32": 0, "float64": 1},
        describe="DType of the output in case this can't be inferred. Defaults to the same "
        "as input's dtype if not defined (dtype=None).",
    )
    use_length = field(
        bool,
        default=False,
        optional=True,
        describe="Whether to use the length input as a mask over the data input.",
    )

    @classmethod
    def parse(cls, kwargs: Any, op_name: str | None = None, *, allow_unknown: bool = False) -> Self:
        param = super().parse(kwargs, op_name, allow_unknown=allow_unknown)
        name = op_name or cls.__name__
        if param.temperature == 0:
            raise ParamError(
                f"{name}: parameter 'temperature' expects a non-zero float or None, got "
                f"{kwargs.get('temperature')!r}"
            )
        if param.use_length and op_name not in (None, "softmax", "_backward_softmax"):
            raise ParamError(
                f"{name}: parameter 'use_length' expects False: only softmax takes a length input"
            )
        return param

    @property
    def inv_t(self) -> float:
        return 1.0 if self.temperature is None else 1.0 / self.temperature


# name -> (log, sign of x): softmin(x) = softmax(-x)
_KINDS = {"softmax": (False, 1.0), "log_softmax": (True, 1.0), "softmin": (False, -1.0)}


def _uses_length(attrs: NodeAttrs) -> bool:
    return bool(attrs.parsed.use_length)


def _infer_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    """output = data; length = data without `axis` (and data from length, but `axis`)."""
    name = attrs.op.name if attrs.op else "softmax"
    shape_assign(in_shapes, 0, out_shapes[0], f"{name}: input 'data'")
    shape_assign(out_shapes, 0, in_shapes[0], f"{name}: output 'output'")
    if _uses_length(attrs):
        data, length = in_shapes[0], in_shapes[1]
        if data is None and length is not None:
            axis = normalize_axis(name, attrs.parsed.axis, (None,) * (len(length) + 1))
            shape_assign(
                in_shapes, 0, (*length[:axis], None, *length[axis:]), f"{name}: input 'data'"
            )
            shape_assign(out_shapes, 0, in_shapes[0], f"{name}: output 'output'")
        data = in_shapes[0]
        if data is not None:
            axis = normalize_axis(name, attrs.parsed.axis, data)
            shape_assign(in_shapes, 1, data[:axis] + data[axis + 1 :], f"{name}: input 'length'")
    if out_shapes[0] is not None:
        normalize_axis(name, attrs.parsed.axis, out_shapes[0])
    return all(shape_is_known(x) for x in [*in_shapes, *out_shapes])


def _infer_type(attrs: NodeAttrs, in_types: list[Any], out_types: list[Any]) -> bool:
    """output = dtype if given, else data's (both ways); length an integer type."""
    name = attrs.op.name if attrs.op else "softmax"
    dtype = attrs.parsed.dtype
    if dtype is None:
        type_assign(in_types, 0, out_types[0], f"{name}: input 'data'")
        type_assign(out_types, 0, in_types[0], f"{name}: output 'output'")
    else:
        type_assign(out_types, 0, dtype, f"{name}: output 'output'")
    if _uses_length(attrs):
        if in_types[1] is None:
            in_types[1] = np.dtype(np.int32)
        elif np.dtype(in_types[1]).kind not in "iu":
            raise InferError(
                f"{name}: input 'length' has dtype {np.dtype(in_types[1])}, but lengths must "
                "have an integer dtype"
            )
    return all(t is not None for t in [*in_types, *out_types])


_NO_LENGTH: dict[Any, Any] = {}  # device -> a 1-element int32 array (use_len False)


def _no_length(ctx: Any) -> Any:
    key = getattr(ctx, "ctx", None) if is_gpu(ctx) else None
    dummy = _NO_LENGTH.get(key)
    if dummy is None:
        dummy = _NO_LENGTH[key] = to_device(ctx, np.zeros(1, np.int32))
    return dummy


def _checked_length(ctx: Any, name: str, length: Any, n: int) -> Any:
    """length itself, after checking 0 <= length <= n on the host (a copy on the GPU)."""
    values = host_copy(ctx, length).reshape(-1)
    bad = np.flatnonzero((values < 0) | (values > n))
    if bad.size:
        i = int(bad[0])
        raise NNVMError(
            f"{name}: length[{i}] = {values[i]} is out of range for an axis of size {n}; "
            f"expected 0 <= length <= {n}"
        )
    return length


def _forward(name: str) -> Any:
    log, sign = _KINDS[name]

    @via_float32
    def compute(
        attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
    ) -> None:
        p, x = attrs.parsed, inputs[0]
        mode = req_code(name, req[0])
        sizes = split_axis(x.shape, normalize_axis(name, p.axis, x.shape))
        if mode == NULL or sizes[1] == 0:
            return
        length = _checked_length(ctx, name, inputs[1], sizes[1]) if p.use_length else None
        softmax_rows(ctx, name, outputs[0], x, sizes, sign * p.inv_t, log, mode, length)

    return compute


def _backward(name: str) -> Any:
    log, sign = _KINDS[name]
    bwd = f"_backward_{name}"

    @via_float32
    def compute(
        attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
    ) -> None:
        p, dy, y = attrs.parsed, inputs[0], inputs[1]
        if p.use_length:
            _fill.launch(ctx, outputs[1], req[1], 0)  # lengths get no gradient
        mode = req_code(bwd, req[0])
        sizes = split_axis(y.shape, normalize_axis(bwd, p.axis, y.shape))
        length = inputs[2] if p.use_length else None
        softmax_grad_rows(ctx, bwd, outputs[0], dy, y, sizes, sign * p.inv_t, log, mode, length)

    return compute


def _gradient(name: str) -> Any:
    def gradient(node: Any, ograds: list[Any]) -> list[Any]:
        heads = [ograds[0], NodeEntry(node, 0), *node.inputs[1:]]  # (dy, y[, length])
        return make_grad_node(f"_backward_{name}", node, heads)

    return gradient


def _same_slot(attrs: NodeAttrs) -> list[tuple[int, int]]:
    """In place unless the output's dtype differs from the input's."""
    return [(0, 0)] if attrs.parsed.dtype is None else []


def _input_names(attrs: NodeAttrs) -> list[str]:
    return ["data", "length"] if _uses_length(attrs) else ["data"]


_DESCRIBE = {
    "softmax": "Applies the softmax function along an axis: exp(x/T) / sum(exp(x/T)).\n\n"
    "The result sums to 1 along `axis`; computed stably by subtracting the maximum. With "
    "use_length, the second input gives each row's length (the data's shape without "
    "`axis`, integers): the softmax covers a row's first `length` elements, the rest is 0.",
    "log_softmax": "Computes the log of softmax along an axis: x/T - log(sum(exp(x/T))).\n\n"
    "More accurate than log(softmax(x)) for very small probabilities.",
    "softmin": "Applies the softmin function along an axis: exp(-x/T) / sum(exp(-x/T)).\n\n"
    "The result sums to 1 along `axis`; small inputs get large weights.",
}

for _name in _KINDS:
    _op = (
        register_op(_name)
        .describe(_DESCRIBE[_name])
        .set_attr_parser(SoftmaxParam)
        .set_num_inputs(lambda attrs: 2 if _uses_length(attrs) else 1)
        .set_num_outputs(1)
        .set_attr(FListInputNames, _input_names)
        .set_attr(FInferShape, _infer_shape)
        .set_attr(FInferType, _infer_type)
        .set_attr(FInplaceOption, _same_slot)
        .set_attr(FCompute_cpu, _forward(_name))
        .set_attr(FCompute_gpu, _forward(_name))
        .set_attr(FGradient, _gradient(_name))
        .add_argument("data", "NDArray-or-Symbol", "The input array.")
    )
    if _name == "softmax":
        _op.add_argument("length", "NDArray-or-Symbol", "The length array.")
    _op.add_arguments(SoftmaxParam.fields())
    (
        register_op(f"_backward_{_name}")
        .describe(f"Backward of {_name}: inputs (dy, y[, length]).")
        .set_attr_parser(SoftmaxParam)
        .set_num_inputs(lambda attrs: 3 if _uses_length(attrs) else 2)
        .set_num_outputs(lambda attrs: 2 if _uses_length(attrs) else 1)
        .set_attr(TIsBackward, True)
        .set_attr(FInplaceOption, _same_slot)
        .set_attr(FCompute_cpu, _backward(_name))
        .set_attr(FCompute_gpu, _backward(_name))
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
    "softmax_grad_rows",
    "softmax_rows",
    "split_axis",
    "store_rounded",
]
