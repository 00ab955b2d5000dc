"""NumPy's own inner loops, run by a numba kernel: one call per block, across threads,
with the results streamed to memory.

NumPy's float32/float64 loops for pow, exp, sin, ... are SVML-class (np.power float32:
0.43 ns per element in cache, one thread), and a ufunc releases the GIL, but a ufunc
call over a large array has two costs of its own here:

- Its stores go through the caches. Each output line is first read from memory (read
  for ownership) and later written back: at 10M float32 on two threads np.power's loop
  ran 2.87 ms with its output in memory and 2.02 ms with it in L1. Here the loop writes
  each block of 2 KiB into an L1 scratch block, and the block goes to memory with
  streaming stores (_ufunc_parts.stream_line): 2.07 ms. Float64 exp at 10M: 4.6 -> 2.9.
- Splitting it across the ufunc pool's Python threads costs 40-50 us per call, a prange
  ~2.5 us (_numpy_fast.float32_parts): nd.exp of 600K float32, 0.245 -> 0.133 ms.

The loop is the function pointer NumPy's ufunc object holds for the dtypes
(PyUFuncObject's `functions`, `data` and `types`, public fields of NumPy's C API). It
is read with ctypes, checked against the ufunc's Python attributes, and used only after
a probe run of it gives the ufunc's own bits on typical and special values; anything
else (another NumPy layout, a loop only NumPy's new API holds) leaves `find` None and
the caller on the ufunc. Importing this module imports neither numba nor the kernel.
"""

from __future__ import annotations

import ctypes
import threading
from dataclasses import dataclass
from typing import Any

import numpy as np

#: outputs from this many bytes on go to memory with streaming stores: an output that
#: cannot stay in the caches anyway (32 MiB L3 here) is not read into them first
STREAM_BYTES = 16 << 20
#: copies of a scalar argument the loop steps through (the most items of one call)
SCALAR_ITEMS = 4096


@dataclass(frozen=True)
class InnerLoop:
    """A ufunc's inner loop for one dtype signature: loop(args, dims, steps, data)."""

    ufunc_name: str
    dtypes: tuple[np.dtype, ...]  # inputs, then the output
    address: int
    data: int


_LOOP = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)
_found: dict[tuple[Any, ...], InnerLoop | None] = {}
_lock = threading.Lock()


class _UFuncFields(ctypes.Structure):
    """The start of NumPy's PyUFuncObject (numpy/ufuncobject.h), after PyObject_HEAD."""

    _fields_ = [
        ("nin", ctypes.c_int),
        ("nout", ctypes.c_int),
        ("nargs", ctypes.c_int),
        ("identity", ctypes.c_int),
        ("functions", ctypes.POINTER(ctypes.c_void_p)),
        ("data", ctypes.POINTER(ctypes.c_void_p)),
        ("ntypes", ctypes.c_int),
        ("reserved1", ctypes.c_int),
        ("name", ctypes.c_char_p),
        ("types", ctypes.POINTER(ctypes.c_char)),
    ]


_HEAD = object.__basicsize__  # PyObject_HEAD: refcount and type


def find(ufunc: Any, dtypes: tuple[np.dtype, ...]) -> InnerLoop | None:
    """The checked inner loop of `ufunc` for `dtypes` (inputs, then the one output), or
    None: not a float ufunc loop of NumPy's own that this module can call."""
    key = (ufunc, dtypes)
    if key in _found:
        return _found[key]
    with _lock:
        if key not in _found:
            loop = _read(ufunc, dtypes)
            _found[key] = loop if loop is not None and _probe_agrees(ufunc, loop) else None
    return _found[key]


