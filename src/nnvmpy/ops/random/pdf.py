"""_random_pdf_<distribution> (alias random_pdf_<distribution>): densities of samples.

The parameters are arrays of one shape S; the sample has shape S + [n...] (S itself for
one value per distribution) and the output the sample's shape: output[i, ...] is the
density of sample[i, ...] under the parameters at index i. Dirichlet's alpha has shape
S + [k], its sample S + [n...] + [k] and the output S + [n...], one density per k-vector.

    random_pdf_normal(sample=[[-1, 0, 1]], mu=[0], sigma=[1]) = [[0.242, 0.399, 0.242]]

is_log=True gives the log-density. The gradient reaches the sample and every parameter
(summed over each distribution's samples), except the sample of uniform and of the
discrete distributions, whose gradient is zero as in MXNet. The formulas (and where MXNet
does not check the support) are in pdf_kernels.py.
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
    TIsBackward,
)
from ...base import InferError
from ...graph.grad import ElemwiseGradUseInOut
from ...infer import merge_shapes, shape_assign, shape_is_known, shape_str, type_assign
from ...kernel.launch import NULL, req_code, run_rows
from ...param import Parameter, field
from ...registry import NodeAttrs, register_op
from .._index_kernels import half_as_float32
from . import pdf_kernels as K

_FLOATS = frozenset(np.dtype(t) for t in ("float16", "float32", "float64"))


class PdfParam(Parameter):
    is_log = field(
        bool,
        default=False,
        describe="If set, compute the density of the log-probability instead of the probability.",
    )


# distribution, code (None: dirichlet), inputs after 'sample' (name, description), what
PDFS: list[tuple[str, int | None, list[tuple[str, str]], str]] = [
    ("uniform", K.UNIFORM,
     [("low", "Lower bounds of the distributions."),
      ("high", "Upper bounds of the distributions.")],
     "uniform distributions on the intervals given by [low,high)"),
    ("normal", K.NORMAL,
     [("mu", "Means of the distributions."),
      ("sigma", "Standard deviations of the distributions.")],
     "normal distributions with parameters mu (mean) and sigma (standard deviation)"),
    ("gamma", K.GAMMA,
     [("alpha", "Alpha (shape) parameters of the distributions."),
      ("beta", "Beta (rate) parameters of the distributions.")],
     "gamma distributions with parameters alpha (shape) and beta (rate)"),
    ("exponential", K.EXPONENTIAL,
     [("lam", "Lambda (rate) parameters of the distributions.")],
     "exponential distributions with parameters lam (rate)"),
    ("poisson", K.POISSON,
     [("lam", "Lambda (rate) parameters of the distributions.")],
     "Poisson distributions with parameters lam (rate)"),
    ("negative_binomial", K.NEGATIVE_BINOMIAL,
     [("k", "Limits of unsuccessful experiments."),
      ("p", "Failure probabilities in each experiment.")],
     "negative binomial distributions with parameters k (failure limit) and p (failure "
     "probability)"),
    ("generalized_negative_binomial", K.GENERALIZED_NEGATIVE_BINOMIAL,
     [("mu", "Means of the distributions."),
      ("alpha", "Alpha (dispersion) parameters of the distributions.")],
     "generalized negative binomial distributions with parameters mu (mean) and alpha "
     "(dispersion)"),
    ("dirichlet", None,
     [("alpha", "Concentration parameters of the distributions.")],
     "Dirichlet distributions with parameter alpha"),
]  # fmt: skip


def _op_name(attrs: NodeAttrs) -> str:
    return attrs.op.name if attrs.op is not None else "?"


def _input_names(attrs: NodeAttrs) -> list[str]:
    fn = attrs.op.get_attr(FListInputNames) if attrs.op is not None else None
    return list(fn(attrs)) if fn is not None else []


def _merge(a: Any, b: Any, what: str) -> Any:
    try:
        return merge_shapes(a, b)
    except InferError:
        raise InferError(what) from None


def pdf_shape(event: int) -> Any:
    """FInferShape for `event` trailing dims per density (dirichlet's k: 1, else 0).

    The parameters share a shape P = S + E (E: the event dims); the sample is
    S + [n...] + E and the output S + [n...]. Each known part fills in the others.
    """

    def infer(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
        op, names = _op_name(attrs), _input_names(attrs)
        params: list[Any] = [None]
        for i in range(1, len(in_shapes)):
            try:
                shape_assign(params, 0, in_shapes[i])
            except InferError:
                raise InferError(
                    f"{op}: input '{names[i]}' has shape {shape_str(in_shapes[i])} but the "
                    f"parameters before it have {shape_str(params[0])}; the parameter arrays "
                    "must share one shape"
                ) from None
        p, x, y = params[0], in_shapes[0], out_shapes[0]
        if p is not None and len(p) < event:
            raise InferError(
                f"{op}: input '{names[1]}' has shape {shape_str(p)}; expected at least "
                f"{event} dimension (the last one the size k of each vector)"
            )
        if y is not None and (event == 0 or p is not None):
            from_y = tuple(y) + (tuple(p[len(p) - event :]) if event else ())
            x = _merge(
                x,
                from_y,
                f"{op}: input 'sample' has shape {shape_str(x)} but the output's shape "
                f"{shape_str(y)} asks for {shape_str(from_y)}",
            )
        if x is not None and p is not None:
            batch, ev = len(p) - event, tuple(p[len(p) - event :])
            want = f"{shape_str(p[:batch])} + (n...)" + (f" + {shape_str(ev)}" if event else "")
            bad = InferError(
                f"{op}: input 'sample' has shape {shape_str(x)}, but the parameters' shape "
                f"{shape_str(p)} asks for a sample of shape {want}"
            )
            if len(x) < len(p):
                raise bad
            head: Any
            tail: Any
            try:
                head = merge_shapes(tuple(x[:batch]), tuple(p[:batch]))
                tail = merge_shapes(tuple(x[len(x) - event :]), ev) if event else ()
            except InferError:
                raise bad from None
            p = tuple(head) + tuple(tail)
            x = tuple(head) + tuple(x[batch : len(x) - event]) + tuple(tail)
        shape_assign(in_shapes, 0, x, f"{op}: input 'sample'")
        for i in range(1, len(in_shapes)):
            shape_assign(in_shapes, i, p, f"{op}: input '{names[i]}'")
        x = in_shapes[0]
        if x is not None:
            shape_assign(out_shapes, 0, tuple(x[: len(x) - event]), f"{op}: output")
        return all(shape_is_known(s) for s in [*in_shapes, *out_shapes])

    return infer


def pdf_type(attrs: NodeAttrs, in_types: list[Any], out_types: list[Any]) -> bool:
    """The sample, the parameters and the output share one float dtype."""
    op, names = _op_name(attrs), _input_names(attrs)
    common: list[Any] = [out_types[0]]
    for i, t in enumerate(in_types):
        try:
            type_assign(common, 0, t)
        except InferError:
            raise InferError(
                f"{op}: input '{names[i]}' has dtype {np.dtype(t)} but "
                f"{common[0]} was inferred from the other inputs and the output; the "
                "sample and the parameters must share one dtype"
            ) from None
    if common[0] is not None and np.dtype(common[0]) not in _FLOATS:
        raise InferError(
            f"{op}: the sample and the parameters have dtype {np.dtype(common[0])}; "
            "expected float16, float32 or float64"
        )
    for i in range(len(in_types)):
        type_assign(in_types, i, common[0], f"{op}: input '{names[i]}'")
    type_assign(out_types, 0, common[0], f"{op}: output")
    return common[0] is not None


def _rows(param: Any, dist: int | None) -> int:
    """The number of distributions: the parameters' size, or dirichlet's alpha rows."""
    return param.size if dist is not None else math.prod(tuple(param.shape)[:-1])


def pdf_compute(dist: int | None) -> Any:
    """FCompute of _random_pdf_<dist> (None: dirichlet)."""

    def compute(
        attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
    ) -> None:
        op = _op_name(attrs)
        mode = req_code(op, req[0])
        rows = _rows(inputs[1], dist)
        if mode == NULL or outputs[0].size == 0 or rows == 0:
            return
        is_log = bool(attrs.parsed.is_log)
        with half_as_float32(ctx, outputs, [mode], inputs) as (outs, ins):
            out, n = outs[0], outs[0].size // rows
            if dist is None:
                k = tuple(ins[1].shape)[-1]
                run_rows(ctx, op, K.dirichlet_loop, out.size, out, mode, ins[0], ins[1], n, k,
                         is_log)  # fmt: skip
            else:
                p2 = ins[2] if len(ins) > 2 else ins[1]
                run_rows(ctx, op, K.pdf_loop, out.size, out, mode, ins[0], ins[1], p2, n, dist,
                         is_log)  # fmt: skip

    return compute


def pdf_backward(dist: int | None) -> Any:
    """FCompute of _backward_pdf_<dist>: inputs (dy, sample, params..., y), outputs the
    gradients of (sample, params...)."""

    def compute(
        attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
    ) -> None:
        op = _op_name(attrs)
        modes = [req_code(op, r) for r in req]
        p1 = inputs[2]
        rows = _rows(p1, dist)
        if all(m == NULL for m in modes) or rows == 0:
            return
        is_log = bool(attrs.parsed.is_log)
        with half_as_float32(ctx, outputs, modes, inputs) as (outs, ins):
            dy, y = ins[0], ins[-1]
            n = dy.size // rows
            if dist is None:
                k = tuple(p1.shape)[-1]
                run_rows(ctx, op, K.dirichlet_grad_loop, rows, outs[0], outs[1], dy, ins[1],
                         ins[2], y, n, k, is_log, modes[0], modes[1])  # fmt: skip
                return
            two = len(outs) > 2
            g2, m2, p2 = (outs[2], modes[2], ins[3]) if two else (outs[1], NULL, ins[2])
            run_rows(ctx, op, K.pdf_grad_loop, rows, outs[0], outs[1], g2, dy, ins[1], ins[2],
                     p2, y, n, dist, is_log, modes[0], modes[1], m2)  # fmt: skip

    return compute


_DESCRIBE = (
    "Computes the value of the PDF of *sample* of {what}.\n\n"
    "The parameter arrays must have the same shape, which must match the leftmost subshape "
    "of *sample*. That is, *sample* can have the same shape as the parameters, in which "
    "case the output contains one density per distribution, or *sample* can be a tensor "
    "of tensors with that shape, in which case the output is a tensor of densities such "
    "that the densities at index *i* in the output are given by the samples at index *i* "
    "in *sample* parameterized by the values of the parameters at index *i*.{extra}\n\n"
    "Examples::\n\n"
    "    sample = [[-2, -1, 0, 1, 2]]\n"
    "    random_pdf_normal(sample=sample, mu=[0], sigma=[1]) =\n"
    "        [[0.05399097, 0.24197073, 0.3989423, 0.24197073, 0.05399097]]"
)
_DIRICHLET = (
    " For dirichlet, *alpha* has shape S x [k], *sample* S x [n...] x [k] and the output "
    "S x [n...]: one density per k-vector."
)


def _names_fn(names: list[str]) -> Any:
    return lambda attrs: list(names)


for _dist, _code, _params, _what in PDFS:
    _names = ["sample", *(n for n, _ in _params)]
    _event = 1 if _code is None else 0
    _backward = f"_backward_pdf_{_dist}"
    _op = (
        register_op(f"_random_pdf_{_dist}")
        .describe(_DESCRIBE.format(what=_what, extra=_DIRICHLET if _event else ""))
        .set_attr_parser(PdfParam)
        .set_num_inputs(len(_names))
        .set_num_outputs(1)
        .set_attr(FListInputNames, _names_fn(_names))
        .set_attr(FInferShape, pdf_shape(_event))
        .set_attr(FInferType, pdf_type)
        .set_attr(FCompute_cpu, pdf_compute(_code))
        .set_attr(FCompute_gpu, pdf_compute(_code))
        .set_attr(FGradient, ElemwiseGradUseInOut(_backward))
        .add_argument("sample", "NDArray-or-Symbol", "Samples from the distributions.")
    )
    for _arg, _desc in _params:
        _op.add_argument(_arg, "NDArray-or-Symbol", _desc)
    _op.add_arguments(PdfParam.fields())
    register_op(f"_random_pdf_{_dist}").add_alias(f"random_pdf_{_dist}")
    (
        register_op(_backward)
        .set_attr_parser(PdfParam)
        .set_num_inputs(len(_names) + 2)
        .set_num_outputs(len(_names))
        .set_attr(TIsBackward, True)
        .set_attr(FCompute_cpu, pdf_backward(_code))
        .set_attr(FCompute_gpu, pdf_backward(_code))
    )
