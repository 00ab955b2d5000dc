"""SimpleOp: MXNet's unified unary/binary operator API, translated into registry attributes.

    (register_simple_op("simple_smooth_l1")
     .set_function(nv.cpu, smooth_l1_forward, SimpleOpInplaceOption.kNoInplace)
     .set_gradient(nv.cpu, smooth_l1_backward, SimpleOpInplaceOption.kInplaceOutIn)
     .set_enable_scalar(True)
     .describe("Smooth L1 loss"))

registers `simple_smooth_l1` (FInferShape from the shape function, FInferType,
FInplaceOption, FCompute<dev>, FGradient) and `_backward_simple_smooth_l1` (TIsBackward,
FCompute<dev>). What the backward node reads — the output gradient only, also the
output value, or also the inputs — is read from the annotations of the gradient
function's parameters (OutputGrad, OutputValue, Input0/Input1), where MXNet overloaded
on the C++ function-pointer type. Functions get arrays (NumPy on CPU) and write `ret`
as `req` says; `assign(ret, req, value)` is MXNet's ASSIGN_DISPATCH.
"""

from __future__ import annotations

import enum
import inspect
import typing
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Self

from .attrs import (
    FGradient,
    FInferShape,
    FInferType,
    FInplaceOption,
    FListInputNames,
    FResourceRequest,
    TIsBackward,
    fcompute,
)
from .base import Context, NNVMError, ParamError
from .graph.grad import ElemwiseGradUseIn, ElemwiseGradUseNone, ElemwiseGradUseOut
from .infer import elemwise_shape, elemwise_type, shape_assign, shape_is_known
from .operator.legacy import assign, call_user
from .param import Parameter
from .param import field as param_field
from .registry import NodeAttrs, Op, register_op, skip_in_source_locations
from .resource import OpContext, Resource, ResourceRequest

skip_in_source_locations(__file__)


class SimpleOpInplaceOption(enum.IntEnum):
    """Which arrays may share memory (a hint to the memory planner)."""

    kNoInplace = 0
    kInplaceInOut = 1  # unary forward: input with output
    kInplaceOutIn = 2  # unary gradient: out_grad with in_grad
    kInplaceLhsOut = 3  # binary forward: lhs with output
    kInplaceOutLhs = 4  # binary gradient: out_grad with lhs_grad


@dataclass
class GradFunctionArgument:
    """One array handed to a gradient function (MXNet's GradFunctionArgument)."""

    data: Any


class OutputGrad(GradFunctionArgument):
    """The gradient of the output."""


class OutputValue(GradFunctionArgument):
    """The forward output (makes the backward node read it)."""


class Input0(GradFunctionArgument):
    """The forward input, or the lhs of a binary op (makes the backward node read inputs)."""


class Input1(GradFunctionArgument):
    """The rhs of a binary op."""


@dataclass
class EnvArguments:
    """Extra arguments: `scalar` (set_enable_scalar), `kwargs` (set_enable_kwargs, a dict
    of strings for Parameter.parse) and the requested `resource`s."""

    scalar: float | None = None
    kwargs: dict[str, str] = field(default_factory=dict)
    resource: list[Resource] = field(default_factory=list)


class _ScalarParam(Parameter):
    scalar = param_field(float, describe="The scalar argument.")


# per gradient kind: (backward inputs after out_grad, arguments of unary, of binary)
_GRAD_KINDS = {
    "none": (ElemwiseGradUseNone, 5, 7),
    "out": (ElemwiseGradUseOut, 6, 8),
    "in": (ElemwiseGradUseIn, 6, 9),
}
_FWD_INPLACE = {1: SimpleOpInplaceOption.kInplaceInOut, 2: SimpleOpInplaceOption.kInplaceLhsOut}
_BWD_INPLACE = {1: SimpleOpInplaceOption.kInplaceOutIn, 2: SimpleOpInplaceOption.kInplaceOutLhs}


def _device(dev: Any) -> str:
    """'cpu' or 'gpu' from nv.cpu / nv.gpu, a Context, or the strings."""
    if isinstance(dev, Context):
        dev = dev.device_type
    elif callable(dev):
        dev = getattr(dev, "__name__", dev)
    if dev not in ("cpu", "gpu"):
        raise NNVMError(f"dev must be nv.cpu, nv.gpu, 'cpu' or 'gpu', got {dev!r}")
    return str(dev)


def _fn_name(fn: Any) -> str:
    return str(getattr(fn, "__name__", fn))


def _num_params(fn: Callable[..., Any]) -> int:
    return len(inspect.signature(fn).parameters)


def _annotations(fn: Callable[..., Any]) -> set[str]:
    """Names of the GradFunctionArgument classes the parameters are annotated with."""
    try:
        hints = typing.get_type_hints(fn)
    except Exception:
        hints = dict(getattr(fn, "__annotations__", {}))
    names = set()
    for hint in hints.values():
        name = hint if isinstance(hint, str) else getattr(hint, "__name__", "")
        names.add(name.rsplit(".", 1)[-1])
    return names & {"OutputGrad", "OutputValue", "Input0", "Input1"}


