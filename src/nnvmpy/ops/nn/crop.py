"""Crop (MXNet's legacy op): a window of (h, w) from each (N, C) plane, and its backward.

    out[n, c, y, x] = data[n, c, oy + y, ox + x]          out: (N, C, h, w)

(h, w) is `h_w`, or the last two sizes of the second input `crop_like` (num_args=2).
(oy, ox) is `offset`, or with center_crop ((H - h) // 2, (W - w) // 2). The backward
puts dy into the window of a zero gradient; `crop_like` only lends its shape, so its
gradient is zero. One work item per element produced, one body for both devices.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self

from ... import kernel
from ...attrs import (
    FCompute_cpu,
    FCompute_gpu,
    FGradient,
    FInferShape,
    FInferType,
    FListInputNames,
    TIsBackward,
)
from ...base import InferError, ParamError
from ...graph.grad import make_grad_node
from ...infer import shape_assign, shape_is_known, shape_str, type_assign
from ...kernel.launch import NULL, WRITE, is_gpu, req_code, run_rows, store, uindex
from ...param import Parameter, Shape, field
from ...registry import NodeAttrs, register_op
from ._geometry import run_via_float32


class CropParam(Parameter):
    num_args = field(
        int,
        lower_bound=1,
        describe="Number of inputs for crop, if equals one, then we will use the h_w for crop "
        "height and width, else if equals two, then we will use the height and width of the "
        "second input symbol, we name crop_like here",
    )
    offset = field(Shape, default=(0, 0), describe="crop offset coordinate: (y, x)")
    h_w = field(Shape, default=(0, 0), describe="crop height and width: (h, w)")
    center_crop = field(
        bool,
        default=False,
        describe="If set to true, then it will use be the center_crop, or it will crop using "
        "the shape of crop_like",
    )

    @classmethod
    def parse(
        cls, kwargs: Mapping[str, Any], op_name: str | None = None, *, allow_unknown: bool = False
    ) -> Self:
        """Parse and check: one or two inputs, (y, x) offset and (h, w) size."""
        op = op_name or "Crop"
        p = super().parse(kwargs, op_name, allow_unknown=allow_unknown)
        if p.num_args not in (1, 2):
            raise ParamError(f"{op}: parameter 'num_args' must be 1 or 2, got {p.num_args}")
        for name in ("offset", "h_w"):
            value = getattr(p, name)
            if len(value) != 2 or min(value) < 0:
                raise ParamError(
                    f"{op}: parameter {name!r} must be two non-negative sizes (y, x), got {value}"
                )
        return p


def _crop_size(p: Any, in_shapes: list[Any]) -> tuple[Any, Any]:
    """(h, w) of the window: h_w, or the crop_like input's last two sizes."""
    if p.num_args == 1:
        return p.h_w[0], p.h_w[1]
    like = in_shapes[1]
    if like is None:
        return None, None
    if len(like) != 4:
        raise InferError(
            f"Crop: input 'crop_like' must be 4-D (batch, channel, y, x), got shape "
            f"{shape_str(like)}"
        )
    return like[2], like[3]


def window(p: Any, data: tuple[Any, ...], h: Any, w: Any) -> tuple[Any, Any]:
    """The offset (oy, ox) of the window in data (N, C, H, W); InferError if it sticks out."""
    if p.center_crop:
        oy = None if data[2] is None or h is None else (data[2] - h) // 2
        ox = None if data[3] is None or w is None else (data[3] - w) // 2
    else:
        oy, ox = p.offset
    for size, o, full, axis in ((h, oy, data[2], "height"), (w, ox, data[3], "width")):
        if size is None or full is None:
            continue
        if size < 1 or size + o > full:
            raise InferError(
                f"Crop: a crop of {axis} {size} at offset {o} does not fit in input 'data' "
                f"of shape {shape_str(data)}; expected 1 <= {axis} and offset + {axis} <= "
                f"{full}"
            )
    return oy, ox


def infer_crop_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    """data (N, C, H, W) [, crop_like (*, *, h, w)] -> (N, C, h, w)."""
    p = attrs.parsed
    data = in_shapes[0]
    if data is not None and len(data) != 4:
        raise InferError(
            f"Crop: input 'data' must be 4-D (batch, channel, y, x), got shape {shape_str(data)}"
        )
    h, w = _crop_size(p, in_shapes)
    out = out_shapes[0]
    if out is not None:  # N and C from the output
        shape_assign(in_shapes, 0, (out[0], out[1], None, None), "Crop: input 'data'")
        data = in_shapes[0]
    if data is None:
        return False
    window(p, data, h, w)
    shape_assign(out_shapes, 0, (data[0], data[1], h, w), "Crop: output 'output'")
    return all(shape_is_known(s) for s in [*in_shapes, *out_shapes])


def infer_crop_type(attrs: NodeAttrs, in_types: list[Any], out_types: list[Any]) -> bool:
    """The output has the data's dtype; crop_like (shape only) defaults to it too."""
    dtype = in_types[0] if in_types[0] is not None else out_types[0]
    if dtype is None:
        return False
    type_assign(in_types, 0, dtype, "Crop: input 'data'")
    type_assign(out_types, 0, dtype, "Crop: output 'output'")
    if len(in_types) > 1 and in_types[1] is None:
        in_types[1] = in_types[0]
    return True


# -- kernels --------------------------------------------------------------------------------


