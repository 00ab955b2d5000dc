"""MXNet's legacy OperatorProperty / Operator, translated into ordinary registry attributes.

`register_op_property("Name", Prop, param_cls)` registers two ops, exactly as MXNet's
legacy_op_util.cc did on top of NNVM:

    Name            FListInputNames (arguments + auxiliary states), FListOutputNames,
                    FNumVisibleOutputs, FMutateInputs (the aux indices), FInferShape,
                    FInferType, FInplaceOption, FResourceRequest, FCreateOpState
                    (create_operator, once per bound node and device),
                    FStatefulCompute<cpu/gpu> (Operator.forward), FGradient
    _backward_Name  TIsBackward, FInplaceOption, FResourceRequest,
                    FStatefulCompute<cpu/gpu> (Operator.backward); no FCreateOpState, so
                    it reuses the state of its forward node (control dependency 0)

The backward node takes only what declare_backward_dependency lists (plus the aux
states), so an output it does not list is freed by PlanMemory once its forward readers
are done. attrs.parsed of both ops is a PropInfo; the CustomOp front-end (custom.py)
builds PropInfos too and shares everything here except how a state is created and run.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..attrs import (
    FCreateOpState,
    FGradient,
    FInferShape,
    FInferType,
    FInplaceOption,
    FListInputNames,
    FListOutputNames,
    FMutateInputs,
    FNumVisibleOutputs,
    FResourceRequest,
    TIsBackward,
    fstateful_compute,
)
from ..base import InferError, NNVMError, OpReqType
from ..graph.grad import make_node
from ..graph.node import Node, NodeEntry
from ..infer import partial_shape, shape_assign, shape_is_known, type_assign
from ..param import Parameter
from ..registry import NodeAttrs, Op, register_op, skip_in_source_locations
from ..resource import OpContext

skip_in_source_locations(__file__)


def assign(dst: Any, req: OpReqType | str, src: Any) -> None:
    """Write `src` into the array `dst` as `req` asks (MXNet's ASSIGN_DISPATCH)."""
    req = OpReqType.parse(req)
    if req in (OpReqType.kWriteTo, OpReqType.kWriteInplace):
        dst[...] = src
    elif req == OpReqType.kAddTo:
        dst[...] += src


class Operator:
    """The computation of a legacy op; arrays are NumPy (CPU) or CUDA arrays (GPU)."""

    def forward(
        self,
        ctx: OpContext,
        in_data: list[Any],
        req: list[OpReqType],
        out_data: list[Any],
        aux_states: list[Any],
    ) -> None:
        raise NotImplementedError("Operator.forward must be implemented")

    def backward(
        self,
        ctx: OpContext,
        out_grad: list[Any],
        in_data: list[Any],
        out_data: list[Any],
        req: list[OpReqType],
        in_grad: list[Any],
        aux_states: list[Any],
    ) -> None:
        """Entries that declare_backward_dependency left out are None."""
        raise NotImplementedError("Operator.backward must be implemented")

    assign = staticmethod(assign)


class OperatorProperty:
    """What a legacy op is: names, shapes, types, dependencies; creates its Operator.

    With a `param_cls` at registration, `self.param` holds the parsed parameters before
    `init(kwargs)` is called (MXNet's Init); `get_params` returns their strings.
    """

    param: Any = None

    def init(self, kwargs: dict[str, str]) -> None:
        """Extra initialisation from the node's string attributes (hidden keys removed)."""
        self._kwargs = dict(kwargs)

    def get_params(self) -> dict[str, str]:
        if isinstance(self.param, Parameter):
            return self.param.to_dict()
        return dict(getattr(self, "_kwargs", {}))

    def list_arguments(self) -> list[str]:
        return ["data"]

    def list_outputs(self) -> list[str]:
        return ["output"]

    def list_auxiliary_states(self) -> list[str]:
        return []

    def num_outputs(self) -> int:
        return len(self.list_outputs())

    def num_visible_outputs(self) -> int:
        return self.num_outputs()

    def infer_shape(self, in_shape: list[Any]) -> tuple[list[Any], list[Any], list[Any]]:
        """(in_shapes, out_shapes, aux_shapes); unknown inputs come in as None."""
        return in_shape, [in_shape[0]] * self.num_outputs(), []

    def infer_type(self, in_type: list[Any]) -> tuple[list[Any], list[Any], list[Any]]:
        """(in_types, out_types, aux_types); by default everything has in_type[0]."""
        t = in_type[0]
        n_aux = len(self.list_auxiliary_states())
        return [t] * len(in_type), [t] * self.num_outputs(), [t] * n_aux

    def forward_resource(self, in_shape: list[Any]) -> list[Any]:
        """ResourceRequest kinds for forward (in_shape is empty, as in MXNet's adapter)."""
        return []

    def backward_resource(self, in_shape: list[Any]) -> list[Any]:
        return []

    def declare_backward_dependency(
        self, out_grad: list[int], in_data: list[int], out_data: list[int]
    ) -> list[int]:
        """Ids of the arrays backward reads; the default keeps all of them alive."""
        return [*out_grad, *in_data, *out_data]

    def forward_inplace_option(self, in_data: list[int], out_data: list[int]) -> list[Any]:
        """(in_data id, out_data id) pairs that may share memory: a hint only."""
        return []

    def backward_inplace_option(
        self, out_grad: list[int], in_data: list[int], out_data: list[int], in_grad: list[int]
    ) -> list[Any]:
        """(out_grad/in_data/out_data id, in_grad id) pairs that may share memory."""
        return []

    def create_operator(self, ctx: Any) -> Operator:
        raise NotImplementedError("OperatorProperty.create_operator must be implemented")


# -- the shared translation -------------------------------------------------------------------


def call_user(label: str, what: str, fn: Callable[..., Any], *args: Any) -> Any:
    """Call a user callback; anything it raises comes back as NNVMError naming the op."""
    try:
        return fn(*args)
    except NNVMError as e:
        if label in str(e):
            raise
        raise type(e)(f"{label}: {what}: {e}") from e
    except Exception as e:
        raise NNVMError(f"{label}: {what} raised {type(e).__name__}: {e}") from e


class PropInfo:
    """attrs.parsed of a front-end op: the property and what it declared, validated once."""

    def __init__(self, prop: Any, label: str) -> None:
        self.prop, self.label = prop, label
        self.arguments = self._names("list_arguments")
        self.outputs = self._names("list_outputs")
        self.aux = self._names("list_auxiliary_states")
        self.n_args, self.n_out, self.n_aux = len(self.arguments), len(self.outputs), len(self.aux)
        n_out = self._count("num_outputs", self.n_out)
        if n_out != self.n_out:
            raise NNVMError(
                f"{label}: num_outputs() is {n_out} but list_outputs() names {self.n_out} "
                f"outputs {self.outputs}"
            )
        self.n_visible = self._count("num_visible_outputs", self.n_out)
        if not 1 <= self.n_visible <= self.n_out:
            raise NNVMError(
                f"{label}: num_visible_outputs() is {self.n_visible}; expected 1..{self.n_out}"
            )
        ids = self._ids()
        deps = call_user(
            label,
            "declare_backward_dependency",
            prop.declare_backward_dependency,
            *(list(r) for r in ids),
        )
        self.bwd_deps = self._check_ids(deps, "declare_backward_dependency")

    def _names(self, method: str) -> list[str]:
        names = call_user(self.label, f"{method}()", getattr(self.prop, method))
        if not isinstance(names, list | tuple) or not all(isinstance(n, str) for n in names):
            raise NNVMError(f"{self.label}: {method}() must return a list of str, got {names!r}")
        return list(names)

    def _count(self, method: str, default: int) -> int:
        fn = getattr(self.prop, method, None)
        return default if fn is None else int(call_user(self.label, f"{method}()", fn))

    def _ids(self) -> tuple[range, range, range]:
        """Ids of (out_grad, in_data, out_data) as passed to the dependency callbacks."""
        v, a = self.n_visible, self.n_args
        return range(v), range(v, v + a), range(v + a, v + a + self.n_out)

    def _check_ids(self, ids: Any, method: str) -> list[int]:
        total = self.n_visible + self.n_args + self.n_out
        try:
            out = [int(i) for i in ids]
        except (TypeError, ValueError):
            msg = f"{self.label}: {method} must return a list of ids, got {ids!r}"
            raise NNVMError(msg) from None
        bad = [i for i in out if not 0 <= i < total]
        if bad:
            raise NNVMError(
                f"{self.label}: {method} returned unknown ids {bad} (valid: 0..{total - 1})"
            )
        return list(dict.fromkeys(out))  # each array is one backward input, however often named

    def optional(self, method: str, *args: Any) -> list[Any]:
        fn = getattr(self.prop, method, None)
        return [] if fn is None else list(call_user(self.label, method, fn, *args) or [])

    def forward_inplace(self) -> list[tuple[int, int]]:
        pairs = self.optional(
            "forward_inplace_option", list(range(self.n_args)), list(range(self.n_out))
        )
        return [(int(i), int(o)) for i, o in pairs]

    def backward_inplace(self) -> list[tuple[int, int]]:
        """Pairs (backward input position, in_grad index) for the ids the backward node has."""
        og, ind, od = (list(r) for r in self._ids())
        pairs = self.optional("backward_inplace_option", og, ind, od, list(range(self.n_args)))
        position = {dep: pos for pos, dep in enumerate(self.bwd_deps)}
        return [(position[int(i)], int(o)) for i, o in pairs if int(i) in position]

    def unpack_backward(self, inputs: Sequence[Any]) -> tuple[list[Any], ...]:
        """(out_grad, in_data, out_data, aux) from the backward node's inputs, None where absent."""
        full: list[Any] = [None] * (self.n_visible + self.n_args + self.n_out)
        for pos, dep in enumerate(self.bwd_deps):
            full[dep] = inputs[pos]
        v, a = self.n_visible, self.n_args
        return full[:v], full[v : v + a], full[v + a :], list(inputs[len(self.bwd_deps) :])


class OpState:
    """What FCreateOpState returns: the user's operator and the info to unpack arrays."""

    __slots__ = ("info", "op")

    def __init__(self, op: Any, info: PropInfo) -> None:
        self.op, self.info = op, info


def _infer(kind: str, attrs: NodeAttrs, ins: list[Any], outs: list[Any]) -> bool:
    """FInferShape / FInferType through prop.infer_shape / infer_type (mutual inference)."""
    info: PropInfo = attrs.parsed
    label, n_args = info.label, info.n_args
    given = ins[:n_args]
    known = shape_is_known if kind == "shape" else (lambda t: t is not None)
    try:
        result = getattr(info.prop, f"infer_{kind}")(list(given))
    except NNVMError:
        raise
    except Exception as e:
        if not all(map(known, given)):
            return False  # not enough is known yet for the user's rule
        raise NNVMError(f"{label}: infer_{kind} raised {type(e).__name__}: {e}") from e
    if result is None or result is False:
        return False
    if not isinstance(result, list | tuple) or len(result) != 3:
        raise NNVMError(
            f"{label}: infer_{kind} must return three lists (in, out, aux), got {result!r}"
        )
    slots = [
        ("input", info.arguments, ins, 0),
        ("output", info.outputs, outs, 0),
        ("auxiliary state", info.aux, ins, n_args),
    ]
    for values, (what, names, target, offset) in zip(result, slots):
        values = list(values or [])
        if len(values) != len(names):
            raise NNVMError(
                f"{label}: infer_{kind} returned {len(values)} {what} {kind}s, expected "
                f"{len(names)} (one per {names})"
            )
        for i, (name, value) in enumerate(zip(names, values)):
            where = f"{label} (node '{attrs.name}'): {what} '{name}'"
            if kind == "shape":
                shape_assign(target, offset + i, _shape(where, value), where)
            else:
                type_assign(target, offset + i, value, where)
    return all(map(known, [*ins, *outs]))


def _shape(where: str, value: Any) -> Any:
    if value is None:
        return None
    try:
        return partial_shape(value)
    except (TypeError, ValueError):
        raise InferError(f"{where}: infer_shape gave {value!r}, which is not a shape") from None


def _gradient(bwd_name: str) -> Callable[[Node, list[NodeEntry]], list[NodeEntry]]:
    """FGradient: one backward node fed with the declared dependencies, then the aux states."""

    def gradient(node: Node, ograds: list[NodeEntry]) -> list[NodeEntry]:
        info: PropInfo = node.attrs.parsed
        args, aux = node.inputs[: info.n_args], node.inputs[info.n_args :]
        outs = [NodeEntry(node, i) for i in range(info.n_out)]
        entries = [*ograds[: info.n_visible], *args, *outs]
        heads = [entries[d] for d in info.bwd_deps] + list(aux)
        # the forward's parsed prop, not a new one: MXNet's backward node shares it, and a
        # Custom prop is user code the user sees run
        attrs = NodeAttrs(Op.get(bwd_name), f"{node.name}_backward", node.attrs.dict, info)
        grad = Node(attrs, heads, [node])
        # aux states get no gradient: nothing is ever built for these entries
        no_grad = [
            NodeEntry(make_node("zeros_like", f"{node.name}_aux{i}", [e]), 0)
            for i, e in enumerate(aux)
        ]
        return [NodeEntry(grad, i) for i in range(info.n_args)] + no_grad

    return gradient


def register_prop_ops(
    name: str,
    parse: Callable[[NodeAttrs], PropInfo],
    create: Callable[..., Any],
    forward: Callable[..., None],
    backward: Callable[..., None],
) -> Op:
    """Register `name` and `_backward_<name>` whose attrs.parsed is a PropInfo."""
    bwd_name = f"_backward_{name}"

    def info(attrs: NodeAttrs) -> PropInfo:
        return attrs.parsed

    op = (
        register_op(name)
        .set_attr_parser(parse)
        .set_num_inputs(lambda a: info(a).n_args + info(a).n_aux)
        .set_num_outputs(lambda a: info(a).n_out)
        .set_attr(FListInputNames, lambda a: info(a).arguments + info(a).aux)
        .set_attr(FListOutputNames, lambda a: info(a).outputs)
        .set_attr(FNumVisibleOutputs, lambda a: info(a).n_visible)
        .set_attr(
            FMutateInputs, lambda a: list(range(info(a).n_args, info(a).n_args + info(a).n_aux))
        )
        .set_attr(FInferShape, lambda a, i, o: _infer("shape", a, i, o))
        .set_attr(FInferType, lambda a, i, o: _infer("type", a, i, o))
        .set_attr(FInplaceOption, lambda a: info(a).forward_inplace())
        .set_attr(FResourceRequest, lambda a: info(a).optional("forward_resource", []))
        .set_attr(FCreateOpState, create)
        .set_attr(FGradient, _gradient(bwd_name))
    )
    bwd = (
        register_op(bwd_name)
        .set_attr_parser(parse)
        .set_num_inputs(lambda a: len(info(a).bwd_deps) + info(a).n_aux)
        .set_num_outputs(lambda a: info(a).n_args)
        .set_attr(TIsBackward, True)
        .set_attr(FInplaceOption, lambda a: info(a).backward_inplace())
        .set_attr(FResourceRequest, lambda a: info(a).optional("backward_resource", []))
    )
    for dev in ("cpu", "gpu"):
        op.set_attr(fstateful_compute(dev), forward)
        bwd.set_attr(fstateful_compute(dev), backward)
    return op


# -- the legacy front-end -------------------------------------------------------------------


def _visible_kwargs(attrs: NodeAttrs) -> dict[str, str]:
    """The node's attributes without MXNet's hidden ones (__shape__, __lr_mult__, ...)."""
    return {k: v for k, v in attrs.dict.items() if not (k.startswith("__") and k.endswith("__"))}


def register_op_property(
    name: str, prop_cls: type[OperatorProperty], param_cls: type[Parameter] | None = None
) -> Op:
    """MXNET_REGISTER_OP_PROPERTY: register `name` (and `_backward_<name>`) from a property."""
    if not (isinstance(prop_cls, type) and issubclass(prop_cls, OperatorProperty)):
        raise NNVMError(f"{name}: register_op_property expects an OperatorProperty subclass")

    def parse(attrs: NodeAttrs) -> PropInfo:
        kwargs = _visible_kwargs(attrs)
        prop = call_user(name, f"{prop_cls.__name__}()", prop_cls)
        if param_cls is not None:
            prop.param = param_cls.parse(kwargs, op_name=name)
        call_user(name, "init", prop.init, kwargs)
        return PropInfo(prop, name)

    def create(attrs: NodeAttrs, ctx: Any, in_shapes: Any, in_types: Any) -> OpState:
        info: PropInfo = attrs.parsed
        op = call_user(name, "create_operator", info.prop.create_operator, ctx)
        if not callable(getattr(op, "forward", None)):
            raise NNVMError(f"{name}: create_operator must return an Operator, got {op!r}")
        return OpState(op, info)

    def forward(
        state: OpState, ctx: OpContext, inputs: list[Any], req: list[Any], outputs: list[Any]
    ) -> None:
        n = state.info.n_args
        call_user(
            name, "Operator.forward", state.op.forward, ctx, inputs[:n], req, outputs, inputs[n:]
        )

    def backward(
        state: OpState, ctx: OpContext, inputs: list[Any], req: list[Any], outputs: list[Any]
    ) -> None:
        og, ind, od, aux = state.info.unpack_backward(inputs)
        fn = state.op.backward
        call_user(name, "Operator.backward", fn, ctx, og, ind, od, req, outputs, aux)

    op = register_prop_ops(name, parse, create, forward, backward)
    op.describe(op.description or (prop_cls.__doc__ or f"The legacy operator {name}.").strip())
    if param_cls is not None:
        op.param_cls = param_cls  # nd/sym signatures list the parameters
        op.add_arguments(param_cls.fields())
    return op


__all__ = [
    "OpState",
    "Operator",
    "OperatorProperty",
    "PropInfo",
    "assign",
    "call_user",
    "register_op_property",
    "register_prop_ops",
]
