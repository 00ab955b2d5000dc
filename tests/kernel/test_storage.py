"""Pooled storage: rounding policy, reuse and counters, alignment, views, copies, threads."""

from __future__ import annotations

import itertools
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from nnvmpy.base import Context, NNVMError
from nnvmpy.kernel import storage

MiB = 1 << 20
_ids = itertools.count(100)


@pytest.fixture
def ctx() -> Context:
    """A CPU context of its own (CPU ids are informational), so each test has a fresh pool."""
    return Context("cpu", next(_ids))


@pytest.mark.parametrize(
    ("nbytes", "block"),
    [
        (0, 64),
        (1, 64),
        (64, 64),
        (65, 128),
        (4096, 4096),
        (4097, 8192),
        (16 * MiB, 16 * MiB),
        (16 * MiB + 1, 32 * MiB),
        (40 * MiB, 48 * MiB),
    ],
)
def test_rounding_policy(nbytes, block):
    assert storage.round_size(nbytes) == block


def test_negative_size_is_refused(ctx):
    with pytest.raises(NNVMError, match="nbytes must be >= 0"):
        storage.alloc(-1, ctx)


def test_a_freed_block_is_reused_by_a_request_of_the_same_bucket(ctx):
    h = storage.alloc(1000, ctx)
    addr = h.as_array(1000, np.uint8).ctypes.data
    assert (h.ctx, h.nbytes, h.size) == (ctx, 1000, 1024)
    storage.free(h)
    h2 = storage.alloc(700, ctx)  # same 1024-byte bucket
    assert h2.as_array(700, np.uint8).ctypes.data == addr
    h3 = storage.alloc(2000, ctx)  # another bucket: fresh memory
    s = storage.stats(ctx)
    assert (s.allocations, s.reuses, s.frees) == (2, 1, 1)
    assert (s.bytes_in_use, s.bytes_pooled, s.peak_bytes) == (1024 + 2048, 0, 3072)
    storage.free(h2)
    storage.free(h3)
    s = storage.stats(ctx)
    assert (s.bytes_in_use, s.bytes_pooled, s.peak_bytes) == (0, 3072, 3072)


def test_release_all_drops_pooled_blocks_only(ctx):
    live = storage.alloc(100, ctx)
    storage.free(storage.alloc(5000, ctx))
    assert storage.stats(ctx).bytes_pooled == 8192
    storage.release_all(ctx)
    s = storage.stats(ctx)
    assert (s.bytes_pooled, s.bytes_in_use) == (0, 128)
    storage.alloc(5000, ctx)  # nothing to reuse any more
    assert storage.stats(ctx).allocations == 3
    live.as_array(25, np.float32)[:] = 1.0  # still valid
    storage.reset_stats(ctx)
    s = storage.stats(ctx)
    assert (s.allocations, s.reuses, s.frees, s.peak_bytes) == (0, 0, 0, s.bytes_in_use)


@pytest.mark.parametrize("nbytes", [1, 63, 100, 4096, 3 * MiB + 5])
def test_cpu_blocks_are_64_byte_aligned(ctx, nbytes):
    h = storage.alloc(nbytes, ctx)
    assert h.as_array(nbytes, np.uint8).ctypes.data % 64 == 0
    storage.free(h)


def test_as_array_gives_views_of_the_block(ctx):
    h = storage.alloc(24, ctx)
    a = h.as_array((2, 3), np.float32)
    assert (a.shape, a.dtype, a.flags.c_contiguous) == ((2, 3), np.float32, True)
    a[...] = np.arange(6).reshape(2, 3)
    b = h.as_array(6, "float32")
    np.testing.assert_array_equal(b, np.arange(6, dtype=np.float32))  # same memory
    assert h.as_array((), np.float64).shape == ()
    with pytest.raises(NNVMError, match=r"needs 32 bytes but the handle holds 24"):
        h.as_array((4,), np.float64)


def test_using_or_freeing_a_freed_handle_raises(ctx):
    h = storage.alloc(8, ctx)
    storage.free(h)
    with pytest.raises(NNVMError, match="was freed"):
        h.as_array(2, np.float32)
    with pytest.raises(NNVMError, match="already freed"):
        storage.free(h)
    assert storage.stats(ctx).frees == 1  # the failed free changed nothing
    h2 = storage.alloc(8, ctx)
    assert storage.stats(ctx).reuses == 1
    assert "live" in repr(h2)


def test_stats_need_a_context():
    with pytest.raises(NNVMError, match="expected a Context"):
        storage.stats("cpu")


