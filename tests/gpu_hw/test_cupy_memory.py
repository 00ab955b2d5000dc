"""CuPy and numba share memory on a real GPU: zero-copy views both ways, and the storage
pool's device blocks coming from (and going back to) CuPy's memory pool."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy.base import Context
from nnvmpy.kernel import gpu_lib, storage

pytestmark = [pytest.mark.gpu]


def _ptr(x: Any) -> int:
    return int(x.__cuda_array_interface__["data"][0])


def test_numba_array_as_cupy_is_a_view(cupy_ready: Any) -> None:
    from numba import cuda

    d = cuda.to_device(np.arange(12, dtype=np.float32).reshape(3, 4))
    c = gpu_lib.as_cupy(d)
    assert isinstance(c, cupy_ready.ndarray)
    assert (c.shape, c.dtype, _ptr(c)) == ((3, 4), np.float32, _ptr(d))
    c *= 2  # a write through CuPy is seen by numba
    cupy_ready.cuda.runtime.deviceSynchronize()
    np.testing.assert_array_equal(d.copy_to_host(), 2 * np.arange(12).reshape(3, 4))


def test_cupy_array_as_numba_is_a_view(cupy_ready: Any) -> None:
    c = cupy_ready.arange(10, dtype=cupy_ready.float64)
    d = gpu_lib.as_numba(c)
    assert _ptr(d) == _ptr(c)
    d[3:5] = np.array([-1.0, -2.0])  # a write through numba is seen by CuPy
    cupy_ready.cuda.runtime.deviceSynchronize()
    want = np.arange(10.0)
    want[3:5] = [-1, -2]
    np.testing.assert_array_equal(cupy_ready.asnumpy(c), want)


def test_ndarray_data_on_gpu_is_cupy_pool_memory_and_viewable(cupy_ready: Any) -> None:
    pool = cupy_ready.get_default_memory_pool()
    n = 28 << 20  # 112 MiB of float32: a bucket (7 x 16 MiB) no other test uses
    storage.release_all(nv.gpu(0))
    used_before = pool.used_bytes()
    x = nv.nd.arange(0, n, ctx=nv.gpu(0), dtype=np.float32)
    x.wait_to_read()
    assert pool.used_bytes() - used_before >= 4 * n  # its block came from CuPy's pool
    c = gpu_lib.as_cupy(x._data)
    assert c.shape == (n,)
    head = cupy_ready.asnumpy(c[:5])
    np.testing.assert_array_equal(head, np.arange(5, dtype=np.float32))
    del x, c


def test_storage_blocks_come_from_and_return_to_cupys_pool(cupy_ready: Any) -> None:
    ctx = Context("gpu", 0)
    pool = cupy_ready.get_default_memory_pool()
    size = 48 << 20  # a bucket no other test uses (a multiple of the 16 MiB linear cutoff)
    storage.release_all(ctx)
    used0 = pool.used_bytes()
    h = storage.alloc(size, ctx)
    assert pool.used_bytes() - used0 >= size  # taken from CuPy's pool
    ptr = _ptr(h.as_array((size,), np.uint8))
    storage.free(h)
    assert pool.used_bytes() - used0 >= size  # kept by our pool for reuse
    h2 = storage.alloc(size, ctx)
    assert _ptr(h2.as_array((size,), np.uint8)) == ptr  # reused by our pool
    storage.free(h2)
    held = pool.total_bytes()
    storage.release_all(ctx)  # our pool lets go: the memory is CuPy's pool's to reuse
    assert pool.used_bytes() - used0 < size
    c = cupy_ready.empty(size, dtype=cupy_ready.uint8)  # CuPy reuses it, no new cudaMalloc
    assert pool.total_bytes() == held
    del c


def test_small_blocks_are_pieces_of_one_cupy_block(cupy_ready: Any) -> None:
    """Blocks up to storage.SLAB_MAX_BLOCK are carved from one SLAB_BYTES block of CuPy's
    pool, one after another, each readable and writable on its own."""
    ctx = Context("gpu", 0)
    pool = cupy_ready.get_default_memory_pool()
    storage.release_all(ctx)  # no slab left over: the next request takes a new one
    used0 = pool.used_bytes()
    handles = [storage.alloc(2000, ctx) for _ in range(3)]  # the 2048-byte bucket
    assert pool.used_bytes() - used0 == storage.SLAB_BYTES
    views = [gpu_lib.as_cupy(h.as_array((500,), np.float32)) for h in handles]
    ptrs = [_ptr(h.as_array((2000,), np.uint8)) for h in handles]
    assert [b - a for a, b in itertools.pairwise(ptrs)] == [2048, 2048]
    for i, v in enumerate(views):
        v.fill(float(i + 1))
    assert [float(v.sum()) for v in views] == [500.0, 1000.0, 1500.0]
    del views
    for h in handles:
        storage.free(h)
    storage.release_all(ctx)


def test_cupy_view_of_a_storage_block_keeps_it_alive(cupy_ready: Any) -> None:
    """A CuPy view made from a pooled block holds the block's memory (its owner chain
    ends at CuPy's MemoryPointer), so a value written there stays readable."""
    ctx = Context("gpu", 0)
    h = storage.alloc(4096, ctx)
    c = gpu_lib.as_cupy(h.as_array((1024,), np.float32))
    c.fill(3.0)
    storage.free(h)
    storage.release_all(ctx)
    assert float(c.sum()) == 3.0 * 1024


