"""nv.recordio: MXNet's RecordIO files (``.rec`` + ``.idx``) in pure Python.

The format is dmlc-core's, so files written here are byte-identical to MXNet's for the
same records and MXNet's files read back. Every record on disk is one or more parts:

    uint32 magic 0xced7230a | uint32 lrecord = (cflag << 29) | length | payload | pad to 4

all little-endian. A payload that contains the magic word at a 4-byte aligned offset is
cut there, so a reader that lost its place can resynchronise on the magic: the word is
dropped and the pieces are written as parts with cflag 1 (first), 2 (middle) and 3
(last); a record without one is a single part with cflag 0. A record must be shorter
than 2^29 bytes (the length field has 29 bits). The index file has one ``key<TAB>offset``
line per record, the offset of its first part in the ``.rec`` file.

``pack`` / ``unpack`` add MXNet's image-record header (IRHeader: struct ``IfQQ``, flag,
label, id, id2); when ``flag > 0`` the label is that many float32 values after it.

    with nv.recordio.MXIndexedRecordIO("data.idx", "data.rec", "w") as rec:
        rec.write_idx(0, nv.recordio.pack(nv.recordio.IRHeader(0, 3.0, 0, 0), b"..."))
    header, payload = nv.recordio.unpack(
        nv.recordio.MXIndexedRecordIO("data.idx", "data.rec", "r").read_idx(0))

Differences from MXNet: errors are ``NNVMError`` subclasses naming what was expected (MXNet
raises AssertionError / RuntimeError / its C++ check messages); pickling a reader leaves
it open (MXNet closes the original); a writer cannot be pickled (MXNet's unpickled writer
reopens the file and truncates it); ``write`` also takes bytearray and memoryview.
"""

from __future__ import annotations

import numbers
import os
import struct
from collections import namedtuple
from typing import IO, Any

import numpy as np

from .base import NNVMError, ParamError

_MAGIC = 0xCED7230A
_MAGIC_BYTES = struct.pack("<I", _MAGIC)
_PART_HEADER = struct.Struct("<II")
_LENGTH_BITS = 29
_LENGTH_MASK = (1 << _LENGTH_BITS) - 1
#: records must be shorter than this (dmlc's RecordIOWriter refuses 2^29 bytes and more)
MAX_RECORD_BYTES = 1 << _LENGTH_BITS

_IR_FORMAT = "<IfQQ"  # MXNet writes struct 'IfQQ' natively: little-endian, no padding
_IR_SIZE = struct.calcsize(_IR_FORMAT)

# MXNet names the tuple type HEADER, so headers print as HEADER(flag=0, label=...)
IRHeader = namedtuple("HEADER", ["flag", "label", "id", "id2"])  # type: ignore[name-match]
IRHeader.__doc__ = """MXNet's image-record header.

flag: 0 when ``label`` is one number, else the number of float32 labels that follow the
header. label: a number, or (when packing) a 1-D array of labels. id, id2: uint64 ids."""


class RecordIOError(NNVMError):
    """A ``.rec`` or ``.idx`` file that is not valid RecordIO, or one that cannot be opened."""