@given(st.lists(st.tuples(st.booleans(), st.integers(0, 20_000)), max_size=40))
def test_counters_stay_consistent_over_any_alloc_free_sequence(ops):
    ctx = Context("cpu", next(_ids))
    live: list[storage.Handle] = []
    n_alloc = system_bytes = 0
    for do_free, nbytes in ops:
        if do_free and live:
            storage.free(live.pop(nbytes % len(live)))
        else:
            fresh = storage.stats(ctx).allocations
            live.append(storage.alloc(nbytes, ctx))
            n_alloc += 1
            if storage.stats(ctx).allocations > fresh:
                system_bytes += live[-1].size
    s = storage.stats(ctx)
    in_use = sum(h.size for h in live)
    assert s.allocations + s.reuses == n_alloc
    assert s.bytes_in_use == in_use
    assert s.bytes_in_use + s.bytes_pooled == system_bytes  # every block is live or pooled
    assert s.peak_bytes >= in_use
    addrs = [h.as_array(h.nbytes, np.uint8).ctypes.data for h in live if h.nbytes]
    assert len(set(addrs)) == len(addrs)  # no block is handed out twice


def test_allocator_is_thread_safe(ctx):
    n_threads, rounds = 8, 300
    barrier = threading.Barrier(n_threads)

    def work(tid: int) -> bool:
        rng = np.random.default_rng(tid)
        barrier.wait()
        held: list[tuple[storage.Handle, int]] = []
        for i in range(rounds):
            if held and rng.random() < 0.5:
                h, tag = held.pop(int(rng.integers(len(held))))
                if not np.all(h.as_array(h.nbytes, np.uint8) == tag):
                    return False  # another thread wrote into a block we own
                storage.free(h)
            else:
                h = storage.alloc(int(rng.choice([16, 200, 1000, 5000])), ctx)
                tag = (tid * 31 + i) % 251
                h.as_array(h.nbytes, np.uint8)[:] = tag
                held.append((h, tag))
        for h, _ in held:
            storage.free(h)
        return True

    with ThreadPoolExecutor(n_threads) as pool:
        assert all(pool.map(work, range(n_threads)))
    s = storage.stats(ctx)
    assert s.bytes_in_use == 0
    assert s.frees == s.allocations + s.reuses
    assert s.reuses > 0


def test_copy_between_cpu_arrays():
    src = np.arange(6, dtype=np.float32).reshape(2, 3)
    dst = np.zeros((3, 2), np.float32).T  # non-contiguous destination is fine on the CPU
    storage.copy(src, dst)
    np.testing.assert_array_equal(dst, src)


@pytest.mark.parametrize(
    ("src", "dst", "match"),
    [
        (np.zeros(3), np.zeros(4), r"src is \(3,\) float64 but dst is \(4,\) float64"),
        (np.zeros(3), np.zeros(3, np.float32), "they must match"),
        ([1, 2, 3], np.zeros(3), "src must be a NumPy or CUDA array, got list"),
        (np.zeros(3), "x", "dst must be a NumPy or CUDA array, got str"),
    ],
)
def test_copy_rejects_mismatches(src, dst, match):
    with pytest.raises(NNVMError, match=match):
        storage.copy(src, dst)


def test_poisoning_fills_new_and_reused_blocks_with_nan(
    ctx: Context, monkeypatch: pytest.MonkeyPatch
) -> None:
    """NNVMPY_POISON_MEMORY: a kernel reading memory it never wrote sees NaN, not zeros."""
    monkeypatch.setattr(storage, "poisoning", True)
    first = storage.alloc(4096, ctx)
    assert np.isnan(first.as_array((1024,), np.float32)).all()
    first.as_array((1024,), np.float32)[:] = 1.0
    storage.free(first)
    again = storage.alloc(4096, ctx)  # the same block back from the pool, poisoned again
    assert np.isnan(again.as_array((512,), np.float64)).all()
    assert (again.as_array((1024,), np.int32) == -1).all()


def test_large_cpu_blocks_start_at_staggered_page_offsets() -> None:
    # 4K aliasing: arrays whose element i shares its address modulo 4 KiB slow down loops
    # that store out[i] while loading x[i + k]; large blocks rotate their page offset
    cpu = Context("cpu", 0)
    storage.release_all(cpu)  # fresh blocks, not ones pooled by earlier tests
    handles = [storage.alloc(1 << 20, cpu) for _ in range(8)]
    try:
        offsets = [h.as_array((1 << 18,), np.float32).ctypes.data % 4096 for h in handles]
        assert len(set(offsets)) == 8
        assert all(o % storage.ALIGNMENT == 0 for o in offsets)
        for h in handles:  # the whole block is usable memory
            a = h.as_array((1 << 18,), np.float32)
            a[:] = 1.0
            assert a.sum() == 1 << 18
    finally:
        for h in handles:
            storage.free(h)
    small = storage.alloc(4096, cpu)
    assert small.as_array((1024,), np.float32).ctypes.data % storage.ALIGNMENT == 0
    storage.free(small)
