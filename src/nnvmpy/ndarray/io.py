"""nd.save / nd.load / nd.load_frombuffer and pickling, in MXNet's binary NDArray format.

The layout MXNet 1.9.1 writes (and this module writes, so MXNet reads our files), every
integer little-endian:

    file    := u64 0x112 (list magic) | u64 0 (reserved)
               | u64 n | n x array
               | u64 m | m x (u64 length | utf-8 name bytes)      m is 0 (a list) or n
    array   := u32 magic | i32 storage type (0: dense)
               | i32 ndim | ndim x i64 dim
               | i32 device type | i32 device id                  1 cpu, 2 gpu, 3 cpu_pinned
               | i32 dtype flag                                   see DTYPE_FLAGS
               | the elements, C order

    magic 0xF993FAC9 (V2) is written normally; 0xF993FACA (V3) under mx.util.np_shape(),
    where a 0-d shape and zero-size dims are real shapes. A file is loaded only in the
    semantics it was saved in (MXNet's rule), except through pickle.

Older files also load: 0xF993FAC8 (V1, no storage type) and V0, whose first word is
ndim followed by u32 dims (the shared legacy_ndarray.v0 is one). A pickled NDArray is
{'handle': one array record}, MXNet's MXNDArraySaveRawBytes format, so pickles move
between MXNet and nnvmpy.

Reading checks every count and size against the bytes left before allocating, so a
truncated or corrupt file raises NNVMError naming the file, the array and the field,
never a huge allocation. No pickle is involved in nd.load.
"""

from __future__ import annotations

import math
import os
import struct
import sys
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..base import Context, NNVMError, cpu, cpu_pinned, gpu, num_gpus
from .ndarray import NDArray, array

LIST_MAGIC = 0x112
MAX_NDIM = 32  # NumPy's and MXNet's limit; a record claiming more is corrupt
V0_MAX_NDIM = MAX_NDIM  # a V0 record's first word is its ndim; anything larger is corrupt
V1_MAGIC = 0xF993FAC8
V2_MAGIC = 0xF993FAC9
V3_MAGIC = 0xF993FACA

DTYPE_FLAGS: dict[int, np.dtype] = {
    0: np.dtype(np.float32),
    1: np.dtype(np.float64),
    2: np.dtype(np.float16),
    3: np.dtype(np.uint8),
    4: np.dtype(np.int32),
    5: np.dtype(np.int8),
    6: np.dtype(np.int64),
    7: np.dtype(np.bool_),
    8: np.dtype(np.int16),
    9: np.dtype(np.uint16),
    10: np.dtype(np.uint32),
    11: np.dtype(np.uint64),
}
FLAG_OF = {dt: flag for flag, dt in DTYPE_FLAGS.items()}
DEVICE_TYPES = {"cpu": 1, "gpu": 2, "cpu_pinned": 3, "cpu_shared": 5}


class FormatError(NNVMError):
    """A truncated or corrupt NDArray file or buffer."""


def _np_shape() -> bool:
    from nnvmpy import util

    return util.is_np_shape()


# -- writing ----------------------------------------------------------------------------------


def _record(arr: NDArray, what: str, np_shape: bool) -> bytes:
    """One array in MXNet's format (V3 under np_shape, else V2)."""
    if not isinstance(arr, NDArray):
        raise NNVMError(f"{what} must be an NDArray, got {type(arr).__name__}")
    flag = FLAG_OF.get(arr.dtype)
    if flag is None:
        raise NNVMError(f"{what} has dtype {arr.dtype}, which MXNet's format cannot store")
    if not arr.shape and not np_shape:
        raise NNVMError(
            f"{what} is 0-d (shape ()); MXNet's format stores 0-d arrays only in NumPy shape "
            "semantics: save inside `with mx.util.np_shape():` or reshape it to (1,)"
        )
    values = np.ascontiguousarray(arr.asnumpy())
    ctx = arr.context
    head = struct.pack(
        f"<Iii{len(arr.shape)}q", V3_MAGIC if np_shape else V2_MAGIC, 0, len(arr.shape),
        *arr.shape,
    )  # fmt: skip
    dev = struct.pack("<iii", DEVICE_TYPES.get(ctx.device_type, 1), ctx.device_id, flag)
    return head + dev + values.tobytes()


def to_raw_bytes(arr: NDArray) -> bytes:
    """One array's record (a 0-d array is written in V3, the only form that holds it)."""
    return _record(arr, "NDArray", _np_shape() or not arr.shape)


