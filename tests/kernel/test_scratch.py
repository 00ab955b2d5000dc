"""kernel/scratch.py: a kernel call's scratch and uploaded tables, on each device.

With the CuPy layer on, GPU scratch comes from CuPy's pool allocated under the op's stream
(so the pool hands it out again only on that stream). CuPy needs a GPU (tests/gpu_hw
checks the real pool); here gpu_lib is faked, so where scratch comes from, and under which
stream, is checked on any machine; the simulator runs whole ops through the fake.
"""

from __future__ import annotations

import contextlib
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy.base import Context
from nnvmpy.kernel import gpu_lib, scratch, storage
from nnvmpy.ops import _index_kernels
from nnvmpy.resource import OpContext


def _op_ctx(device: Context, stream: Any = None) -> OpContext:
    return OpContext(run_ctx=SimpleNamespace(ctx=device, stream=stream))


class _Block(np.ndarray):
    """A host array standing in for a device block: copies to it are recorded."""

    copies: list[Any] = []

    def copy_to_device(self, host: Any, stream: Any = 0) -> None:
        self[...] = host
        _Block.copies.append(stream)


@pytest.fixture
def fake_cupy(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """gpu_lib as if CuPy ran on a GPU: device_block records its size, device and the
    stream current at the call (cupy_stream's), and raises OutOfMemory while `full`."""
    state: dict[str, Any] = {"current": [0], "blocks": [], "full": 0, "freed_pooled": []}

    @contextlib.contextmanager
    def cupy_stream(stream: Any) -> Any:
        state["current"].append(stream or 0)
        try:
            yield
        finally:
            state["current"].pop()

    def device_block(nbytes: int, device_id: int) -> np.ndarray:
        if state["full"]:
            state["full"] -= 1
            raise gpu_lib.OutOfMemory(f"out of memory allocating {nbytes} bytes")
        state["blocks"].append((nbytes, device_id, state["current"][-1]))
        return np.zeros(nbytes, np.uint8).view(_Block)

    monkeypatch.setattr(gpu_lib, "available", lambda: True)
    monkeypatch.setattr(gpu_lib, "cupy_stream", cupy_stream)
    monkeypatch.setattr(gpu_lib, "device_block", device_block)
    monkeypatch.setattr(gpu_lib, "free_pooled_memory", state["freed_pooled"].append)
    _Block.copies = []
    return state


def test_cpu_scratch_is_numpy_and_tables_are_themselves() -> None:
    ctx = _op_ctx(nv.cpu())
    a = scratch.empty(ctx, (3, 4), np.int64)
    assert isinstance(a, np.ndarray)
    assert (a.shape, a.dtype) == ((3, 4), np.int64)
    table = np.arange(6.0)
    assert scratch.upload(ctx, table) is table
    t = scratch.upload(ctx, table[::2])  # a kernel indexes flat memory: made contiguous
    assert t.flags.c_contiguous
    assert t.tolist() == [0.0, 2.0, 4.0]
    assert scratch.empty(nv.cpu(), 5, np.float32).shape == (5,)  # a Context will do too


def test_gpu_scratch_comes_from_cupys_pool_under_the_ops_stream(
    fake_cupy: dict[str, Any],
) -> None:
    stream = object()  # the engine worker's stream, as RunContext.stream holds it
    ctx = _op_ctx(Context("gpu", 3), stream)
    a = scratch.empty(ctx, (5, 2), np.float64)
    assert fake_cupy["blocks"] == [(80, 3, stream)]  # exact bytes, its device, its stream
    assert (a.shape, a.dtype) == ((5, 2), np.float64)
    assert fake_cupy["current"] == [0]  # the stream is CuPy's current one only meanwhile
    flat = _index_kernels.device_empty(ctx, 0, np.int32)  # the op kernels' helper: at least 1
    assert fake_cupy["blocks"][-1] == (4, 3, stream)
    assert flat.shape == (1,)
    no_stream = scratch.empty(_op_ctx(Context("gpu", 3)), 2, np.int8)  # the default stream
    assert fake_cupy["blocks"][-1] == (2, 3, 0)
    assert no_stream.dtype == np.int8


def test_gpu_tables_are_copied_on_the_ops_stream(fake_cupy: dict[str, Any]) -> None:
    stream = object()
    ctx = _op_ctx(Context("gpu", 3), stream)
    host = np.array([[1, 2], [3, 4]], np.int64)
    dev = _index_kernels.to_ctx(ctx, host)
    assert fake_cupy["blocks"] == [(32, 3, stream)]
    assert _Block.copies == [stream]
    np.testing.assert_array_equal(np.asarray(dev), host)


def test_scratch_out_of_memory_releases_the_pools_and_retries_once(
    fake_cupy: dict[str, Any],
) -> None:
    dev = Context("gpu", 7)  # a device id no other test uses
    storage.free(storage.alloc(4096, dev))  # a pooled block of our NDArray pool
    ctx = _op_ctx(dev, "s")
    fake_cupy["full"] = 1
    a = scratch.empty(ctx, 16, np.float32)
    assert a.shape == (16,)
    assert fake_cupy["freed_pooled"] == [7]  # CuPy's unused blocks went to the device
    assert storage.stats(dev).bytes_pooled == 0  # after ours went back to CuPy
    # our pool's block (carved from a slab) came with the default stream, the retry
    # still with the op's
    assert fake_cupy["blocks"] == [(storage.SLAB_BYTES, 7, 0), (64, 7, "s")]
    fake_cupy["full"] = 2
    with pytest.raises(gpu_lib.OutOfMemory):
        scratch.empty(ctx, 16, np.float32)
    assert fake_cupy["current"] == [0]  # the stream was left however the call ended


@pytest.mark.gpu
def test_simulated_ops_take_their_scratch_under_their_stream(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """box_nms and boolean_mask on the simulator with the CuPy layer faked (its blocks are
    simulator device arrays): every scratch block is asked for under the op's stream (the
    engine worker's), and the results are the CPU's."""
    from numba import cuda

    asked: list[tuple[int, Any]] = []
    current = [0]

    @contextlib.contextmanager
    def cupy_stream(stream: Any) -> Any:
        current.append(stream or 0)
        try:
            yield
        finally:
            current.pop()

    def device_block(nbytes: int, device_id: int) -> Any:
        asked.append((nbytes, current[-1]))
        return cuda.device_array(nbytes, np.uint8)

    rng = np.random.default_rng(0)
    boxes = rng.uniform(0, 1, (2, 40, 6)).astype(np.float32)
    boxes[..., 4:] += boxes[..., 2:4]
    data = rng.normal(size=(50, 3)).astype(np.float32)
    mask = (rng.uniform(size=50) > 0.4).astype(np.float32)

    def run(ctx: Context) -> list[np.ndarray]:
        nms = nv.nd.contrib.box_nms(nv.nd.array(boxes, ctx=ctx), overlap_thresh=0.3, topk=20)
        kept = nv.nd.contrib.boolean_mask(nv.nd.array(data, ctx=ctx), nv.nd.array(mask, ctx=ctx))
        return [nms.asnumpy(), kept.asnumpy()]

    want = run(nv.cpu())
    storage.release_all(nv.gpu(0))
    monkeypatch.setattr(gpu_lib, "available", lambda: True)
    monkeypatch.setattr(gpu_lib, "cupy_stream", cupy_stream)
    monkeypatch.setattr(gpu_lib, "device_block", device_block)
    try:
        got = run(nv.gpu(0))
    finally:
        storage.release_all(nv.gpu(0))  # blocks of the fake must not serve later tests
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    from nnvmpy.engine import streams

    assert asked  # the CuPy layer was in use: every device block came through it
    if streams.enabled():  # the worker's stream: scratch; the default stream: NDArray blocks
        assert {s for _, s in asked} - {0}, "no scratch was asked for under a worker stream"


def _assert_poisoned(a: Any) -> None:
    """Every byte 0xFF: NaN for floats, -1 for signed ints."""
    host = np.ascontiguousarray(a if isinstance(a, np.ndarray) else a.copy_to_host())
    assert (host.reshape(-1).view(np.uint8) == 0xFF).all()


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.int32, np.uint8])
def test_poisoning_fills_cpu_scratch(dtype: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """NNVMPY_POISON_MEMORY reaches a kernel's scratch as well as the array pool: a kernel
    reading scratch it never wrote sees NaN or -1, where fresh memory usually holds zeros."""
    monkeypatch.setattr(storage, "poisoning", True)
    for a in (scratch.empty(_op_ctx(nv.cpu()), (3, 5), dtype), scratch.host_empty((7,), dtype)):
        _assert_poisoned(a)
    if np.dtype(dtype).kind == "f":
        assert np.isnan(scratch.empty(nv.cpu(), (2, 2), dtype)).all()


def test_no_poisoning_unless_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(storage, "poisoning", False)
    seen = []
    monkeypatch.setattr(scratch, "poisoned", lambda a, stream=0: seen.append(a) or a)
    scratch.empty(nv.cpu(), 4, np.float32)
    scratch.host_empty((4,), np.int64)
    assert seen == []


def test_poisoning_fills_gpu_scratch_on_the_ops_stream(
    fake_cupy: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(storage, "poisoning", True)
    stream = object()
    a = scratch.empty(_op_ctx(Context("gpu", 3), stream), (4, 2), np.float32)
    assert _Block.copies == [stream]  # queued on the op's stream, not the default one
    assert np.isnan(np.asarray(a).view(np.float32)).all()
    table = scratch.upload(_op_ctx(Context("gpu", 3), stream), np.arange(3))
    assert _Block.copies == [stream, stream]  # the table's own copy only: nothing to poison
    assert np.asarray(table).tolist() == [0, 1, 2]


@pytest.mark.gpu
def test_poisoned_scratch_leaves_simulated_results_unchanged(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Ops whose kernels use scratch (box_nms, boolean_mask, topk, RNN) give the CPU's
    results with every scratch array poisoned on the simulator: none reads what it did
    not write."""
    rng = np.random.default_rng(1)
    boxes = rng.uniform(0, 1, (2, 30, 6)).astype(np.float32)
    boxes[..., 4:] += boxes[..., 2:4]
    data = rng.normal(size=(40, 3)).astype(np.float32)
    mask = (rng.uniform(size=40) > 0.5).astype(np.float32)

    def run(ctx: Context) -> list[np.ndarray]:
        nd = nv.nd
        outs = [
            nd.contrib.box_nms(nd.array(boxes, ctx=ctx), overlap_thresh=0.4, topk=15),
            nd.contrib.boolean_mask(nd.array(data, ctx=ctx), nd.array(mask, ctx=ctx)),
            nd.topk(nd.array(data, ctx=ctx), axis=0, k=5, ret_typ="both")[0],
        ]
        return [o.asnumpy() for o in outs]

    monkeypatch.setattr(storage, "poisoning", True)
    for got, want in zip(run(nv.gpu(0)), run(nv.cpu())):
        np.testing.assert_allclose(got, want, rtol=1e-6)
