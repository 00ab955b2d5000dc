"""Array initialisers (zeros_like, ones_like, _zeros, _ones, _full, _arange, _linspace,
_eye) and Cast.

The initialisers take no inputs: shape and dtype come from their parameters. `ctx` is
accepted as MXNet spells it (a device string); the device a call runs on is the
caller's (nd.zeros(..., ctx=) runs the op under that context).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import kernel
from ..attrs import (
    FCompute_cpu,
    FCompute_gpu,
    FGradient,
    FInferShape,
    FInferType,
    TIsBackward,
)
from ..base import InferError, OpReqType
from ..graph.grad import ElemwiseGradUseNone, make_zero_grad_nodes
from ..infer import elemwise_shape, partial_shape, shape_assign, shape_is_known, type_assign
from ..kernel import half
from ..kernel.elementwise import req_mode
from ..kernel.launch import ADD, WRITE, is_gpu, store
from ..param import Parameter, Shape, field
from ..registry import NodeAttrs, register_op
from ..util import is_np_shape
from .elemwise_unary import _identity
from .matrix import bind_cuda

DTYPES = ["float16", "float32", "float64", "uint8", "int8", "int32", "int64", "bool"]


@kernel.elementwise
def _fill(value):
    return value


def _fill_compute(value: Any, param: str = "value") -> Any:
    """A compute writing `value`, or the parameter `param` when value is None."""

    def compute(
        attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
    ) -> None:
        v = getattr(attrs.parsed, param) if value is None else value
        out = outputs[0]
        if out.dtype == np.bool_:  # no bool kernels: fill its bytes as uint8 0 / 1
            out, v = out.view(np.uint8), float(bool(v))
        _fill.launch(ctx, out, req[0], v)

    def specialize(
        attrs: NodeAttrs, ctx: Any, in_sigs: list[Any], out_sigs: list[Any], req: list[Any]
    ) -> Any:
        """compute for one fixed output signature (see elemwise_compute's specialize): a
        cached nd.zeros / nd.ones call then runs the compiled fill loop directly."""
        out_sig = out_sigs[0]
        if np.dtype(out_sig[1]) == np.bool_:
            return None  # filled through a uint8 view: launch() makes it
        v = getattr(attrs.parsed, param) if value is None else value
        gpu = ctx.device_type == "gpu"
        if gpu:
            fill = _fill.gpu_launcher(req[0], ctx.device_id, out_sig, [], (v,))
        else:
            fill = _fill.cpu_launcher(req[0], out_sig, [], (v,))
        if fill is None or not in_sigs:
            return fill
        # zeros_like / ones_like: the loop reads no input (only its shape was used)
        if gpu:
            return lambda inputs, outputs, run_ctx: fill((), outputs, run_ctx)
        return lambda inputs, outputs: fill((), outputs)

    compute.specialize = specialize  # type: ignore[attr-defined]
    return compute


def _register_like(name: str, value: float, describe: str) -> None:
    compute = _fill_compute(value)
    (
        register_op(name)
        .describe(describe)
        .set_num_inputs(1)
        .set_num_outputs(1)
        .set_attr(FInferShape, elemwise_shape(1, 1))
        .set_attr(FInferType, lambda attrs, i, o: _same_type(attrs, i, o))
        .set_attr(FCompute_cpu, compute)
        .set_attr(FCompute_gpu, compute)
        .set_attr(FGradient, make_zero_grad_nodes)
        .add_argument("data", "NDArray-or-Symbol", "The input (only its shape is used).")
    )


def _same_type(attrs: NodeAttrs, in_types: list[Any], out_types: list[Any]) -> bool:
    from nnvmpy.infer import elemwise_type

    return bool(elemwise_type(1, 1)(attrs, in_types, out_types))


_register_like("zeros_like", 0.0, "An array of zeros with the shape and dtype of the input.")
_register_like("ones_like", 1.0, "An array of ones with the shape and dtype of the input.")


class InitParam(Parameter):
    shape = field(Shape, default=(), describe="The shape of the output.")
    ctx = field(str, default="", describe="Context of output, in format [cpu|gpu|cpu_pinned](n).")
    dtype = field(str, default="float32", enum=DTYPES, describe="The output dtype.")


class FullParam(InitParam):
    value = field(float, describe="The value to fill with.")


def _init_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    """The shape parameter, where -1 (as 0) is a dimension left to the graph to infer
    (MXNet: `sym.ones(shape=(-1, -1)) + x` takes x's shape); () is a scalar under np_shape
    and unknown otherwise (MXNet's legacy `_zeros(out=x)` takes x's)."""
    given = attrs.parsed.shape
    if not given and not is_np_shape():
        return shape_is_known(out_shapes[0])
    if given and any(d < -1 for d in given):
        raise InferError(
            f"{attrs.op.name if attrs.op else '?'}: shape {tuple(given)} has a negative "
            "dimension; expected sizes >= 0, or -1 / 0 for one the graph infers"
        )
    return shape_assign(
        out_shapes,
        0,
        partial_shape(tuple(0 if d == -1 else d for d in given) if given else given),
        f"{attrs.op.name if attrs.op else '?'}: output",
    )


def _init_type(attrs: NodeAttrs, in_types: list[Any], out_types: list[Any]) -> bool:
    return type_assign(out_types, 0, np.dtype(attrs.parsed.dtype))


for _name, _value, _param, _doc in (
    ("_zeros", 0.0, InitParam, "An array of zeros."),
    ("_ones", 1.0, InitParam, "An array of ones."),
    ("_full", None, FullParam, "An array filled with value."),
):
    (
        register_op(_name)
        .describe(_doc)
        .set_attr_parser(_param)
        .set_num_inputs(0)
        .set_num_outputs(1)
        .set_attr(FInferShape, _init_shape)
        .set_attr(FInferType, _init_type)
        .set_attr(FCompute_cpu, _fill_compute(_value))
        .set_attr(FCompute_gpu, _fill_compute(_value))
        .add_arguments(_param.fields())
    )


class SetValueParam(Parameter):
    src = field(float, describe="Source input to the function.")


def _set_value_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    return out_shapes[0] is not None  # the out= array's, which imperative calls seed


def _set_value_type(attrs: NodeAttrs, in_types: list[Any], out_types: list[Any]) -> bool:
    if out_types[0] is None:
        out_types[0] = np.dtype(np.float32)
    return True


(
    register_op("_set_value")
    .describe(
        "Set every element of out= to src (MXNet's legacy NDArray function): the shape and "
        "dtype are out's own, so an imperative call needs out=; src is cast to out's dtype "
        "as NumPy casts (2.7 into int32 gives 2)."
    )
    .set_attr_parser(SetValueParam)
    .set_num_inputs(0)
    .set_num_outputs(1)
    .set_attr(FInferShape, _set_value_shape)
    .set_attr(FInferType, _set_value_type)
    .set_attr(FCompute_cpu, _fill_compute(None, "src"))
    .set_attr(FCompute_gpu, _fill_compute(None, "src"))
    .add_arguments(SetValueParam.fields())
)


# -- Cast -----------------------------------------------------------------------------------


class CastParam(Parameter):
    dtype = field(str, enum=DTYPES, describe="Output data type.")


def _cast_type(attrs: NodeAttrs, in_types: list[Any], out_types: list[Any]) -> bool:
    type_assign(out_types, 0, np.dtype(attrs.parsed.dtype), "Cast: output")
    return in_types[0] is not None


@kernel.elementwise
def _nonzero(x):  # a bool's byte: 1 where x != 0 (NaN too, as NumPy's astype(bool))
    return 0 if x == 0 else 1


def _cast_compute(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    """out = x in out's dtype. Kernels have no bool: a bool is its byte as uint8 (0 / 1),
    written by _nonzero and read as 0 / 1."""
    x, out = inputs[0], outputs[0]
    if x.dtype == np.bool_:
        x = x.view(np.uint8)
    if out.dtype == np.bool_:
        _nonzero.launch(ctx, out.view(np.uint8), req[0], x)
    elif not is_gpu(ctx) and req[0] in _WRITES and _half_pair(x.dtype, out.dtype):
        if out.dtype == np.float16:  # straight from the bits, no float32 copy between
            half.store(out, x)
        else:
            half.to_float32(x, out)
    else:
        _identity.launch(ctx, out, req[0], x)


_WRITES = (OpReqType.kWriteTo, OpReqType.kWriteInplace)


def _half_pair(a: np.dtype, b: np.dtype) -> bool:
    """float32 to float16 or back: kernel.half converts those on the CPU."""
    return {a, b} == {np.dtype(np.float16), np.dtype(np.float32)}


def _backward_cast_type(attrs: NodeAttrs, in_types: list[Any], out_types: list[Any]) -> bool:
    if out_types[0] is None:
        raise InferError("_backward_Cast: the input dtype comes from the forward Cast node")
    return True


(
    register_op("Cast")
    .add_alias("cast")
    .describe("Casts all elements of the input to a new type.")
    .set_attr_parser(CastParam)
    .set_num_inputs(1)
    .set_num_outputs(1)
    .set_attr(FInferShape, elemwise_shape(1, 1))
    .set_attr(FInferType, _cast_type)
    .set_attr(FCompute_cpu, _cast_compute)
    .set_attr(FCompute_gpu, _cast_compute)
    .set_attr(FGradient, ElemwiseGradUseNone("_backward_Cast"))
    .add_argument("data", "NDArray-or-Symbol", "The input.")
    .add_arguments(CastParam.fields())
)

(
    register_op("_backward_Cast")
    .describe("Backward of Cast: casts the gradient back.")
    .set_num_inputs(1)
    .set_num_outputs(1)
    .set_attr(TIsBackward, True)
    .set_attr(FInferShape, elemwise_shape(1, 1))
    .set_attr(FCompute_cpu, _cast_compute)
    .set_attr(FCompute_gpu, _cast_compute)
)


# -- _arange, _linspace, _eye -----------------------------------------------------------------

cuda: Any = None  # numba.cuda, bound before a launch (see matrix.bind_cuda)


class RangeParam(Parameter):
    start = field(float, describe="Start of interval. The interval includes this value.")
    stop = field(
        float,
        default=None,
        describe="End of interval. The interval does not include this value, except in "
        "some cases where step is not an integer and floating point round-off affects the "
        "length of out.",
    )
    step = field(float, default=1.0, describe="Spacing between values.")
    repeat = field(
        int, default=1, lower_bound=1, describe="The repeating time of all elements. E.g "
        "repeat=3, the element a will be repeated three times --> a, a, a.",
    )  # fmt: skip
    infer_range = field(
        bool,
        default=False,
        describe="When set to True, infer the stop position from the start, step, repeat, "
        "and output tensor size.",
    )
    ctx = field(str, default="", describe="Context of output, in format [cpu|gpu|cpu_pinned](n).")
    dtype = field(str, default="float32", enum=DTYPES, describe="Target data type.")


class LinspaceParam(Parameter):
    start = field(float, describe="Start of interval. The interval includes this value.")
    stop = field(float, describe="End of interval.")
    num = field(int, lower_bound=0, describe="Number of samples to generate.")
    endpoint = field(
        bool,
        default=True,
        describe="If True, stop is the last sample. Otherwise, it is not included.",
    )
    ctx = field(str, default="", describe="Context of output, in format [cpu|gpu|cpu_pinned](n).")
    dtype = field(str, default="float32", enum=DTYPES, describe="Target data type.")


class EyeParam(Parameter):
    N = field(int, lower_bound=0, describe="Number of rows in the output.")
    M = field(
        int, default=0, lower_bound=0, describe="Number of columns in the output. If 0, "
        "defaults to N",
    )  # fmt: skip
    k = field(
        int,
        default=0,
        describe="Index of the diagonal. 0 (the default) refers to the main diagonal.A "
        "positive value refers to an upper diagonal.A negative value to a lower diagonal.",
    )
    ctx = field(str, default="", describe="Context of output, in format [cpu|gpu|cpu_pinned](n).")
    dtype = field(str, default="float32", enum=DTYPES, describe="Target data type.")


def range_bounds(p: Any) -> tuple[float, float, int]:
    """(start, step, number of distinct values) of _arange; stop None means [0, start)."""
    start, stop = (0.0, p.start) if p.stop is None else (p.start, p.stop)
    if p.step == 0:
        raise InferError("_arange: parameter 'step' must not be 0")
    span = (stop - start) / p.step
    if not math.isfinite(span):
        raise InferError(
            f"_arange: start={start}, stop={stop}, step={p.step} do not give a finite "
            "number of values; expected finite numbers"
        )
    n = math.ceil(span)
    return start, p.step, max(n, 0)


def _arange_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    p = attrs.parsed
    if p.infer_range and p.stop is None:
        return False  # the length comes from the output (symbolic use only)
    _, _, n = range_bounds(p)
    return shape_assign(out_shapes, 0, (n * p.repeat,), "_arange: output")


def _linspace_step(p: Any) -> float:
    div = p.num - 1 if p.endpoint else p.num
    return (p.stop - p.start) / div if div > 0 else 0.0


def _linspace_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    return shape_assign(out_shapes, 0, (attrs.parsed.num,), "_linspace: output")


def _eye_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    p = attrs.parsed
    return shape_assign(out_shapes, 0, (p.N, p.M or p.N), "_eye: output")


@kernel.cuda_kernel
def _affine_cuda(out, start, step, repeat, add):
    # out[t] (+)= start + (t // repeat) * step, cast to out's dtype (truncation, as C)
    for t in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        v = start + (t // repeat) * step
        if add:
            out[t] += v
        else:
            out[t] = v


@kernel.parallel_for
def _affine_group(g, out, start, step, repeat, mode):
    # the CPU's _affine_cuda: item g writes the `repeat` copies of start + g * step (with
    # repeat 1 a loop LLVM vectorises; NumPy's arange, floor division, product and cast
    # made four passes over memory)
    v = start + g * step
    for t in range(g * repeat, min(g * repeat + repeat, out.size)):
        store(out, t, v, mode)


@kernel.cuda_kernel
def _eye_cuda(out, cols, k, add):
    # out[i, j] (+)= 1 where j - i == k, else 0
    for t in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        i = t // cols
        v = 1 if t - i * cols - i == k else 0
        if add:
            out[t] += v
        else:
            out[t] = v


def _write(ctx: Any, out: Any, req: Any, values: np.ndarray) -> None:
    mode = req_mode("init", req)
    if mode == "add":
        out += values.astype(out.dtype, copy=False)
    elif mode == "write":
        np.copyto(out, values, casting="unsafe")


def _affine(ctx: Any, out: Any, req: Any, start: float, step: float, repeat: int) -> None:
    """out (+)= start + (i // repeat) * step for i in range(out.size), in float64 first."""
    mode = req_mode("init", req)
    if mode is None or out.size == 0:
        return
    if isinstance(out, np.ndarray):
        if out.dtype.kind in "iuf" and out.dtype != np.float16 and out.flags.c_contiguous:
            code = ADD if mode == "add" else WRITE
            groups = -(-out.size // repeat)
            args = (out.reshape(-1), start, step, repeat, code)
            _affine_group.launch(ctx, groups, *args, work=out.size)
            return
        _write(ctx, out, req, start + (np.arange(out.size) // repeat) * step)
        return
    global cuda
    cuda = bind_cuda("_arange")
    _affine_cuda.launch(ctx, out.size, out, float(start), float(step), repeat, mode == "add")


def _arange_forward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    # start and step are cast to the output dtype first, as MXNet does (and NumPy's
    # integer arange: np.arange(1.3, 9, 1.3, dtype=int) counts 1, 2, 3, ...)
    p, out = attrs.parsed, outputs[0]
    if p.infer_range and p.stop is None:  # the length came from the output's shape
        start, step = p.start, p.step
    else:
        start, step, _ = range_bounds(p)
    if np.dtype(out.dtype).kind in "iub":
        start, step = int(start), int(step)
    _affine(ctx, out, req[0], start, step, p.repeat)


def _linspace_forward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    p = attrs.parsed
    _affine(ctx, outputs[0], req[0], p.start, _linspace_step(p), 1)


def _eye_forward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    p, out = attrs.parsed, outputs[0]
    mode = req_mode("_eye", req[0])
    if mode is None or out.size == 0:
        return
    rows, cols = p.N, p.M or p.N
    if isinstance(out, np.ndarray):
        _write(ctx, out, req[0], np.eye(rows, cols, p.k))
        return
    global cuda
    cuda = bind_cuda("_eye")
    _eye_cuda.launch(ctx, out.size, out.reshape(out.size), cols, p.k, mode == "add")


_RANGE_OPS: list[tuple[str, type[Parameter], Any, Any, str]] = [
    (
        "_arange",
        RangeParam,
        _arange_shape,
        _arange_forward,
        "Evenly spaced values in [start, stop) with spacing step, each repeated `repeat` "
        "times (start only: [0, start)). Length ceil((stop - start) / step) * repeat.",
    ),
    (
        "_linspace",
        LinspaceParam,
        _linspace_shape,
        _linspace_forward,
        "num evenly spaced samples from start to stop (stop excluded with endpoint=False).",
    ),
    (
        "_eye",
        EyeParam,
        _eye_shape,
        _eye_forward,
        "A 2-D array of shape (N, M or N) with ones on diagonal k and zeros elsewhere.",
    ),
]
for _rname, _rparam, _shape_fn, _compute, _rdoc in _RANGE_OPS:
    (
        register_op(_rname)
        .describe(_rdoc)
        .set_attr_parser(_rparam)
        .set_num_inputs(0)
        .set_num_outputs(1)
        .set_attr(FInferShape, _shape_fn)
        .set_attr(FInferType, _init_type)
        .set_attr(FCompute_cpu, _compute)
        .set_attr(FCompute_gpu, _compute)
        .add_arguments(_rparam.fields())
    )