def test_direct_views_of_a_block_read_and_write_its_bytes(cupy_ready: Any) -> None:
    """storage.device_view builds numba arrays on a block's memory pointer: a 2-D view, a
    flat view and a view at an offset (sub_handle) all address the block's bytes."""
    ctx = Context("gpu", 0)
    h = storage.alloc(4096, ctx)
    grid = h.as_array((4, 8), np.float32)
    grid.copy_to_device(np.arange(32, dtype=np.float32).reshape(4, 8))
    flat = gpu_lib.as_cupy(h.as_array((32,), np.float32))
    np.testing.assert_array_equal(cupy_ready.asnumpy(flat), np.arange(32, dtype=np.float32))
    part = storage.sub_handle(h, 64, 64, owner=None).as_array((4, 4), np.float32)
    np.testing.assert_array_equal(part.copy_to_host(), np.arange(16, 32.0).reshape(4, 4))
    assert _ptr(part) == _ptr(grid) + 64
    storage.free(h)


def test_scratch_is_reused_on_its_stream_only(cupy_ready: Any) -> None:
    """kernel/scratch.py relies on CuPy's pool being stream-ordered: a scratch block freed
    on a worker's stream comes back for the next call on that stream (no cudaMalloc), and
    never for another stream, whose kernels are not ordered after the first's."""
    from types import SimpleNamespace

    from numba import cuda

    from nnvmpy.kernel import scratch
    from nnvmpy.resource import OpContext

    s1, s2 = cuda.stream(), cuda.stream()
    on = [OpContext(run_ctx=SimpleNamespace(ctx=nv.gpu(0), stream=s)) for s in (s1, s2)]
    pool = cupy_ready.get_default_memory_pool()
    n = (37 << 20) // 4  # 37 MiB of float32: a size no other test asks for
    a = scratch.empty(on[0], n, np.float32)
    ptr, held = _ptr(a), pool.total_bytes()
    a.copy_to_device(np.ones(n, np.float32), stream=s1)
    del a  # the call returned: the block goes back to the pool, for s1 only
    b = scratch.empty(on[0], n, np.float32)
    assert _ptr(b) == ptr
    assert pool.total_bytes() == held
    c = scratch.empty(on[1], n, np.float32)
    assert _ptr(c) != ptr  # the other stream gets other memory while b lives...
    del b
    d = scratch.empty(on[1], n, np.float32)
    assert _ptr(d) != ptr  # ...and after b died too: s2 is not ordered after s1's kernels
    table = scratch.upload(on[1], np.arange(10, dtype=np.int64))
    s2.synchronize()
    np.testing.assert_array_equal(table.copy_to_host(), np.arange(10))
    del c, d, table
    pool.free_all_blocks()
