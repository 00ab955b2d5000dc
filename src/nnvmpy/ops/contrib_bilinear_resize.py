"""BilinearResize2D: bilinear resizing of NCHW data (nd.contrib / sym.contrib).

`_contrib_BilinearResize2D(data[, like], height=1, width=1, scale_height=None,
scale_width=None, mode='size', align_corners=True)`. The output size per mode:

- size: (height, width); a given scale_height (scale_width) replaces height (width) by
  int(H * scale) (the product in float32, as MXNet's float parameters give it);
- odd_scale: per dimension, int(H * scale) for an even H and int((H - 1) * scale) + 1 for an
  odd one (both scales required);
- like: the height and width of the second input `like` (which gets a zero gradient);
- to_even_down / to_even_up / to_odd_down / to_odd_up: the nearest even (odd) size at or
  below (above) the input's.

Output row o samples input row s(o): with align_corners, s = o (H - 1) / (OH - 1); without,
s = max((o + 0.5) H / OH - 0.5, 0); s = 0 when OH is 1. It blends rows floor(s) and
floor(s) + 1 (the last row alone at the edge); columns likewise. The resize is separable,
y = R_h x R_w^T with (OH, H) and (OW, W) interpolation matrices, and its gradient is
dx = R_h^T dy R_w. Runs on the host (NumPy); on the GPU through _host_staged.host_compute.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..attrs import (
    FCompute_cpu,
    FCompute_gpu,
    FGradient,
    FInferShape,
    FInferType,
    FListInputNames,
    TIsBackward,
)
from ..base import InferError
from ..graph.grad import make_grad_node
from ..infer import shape_assign, shape_is_known, shape_str, type_assign
from ..param import Parameter, field
from ..registry import NodeAttrs, register_op
from ._host_staged import host_compute

OP = "_contrib_BilinearResize2D"
BACKWARD = "_backward_contrib_BilinearResize2D"
MODES = ["like", "odd_scale", "size", "to_even_down", "to_even_up", "to_odd_down", "to_odd_up"]


class BilinearResizeParam(Parameter):
    height = field(
        int,
        default=1,
        lower_bound=1,
        describe="output height (required, but ignored if scale_height is defined or mode is "
        'not "size")',
    )
    width = field(
        int,
        default=1,
        lower_bound=1,
        describe="output width (required, but ignored if scale_width is defined or mode is not "
        '"size")',
    )
    scale_height = field(
        float,
        default=None,
        describe='sampling scale of the height (optional, used in modes "scale" and "odd_scale")',
    )
    scale_width = field(
        float,
        default=None,
        describe='sampling scale of the width (optional, used in modes "scale" and "odd_scale")',
    )
    mode = field(
        str,
        default="size",
        enum=MODES,
        describe='resizing mode. "size" - output height equals parameter "height" if '
        '"scale_height" parameter is not defined or input height multiplied by "scale_height" '
        'otherwise. Same for width; "odd_scale" - if original height or width is odd, then '
        "result height is calculated like result_h = (original_h - 1) * scale + 1; "
        '"like" - resize first input to the height and width of second input; '
        '"to_even_down" / "to_even_up" / "to_odd_down" / "to_odd_up" - resize input to the '
        "nearest even (odd) height and width below (above) the original ones.",
    )
    align_corners = field(
        bool,
        default=True,
        describe="With align_corners = True, the corner pixels of input and output are "
        "aligned; otherwise pixel centres are, and the output values can depend on the input "
        "size.",
    )


def _scaled(n: int, scale: float) -> int:
    with np.errstate(over="ignore", invalid="ignore"):  # float32 as MXNet: 1e300 -> inf
        size = np.float32(n) * np.float32(scale)
    if not np.isfinite(size) or size < 0:  # int() of these raised bare Python errors
        raise InferError(
            f"{OP}: scale {scale} turns a side of {n} into {size}; expected a finite, "
            "non-negative scale_height / scale_width"
        )
    return int(size)


def _parity(n: int, odd: bool, up: bool) -> int:
    if (n % 2 == 1) == odd:
        return n
    return n + 1 if up else n - 1


def output_hw(p: BilinearResizeParam, h: int, w: int, like: Any = None) -> tuple[int, int]:
    """The output (height, width) for an input of (h, w); `like` is the second input's shape."""
    if p.mode == "size":
        oh = p.height if p.scale_height is None else _scaled(h, p.scale_height)
        ow = p.width if p.scale_width is None else _scaled(w, p.scale_width)
        return oh, ow
    if p.mode == "odd_scale":
        if p.scale_height is None or p.scale_width is None:
            raise InferError(f"{OP}: mode 'odd_scale' needs both scale_height and scale_width")
        return tuple(  # type: ignore[return-value]
            _scaled(n, s) if n % 2 == 0 else _scaled(n - 1, s) + 1
            for n, s in ((h, p.scale_height), (w, p.scale_width))
        )
    if p.mode == "like":
        return like[2], like[3]
    odd, up = "odd" in p.mode, p.mode.endswith("up")
    return _parity(h, odd, up), _parity(w, odd, up)


