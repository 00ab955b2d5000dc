"""The same kernels on nv.gpu(0), compared with the CPU launch and NumPy; GPU storage.

Runs under NUMBA_ENABLE_CUDASIM=1 (set before the run) or on a real GPU; skipped
otherwise (tests/kernel/conftest.py).
"""

from __future__ import annotations

import os
from types import SimpleNamespace

import numpy as np
import pytest

import nnvmpy.kernel as K
from nnvmpy.base import NNVMError, cpu, gpu
from nnvmpy.kernel import storage
from nnvmpy.resource import OpContext

cuda = pytest.importorskip("numba.cuda")

pytestmark = pytest.mark.gpu

SIMULATOR = os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"
DTYPES = [np.float32, np.float64, np.int32, np.int64, np.uint8, np.int8, np.float16]
A, B, C = 2.0, 3.0, 1.0


def _inputs(dtype, shape=(3, 4)):
    x = (np.arange(int(np.prod(shape))) % 5).astype(dtype).reshape(shape)
    out0 = (np.arange(x.size) % 3).astype(dtype).reshape(shape)
    return x, out0


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("req", ["write", "inplace", "add", "null"])
def test_gpu_matches_cpu_and_numpy_for_every_dtype_and_req(kern, quadratic_reference, dtype, req):
    x, out0 = _inputs(dtype)
    host = out0.copy()
    kern.quadratic_map.launch(cpu(), host, req, x, A, B, C)
    dx, dout = cuda.to_device(x), cuda.to_device(out0)
    kern.quadratic_map.launch(gpu(0), dout, req, dx, A, B, C)
    result = dout.copy_to_host()
    np.testing.assert_array_equal(result, host)
    f = quadratic_reference(x, A, B, C, np.float64)
    expected = {"write": f, "inplace": f, "add": out0 + f, "null": out0}[req].astype(dtype)
    np.testing.assert_array_equal(result, expected)


@pytest.mark.parametrize("shape", [(), (0,), (1,), (2, 3, 4), (1000,)])
def test_gpu_shapes_including_0d_and_grid_stride(kern, shape):
    x = np.random.default_rng(3).standard_normal(shape)
    dx, dout = cuda.to_device(x), cuda.device_array(shape, np.float64)
    kern.quadratic_map.launch(None, dout, "write", dx, A, B, C)  # device inferred
    np.testing.assert_allclose(dout.copy_to_host(), A * x * x + B * x + C, rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.int8, np.float16], ids=lambda d: d.__name__)
@pytest.mark.parametrize("req", ["write", "inplace", "add"])
@pytest.mark.parametrize("n", [1, 127, 511, 512, 513, 1000, 2051])
def test_each_thread_takes_unroll_elements_then_the_rest_one_at_a_time(kern, dtype, req, n):
    """cuda_loop's loop: UNROLL elements a stride apart per pass while they all fit, then
    one at a time. The simulator's grid is 4 blocks of 32 threads (128 threads), so these
    sizes end the unrolled passes at every offset; every element is written once."""
    x, out0 = _inputs(dtype, (n,))
    host = out0.copy()
    kern.quadratic_map.launch(cpu(), host, req, x, A, B, C)
    dx, dout = cuda.to_device(x), cuda.to_device(out0)
    kern.quadratic_map.launch(gpu(0), dout, req, dx, A, B, C)
    np.testing.assert_array_equal(dout.copy_to_host(), host)


def test_gpu_launch_on_the_opcontext_stream(kern):
    stream = cuda.stream()
    x = np.arange(8, dtype=np.float32)
    dx = cuda.to_device(x, stream=stream)
    dout = cuda.device_array_like(dx, stream=stream)
    opctx = OpContext(run_ctx=SimpleNamespace(ctx=gpu(0), stream=stream))
    kern.quadratic_map.launch(opctx, dout, "write", dx, A, B, C)
    kern.quadratic_map.launch(opctx, dout, "add", dx, A, B, C)
    stream.synchronize()
    np.testing.assert_array_equal(dout.copy_to_host(), 2 * (A * x * x + B * x + C))


def test_gpu_scalars_broadcast_and_inplace(kern):
    x = np.arange(6, dtype=np.float64)
    dx = cuda.to_device(x)
    dy = cuda.to_device(np.full(6, 0.5))
    kern.axpy.launch(gpu(0), dy, "inplace", 3.0, dx, dy)  # y = 3x + y, out aliases y
    np.testing.assert_array_equal(dy.copy_to_host(), 3.0 * x + 0.5)
    kern.fill.launch(gpu(0), dx, "write", 2.5)
    np.testing.assert_array_equal(dx.copy_to_host(), np.full(6, 2.5))


