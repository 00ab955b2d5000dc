"""Host<->GPU copies run on each GPU's copy workers, with their own streams (issue 16).

MXNet's ThreadedEnginePerDevice runs kCopyToGPU / kCopyFromGPU functions on separate copy
threads per GPU (MXNET_GPU_COPY_NTHREADS, default 2), so transfers overlap the kernels of
the compute workers. The first tests check the engine's routing with stand-in streams and
events (no GPU needed); the `gpu` tests run real copies on numba's simulator or a GPU.
"""

from __future__ import annotations

import threading
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy import engine as nv_engine
from nnvmpy.base import cpu, cpu_pinned, gpu
from nnvmpy.engine import FnProperty, NaiveEngine, RunContext, ThreadedEnginePerDevice, streams
from nnvmpy.kernel import storage
from nnvmpy.ndarray.ndarray import push_copy

pytestmark = [pytest.mark.timeout(120)]


class FakeStream:
    def __init__(self, name: str) -> None:
        self.name = name

    def synchronize(self) -> None:  # pragma: no cover - events are used instead
        pass


class FakeEvent:
    """A CUDA event stand-in that has always passed; logs the stream it was recorded on."""

    def __init__(self, log: list[str]) -> None:
        self.log = log

    def record(self, stream: FakeStream) -> None:
        self.log.append(f"record {stream.name}")

    def synchronize(self) -> None:
        pass


