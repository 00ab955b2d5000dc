"""What MXNet's (H, W, C) image ops share: one-per-call draws from the op's Philox stream,
shape inference, the FCompute wrapper (float16 through float32 on the CPU), storing as
MXNet's saturate_cast does, and the registration (in place allowed, the head gradient
passed through as MXNet's `_copy`). Used by image_color.py and image_random.py.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import kernel
from ..attrs import (
    FCompute_cpu,
    FCompute_gpu,
    FGradient,
    FInferShape,
    FInferType,
    FInplaceOption,
    FResourceRequest,
)
from ..graph.grad import ElemwiseGradUseNone
from ..infer import elemwise_type
from ..kernel import like
from ..kernel.launch import ADD, NULL, is_gpu, req_code, store
from ..kernel.philox import uniform_bits
from ..registry import NodeAttrs, Op, register_op, skip_in_source_locations
from .image import _image_shape, image_infer
from .random._common import random_resource

skip_in_source_locations(__file__)  # the ops are defined where register_image_op is called

_BITS = np.uint64(53)
FLOAT, INT, UINT8 = range(3)  # how a result is stored (cast_kind)
#: an op's work: run(OpContext, out, write mode, x, parsed params) on x's device
Run = Callable[[Any, Any, int, Any, Any], None]

# -- host side: draws, shapes, registration ---------------------------------------------------


def uniforms(resource: Any, n: int) -> list[float]:
    """n doubles uniform in [0, 1) from n stream counters of the op's kRandom resource."""
    k0, k1, first = resource.take_counters(n)
    return [float(uniform_bits(k0, k1, first + np.uint64(j), _BITS)) for j in range(n)]


def image_compute(op: str, run: Run) -> Any:
    """FCompute from run(ctx, out, mode, x, params): checks, kNullOp, float16 on the CPU.

    numba has no float16 arithmetic on the CPU: there the image is computed in float32
    copies (MXNet computes in float32 too) and stored back.
    """

    def compute(
        attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
    ) -> None:
        x, out = inputs[0], outputs[0]
        mode = req_code(op, req[0])
        _image_shape(op, tuple(x.shape))
        if mode == NULL:
            return
        if is_gpu(ctx) or out.dtype != np.float16:
            run(ctx, out, mode, x, attrs.parsed)
            return
        staged = out.astype(np.float32) if mode == ADD else np.empty(out.shape, np.float32)
        run(ctx, staged, mode, x.astype(np.float32), attrs.parsed)
        np.copyto(out, staged, casting="unsafe")

    return compute


def register_image_op(
    name: str, run: Run, param: Any, describe: str, random: bool = True, infer: Any = None
) -> Op:
    """An (H, W, C) -> (H, W, C) image op, in place allowed, gradient passed through."""
    op = (
        register_op(name)
        .describe(describe)
        .set_num_inputs(1)
        .set_num_outputs(1)
        .set_attr(FInferShape, infer or image_infer(name))
        .set_attr(FInferType, elemwise_type(1, 1))
        .set_attr(FInplaceOption, lambda attrs: [(0, 0)])
        .set_attr(FCompute_cpu, image_compute(name, run))
        .set_attr(FCompute_gpu, image_compute(name, run))
        # MXNet's choice: the head gradient unchanged (exact only for lighting's shift)
        .set_attr(FGradient, ElemwiseGradUseNone("_copy"))
        .add_argument("data", "NDArray-or-Symbol", "The input.")
    )
    if random:
        op.set_attr(FResourceRequest, random_resource)
    if param is not None:
        op.set_attr_parser(param).add_arguments(param.fields())
    return op


def cast_kind(out: Any) -> int:
    """How results become out's dtype: FLOAT as they are, INT truncated, UINT8 clamped too."""
    if out.dtype == np.uint8:
        return UINT8
    return INT if out.dtype.kind in "iub" else FLOAT


#: -0.0 as a NumPy float64: v + like(v, NEG_ZERO) is v for float32 and float64 and v
#: widened to float64 for integers and float16, in Python (the simulator) as compiled
NEG_ZERO = np.float64(-0.0)


# -- kernels ------------------------------------------------------------------------------------


@kernel.device_function
def widen(v):
    """v in its compute type: float32 and float64 as they are (v + -0.0 is v, signed zeros
    included), integers and float16 as float64."""
    return v + like(v, NEG_ZERO)


@kernel.device_function
def put(out, i, v, mode, cast):
    """Store v as MXNet's saturate_cast does: uint8 clamps to [0, 255], integers truncate
    (before a kAddTo adds, so the sum is the converted result plus what was there). The
    bounds are in v's type: a Python 0.0 and 255.0 made every caller's value a float64."""
    if cast == UINT8:
        v = min(max(v, like(v, 0)), like(v, 255))
    if cast != FLOAT:
        v = like(v, math.trunc(v))
    store(out, i, v, mode)
