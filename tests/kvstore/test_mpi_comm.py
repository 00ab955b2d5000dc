"""The negotiating communication worker (mpi_comm.py): two MPI processes on loopback.

Each 2-process test runs `mpiexec -n 2 python _mpi_comm_worker.py SCENARIO`; the workers
check their sums against NumPy themselves and print how they ended. Every run is bounded
by NNVMPY_KVSTORE_TIMEOUT inside and a wall-clock timeout outside.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import nnvmpy as nv
from nnvmpy.kvstore import bucket, mpi_comm

WORKER = str(Path(__file__).with_name("_mpi_comm_worker.py"))


def _mpiexec() -> str:
    beside = Path(sys.executable).with_name("mpiexec")
    found = str(beside) if beside.exists() else shutil.which("mpiexec")
    if found is None:
        pytest.skip("needs the dist extra: pip install 'nnvmpy[dist]'")
    return found


def _run(scenario: str, kv_timeout: float, wall: float = 90) -> tuple[int, str, float]:
    pytest.importorskip("mpi4py", reason="needs the dist extra: pip install 'nnvmpy[dist]'")
    argv = [_mpiexec(), "-disable-auto-cleanup", "-n", "2", sys.executable, WORKER, scenario]
    env = dict(os.environ, NNVMPY_KVSTORE_TIMEOUT=str(kv_timeout))
    started = time.monotonic()
    try:
        done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=wall)
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"{scenario}: the workers did not finish within {wall} s: {exc.output}")
    return done.returncode, done.stdout + done.stderr, time.monotonic() - started


@pytest.mark.timeout(120)
def test_jobs_ready_in_different_orders_sum_like_numpy() -> None:
    rc, out, _ = _run("sums", kv_timeout=60)
    assert rc == 0, out
    assert "rank 0 ok" in out
    assert "rank 1 ok" in out


@pytest.mark.timeout(120)
def test_engine_operations_hand_gradients_over_and_complete_later() -> None:
    rc, out, _ = _run("engine", kv_timeout=60)
    assert rc == 0, out
    assert "rank 0 ok" in out
    assert "rank 1 ok" in out


@pytest.mark.timeout(120)
def test_different_shapes_for_one_collective_raise_on_both_workers() -> None:
    rc, out, _ = _run("mismatch", kv_timeout=60)
    assert rc != 0, out
    for rank, size in ((0, 3), (1, 4)):
        assert f"rank {rank} named error: kvstore: workers disagree on collective" in out, out
        assert f"rank {rank} has allreduce of float32 ({size},)" in out, out


@pytest.mark.timeout(120)
def test_a_worker_that_raises_names_its_error_to_the_other() -> None:
    rc, out, seconds = _run("raised", kv_timeout=60)
    assert rc != 0, out
    assert "rank 0 named error: kvstore: worker 1 failed: ValueError: a bug" in out, out
    assert seconds < 30  # the peer learns at once, not at the 60 s timeout


@pytest.mark.timeout(120)
def test_a_silent_worker_makes_the_other_time_out_with_a_named_error() -> None:
    rc, out, seconds = _run("silent", kv_timeout=2)
    assert rc != 0, out
    assert "waited 2 s for the other workers (NNVMPY_KVSTORE_TIMEOUT)" in out, out
    assert seconds < 30  # not the 60 s the silent worker sleeps


@pytest.mark.timeout(120)
def test_a_killed_worker_ends_the_job_in_bounded_time() -> None:
    rc, out, seconds = _run("killed", kv_timeout=3)
    assert rc != 0, out
    assert seconds < 30, out
    assert "rank 0 ok" not in out, out


def _job(job_id: int, priority: int, nbytes: int, dtype: type = np.float32) -> SimpleNamespace:
    n = nbytes // np.dtype(dtype).itemsize
    return SimpleNamespace(id=job_id, priority=priority, array=np.zeros(n, dtype))


def test_buckets_take_higher_priority_first_and_fuse_small_tensors_per_dtype() -> None:
    jobs = [
        _job(1, 0, 400),
        _job(2, 5, 400),  # first: highest priority; job 1 joins its float32 bucket
        _job(3, 5, 4000),  # larger than a bucket: alone, in place
        _job(4, 0, 400, np.float64),  # its own dtype, its own bucket
        _job(5, 0, 400),  # 2 + 1 + 5 would be 1200 bytes: a new bucket
        _job(6, 0, 400),
    ]
    plan = bucket.plan_buckets(jobs, bucket_bytes=1000)
    assert [[j.id for j in b] for b in plan] == [[2, 1], [3], [4], [5, 6]]
    assert sorted(j.id for b in plan for j in b) == [1, 2, 3, 4, 5, 6]
    for b in plan:
        assert len({j.array.dtype for j in b}) == 1
        assert len(b) == 1 or sum(j.array.nbytes for j in b) <= 1000


def test_without_mpi4py_a_named_error_says_how_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "mpi4py", None)
    with pytest.raises(nv.NNVMError, match=r"pip install 'nnvmpy\[dist\]'"):
        mpi_comm.load_mpi()


_DTYPES = st.sampled_from([np.float32, np.int64])


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(-3, 3), st.integers(0, 3000), st.sampled_from([np.float32, np.int64])
        ),
        max_size=20,
    ),
    st.integers(8, 2000),
)
def test_bucket_plan_properties(specs: list[tuple[int, int, type]], limit: int) -> None:
    jobs = [_job(i, p, n - n % 8, d) for i, (p, n, d) in enumerate(specs)]
    plan = bucket.plan_buckets(jobs, bucket_bytes=limit)
    flat = [j for b in plan for j in b]
    assert sorted(j.id for j in flat) == list(range(len(jobs)))  # each job exactly once
    for b in plan:
        assert len({j.array.dtype for j in b}) == 1
        assert len(b) == 1 or sum(j.array.nbytes for j in b) <= limit
    firsts = [(-b[0].priority, b[0].id) for b in plan]
    assert firsts == sorted(firsts)  # calls start in priority order
