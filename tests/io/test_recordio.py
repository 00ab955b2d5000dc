"""nv.recordio against the RecordIO format as dmlc-core documents it.

The expected bytes are built by hand here with ``struct`` from the format description
(magic 0xced7230a, lrecord = cflag << 29 | length, payload padded to 4 bytes, a payload
cut at each 4-byte aligned copy of the magic word) and MXNet's IRHeader (struct IfQQ).
Byte-identity with real MXNet 1.9.1 was checked outside this suite (see the report).
"""

from __future__ import annotations

import pickle
import random
import struct
from pathlib import Path

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy.base import NNVMError, ParamError

R = nv.recordio
MAGIC = struct.pack("<I", 0xCED7230A)


def part(cflag: int, payload: bytes, pad: int = 0) -> bytes:
    return MAGIC + struct.pack("<I", (cflag << 29) | len(payload)) + payload + b"\0" * pad


def write_all(path: Path, records: list[bytes]) -> bytes:
    rec = R.MXRecordIO(path, "w")
    for r in records:
        rec.write(r)
    rec.close()
    return path.read_bytes()


def read_all(path: Path) -> list[bytes]:
    rec = R.MXRecordIO(path, "r")
    out = []
    while (r := rec.read()) is not None:
        out.append(r)
    rec.close()
    return out


# ---- byte layout -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("payload", "expected"),
    [
        (b"", part(0, b"")),
        (b"a", part(0, b"a", pad=3)),
        (b"abcd", part(0, b"abcd")),
        (b"abcde", part(0, b"abcde", pad=3)),
        # the magic word at an aligned offset is dropped and the record cut there
        (MAGIC, part(1, b"") + part(3, b"")),
        (b"xxxx" + MAGIC + b"yy", part(1, b"xxxx") + part(3, b"yy", pad=2)),
        (MAGIC + MAGIC, part(1, b"") + part(2, b"") + part(3, b"")),
        (b"abcd" + MAGIC, part(1, b"abcd") + part(3, b"")),
        (b"a" + MAGIC * 2 + b"zz", part(0, b"a" + MAGIC * 2 + b"zz", pad=1)),  # unaligned
        (b"ab" + MAGIC + b"cd", part(0, b"ab" + MAGIC + b"cd")),
    ],
)
def test_record_bytes_match_the_format(tmp_path: Path, payload: bytes, expected: bytes) -> None:
    assert write_all(tmp_path / "a.rec", [payload]) == expected
    assert read_all(tmp_path / "a.rec") == [payload]


def test_records_follow_each_other_without_gaps(tmp_path: Path) -> None:
    data = write_all(tmp_path / "a.rec", [b"one", b"", b"three"])
    assert data == part(0, b"one", 1) + part(0, b"") + part(0, b"three", 3)


def test_round_trip_of_random_records_with_magic_words(tmp_path: Path) -> None:
    rng = random.Random(0)
    records = []
    for _ in range(300):
        b = bytearray(rng.getrandbits(8) for _ in range(rng.randrange(60)))
        for _ in range(rng.randrange(4)):
            if len(b) >= 4:
                at = rng.randrange(len(b) - 3)
                b[at : at + 4] = MAGIC
        records.append(bytes(b))
    write_all(tmp_path / "a.rec", records)
    assert read_all(tmp_path / "a.rec") == records


def test_read_returns_none_at_the_end_and_reset_rewinds(tmp_path: Path) -> None:
    write_all(tmp_path / "a.rec", [b"x", b"y"])
    rec = R.MXRecordIO(str(tmp_path / "a.rec"), "r")
    assert [rec.read(), rec.read(), rec.read(), rec.read()] == [b"x", b"y", None, None]
    rec.reset()
    assert rec.read() == b"x"


def test_write_takes_bytes_like_objects(tmp_path: Path) -> None:
    data = write_all(tmp_path / "a.rec", [bytearray(b"ba"), memoryview(b"mv")])  # type: ignore[list-item]
    assert data == part(0, b"ba", 2) + part(0, b"mv", 2)


def test_a_reader_pickles_and_reopens_at_the_start(tmp_path: Path) -> None:
    write_all(tmp_path / "a.rec", [b"x", b"y"])
    rec = R.MXRecordIO(tmp_path / "a.rec", "r")
    assert rec.read() == b"x"
    copy = pickle.loads(pickle.dumps(rec))
    assert copy.read() == b"x"
    assert rec.read() == b"y"


# ---- the index -------------------------------------------------------------------------


def test_index_lines_are_key_tab_offset(tmp_path: Path) -> None:
    rec = R.MXIndexedRecordIO(tmp_path / "a.idx", tmp_path / "a.rec", "w")
    for key, payload in [(3, b"three"), (1, b"one"), (10, b"ten!")]:
        rec.write_idx(key, payload)
    assert rec.tell() == 16 + 12 + 12
    rec.close()
    # offsets: 8-byte header + 5 bytes padded to 8 = 16, then 8 + 4 = 12
    assert (tmp_path / "a.idx").read_text() == "3\t0\n1\t16\n10\t28\n"
    assert (tmp_path / "a.rec").read_bytes() == (
        part(0, b"three", 3) + part(0, b"one", 1) + part(0, b"ten!")
    )


