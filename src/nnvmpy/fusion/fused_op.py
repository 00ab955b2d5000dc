"""The `_FusedOp` op: a node standing for a group of element-wise nodes.

Its parsed attributes are a FusedSpec (fusion/spec.py), made by the FusePointwise pass;
every attribute the passes and the executor read is derived from it: shapes are the
members' common shape, types come from the members' FInferType, any input may share
memory with any output (the generated kernel reads element i of every input before it
writes element i of any output), and FCompute<cpu|gpu> launches the generated kernel.
A `_FusedOp` cannot be made from attribute strings (nd, sym, JSON): only by the pass.
"""

from __future__ import annotations

from typing import Any

from ..attrs import (
    FCompute_cpu,
    FCompute_gpu,
    FInferShape,
    FInferType,
    FInplaceOption,
    FListInputNames,
    FListOutputNames,
)
from ..base import OpNotFoundError, ParamError
from ..infer import elemwise_shape
from ..registry import NodeAttrs, Op, register_op
from .compute import fused_compute
from .spec import FusedSpec

FUSED_OP = "_FusedOp"


def _spec(attrs: NodeAttrs) -> FusedSpec | None:
    return attrs.parsed if isinstance(attrs.parsed, FusedSpec) else None


def _refuse(attrs: NodeAttrs) -> Any:
    raise ParamError(
        f"{FUSED_OP}: node {attrs.name!r} cannot be made from attributes "
        f"{attrs.dict}; fused nodes are made by the FusePointwise pass "
        "(Symbol.optimize_for('fuse'), or bind with NNVMPY_FUSION=1)"
    )


def _num_inputs(attrs: NodeAttrs) -> int:
    spec = _spec(attrs)
    return spec.num_inputs if spec is not None else 0


def _num_outputs(attrs: NodeAttrs) -> int:
    spec = _spec(attrs)
    return len(spec.outputs) if spec is not None else 1


def _infer_type(attrs: NodeAttrs, in_types: list[Any], out_types: list[Any]) -> bool:
    spec = _spec(attrs)
    return spec is not None and spec.infer_type(attrs, in_types, out_types)


def _inplace(attrs: NodeAttrs) -> list[tuple[int, int]]:
    spec = _spec(attrs)
    if spec is None:
        return []
    return [(j, k) for k in range(len(spec.outputs)) for j in range(spec.num_inputs)]


def _input_names(attrs: NodeAttrs) -> list[str]:
    return [f"in{j}" for j in range(_num_inputs(attrs))]


def _output_names(attrs: NodeAttrs) -> list[str]:
    spec = _spec(attrs)
    if spec is None:
        return ["output"]
    names = []
    for s, i in spec.outputs:
        member = spec.members[s]
        fn = member.attrs.op.get_attr(FListOutputNames) if member.attrs.op else None
        own = (
            list(fn(member.attrs))[i]
            if fn is not None
            else ("output" if member.num_outputs == 1 else f"output{i}")
        )
        names.append(own if member.name == attrs.name else f"{member.name}_{own}")
    return names


def fused_op() -> Op:
    """The registered `_FusedOp` (registered on first use)."""
    try:  # not `in Op.list_op_names()`: that sorts every name, and this runs per fused node
        op = Op.get(FUSED_OP)
    except OpNotFoundError:
        op = None
    if op is not None and op.get_attr(FCompute_cpu) is fused_compute:
        return op
    return (
        register_op(FUSED_OP)
        .describe(
            "A group of element-wise nodes run as one generated kernel (made by the "
            "FusePointwise pass; see docs/fusion.md)."
        )
        .set_attr_parser(_refuse)
        .set_num_inputs(_num_inputs)
        .set_num_outputs(_num_outputs)
        .set_attr(FListInputNames, _input_names)
        .set_attr(FListOutputNames, _output_names)
        .set_attr(FInferShape, elemwise_shape(-1, -1))
        .set_attr(FInferType, _infer_type)
        .set_attr(FInplaceOption, _inplace)
        .set_attr(FCompute_cpu, fused_compute)
        .set_attr(FCompute_gpu, fused_compute)
    )


__all__ = ["FUSED_OP", "fused_op"]
