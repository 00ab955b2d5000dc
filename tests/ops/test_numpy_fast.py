"""ops/_numpy_fast.py: NumPy ufuncs in chunks across threads give NumPy's own results, in
every write mode, for non-contiguous arrays, and in a forked child process."""

from __future__ import annotations

import multiprocessing
import warnings

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy.ops._numpy_fast import PARALLEL_CUTOFF, run_chunked, threaded

N = PARALLEL_CUTOFF * 3 + 7  # several chunks and a ragged tail


def test_chunks_give_the_ufuncs_result_without_warnings() -> None:
    x = np.random.default_rng(0).uniform(-1.2, 1.2, size=N)
    out = np.full_like(x, np.nan)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        threaded(np.arcsin)(x, out=out)  # NaN beyond +-1: silently, as MXNet
    np.testing.assert_array_equal(np.isnan(out), np.abs(x) > 1)
    inside = np.abs(x) <= 1
    np.testing.assert_array_equal(out[inside], np.arcsin(x[inside]))


def test_scalars_pass_to_every_chunk_and_strided_arrays_take_one_call() -> None:
    x = np.random.default_rng(1).uniform(0.5, 2, size=(2, N))
    out = np.empty((2, N))
    run_chunked(np.power, out, (x, 1.5))
    np.testing.assert_array_equal(out, np.power(x, 1.5))
    strided = x[:, ::2]
    out2 = np.empty(strided.shape)
    run_chunked(np.power, out2, (strided, 2.0))
    np.testing.assert_array_equal(out2, strided**2.0)


@pytest.mark.parametrize("op", ["tan", "log2", "sigmoid"])
def test_ops_through_the_threaded_path_match_numpy_and_add(op: str) -> None:
    x = np.random.default_rng(2).uniform(0.1, 1.2, size=N).astype(np.float32)
    ref = {"tan": np.tan, "log2": np.log2, "sigmoid": lambda v: 1 / (1 + np.exp(-v))}[op]
    got = getattr(nv.nd, op)(nv.nd.array(x)).asnumpy()
    np.testing.assert_allclose(got, ref(x.astype(np.float64)), rtol=2e-6, atol=1e-7)
    out = nv.nd.ones((N,))
    exe = getattr(nv.sym, op)(nv.sym.var("x")).bind(
        nv.cpu(), {"x": nv.nd.array(x)}, args_grad=None, grad_req="null"
    )
    exe.forward()
    out += exe.outputs[0]
    np.testing.assert_allclose(out.asnumpy(), 1 + ref(x.astype(np.float64)), rtol=2e-6, atol=1e-6)


def _child(queue: multiprocessing.Queue) -> None:  # type: ignore[type-arg]
    x = np.linspace(0.1, 0.9, N)
    out = np.empty_like(x)
    threaded(np.arctanh)(x, out=out)
    queue.put(float(np.abs(out - np.arctanh(x)).max()))


def test_a_forked_child_gets_its_own_pool() -> None:
    threaded(np.sin)(np.zeros(N), out=np.empty(N))  # the parent's pool exists
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    proc = ctx.Process(target=_child, args=(queue,))
    proc.start()
    proc.join(60)
    if proc.is_alive():  # hung: a live child would hold this worker at its exit
        proc.kill()
        proc.join()
        pytest.fail("the forked child hung")
    assert proc.exitcode == 0, "the child failed"
    assert queue.get(timeout=5) == 0.0


def test_float32_parts_keeps_inline_sized_arrays_off_the_thread_teams() -> None:
    """Below threads.parallel_size() (where nd runs an op in the calling thread) the
    serial loop runs: a prange there would give the caller an OpenMP team of its own,
    and two teams on two cores cut every team's spin (GNU OpenMP's throttled spin), which
    made later mid-size ops 2x slower for the rest of the process."""
    from nnvmpy import threads
    from nnvmpy.ops._numpy_fast import float32_parts

    calls: list[str] = []
    run = float32_parts(
        lambda x, out: calls.append("other"),
        lambda x, out: calls.append("serial"),
        lambda x, out, k: calls.append(f"parallel {k}"),
    )
    n = threads.parallel_size()
    run(np.zeros(n - 1, np.float32), np.empty(n - 1, np.float32))
    assert calls == ["serial"]
    with threads.region() as free:
        pass
    run(np.zeros(n, np.float32), np.empty(n, np.float32))
    assert calls[-1] == ("serial" if free == 1 else f"parallel {free}")
    run(np.zeros(n, np.float64), np.empty(n, np.float64))
    assert calls[-1] == "other"
