"""storage.device_view builds numba-cuda device arrays directly on a block's memory
pointer (issue 16's dispatch cost). Checked on the host with real DeviceNDArray objects
over a made-up device address: their shapes, strides and data pointers must be those
numba-cuda's own slice + view + reshape give, and no memory is ever touched.
"""

from __future__ import annotations

import contextlib

import numpy as np
import pytest

from nnvmpy.base import gpu
from nnvmpy.kernel import storage

if pytest.importorskip("numba").config.ENABLE_CUDASIM:
    pytest.skip("numba-cuda's own arrays, not the simulator's", allow_module_level=True)
devicearray = pytest.importorskip("numba.cuda.cudadrv.devicearray")
driver = pytest.importorskip("numba.cuda.cudadrv.driver")
devices = pytest.importorskip("numba.cuda.cudadrv.devices")

BASE = 0x7F0000000000  # a device address nothing reads or writes here
BLOCK = 4096


@pytest.fixture
def block(monkeypatch):
    """A real numba-cuda uint8 device array of BLOCK bytes at BASE; numba-cuda's slicing
    asks the driver for its context, which this host has not: answered with nothing."""
    monkeypatch.setattr(devices._runtime, "ensure_context", contextlib.nullcontext)
    pointer = driver.MemoryPointer(None, driver.binding.CUdeviceptr(BASE), BLOCK)
    return devicearray.DeviceNDArray((BLOCK,), (1,), np.dtype(np.uint8), gpu_data=pointer)


def _layout(a):
    cai = a.__cuda_array_interface__
    return tuple(a.shape), tuple(a.strides), a.dtype, cai["data"][0], a.is_c_contiguous()


@pytest.mark.parametrize(
    ("shape", "dtype"),
    [((16,), "float32"), ((4, 8), "float32"), ((2, 3, 5), "float64"), ((), "int32"),
     ((7, 1, 3), "float16"), ((1000,), "uint8")],
)  # fmt: skip
def test_views_are_numbas_own_slice_view_reshape(block, shape, dtype):
    dt = np.dtype(dtype)
    want = block[: int(np.prod(shape)) * dt.itemsize].view(dt).reshape(shape)
    got = storage.device_view(block, shape, dt)
    assert type(got) is devicearray.DeviceNDArray
    assert _layout(got) == _layout(want)
    assert got.gpu_data is block.gpu_data  # the block's pointer keeps its memory alive


def test_handles_and_sub_handles_view_their_own_bytes(block):
    handle = storage.Handle(gpu(0), BLOCK, BLOCK, block, None)
    a = handle.as_array((8, 8), np.float32)
    assert _layout(a) == ((8, 8), (32, 4), np.dtype(np.float32), BASE, True)
    assert _layout(handle.view((64,), np.dtype(np.float64)))[3] == BASE
    part = storage.sub_handle(handle, 256, 512, owner=None)
    b = part.view((4, 32), np.dtype(np.float32))
    assert _layout(b) == ((4, 32), (128, 4), np.dtype(np.float32), BASE + 256, True)
    with pytest.raises(Exception, match="needs 2048 bytes"):
        part.as_array((512,), np.float32)


def test_a_multi_dimensional_array_flattens_onto_its_first_element(block):
    """cuda._check's flat view of a C-contiguous argument, here of a slice that starts
    inside the block."""
    inner = block[128:].view(np.dtype(np.float32))[: 3 * 5].reshape(3, 5)
    flat = storage.device_view(inner, (15,), inner.dtype)
    assert _layout(flat) == ((15,), (4,), np.dtype(np.float32), BASE + 128, True)


def test_other_arrays_take_the_three_steps():
    """Host arrays standing in for the simulator's: the plain slice + view + reshape."""
    raw = np.arange(64, dtype=np.uint8)
    got = storage.device_view(raw, (2, 4), np.dtype(np.float32))
    np.testing.assert_array_equal(got, raw[:32].view(np.float32).reshape(2, 4))


def test_input_stamps_find_a_device_arrays_start(block):
    """The executor keys input stamps by where an input's data starts; numba-cuda's
    arrays have no __array_interface__ (the simulator's do, so only real arrays show it)."""
    from nnvmpy import input_stamps

    view = storage.device_view(block[64:], (4, 8), np.dtype(np.float32))
    assert input_stamps.start_address(view) == BASE + 64
    host = np.arange(6.0)
    assert input_stamps.start_address(host[2:]) == host.__array_interface__["data"][0] + 16
    with input_stamps.published({BASE + 64: ("holder", 3)}):
        assert input_stamps.of(view) == ("holder", 3)
        assert input_stamps.of(block) is None


@pytest.mark.parametrize(
    ("shape", "new"),
    [((64,), (8, 8)), ((4, 16), (64,)), ((2, 3, 4), (6, 4)), ((2, 3, 4), (2, 3, 4)),
     ((12,), (1, 12, 1))],
)  # fmt: skip
def test_device_reshape_is_numbas_reshape(block, shape, new):
    a = storage.device_view(block[64:], shape, np.dtype(np.float32))
    got = storage.device_reshape(a, new)
    assert type(got) is devicearray.DeviceNDArray
    assert _layout(got) == _layout(a.reshape(new))
    assert _layout(got)[3] == BASE + 64


def test_device_reshape_leaves_strided_and_mismatched_arrays_to_numba(block):
    a = storage.device_view(block, (8, 8), np.dtype(np.float32))
    column = a[:, 2]  # strided: numba's reshape decides (and raises for a copy)
    with pytest.raises(NotImplementedError):
        storage.device_reshape(column, (2, 4))
    assert _layout(storage.device_reshape(a[2:4], (16,))) == _layout(a[2:4].reshape(16))
    with pytest.raises(ValueError, match="changes the size"):
        storage.device_reshape(a, (5, 5))


@pytest.mark.parametrize(("start", "stop"), [(0, 16), (3, 9), (15, 16), (0, 1)])
def test_device_slice_is_numbas_slice(block, start, stop):
    a = storage.device_view(block[64:], (16,), np.dtype(np.float64))
    got = storage.device_slice(a, start, stop)
    assert type(got) is devicearray.DeviceNDArray
    assert _layout(got) == _layout(a[start:stop])
    assert _layout(got)[3] == BASE + 64 + 8 * start


def test_device_slice_leaves_out_of_range_and_strided_slices_to_numba(block):
    a = storage.device_view(block, (32,), np.dtype(np.float32))
    for start, stop in ((0, 40), (-4, 32)):  # (an empty one allocates: it needs a driver)
        assert _layout(storage.device_slice(a, start, stop)) == _layout(a[start:stop])
    every_other = storage.device_view(block, (4, 8), np.dtype(np.float32))[:, 0]
    assert _layout(storage.device_slice(every_other, 1, 3)) == _layout(every_other[1:3])