@pytest.fixture
def fake_cuda(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Stand-in streams and events instead of CUDA; returns the log of recorded events."""
    log: list[str] = []
    made: list[FakeStream] = []

    def new_stream(device_id: int) -> FakeStream:
        made.append(FakeStream(f"s{len(made)}"))
        return made[-1]

    monkeypatch.setattr(streams, "_new_stream", new_stream)
    monkeypatch.setattr(streams, "_new_event", lambda device_id: FakeEvent(log))
    monkeypatch.setattr(streams, "_completers", {})
    monkeypatch.setattr(streams, "_tls", threading.local())
    monkeypatch.setenv("NNVMPY_GPU_STREAMS", "1")
    return log


def _where(rc: RunContext) -> tuple[str, str]:
    return threading.current_thread().name, rc.stream.name  # type: ignore[attr-defined]


def test_copies_run_on_copy_workers_with_streams_of_their_own(fake_cuda: list[str]) -> None:
    eng = ThreadedEnginePerDevice(cpu_workers=1, gpu_workers=1, gpu_copy_workers=2)
    seen: dict[str, tuple[str, str]] = {}
    try:
        a, b, c = eng.new_var("a"), eng.new_var("b"), eng.new_var("c")
        eng.push_sync(lambda rc: seen.update(k=_where(rc)), gpu(0), [], [a], name="kernel")
        eng.push_sync(
            lambda rc: seen.update(h2d=_where(rc)),
            gpu(0),
            [],
            [b],
            name="h2d",
            prop=FnProperty.COPY_TO_GPU,
        )
        eng.push_sync(
            lambda rc: seen.update(d2h=_where(rc)),
            gpu(0),
            [a],
            [c],
            name="d2h",
            prop=FnProperty.COPY_FROM_GPU,
        )
        eng.wait_for_all()
    finally:
        eng.shutdown()
    assert seen["k"][0].startswith("nnvmpy-gpu0-")
    assert "copy" not in seen["k"][0]
    for key in ("h2d", "d2h"):
        assert seen[key][0].startswith("nnvmpy-gpu0-copy-"), seen
        assert seen[key][1] != seen["k"][1]  # not the compute worker's stream
    # each function completed through an event recorded on the stream it ran on
    assert sorted(fake_cuda) == sorted(f"record {s}" for _, s in seen.values())


def test_a_copy_overlaps_a_blocked_kernel_on_the_same_gpu(fake_cuda: list[str]) -> None:
    # One compute worker, busy until the copy has run: on the compute pool the copy would
    # queue behind it and this would never finish.
    eng = ThreadedEnginePerDevice(cpu_workers=1, gpu_workers=1, gpu_copy_workers=1)
    copied = threading.Event()
    try:
        a, b = eng.new_var("a"), eng.new_var("b")
        eng.push_sync(lambda rc: copied.wait(20), gpu(0), [], [a], name="long kernel")
        eng.push_sync(
            lambda rc: copied.set(), gpu(0), [], [b], name="h2d", prop=FnProperty.COPY_TO_GPU
        )
        eng.wait_for_var(b)
        assert copied.is_set()
        eng.wait_for_all()
    finally:
        copied.set()
        eng.shutdown()


def test_a_copy_completes_while_a_kernel_event_is_still_pending(
    fake_cuda: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Kernel events (recorded by compute workers) do not pass until the test says so; a
    # copy's event must not wait behind them (a lane of its own, streams.py).
    device_done = threading.Event()

    class KernelEvent(FakeEvent):
        def record(self, stream: FakeStream) -> None:
            super().record(stream)
            self.held = "copy" not in threading.current_thread().name

        def synchronize(self) -> None:
            if self.held:
                assert device_done.wait(20), "the test never let the kernel finish"

    monkeypatch.setattr(streams, "_new_event", lambda device_id: KernelEvent(fake_cuda))
    eng = ThreadedEnginePerDevice(cpu_workers=1, gpu_workers=1, gpu_copy_workers=1)
    try:
        a, b, c = eng.new_var("a"), eng.new_var("b"), eng.new_var("c")
        eng.push_sync(lambda rc: None, gpu(0), [], [a], name="kernel")
        eng.push_sync(lambda rc: None, gpu(0), [b], [c], name="d2h", prop=FnProperty.COPY_FROM_GPU)
        done = threading.Event()
        eng.push_sync(lambda rc: done.set(), cpu(), [c], [], name="reader")
        assert done.wait(20), "the copy's completion waited behind the kernel's event"
        assert not device_done.is_set()
        device_done.set()
        eng.wait_for_all()
    finally:
        device_done.set()
        eng.shutdown()


@pytest.mark.parametrize(
    ("env", "expected"),
    [({}, 2), ({"MXNET_GPU_COPY_NTHREADS": "3"}, 3), ({"NNVMPY_GPU_COPY_NTHREADS": "1"}, 1)],
)
def test_copy_threads_per_gpu_follow_the_knob(
    fake_cuda: list[str], monkeypatch: pytest.MonkeyPatch, env: dict[str, str], expected: int
) -> None:
    for name in ("NNVMPY_GPU_COPY_NTHREADS", "MXNET_GPU_COPY_NTHREADS"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    eng = ThreadedEnginePerDevice(cpu_workers=1, gpu_workers=1)
    names: set[str] = set()
    lock = threading.Lock()
    # `expected` copies that each wait for all the others: they must run at once, on
    # `expected` different copy threads
    barrier = threading.Barrier(expected, timeout=20)

    def copy(rc: RunContext) -> None:
        with lock:
            names.add(threading.current_thread().name)
        barrier.wait()

    try:
        for i in range(expected):
            v = eng.new_var(f"v{i}")
            eng.push_sync(copy, gpu(0), [], [v], name="copy", prop=FnProperty.COPY_FROM_GPU)
        eng.wait_for_all()
    finally:
        eng.shutdown()
    assert len(names) == expected
    assert all(n.startswith("nnvmpy-gpu0-copy-") for n in names)


class _Recorder(NaiveEngine):
    """Records the (context, property) of every push instead of running it."""

    def __init__(self) -> None:
        super().__init__()
        self.pushes: list[tuple[Any, FnProperty]] = []

    def push_sync(self, fn: Any, ctx: Any, *args: Any, prop: Any = None, **kw: Any) -> None:
        self.pushes.append((ctx, prop))


def _fake_array(ctx: Any, dtype: Any = np.float32) -> Any:
    return SimpleNamespace(
        shape=(2, 3),
        dtype=np.dtype(dtype),
        _data=None,
        _ctx=ctx,
        _chunk=SimpleNamespace(var=object()),
    )


@pytest.mark.parametrize(
    ("src", "dst", "ctx", "prop"),
    [
        (cpu(), gpu(0), gpu(0), FnProperty.COPY_TO_GPU),
        (cpu_pinned(0), gpu(1), gpu(1), FnProperty.COPY_TO_GPU),
        (gpu(1), cpu(), gpu(1), FnProperty.COPY_FROM_GPU),
        (gpu(0), cpu_pinned(0), gpu(0), FnProperty.COPY_FROM_GPU),
        (gpu(1), gpu(0), gpu(1), FnProperty.COPY_FROM_GPU),  # MXNet 1.x: on the source
        (gpu(0), gpu(0), gpu(0), FnProperty.NORMAL),  # within one device: a compute worker
        (cpu(), cpu_pinned(0), cpu_pinned(0), FnProperty.NORMAL),
        (cpu_pinned(0), cpu(0), cpu(0), FnProperty.NORMAL),
    ],
)
def test_push_copy_routes_like_mxnet(src: Any, dst: Any, ctx: Any, prop: FnProperty) -> None:
    rec = _Recorder()
    with nv_engine.engine_type(rec):
        push_copy(_fake_array(src), _fake_array(dst))
    assert rec.pushes == [(ctx, prop)]


def test_push_copy_refuses_a_shape_mismatch_at_push() -> None:
    a = nv.nd.zeros((2, 3))
    b = nv.nd.zeros((3, 2))
    with pytest.raises(nv.NNVMError, match=r"copy: shape \(2, 3\) does not match \(3, 2\)"):
        push_copy(a, b)


# ---- real copies (numba's CUDA simulator, or a GPU) ------------------------------------


@pytest.fixture
def copy_spy(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str, str, Any]]:
    """Records (from, to, thread name, stream) for every storage.copy."""
    seen: list[tuple[str, str, str, Any]] = []
    real = storage.copy

    def copy(src: Any, dst: Any, stream: Any = None) -> None:
        kinds = (storage.array_device(src), storage.array_device(dst))
        seen.append((*kinds, threading.current_thread().name, stream))
        real(src, dst, stream)

    monkeypatch.setattr(storage, "copy", copy)
    return seen


@pytest.mark.gpu
@pytest.mark.parametrize("host", [cpu(), cpu_pinned(0)], ids=["pageable", "pinned"])
def test_copy_kernel_copy_back_on_the_default_engine(
    host: Any, copy_spy: list[tuple[str, str, str, Any]]
) -> None:
    rng = np.random.default_rng(16)
    eng = ThreadedEnginePerDevice(cpu_workers=2)
    try:
        with nv_engine.engine_type(eng):
            outs = []
            xs = [rng.standard_normal((64, 33)).astype(np.float32) for _ in range(6)]
            for x in xs:
                h = nv.nd.array(x, ctx=host)
                g = h.copyto(gpu(0))  # COPY_TO_GPU
                y = nv.nd.relu(g * 2 + 1)  # kernels on the compute worker
                back = nv.nd.empty(x.shape, ctx=host)
                y.copyto(back)  # COPY_FROM_GPU
                h[:] = 0  # overwrite the source: must wait for the upload
                outs.append(back)
            for x, back in zip(xs, outs, strict=True):
                np.testing.assert_allclose(back.asnumpy(), np.maximum(2 * x + 1, 0), rtol=1e-6)
            nv.nd.waitall()
    finally:
        eng.shutdown()
    up = [s for s in copy_spy if s[:2] == ("cpu", "gpu")]
    down = [s for s in copy_spy if s[:2] == ("gpu", "cpu")]
    assert len(up) == len(down) == len(xs)
    for _, _, thread, stream in up + down:
        assert thread.startswith("nnvmpy-gpu0-copy-"), thread
        if streams.enabled():
            assert stream is not None  # the copy worker's own stream


@pytest.mark.gpu
def test_a_failing_copy_reports_its_error_and_the_engine_keeps_working() -> None:
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    eng = ThreadedEnginePerDevice(cpu_workers=1)
    try:
        with nv_engine.engine_type(eng):
            g = nv.nd.array(x, ctx=gpu(0))
            wrong = nv.nd.empty((3, 4), ctx=cpu(), dtype=np.float64)
            push_copy(g, wrong)  # the pushed copy refuses the dtype mismatch on the copy worker
            with pytest.raises(nv.NNVMError, match=r"storage\.copy: src is .*float32 but dst is"):
                wrong.wait_to_read()
            nv.nd.waitall()  # reported once, by the read above
            right = g.copyto(cpu())
            np.testing.assert_array_equal(right.asnumpy(), x)
            np.testing.assert_array_equal((g + 1).copyto(cpu()).asnumpy(), x + 1)
    finally:
        eng.shutdown()


@pytest.mark.gpu
@pytest.mark.parametrize("setup", ["NaiveEngine", "streams off"])
def test_copies_without_copy_workers_or_streams(
    setup: str, monkeypatch: pytest.MonkeyPatch, copy_spy: list[tuple[str, str, str, Any]]
) -> None:
    if setup == "NaiveEngine":
        eng: Any = NaiveEngine()
    else:
        monkeypatch.setenv("NNVMPY_GPU_STREAMS", "0")
        monkeypatch.setattr(streams, "_tls", threading.local())  # forget streams made before
        eng = ThreadedEnginePerDevice(cpu_workers=1)
    x = np.linspace(-2, 2, 40, dtype=np.float32).reshape(5, 8)
    with nv_engine.engine_type(eng):
        for host in (cpu(), cpu_pinned(0)):
            g = nv.nd.array(x, ctx=host).copyto(gpu(0))
            back = (g * 3).copyto(host)
            np.testing.assert_allclose(back.asnumpy(), 3 * x, rtol=1e-6)
        nv.nd.waitall()
    if setup == "NaiveEngine":
        eng.shutdown()
    assert copy_spy
    assert all(s[3] is None for s in copy_spy)  # the default stream: synchronous