def _read(ufunc: Any, dtypes: tuple[np.dtype, ...]) -> InnerLoop | None:
    if type(ufunc) is not np.ufunc or ufunc.nout != 1 or len(dtypes) != ufunc.nargs:
        return None
    if any(d.kind != "f" or d.byteorder not in "=|" for d in dtypes):
        return None
    fields = _UFuncFields.from_address(id(ufunc) + _HEAD)
    layout = (fields.nin, fields.nout, fields.nargs, fields.ntypes)
    if layout != (ufunc.nin, ufunc.nout, ufunc.nargs, ufunc.ntypes) or not fields.functions:
        return None
    if fields.name != ufunc.__name__.encode():
        return None
    nums = bytes(d.num for d in dtypes)
    types = ctypes.string_at(fields.types, fields.ntypes * fields.nargs)
    for i in range(fields.ntypes):
        if types[i * fields.nargs : (i + 1) * fields.nargs] == nums:
            address = fields.functions[i]
            if not address:
                return None
            return InnerLoop(ufunc.__name__, dtypes, address, fields.data[i] or 0)
    return None


def call(loop: InnerLoop, inputs: list[np.ndarray], out: np.ndarray) -> None:
    """loop over flat contiguous arrays from Python (ctypes): the probe's way in."""
    arrays = [*inputs, out]
    args = (ctypes.c_void_p * len(arrays))(*(a.ctypes.data for a in arrays))
    dims = (ctypes.c_ssize_t * 1)(out.size)
    steps = (ctypes.c_ssize_t * len(arrays))(*(a.strides[0] if a.size > 1 else 0 for a in arrays))
    _LOOP(loop.address)(args, dims, steps, loop.data or None)


def _probe_values(dtype: np.dtype, n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    info = np.finfo(dtype)
    special = [0.0, -0.0, 1.0, -1.0, 0.5, 2.0, -2.5, np.inf, -np.inf, np.nan, info.tiny]
    special += [info.max, -info.max, info.smallest_subnormal, 1e-3, 30.0, -30.0, 100.0]
    values = np.concatenate([special, rng.uniform(-4, 4, n), rng.standard_normal(n) * 50])
    return rng.permutation(values).astype(dtype)


def _probe_agrees(ufunc: Any, loop: InnerLoop) -> bool:
    """Whether the loop gives the ufunc's own bits (NaN payloads included) on a probe."""
    inputs = [_probe_values(d, 300, seed) for seed, d in enumerate(loop.dtypes[:-1])]
    want = np.empty(inputs[0].size, loop.dtypes[-1])
    got = np.full_like(want, 7)
    with np.errstate(all="ignore"):
        ufunc(*inputs, out=want)
        call(loop, inputs, got)
    return bool(np.array_equal(want.view(f"u{want.itemsize}"), got.view(f"u{got.itemsize}")))


def run(
    loop: InnerLoop, inputs: list[Any], out: np.ndarray, parts: int, stream: bool | None = None
) -> None:
    """out = the loop over inputs (arrays of out's shape, or scalars broadcast to it), all
    C-contiguous, in `parts` contiguous parts across numba's threads (a prange; 1: this
    thread alone). stream: whether the output goes to memory by streaming stores
    (default: from STREAM_BYTES on, where out is aligned).

    A scalar is passed as a block of SCALAR_ITEMS copies, not as one value with step 0:
    NumPy's SIMD loops run on contiguous arguments only (10M float32 x ** 1.3 on two
    threads: 4.6 ms with step 0, 2.25 with a block)."""
    from nnvmpy.kernel import _ufunc_parts

    o = out.reshape(-1)
    arrays = [isinstance(a, np.ndarray) and a.shape == out.shape for a in inputs]
    flat = [
        np.ascontiguousarray(a, dtype).reshape(-1) if array else np.full(SCALAR_ITEMS, a, dtype)
        for a, dtype, array in zip(inputs, loop.dtypes, arrays)
    ]
    if stream is None:
        stream = out.nbytes >= STREAM_BYTES
    stream = stream and out.flags.aligned
    arguments = (*flat, o)
    bases = np.array([a.ctypes.data for a in arguments], np.intp)
    steps = np.array([a.itemsize for a in arguments], np.intp)
    advance = np.where([*arrays, True], steps, 0)
    chunk = max(1, o.size) if all(arrays) else SCALAR_ITEMS
    _ufunc_parts.ufunc_parts(
        loop.address,
        loop.data,
        bases,
        advance,
        steps,
        o.view(np.uint8),
        o.size,
        parts,
        stream,
        chunk,
    )