def _named(data: Any) -> tuple[list[NDArray], list[str]]:
    if isinstance(data, NDArray):
        return [data], []
    if isinstance(data, Mapping):
        for k in data:
            if not isinstance(k, str):
                raise NNVMError(f"nd.save: dict keys must be str, got {type(k).__name__} {k!r}")
        return list(data.values()), list(data.keys())
    if isinstance(data, Sequence) and not isinstance(data, str | bytes):
        return list(data), []
    raise NNVMError(
        "nd.save: data must be an NDArray, a list of NDArrays or a dict of str to NDArray, "
        f"got {type(data).__name__}"
    )


def dumps(data: Any) -> bytes:
    """The bytes nd.save writes for `data`."""
    arrays, names = _named(data)
    np_shape = _np_shape()
    parts = [struct.pack("<QQQ", LIST_MAGIC, 0, len(arrays))]
    for i, a in enumerate(arrays):
        label = f"nd.save: array {names[i]!r}" if names else f"nd.save: array {i}"
        parts.append(_record(a, label, np_shape))
    parts.append(struct.pack("<Q", len(names)))
    for n in names:
        raw = n.encode("utf-8")
        parts.append(struct.pack("<Q", len(raw)) + raw)
    return b"".join(parts)


def _path(fname: Any, what: str) -> str:
    """A file name; an int would be taken by open() as a file descriptor."""
    if not isinstance(fname, str | os.PathLike):
        raise NNVMError(f"{what}: fname must be a path (str), got {type(fname).__name__}")
    return os.fspath(fname)


def save(fname: str | os.PathLike[str], data: Any) -> None:
    """Save an NDArray, a list of NDArrays or a dict of str to NDArray to `fname`.

    Load it with nd.load (or MXNet's mx.nd.load); a single array loads as a list of one.
    """
    fname = _path(fname, "nd.save")
    payload = dumps(data)
    try:
        with open(fname, "wb") as f:
            f.write(payload)
    except OSError as e:
        raise NNVMError(f"nd.save: cannot write {os.fspath(fname)!r}: {e}") from None


# -- reading ----------------------------------------------------------------------------------


class _Reader:
    """Bounds-checked little-endian reads from a buffer; errors name the source and field."""

    def __init__(self, buf: bytes, source: str) -> None:
        self.buf = memoryview(buf)
        self.pos = 0
        self.source = source

    def left(self) -> int:
        return len(self.buf) - self.pos

    def fail(self, what: str, why: str) -> FormatError:
        return FormatError(f"{self.source}: {what}: {why} (at byte {self.pos} of {len(self.buf)})")

    def take(self, n: int, what: str) -> memoryview:
        if n < 0 or n > self.left():
            raise self.fail(what, f"needs {n} bytes but only {self.left()} are left (truncated?)")
        out = self.buf[self.pos : self.pos + n]
        self.pos += n
        return out

    def unpack(self, fmt: str, what: str) -> tuple[Any, ...]:
        return struct.unpack("<" + fmt, self.take(struct.calcsize("<" + fmt), what))


def _load_context(dev_type: int, dev_id: int) -> Context:
    """The device an array saved on (dev_type, dev_id) loads to: a GPU only if present."""
    if dev_type == 2 and 0 <= dev_id < num_gpus():
        return gpu(dev_id)
    if dev_type == 3:
        return cpu_pinned(0)
    return cpu(0)


def _read_array(r: _Reader, what: str, np_shape: bool | None) -> NDArray:
    """One record; np_shape None accepts V2 and V3 (pickles), else MXNet's rule applies."""
    (magic,) = r.unpack("I", f"{what} magic")
    if magic in (V2_MAGIC, V3_MAGIC):
        if np_shape is not None and (magic == V3_MAGIC) != np_shape:
            raise r.fail(
                what,
                "saved in NumPy shape semantics, so it loads only inside `with mx.util.np_shape():`"
                if magic == V3_MAGIC
                else "saved outside NumPy shape semantics; load it outside "
                "mx.util.np_shape() (`with np_shape(False):`)",
            )
        (stype,) = r.unpack("i", f"{what} storage type")
        if stype != 0:
            raise r.fail(what, f"storage type {stype} is sparse; only dense (0) is supported")
        shape = _read_shape(r, what, "q", allow_0d=magic == V3_MAGIC)
    elif magic == V1_MAGIC:
        shape = _read_shape(r, what, "q", allow_0d=False)
    elif magic <= V0_MAX_NDIM:  # V0: the magic word is ndim, dims are u32
        shape = _read_dims(r, what, magic, "I")
        if not shape:
            raise r.fail(what, "holds an empty (none) array")
    else:
        raise r.fail(what, f"unknown array magic 0x{magic:08X}")
    dev_type, dev_id, flag = r.unpack("iii", f"{what} device and dtype")
    dtype = DTYPE_FLAGS.get(flag)
    if dtype is None:
        raise r.fail(what, f"dtype flag {flag} is not one of {sorted(DTYPE_FLAGS)}")
    if math.prod(d for d in shape if d) * dtype.itemsize > sys.maxsize:  # NumPy's limit
        raise r.fail(what, f"shape {shape} of {dtype} is larger than any array can be")
    nbytes = math.prod(shape) * dtype.itemsize
    raw = r.take(nbytes, f"{what} data ({shape} of {dtype})")
    values = np.frombuffer(raw, dtype=dtype).reshape(shape)
    if dtype == np.bool_:  # any byte but 0 or 1 would be a bool NumPy does not expect
        values = values.view(np.uint8) != 0
    return array(values, _load_context(dev_type, dev_id), dtype=dtype)


