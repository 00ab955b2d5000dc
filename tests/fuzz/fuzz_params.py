"""Corrupted `.params` files: mutations of MXNet's NDArray file format, and what loading
one must do.

Seeds are files nd.save writes (a dict or a list; every dtype; 0-d and zero-size arrays
under np_shape; V1 and V0 records written by hand, as older MXNet did). A mutation
overwrites one header field (count, magic, storage type, ndim, a dim, device, dtype flag,
a name length) with a hostile value, or truncates, flips, inserts or deletes bytes.
Loading must give arrays or an NNVMError, quickly and without a large allocation; arrays
that load must read, compute and save again.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np
from fuzz_common import Chooser, Finding, Health, checked

import nnvmpy as nv
from nnvmpy.ndarray import io as ndio


@dataclass(frozen=True)
class FieldAt:
    """A header field of a seed file: where it is, how wide, what it is."""

    offset: int
    fmt: str  # struct format: "<Q", "<i", "<q", "<I"
    name: str


@dataclass(frozen=True)
class Seed:
    name: str
    data: bytes
    fields: tuple[FieldAt, ...]
    np_shape: bool  # load it inside mx.util.np_shape()


def _record_fields(buf: bytes, pos: int, i: int, np_shape: bool) -> tuple[int, list[FieldAt]]:
    """Walk one record this module's seeds contain (V2/V3, V1 or V0)."""
    out = []
    (magic,) = struct.unpack_from("<I", buf, pos)
    out.append(FieldAt(pos, "<I", f"array {i} magic"))
    pos += 4
    if magic in (ndio.V2_MAGIC, ndio.V3_MAGIC):
        out.append(FieldAt(pos, "<i", f"array {i} storage type"))
        pos += 4
    if magic <= ndio.V0_MAX_NDIM:
        ndim, dim_fmt = magic, "<I"
    else:
        (ndim,) = struct.unpack_from("<i", buf, pos)
        out.append(FieldAt(pos, "<i", f"array {i} ndim"))
        pos += 4
        dim_fmt = "<q"
    dims = []
    for d in range(ndim):
        out.append(FieldAt(pos, dim_fmt, f"array {i} dim {d}"))
        dims.append(struct.unpack_from(dim_fmt, buf, pos)[0])
        pos += struct.calcsize(dim_fmt)
    out.append(FieldAt(pos, "<i", f"array {i} device type"))
    out.append(FieldAt(pos + 4, "<i", f"array {i} device id"))
    out.append(FieldAt(pos + 8, "<i", f"array {i} dtype flag"))
    (flag,) = struct.unpack_from("<i", buf, pos + 8)
    pos += 12 + int(np.prod(dims, dtype=np.int64)) * ndio.DTYPE_FLAGS[flag].itemsize
    return pos, out


def _file_fields(buf: bytes, np_shape: bool) -> tuple[FieldAt, ...]:
    fields = [FieldAt(0, "<Q", "list magic"), FieldAt(16, "<Q", "array count")]
    (n,) = struct.unpack_from("<Q", buf, 16)
    pos = 24
    for i in range(n):
        pos, more = _record_fields(buf, pos, i, np_shape)
        fields += more
    fields.append(FieldAt(pos, "<Q", "name count"))
    (m,) = struct.unpack_from("<Q", buf, pos)
    pos += 8
    for i in range(m):
        fields.append(FieldAt(pos, "<Q", f"name {i} length"))
        (length,) = struct.unpack_from("<Q", buf, pos)
        pos += 8 + length
    return tuple(fields)


def _legacy_file(records: list[bytes]) -> bytes:
    """A list file of hand-written records (V1 or V0, as MXNet before 1.0 wrote them)."""
    body = b"".join(records)
    return struct.pack("<QQQ", ndio.LIST_MAGIC, 0, len(records)) + body + struct.pack("<Q", 0)


def _v1_record(x: np.ndarray) -> bytes:
    head = struct.pack(f"<Ii{x.ndim}q", ndio.V1_MAGIC, x.ndim, *x.shape)
    return head + struct.pack("<iii", 1, 0, ndio.FLAG_OF[x.dtype]) + x.tobytes()


def _v0_record(x: np.ndarray) -> bytes:
    head = struct.pack(f"<I{x.ndim}I", x.ndim, *x.shape)
    return head + struct.pack("<iii", 1, 0, ndio.FLAG_OF[x.dtype]) + x.tobytes()


