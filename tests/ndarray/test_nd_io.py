"""nd.save / nd.load / nd.load_frombuffer and pickling in MXNet's binary format.

The expected bytes are built here with `struct` from the format MXNet documents
(ndarray.cc NDArray::Save), independently of nnvmpy's writer; the legacy file is the
one MXNet's own tests load.
"""

from __future__ import annotations

import os
import pickle
import struct
from pathlib import Path

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy import util

nd = nv.nd
LEGACY = Path("/work/shared/mxnet-compat/mx191/tests/python/unittest/legacy_ndarray.v0")
FLAGS = {np.float32: 0, np.float64: 1, np.float16: 2, np.uint8: 3, np.int32: 4, np.int8: 5,
         np.int64: 6}  # fmt: skip


def mxnet_record(a: np.ndarray, magic: int = 0xF993FAC9, dev: tuple[int, int] = (1, 0)) -> bytes:
    head = struct.pack(f"<Iii{a.ndim}q", magic, 0, a.ndim, *a.shape)
    return head + struct.pack("<iii", *dev, FLAGS[a.dtype.type]) + a.tobytes()


def mxnet_file(arrays: list[np.ndarray], names: list[str] | None = None) -> bytes:
    out = struct.pack("<QQQ", 0x112, 0, len(arrays)) + b"".join(map(mxnet_record, arrays))
    names = names or []
    out += struct.pack("<Q", len(names))
    for n in names:
        out += struct.pack("<Q", len(n.encode())) + n.encode()
    return out


def values(rng: np.random.Generator) -> list[np.ndarray]:
    return [
        rng.standard_normal((2, 3)).astype(np.float32),
        rng.integers(-100, 100, size=(4,)).astype(np.int64),
        rng.standard_normal((1, 2, 1, 3)).astype(np.float16),
        rng.integers(0, 255, size=(3, 3)).astype(np.uint8),
        np.zeros((2, 0, 3), np.float64),
    ]


def test_save_writes_mxnet_bytes(tmp_path: Path) -> None:
    a = values(np.random.default_rng(0))
    fname = tmp_path / "list.params"
    nd.save(fname, [nd.array(x, dtype=x.dtype) for x in a])
    assert fname.read_bytes() == mxnet_file(a)
    named = {"arg:w": a[0], "aux:m\u00e9an": a[1]}
    nd.save(fname, {k: nd.array(v, dtype=v.dtype) for k, v in named.items()})
    assert fname.read_bytes() == mxnet_file(list(named.values()), list(named))


@pytest.mark.parametrize("form", ["list", "dict", "single"])
def test_round_trip(tmp_path: Path, form: str) -> None:
    a = values(np.random.default_rng(1))
    arrays = [nd.array(x, dtype=x.dtype) for x in a]
    data = {"list": arrays, "dict": {f"p{i}": x for i, x in enumerate(arrays)}, "single": arrays[0]}
    fname = str(tmp_path / "f.params")
    nd.save(fname, data[form])
    loaded = nd.load(fname)
    from_buffer = nd.load_frombuffer(Path(fname).read_bytes())
    for got in (loaded, from_buffer):
        if form == "dict":
            assert isinstance(got, dict)
            assert list(got) == [f"p{i}" for i in range(len(a))]
            got = list(got.values())
        want = a[:1] if form == "single" else a
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert g.dtype == w.dtype
            assert g.shape == w.shape
            np.testing.assert_array_equal(g.asnumpy(), w)


def test_legacy_v0_file_loads() -> None:
    loaded = nd.load(str(LEGACY))
    assert len(loaded) == 6
    for x in loaded:
        np.testing.assert_array_equal(x.asnumpy(), np.arange(128, dtype=np.float32))


def test_v1_record_and_gpu_device_load_on_cpu() -> None:
    a = np.arange(6, dtype=np.int32).reshape(2, 3)
    v1 = struct.pack("<Ii2q", 0xF993FAC8, 2, 2, 3) + struct.pack("<iii", 2, 0, 4) + a.tobytes()
    buf = struct.pack("<QQQ", 0x112, 0, 1) + v1 + struct.pack("<Q", 0)
    (x,) = nd.load_frombuffer(buf)
    np.testing.assert_array_equal(x.asnumpy(), a)
    if nv.num_gpus() == 0:
        assert x.context == nv.cpu()