def test_read_idx_in_any_order(tmp_path: Path) -> None:
    n = 50
    with R.MXIndexedRecordIO(tmp_path / "a.idx", tmp_path / "a.rec", "w") as rec:
        for i in range(n):
            rec.write_idx(i, bytes([i]) * i + MAGIC * (i % 3))
    rec = R.MXIndexedRecordIO(tmp_path / "a.idx", tmp_path / "a.rec", "r")
    assert rec.keys == list(range(n))
    order = list(range(n))
    random.Random(1).shuffle(order)
    for i in order:
        assert rec.read_idx(i) == bytes([i]) * i + MAGIC * (i % 3)
    rec.seek(48)
    assert rec.read() == bytes([48]) * 48
    assert rec.read() == bytes([49]) * 49 + MAGIC


def test_key_type_converts_keys_both_ways(tmp_path: Path) -> None:
    rec = R.MXIndexedRecordIO(tmp_path / "a.idx", tmp_path / "a.rec", "w", key_type=str)
    rec.write_idx("k1", b"v")
    rec.write_idx(5, b"w")
    rec.close()
    assert (tmp_path / "a.idx").read_text() == "k1\t0\n5\t12\n"
    rec = R.MXIndexedRecordIO(tmp_path / "a.idx", tmp_path / "a.rec", "r", key_type=str)
    assert rec.keys == ["k1", "5"]
    assert rec.idx == {"k1": 0, "5": 12}
    assert rec.read_idx("5") == b"w"


def test_an_indexed_reader_pickles(tmp_path: Path) -> None:
    with R.MXIndexedRecordIO(tmp_path / "a.idx", tmp_path / "a.rec", "w") as rec:
        rec.write_idx(7, b"seven")
    copy = pickle.loads(
        pickle.dumps(R.MXIndexedRecordIO(tmp_path / "a.idx", tmp_path / "a.rec", "r"))
    )
    assert copy.keys == [7]
    assert copy.read_idx(7) == b"seven"


def test_seek_in_another_process_reopens_but_read_refuses(tmp_path: Path) -> None:
    with R.MXIndexedRecordIO(tmp_path / "a.idx", tmp_path / "a.rec", "w") as rec:
        rec.write_idx(0, b"zero")
        rec.write_idx(1, b"one")
    rec = R.MXIndexedRecordIO(tmp_path / "a.idx", tmp_path / "a.rec", "r")
    rec.pid = -1  # as seen from a forked child
    with pytest.raises(NNVMError, match="forked process"):
        rec.read()
    assert rec.read_idx(1) == b"one"  # seek reopened the file in this process


# ---- pack / unpack ---------------------------------------------------------------------


def test_pack_with_a_number_label() -> None:
    packed = R.pack(R.IRHeader(5, 3.5, 7, 9), b"data")
    assert packed == struct.pack("<IfQQ", 0, 3.5, 7, 9) + b"data"  # flag forced to 0
    header, payload = R.unpack(packed)
    assert header == (0, 3.5, 7, 9)
    assert isinstance(header.label, float)
    assert payload == b"data"


def test_pack_with_an_array_label() -> None:
    packed = R.pack((0, [1, 2], 3, 4), b"data")
    expected = struct.pack("<IfQQ", 2, 0.0, 3, 4) + struct.pack("<2f", 1, 2) + b"data"
    assert packed == expected
    header, payload = R.unpack(packed)
    assert (header.flag, header.id, header.id2) == (2, 3, 4)
    np.testing.assert_array_equal(header.label, np.array([1, 2], np.float32))
    assert header.label.dtype == np.float32
    assert payload == b"data"


def test_a_zero_d_array_label_is_an_array_of_one() -> None:
    packed = R.pack((9, np.array(2.0), 0, 0), b"")
    assert packed == struct.pack("<IfQQ", 1, 0.0, 0, 0) + struct.pack("<f", 2.0)


def test_pack_unpack_round_trip_of_label_arrays() -> None:
    rng = np.random.default_rng(0)
    for size in (1, 2, 7, 100):
        label = rng.uniform(size=size).astype(np.float32)
        content = bytes(rng.integers(0, 256, size=size * 3, dtype=np.uint8))
        header, payload = R.unpack(R.pack((0, label, 1, 2**64 - 1), content))
        np.testing.assert_array_equal(header.label, label)
        assert (header.flag, header.id2, payload) == (size, 2**64 - 1, content)


# ---- bad input -------------------------------------------------------------------------


def test_bad_flag(tmp_path: Path) -> None:
    with pytest.raises(ParamError, match=r"flag must be 'r'.*'w'.*got 'x'"):
        R.MXRecordIO(tmp_path / "a.rec", "x")


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(R.RecordIOError, match=r"cannot open .*missing.rec.* for reading"):
        R.MXRecordIO(tmp_path / "missing.rec", "r")
    with pytest.raises(R.RecordIOError, match=r"cannot open index .*missing.idx.* for writing"):
        R.MXIndexedRecordIO(tmp_path / "no" / "missing.idx", tmp_path / "a.rec", "w")


