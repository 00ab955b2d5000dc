"""FusedSpec: what one fused node computes, as a list of member ops over shared inputs.

A fused node (op `_FusedOp`) carries a FusedSpec as its parsed attributes. Each member
is one original node: its op, its attributes, its scalar body (FScalarFunction) and
where each of its arguments comes from — an input of the fused node or an output of an
earlier member. The fused node's outputs are member outputs read outside the group.
Everything the registry says about the fused node (types, in-place pairs, compute) is
derived from the members, and `structure()` is the text a kernel is cached under.
"""

from __future__ import annotations

import functools
import threading
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..attrs import FInferType
from ..base import InferError
from ..kernel.elementwise import ScalarBody
from ..registry import NodeAttrs

#: where a member argument comes from: (-1, j) input j of the fused node, (m, k) output
#: k of member m (an earlier member)
Ref = tuple[int, int]


#: FusedSpec.member_types' results, shared by specs alike but for names (bounded: one
#: entry per distinct member list and input dtypes a process fuses)
_member_types_cache: dict[tuple[Any, ...], list[list[Any]]] = {}


@dataclass(frozen=True)
class Member:
    """One original node inside a fused group."""

    name: str
    attrs: NodeAttrs
    args: tuple[Ref, ...]
    body: ScalarBody

    @property
    def num_outputs(self) -> int:
        return len(self.body.kernels)


@dataclass(eq=False)
class FusedSpec:
    """The members of one fused node, its input count and which member outputs it exposes."""

    members: tuple[Member, ...]
    num_inputs: int
    outputs: tuple[Ref, ...]
    # (device, input dtypes, modes) -> compiled launcher; filled by fusion.compute
    launchers: dict[Any, Any] = field(default_factory=dict, repr=False)
    # (input dtypes, None, output dtypes) -> the CPU kernel's scalar arguments
    cpu_params: dict[Any, tuple[Any, ...]] = field(default_factory=dict, repr=False)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    # (weak references to the last CPU call's arrays, their in-place pairs): fusion.compute
    last_in_place: tuple[tuple[Any, ...], tuple[tuple[int, int], ...]] | None = field(
        default=None, repr=False
    )

    def member_names(self) -> list[str]:
        return [m.name for m in self.members]

    def scalar_params(self, in_types: list[Any] | None = None) -> list[Any]:
        """Every member's parameter values, in member order (the kernel's scalar args).

        With the fused inputs' dtypes, a member whose parameters convert per dtype
        (ScalarParam.dtype_scalar: MXNet's DType(scalar) for integer arrays) gets them
        as its unfused kernel would, for its own output dtype."""
        if in_types is None or not any(self._converts(m) for m in self.members):
            return [p for m in self.members for p in m.body.params]
        types = self.member_types(in_types)
        params: list[Any] = []
        for m, out_types in zip(self.members, types):
            convert = self._converts(m)
            if convert is None or out_types[0] is None:
                params += m.body.params
            else:
                params += [convert(p, out_types[0]) for p in m.body.params]
        return params

    @staticmethod
    def _converts(member: Any) -> Any:
        return getattr(member.attrs.parsed, "dtype_scalar", None) if member.body.params else None

    # -- types ------------------------------------------------------------------------------
    def member_types(self, in_types: list[Any]) -> list[list[Any]]:
        """Each member's output dtypes from the fused inputs' dtypes (None: unknown yet),
        by running the members' own FInferType forward.

        Computed once per (types_key, input dtypes) in the process: an unrolled graph has
        hundreds of fused nodes alike but for their names (an LSTM of 200 steps x 2
        layers: 800, ~0.13 ms each in the first step)."""
        key = (self.types_key, tuple(None if t is None else np.dtype(t) for t in in_types))
        known = _member_types_cache.get(key)
        if known is None:
            known = _member_types_cache[key] = self._infer_member_types(in_types)
        return [list(ts) for ts in known]

    @functools.cached_property
    def types_key(self) -> tuple[Any, ...]:
        """What the members' FInferType can read: each member's op, attributes (as their
        string values) and argument sources, and the input count; not the names."""
        members = tuple(
            (m.attrs.op, tuple(sorted((k, str(v)) for k, v in m.attrs.dict.items())), m.args)
            for m in self.members
        )
        return (self.num_inputs, members)

    def _infer_member_types(self, in_types: list[Any]) -> list[list[Any]]:
        outs: list[list[Any]] = []
        for m in self.members:
            ins = [in_types[k] if src < 0 else outs[src][k] for src, k in m.args]
            o: list[Any] = [None] * m.num_outputs
            finfer = m.attrs.op.get_attr(FInferType) if m.attrs.op is not None else None
            if finfer is not None and all(t is not None for t in ins):
                finfer(m.attrs, ins, o)
            elif all(t is not None for t in ins) and ins:
                o = [ins[0]] * m.num_outputs
            outs.append([None if t is None else np.dtype(t) for t in o])
        return outs

    def infer_type(self, attrs: NodeAttrs, in_types: list[Any], out_types: list[Any]) -> bool:
        """FInferType: forward through the members; a known output type with unknown
        inputs of one dtype fills them (the usual element-wise case)."""
        if any(t is None for t in in_types):
            known = {np.dtype(t) for t in [*in_types, *out_types] if t is not None}
            if len(known) != 1:
                return False
            (dtype,) = known
            in_types[:] = [dtype if t is None else t for t in in_types]
        types = self.member_types(in_types)
        for k, (src, idx) in enumerate(self.outputs):
            t = types[src][idx]
            if t is None:
                return False
            if out_types[k] is not None and np.dtype(out_types[k]) != t:
                raise InferError(
                    f"{attrs.name} (_FusedOp): output {k} ({self.members[src].name}) has "
                    f"dtype {t} from its inputs but {np.dtype(out_types[k])} was given"
                )
            out_types[k] = t
        return True

    # -- the cache key ----------------------------------------------------------------------
    @functools.cached_property
    def layout(self) -> tuple[Any, ...]:
        """What the generated kernel's text depends on besides dtypes and requests: the
        member kernels themselves (not only their names: two closures may share one),
        how members connect, and which parameters are floats. Equal layouts share one
        built kernel without generating its source again (codegen.build)."""
        kinds = tuple(isinstance(p, float | np.floating) for p in self.scalar_params())
        members = tuple((m.body.kernels, m.args, len(m.body.params)) for m in self.members)
        return (self.num_inputs, self.outputs, members, kinds)

    def structure(self) -> str:
        """The graph of kernels, without names or parameter values: equal structures
        share one compiled kernel."""
        parts = [f"in{self.num_inputs}"]
        for m in self.members:
            fns = ",".join(
                f"{k.py_func.__module__}.{k.py_func.__qualname__}" for k in m.body.kernels
            )
            args = ",".join(f"{s}:{i}" for s, i in m.args)
            parts.append(f"[{fns}]({args})p{len(m.body.params)}")
        parts.append("out" + ",".join(f"{s}:{i}" for s, i in self.outputs))
        return ";".join(parts)
