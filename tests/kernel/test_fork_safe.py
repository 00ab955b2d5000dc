"""A process forked after numba started GNU OpenMP still runs parallel kernels (serially).

Without kernel/fork_safe.py numba stops such a child with SIGTERM at its first `prange`
region ("fork() called from a process already using GNU OpenMP"): these tests then see
the child's exit status -15 instead of 0.
"""

from __future__ import annotations

import os

import numba
import numpy as np
import pytest
from numba import prange

import nnvmpy as nv
from nnvmpy.kernel import fork_safe
from nnvmpy.kernel.cpu import cached_njit, configure_threading_layer

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")


@cached_njit(cache_tag="test_fork", parallel=True, nogil=True)
def _sum_and_threads(x, seen):  # type: ignore[no-untyped-def]
    """A prange reduction that also marks which team threads ran a chunk."""
    total = 0.0
    for i in prange(x.size):
        total += x[i]
        seen[numba.get_thread_id()] = 1
    return total


def _uses_gnu_openmp() -> bool:
    configure_threading_layer()
    _sum_and_threads(np.ones(4), np.zeros(64, np.int64))  # numba's layer has started
    if numba.threading_layer() != "omp":
        return False
    from numba.np.ufunc import omppool

    return getattr(omppool, "openmp_vendor", "GNU") == "GNU"


needs_gnu_openmp = pytest.mark.skipif(
    not _uses_gnu_openmp(), reason="numba's layer here is fork-safe by itself"
)


@needs_gnu_openmp
@pytest.mark.timeout(120)
def test_a_forked_child_runs_prange_regions_serially_with_the_same_results(run_in_child) -> None:
    x = np.arange(1_000_000, dtype=np.float64)  # an exact sum in float64
    seen = np.zeros(64, np.int64)
    assert _sum_and_threads(x, seen) == x.sum()  # the parent's team has started

    def child() -> bool:
        seen = np.zeros(64, np.int64)
        total = _sum_and_threads(x, seen)
        return bool(fork_safe.serial_regions() and total == x.sum() and seen.sum() == 1)

    assert run_in_child(child) == 0
    assert not fork_safe.serial_regions()  # the parent keeps its team
    seen[:] = 0
    assert _sum_and_threads(x, seen) == x.sum()


@needs_gnu_openmp
@pytest.mark.timeout(300)
def test_a_forked_child_runs_large_operators(run_in_child) -> None:
    """Operators large enough for a team: element-wise, reduce, broadcast, pooling,
    convolution and topk, each against NumPy in the child."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal(600_000).astype(np.float32)
    images = rng.standard_normal((4, 8, 64, 64)).astype(np.float32)
    weight = rng.standard_normal((16, 8, 3, 3)).astype(np.float32)

    def run() -> dict[str, np.ndarray]:
        rows = nv.nd.array(x.reshape(300, 2000))
        return {
            "relu": nv.nd.relu(nv.nd.array(x)).asnumpy(),
            "sum": nv.nd.sum(rows, axis=1).asnumpy(),
            "broadcast": (rows + nv.nd.array(x[:2000].reshape(1, 2000))).asnumpy(),
            "pool": nv.nd.Pooling(
                nv.nd.array(images), kernel=(2, 2), stride=(2, 2), pool_type="max"
            ).asnumpy(),
            "conv": nv.nd.Convolution(
                nv.nd.array(images), nv.nd.array(weight), kernel=(3, 3), pad=(1, 1),
                num_filter=16, no_bias=True,
            ).asnumpy(),
            "topk": nv.nd.topk(rows, k=3).asnumpy(),
        }  # fmt: skip

    parent = run()
    rows = x.reshape(300, 2000)
    # a float32 sum's rounding depends on its order (team width, serial child): bounded by
    # the row's magnitude, not its (possibly tiny) value
    sum_bound = 2e-5 * np.abs(rows).sum(axis=1)
    np.testing.assert_array_equal(parent["relu"], np.maximum(x, 0))
    assert (np.abs(parent["sum"] - rows.sum(axis=1, dtype=np.float64)) <= sum_bound).all()
    np.testing.assert_array_equal(parent["broadcast"], rows + x[:2000])
    np.testing.assert_array_equal(
        parent["pool"], images.reshape(4, 8, 32, 2, 32, 2).max(axis=(3, 5))
    )
    np.testing.assert_array_equal(parent["topk"], np.argsort(-rows, axis=1, kind="stable")[:, :3])

    def child() -> bool:
        got = run()
        same = {k: np.array_equal(got[k], parent[k]) for k in ("relu", "broadcast", "pool", "topk")}
        same["sum"] = bool((np.abs(got["sum"] - parent["sum"]) <= 2 * sum_bound).all())
        same["conv"] = np.allclose(got["conv"], parent["conv"], rtol=1e-4, atol=1e-3)
        print("child:", same, flush=True)  # in the captured output when it fails
        return all(same.values())

    assert run_in_child(child) == 0


@needs_gnu_openmp
def test_a_trampoline_that_cannot_be_built_leaves_numbas_binding(monkeypatch) -> None:
    """If numba's internals move, install() warns and returns False instead of failing
    every kernel compile."""

    def broken(_: int) -> None:
        raise AttributeError("no codegen here")

    monkeypatch.setattr(fork_safe, "_installed", False)
    monkeypatch.setattr(fork_safe, "_build_trampoline", broken)
    with pytest.warns(RuntimeWarning, match="unsafe in forked children"):
        assert fork_safe.install() is False
    assert not fork_safe.installed()