@cache
def seeds() -> tuple[Seed, ...]:
    rng = np.random.default_rng(0)
    dtypes = list(ndio.DTYPE_FLAGS.values())
    named = {
        f"w_{d.name}": nv.nd.array(rng.uniform(-3, 3, size=(2, 3)).astype(d), dtype=d)
        for d in dtypes
    }
    out = []
    for name, data in (
        ("dict", named),
        ("list", [nv.nd.array(rng.normal(size=(4,))), nv.nd.ones((1, 2, 1, 2), dtype="int64")]),
        ("single", nv.nd.array(np.arange(6).reshape(2, 3))),
    ):
        raw = ndio.dumps(data)
        out.append(Seed(name, raw, _file_fields(raw, False), False))
    with nv.util.np_shape(True):
        raw = ndio.dumps({"scalar": nv.nd.array(np.float32(2)), "empty": nv.nd.zeros((0, 3))})
    out.append(Seed("np_shape", raw, _file_fields(raw, True), True))
    x = rng.uniform(size=(3, 2)).astype(np.float32)
    for name, rec in (("v1", _v1_record(x)), ("v0", _v0_record(x))):
        raw = _legacy_file([rec, rec])
        out.append(Seed(name, raw, _file_fields(raw, False), False))
    return tuple(out)


HOSTILE_INTS = (0, 1, 2, 3, 7, 31, 32, 33, 64, 65, 255, 2**31 - 1, 2**32 - 1, 2**62, 2**63 - 1)


def _overwrite(c: Chooser, seed: Seed) -> tuple[bytes, str]:
    fields = [f for f in seed.fields if f.offset + struct.calcsize(f.fmt) <= len(seed.data)]
    if not fields:
        return seed.data, "no field left to overwrite"
    f = c.choice(fields)
    size = struct.calcsize(f.fmt)
    unsigned = f.fmt[-1] in "QI"
    bits = size * 8
    value = c.choice([*HOSTILE_INTS, -1, -2, -(2**31)])
    value = (
        value % (1 << bits)
        if unsigned
        else ((value + (1 << (bits - 1))) % (1 << bits)) - (1 << (bits - 1))
    )
    data = bytearray(seed.data)
    struct.pack_into(f.fmt, data, f.offset, value)
    return bytes(data), f"{f.name} (byte {f.offset}) = {value}"


def corrupted_params(c: Chooser) -> tuple[Seed, bytes, str]:
    """(seed, corrupted bytes, what was done); one to three mutations."""
    seed = c.choice(seeds())
    data, steps = seed.data, []
    for _ in range(c.integer(1, 3)):
        kind = c.integer(0, 9)
        pos = c.integer(0, len(data))
        if kind <= 4:
            data, what = _overwrite(c, Seed(seed.name, data, seed.fields, seed.np_shape))
        elif kind == 5:
            data, what = data[:pos], f"truncated at {pos}"
        elif kind == 6 and data:
            pos = min(pos, len(data) - 1)
            data = data[:pos] + bytes([data[pos] ^ (1 << c.integer(0, 7))]) + data[pos + 1 :]
            what = f"bit flipped at {pos}"
        elif kind == 7:
            n = c.integer(1, 16)
            data, what = data[:pos] + data[pos + n :], f"deleted {n} bytes at {pos}"
        elif kind == 8:
            junk = bytes(c.integer(0, 255) for _ in range(c.integer(1, 8)))
            data, what = data[:pos] + junk + data[pos:], f"inserted {junk!r} at {pos}"
        else:
            data, what = data + data[24:], "appended a copy of the body"
        steps.append(what)
    return seed, data, "; ".join(steps)


def use_arrays(loaded: object) -> None:
    """What a user does with loaded parameters: read them, compute, save them again."""
    arrays = list(loaded.values()) if isinstance(loaded, dict) else list(loaded)  # type: ignore[call-overload]
    for a in arrays:
        a.asnumpy()
        if a.size and a.dtype.kind == "f":
            (a * 2).asnumpy()
    nv.nd.load_frombuffer(ndio.dumps(loaded))
    nv.nd.waitall()


def check_corrupted_params(c: Chooser, health: Health, tmp_dir: Path) -> list[Finding]:
    """Load one corrupted file through nd.load, nd.load_frombuffer and unpickling."""
    seed, data, what = corrupted_params(c)
    repro = f"seed {seed.name}: {what}"
    path = tmp_dir / "corrupt.params"
    path.write_bytes(data)

    def in_semantics(fn: object) -> object:
        def run() -> None:
            with nv.util.np_shape(seed.np_shape):
                fn()  # type: ignore[operator]

        return run

    found = checked(
        health, "nd.load", in_semantics(lambda: use_arrays(nv.nd.load(str(path)))), repro
    )
    found += checked(
        health,
        "nd.load_frombuffer",
        in_semantics(lambda: use_arrays(nv.nd.load_frombuffer(data))),
        repro,
    )

    def unpickle() -> None:
        record = data[24:]  # the first record and whatever follows it
        arr = nv.nd.NDArray.__new__(nv.nd.NDArray)
        arr.__setstate__({"handle": record})
        use_arrays([arr])

    found += checked(health, "NDArray.__setstate__", unpickle, repro)
    return found


__all__ = ["check_corrupted_params", "corrupted_params", "seeds", "use_arrays"]
