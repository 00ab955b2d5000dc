"""kernel/cuda_fast.py on the host: its argument words against numba-cuda's own
marshalling, and when a launch goes numba's way or the direct one (with numba-cuda's
kernel, context and cuda.core launch faked: no GPU here). tests/gpu_hw/test_fast_launch.py
runs it for real on a GPU.
"""

from __future__ import annotations

import contextlib
import ctypes
import threading
from types import SimpleNamespace

import numpy as np
import pytest

numba = pytest.importorskip("numba")
if numba.config.ENABLE_CUDASIM:
    pytest.skip("numba-cuda's own arrays, not the simulator's", allow_module_level=True)
devicearray = pytest.importorskip("numba.cuda.cudadrv.devicearray")
driver = pytest.importorskip("numba.cuda.cudadrv.driver")
devices = pytest.importorskip("numba.cuda.cudadrv.devices")
cuda_dispatcher = pytest.importorskip("numba.cuda.dispatcher")
from numba.cuda.typing.typeof import Purpose, typeof  # noqa: E402

from nnvmpy.kernel import cuda_fast, storage  # noqa: E402

BASE = 0x7F0000000000  # a device address nothing reads or writes here


@pytest.fixture
def block(monkeypatch):
    monkeypatch.setattr(devices._runtime, "ensure_context", contextlib.nullcontext)
    pointer = driver.MemoryPointer(None, driver.binding.CUdeviceptr(BASE), 1 << 16)
    return devicearray.DeviceNDArray((1 << 16,), (1,), np.dtype(np.uint8), gpu_data=pointer)


def _numbas_words(value):
    """numba-cuda's _Kernel._prepare_args for one argument."""
    words: list = []
    host = SimpleNamespace(extensions=[])
    cuda_dispatcher._Kernel._prepare_args(
        host, typeof(value, Purpose.argument), value, 0, [], words
    )
    return words


def _plain(words):
    return [w.value if isinstance(w, ctypes._SimpleCData) else w for w in words]


@pytest.mark.parametrize(
    ("shape", "dtype", "offset"),
    [((16,), "float32", 0), ((1000,), "float16", 64), ((4, 8), "float64", 128),
     ((2, 3, 5), "int32", 0), ((7,), "uint8", 3)],
)  # fmt: skip
def test_array_words_are_numbas(block, shape, dtype, offset):
    dt = np.dtype(dtype)
    start = block[offset:]
    a = storage.device_view(start, shape, dt)
    assert cuda_fast.array_words(a) == _plain(_numbas_words(a))
    assert cuda_fast.array_words(a)[4] == BASE + offset


class _Kernel:
    """numba-cuda's compiled kernel as far as cuda_fast reads it."""

    def __init__(self, extensions=()):
        self.debug = False
        self.cooperative = False
        self.extensions = list(extensions)
        function = SimpleNamespace(kernel="loaded function")
        self._codelibrary = SimpleNamespace(get_cufunc=lambda: function)

    def _prepare_args(self, ty, value, stream, retr, words):
        cuda_dispatcher._Kernel._prepare_args(self, ty, value, stream, retr, words)


class _Dispatcher:
    """A numba-cuda dispatcher: `d[grid, block, stream](*args)` records numba's launch."""

    def __init__(self, kernel):
        self.kernel = kernel
        self.overloads: dict = {}
        self.numba_launches: list = []

    def typeof_pyval(self, value):
        return typeof(value, Purpose.argument)

    def __getitem__(self, config):
        def run(*args):
            self.numba_launches.append((config, args))
            self.overloads[tuple(self.typeof_pyval(a) for a in args)] = self.kernel

        return run


@pytest.fixture
def direct_launches(monkeypatch):
    """cuda.core's launch, streams and configs, recorded instead of run."""
    launches: list = []
    cuda_fast._import_numba()
    monkeypatch.setitem(cuda_fast._numba, "launch", lambda *a: launches.append(a))
    monkeypatch.setitem(cuda_fast._numba, "to_core_stream", lambda s: ("core", s))
    monkeypatch.setitem(cuda_fast._numba, "launch_config", lambda g, b: ("config", g, b))
    monkeypatch.setattr(cuda_fast, "_streams", {})
    monkeypatch.setattr(cuda_fast, "_configs", {})
    cuda_fast.forget()
    yield launches
    cuda_fast.forget()


def test_the_first_launch_per_thread_is_numbas_then_direct(block, direct_launches):
    out = storage.device_view(block, (64,), np.dtype(np.float32))
    x = storage.device_view(block[256:], (64,), np.dtype(np.float32))
    loop = _Dispatcher(_Kernel())
    stream = object()
    cuda_fast.launch(loop, 2, 32, stream, (out, x, 1.5, 3))
    assert len(loop.numba_launches) == 1
    assert not direct_launches
    cuda_fast.launch(loop, 2, 32, stream, (out, x, 2.5, 4))
    assert len(loop.numba_launches) == 1
    (core, config, function, *words) = direct_launches[-1]
    assert core == ("core", stream)
    assert config == ("config", (2, 1, 1), (32, 1, 1))
    assert function == "loaded function"
    want = [*_numbas_words(out), *_numbas_words(x), *_numbas_words(2.5), *_numbas_words(4)]
    assert _plain(words) == _plain(want)
    assert [type(w) for w in words[-2:]] == [ctypes.c_double, ctypes.c_int64]

    other = threading.Thread(target=cuda_fast.launch, args=(loop, 2, 32, stream, (out, x, 1.0, 5)))
    other.start()
    other.join()
    assert len(loop.numba_launches) == 2  # a thread resolves its own (its own context)
    assert len(direct_launches) == 1