def _read_shape(r: _Reader, what: str, fmt: str, allow_0d: bool) -> tuple[int, ...]:
    (ndim,) = r.unpack("i", f"{what} ndim")
    if ndim == -1 or (ndim == 0 and not allow_0d):
        raise r.fail(what, "holds an array of unknown shape (a none array)")
    if not 0 <= ndim <= MAX_NDIM:
        raise r.fail(what, f"ndim {ndim} is not in [0, {MAX_NDIM}]")
    return _read_dims(r, what, ndim, fmt)


def _read_dims(r: _Reader, what: str, ndim: int, fmt: str) -> tuple[int, ...]:
    dims = r.unpack(f"{ndim}{fmt}", f"{what} shape")
    if any(d < 0 for d in dims):
        raise r.fail(what, f"shape {dims} has a negative dim")
    return tuple(int(d) for d in dims)


def loads(buf: bytes, source: str = "nd.load_frombuffer") -> list[NDArray] | dict[str, NDArray]:
    """Arrays from the bytes of an NDArray file: a list, or a dict when they have names."""
    if not isinstance(buf, bytes | bytearray | memoryview):
        raise NNVMError(f"{source}: expected bytes, got {type(buf).__name__}")
    r = _Reader(bytes(buf), source)
    header, _reserved = r.unpack("QQ", "header")
    if header != LIST_MAGIC:
        raise r.fail("header", f"0x{header:X} is not an NDArray file (expected 0x{LIST_MAGIC:X})")
    (n,) = r.unpack("Q", "array count")
    if n * 16 > r.left():  # every record has at least 16 bytes
        raise r.fail("array count", f"{n} arrays cannot fit in {r.left()} bytes")
    np_shape = _np_shape()
    arrays = [_read_array(r, f"array {i}", np_shape) for i in range(n)]
    (m,) = r.unpack("Q", "name count")
    if m not in (0, n):
        raise r.fail("name count", f"{m} names for {n} arrays (expected 0 or {n})")
    names = []
    for i in range(m):
        (length,) = r.unpack("Q", f"name {i} length")
        raw = r.take(length, f"name {i}")
        try:
            names.append(bytes(raw).decode("utf-8"))
        except UnicodeDecodeError:
            raise r.fail(f"name {i}", "is not valid UTF-8") from None
    return dict(zip(names, arrays)) if names else arrays


def load(fname: str | os.PathLike[str]) -> list[NDArray] | dict[str, NDArray]:
    """Arrays saved by nd.save (or MXNet): a list, or a dict of name to array."""
    fname = _path(fname, "nd.load")
    try:
        with open(fname, "rb") as f:
            buf = f.read()
    except OSError as e:
        raise NNVMError(f"nd.load: cannot read {os.fspath(fname)!r}: {e}") from None
    return loads(buf, f"nd.load({os.fspath(fname)!r})")


def load_frombuffer(buf: bytes) -> list[NDArray] | dict[str, NDArray]:
    """Arrays from the bytes of an NDArray file (what nd.load reads from disk)."""
    return loads(buf, "nd.load_frombuffer")


def from_raw_bytes(buf: bytes, source: str) -> NDArray:
    """The array of one record (MXNDArrayLoadFromRawBytes), V0 to V3."""
    r = _Reader(buf, source)
    return _read_array(r, "array", None)


def state_bytes(state: Any, source: str) -> bytes:
    """The record in a pickled state {'handle': bytes}; refuses anything else (bytes(10**12)
    would allocate a terabyte)."""
    handle = state.get("handle") if isinstance(state, dict) else None
    if handle is None:
        raise NNVMError(f"{source}: the state holds no array ('handle' is None)")
    if not isinstance(handle, bytes | bytearray | memoryview):
        raise NNVMError(
            f"{source}: state['handle'] should be the array's bytes, got {type(handle).__name__}"
        )
    return bytes(handle)


def from_state(state: dict[str, Any]) -> NDArray:
    """Unpickle: the array in state['handle']."""
    return from_raw_bytes(state_bytes(state, "NDArray unpickling"), "NDArray unpickling")


__all__ = ["dumps", "load", "load_frombuffer", "loads", "save"]
