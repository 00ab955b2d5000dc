"""nv.context: MXNet's device names, the current-device scope and its thread-locality."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy import context


def test_context_module_has_mxnets_names() -> None:
    assert context.Context is nv.Context
    assert context.cpu() == nv.cpu() == nv.Context("cpu", 0)
    assert context.gpu(2) == nv.gpu(2)
    assert context.cpu_pinned(1) == nv.Context("cpu_pinned", 1)
    assert context.num_gpus() == nv.num_gpus() >= 0
    assert context.current_context() == nv.current_context() == nv.cpu()


@pytest.mark.parametrize(
    ("ctx", "typeid"),
    [(nv.cpu(), 1), (nv.gpu(), 2), (nv.cpu_pinned(), 3), (nv.Context("cpu_shared", 0), 5)],
)
def test_device_type_ids_are_mxnets(ctx: nv.Context, typeid: int) -> None:
    assert ctx.device_typeid == typeid
    assert nv.Context.devtype2str[typeid] == ctx.device_type
    assert nv.Context.devstr2type[ctx.device_type] == typeid


def test_with_ctx_sets_the_current_context_and_restores_it() -> None:
    with nv.cpu(3) as outer:
        assert outer == nv.cpu(3)
        assert nv.current_context() == nv.cpu(3)
        with nv.Context("cpu_shared", 1):
            assert nv.current_context() == nv.Context("cpu_shared", 1)
            assert nv.nd.zeros((2,)).context == nv.Context("cpu_shared", 1)
        assert nv.current_context() == nv.cpu(3)
    assert nv.current_context() == nv.cpu()


def test_current_context_is_thread_local() -> None:
    entered, release = threading.Event(), threading.Event()
    seen: list[nv.Context] = []

    def worker() -> None:
        with nv.cpu(10):
            entered.set()
            release.wait()
            seen.append(nv.current_context())

    thread = threading.Thread(target=worker)
    thread.start()
    entered.wait()
    with nv.cpu(1):  # this thread's scope does not leak into the worker's, nor back
        release.set()
        thread.join()
        assert nv.current_context() == nv.cpu(1)
    assert seen == [nv.cpu(10)]


def test_default_ctx_is_a_per_thread_class_property_as_in_mxnet() -> None:
    # MXNet 1.x: `Context.default_ctx` reads and sets this thread's default device
    assert nv.Context.default_ctx == nv.cpu()
    assert not callable(nv.Context.default_ctx)  # a property, not a method (MXNet's spelling)
    seen: list[nv.Context] = []
    thread = threading.Thread(target=lambda: seen.append(nv.Context.default_ctx))
    try:
        nv.Context.default_ctx = nv.Context("cpu", 11)
        assert nv.nd.zeros((1,)).context == nv.cpu(11)
        thread.start()
        thread.join()
    finally:
        nv.Context.default_ctx = nv.cpu()
    assert seen == [nv.cpu()]
    with pytest.raises(nv.NNVMError, match="expected a Context"):
        nv.Context.default_ctx = "gpu"  # type: ignore[assignment]


def test_cpu_shared_arrays_hold_cpu_memory() -> None:
    ctx = nv.Context("cpu_shared", 0)
    res = nv.nd.zeros((1, 2, 3), ctx=ctx)
    assert res.context == ctx  # MXNet's test_ndarray_cpu_shared_ctx
    np.testing.assert_array_equal(res.asnumpy(), np.zeros((1, 2, 3), np.float32))
    src = nv.nd.array([[1.0, 2.0]], ctx=ctx)
    np.testing.assert_array_equal(src.copyto(nv.cpu()).asnumpy(), [[1.0, 2.0]])


def test_kernel_device_maps_host_memory_kinds_to_cpu() -> None:
    from nnvmpy.base import kernel_device

    assert kernel_device(nv.cpu()) == "cpu"
    assert kernel_device(nv.cpu_pinned()) == "cpu"
    assert kernel_device(nv.Context("cpu_shared", 0)) == "cpu"
    assert kernel_device(nv.gpu(1)) == "gpu"


def test_unknown_device_type_is_a_named_error() -> None:
    with pytest.raises(nv.NNVMError, match="Context: unknown device type 'tpu'; expected one of"):
        nv.Context("tpu", 0)
    assert nv.current_context() == nv.cpu()  # nothing was entered
    nv.cpu().empty_cache()  # MXNet's API; a no-op for CPU memory


@pytest.mark.gpu
def test_gpu_memory_info_reports_free_and_total() -> None:
    free, total = context.gpu_memory_info(0)
    assert 0 < free <= total  # the simulator reports inf for both
    with pytest.raises(nv.NNVMError, match="device_id 99 is out of range"):
        context.gpu_memory_info(99)
