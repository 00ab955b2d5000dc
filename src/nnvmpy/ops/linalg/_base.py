"""What every linalg op shares: dtype rule, shape checks, write requests, scratch, registration.

MXNet's linalg ops compute in float32 and float64 only; inputs and outputs share one
dtype. Each op is registered as `_linalg_<name>` (served as nd.linalg.<name> and
sym.linalg.<name>) and, as in MXNet 1.9.1, under the alias `linalg_<name>`; its backward
op is `_backward_linalg_<name>`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ...attrs import (
    FCompute_cpu,
    FCompute_gpu,
    FGradient,
    FInferShape,
    FInferType,
    FInplaceOption,
    FListInputNames,
    FListOutputNames,
    FResourceRequest,
    TIsBackward,
)
from ...base import InferError, NNVMError, Shape
from ...infer import shape_assign, shape_is_known, shape_str, type_assign
from ...kernel.launch import ADD, NULL, WRITE, is_gpu, req_code
from ...registry import NodeAttrs, register_op
from ...resource import ResourceRequest
from ._cblas import one_thread_per_call

__all__ = [
    "ADD",
    "NULL",
    "WRITE",
    "LinalgError",
    "Workspace",
    "assign",
    "batch_of",
    "dims",
    "fail",
    "is_gpu",
    "modes",
    "raise_if_flagged",
    "register_linalg",
    "require_matrix",
    "require_square",
]

FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


class LinalgError(NNVMError):
    """A matrix the op cannot work on (not positive-definite, singular)."""


def fail(op: str, message: str) -> LinalgError:
    return LinalgError(f"{op}: {message}")


# -- dtypes and shapes ------------------------------------------------------------------------


def _la_type(attrs: NodeAttrs, in_types: list[Any], out_types: list[Any]) -> bool:
    """One float dtype for every input and output (MXNet: float32 and float64 only)."""
    op = attrs.op
    assert op is not None
    ins = op.get_attr(FListInputNames)(attrs)
    slots = [f"input '{n}'" for n in ins] + [f"output {j}" for j in range(len(out_types))]
    everything = [*in_types, *out_types]
    for slot, t in zip(slots, everything):
        if t is not None and np.dtype(t) not in FLOATS:
            raise InferError(
                f"{op.name}: {slot} has dtype {np.dtype(t)}; linalg ops support float32 "
                "and float64 only"
            )
    known = next((t for t in everything if t is not None), None)
    if known is None:
        return False
    for i in range(len(in_types)):
        type_assign(in_types, i, known, f"{op.name}: {slots[i]}")
    for j in range(len(out_types)):
        type_assign(out_types, j, known, f"{op.name}: {slots[len(in_types) + j]}")
    return True


def require_matrix(op: str, slot: str, shape: Shape | None, min_ndim: int = 2) -> bool:
    """False while unknown; InferError when `shape` has fewer than min_ndim axes."""
    if shape is None:
        return False
    if len(shape) < min_ndim:
        what = "a matrix or a batch of matrices" if min_ndim == 2 else f"{min_ndim}-D or more"
        raise InferError(f"{op}: input '{slot}' of shape {shape_str(shape)} must be {what}")
    return True


def require_square(op: str, slot: str, shape: Shape | None) -> bool:
    """False while unknown; InferError unless the last two axes are equal."""
    if not require_matrix(op, slot, shape):
        return False
    assert shape is not None
    n, m = shape[-2], shape[-1]
    if n is not None and m is not None and n != m:
        raise InferError(
            f"{op}: input '{slot}' of shape {shape_str(shape)} must hold square matrices "
            "(its last two axes equal)"
        )
    return True


def assign_shapes(
    op: str, shapes: list[Shape | None], pairs: Sequence[tuple[int, Any, str]]
) -> None:
    """shape_assign each (index, shape, slot name) with the op named in conflicts."""
    for index, shape, slot in pairs:
        shape_assign(shapes, index, shape, f"{op}: {slot}")


def known(*shapes: Shape | None) -> bool:
    return all(shape_is_known(s) for s in shapes)


# -- running ----------------------------------------------------------------------------------


def dims(a: Any) -> tuple[int, ...]:
    """A plain tuple shape (the CUDA simulator's shapes do not slice)."""
    return tuple(int(d) for d in a.shape)


def batch_of(a: Any, trailing: int = 2) -> int:
    """How many matrices (trailing=2) or vectors (trailing=1) `a` holds."""
    shape = dims(a)
    return math.prod(shape[: len(shape) - trailing]) if len(shape) > trailing else 1


def modes(op: str, req: Sequence[Any]) -> list[int]:
    return [req_code(op, r) for r in req]


def assign(out: np.ndarray, mode: int, value: Any) -> None:
    """Write a NumPy result into `out` as the request says."""
    if mode == NULL:
        return
    value = np.asarray(value).reshape(out.shape)
    if mode == ADD:
        out += value
    else:
        np.copyto(out, value, casting="unsafe")


class Workspace:
    """Scratch arrays for one compute call: NumPy on the CPU, kTempSpace on the GPU.

    The GPU has no allocator a kernel may call, so every temporary of a GPU compute is
    carved out of the op's one temp-space resource (ops that need one request
    kTempSpace); arrays are C-contiguous, of the given shapes and one dtype. On the GPU
    every Workspace of a call shares that one buffer: keep one alive at a time.
    """

    def __init__(self, ctx: Any, dtype: Any, shapes: Sequence[tuple[int, ...]]) -> None:
        self.arrays: list[Any] = []
        dtype = np.dtype(dtype)
        if not is_gpu(ctx):
            self.arrays = [np.empty(s, dtype) for s in shapes]
            return
        sizes = [math.prod(s) for s in shapes]
        space = ctx.requested[0].get_space((max(sum(sizes), 1),), dtype)
        at = 0
        for shape, size in zip(shapes, sizes):
            self.arrays.append(space[at : at + size].reshape(shape) if size else space[:0])
            at += size

    def __getitem__(self, i: int) -> Any:
        return self.arrays[i]


def raise_if_flagged(ctx: Any, flags: Any, error: Callable[[int], NNVMError]) -> None:
    """Raise error(index) for the first nonzero entry of a flag array; waits for a GPU one."""
    if isinstance(flags, np.ndarray):  # the kernels launched on the CPU (tests)
        host = flags
    else:
        stream: Any = getattr(getattr(ctx, "run_ctx", None), "stream", None)
        host = flags.copy_to_host(stream=stream or 0)
        if stream:
            stream.synchronize()
    bad = np.flatnonzero(host)
    if bad.size:
        raise error(int(bad[0]))


# -- registration -----------------------------------------------------------------------------


def _temp_space(attrs: NodeAttrs) -> list[ResourceRequest]:
    return [ResourceRequest.kTempSpace]


def _small_stack(inputs: Sequence[Any]) -> bool:
    """Many matrices of at most 256 x 256 among the inputs (see _cblas.py)."""
    for a in inputs:
        shape = dims(a)
        if len(shape) > 2 and math.prod(shape[:-2]) > 1 and shape[-1] * shape[-2] <= 1 << 16:
            return True
    return False


def _on_cpu_one_blas_thread(compute: Any) -> Any:
    """compute, run with one BLAS thread per LAPACK/BLAS call on CPU stacks of matrices."""

    def run(attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]):
        if is_gpu(ctx) or not _small_stack(inputs):
            return compute(attrs, ctx, inputs, req, outputs)
        with one_thread_per_call():
            return compute(attrs, ctx, inputs, req, outputs)

    run.__name__ = getattr(compute, "__name__", "compute")
    return run


