"""cuBLAS and CuPy work on the engine worker's stream (RunContext.stream) on a real GPU, so
the engine's completion event covers it and dependent functions see its results."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy import engine
from nnvmpy.engine import streams
from nnvmpy.kernel import cublas, gpu_lib
from nnvmpy.ops import matrix
from nnvmpy.resource import OpContext

pytestmark = [pytest.mark.gpu]


def _push_and_wait(fn: Any) -> None:
    eng = engine.get_engine()
    eng.push_sync(fn, nv.gpu(0), mutate_vars=[eng.new_var("cupy-test")])
    eng.wait_for_all()


def test_cublas_and_cupy_use_run_ctx_stream(cupy_ready: Any) -> None:
    from numba import cuda

    a = cuda.to_device(np.ones((64, 32), np.float32))
    b = cuda.to_device(np.ones((32, 16), np.float32))
    out = cuda.device_array((64, 16), np.float32)
    seen: dict[str, Any] = {}

    def fn(rc: Any) -> None:
        matrix.gemm(OpContext(False, rc, []), out, "write", a, False, b, False)
        seen["stream"] = gpu_lib.stream_ptr(rc.stream)
        seen["cublas"] = cublas.bound_stream(0)
        seen["cupy"] = int(gpu_lib.cupy_stream(rc.stream).ptr)

    _push_and_wait(fn)
    assert seen["cublas"] == seen["stream"]
    assert seen["cupy"] == seen["stream"]
    threaded = not isinstance(engine.get_engine(), engine.NaiveEngine)
    if streams.enabled() and threaded:  # a worker's own stream, not the default one
        assert seen["stream"] != 0
    np.testing.assert_array_equal(out.copy_to_host(), np.full((64, 16), 32.0))


def test_cupy_work_on_the_worker_stream_completes_with_the_function(cupy_ready: Any) -> None:
    """The engine completes a GPU function by an event on its stream: CuPy work queued on
    that stream inside the function is done before a reader of the array runs."""
    x = nv.nd.zeros((1024, 1024), ctx=nv.gpu(0))  # sums of 20s stay exact in float32
    x.wait_to_read()

    def fn(rc: Any) -> None:
        with gpu_lib.cupy_stream(rc.stream):
            c = gpu_lib.as_cupy(x._data)
            for _ in range(20):  # long enough to still run when fn returns
                c += 1

    eng = engine.get_engine()
    eng.push_sync(fn, nv.gpu(0), mutate_vars=[x._chunk.var])
    # nd.sum runs on a worker's stream too: it must start after the CuPy adds
    assert float(nv.nd.sum(x).asscalar()) == 20.0 * 1024 * 1024
    np.testing.assert_array_equal(x.asnumpy(), np.full((1024, 1024), 20.0, np.float32))


def test_dependent_gemms_through_the_engine(cupy_ready: Any) -> None:
    """A chain of dots, each reading the last one's output, on whatever workers and
    streams the engine picks: every step waits for the one before."""
    n = 256
    x = nv.nd.ones((n, n), ctx=nv.gpu(0)) * 0.5
    eye = nv.nd.array(np.eye(n, dtype=np.float32) * 2, ctx=nv.gpu(0))
    y = x
    for _ in range(12):
        y = nv.nd.dot(y, eye)  # doubles every entry
    np.testing.assert_array_equal(y.asnumpy(), np.full((n, n), 0.5 * 2**12, np.float32))


def test_cupy_stream_of_none_is_the_null_stream(cupy_ready: Any) -> None:
    assert gpu_lib.cupy_stream(None) is cupy_ready.cuda.Stream.null
    assert gpu_lib.stream_ptr(None) == 0
