"""storage.py on CuPy's pool: where blocks come from, and the retry after an out-of-memory.

CuPy itself needs a GPU (tests/gpu_hw checks the real pool); here gpu_lib is faked, so the
storage logic around it runs on any machine.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest

from nnvmpy.base import Context
from nnvmpy.kernel import gpu_lib, storage


@pytest.fixture
def fake_cupy(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """gpu_lib as if CuPy ran on a GPU: device_block hands out host arrays, and raises
    OutOfMemory while `full` is set."""
    state: dict[str, Any] = {"full": 0, "blocks": [], "freed_pooled": []}

    def device_block(nbytes: int, device_id: int) -> np.ndarray:
        if state["full"]:
            state["full"] -= 1
            raise gpu_lib.OutOfMemory(f"out of memory allocating {nbytes} bytes")
        state["blocks"].append((nbytes, device_id))
        return np.zeros(nbytes, np.uint8)

    monkeypatch.setattr(gpu_lib, "available", lambda: True)
    monkeypatch.setattr(gpu_lib, "device_block", device_block)
    monkeypatch.setattr(gpu_lib, "free_pooled_memory", state["freed_pooled"].append)
    return state


def test_gpu_blocks_come_from_cupys_pool(fake_cupy: dict[str, Any]) -> None:
    ctx = Context("gpu", 5)  # a device id no other test uses: its pool starts empty
    h = storage.alloc(100 << 10, ctx)
    assert fake_cupy["blocks"] == [(128 << 10, 5)]  # the rounded bucket, on the device
    storage.free(h)
    h2 = storage.alloc(90 << 10, ctx)  # same bucket: served by our pool, CuPy is not asked
    assert fake_cupy["blocks"] == [(128 << 10, 5)]
    storage.free(h2)
    storage.release_all(ctx)


def test_small_gpu_blocks_are_carved_from_slabs(fake_cupy: dict[str, Any]) -> None:
    """Up to SLAB_MAX_BLOCK: one CuPy block of SLAB_BYTES serves SLAB_BYTES / size new
    blocks, each its own bytes of it; then a new slab."""
    ctx = Context("gpu", 9)
    size, per_slab = 1024, storage.SLAB_BYTES // 1024
    handles = [storage.alloc(1000, ctx) for _ in range(per_slab)]
    assert fake_cupy["blocks"] == [(storage.SLAB_BYTES, 9)]
    arrays = [h._block for h in handles]  # each piece, all its bytes
    for i, a in enumerate(arrays):
        a[:] = i % 251
    assert all(int(a[0]) == int(a[-1]) == i % 251 for i, a in enumerate(arrays))
    starts = sorted(a.__array_interface__["data"][0] for a in arrays)
    assert [b - a for a, b in itertools.pairwise(starts)] == [size] * (per_slab - 1)
    more = storage.alloc(300, ctx)  # another bucket (512): a slab of its own
    last = storage.alloc(1000, ctx)  # the first slab is used up
    assert fake_cupy["blocks"] == [(storage.SLAB_BYTES, 9)] * 3
    storage.free(handles[0])
    again = storage.alloc(1000, ctx)  # a freed piece is reused like any block
    assert len(fake_cupy["blocks"]) == 3
    assert again.as_array((1,), np.uint8).__array_interface__["data"][0] == starts[0]
    for h in (*handles[1:], more, last, again):
        storage.free(h)
    storage.release_all(ctx)
    assert not [k for k in storage._slabs if k[0] == 9]  # a later request takes a new slab


def test_out_of_memory_releases_the_pool_and_retries_once(fake_cupy: dict[str, Any]) -> None:
    ctx = Context("gpu", 6)
    storage.free(storage.alloc(4096, ctx))  # a pooled block of another bucket
    assert storage.stats(ctx).bytes_pooled == 4096
    fake_cupy["full"] = 1
    h = storage.alloc(100 << 10, ctx)
    assert fake_cupy["freed_pooled"] == [6]  # CuPy's unused memory went back to the device
    assert storage.stats(ctx).bytes_pooled == 0  # after our pooled blocks went back to CuPy
    assert h.as_array((10,), np.float32).shape == (10,)
    storage.free(h)
    fake_cupy["full"] = 2  # still full after the retry: the error reaches the caller
    with pytest.raises(gpu_lib.OutOfMemory):
        storage.alloc(200 << 10, ctx)
    assert storage.stats(ctx).bytes_in_use == 0  # the failed request holds nothing
    storage.release_all(ctx)


def test_gpu_temp_space_comes_from_cupys_pool_and_only_grows(fake_cupy: dict[str, Any]) -> None:
    from nnvmpy.resource import Resource, ResourceRequest

    res = Resource(ResourceRequest.kTempSpace, Context("gpu", 8))
    a = res.get_space((100,), np.float32)
    assert fake_cupy["blocks"] == [(400, 8)]  # the bytes asked for, on the resource's device
    assert (a.shape, a.dtype) == ((100,), np.float32)
    b = res.get_space((10, 5), np.float64)  # fits: the same space, CuPy is not asked
    assert fake_cupy["blocks"] == [(400, 8)]
    assert b.shape == (10, 5)
    res.get_space((1000,), np.int8)  # more: a bigger space
    assert fake_cupy["blocks"] == [(400, 8), (1000, 8)]


@pytest.mark.parametrize("stream_order", [False, True])
def test_an_outgrown_gpu_temp_space_waits_for_the_device_under_stream_order(
    fake_cupy: dict[str, Any], monkeypatch: pytest.MonkeyPatch, stream_order: bool
) -> None:
    """With stream-ordered completion its earlier users may still run when the space grows:
    the device is waited for before the old block goes back to the pool (never otherwise)."""
    from nnvmpy import resource
    from nnvmpy.engine import fences

    waits: list[tuple[int, int]] = []  # (device, CuPy blocks handed out by then)
    monkeypatch.setattr(
        resource,
        "_wait_for_device",
        lambda ctx: waits.append((ctx.device_id, len(fake_cupy["blocks"]))),
    )
    fences.set_on(stream_order)
    try:
        res = resource.Resource(resource.ResourceRequest.kTempSpace, Context("gpu", 8))
        old = res.get_space((100,), np.float32)
        res.get_space((50,), np.float32)  # fits: no new space, nothing to wait for
        assert waits == []
        res.get_space((1000,), np.float32)
        assert waits == ([(8, 1)] if stream_order else [])  # before the new block, old alive
        assert old.shape == (100,)
        cpu_res = resource.Resource(resource.ResourceRequest.kTempSpace, Context("cpu", 0))
        cpu_res.get_space((10,), np.float32)
        cpu_res.get_space((1000,), np.float32)  # host memory: no device to wait for
        assert len(waits) == (1 if stream_order else 0)
    finally:
        fences.set_on(None)
