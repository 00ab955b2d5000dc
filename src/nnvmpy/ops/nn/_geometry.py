"""Window geometry shared by Convolution, Deconvolution and Pooling: output sizes, N-D views.

The 2-D kernels work on 4-D NCHW arrays: a 1-D op (N, C, W) runs as (N, C, 1, W) with a
kernel of height 1 (`as_4d`). The kernels that also serve 3-D ops work on 5-D NCDHW
arrays: 1-D and 2-D ops run with a depth of 1 (`as_5d`), their windows padded with
leading (kernel 1, stride 1, pad 0, dilate 1) dimensions (`to_3d`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...base import InferError, OpReqType
from ...kernel.half import store as store_half
from ...kernel.half import to_float32


def dilated(k: int, d: int) -> int:
    """Extent of a kernel of size k with dilation d: d*(k-1) + 1."""
    return d * (k - 1) + 1


def conv_out_size(x: int, k: int, s: int, p: int, d: int) -> int:
    """(x + 2p - d(k-1) - 1) // s + 1; below 1 when the kernel does not fit."""
    return (x + 2 * p - dilated(k, d)) // s + 1


def pool_out_size(x: int, k: int, s: int, p: int, convention: str) -> int:
    """valid: floor((x + 2p - k)/s) + 1; full: ceil(...) + 1; same: ceil(x / s)."""
    if convention == "same":
        return -(-x // s)
    span = x + 2 * p - k
    if convention == "full":
        return -(-span // s) + 1
    return span // s + 1


def same_pad(x: int, k: int, s: int) -> int:
    """Leading padding of the 'same' convention (TensorFlow's rule: the extra one goes last)."""
    out = -(-x // s)
    return max((out - 1) * s + k - x, 0) // 2


@dataclass(frozen=True)
class Window:
    """A 2-D sliding window over (H, W): kernel, stride, padding, dilation, output size."""

    kh: int
    kw: int
    sh: int
    sw: int
    ph: int
    pw: int
    dh: int
    dw: int
    ho: int
    wo: int

    def args(self) -> tuple[int, ...]:
        """The window as flat kernel arguments: kh, kw, sh, sw, ph, pw, dh, dw, ho, wo."""
        return (
            self.kh,
            self.kw,
            self.sh,
            self.sw,
            self.ph,
            self.pw,
            self.dh,
            self.dw,
            self.ho,
            self.wo,
        )


def op_name(attrs: Any, default: str) -> str:
    """The name of the op whose node `attrs` belong to (`default` for a bare NodeAttrs)."""
    op = getattr(attrs, "op", None)
    return default if op is None else str(op.name)


def to_2d(values: tuple[int, ...], fill: int) -> tuple[int, int]:
    """A 1-D tuple (w,) becomes (fill, w); a 2-D tuple stays."""
    return (fill, values[0]) if len(values) == 1 else (values[0], values[1])


def to_3d(values: tuple[int, ...], fill: int) -> tuple[int, int, int]:
    """(w,) -> (fill, fill, w); (h, w) -> (fill, h, w); (d, h, w) stays."""
    padded = (fill,) * (3 - len(values)) + tuple(values)
    return (padded[0], padded[1], padded[2])


def as_5d(x: Any) -> Any:
    """(N, C, *S) with 1 to 3 spatial axes -> (N, C, D, H, W) view (NumPy or device arrays)."""
    shape = tuple(x.shape)
    if len(shape) == 5:
        return x
    return x.reshape(*shape[:2], *((1,) * (5 - len(shape))), *shape[2:])


def as_4d(x: Any) -> Any:
    """(N, C, W) -> (N, C, 1, W) view; 4-D arrays unchanged (NumPy and numba device arrays)."""
    if len(x.shape) == 3:
        n, c, w = x.shape
        return x.reshape(n, c, 1, w)
    return x


# -- dtypes -----------------------------------------------------------------------------------

_FLOATS = ("float16", "float32", "float64")


def check_float_dtype(op: str, what: str, dtype: Any) -> None:
    """InferError unless dtype is a float the kernels handle: float16, float32, float64 on
    both devices. The GPU kernels read and write float16 and sum in float32 or float64;
    numba has no float16 arithmetic on the CPU, where run_via_float32 computes through
    float32 copies."""
    name = np.dtype(dtype).name
    if name not in _FLOATS:
        raise InferError(
            f"{op}: input {what!r} has dtype {name}, but {op} supports {', '.join(_FLOATS)}"
        )


def run_via_float32(
    run: Callable[[list[Any], list[Any], list[Any]], None],
    inputs: list[Any],
    req: list[Any],
    outputs: list[Any],
) -> None:
    """run(inputs, req, outputs) on CPU arrays; float16 goes through float32 copies.

    numba has no float16 arithmetic on the CPU. Integer outputs (Pooling's argmax mask)
    are passed through as they are.
    """
    half = np.dtype(np.float16)
    if all(a.dtype != half for a in [*inputs, *outputs]):
        run([np.ascontiguousarray(a) for a in inputs], req, outputs)
        return
    ins = [to_float32(a) if a.dtype == half else a for a in inputs]
    outs = [
        (to_float32(o) if r == OpReqType.kAddTo else np.empty(o.shape, np.float32))
        if o.dtype == half
        else o
        for o, r in zip(outputs, req)
    ]
    run(ins, req, outs)
    for o, tmp, r in zip(outputs, outs, req):
        if tmp is not o and r != OpReqType.kNullOp:
            store_half(o, tmp)