@kernel.parallel_for
def crop_copy(j, x, out, height, width, h, w, oy, ox, mode, chunk, nchunk):
    # item j: columns [z0, z1) of output row r = (plane t, row y): the whole row on the
    # CPU (its index arithmetic once), one element on the GPU
    r = j // nchunk
    z0 = (j - r * nchunk) * chunk
    t = r // h
    src = (t * height + oy + (r - t * h)) * width + ox
    for z in range(z0, min(z0 + chunk, w)):
        store(out, r * w + z, x[uindex(src + z)], mode)


@kernel.parallel_for
def crop_grad(j, dy, dx, height, width, h, w, oy, ox, mode, chunk, nchunk):
    # item j: columns [c0, c1) of input row r = (plane t, row): inside the window they
    # take their dy, elsewhere zero (items as crop_copy's)
    r = j // nchunk
    c0 = (j - r * nchunk) * chunk
    t = r // height
    y = r - t * height - oy
    inside = y >= 0 and y < h
    src = (t * h + y) * w - ox
    for col in range(c0, min(c0 + chunk, width)):
        v = dy[uindex(src + col)] if inside and col >= ox and col < ox + w else 0
        store(dx, r * width + col, v, mode)


@kernel.parallel_for
def fill_zero(i, a):
    a[i] = 0


def _run(ctx: Any, fn: Any, inputs: list[Any], req: list[Any], outputs: list[Any]) -> None:
    if is_gpu(ctx):
        fn(inputs, req, outputs)
    else:  # float16 through float32 copies (numba computes no float16 on the CPU)
        run_via_float32(fn, inputs, req, outputs)


def _forward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    def run(ins: list[Any], reqs: list[Any], outs: list[Any]) -> None:
        x, out = ins[0], outs[0]
        height, width = x.shape[2], x.shape[3]
        h, w = out.shape[2], out.shape[3]
        oy, ox = window(attrs.parsed, tuple(x.shape), h, w)
        spans = w if is_gpu(ctx) else 1  # items per output row
        args = (x, out, height, width, h, w, oy, ox, mode, w // spans, spans)
        run_rows(ctx, "Crop", crop_copy, out.size // w * spans, *args)

    mode = req_code("Crop", req[0])
    if mode != NULL and outputs[0].size:
        _run(ctx, run, inputs[:1], req, outputs)


def _backward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    # inputs: (dy,); outputs: d data[, d crop_like]
    name = "_backward_Crop"

    def run(ins: list[Any], reqs: list[Any], outs: list[Any]) -> None:
        dy, dx = ins[0], outs[0]
        height, width = dx.shape[2], dx.shape[3]
        h, w = dy.shape[2], dy.shape[3]
        oy, ox = window(attrs.parsed, tuple(dx.shape), h, w)
        spans = width if is_gpu(ctx) else 1  # items per input row
        args = (dy, dx, height, width, h, w, oy, ox, modes[0], width // spans, spans)
        run_rows(ctx, name, crop_grad, dx.size // width * spans, *args)

    modes = [req_code(name, r) for r in req]
    if modes[0] != NULL and outputs[0].size:
        _run(ctx, run, inputs, req[:1], outputs[:1])
    if len(outputs) > 1 and modes[1] == WRITE:  # adding a zero gradient changes nothing
        like = outputs[1]
        if is_gpu(ctx):
            run_rows(ctx, name, fill_zero, like.size, like)
        else:
            like[...] = 0


def _gradient(node: Any, ograds: list[Any]) -> list[Any]:
    # d data from dy alone; crop_like only lends its shape: zero
    return make_grad_node("_backward_Crop", node, [ograds[0]])


(
    register_op("Crop")
    .describe(
        "Crops a 2-D window from every (batch, channel) plane of 4-D data.\n\n"
        "With ``num_args=1`` the window is ``h_w`` = (h, w); with ``num_args=2`` it takes "
        "the height and width of the second input (``crop_like``). It starts at ``offset`` "
        "= (y, x), or is centred with ``center_crop=True``. The output is "
        "*(batch, channel, h, w)*."
    )
    .set_attr_parser(CropParam)
    .set_num_inputs(lambda attrs: int(attrs.parsed.num_args))
    .set_num_outputs(1)
    .set_key_var_num_args("num_args")
    .set_attr(FListInputNames, lambda attrs: [f"arg{i}" for i in range(attrs.parsed.num_args)])
    .set_attr(FInferShape, infer_crop_shape)
    .set_attr(FInferType, infer_crop_type)
    .set_attr(FCompute_cpu, _forward)
    .set_attr(FCompute_gpu, _forward)
    .set_attr(FGradient, _gradient)
    .add_argument(
        "data",
        "NDArray-or-Symbol[]",
        "Tensor or List of Tensors, the second input will be used as crop_like shape reference",
    )
    .add_arguments(CropParam.fields())
)

(
    register_op("_backward_Crop")
    .describe("Backward of Crop: dy -> d data (dy in the window, zero around), d crop_like = 0.")
    .set_attr_parser(CropParam)
    .set_num_inputs(1)
    .set_num_outputs(lambda attrs: int(attrs.parsed.num_args))
    .set_attr(TIsBackward, True)
    .set_attr(FCompute_cpu, _backward)
    .set_attr(FCompute_gpu, _backward)
)

__all__ = ["CropParam", "infer_crop_shape"]