def interpolation_matrix(n_in: int, n_out: int, align_corners: bool) -> np.ndarray:
    """(n_out, n_in): row o holds the two blending weights of output position o."""
    r = np.zeros((n_out, n_in))
    if n_out == 1:
        step = 0.0
    elif align_corners:
        step = (n_in - 1) / (n_out - 1)
    else:
        step = n_in / n_out
    for o in range(n_out):
        s = o * step if align_corners else max((o + 0.5) * step - 0.5, 0.0)
        lo = min(math.floor(s), n_in - 1)
        lam = s - lo
        hi = lo + 1 if lo < n_in - 1 else lo
        r[o, lo] += 1.0 - lam
        r[o, hi] += lam
    return r


def _n_inputs(attrs: NodeAttrs) -> int:
    return 2 if attrs.parsed.mode == "like" else 1


def _input_names(attrs: NodeAttrs) -> list[str]:
    return ["data", "like"][: _n_inputs(attrs)]


def _resize_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    p, data = attrs.parsed, in_shapes[0]
    for i, name in enumerate(_input_names(attrs)):
        s = in_shapes[i]
        if s is not None and len(s) != 4:
            raise InferError(f"{OP}: input '{name}' has shape {shape_str(s)}; expected NCHW (4-D)")
    if data is None or not shape_is_known(data):
        return False
    like = in_shapes[1] if p.mode == "like" else None
    if p.mode == "like" and (like is None or like[2] is None or like[3] is None):
        return False
    oh, ow = output_hw(p, data[2], data[3], like)
    return shape_assign(out_shapes, 0, (data[0], data[1], oh, ow), f"{OP}: output")


def _resize_type(attrs: NodeAttrs, in_types: list[Any], out_types: list[Any]) -> bool:
    known = in_types[0] if in_types[0] is not None else out_types[0]
    if known is None:
        return False
    for i, name in enumerate(_input_names(attrs)):
        type_assign(in_types, i, known, f"{OP}: input '{name}'")
    return type_assign(out_types, 0, known, f"{OP}: output")


def _matrices(p: BilinearResizeParam, x_shape: Any, oh: int, ow: int, dtype: Any) -> Any:
    ct = np.promote_types(dtype, np.float32)
    rh = interpolation_matrix(x_shape[2], oh, p.align_corners).astype(ct)
    rw = interpolation_matrix(x_shape[3], ow, p.align_corners).astype(ct)
    return rh, rw, ct


def bilinear_resize_np(p: BilinearResizeParam, x: np.ndarray, *like: np.ndarray) -> list:
    oh, ow = output_hw(p, x.shape[2], x.shape[3], like[0].shape if like else None)
    rh, rw, ct = _matrices(p, x.shape, oh, ow, x.dtype)
    return [(rh @ x.astype(ct) @ rw.T).astype(x.dtype)]


def bilinear_resize_grad_np(p: BilinearResizeParam, dy: np.ndarray, x: np.ndarray, *like):
    rh, rw, ct = _matrices(p, x.shape, dy.shape[2], dy.shape[3], x.dtype)
    dx = (rh.T @ dy.astype(ct) @ rw).astype(x.dtype)
    return [dx, *(np.zeros(a.shape, a.dtype) for a in like)]


def _resize_gradient(node: Any, ograds: list[Any]) -> list[Any]:
    return make_grad_node(BACKWARD, node, [ograds[0], *node.inputs])


_forward = host_compute(OP, bilinear_resize_np)
(
    register_op(OP)
    .describe(
        "Perform 2D resizing (upsampling or downsampling) for 4D input using bilinear "
        "interpolation.\n\n"
        "Expected input is a 4 dimensional NDArray (NCHW) and the output with the shape of "
        "(N x C x height x width). The key idea of bilinear interpolation is to perform "
        "linear interpolation first in one direction, and then again in the other "
        "direction. See the wikipedia of `Bilinear interpolation "
        "<https://en.wikipedia.org/wiki/Bilinear_interpolation>`_ for more details.\n"
    )
    .set_attr_parser(BilinearResizeParam)
    .set_num_inputs(_n_inputs)
    .set_num_outputs(1)
    .set_attr(FListInputNames, _input_names)
    .set_attr(FInferShape, _resize_shape)
    .set_attr(FInferType, _resize_type)
    .set_attr(FCompute_cpu, _forward)
    .set_attr(FCompute_gpu, _forward)
    .set_attr(FGradient, _resize_gradient)
    .add_argument("data", "NDArray-or-Symbol", "Input data")
    .add_argument("like", "NDArray-or-Symbol", "Resize data to it's shape")
    .add_arguments(BilinearResizeParam.fields())
)
_backward = host_compute(BACKWARD, bilinear_resize_grad_np)
(
    register_op(BACKWARD)
    .describe("Backward of BilinearResize2D: inputs (dy, data[, like]), outputs their grads.")
    .set_attr_parser(BilinearResizeParam)
    .set_num_inputs(lambda attrs: 1 + _n_inputs(attrs))
    .set_num_outputs(_n_inputs)
    .set_attr(TIsBackward, True)
    .set_attr(FCompute_cpu, _backward)
    .set_attr(FCompute_gpu, _backward)
)