@pytest.mark.skipif(SIMULATOR, reason="simulator arrays have no __cuda_array_interface__")
def test_gpu_accepts_any_cuda_array_interface_object(kern):
    x = cuda.to_device(np.arange(4, dtype=np.float32))
    out = cuda.device_array(4, np.float32)
    wrapped = SimpleNamespace(__cuda_array_interface__=x.__cuda_array_interface__)

    class Wrapped:
        __cuda_array_interface__ = out.__cuda_array_interface__

    kern.relu.launch(None, Wrapped(), "write", wrapped)
    np.testing.assert_array_equal(out.copy_to_host(), np.arange(4, dtype=np.float32))


def test_gpu_errors_name_kernel_and_argument(kern):
    dout = cuda.device_array(4, np.float32)
    with pytest.raises(NNVMError, match=r"quadratic_map: arg 0 is a NumPy \(cpu\) array"):
        kern.quadratic_map.launch(gpu(0), dout, "write", np.ones(4, np.float32), A, B, C)
    with pytest.raises(NNVMError, match=r"quadratic_map: out is a NumPy \(cpu\) array"):
        kern.quadratic_map.launch(gpu(0), np.ones(4), "write", cuda.to_device(np.ones(4)))
    with pytest.raises(NNVMError, match=r"arg 0 has shape \(5,\) but out has shape \(4,\)"):
        kern.quadratic_map.launch(gpu(0), dout, "write", cuda.device_array(5), A, B, C)
    strided = cuda.to_device(np.ones(8, np.float32))[::2]
    with pytest.raises(NNVMError, match=r"arg 0 is not C-contiguous"):
        kern.quadratic_map.launch(gpu(0), dout, "write", strided, A, B, C)
    with pytest.raises(NNVMError, match=r"out has dtype complex64"):
        kern.relu.launch(gpu(0), cuda.device_array(4, np.complex64), "write", dout)
    with pytest.raises(NNVMError, match=r"quadratic_map: unknown req"):
        kern.quadratic_map.launch(gpu(0), dout, "bogus", dout, A, B, C)


def test_cuda_kernel_compiles_on_first_launch():
    @K.cuda_kernel
    def scale(out, x, k):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = k * x[i]

    assert scale._dispatcher is None
    x = cuda.to_device(np.arange(40, dtype=np.float32))
    out = cuda.device_array(40, np.float32)
    scale[2, 32](out, x, 3.0)
    np.testing.assert_array_equal(out.copy_to_host(), 3.0 * np.arange(40))
    out2 = cuda.device_array(40, np.float32)
    scale.launch(gpu(0), 40, out2, x, 2.0)
    scale.launch(gpu(0), 0, out2, x, 100.0)  # nothing to do
    np.testing.assert_array_equal(out2.copy_to_host(), 2.0 * np.arange(40))


def test_gpu_storage_pool_and_copies():
    ctx = gpu(0)
    storage.release_all(ctx)
    before = storage.stats(ctx)
    h = storage.alloc(6 * 4, ctx)
    d = h.as_array((2, 3), np.float32)
    src = np.arange(6, dtype=np.float32).reshape(2, 3)
    storage.copy(src, d)  # cpu -> gpu
    h2 = storage.alloc(24, ctx)
    d2 = h2.as_array((2, 3), np.float32)
    storage.copy(d, d2)  # gpu -> gpu
    back = np.zeros((2, 3), np.float32)
    storage.copy(d2, back)  # gpu -> cpu
    np.testing.assert_array_equal(back, src)
    strided_host = np.zeros((3, 2), np.float32).T
    storage.copy(d2, strided_host)  # gpu -> non-contiguous host
    np.testing.assert_array_equal(strided_host, src)
    storage.free(h)
    storage.free(h2)
    h3 = storage.alloc(30, ctx)  # same 64-byte bucket: reused
    after = storage.stats(ctx)
    assert after.allocations - before.allocations == 2
    assert after.reuses - before.reuses == 1
    storage.free(h3)
    storage.release_all(ctx)
    assert storage.stats(ctx).bytes_pooled == 0


def test_gpu_copy_on_a_stream():
    stream = cuda.stream()
    src = np.arange(5, dtype=np.int64)
    d = cuda.device_array(5, np.int64)
    back = np.zeros(5, np.int64)
    storage.copy(src, d, stream=stream)
    storage.copy(d, back, stream=stream)
    stream.synchronize()
    np.testing.assert_array_equal(back, src)


def test_cuda_kernel_refuses_a_cpu_context():
    @K.cuda_kernel
    def noop(out):
        pass

    with pytest.raises(NNVMError, match=r"noop: a CUDA kernel needs a gpu context, got cpu\(0\)"):
        noop.launch(cpu(), 4, cuda.device_array(4))
