"""The channels-last twins the ChannelsLast pass (passes/channels_last.py) puts in a graph.

* `_ChannelsLastWeight`: a (F, C, kh, kw) weight as (F, kh, kw, C). TMemoizable, as
  `_FoldScaleShift`: the executor reruns it only after the weight (or the fold feeding
  it) was written, so a forward pass pays nothing for it.
* `_ChannelsLastConvolution`: a 2-D, one-group Convolution whose data and output are
  (N, H, W, C) and whose weight comes packed (F, kh, kw, C): im2row + GEMM
  (_conv_nhwc.py). It declares FEpilogue, so FuseEpilogue puts the residual add and relu
  in its output loop as it does for Convolution.

Both are made by the pass at bind, never by users (their parsers refuse attributes), run
on the CPU only (the pass runs for CPU executors), and have no gradient: the pass runs on
graphs without backward.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ...attrs import (
    FChannelsLast,
    FCompute_cpu,
    FEpilogue,
    FInferShape,
    FInferType,
    FListInputNames,
    FResourceRequest,
    TMemoizable,
)
from ...base import InferError, NNVMError, OpReqType
from ...infer import shape_assign, shape_is_known, shape_str, type_assign
from ...registry import NodeAttrs, register_op
from ...resource import ResourceRequest
from ..amp_bf16 import marked
from ._geometry import check_float_dtype, conv_out_size, run_via_float32
from .convolution import ConvolutionParam
from .inference import _refuse
from .pooling import infer_pool_shape, window

WEIGHT_OP = "_ChannelsLastWeight"
CONV_OP = "_ChannelsLastConvolution"
POOL_OP = "_ChannelsLastPooling"
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


class ChannelsLastTwin(NamedTuple):
    """FChannelsLast's answer: replace the node by op `op` with parsed attributes `parsed`;
    its input `data` arrives (N, H, W, C), its input `weight` (if not None) packed by
    `_ChannelsLastWeight`, and its output 0 is (N, H', W', C'). The twin computes output 0
    only: the pass uses it where the node's other outputs have no reader."""

    op: str
    parsed: Any
    data: int
    weight: int | None
    pack: int = 0  # the `_ChannelsLastWeight` node's tile: 0 packs, m transforms for F(m)
    follows: bool = False  # only where the data already is channels-last (no transposes)


class ClConv(NamedTuple):
    """Parsed attributes of `_ChannelsLastConvolution`: the Convolution's, and the
    Winograd output tile m (0: im2row + GEMM; m: F(m x m, 3 x 3), weight (a*a, C, F))."""

    param: ConvolutionParam
    tile: int


# -- _ChannelsLastWeight ----------------------------------------------------------------------


def _packed_shape(w: tuple[int, ...], tile: int) -> tuple[int, ...]:
    """(F, kh, kw, C), or U's (a*a, C, F) for a Winograd tile m (a = m + 2)."""
    f, c, kh, kw = w
    return (f, kh, kw, c) if tile == 0 else ((tile + 2) ** 2, c, f)


def _weight_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    w = in_shapes[0]
    if not shape_is_known(w):
        return False
    if len(w) != 4:
        raise InferError(f"{WEIGHT_OP}: input 'weight' must be 4-D (F, C, kh, kw), got {w}")
    shape_assign(out_shapes, 0, _packed_shape(w, attrs.parsed), f"{WEIGHT_OP}: output")
    return True


def _float_type(op: str, name: str) -> Any:
    """FInferType of a one-input twin: its float input `name`'s dtype is the output's."""

    def infer(attrs: NodeAttrs, in_types: list[Any], out_types: list[Any]) -> bool:
        if in_types[0] is None:
            return False
        check_float_dtype(op, name, in_types[0])
        type_assign(out_types, 0, in_types[0], f"{op}: output")
        return True

    return infer


def _weight_compute(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    if req[0] == OpReqType.kNullOp:
        return
    tile = attrs.parsed
    if tile:
        from nnvmpy.ops.nn import _winograd_nhwc

        packed = np.empty(outputs[0].shape, outputs[0].dtype)
        _winograd_nhwc.weights(inputs[0], tile, packed)
    else:
        packed = np.transpose(inputs[0], (0, 2, 3, 1))
    if req[0] == OpReqType.kAddTo:
        outputs[0] += packed
    else:
        np.copyto(outputs[0], packed)


(
    register_op(WEIGHT_OP)
    .describe(
        "Inserted by the ChannelsLast pass: a (F, C, kh, kw) convolution weight laid out "
        "(F, kh, kw, C) for _ChannelsLastConvolution, or Winograd-transformed (a*a, C, F). "
        "Memoized: it reruns only after the weight was written."
    )
    .set_attr_parser(_refuse(WEIGHT_OP, "ChannelsLast"))
    .set_num_inputs(1)
    .set_num_outputs(1)
    .set_attr(FListInputNames, lambda attrs: ["weight"])
    .set_attr(FInferShape, _weight_shape)
    .set_attr(FInferType, _float_type(WEIGHT_OP, "weight"))
    .set_attr(TMemoizable, True)
    .set_attr(FCompute_cpu, _weight_compute)
)


# -- _ChannelsLastConvolution -------------------------------------------------------------------


def _spec(attrs: NodeAttrs) -> ClConv:
    spec = attrs.parsed
    assert isinstance(spec, ClConv), attrs
    return spec


def _param(attrs: NodeAttrs) -> ConvolutionParam:
    return _spec(attrs).param


def _hw(values: tuple[int, ...]) -> tuple[int, int]:
    """The (h, w) pair of a twin's stride, pad or dilate (a twin is 2-D)."""
    h, w = values
    return h, w


def _conv_input_names(attrs: NodeAttrs) -> list[str]:
    return ["data", "weight"] if _param(attrs).no_bias else ["data", "weight", "bias"]


def _batch_from_output(op: str, in_shapes: list[Any], out_shapes: list[Any]) -> Any:
    """Input 'data' (N, H, W, C) once known, N taken from the output where the data's is
    unknown (as Convolution and Pooling infer it: an RNN's begin state learns its batch
    size from the layer that reads it); None while still unknown."""
    data, out = in_shapes[0], out_shapes[0]
    if data is not None and len(data) != 4:
        raise InferError(f"{op}: input 'data' must be 4-D (N, H, W, C), got {shape_str(data)}")
    if data is not None and data[0] is None and out is not None and out[0] is not None:
        shape_assign(in_shapes, 0, (out[0], *data[1:]), f"{op}: input 'data'")
        data = in_shapes[0]
    return data if shape_is_known(data) else None


def _conv_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    """data (N, H, W, C), weight (F, kh, kw, C), bias (F,) -> out (N, Ho, Wo, F)."""
    p = _param(attrs)
    f = p.num_filter
    if not p.no_bias:
        shape_assign(in_shapes, 2, (f,), f"{CONV_OP}: input 'bias'")
    data = _batch_from_output(CONV_OP, in_shapes, out_shapes)
    if data is None:
        return False
    n, h, w, c = data
    weight = _packed_shape((f, c, *p.kernel), _spec(attrs).tile)
    shape_assign(in_shapes, 1, weight, f"{CONV_OP}: input 'weight'")
    spatial = [
        conv_out_size(x, k, s, pad, d)
        for x, k, s, pad, d in zip((h, w), p.kernel, p.stride, p.pad, p.dilate)
    ]
    if min(spatial) < 1:
        raise InferError(
            f"{CONV_OP}: kernel {p.kernel} (dilate {p.dilate}) is larger than the padded "
            f"input: data has shape {shape_str(data)} with pad {p.pad}"
        )
    shape_assign(out_shapes, 0, (n, *spatial, f), f"{CONV_OP}: output")
    return all(shape_is_known(s) for s in [*in_shapes, *out_shapes])


def _conv_type(attrs: NodeAttrs, in_types: list[Any], out_types: list[Any]) -> bool:
    known = next((t for t in [*in_types, *out_types] if t is not None), None)
    if known is None:
        return False
    check_float_dtype(CONV_OP, "data", known)
    for i in range(len(in_types)):
        type_assign(in_types, i, known, f"{CONV_OP}: input {i}")
    type_assign(out_types, 0, known, f"{CONV_OP}: output")
    return True


def _compute(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    _epilogue_compute(attrs, ctx, inputs, req, outputs, None)


def _epilogue_compute(
    attrs: NodeAttrs,
    ctx: Any,
    inputs: list[Any],
    req: list[Any],
    outputs: list[Any],
    epilogue: Any,
) -> None:
    """FCompute, and FEpilogue: out = relu?(conv(x, w) + bias + residual?)."""
    from nnvmpy.ops.nn import _conv_nhwc, _winograd_nhwc

    p, tile = _param(attrs), _spec(attrs).tile
    residual = epilogue is not None and epilogue.residual
    relu = epilogue is not None and epilogue.relu
    n = len(inputs) - int(residual)
    if req[0] == OpReqType.kNullOp:
        return
    add = req[0] == OpReqType.kAddTo
    if add and epilogue is not None:  # the pass fuses forward nodes, which write outputs
        raise NNVMError(f"{CONV_OP}: an epilogue cannot add to its output (req 'add')")

    def run(ins: list[Any], reqs: list[Any], outs: list[Any]) -> None:
        bias = None if p.no_bias else ins[2]
        res = ins[n] if residual else None
        if tile:
            _winograd_nhwc.forward(ins[0], ins[1], bias, outs[0], add, ctx.requested[0],
                                   _hw(p.pad), tile, residual=res, relu=relu)  # fmt: skip
            return
        geometry = (_hw(p.stride), _hw(p.pad), _hw(p.dilate))
        _conv_nhwc.forward(ins[0], ins[1], bias, outs[0], add, ctx.requested[0], *geometry,
                           residual=res, relu=relu)  # fmt: skip

    run_via_float32(run, inputs, req, outputs)


(
    register_op(CONV_OP)
    .describe(
        "Inserted by the ChannelsLast pass: a 2-D, one-group Convolution on (N, H, W, C) "
        "data with its weight packed (F, kh, kw, C) by _ChannelsLastWeight; writes "
        "(N, Ho, Wo, F). im2row + one GEMM per chunk of output rows."
    )
    .set_attr_parser(_refuse(CONV_OP, "ChannelsLast"))
    .set_num_inputs(lambda attrs: 2 if _param(attrs).no_bias else 3)
    .set_num_outputs(1)
    .set_attr(FListInputNames, _conv_input_names)
    .set_attr(FInferShape, _conv_shape)
    .set_attr(FInferType, _conv_type)
    .set_attr(FResourceRequest, lambda attrs: [ResourceRequest.kTempSpace])
    .set_attr(FCompute_cpu, _compute)
    .set_attr(FEpilogue, _epilogue_compute)
)


# -- Convolution's twin --------------------------------------------------------------------------


def conv_tile(p: ConvolutionParam, data: tuple[int, ...]) -> int:
    """The Winograd tile of the twin: F(4x4) on planes of 14x14 and more, F(2x2) below
    (7x7 maps: F(4x4) computes 8x8 per 4 tiles), 0 where Winograd cannot run."""
    from nnvmpy.ops.nn import _conv_winograd

    if not _conv_winograd.supported(
        tuple(p.kernel), tuple(p.stride), tuple(p.dilate), tuple(p.pad)
    ):
        return 0
    n, _, h, w = data
    return 4 if n * -(-h // 4) * -(-w // 4) >= 64 else 2


def conv_twin(attrs: NodeAttrs, in_shapes: list[Any], dtype: Any) -> ChannelsLastTwin | None:
    """FChannelsLast of Convolution: 2-D, one group, float32/64 and a known 4-D data shape,
    not marked for bfloat16. It pays on every such layer of ResNet-18 on this machine's
    two cores (MKL), in the network: batch 1 25.5 -> 18.8 ms for the whole forward, batch
    32 473 -> 466 (_conv_nhwc.py and _winograd_nhwc.py have the per-layer numbers); a
    lone layer still pays two transposes, which the pass avoids (passes/channels_last.py)."""
    p = attrs.parsed
    data = in_shapes[0] if in_shapes else None
    if (
        len(p.kernel) != 2
        or p.num_group != 1
        or p.layout not in (None, "NCHW")
        or dtype is None
        or np.dtype(dtype) not in _FLOATS
        or not shape_is_known(data)
        or len(data) != 4
        or marked(attrs)  # computes in bfloat16 from a packed weight (AmpBFloat16)
    ):
        return None
    tile = conv_tile(p, tuple(data))
    return ChannelsLastTwin(CONV_OP, ClConv(p, tile), 0, 1, tile)


register_op("Convolution").set_attr(FChannelsLast, conv_twin)


# -- _ChannelsLastPooling --------------------------------------------------------------------------

#: the pool types the twin computes (lp stays channels-first)
_POOL_MODES = {"max": 0, "avg": 1, "sum": 2}


def _pool_window(p: Any, data: tuple[int, ...]) -> tuple[int, ...]:
    """(kh, kw, sh, sw, ph, pw, eh, ew) of Pooling's window for NHWC data."""
    n, h, w, c = data
    win = window(p, (n, c, h, w))
    return (*win[1:3], *win[4:6], *win[7:9], *win[10:12])


def _pool_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    """data (N, H, W, C) -> (N, Ho, Wo, C), Pooling's output sizes."""
    data = _batch_from_output(POOL_OP, in_shapes, out_shapes)
    if data is None:
        return False
    n, h, w, c = data
    first = [(n, c, h, w)]
    outs: list[Any] = [None] * (2 if attrs.parsed.pool_type == "max" else 1)
    probe = NodeAttrs(attrs.op, attrs.name, None, attrs.parsed)
    infer_pool_shape(probe, first, outs)
    _, _, ho, wo = outs[0]
    shape_assign(out_shapes, 0, (n, ho, wo, c), f"{POOL_OP}: output")
    return True


def _pool_compute(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    from nnvmpy.ops.nn import _pool_nhwc

    if req[0] == OpReqType.kNullOp:
        return
    p = attrs.parsed

    def run(ins: list[Any], reqs: list[Any], outs: list[Any]) -> None:
        x = ins[0]
        target = outs[0] if reqs[0] != OpReqType.kAddTo else np.empty_like(outs[0])
        include = p.count_include_pad is not False
        _pool_nhwc.forward(x, target, _POOL_MODES[p.pool_type], _pool_window(p, x.shape), include)
        if target is not outs[0]:
            outs[0] += target

    run_via_float32(run, inputs, req, outputs)


(
    register_op(POOL_OP)
    .describe(
        "Inserted by the ChannelsLast pass: 2-D max, avg or sum Pooling on (N, H, W, C) "
        "data, writing (N, Ho, Wo, C) (no max mask: the pass runs on graphs without "
        "backward). Pooling's window rules and conventions."
    )
    .set_attr_parser(_refuse(POOL_OP, "ChannelsLast"))
    .set_num_inputs(1)
    .set_num_outputs(1)
    .set_attr(FListInputNames, lambda attrs: ["data"])
    .set_attr(FInferShape, _pool_shape)
    .set_attr(FInferType, _float_type(POOL_OP, "data"))
    .set_attr(FCompute_cpu, _pool_compute)
)


def pool_twin(attrs: NodeAttrs, in_shapes: list[Any], dtype: Any) -> ChannelsLastTwin | None:
    """FChannelsLast of Pooling: 2-D max/avg/sum pooling of float32/64 data (lp, 1-D and
    3-D stay channels-first). A follower: used where its input is channels-last anyway
    (the other way is two transposes around it), never to start the layout."""
    p = attrs.parsed
    data = in_shapes[0] if in_shapes else None
    if (
        p.pool_type not in _POOL_MODES
        or getattr(p, "full_kernel_average", False)  # Pooling_v1's divisor
        or p.layout not in (None, "NCHW")
        or dtype is None
        or np.dtype(dtype) not in _FLOATS
        or not shape_is_known(data)
        or len(data) != 4
        or (not p.global_pool and len(p.kernel) != 2)
    ):
        return None
    return ChannelsLastTwin(POOL_OP, p, 0, None, follows=True)


register_op("Pooling").set_attr(FChannelsLast, pool_twin)

__all__ = ["CONV_OP", "POOL_OP", "WEIGHT_OP", "ChannelsLastTwin", "conv_twin", "pool_twin"]
