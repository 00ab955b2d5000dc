"""MXNet's `_image_crop` (`nd.image.crop`): a window of an (H, W, C) or (N, H, W, C) image.

    _image_crop(data, x, y, width, height):  out = data[..., y:y+height, x:x+width, :]
        with C in {1, 3}; the gradient is dy inside the window and zero outside
        (`_backward_image_crop`, as in MXNet 1.9.1).

A layout op (see _layout.py): two offset axes of a plain copy, so the forward, the
backward (the adjoint) and the GPU path come from the shared AxisMap kernels. MXNet does
not check x, y >= 0 (it reads outside the image); we refuse them.
"""

from __future__ import annotations

from typing import Any

from ..base import InferError
from ..infer import shape_assign, shape_is_known
from ..param import Parameter, field
from ..registry import NodeAttrs
from ._axis_map import AFFINE, AxisMap, axis_map, identity_axes
from ._layout import register_layout_op
from .image_resize import check_image


class CropParam(Parameter):
    x = field(int, describe="Left boundary of the cropping area.")
    y = field(int, describe="Top boundary of the cropping area.")
    width = field(int, describe="Width of the cropping area.")
    height = field(int, describe="Height of the cropping area.")


def _check_crop(attrs: NodeAttrs, shape: tuple[Any, ...]) -> None:
    check_image("_image_crop", shape, channels_1_or_3=True)
    p = attrs.parsed
    h, w = shape[-3], shape[-2]
    for name, start, size, n, length in (
        ("x", p.x, p.width, w, "width"),
        ("y", p.y, p.height, h, "height"),
    ):
        if size <= 0:
            raise InferError(f"_image_crop: parameter '{length}' must be positive, got {size}")
        if start < 0:
            raise InferError(f"_image_crop: parameter '{name}' must be >= 0, got {start}")
        if n is not None and start + size > n:
            raise InferError(
                f"_image_crop: {name} + {length} = {start} + {size} = {start + size} exceeds "
                f"the input {length} {n} (input 'data' of shape {shape})"
            )


_DATA = "_image_crop: input 'data'"


def _crop_infer(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    shape = in_shapes[0]
    p = attrs.parsed
    if shape is None:
        out = out_shapes[0]
        if out is not None and len(out) in (3, 4):  # batch and channels carry back
            shape_assign(in_shapes, 0, (*out[:-3], None, None, out[-1]), _DATA)
        return False
    shape = tuple(shape)
    _check_crop(attrs, shape)
    shape_assign(out_shapes, 0, (*shape[:-3], p.height, p.width, shape[-1]), "_image_crop: output")
    out = out_shapes[0]
    shape_assign(in_shapes, 0, (*out[:-3], *shape[-3:-1], out[-1]), _DATA)
    return shape_is_known(in_shapes[0])


def _crop_plan(name: str, attrs: NodeAttrs, shape: tuple[int, ...]) -> AxisMap:
    """out[..., i, j, :] = x[..., y + i, x + j, :]: two offset axes of a plain copy."""
    _check_crop(attrs, shape)
    p = attrs.parsed
    axes = identity_axes(shape)
    oshape = list(shape)
    for axis, start, size in ((-3, p.y, p.height), (-2, p.x, p.width)):
        k = len(shape) + axis
        axes[k] = (AFFINE, shape[k], 1, start, axes[k][4])
        oshape[k] = size
    return axis_map(oshape, axes)


register_layout_op(
    ["_image_crop"],
    "_backward_image_crop",
    CropParam,
    _crop_plan,
    _crop_infer,
    "Crop an image NDArray of shape (H x W x C) or (N x H x W x C), C in {1, 3}, to the "
    "area at (x, y) of the given width and height; the gradient is zero outside it.",
)
