"""The out= arrays of an imperative call: checked, given their requests, staged if needed.

`nd.op(..., out=x)` writes into x: its shape, dtype and device must be the op's; an out
that is also an input is written in place (kWriteInplace) only where the op's
FInplaceOption allows it, and computed aside then copied in where the op reads that input
again (`add_n(x, y, x, out=x)`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from .attrs import FInplaceOption, FNumVisibleOutputs, TParseEveryCall
from .base import Context, NNVMError, OpReqType
from .registry import NodeAttrs, Op

if TYPE_CHECKING:
    from nnvmpy.ndarray.ndarray import NDArray

_WRITE = [OpReqType.kWriteTo]


def _new_array(nd: Any, shape: tuple[int, ...], dtype: np.dtype, ctx: Context) -> NDArray:
    return nd.new_array(shape, dtype, math.prod(shape) * dtype.itemsize, ctx)


def out_ctx(out: Any) -> Context | None:
    if out is None:
        return None
    first = out if not isinstance(out, list | tuple) else out[0]
    ctx: Context = first._ctx
    return ctx


def outputs_for(
    op: Op,
    attrs: NodeAttrs,
    inputs: Sequence[NDArray],
    out: Any,
    shapes: list[Any],
    dtypes: list[Any],
    ctx: Context,
    nd: Any,
) -> tuple[list[NDArray], list[OpReqType], list[tuple[int, NDArray]]]:
    """The out= arrays checked, their requests, and (j, out[j]) to copy from a staging array."""
    if len(shapes) == 1 and not isinstance(out, list | tuple):  # nd.op(..., out=x): fast
        o = out
        octx = getattr(o, "_ctx", None)
        if (octx is ctx or octx == ctx) and o.shape == shapes[0] and o.dtype == dtypes[0]:
            chunk, alias = o._chunk, -1
            for i, x in enumerate(inputs):
                if x._chunk is chunk:
                    if alias >= 0:
                        break  # aliased twice: the general path decides
                    alias = i
            else:
                if alias < 0:
                    return [o], _WRITE, []
                if (alias, 0) in _inplace_pairs(op, attrs):
                    return [o], _INPLACE, []
    outs = list(out) if isinstance(out, list | tuple) else [out]
    n_vis = num_visible(op, attrs, len(shapes))
    if len(outs) not in (n_vis, len(shapes)):
        raise NNVMError(f"{op.name}: out= needs {n_vis} arrays, got {len(outs)}")
    outs += [_new_array(nd, s, d, ctx) for s, d in zip(shapes[len(outs) :], dtypes[len(outs) :])]
    req = []
    staged = []
    inplace = set(op.get_attr(FInplaceOption, _no_inplace)(attrs))
    for j, (o, s, d) in enumerate(zip(outs, shapes, dtypes)):
        if not isinstance(o, nd.NDArray):
            raise NNVMError(f"{op.name}: out[{j}] must be an NDArray, got {type(o).__name__}")
        if o.shape != s or o.dtype != d:
            raise NNVMError(
                f"{op.name}: out[{j}] has shape {o.shape} and dtype {o.dtype}, "
                f"but the op produces {s} {d}"
            )
        if o._ctx != ctx:
            raise NNVMError(f"{op.name}: out[{j}] is on {o._ctx}, the inputs on {ctx}")
        aliased = [i for i, x in enumerate(inputs) if x._chunk is o._chunk]
        allowed = [i for i in aliased if (i, j) in inplace]
        if aliased and not allowed:
            raise NNVMError(
                f"{op.name}: out[{j}] is the same array as input {aliased[0]}, but the op "
                f"does not allow in-place (FInplaceOption {sorted(inplace)}); pass a "
                f"different out= array"
            )
        if len(allowed) < len(aliased):
            # `x += x`: out is also an input the op may read after writing out (add_n(x, y,
            # x, out=x) would), so compute into a fresh array and copy it over afterwards
            staged.append((j, o))
            outs[j] = _new_array(nd, s, d, ctx)
            req.append(OpReqType.kWriteTo)
            continue
        req.append(OpReqType.kWriteInplace if aliased else OpReqType.kWriteTo)
    return outs, req, staged


def _no_inplace(attrs: NodeAttrs) -> list[tuple[int, int]]:
    return []


_INPLACE = [OpReqType.kWriteInplace]
_inplace_cache: dict[NodeAttrs, tuple[int, frozenset[tuple[int, int]]]] = {}


def _inplace_pairs(op: Op, attrs: NodeAttrs) -> frozenset[tuple[int, int]]:
    """The op's FInplaceOption pairs for these attrs, cached (attrs are reused per call)."""
    hit = _inplace_cache.get(attrs)
    if hit is not None and hit[0] == op.version:
        return hit[1]
    pairs = frozenset(op.get_attr(FInplaceOption, _no_inplace)(attrs))
    if op.get_attr(TParseEveryCall, False):  # these attrs serve one call
        return pairs
    if len(_inplace_cache) > 4096:
        _inplace_cache.clear()
    _inplace_cache[attrs] = (op.version, pairs)
    return pairs


def num_visible(op: Op, attrs: NodeAttrs, n_out: int) -> int:
    fn = op.get_attr(FNumVisibleOutputs)
    return int(fn(attrs)) if fn is not None else n_out


def visible_outputs(op: Op, attrs: NodeAttrs, outputs: list[NDArray]) -> list[NDArray]:
    return outputs[: num_visible(op, attrs, len(outputs))]


__all__ = ["num_visible", "out_ctx", "outputs_for", "visible_outputs"]
