"""What the random ops share: parameter fields, checked parameters, output shape and type
inference, and launching a sampler loop on the op's kRandom stream.

Every random op asks for one kRandom resource (the device's Philox stream, resource.py)
and reserves one stream counter per element it samples (`take_counters`), so its numbers
depend only on the seed and the ops before it. As in MXNet the samplers have no gradient:
ops with inputs register MakeZeroGradNodes, so a gradient pass treats them as constants.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ...base import InferError, ParamError
from ...infer import partial_shape, shape_assign, shape_str, type_assign
from ...kernel import ParallelFor
from ...kernel.launch import ADD, flat, is_gpu
from ...param import Parameter, Shape, field
from ...registry import NodeAttrs
from ...resource import ResourceRequest
from ...util import is_np_shape

FLOAT_DTYPES = {"None": -1, "float32": 0, "float64": 1, "float16": 2}
_FLOATS = frozenset(np.dtype(t) for t in ("float16", "float32", "float64"))
_HALF = np.dtype(np.float16)
#: mantissa bits of a uniform drawn for each float dtype: exact there, never rounds to 1
UNIFORM_BITS = {np.dtype(np.float16): 11, np.dtype(np.float32): 24, np.dtype(np.float64): 53}


def random_resource(attrs: NodeAttrs) -> list[ResourceRequest]:
    """FResourceRequest of every random op: the device's Philox stream."""
    return [ResourceRequest.kRandom]


# -- parameters ---------------------------------------------------------------------------------


def shape_field(describe: str = "Shape of the output.") -> Any:
    return field(Shape, default=(), describe=describe)


def ctx_field() -> Any:
    return field(
        str,
        default="",
        describe="Context of output, in format [cpu|gpu|cpu_pinned](n). Only used for "
        "imperative calls.",
    )


def float_dtype_field() -> Any:
    return field(
        str,
        default="None",
        enum=FLOAT_DTYPES,
        describe="DType of the output in case this can't be inferred. Defaults to float32 "
        "if not defined (dtype=None).",
    )


class CheckedParam(Parameter):
    """A Parameter whose values are also checked together (`check`) by the op's kernel.

    As in MXNet (whose samplers CHECK their parameters in Forward), a value outside the
    distribution's domain is a failure of the running op, not of the call: the call
    returns, and the next wait on the output (or on everything) raises the ParamError, as
    the engine reports any failed function. Parsing (types, enums, unknown names) still
    fails at the call.
    """

    def check(self, op_name: str) -> None:
        """Raise ParamError naming the op and the argument when a value is out of domain."""


def require(ok: bool, op_name: str, name: str, expected: str, value: Any) -> None:
    """ParamError "op: parameter 'name' must be <expected>, got <value>" unless ok."""
    if not ok:
        raise ParamError(f"{op_name}: parameter {name!r} must be {expected}, got {value!r}")


# -- shape and type inference -------------------------------------------------------------------


def _op_name(attrs: NodeAttrs) -> str:
    return attrs.op.name if attrs.op is not None else "?"


def requested_shape(attrs: NodeAttrs, shape: Sequence[int]) -> Any:
    """The shape parameter in our form: () and 0 dims are unknown unless np_shape is on."""
    if any(d < 0 for d in shape):
        raise InferError(
            f"{_op_name(attrs)}: parameter 'shape' {shape_str(tuple(shape))} has a negative "
            "dimension; expected sizes >= 0"
        )
    if is_np_shape():
        return tuple(shape)
    return partial_shape(shape) if len(shape) else None


def sampled_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    """FInferShape of an op without inputs: the output has the `shape` parameter."""
    return shape_assign(
        out_shapes,
        0,
        requested_shape(attrs, attrs.parsed.shape),
        f"{_op_name(attrs)}: output",
    )


def check_float(attrs: NodeAttrs, dtype: Any, what: str) -> None:
    if dtype is not None and np.dtype(dtype) not in _FLOATS:
        raise InferError(
            f"{_op_name(attrs)}: {what} has dtype {np.dtype(dtype)}; expected float16, "
            "float32 or float64"
        )


def float_output_type(attrs: NodeAttrs, in_types: list[Any], out_types: list[Any]) -> bool:
    """FInferType of a sampler: the dtype parameter, else a known output's, else float32."""
    want = attrs.parsed.dtype
    if want != "None":
        type_assign(out_types, 0, np.dtype(want), f"{_op_name(attrs)}: output")
    elif out_types[0] is None:
        out_types[0] = np.dtype(np.float32)
    check_float(attrs, out_types[0], "the output")
    return True


# -- launching ----------------------------------------------------------------------------------


def _is_scalar(a: Any) -> bool:
    return isinstance(a, np.generic) or not hasattr(a, "shape")  # np.uint64 has a .shape


def launch(
    ctx: Any,
    loop: ParallelFor,
    out: Any,
    mode: int,
    *args: Any,
    n: int | None = None,
    written: Sequence[int] = (),
) -> None:
    """loop.launch(ctx, n, flat out, mode, *args) with arrays flattened; n: out's size.

    numba cannot compute in float16 on the CPU: there float16 arrays are read from float32
    copies, and the output and the arguments at the `written` positions are written back
    (their copies hold the old values, so an adding mode adds to them).
    """
    n = math.prod(tuple(out.shape)) if n is None else n
    if n == 0:
        return
    arrays = [flat(out)] + [a if _is_scalar(a) else flat(a) for a in args]
    staged: list[tuple[Any, Any]] = []
    if not is_gpu(ctx):
        for k, a in enumerate(arrays):
            if isinstance(a, np.ndarray) and a.dtype == _HALF:
                copy = a.astype(np.float32) if k or mode == ADD else np.empty(a.size, np.float32)
                if k == 0 or k - 1 in written:
                    staged.append((a, copy))
                arrays[k] = copy
    loop.launch(ctx, n, arrays[0], mode, *arrays[1:], work=math.prod(tuple(out.shape)))
    for original, copy in staged:
        np.copyto(original, copy, casting="unsafe")


__all__ = [
    "FLOAT_DTYPES",
    "UNIFORM_BITS",
    "CheckedParam",
    "check_float",
    "ctx_field",
    "float_dtype_field",
    "float_output_type",
    "launch",
    "random_resource",
    "requested_shape",
    "require",
    "sampled_shape",
    "shape_field",
]
