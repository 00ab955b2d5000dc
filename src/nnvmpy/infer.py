"""Helpers for writing FInferShape / FInferType: merge partial knowledge, fail loudly.

Conventions: a shape is a tuple of ints, an unknown shape is None and an unknown
dimension is None; a dtype is a numpy dtype and an unknown dtype is None. User-facing
partial shapes may also write an unknown dimension as 0 (MXNet's `infer_shape(a=(2, 0))`);
`partial_shape` converts them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeGuard

import numpy as np

from .attrs import FListInputNames, FListOutputNames
from .base import InferError, Shape

# -- shapes ---------------------------------------------------------------------------------


def partial_shape(shape: Sequence[int | None] | None) -> Shape | None:
    """A user shape with 0 or None for unknown dims → our form (None for unknown dims)."""
    if shape is None:
        return None
    if isinstance(shape, int | np.integer):
        shape = (int(shape),)
    return tuple(None if d is None or d == 0 else int(d) for d in shape)


def shape_is_known(shape: Shape | None) -> TypeGuard[tuple[int, ...]]:
    """True when the shape and every dimension are known."""
    return shape is not None and None not in shape  # `in`: no generator (called per entry)


def shape_str(shape: Shape | None) -> str:
    """MXNet-style text: (2, 3), (2, ?), or ? for an unknown shape."""
    if shape is None:
        return "?"
    inner = ", ".join("?" if d is None else str(d) for d in shape)
    return f"({inner},)" if len(shape) == 1 else f"({inner})"


def merge_shapes(a: Shape | None, b: Shape | None) -> Shape | None:
    """The most specific shape consistent with both; InferError when they disagree."""
    if a is None:
        return b
    if b is None:
        return a
    if len(a) != len(b):
        raise InferError(f"shapes {shape_str(a)} and {shape_str(b)} differ in rank")
    merged = []
    for x, y in zip(a, b):
        if x is not None and y is not None and x != y:
            raise InferError(f"shapes {shape_str(a)} and {shape_str(b)} disagree")
        merged.append(x if x is not None else y)
    return tuple(merged)


def shape_assign(
    shapes: list[Shape | None], index: int, shape: Shape | None, what: str = ""
) -> bool:
    """Merge `shape` into shapes[index] (SHAPE_ASSIGN_CHECK); True when it is now fully known.

    `what` names the slot in the error, e.g. "quadratic: input 'data'".
    """
    old = shapes[index]
    try:
        shapes[index] = merge_shapes(old, shape)
    except InferError:
        slot = what or f"entry {index}"
        raise InferError(
            f"{slot} has shape {shape_str(old)} but {shape_str(shape)} was inferred"
        ) from None
    return shape_is_known(shapes[index])


# -- dtypes ---------------------------------------------------------------------------------


def dtype_str(dtype: Any) -> str:
    return "?" if dtype is None else str(np.dtype(dtype))


def type_assign(types: list[Any], index: int, dtype: Any, what: str = "") -> bool:
    """Merge `dtype` into types[index] (TYPE_ASSIGN_CHECK); True when it is now known."""
    if dtype is None:
        return types[index] is not None
    dtype = np.dtype(dtype)
    old = types[index]
    if old is not None and np.dtype(old) != dtype:
        slot = what or f"entry {index}"
        raise InferError(f"{slot} has dtype {dtype_str(old)} but {dtype_str(dtype)} was inferred")
    types[index] = dtype
    return True


# -- element-wise rules ---------------------------------------------------------------------


def slot_names(attrs: Any, n_in: int, n_out: int) -> tuple[list[str], list[str]]:
    """Input and output names for error messages, from FListInputNames/FListOutputNames."""
    op = attrs.op
    in_fn = op.get_attr(FListInputNames) if op is not None else None
    out_fn = op.get_attr(FListOutputNames) if op is not None else None
    ins = list(in_fn(attrs)) if in_fn else []
    outs = list(out_fn(attrs)) if out_fn else []
    if len(ins) < n_in:
        ins = ins + [f"#{i}" for i in range(len(ins), n_in)]
    if len(outs) < n_out:
        outs = outs + [f"#{i}" for i in range(len(outs), n_out)]
    return ins, outs


def _slots(attrs: Any, n_in: int, n_out: int) -> list[str]:
    op_name = attrs.op.name if attrs.op is not None else "?"
    ins, outs = slot_names(attrs, n_in, n_out)
    node = f" (node '{attrs.name}')" if attrs.name else ""
    return [f"{op_name}{node}: input '{n}'" for n in ins[:n_in]] + [
        f"{op_name}{node}: output '{n}'" for n in outs[:n_out]
    ]


def elemwise_shape(n_in: int = 1, n_out: int = 1) -> Any:
    """FInferShape for ops whose inputs and outputs all share one shape (-1: any count)."""

    def infer(attrs: Any, in_shapes: list[Shape | None], out_shapes: list[Shape | None]) -> bool:
        _check_counts(attrs, "shape", n_in, n_out, in_shapes, out_shapes)
        merged: Shape | None = None
        for i, shape in enumerate([*in_shapes, *out_shapes]):
            try:
                merged = merge_shapes(merged, shape)
            except InferError:  # slot names only here: making them costs more than the rule
                names = _slots(attrs, len(in_shapes), len(out_shapes))
                raise InferError(
                    f"{names[i]} has shape {shape_str(shape)} but {shape_str(merged)} was inferred"
                ) from None
        # merged refines every shape, so these assignments cannot disagree
        in_shapes[:] = [merged] * len(in_shapes)
        out_shapes[:] = [merged] * len(out_shapes)
        return shape_is_known(merged)

    return infer


def elemwise_type(n_in: int = 1, n_out: int = 1) -> Any:
    """FInferType for ops whose inputs and outputs all share one dtype (-1: any count)."""

    def infer(attrs: Any, in_types: list[Any], out_types: list[Any]) -> bool:
        _check_counts(attrs, "type", n_in, n_out, in_types, out_types)
        everything = [*in_types, *out_types]
        known = next((t for t in everything if t is not None), None)
        if known is None:
            return False
        known = np.dtype(known)
        for i, old in enumerate(everything):
            if old is not None and np.dtype(old) != known:  # slot names only here (as above)
                names = _slots(attrs, len(in_types), len(out_types))
                type_assign(everything, i, known, names[i])  # raises, naming the slot
        in_types[:] = [known] * len(in_types)
        out_types[:] = [known] * len(out_types)
        return True

    return infer


def _check_counts(
    attrs: Any, what: str, n_in: int, n_out: int, ins: list[Any], outs: list[Any]
) -> None:
    if (n_in >= 0 and len(ins) != n_in) or (n_out >= 0 and len(outs) != n_out):
        op_name = attrs.op.name if attrs.op is not None else "?"
        raise InferError(
            f"{op_name}: elemwise {what} inference expects {n_in} inputs and "
            f"{n_out} outputs, got {len(ins)} and {len(outs)}"
        )


__all__ = [
    "dtype_str",
    "elemwise_shape",
    "elemwise_type",
    "merge_shapes",
    "partial_shape",
    "shape_assign",
    "shape_is_known",
    "shape_str",
    "slot_names",
    "type_assign",
]