def test_grids_and_blocks_of_up_to_three_sizes(block, direct_launches):
    """A 2-D block on a 3-D grid (the tiled GEMM's), a 2-D grid: CUDA's three sizes each."""
    out = storage.device_view(block, (64,), np.dtype(np.float32))
    for grid, threads, want in [
        ((2, 3, 4), (16, 16), ((2, 3, 4), (16, 16, 1))),
        ((5, 6), 64, ((5, 6, 1), (64, 1, 1))),
        (7, (8, 4, 2), ((7, 1, 1), (8, 4, 2))),
    ]:
        loop = _Dispatcher(_Kernel())
        cuda_fast.launch(loop, grid, threads, 0, (out, 1))  # numba's: resolves
        cuda_fast.launch(loop, grid, threads, 0, (out, 1))
        assert loop.numba_launches[-1][0] == (grid, threads, 0)
        assert direct_launches[-1][1] == ("config", *want)


@pytest.mark.parametrize(
    "value",
    [np.float32(1.25), np.float64(-2.5), np.int8(-3), np.uint8(200), np.int32(-7),
     np.uint32(4_000_000_000), np.int64(-(2**40)), np.uint64(2**63 + 5), True, np.bool_(False),
     np.float16(0.333), np.complex64(1 - 2j), 7, -0.0],
)  # fmt: skip
def test_scalar_words_and_their_ctypes_are_numbas(block, direct_launches, value):
    # the direct path wraps integers and floats itself (a ctypes class per argument, found
    # once); the rest goes to numba's _prepare_args: the words must be numba's either way
    out = storage.device_view(block, (4,), np.dtype(np.float32))
    loop = _Dispatcher(_Kernel())
    cuda_fast.launch(loop, 1, 32, 0, (out, value))  # numba's launch: resolves
    cuda_fast.launch(loop, 1, 32, 0, (out, value))
    (_, _, _, *words) = direct_launches[-1]
    want = _numbas_words(value)
    scalar_words = words[len(cuda_fast.array_words(out)) :]
    assert [type(w) for w in scalar_words] == [type(w) for w in want]
    assert _plain(scalar_words) == _plain(want)


def test_other_signatures_and_kernels_numba_must_launch(block, direct_launches):
    out = storage.device_view(block, (8, 8), np.dtype(np.float32))
    strided = block.view(np.dtype(np.float32))[: 2 * 64 : 2]  # not C-contiguous
    loop = _Dispatcher(_Kernel())
    for _ in range(2):
        cuda_fast.launch(loop, 1, 64, 0, (strided,))
    with_extension = _Dispatcher(_Kernel(extensions=[object()]))
    for _ in range(2):
        cuda_fast.launch(with_extension, 1, 64, 0, (out,))
    assert len(loop.numba_launches) == 2
    assert len(with_extension.numba_launches) == 2
    assert not direct_launches
    cuda_fast.launch(loop, 1, 64, 0, (out.reshape(64),))  # a new signature: numba first
    cuda_fast.launch(loop, 1, 64, 0, (out.reshape(64),))
    assert len(loop.numba_launches) == 3
    assert len(direct_launches) == 1


def test_host_arrays_and_tuples_numba_must_launch(block, direct_launches):
    """numba copies a host array to the device per launch, and a tuple's signature
    would hide its elements' types: such kernels never take the direct path."""
    out = storage.device_view(block, (8,), np.dtype(np.float32))
    for args in ((out, np.ones(8, np.float32)), (out, (1.0, 2))):
        loop = _Dispatcher(_Kernel())
        for _ in range(3):
            cuda_fast.launch(loop, 1, 8, 0, args)
        assert len(loop.numba_launches) == 3
    assert not direct_launches


def test_a_resolved_kernel_keeps_its_dispatcher_alive(block, direct_launches):
    """Entries are keyed by id(dispatcher): a dispatcher freed while its entry stays could
    see its id reused by a new kernel of the same signature, launched as the old one."""
    import gc
    import weakref

    out = storage.device_view(block, (8,), np.dtype(np.float32))
    loop = _Dispatcher(_Kernel())
    cuda_fast.launch(loop, 1, 8, 0, (out,))  # numba's launch, then resolved
    ref = weakref.ref(loop)
    del loop
    gc.collect()
    assert ref() is not None
    cuda_fast.forget()
    gc.collect()
    assert ref() is None
