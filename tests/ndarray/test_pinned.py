"""cpu_pinned: page-locked host memory where CUDA is available, asynchronous GPU copies.

MXNet allocates cpu_pinned arrays with cudaHostAlloc and copies them to and from a GPU
with cudaMemcpyAsync on the copying worker's stream; without CUDA it falls back to plain
CPU memory. The GPU tests run on numba's simulator (NUMBA_ENABLE_CUDASIM=1) or a GPU;
the fallback test runs everywhere.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy.engine import streams
from nnvmpy.kernel import storage

ON_GPU_OR_SIM = os.environ.get("NUMBA_ENABLE_CUDASIM") == "1" or nv.num_gpus() > 0


@pytest.mark.skipif(ON_GPU_OR_SIM, reason="checks the fallback where CUDA cannot start")
def test_cpu_pinned_is_ordinary_memory_without_cuda() -> None:
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    a = nv.nd.array(x, ctx=nv.cpu_pinned(0))
    np.testing.assert_array_equal((a * 2 + 1).asnumpy(), x * 2 + 1)  # CPU kernels run on it
    np.testing.assert_array_equal(a.copyto(nv.cpu()).asnumpy(), x)
    assert a.context == nv.cpu_pinned(0)


@pytest.fixture
def spies(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[Any]]:
    """Records pinned allocations, the stream of every storage.copy, and each event."""
    from numba import cuda

    seen: dict[str, list[Any]] = {"pinned": [], "copies": [], "events": []}
    real_pinned, real_copy, real_event = cuda.pinned_array, storage.copy, streams._new_event

    def pinned_array(*args: Any, **kw: Any) -> Any:
        seen["pinned"].append(args[0])
        return real_pinned(*args, **kw)

    def copy(src: Any, dst: Any, stream: Any = None) -> None:
        seen["copies"].append((storage.array_device(src), storage.array_device(dst), stream))
        real_copy(src, dst, stream)

    def new_event(device_id: int) -> Any:
        seen["events"].append(real_event(device_id))
        return seen["events"][-1]

    monkeypatch.setattr(cuda, "pinned_array", pinned_array)
    monkeypatch.setattr(storage, "copy", copy)
    monkeypatch.setattr(streams, "_new_event", new_event)
    monkeypatch.setattr(streams, "_completers", {})  # a fresh event free list
    storage.release_all(nv.cpu_pinned(0))  # no pooled block from another test
    return seen


@pytest.mark.gpu
def test_pinned_arrays_round_trip_through_the_gpu_asynchronously(spies: Any) -> None:
    x = np.random.default_rng(1).standard_normal((64, 33)).astype(np.float32)
    host = nv.nd.array(x, ctx=nv.cpu_pinned(0))
    assert spies["pinned"], "cpu_pinned storage was not page-locked"
    on_gpu = host.copyto(nv.gpu(0))
    y = nv.nd.relu(on_gpu * 2)  # a kernel reading the copy: ordered after it completed
    back = y.copyto(nv.cpu_pinned(0))
    plain = y.copyto(nv.cpu(0))
    np.testing.assert_array_equal(back.asnumpy(), np.maximum(x * 2, 0))
    np.testing.assert_array_equal(plain.asnumpy(), np.maximum(x * 2, 0))
    copies = spies["copies"]
    to_gpu = [s for src, dst, s in copies if (src, dst) == ("cpu", "gpu")]
    to_host = [s for src, dst, s in copies if (src, dst) == ("gpu", "cpu")]
    assert to_gpu[0] is not None
    assert to_gpu[0] != 0
    # both downloads on the copy worker's stream, not the legacy default stream (which
    # would wait for every compute stream); the pageable one is synchronous all the same
    assert len(to_host) == 2
    assert all(s is not None and s != 0 for s in to_host)
    assert spies["events"], "no copy completed through an event"


@pytest.mark.gpu
def test_the_pinned_copy_runs_on_the_copying_workers_stream(
    spies: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from nnvmpy.kernel import cuda as kcuda

    kernel_streams: list[Any] = []
    real = kcuda.launch_config

    def spy(name: str, ctx: Any, n: int) -> Any:
        config = real(name, ctx, n)
        kernel_streams.append(config[2])
        return config

    monkeypatch.setattr(kcuda, "launch_config", spy)
    x = np.arange(100, dtype=np.float32)
    got = (nv.nd.array(x, ctx=nv.cpu_pinned(0)).copyto(nv.gpu(0)) + 1).asnumpy()
    np.testing.assert_array_equal(got, x + 1)
    (upload,) = [s for src, dst, s in spies["copies"] if (src, dst) == ("cpu", "gpu")]
    # the upload runs on a copy worker's stream (COPY_TO_GPU, engine/per_device.py), not on
    # the stream of the compute worker that runs the kernel after it
    assert upload is not None
    assert kernel_streams
    assert all(s is not None and s is not upload for s in kernel_streams)


@pytest.mark.gpu
def test_pinned_pool_blocks_are_reused_and_stay_page_locked(spies: Any) -> None:
    ctx = nv.cpu_pinned(0)
    h = storage.alloc(1000, ctx)
    storage.free(h)
    h2 = storage.alloc(900, ctx)  # the same 1024-byte bucket: no new pinned allocation
    assert spies["pinned"] == [1024]
    a = h2.as_array((10, 10), np.float64)
    a[...] = 3.0
    assert isinstance(a, np.ndarray)
    assert float(a.sum()) == 300.0
    storage.free(h2)