def test_np_shape_semantics_are_kept(tmp_path: Path) -> None:
    fname = str(tmp_path / "f")
    with util.np_shape(True):
        nd.save(fname, [nd.array(np.array(3.0)), nd.zeros((0, 2))])
        loaded = nd.load(fname)
        assert loaded[0].shape == ()
        assert loaded[0].asscalar() == 3.0
        assert loaded[1].shape == (0, 2)
    with pytest.raises(nv.NNVMError, match="np_shape"):
        nd.load(fname)  # saved in NumPy shape semantics: only loads there (MXNet's rule)
    nd.save(fname, [nd.ones((2,))])
    with util.np_shape(True), pytest.raises(nv.NNVMError, match="np_shape"):
        nd.load(fname)
    with pytest.raises(nv.NNVMError, match="0-d"):
        nd.save(fname, [nd.array(np.array(1.0))])


@pytest.mark.parametrize("cut", [1, 10, 30, 60])
def test_truncated_buffers_raise_named_errors(cut: int) -> None:
    buf = mxnet_file([np.arange(12, dtype=np.float32)], ["weight"])
    with pytest.raises(nv.NNVMError, match="load_frombuffer") as info:
        nd.load_frombuffer(buf[:-cut])
    assert "truncated" in str(info.value) or "count" in str(info.value)
    assert nd.load_frombuffer(buf)["weight"].asnumpy().sum() == 66  # still fine


def test_corrupt_headers_and_huge_sizes_are_refused(tmp_path: Path) -> None:
    good = mxnet_file([np.arange(3, dtype=np.float32)])
    cases = {
        "magic": b"\x00" + good[1:],
        "count": struct.pack("<QQQ", 0x112, 0, 2**40) + good[24:],
        # one array claiming 2^40 x 2^20 float32 elements: refused before any allocation
        "huge": struct.pack("<QQQ", 0x112, 0, 1)
        + struct.pack("<Iii2q", 0xF993FAC9, 0, 2, 2**40, 2**20)
        + struct.pack("<iii", 1, 0, 0)
        + b"\x00" * 16,
        "dtype": good.replace(struct.pack("<iii", 1, 0, 0), struct.pack("<iii", 1, 0, 99)),
        "sparse": good.replace(
            struct.pack("<Ii", 0xF993FAC9, 0), struct.pack("<Ii", 0xF993FAC9, 2)
        ),
        "names": good[:-8] + struct.pack("<Q", 3),
    }
    for what, buf in cases.items():
        fname = tmp_path / f"{what}.params"
        fname.write_bytes(buf)
        with pytest.raises(nv.NNVMError, match=str(fname)):
            nd.load(str(fname))
    with pytest.raises(nv.NNVMError, match="cannot read"):
        nd.load(str(tmp_path / "missing.params"))


def test_bad_save_arguments() -> None:
    with pytest.raises(nv.NNVMError, match="dict keys"):
        nd.save(os.devnull, {1: nd.ones(1)})
    with pytest.raises(nv.NNVMError, match="array 1"):
        nd.save(os.devnull, [nd.ones(1), np.ones(1)])
    with pytest.raises(nv.NNVMError, match="must be an NDArray"):
        nd.save(os.devnull, 3)


def test_pickle_round_trip_and_mxnet_state() -> None:
    for x in (nd.array(np.arange(6).reshape(2, 3)), nd.array(np.array(2.5)), nd.empty((0, 3))):
        y = pickle.loads(pickle.dumps(x))
        assert y.shape == x.shape
        assert y.dtype == x.dtype
        np.testing.assert_array_equal(y.asnumpy(), x.asnumpy())
    a = np.array([1.5, -2.0], np.float32)
    state = nd.array(a).__getstate__()
    assert bytes(state["handle"]) == mxnet_record(a)
    # the state MXNet 1.9.1 writes for nd.arange(1, ctx=gpu()): loads on the CPU here
    gpu_state = {"handle": bytearray(mxnet_record(np.zeros(1, np.float32), dev=(2, 0)))}
    z = nd.ones((3, 3))
    z.__setstate__(gpu_state)
    assert z.shape == (1,)
    assert z.asnumpy()[0] == 0
    with pytest.raises(nv.NNVMError, match="no array"):
        z.__setstate__({"handle": None})


@pytest.mark.gpu
def test_gpu_arrays_save_their_device(tmp_path: Path) -> None:
    x = nd.array(np.arange(4, dtype=np.float32), ctx=nv.gpu(0))
    buf = pickle.dumps(x)
    np.testing.assert_array_equal(pickle.loads(buf).asnumpy(), np.arange(4))
    fname = str(tmp_path / "g")
    nd.save(fname, [x])
    raw = Path(fname).read_bytes()
    assert raw[24 + 4 + 4 + 4 + 8 : 24 + 4 + 4 + 4 + 8 + 8] == struct.pack("<ii", 2, 0)
    np.testing.assert_array_equal(nd.load(fname)[0].asnumpy(), np.arange(4))