class RecordKeyError(NNVMError, KeyError):
    """A key that the index of an MXIndexedRecordIO does not hold (a KeyError, as MXNet's)."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


def _aligned(n: int) -> int:
    return (n + 3) & ~3


def encode_record(buf: bytes) -> bytes:
    """The bytes one record takes in a ``.rec`` file (its parts, padded to 4 bytes)."""
    n = len(buf)
    if n >= MAX_RECORD_BYTES:
        raise NNVMError(f"recordio: a record must be shorter than 2^29 bytes, got {n}")
    cuts = []  # offsets of the magic word at 4-byte aligned positions
    at = buf.find(_MAGIC_BYTES)
    while at >= 0:
        if at % 4 == 0:
            cuts.append(at)
            at = buf.find(_MAGIC_BYTES, at + 4)
        else:
            at = buf.find(_MAGIC_BYTES, at + 1)
    out = []
    start = 0
    for cut in cuts:
        cflag = 1 if start == 0 else 2
        out += [_PART_HEADER.pack(_MAGIC, (cflag << _LENGTH_BITS) | (cut - start)), buf[start:cut]]
        start = cut + 4
    cflag = 3 if cuts else 0
    out += [_PART_HEADER.pack(_MAGIC, (cflag << _LENGTH_BITS) | (n - start)), buf[start:]]
    out.append(b"\0" * (_aligned(n) - n))
    return b"".join(out)


def _payload(buf: Any) -> bytes:
    if isinstance(buf, bytes):
        return buf
    if isinstance(buf, (bytearray, memoryview)):
        return bytes(buf)
    raise NNVMError(
        f"recordio: a record must be bytes (or bytearray/memoryview), got "
        f"{type(buf).__name__}; encode text first, e.g. s.encode('utf-8')"
    )


def _read_record(f: IO[bytes], uri: str) -> bytes | None:
    """The next record of ``f`` with its parts joined, or None at the end of the file."""
    pieces: list[bytes] = []
    while True:
        offset = f.tell()
        head = f.read(_PART_HEADER.size)
        if not head and not pieces:
            return None
        if len(head) < _PART_HEADER.size:
            raise RecordIOError(
                f"recordio: {uri!r} ends inside a record at byte {offset}: expected an 8-byte "
                f"part header (magic, length), found {len(head)} bytes"
            )
        magic, lrecord = _PART_HEADER.unpack(head)
        if magic != _MAGIC:
            raise RecordIOError(
                f"recordio: {uri!r} is not a valid RecordIO file: expected the magic word "
                f"0x{_MAGIC:08x} at byte {offset}, found 0x{magic:08x}"
            )
        cflag, length = lrecord >> _LENGTH_BITS, lrecord & _LENGTH_MASK
        if (cflag in (0, 1)) == bool(pieces) or cflag > 3:
            expected = "2 or 3 (rest of a split record)" if pieces else "0 or 1 (a record start)"
            raise RecordIOError(
                f"recordio: {uri!r} has a part with cflag {cflag} at byte {offset}, "
                f"expected {expected}"
            )
        body = f.read(_aligned(length))
        if len(body) < _aligned(length):
            raise RecordIOError(
                f"recordio: {uri!r} ends inside a record at byte {offset}: expected "
                f"{_aligned(length)} bytes of payload, found {len(body)}"
            )
        pieces.append(body[:length])
        if cflag in (0, 3):
            return _MAGIC_BYTES.join(pieces)


class MXRecordIO:
    """Sequential reader (``flag='r'``) or writer (``flag='w'``) of a ``.rec`` file.

    ``read()`` returns the next record as bytes, None at the end of the file; ``write(buf)``
    appends one. A reader may be pickled (the copy reopens the file at its start, as
    MXNet's does, for data-loader workers); using one after a fork must go through
    ``reset()`` (or ``MXIndexedRecordIO.seek``) so the processes do not share a file offset.
    """

    def __init__(self, uri: str | os.PathLike[str], flag: str) -> None:
        self.uri = os.fspath(uri)
        self.flag = flag
        self.is_open = False
        self.pid: int | None = None  # the process that opened the file
        self._file: IO[bytes] | None = None
        self.open()

    @property
    def writable(self) -> bool:
        return self.flag == "w"

    def open(self) -> None:
        """Opens the file: for writing it is created (or truncated), for reading rewound."""
        if self.flag not in ("r", "w"):
            raise ParamError(
                f"MXRecordIO: flag must be 'r' (read) or 'w' (write), got {self.flag!r}"
            )
        self.close()
        try:
            self._file = open(self.uri, "wb" if self.writable else "rb")  # noqa: SIM115
        except OSError as e:
            verb = "writing" if self.writable else "reading"
            raise RecordIOError(
                f"MXRecordIO: cannot open {self.uri!r} for {verb}: {e.strerror}"
            ) from e
        self.is_open = True
        self.pid = os.getpid()

    def close(self) -> None:
        """Closes the file (written records are flushed); closing twice is harmless."""
        if getattr(self, "_file", None) is not None:
            self._file.close()  # type: ignore[union-attr]
        self._file = None
        self.is_open = False
        self.pid = None

    def reset(self) -> None:
        """Back to the first record (a writer starts the file again, empty)."""
        self.close()
        self.open()

    def __del__(self) -> None:
        self.close()

    def __enter__(self) -> MXRecordIO:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __getstate__(self) -> dict[str, Any]:
        if self.writable:
            raise NNVMError(
                f"MXRecordIO: a writer cannot be pickled ({self.uri!r}); its copy would "
                "truncate the file on reopening. Pickle a reader ('r')"
            )
        state = {k: v for k, v in self.__dict__.items() if k not in ("_file", "pid")}
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._file = None
        self.pid = None
        if state.get("is_open"):
            self.is_open = False
            self.open()

    def _handle(self, action: str, writing: bool) -> IO[bytes]:
        if writing != self.writable:
            need = "'w' (a writer)" if writing else "'r' (a reader)"
            raise NNVMError(
                f"MXRecordIO: {action} needs a file opened with flag {need}, "
                f"{self.uri!r} has {self.flag!r}"
            )
        if self._file is None:
            raise NNVMError(
                f"MXRecordIO: {action} on {self.uri!r}, which is closed; call open() first"
            )
        if self.pid != os.getpid():
            raise NNVMError(
                f"MXRecordIO: {action} on {self.uri!r} in a forked process shares the parent's "
                "file offset; call reset() (or seek(key) of MXIndexedRecordIO) in this process "
                "first"
            )
        return self._file

    def write(self, buf: bytes) -> None:
        """Appends ``buf`` (bytes) as one record."""
        self._handle("write", True).write(encode_record(_payload(buf)))

    def read(self) -> bytes | None:
        """The next record, or None after the last one."""
        return _read_record(self._handle("read", False), self.uri)


class MXIndexedRecordIO(MXRecordIO):
    """A ``.rec`` file with its ``.idx`` index, for reading records by key.

    ``write_idx(key, buf)`` appends a record and its ``key<TAB>offset`` index line;
    ``read_idx(key)`` reads one back. ``keys`` lists the keys in file order and ``idx``
    maps each to its byte offset. Keys go through ``key_type`` when written and read.
    """

    def __init__(
        self,
        idx_path: str | os.PathLike[str],
        uri: str | os.PathLike[str],
        flag: str,
        key_type: type = int,
    ) -> None:
        self.idx_path = os.fspath(idx_path)
        self.key_type = key_type
        self.idx: dict[Any, int] = {}
        self.keys: list[Any] = []
        self.fidx: IO[str] | None = None
        super().__init__(uri, flag)

    def open(self) -> None:
        super().open()
        self.idx, self.keys = {}, []
        try:
            self.fidx = open(self.idx_path, self.flag, encoding="utf-8")  # noqa: SIM115
        except OSError as e:
            super().close()
            verb = "writing" if self.writable else "reading"
            raise RecordIOError(
                f"MXIndexedRecordIO: cannot open index {self.idx_path!r} for {verb}: {e.strerror}"
            ) from e
        if not self.writable:
            self._load_index(self.fidx)

    def _load_index(self, fidx: IO[str]) -> None:
        for number, line in enumerate(fidx, 1):
            if not line.strip():
                continue
            fields = line.strip().split("\t")
            try:
                if len(fields) != 2:
                    raise ValueError
                key, offset = self.key_type(fields[0]), int(fields[1])
            except ValueError:
                raise RecordIOError(
                    f"MXIndexedRecordIO: line {number} of {self.idx_path!r} is {line.rstrip()!r}, "
                    f"expected '<key>\\t<byte offset>' with a {self.key_type.__name__} key"
                ) from None
            self.idx[key] = offset
            self.keys.append(key)

    def close(self) -> None:
        """Closes the record file and the index."""
        super().close()
        if getattr(self, "fidx", None) is not None:
            self.fidx.close()  # type: ignore[union-attr]
        self.fidx = None

    def __getstate__(self) -> dict[str, Any]:
        state = super().__getstate__()
        state.pop("fidx", None)
        return state

    def seek(self, idx: Any) -> None:
        """Puts the read position at the record with key ``idx`` (reopening in a forked process)."""
        if self.writable:
            raise NNVMError(
                f"MXIndexedRecordIO: seek needs a reader (flag 'r'), "
                f"{self.uri!r} is open for writing"
            )
        if self.pid != os.getpid() and self.is_open:
            self.reset()
        try:
            offset = self.idx[idx]
        except (KeyError, TypeError):
            sample = ", ".join(repr(k) for k in self.keys[:3]) + (
                ", ..." if len(self.keys) > 3 else ""
            )
            raise RecordKeyError(
                f"MXIndexedRecordIO: no record with key {idx!r} in {self.idx_path!r} "
                f"(keys are {self.key_type.__name__}: {sample or 'none'})"
            ) from None
        self._handle("seek", False).seek(offset)

    def tell(self) -> int:
        """The byte offset the next written record will start at."""
        return self._handle("tell", True).tell()

    def read_idx(self, idx: Any) -> bytes | None:
        """The record with key ``idx``."""
        self.seek(idx)
        return self.read()

    def write_idx(self, idx: Any, buf: bytes) -> None:
        """Appends ``buf`` as the record with key ``key_type(idx)``."""
        key = self.key_type(idx)
        offset = self.tell()
        self.write(buf)
        assert self.fidx is not None
        self.fidx.write(f"{key}\t{offset}\n")
        self.idx[key] = offset
        self.keys.append(key)


def _header(header: Any) -> IRHeader:
    try:
        return IRHeader(*header)
    except TypeError:
        raise NNVMError(
            "recordio: header must be an IRHeader or a (flag, label, id, id2) tuple, "
            f"got {header!r}"
        ) from None


def pack(header: Any, s: bytes) -> bytes:
    """``s`` prefixed with the IRHeader ``header`` (and its labels when ``label`` is an array).

    A numeric label is stored in the header (flag 0); an array label is stored as float32
    after it, with flag set to its size, whatever flag was given.
    """
    header = _header(header)
    s = _payload(s)
    if isinstance(header.label, numbers.Number):
        header = header._replace(flag=0)
    else:
        label = np.asarray(header.label, dtype=np.float32)
        header = header._replace(flag=label.size, label=0)
        s = label.tobytes() + s
    try:
        return struct.pack(_IR_FORMAT, *header) + s
    except struct.error as e:
        raise NNVMError(
            f"recordio.pack: header {tuple(header)} does not fit struct 'IfQQ' "
            f"(flag uint32, label float32, id and id2 uint64): {e}"
        ) from None


def unpack(s: bytes) -> tuple[IRHeader, bytes]:
    """The IRHeader at the start of ``s`` (labels as a float32 array when flag > 0) and the rest."""
    s = _payload(s)
    if len(s) < _IR_SIZE:
        raise NNVMError(
            f"recordio.unpack: expected at least {_IR_SIZE} bytes (an IRHeader), got {len(s)}"
        )
    header = IRHeader(*struct.unpack(_IR_FORMAT, s[:_IR_SIZE]))
    s = s[_IR_SIZE:]
    if header.flag > 0:
        if len(s) < 4 * header.flag:
            raise NNVMError(
                f"recordio.unpack: header flag {header.flag} announces {header.flag} float32 "
                f"labels ({4 * header.flag} bytes), only {len(s)} bytes follow"
            )
        header = header._replace(label=np.frombuffer(s, np.float32, header.flag))
        s = s[4 * header.flag :]
    return header, s


def _cv2() -> Any:
    try:
        import cv2  # type: ignore[import-not-found]
    except ImportError:
        raise NNVMError(
            "recordio: pack_img/unpack_img encode images with OpenCV; pip install opencv-python"
        ) from None
    return cv2


def pack_img(header: Any, img: np.ndarray, quality: int = 95, img_fmt: str = ".jpg") -> bytes:
    """``pack`` of ``img`` encoded as JPEG (``quality`` 1-100) or PNG (compression 1-9)."""
    cv2 = _cv2()
    fmt = img_fmt.upper()
    params: list[int] = []  # other formats OpenCV knows (.bmp, ...) take its defaults
    if fmt in (".JPG", ".JPEG"):
        params = [cv2.IMWRITE_JPEG_QUALITY, quality]
    elif fmt == ".PNG":
        params = [cv2.IMWRITE_PNG_COMPRESSION, quality]
    ok, buf = cv2.imencode(img_fmt, img, params)
    if not ok:
        raise NNVMError(
            f"recordio.pack_img: OpenCV could not encode an image of shape {img.shape} as {img_fmt}"
        )
    return pack(header, buf.tobytes())


def unpack_img(s: bytes, iscolor: int = -1) -> tuple[IRHeader, np.ndarray]:
    """``unpack``, with the payload decoded by ``cv2.imdecode(..., iscolor)``."""
    cv2 = _cv2()
    header, img = unpack(s)
    return header, cv2.imdecode(np.frombuffer(img, dtype=np.uint8), iscolor)


__all__ = [
    "MAX_RECORD_BYTES",
    "IRHeader",
    "MXIndexedRecordIO",
    "MXRecordIO",
    "RecordIOError",
    "RecordKeyError",
    "encode_record",
    "pack",
    "pack_img",
    "unpack",
    "unpack_img",
]
