"""Samplers with scalar parameters: _random_<distribution> (shape, ctx, dtype as parameters)
and _random_<distribution>_like (the shape and dtype of an input), plus _random_randint.

    nd.random_uniform(low=-1, high=1, shape=(2, 3))     # also _random_uniform, uniform
    nd._internal._random_normal_like(x, loc=0, scale=2)

Parameters are checked when parsed (scale > 0, low <= high, ...), so a bad one raises
ParamError at the call, naming the op and the argument. The element i of the output is
drawn from Philox stream counter `first + i` of the device's kRandom resource.
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
    FResourceRequest,
)
from ...base import InferError
from ...graph.grad import make_zero_grad_nodes
from ...infer import elemwise_shape, elemwise_type, type_assign
from ...kernel.launch import NULL, req_code
from ...param import field
from ...registry import NodeAttrs, register_op
from . import samplers
from ._common import (
    UNIFORM_BITS,
    CheckedParam,
    check_float,
    ctx_field,
    float_dtype_field,
    float_output_type,
    launch,
    random_resource,
    require,
    sampled_shape,
    shape_field,
)

# -- parameters: the distribution's own (the _like ops), then shape, ctx and dtype ---------------


class UniformLikeParam(CheckedParam):
    low = field(float, default=0.0, describe="Lower bound of the distribution.")
    high = field(float, default=1.0, describe="Upper bound of the distribution.")

    def check(self, op_name: str) -> None:
        require(self.high >= self.low, op_name, "high", f">= low ({self.low})", self.high)


class NormalLikeParam(CheckedParam):
    loc = field(float, default=0.0, describe="Mean of the distribution.")
    scale = field(float, default=1.0, describe="Standard deviation of the distribution.")

    def check(self, op_name: str) -> None:
        require(self.scale > 0, op_name, "scale", "> 0 (a standard deviation)", self.scale)


class GammaLikeParam(CheckedParam):
    alpha = field(float, default=1.0, describe="Alpha parameter (shape) of the gamma distribution.")
    beta = field(float, default=1.0, describe="Beta parameter (scale) of the gamma distribution.")

    def check(self, op_name: str) -> None:
        require(self.alpha > 0, op_name, "alpha", "> 0 (the shape)", self.alpha)
        require(self.beta > 0, op_name, "beta", "> 0 (the scale)", self.beta)


class ExponentialLikeParam(CheckedParam):
    lam = field(
        float, default=1.0, describe="Lambda parameter (rate) of the exponential distribution."
    )

    def check(self, op_name: str) -> None:
        require(self.lam > 0, op_name, "lam", "> 0 (the rate)", self.lam)


class PoissonLikeParam(CheckedParam):
    lam = field(float, default=1.0, describe="Lambda parameter (rate) of the Poisson distribution.")

    def check(self, op_name: str) -> None:
        require(self.lam >= 0, op_name, "lam", ">= 0 (the mean)", self.lam)


class NegativeBinomialLikeParam(CheckedParam):
    k = field(int, default=1, describe="Limit of unsuccessful experiments.")
    p = field(float, default=1.0, describe="Failure probability in each experiment.")

    def check(self, op_name: str) -> None:
        require(self.k > 0, op_name, "k", "> 0", self.k)
        require(0 <= self.p <= 1, op_name, "p", "in [0, 1] (a probability)", self.p)


class GeneralizedNegativeBinomialLikeParam(CheckedParam):
    mu = field(float, default=1.0, describe="Mean of the negative binomial distribution.")
    alpha = field(
        float,
        default=1.0,
        describe="Alpha (dispersion) parameter of the negative binomial distribution.",
    )

    def check(self, op_name: str) -> None:
        require(self.mu >= 0, op_name, "mu", ">= 0 (the mean)", self.mu)
        require(self.alpha >= 0, op_name, "alpha", ">= 0 (the dispersion)", self.alpha)


def _with_output(base: type[CheckedParam]) -> type[CheckedParam]:
    """base's fields, then MXNet's shape, ctx and dtype (the _random_* parameters)."""
    name = base.__name__.replace("LikeParam", "Param")
    fields = {"shape": shape_field(), "ctx": ctx_field(), "dtype": float_dtype_field()}
    return type(name, (base,), {**fields, "__module__": __name__})


UniformParam = _with_output(UniformLikeParam)
NormalParam = _with_output(NormalLikeParam)
GammaParam = _with_output(GammaLikeParam)
ExponentialParam = _with_output(ExponentialLikeParam)
PoissonParam = _with_output(PoissonLikeParam)
NegativeBinomialParam = _with_output(NegativeBinomialLikeParam)
GeneralizedNegativeBinomialParam = _with_output(GeneralizedNegativeBinomialLikeParam)


class RandIntParam(CheckedParam):
    low = field(int, describe="Lower bound of the distribution.")
    high = field(int, describe="Upper bound of the distribution.")
    shape = shape_field()
    ctx = ctx_field()
    dtype = field(
        str,
        default="None",
        enum={"None": -1, "int32": 4, "int64": 6},
        describe="DType of the output in case this can't be inferred. Defaults to int32 if "
        "not defined (dtype=None).",
    )

    def check(self, op_name: str) -> None:
        require(self.high > self.low, op_name, "high", f"> low ({self.low})", self.high)


# -- compute ------------------------------------------------------------------------------------


def sample_compute(code: int, a_name: str, b_name: str | None) -> Any:
    """FCompute of a scalar-parameter sampler: distribution `code` with (a, b) from attrs."""

    def compute(
        attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
    ) -> None:
        out = outputs[0]
        name = attrs.op.name if attrs.op else "random"
        p = attrs.parsed
        p.check(name)  # in the kernel: a failure of the running op (CheckedParam)
        mode = req_code(name, req[0])
        if mode == NULL or out.size == 0:
            return
        a = float(getattr(p, a_name))
        b = float(getattr(p, b_name)) if b_name else 0.0
        k0, k1, first = ctx.requested[0].take_counters(out.size)
        bits = np.uint64(UNIFORM_BITS[np.dtype(out.dtype)])
        loop = samplers.sampler_loops(code)[0]
        launch(ctx, loop, out, mode, code, a, b, k0, k1, first, bits)

    return compute


def _like_type(attrs: NodeAttrs, in_types: list[Any], out_types: list[Any]) -> bool:
    known = elemwise_type(1, 1)(attrs, in_types, out_types)
    check_float(attrs, in_types[0], "input 'data'")
    return bool(known)


_LIKE_DESCRIBE = (
    "Draws samples of the {dist} distribution with the parameters given, as an array with "
    "the shape and dtype of the input (whose values are not read)."
)

# suffix, code, parameters (like, full), the (a, b) fields, aliases, description
_Param = type[CheckedParam]
_Fields = tuple[str, str | None]
DISTRIBUTIONS: list[tuple[str, int, _Param, _Param, _Fields, tuple[str, ...], str]] = [
    ("uniform", samplers.UNIFORM, UniformLikeParam, UniformParam, ("low", "high"),
     ("uniform", "random_uniform"),
     "Draws random samples from a uniform distribution on [low, high)."),
    ("normal", samplers.NORMAL, NormalLikeParam, NormalParam, ("loc", "scale"),
     ("normal", "random_normal"),
     "Draws random samples from a normal (Gaussian) distribution with mean loc and "
     "standard deviation scale."),
    ("gamma", samplers.GAMMA, GammaLikeParam, GammaParam, ("alpha", "beta"),
     ("random_gamma",),
     "Draws random samples from a gamma distribution with shape alpha and scale beta."),
    ("exponential", samplers.EXPONENTIAL, ExponentialLikeParam, ExponentialParam,
     ("lam", None), ("random_exponential",),
     "Draws random samples from an exponential distribution with rate lam."),
    ("poisson", samplers.POISSON, PoissonLikeParam, PoissonParam, ("lam", None),
     ("random_poisson",),
     "Draws random samples from a Poisson distribution with mean lam. Samples are "
     "returned as floats."),
    ("negative_binomial", samplers.NEGATIVE_BINOMIAL, NegativeBinomialLikeParam,
     NegativeBinomialParam, ("k", "p"), ("random_negative_binomial",),
     "Draws random samples from a negative binomial distribution: the number of failures "
     "before the k-th success, with success probability p (a Poisson-gamma mixture). "
     "Samples are returned as floats."),
    ("generalized_negative_binomial", samplers.GENERALIZED_NEGATIVE_BINOMIAL,
     GeneralizedNegativeBinomialLikeParam, GeneralizedNegativeBinomialParam, ("mu", "alpha"),
     ("random_generalized_negative_binomial",),
     "Draws random samples from a generalized negative binomial distribution with mean mu "
     "and dispersion alpha (variance mu + alpha mu^2). Samples are returned as floats."),
]  # fmt: skip

for _suffix, _code, _like_param, _param, (_a, _b), _aliases, _doc in DISTRIBUTIONS:
    _compute = sample_compute(_code, _a, _b)
    (
        register_op(f"_random_{_suffix}")
        .describe(_doc)
        .set_attr_parser(_param)
        .set_num_inputs(0)
        .set_num_outputs(1)
        .set_attr(FInferShape, sampled_shape)
        .set_attr(FInferType, float_output_type)
        .set_attr(FResourceRequest, random_resource)
        .set_attr(FCompute_cpu, _compute)
        .set_attr(FCompute_gpu, _compute)
        .add_arguments(_param.fields())
    )
    for _alias in _aliases:
        register_op(f"_random_{_suffix}").add_alias(_alias)
    (
        register_op(f"_random_{_suffix}_like")
        .describe(_LIKE_DESCRIBE.format(dist=_suffix.replace("_", " ")))
        .set_attr_parser(_like_param)
        .set_num_inputs(1)
        .set_num_outputs(1)
        .set_attr(FInferShape, elemwise_shape(1, 1))
        .set_attr(FInferType, _like_type)
        .set_attr(FResourceRequest, random_resource)
        .set_attr(FCompute_cpu, _compute)
        .set_attr(FCompute_gpu, _compute)
        .set_attr(FGradient, make_zero_grad_nodes)
        .add_argument("data", "NDArray-or-Symbol", "The input (only its shape and dtype are used).")
        .add_arguments(_like_param.fields())
    )


# -- randint ------------------------------------------------------------------------------------


def _randint_type(attrs: NodeAttrs, in_types: list[Any], out_types: list[Any]) -> bool:
    want = attrs.parsed.dtype
    if want != "None":
        type_assign(out_types, 0, np.dtype(want), "_random_randint: output")
    elif out_types[0] is None:
        out_types[0] = np.dtype(np.int32)
    got = np.dtype(out_types[0])
    if got not in (np.dtype(np.int32), np.dtype(np.int64)):
        raise InferError(f"_random_randint: the output has dtype {got}; expected int32 or int64")
    return True


def _randint_compute(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    out = outputs[0]
    p = attrs.parsed
    p.check("_random_randint")  # in the kernel: a failure of the running op (CheckedParam)
    mode = req_code("_random_randint", req[0])
    if mode == NULL or out.size == 0:
        return
    k0, k1, first = ctx.requested[0].take_counters(out.size)
    span = np.uint64(p.high - p.low)
    launch(ctx, samplers.randint_loop, out, mode, np.int64(p.low), span, k0, k1, first)


(
    register_op("_random_randint")
    .describe("Draws random integers uniformly from the half-open interval [low, high).")
    .set_attr_parser(RandIntParam)
    .set_num_inputs(0)
    .set_num_outputs(1)
    .set_attr(FInferShape, sampled_shape)
    .set_attr(FInferType, _randint_type)
    .set_attr(FResourceRequest, random_resource)
    .set_attr(FCompute_cpu, _randint_compute)
    .set_attr(FCompute_gpu, _randint_compute)
    .add_arguments(RandIntParam.fields())
)
register_op("_random_randint").add_alias("random_randint")
