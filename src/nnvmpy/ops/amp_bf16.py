"""bfloat16 inference without a bfloat16 dtype: the node marker, the weight-packing node,
and the type rule that lets a marked op read packed weights (issue 17, item 4).

MXNet's AMP (`amp.convert_symbol(sym, target_dtype='bfloat16')`) inserts amp_cast nodes,
because MXNet has a bfloat16 dtype for the tensors between them. nnvmpy has none (numpy
has none), so a bfloat16 tensor could only travel between nodes as opaque bits. Instead
an op that declares FBFloat16Compute computes in bfloat16 itself when its node is marked
`__amp_dtype__='bfloat16'` (a hidden attribute: it survives JSON and never reaches the
op's parameters):

* its **activations** stay float32 in the graph; the op rounds them to bfloat16 while it
  packs them for its GEMM (im2col columns, padded images, FullyConnected's rows), so
  the rounding costs no extra pass over memory;
* its **weight** is rounded once, by a `_PackBFloat16` node the AmpBFloat16 pass puts in
  front of it at bind, into bfloat16 bits (uint16) in the order the op's GEMM reads them
  (a convolution's (F, kh, kw, C)). The node is TMemoizable: the executor reruns it only
  when the weight's engine version changed (a new weight copied in, a BatchNorm fold
  recomputed), as it does for `_FoldScaleShift`, so a forward pass pays nothing for it;
* the GEMM multiplies bfloat16 with float32 accumulation and writes float32
  (ops/nn/_bf16.py: MKL's cblas_gemm_bf16bf16f32, or an emulation on other BLAS).

So uint16 appears in a graph only on the edge from `_PackBFloat16` to the op that asked
for it; `accepts_bf16_weight` wraps that op's FInferType to allow exactly that edge.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ..attrs import (
    FCompute_cpu,
    FInferShape,
    FInferType,
    FListInputNames,
    InferTypeFn,
    TMemoizable,
)
from ..base import InferError, OpReqType
from ..infer import elemwise_shape, type_assign
from ..param import Parameter, field
from ..registry import NodeAttrs, register_op

#: the hidden node attribute: 'bfloat16' asks for bfloat16, 'float32' refuses it
AMP_DTYPE = "__amp_dtype__"
#: the values AMP_DTYPE may take
AMP_DTYPES = ("bfloat16", "float32")
#: the op AmpBFloat16 inserts in front of a marked node's weight
PACK_OP = "_PackBFloat16"
#: the dtype that carries bfloat16 bits between `_PackBFloat16` and its reader
BITS = np.dtype(np.uint16)
_F32 = np.dtype(np.float32)


class BF16Weight(NamedTuple):
    """FBFloat16Compute's answer: input `weight` (an index) may come as packed bfloat16 bits.

    channels_last: pack a (F, C, *kernel) weight as (F, *kernel, C) (Convolution's column
    order), else in its own order (FullyConnected's (num_hidden, K)).
    """

    weight: int
    channels_last: bool


def marked(attrs: NodeAttrs) -> bool:
    """The node asks to compute in bfloat16 (`__amp_dtype__='bfloat16'`)."""
    return attrs.dict.get(AMP_DTYPE) == "bfloat16"


def is_bits(a: Any) -> bool:
    """An array holding bfloat16 bits (what `_PackBFloat16` writes)."""
    return np.dtype(a.dtype) == BITS


def gemm_description() -> str:
    """Which bfloat16 GEMM marked nodes run on in this process (for debug_str)."""
    from nnvmpy.ops.nn import _blas

    if _blas.has_bf16():
        return "MKL cblas_gemm_bf16bf16f32"
    return f"emulated: float32 GEMM on bfloat16-rounded operands, {_blas.name()} has none"


def accepts_bf16_weight(op: str, infer: InferTypeFn, spec: Any) -> InferTypeFn:
    """FInferType `infer`, except that on a marked node the weight input named by
    `spec(attrs)` may be bfloat16 bits (uint16) when everything else is float32."""

    def wrapped(attrs: NodeAttrs, in_types: list[Any], out_types: list[Any]) -> bool:
        want = spec(attrs) if marked(attrs) else None
        i = want.weight if want is not None else -1
        if i < 0 or i >= len(in_types) or in_types[i] is None or np.dtype(in_types[i]) != BITS:
            return infer(attrs, in_types, out_types)
        rest = list(in_types)
        rest[i] = None
        done = bool(infer(attrs, rest, out_types))
        if rest[i] is not None and np.dtype(rest[i]) != _F32:
            raise InferError(
                f"{op}: input {i} holds bfloat16 bits (uint16), which only a float32 "
                f"{op} reads; the other inputs are {rest[i]}"
            )
        rest[i] = BITS
        in_types[:] = rest
        return done

    return wrapped


# -- _PackBFloat16 ----------------------------------------------------------------------------


class PackBFloat16Param(Parameter):
    channels_last = field(
        bool,
        default=False,
        describe="Lay a (F, C, *kernel) weight out as (F, *kernel, C) (a convolution's "
        "column order); else keep its order.",
    )


def _pack_type(attrs: NodeAttrs, in_types: list[Any], out_types: list[Any]) -> bool:
    x = in_types[0]
    if x is None:
        return False
    if np.dtype(x) != _F32:
        raise InferError(f"{PACK_OP}: input 'data' must be float32, got {np.dtype(x)}")
    type_assign(out_types, 0, BITS, f"{PACK_OP}: output")
    return True


def _pack_compute(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    from nnvmpy.ops.nn import _bf16

    if req[0] == OpReqType.kNullOp:
        return
    w, out = inputs[0], outputs[0]
    # req 'add' adds the bits as integers, as any integer output would (the pass never asks)
    bits = np.empty(out.shape, BITS) if req[0] == OpReqType.kAddTo else out
    _bf16.stats["packs"] += 1
    if attrs.parsed.channels_last and w.ndim > 2:
        _bf16.pack_channels_last(w, bits)
    else:
        _bf16.round_to_bits(w, bits)
    if bits is not out:
        out += bits


(
    register_op(PACK_OP)
    .describe(
        "Inserted by the AmpBFloat16 pass: a float32 weight as bfloat16 bits (uint16, "
        "rounded to nearest even) in the order its reader's GEMM reads them. Memoized: it "
        "reruns only after the weight was written."
    )
    .set_attr_parser(PackBFloat16Param)
    .set_num_inputs(1)
    .set_num_outputs(1)
    .set_attr(FListInputNames, lambda attrs: ["data"])
    .set_attr(FInferShape, elemwise_shape(1, 1))
    .set_attr(FInferType, _pack_type)
    .set_attr(TMemoizable, True)
    .set_attr(FCompute_cpu, _pack_compute)
    .add_argument("data", "NDArray-or-Symbol", "The float32 weight.")
    .add_arguments(PackBFloat16Param.fields())
)

__all__ = [
    "AMP_DTYPE",
    "AMP_DTYPES",
    "BITS",
    "PACK_OP",
    "BF16Weight",
    "PackBFloat16Param",
    "accepts_bf16_weight",
    "gemm_description",
    "is_bits",
    "marked",
]