def test_wrong_mode_and_closed(tmp_path: Path) -> None:
    writer = R.MXRecordIO(tmp_path / "a.rec", "w")
    with pytest.raises(NNVMError, match="read needs a file opened with flag 'r'"):
        writer.read()
    with pytest.raises(NNVMError, match="a writer cannot be pickled"):
        pickle.dumps(writer)
    writer.close()
    writer.close()
    with pytest.raises(NNVMError, match="closed"):
        writer.write(b"x")
    reader = R.MXRecordIO(tmp_path / "a.rec", "r")
    with pytest.raises(NNVMError, match="write needs a file opened with flag 'w'"):
        reader.write(b"x")


def test_text_is_not_a_record(tmp_path: Path) -> None:
    writer = R.MXRecordIO(tmp_path / "a.rec", "w")
    with pytest.raises(NNVMError, match=r"must be bytes .* got str"):
        writer.write("text")  # type: ignore[arg-type]


def test_records_of_2_pow_29_bytes_are_refused() -> None:
    class Huge(bytes):
        def __len__(self) -> int:
            return 1 << 29

    with pytest.raises(NNVMError, match="shorter than 2\\^29 bytes, got 536870912"):
        R.encode_record(Huge())


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"\0" * 12, "expected the magic word 0xced7230a at byte 0, found 0x00000000"),
        (part(0, b"abc", 1)[:6], "ends inside a record at byte 0: expected an 8-byte"),
        (part(0, b"abcdef", 2)[:12], "expected 8 bytes of payload, found 4"),
        (part(1, b"ab", 2), "ends inside a record at byte 12"),
        (part(2, b"ab", 2), "cflag 2 at byte 0, expected 0 or 1"),
        (part(1, b"") + part(0, b""), "cflag 0 at byte 8, expected 2 or 3"),
        (part(0, b"ok", 2) + b"junk", "ends inside a record at byte 12"),
    ],
)
def test_corrupt_files(tmp_path: Path, data: bytes, message: str) -> None:
    (tmp_path / "a.rec").write_bytes(data)
    with pytest.raises(R.RecordIOError, match=message):
        read_all(tmp_path / "a.rec")


def test_bad_index_line(tmp_path: Path) -> None:
    (tmp_path / "a.rec").write_bytes(b"")
    (tmp_path / "a.idx").write_text("1\t0\n\n2 8\n")
    with pytest.raises(R.RecordIOError, match=r"line 3 of .*a.idx.* is '2 8', expected"):
        R.MXIndexedRecordIO(tmp_path / "a.idx", tmp_path / "a.rec", "r")
    (tmp_path / "a.idx").write_text("x\t0\n")
    with pytest.raises(R.RecordIOError, match="with a int key"):
        R.MXIndexedRecordIO(tmp_path / "a.idx", tmp_path / "a.rec", "r")


def test_missing_key_is_a_key_error(tmp_path: Path) -> None:
    with R.MXIndexedRecordIO(tmp_path / "a.idx", tmp_path / "a.rec", "w") as rec:
        rec.write_idx(3, b"x")
        with pytest.raises(NNVMError, match="seek needs a reader"):
            rec.read_idx(3)
    rec = R.MXIndexedRecordIO(tmp_path / "a.idx", tmp_path / "a.rec", "r")
    with pytest.raises(KeyError) as info:
        rec.read_idx("3")
    assert isinstance(info.value, NNVMError)
    assert str(info.value).endswith(
        "no record with key '3' in " + repr(str(tmp_path / "a.idx")) + " (keys are int: 3)"
    )
    with pytest.raises(NNVMError, match="tell needs a file opened with flag 'w'"):
        rec.tell()


def test_unpack_of_short_buffers() -> None:
    with pytest.raises(NNVMError, match=r"at least 24 bytes .* got 5"):
        R.unpack(b"short")
    with pytest.raises(NNVMError, match=r"flag 5 announces 5 float32 labels .* only 2 bytes"):
        R.unpack(struct.pack("<IfQQ", 5, 0, 1, 1) + b"ab")


def test_pack_of_bad_headers() -> None:
    with pytest.raises(NNVMError, match="does not fit struct 'IfQQ'"):
        R.pack((0, 1.0, -1, 0), b"")
    with pytest.raises(NNVMError, match=r"\(flag, label, id, id2\) tuple"):
        R.pack((0, 1.0), b"")


def test_image_packing_needs_opencv() -> None:
    try:
        import cv2  # type: ignore[import-not-found]  # noqa: F401
    except ImportError:
        with pytest.raises(NNVMError, match="OpenCV"):
            R.pack_img((0, 1.0, 0, 0), np.zeros((2, 2, 3), np.uint8))
    else:
        pytest.skip("OpenCV is installed")