def register_linalg(
    name: str,
    *,
    describe: str,
    inputs: Sequence[tuple[str, str]],
    num_outputs: int,
    infer_shape: Any,
    forward: Any,
    gradient: Any,
    backward: Any,
    backward_inputs: int,
    param: Any = None,
    inplace: Sequence[tuple[int, int]] = (),
    output_names: Sequence[str] | None = None,
    alias: bool = True,
) -> None:
    """Register `_linalg_<name>` (and MXNet's alias `linalg_<name>`) with its backward op.

    Every linalg op computes on both devices through one compute function (which picks
    NumPy/LAPACK or GPU kernels; on CPU stacks of small matrices each BLAS/LAPACK call gets
    one thread), asks for temp space (its GPU scratch) and gets its
    backward op `_backward_linalg_<name>` with `backward_inputs` inputs and one output
    per forward input.
    """
    names = [n for n, _ in inputs]
    forward, backward = _on_cpu_one_blas_thread(forward), _on_cpu_one_blas_thread(backward)

    def input_names(attrs: NodeAttrs) -> list[str]:
        return list(names)

    def inplace_pairs(attrs: NodeAttrs) -> list[tuple[int, int]]:
        return list(inplace)

    def output_list(attrs: NodeAttrs) -> list[str]:
        return list(output_names or ())

    op = (
        register_op(f"_linalg_{name}")
        .describe(describe)
        .set_num_inputs(len(inputs))
        .set_num_outputs(num_outputs)
        .set_attr(FListInputNames, input_names)
        .set_attr(FInferShape, infer_shape)
        .set_attr(FInferType, _la_type)
        .set_attr(FResourceRequest, _temp_space)
        .set_attr(FCompute_cpu, forward)
        .set_attr(FCompute_gpu, forward)
        .set_attr(FGradient, gradient(f"_backward_linalg_{name}"))
    )
    if param is not None:
        op.set_attr_parser(param)
    if inplace:
        op.set_attr(FInplaceOption, inplace_pairs)
    if output_names is not None:
        op.set_attr(FListOutputNames, output_list)
    for arg, doc in inputs:
        op.add_argument(arg, "NDArray-or-Symbol", doc)
    if param is not None:
        op.add_arguments(param.fields())
    if alias:
        op.add_alias(f"linalg_{name}")
    back = (
        register_op(f"_backward_linalg_{name}")
        .set_num_inputs(backward_inputs)
        .set_num_outputs(len(inputs))
        .set_attr(TIsBackward, True)
        .set_attr(FResourceRequest, _temp_space)
        .set_attr(FCompute_cpu, backward)
        .set_attr(FCompute_gpu, backward)
    )
    if param is not None:
        back.set_attr_parser(param)
