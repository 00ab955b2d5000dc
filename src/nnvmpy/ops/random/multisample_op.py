"""Samplers with per-row parameters: _sample_<distribution> (alias sample_<distribution>).

The parameters are input arrays of one shape [s]; with the `shape` parameter [t] the output
has shape [s] + [t], output[i] holding samples of the distribution parameterised by the
inputs at index i (one sample each when [t] is empty):

    sample_uniform(low=[0.0, 2.5], high=[1.0, 3.7], shape=(2,))   # 2 x 2 samples

Parameter values are read on the device, so a value outside the distribution's domain
(sigma < 0, lam < 0, ...) gives NaN samples rather than an error (samplers.py).
"""

from __future__ import annotations

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
)
from ...base import InferError
from ...graph.grad import make_zero_grad_nodes
from ...infer import shape_assign, shape_is_known, shape_str, type_assign
from ...kernel.launch import NULL, req_code
from ...param import Parameter, Shape, field
from ...registry import NodeAttrs, register_op
from . import samplers
from ._common import UNIFORM_BITS, check_float, float_dtype_field, launch, random_resource


class MultiSampleParam(Parameter):
    shape = field(Shape, default=(), describe="Shape to be sampled from each random distribution.")
    dtype = float_dtype_field()


def _names(attrs: NodeAttrs) -> list[str]:
    fn = attrs.op.get_attr(FListInputNames) if attrs.op is not None else None
    return list(fn(attrs)) if fn is not None else []


def _shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    """Inputs share one shape [s]; the output is [s] + shape, inferred either way."""
    op = attrs.op.name if attrs.op is not None else "?"
    extra = tuple(attrs.parsed.shape)
    if any(d < 0 for d in extra):
        raise InferError(
            f"{op}: parameter 'shape' {shape_str(extra)} has a negative dimension; "
            "expected sizes >= 0"
        )
    names = _names(attrs)
    common: list[Any] = [None]
    for i, s in enumerate(in_shapes):
        try:
            shape_assign(common, 0, s)
        except InferError:
            raise InferError(
                f"{op}: input '{names[i]}' has shape {shape_str(s)} but the inputs before it "
                f"have {shape_str(common[0])}; the parameter arrays must share one shape"
            ) from None
    out = out_shapes[0]
    if out is not None:
        if len(out) < len(extra):
            raise InferError(
                f"{op}: output has shape {shape_str(out)}, which cannot end in the sample "
                f"shape {shape_str(extra)}"
            )
        shape_assign(common, 0, tuple(out[: len(out) - len(extra)]), f"{op}: the inputs")
    for i in range(len(in_shapes)):
        shape_assign(in_shapes, i, common[0], f"{op}: input '{names[i]}'")
    if common[0] is not None:
        shape_assign(out_shapes, 0, tuple(common[0]) + extra, f"{op}: output")
    return shape_is_known(out_shapes[0]) and all(shape_is_known(s) for s in in_shapes)


def _type(attrs: NodeAttrs, in_types: list[Any], out_types: list[Any]) -> bool:
    """Inputs share one float dtype; the output's is the dtype parameter, else float32."""
    op = attrs.op.name if attrs.op is not None else "?"
    names = _names(attrs)
    common: list[Any] = [None]
    for i, t in enumerate(in_types):
        try:
            type_assign(common, 0, t)
        except InferError:
            raise InferError(
                f"{op}: input '{names[i]}' has dtype {np.dtype(t)} but the inputs before it "
                f"have {common[0]}; the parameter arrays must share one dtype"
            ) from None
    for i in range(len(in_types)):
        type_assign(in_types, i, common[0], f"{op}: input '{names[i]}'")
    check_float(attrs, common[0], "the inputs")
    want = attrs.parsed.dtype
    if want != "None":
        type_assign(out_types, 0, np.dtype(want), f"{op}: output")
    elif out_types[0] is None:
        out_types[0] = np.dtype(np.float32)
    check_float(attrs, out_types[0], "the output")
    return common[0] is not None


