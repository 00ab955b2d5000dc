"""The nodes the inference passes insert, and the specs op attributes describe them with.

SimplifyInference (passes/simplify_inference.py) folds a per-channel scale-shift that
follows a linear layer (BatchNorm at inference after Convolution or FullyConnected)
into the layer's parameters:

    y = (W x + b) * scale + shift  =  (W * scale) x + (b * scale + shift)

A `_FoldScaleShift` node computes W' = W * scale[c] (c: the weight's axis 0) and
b' = b * scale + shift from the layer's parameters and the scale-shift's inputs, and
the layer reads W' and b' instead. The node is TMemoizable: the executor reruns it only
after one of its inputs was written (a new moving_var, a weight copied in), so a
forward pass costs nothing for the fold while the parameters stay the same.

FuseEpilogue (passes/fuse_epilogue.py) replaces a node whose op declares FEpilogue,
followed by a residual add and/or a relu, by one `_Epilogue` node: the op's own
FEpilogue computes its output with the epilogue applied in its output loop.

Both ops are made only by the passes, never from attribute strings, and have no
gradient (the passes run on graphs without backward).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ...attrs import (
    FCompute_cpu,
    FCompute_gpu,
    FEpilogue,
    FEpilogueStep,
    FInferShape,
    FInferType,
    FListInputNames,
    FListOutputNames,
    FNumVisibleOutputs,
    FResourceRequest,
    FStampedInputs,
    TMemoizable,
)
from ...base import ParamError
from ...infer import shape_assign, shape_is_known, type_assign
from ...kernel import parallel_for
from ...kernel.launch import NULL, flat, is_gpu, req_code, uindex
from ...registry import NodeAttrs, Op, register_op
from ...resource import ResourceRequest

FOLD_OP = "_FoldScaleShift"
EPILOGUE_OP = "_Epilogue"
_ZERO = np.float32(0)  # relu's zero: a literal 0 would make a float32 loop float64


class ScaleShift(NamedTuple):
    """FScaleShift's answer: y = x * scale[c] + shift[c] along `axis` of input 0.

    `loop.launch(ctx, C, scale, shift, *node_inputs[inputs], *params)` fills scale and
    shift; `train_safe` says the same holds when is_train (BatchNorm's use_global_stats).
    """

    axis: int
    inputs: tuple[int, ...]
    loop: Any
    params: tuple[Any, ...]
    train_safe: bool


class FoldTarget(NamedTuple):
    """FFoldScaleShift's answer: output channel c of output 0 is weight[c] . x + bias[c].

    `bias` is the bias input's index, None without one: then `with_bias` are the attribute
    changes that give the node a bias input, which goes at index `bias_index`. `out_axis`
    is the channel axis of output 0 (negative: counted from the end).
    """

    weight: int
    bias: int | None
    out_axis: int
    with_bias: dict[str, str]
    bias_index: int


class Epilogue(NamedTuple):
    """What FEpilogue applies to output 0: `+ residual` (the node's last input), then relu."""

    residual: bool
    relu: bool


class FoldSpec(NamedTuple):
    """Parsed attributes of `_FoldScaleShift`: inputs (weight, [bias], *scale-shift inputs)."""

    scale_shift: ScaleShift
    has_bias: bool
    source: str  # the scale-shift node folded in, for debug_str

    @property
    def num_inputs(self) -> int:
        return 1 + int(self.has_bias) + len(self.scale_shift.inputs)


class EpilogueSpec(NamedTuple):
    """Parsed attributes of `_Epilogue`: the producer's attributes and the epilogue."""

    base: NodeAttrs
    epilogue: Epilogue
    members: tuple[str, ...]  # the absorbed node names, producer first

    @property
    def num_base_inputs(self) -> int:
        return self.base.op.get_num_inputs(self.base) if self.base.op else 0


def _refuse(op: str, pass_name: str) -> Any:
    def parse(attrs: NodeAttrs) -> Any:
        raise ParamError(
            f"{op}: node {attrs.name!r} cannot be made from attributes {attrs.dict}; "
            f"it is made by the {pass_name} pass at bind"
        )

    return parse


# -- _FoldScaleShift ------------------------------------------------------------------------


@parallel_for
def _fold_loop(c, w_out, b_out, w, b, has_bias, scale, shift, inner):
    # W'[c] = W[c] * scale[c];  b'[c] = b[c] * scale[c] + shift[c]
    s = scale[c]
    base = c * inner
    for j in range(inner):
        w_out[base + j] = w[base + j] * s
    b_out[c] = (b[c] if has_bias else 0.0) * s + shift[c]


def _fold_spec(attrs: NodeAttrs) -> FoldSpec:
    spec = attrs.parsed
    assert isinstance(spec, FoldSpec), attrs
    return spec


def _fold_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    shape_assign(out_shapes, 0, in_shapes[0], f"{FOLD_OP}: output 'weight'")
    shape_assign(in_shapes, 0, out_shapes[0], f"{FOLD_OP}: input 'weight'")
    if in_shapes[0] is not None:
        shape_assign(out_shapes, 1, (in_shapes[0][0],), f"{FOLD_OP}: output 'bias'")
    return all(shape_is_known(s) for s in [*in_shapes, *out_shapes])


def _fold_type(attrs: NodeAttrs, in_types: list[Any], out_types: list[Any]) -> bool:
    if in_types[0] is None:
        return False
    for j in range(2):
        type_assign(out_types, j, in_types[0], f"{FOLD_OP}: output {j}")
    return True


def _fold_compute(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    spec = _fold_spec(attrs)
    if all(req_code(FOLD_OP, r) == NULL for r in req):
        return
    w, w_out, b_out = inputs[0], outputs[0], outputs[1]
    b = inputs[1] if spec.has_bias else b_out  # a stand-in the loop never reads
    f = int(w.shape[0])
    space = ctx.requested[0].get_space((2, f), w.dtype)
    scale, shift = space[0], space[1]
    ss = spec.scale_shift
    params = inputs[1 + int(spec.has_bias) :]
    ss.loop.launch(ctx, f, scale, shift, *params, *ss.params)
    inner = int(w.size) // max(f, 1)
    _fold_loop.launch(
        ctx, f, flat(w_out), b_out, flat(w), b, spec.has_bias, scale, shift, inner, work=w.size
    )


(
    register_op(FOLD_OP)
    .describe(
        "Inserted by SimplifyInference: weight * scale[c] and bias * scale + shift, the "
        "parameters of a layer with the per-channel scale-shift after it folded in."
    )
    .set_attr_parser(_refuse(FOLD_OP, "SimplifyInference"))
    .set_num_inputs(lambda attrs: _fold_spec(attrs).num_inputs)
    .set_num_outputs(2)
    .set_attr(FListOutputNames, lambda attrs: ["weight", "bias"])
    .set_attr(FInferShape, _fold_shape)
    .set_attr(FInferType, _fold_type)
    .set_attr(FResourceRequest, lambda attrs: [ResourceRequest.kTempSpace])
    .set_attr(TMemoizable, True)
    .set_attr(FCompute_cpu, _fold_compute)
    .set_attr(FCompute_gpu, _fold_compute)
)


# -- epilogue loop (any FEpilogue op may use it) ------------------------------------------------


@parallel_for
def _epilogue_rows(r, out, bias, has_bias, res, has_res, relu, row0, nf, hw, col0, col1):
    # row q = row0 + r of out viewed (N*F, HW), its columns [col0, col1):
    # out = relu?(out + bias[q % F] + res)
    q = row0 + r
    f = q % nf
    base = q * hw
    for p in range(col0, col1):
        i = uindex(base + p)  # unsigned: no wraparound check, so the loop vectorises
        v = out[i]  # v stays in out's dtype: float32 arithmetic vectorises twice as wide
        if has_bias:
            v += bias[f]
        if has_res:
            v += res[i]
        if relu and v <= 0:
            v = _ZERO  # +0 for -inf and -0 too; NaN stays NaN, as MXNet's relu
        out[i] = v


def apply_epilogue(
    ctx: Any,
    out: Any,
    bias: Any,
    residual: Any,
    relu: bool,
    rows: tuple[int, int] | None = None,
    cols: tuple[int, int] | None = None,
) -> None:
    """out (N, F, ...) = relu?(out + bias[f] + residual) over rows [r0, r1) of (N*F, HW),
    columns [c0, c1) (default: all).

    `bias` and `residual` (out's shape) may be None; `ctx` None means the CPU. There the
    loop is serial: it runs between BLAS calls, and numba's workers would then fight
    OpenBLAS's threads for the cores (_im2col.py); OpenBLAS is the one thread pool.
    """
    nf = int(out.shape[1])
    hw = int(out.size) // max(int(out.shape[0]) * nf, 1)
    r0, r1 = rows if rows is not None else (0, int(out.shape[0]) * nf)
    c0, c1 = cols if cols is not None else (0, hw)
    has_bias, has_res = bias is not None, residual is not None
    o = flat(out)
    args = (
        o, flat(bias) if has_bias else o, has_bias, flat(residual) if has_res else o,
        has_res, relu, r0, nf, hw, c0, c1,
    )  # fmt: skip
    gpu = ctx is not None and is_gpu(ctx)
    _epilogue_rows.launch(ctx, r1 - r0, *args, work=None if gpu else 0)


# -- _Epilogue -------------------------------------------------------------------------------


def _epi_spec(attrs: NodeAttrs) -> EpilogueSpec:
    spec = attrs.parsed
    assert isinstance(spec, EpilogueSpec), attrs
    return spec


def _base_op(spec: EpilogueSpec) -> Op:
    assert spec.base.op is not None
    return spec.base.op


def _epi_num_inputs(attrs: NodeAttrs) -> int:
    spec = _epi_spec(attrs)
    return spec.num_base_inputs + int(spec.epilogue.residual)


def _epi_num_outputs(attrs: NodeAttrs) -> int:
    spec = _epi_spec(attrs)
    return _base_op(spec).get_num_outputs(spec.base)


def _epi_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    spec = _epi_spec(attrs)
    n = spec.num_base_inputs
    if spec.epilogue.residual:
        shape_assign(out_shapes, 0, in_shapes[n], f"{EPILOGUE_OP}: output 0")
    base = in_shapes[:n]
    done = bool(_base_op(spec).get_attr(FInferShape)(spec.base, base, out_shapes))
    in_shapes[:n] = base
    if spec.epilogue.residual:
        shape_assign(in_shapes, n, out_shapes[0], f"{EPILOGUE_OP}: input 'residual'")
        done = done and shape_is_known(in_shapes[n])
    return done


def _epi_type(attrs: NodeAttrs, in_types: list[Any], out_types: list[Any]) -> bool:
    spec = _epi_spec(attrs)
    n = spec.num_base_inputs
    base = in_types[:n]
    done = bool(_base_op(spec).get_attr(FInferType)(spec.base, base, out_types))
    in_types[:n] = base
    if spec.epilogue.residual:
        type_assign(in_types, n, out_types[0], f"{EPILOGUE_OP}: input 'residual'")
    return done


def _epi_input_names(attrs: NodeAttrs) -> list[str]:
    spec = _epi_spec(attrs)
    names = _base_op(spec).get_attr(FListInputNames)
    base = list(names(spec.base)) if names else [f"arg{i}" for i in range(spec.num_base_inputs)]
    return [*base, "residual"] if spec.epilogue.residual else base


def _epi_output_names(attrs: NodeAttrs) -> list[str]:
    spec = _epi_spec(attrs)
    names = _base_op(spec).get_attr(FListOutputNames)
    return list(names(spec.base)) if names else ["output"]


def _epi_visible(attrs: NodeAttrs) -> int:
    spec = _epi_spec(attrs)
    visible = _base_op(spec).get_attr(FNumVisibleOutputs)
    return visible(spec.base) if visible else _base_op(spec).get_num_outputs(spec.base)


def _epi_resources(attrs: NodeAttrs) -> list[Any]:
    spec = _epi_spec(attrs)
    requests = _base_op(spec).get_attr(FResourceRequest)
    return list(requests(spec.base)) if requests else []


def _epi_stamped(attrs: NodeAttrs) -> list[int]:
    spec = _epi_spec(attrs)
    stamped = _base_op(spec).get_attr(FStampedInputs)
    return list(stamped(spec.base)) if stamped else []


def _epi_compute(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    spec = _epi_spec(attrs)
    _base_op(spec).get_attr(FEpilogue)(spec.base, ctx, inputs, req, outputs, spec.epilogue)


(
    register_op(EPILOGUE_OP)
    .describe(
        "Inserted by FuseEpilogue: an op (Convolution) whose output loop also adds a "
        "residual and/or applies relu, through the op's FEpilogue."
    )
    .set_attr_parser(_refuse(EPILOGUE_OP, "FuseEpilogue"))
    .set_num_inputs(_epi_num_inputs)
    .set_num_outputs(_epi_num_outputs)
    .set_attr(FListInputNames, _epi_input_names)
    .set_attr(FListOutputNames, _epi_output_names)
    .set_attr(FNumVisibleOutputs, _epi_visible)
    .set_attr(FInferShape, _epi_shape)
    .set_attr(FInferType, _epi_type)
    .set_attr(FResourceRequest, _epi_resources)
    .set_attr(FStampedInputs, _epi_stamped)
    .set_attr(FCompute_cpu, _epi_compute)
    .set_attr(FCompute_gpu, _epi_compute)
)

# The element-wise ops an epilogue absorbs (their modules are the kernel layer's; the
# steps are declared here, beside the loop that implements them). Activation declares its
# own (activation.py).
register_op("elemwise_add").set_attr(FEpilogueStep, lambda attrs: "add")
register_op("relu").set_attr(FEpilogueStep, lambda attrs: "relu")

__all__ = [
    "EPILOGUE_OP",
    "FOLD_OP",
    "Epilogue",
    "EpilogueSpec",
    "FoldSpec",
    "FoldTarget",
    "ScaleShift",
    "apply_epilogue",
]