class SimpleOp:
    """The builder register_simple_op returns; every method registers attributes at once."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.arity = 0  # 1 or 2 once a function is set
        self.shape_fn: Callable[..., Any] | None = None
        self.enable_scalar = self.enable_kwargs = False
        self.resources: list[ResourceRequest] = []
        self.fwd_inplace = self.bwd_inplace = False
        self.grad_kind: str | None = None
        self.op = (
            register_op(name)
            .set_attr_parser(self._parse)
            .set_attr(FListInputNames, lambda a: ["data"] if self.arity < 2 else ["lhs", "rhs"])
            .set_attr(FInferShape, self._infer_shape)
            .set_attr(FInferType, lambda a, i, o: elemwise_type(len(i), 1)(a, i, o))
            .set_attr(FInplaceOption, lambda a: [(0, 0)] if self.fwd_inplace else [])
            .set_attr(FResourceRequest, lambda a: list(self.resources))
        )

    def _error(self, msg: str) -> NNVMError:
        return NNVMError(f"{self.name}: {msg}")

    # -- the MXNet builder methods ----------------------------------------------------------

    def describe(self, description: str) -> Self:
        self.op.describe(description)
        return self

    def set_shape_function(self, fn: Callable[..., Any]) -> Self:
        """fn(src_shape, env) or fn(lhs_shape, rhs_shape, env) -> the output shape."""
        self.shape_fn = fn
        return self

    def set_enable_scalar(self, enable: bool = True) -> Self:
        if enable and self.enable_kwargs:
            raise self._error("scalar and kwargs cannot both be enabled (set_enable_kwargs)")
        self.enable_scalar = bool(enable)
        if enable:
            self.op.add_argument("scalar", "float, required", "The scalar (env.scalar).")
        return self

    def set_enable_kwargs(self, enable: bool = True) -> Self:
        if enable and self.enable_scalar:
            raise self._error("scalar and kwargs cannot both be enabled (set_enable_scalar)")
        self.enable_kwargs = bool(enable)
        return self

    def set_resource_request(self, req: ResourceRequest | Sequence[ResourceRequest]) -> Self:
        reqs = [req] if isinstance(req, ResourceRequest) else list(req)
        if not all(isinstance(r, ResourceRequest) for r in reqs):
            raise self._error(f"set_resource_request expects ResourceRequest kinds, got {req!r}")
        self.resources = reqs
        return self

    def set_function(
        self,
        dev: Any,
        fn: Callable[..., Any],
        inplace_option: Any = SimpleOpInplaceOption.kNoInplace,
    ) -> Self:
        """fn(src, env, ret, req, ctx) (unary) or fn(lhs, rhs, env, ret, req, ctx) (binary)."""
        arity = {5: 1, 6: 2}.get(_num_params(fn))
        if arity is None:
            raise self._error(
                f"set_function: {_fn_name(fn)} takes {_num_params(fn)} parameters; expected 5 "
                f"(src, env, ret, req, ctx) or 6 (lhs, rhs, env, ret, req, ctx)"
            )
        self._set_arity(arity, "set_function")
        self.fwd_inplace = self._inplace(inplace_option, _FWD_INPLACE[arity], "set_function")
        self.op.set_num_inputs(arity)
        if not self.op.arguments:
            for arg in ["data"] if arity == 1 else ["lhs", "rhs"]:
                self.op.add_argument(arg, "NDArray-or-Symbol", f"The {arg} operand.")
        self.op.set_attr(fcompute(_device(dev)), self._forward_compute(fn))
        return self

    def set_gradient(
        self,
        dev: Any,
        fn: Callable[..., Any],
        inplace_option: Any = SimpleOpInplaceOption.kNoInplace,
    ) -> Self:
        """fn's parameter annotations (OutputGrad, OutputValue, Input0/Input1) say what it reads."""
        found = _annotations(fn)
        if "OutputGrad" not in found:
            raise self._error(
                f"set_gradient: annotate {_fn_name(fn)}'s first parameter with "
                f"nv.simple_op.OutputGrad (and OutputValue or Input0/Input1 for what else it "
                f"reads), so the backward node knows its inputs"
            )
        kind = "out" if "OutputValue" in found else "in" if "Input0" in found else "none"
        n = _num_params(fn)
        arity = next((a for a in (1, 2) if _GRAD_KINDS[kind][a] == n), None)
        if arity is None:
            expected = " or ".join(str(_GRAD_KINDS[kind][a]) for a in (1, 2))
            raise self._error(
                f"set_gradient: {_fn_name(fn)} takes {n} parameters; expected {expected}"
            )
        self._set_arity(arity, "set_gradient")
        if self.grad_kind not in (None, kind):
            raise self._error(
                f"set_gradient: reads {kind!r} but an earlier gradient read {self.grad_kind!r}"
            )
        bwd_name = f"_backward_{self.name}"
        if self.grad_kind is None:
            self.grad_kind = kind
            self.op.set_attr(FGradient, _GRAD_KINDS[kind][0](bwd_name))
            n_in = {"none": 1, "out": 2, "in": 1 + arity}[kind]
            (
                register_op(bwd_name)
                .set_attr_parser(self._parse)
                .set_num_inputs(n_in)
                .set_num_outputs(arity)
                .set_attr(TIsBackward, True)
                .set_attr(FInplaceOption, lambda a: [(0, 0)] if self.bwd_inplace else [])
                .set_attr(FResourceRequest, lambda a: list(self.resources))
            )
        self.bwd_inplace = self._inplace(inplace_option, _BWD_INPLACE[arity], "set_gradient")
        Op.get(bwd_name).set_attr(fcompute(_device(dev)), self._backward_compute(fn, kind))
        return self

    # -- translation ----------------------------------------------------------------------------

    def _set_arity(self, arity: int, where: str) -> None:
        if self.arity not in (0, arity):
            kinds = {1: "unary", 2: "binary"}
            raise self._error(
                f"{where}: a {kinds[arity]} function, but the op is {kinds[self.arity]}"
            )
        self.arity = arity

    def _inplace(self, option: Any, allowed: SimpleOpInplaceOption, where: str) -> bool:
        option = SimpleOpInplaceOption(option)
        if option not in (SimpleOpInplaceOption.kNoInplace, allowed):
            raise self._error(
                f"{where}: inplace option {option.name}; use kNoInplace or {allowed.name}"
            )
        return option == allowed

    def _parse(self, attrs: NodeAttrs) -> EnvArguments:
        kwargs = {
            k: v for k, v in attrs.dict.items() if not (k.startswith("__") and k.endswith("__"))
        }
        if self.enable_scalar:
            return EnvArguments(scalar=_ScalarParam.parse(kwargs, op_name=self.name).scalar)
        if self.enable_kwargs:
            return EnvArguments(kwargs=kwargs)
        if kwargs:
            raise ParamError(
                f"{self.name}: takes no parameters, got {sorted(kwargs)} "
                f"(set_enable_scalar / set_enable_kwargs allow them)"
            )
        return EnvArguments()

    def _infer_shape(self, attrs: NodeAttrs, ins: list[Any], outs: list[Any]) -> bool:
        if self.shape_fn is None:  # the default: all the same shape (binary: checked equal)
            return bool(elemwise_shape(len(ins), 1)(attrs, ins, outs))
        if not all(map(shape_is_known, ins)):
            return False
        env: EnvArguments = attrs.parsed
        shape = call_user(self.name, "shape function", self.shape_fn, *ins, env)
        return shape_assign(outs, 0, tuple(shape), f"{self.name}: output")

    def _forward_compute(self, fn: Callable[..., Any]) -> Callable[..., None]:
        def compute(
            attrs: NodeAttrs, ctx: OpContext, inputs: list[Any], req: list[Any], outputs: list[Any]
        ) -> None:
            env = EnvArguments(attrs.parsed.scalar, attrs.parsed.kwargs, ctx.requested)
            fn(*inputs, env, outputs[0], req[0], ctx.run_ctx)

        return compute

    def _backward_compute(self, fn: Callable[..., Any], kind: str) -> Callable[..., None]:
        wraps: dict[str, list[type[GradFunctionArgument]]] = {
            "none": [],
            "out": [OutputValue],
            "in": [Input0, Input1],
        }
        wrap = wraps[kind]

        def compute(
            attrs: NodeAttrs, ctx: OpContext, inputs: list[Any], req: list[Any], outputs: list[Any]
        ) -> None:
            env = EnvArguments(attrs.parsed.scalar, attrs.parsed.kwargs, ctx.requested)
            extra = [cls(x) for cls, x in zip(wrap, inputs[1:])]
            fn(OutputGrad(inputs[0]), *extra, env, *outputs, *req, ctx.run_ctx)

        return compute


_builders: dict[str, SimpleOp] = {}


def register_simple_op(name: str) -> SimpleOp:
    """MXNET_REGISTER_SIMPLE_OP: the builder for op `name` (and `_backward_<name>`).

    Get-or-create, as register_op: a second call (say, from the module adding the GPU
    functions) returns the same builder.
    """
    builder = _builders.get(name)
    if builder is None or name not in Op.list_op_names() or Op.get(name) is not builder.op:
        builder = _builders[name] = SimpleOp(name)  # new, or its op was unregistered
    return builder


__all__ = [
    "EnvArguments",
    "GradFunctionArgument",
    "Input0",
    "Input1",
    "OutputGrad",
    "OutputValue",
    "SimpleOp",
    "SimpleOpInplaceOption",
    "assign",
    "register_simple_op",
]
