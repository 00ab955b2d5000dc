"""float16 to and from float32 for the CPU's float32 paths (numba has no float16 there).

Every float16 CPU kernel runs on float32 copies: its float16 inputs are converted up and
its float16 outputs rounded back. NumPy converts one element at a time (4M values: 10 ms
down, 7 ms up; a float32 copy takes 0.7), which made `nd.cast` to float16 2x MXNet's time.
Large contiguous arrays take _half_loops' vectorised integer loops instead (across numba's
threads from threads.parallel_size() elements): bit for bit NumPy's results. Small or
strided arrays keep NumPy's conversion, whose call is cheaper.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import threads

_HALF = np.dtype(np.float16)
#: elements from which the numba loops convert (below: NumPy's, a cheaper call)
MIN_SIZE = 1 << 14


def to_float32(a: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """float16 array a's values in float32: in a new array, or in `out` (float32, a's
    shape), which is returned."""
    if a.size < MIN_SIZE or not a.flags.c_contiguous or not (out is None or out.flags.c_contiguous):
        if out is None:
            return a.astype(np.float32)
        np.copyto(out, a)
        return out
    if out is None:
        out = np.empty(a.shape, np.float32)
    elif out.dtype != np.float32 or a.dtype != _HALF or out.shape != a.shape:
        raise ValueError(
            f"to_float32: float16 into float32 of one shape, got {out.dtype}{out.shape}"
        )
    _convert("half_to_float_bits", a.reshape(-1).view(np.uint16), out.reshape(-1).view(np.uint32))
    return out


def store(out: np.ndarray, src: np.ndarray) -> None:
    """out[...] = src rounded to float16 (round to nearest even), out float16 and src
    float32 of one shape."""
    if out.size < MIN_SIZE or not (out.flags.c_contiguous and src.flags.c_contiguous):
        np.copyto(out, src, casting="unsafe")
        return
    if src.dtype != np.float32 or out.dtype != _HALF or src.shape != out.shape:
        raise ValueError(f"store: float32 into float16 of one shape, got {src.dtype}{src.shape}")
    _convert("float_to_half_bits", src.reshape(-1).view(np.uint32), out.reshape(-1).view(np.uint16))


def _convert(name: str, src: Any, dst: Any) -> None:
    from nnvmpy.kernel import _half_loops  # imports numba

    if src.size >= threads.parallel_size() and not threads.openmp_forked():
        with threads.region() as width:
            if width > 1:
                getattr(_half_loops, name)(src, dst)
                return
    getattr(_half_loops, f"{name}_serial")(src, dst)