def multisample_compute(code: int) -> Any:
    """FCompute of _sample_<distribution> `code`: the row of element i is i // len(shape)."""

    def compute(
        attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
    ) -> None:
        out = outputs[0]
        mode = req_code(attrs.op.name if attrs.op else "_sample", req[0])
        rows = inputs[0].size
        if mode == NULL or out.size == 0 or rows == 0:
            return
        p1 = inputs[0]
        p2 = inputs[1] if len(inputs) > 1 else p1
        k0, k1, first = ctx.requested[0].take_counters(out.size)
        bits = np.uint64(UNIFORM_BITS[np.dtype(out.dtype)])
        per_row = out.size // rows
        loop = samplers.sampler_loops(code)[1]
        launch(ctx, loop, out, mode, code, p1, p2, per_row, k0, k1, first, bits)

    return compute


_DESCRIBE = (
    "Concurrent sampling from multiple {what}.\n\n"
    "The parameters of the distributions are provided as input arrays of one shape [s]; "
    "with the shape parameter [t] the output has shape [s]x[t], and output[i] holds "
    "samples drawn from the distribution parameterised by the input values at index i. "
    "Without it one sample is drawn per distribution."
)

# distribution, code, inputs (name, description), what the op samples
MULTI: list[tuple[str, int, list[tuple[str, str]], str]] = [
    ("uniform", samplers.UNIFORM,
     [("low", "Lower bounds of the distributions."),
      ("high", "Upper bounds of the distributions.")],
     "uniform distributions on the intervals given by [low, high)"),
    ("normal", samplers.NORMAL,
     [("mu", "Means of the distributions."),
      ("sigma", "Standard deviations of the distributions.")],
     "normal distributions with parameters mu (mean) and sigma (standard deviation)"),
    ("gamma", samplers.GAMMA,
     [("alpha", "Alpha (shape) parameters of the distributions."),
      ("beta", "Beta (scale) parameters of the distributions.")],
     "gamma distributions with parameters alpha (shape) and beta (scale)"),
    ("exponential", samplers.EXPONENTIAL,
     [("lam", "Lambda (rate) parameters of the distributions.")],
     "exponential distributions with parameters lambda (rate)"),
    ("poisson", samplers.POISSON,
     [("lam", "Lambda (rate) parameters of the distributions.")],
     "Poisson distributions with parameters lambda (rate); samples are floats"),
    ("negative_binomial", samplers.NEGATIVE_BINOMIAL,
     [("k", "Limits of unsuccessful experiments."),
      ("p", "Failure probabilities in each experiment.")],
     "negative binomial distributions with parameters k (failure limit) and p (failure "
     "probability); samples are floats"),
    ("generalized_negative_binomial", samplers.GENERALIZED_NEGATIVE_BINOMIAL,
     [("mu", "Means of the distributions."),
      ("alpha", "Alpha (dispersion) parameters of the distributions.")],
     "generalized negative binomial distributions with parameters mu (mean) and alpha "
     "(dispersion); samples are floats"),
]  # fmt: skip


def _input_names(names: list[str]) -> Any:
    return lambda attrs: list(names)


for _dist, _code, _inputs, _what in MULTI:
    _compute = multisample_compute(_code)
    _op = (
        register_op(f"_sample_{_dist}")
        .describe(_DESCRIBE.format(what=_what))
        .set_attr_parser(MultiSampleParam)
        .set_num_inputs(len(_inputs))
        .set_num_outputs(1)
        .set_attr(FListInputNames, _input_names([n for n, _ in _inputs]))
        .set_attr(FInferShape, _shape)
        .set_attr(FInferType, _type)
        .set_attr(FResourceRequest, random_resource)
        .set_attr(FCompute_cpu, _compute)
        .set_attr(FCompute_gpu, _compute)
        .set_attr(FGradient, make_zero_grad_nodes)
    )
    for _arg, _desc in _inputs:
        _op.add_argument(_arg, "NDArray-or-Symbol", _desc)
    _op.add_arguments(MultiSampleParam.fields())
    _op.add_alias(f"sample_{_dist}")
