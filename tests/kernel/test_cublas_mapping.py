"""kernel/cublas.py's row-major-on-column-major mapping, checked without a GPU.

A fake cuBLAS binding computes what the real cublasGemmEx / cublasGemmStridedBatchedEx
compute, by their column-major definition (leading dimensions, strides, op flags, alpha
and beta read from host pointers), on host memory. kernel.cublas.gemm then runs on NumPy
arrays dressed as device arrays, and its result must equal NumPy's matmul: this checks the
operand swap, leading dimensions, batch strides, the bias multiplier and beta, which the
hardware tests (tests/gpu_hw) then check against the real library.
"""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np
import pytest

from nnvmpy.kernel import cublas

OP_N, OP_T = 0, 1
R16F, R32F, R64F = 2, 0, 1
C32F, C64F, C32F_TF32 = 68, 70, 77
_DATA = {R16F: np.float16, R32F: np.float32, R64F: np.float64}
_COMPUTE = {C32F: np.float32, C64F: np.float64, C32F_TF32: np.float32}


class FakeDeviceArray:
    """A NumPy array seen through the attributes kernel.cublas reads of a numba array."""

    def __init__(self, a: np.ndarray) -> None:
        self.a = a
        self.shape, self.dtype, self.size = a.shape, a.dtype, a.size

    @property
    def device_ctypes_pointer(self) -> ctypes.c_void_p:
        return ctypes.c_void_p(self.a.ctypes.data)

    def is_c_contiguous(self) -> bool:
        return bool(self.a.flags.c_contiguous)


def _column_major(ptr: int, rows: int, cols: int, ld: int, dtype: Any) -> np.ndarray:
    """The column-major (rows x cols) matrix at ptr with leading dimension ld."""
    assert ld >= max(1, rows), f"leading dimension {ld} < rows {rows}"
    size = np.dtype(dtype).itemsize
    nbytes = ((cols - 1) * ld + rows) * size
    buf = (ctypes.c_char * nbytes).from_address(ptr)
    return np.ndarray((rows, cols), dtype, buffer=buf, strides=(size, ld * size))


def _scalar(ptr: int, dtype: Any) -> float:
    return float(np.ndarray((1,), dtype, buffer=(ctypes.c_char * 8).from_address(ptr))[0])


class FakeCublas:
    CUBLAS_OP_N, CUBLAS_OP_T = OP_N, OP_T
    CUBLAS_GEMM_DEFAULT = -1

    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []
        self.computes: list[int] = []

    def gemmEx(self, h, ta, tb, m, n, k, alpha, a, at, lda, b, bt, ldb, beta, c, ct, ldc,
               compute, algo):  # fmt: skip
        self.gemmStridedBatchedEx(h, ta, tb, m, n, k, alpha, a, at, lda, 0, b, bt, ldb, 0,
                                  beta, c, ct, ldc, 0, 1, compute, algo)  # fmt: skip

    def gemmStridedBatchedEx(self, h, ta, tb, m, n, k, alpha, a, at, lda, sa, b, bt, ldb, sb,
                             beta, c, ct, ldc, sc, batch, compute, algo):  # fmt: skip
        assert at == bt == ct
        assert algo == -1
        self.calls.append((ta, tb, m, n, k, lda, ldb, ldc, sa, sb, sc, batch))
        self.computes.append(compute)
        dt, st = _DATA[at], _COMPUTE[compute]
        size = np.dtype(dt).itemsize
        al, be = _scalar(alpha, st), _scalar(beta, st)
        for z in range(batch):
            x = _column_major(a + z * sa * size, *((m, k) if ta == OP_N else (k, m)), lda, dt)
            y = _column_major(b + z * sb * size, *((k, n) if tb == OP_N else (n, k)), ldb, dt)
            x, y = (x if ta == OP_N else x.T), (y if tb == OP_N else y.T)
            out = _column_major(c + z * sc * size, m, n, ldc, dt)
            product = al * (x.astype(np.float64) @ y.astype(np.float64))
            out[...] = product if be == 0 else product + be * out


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> FakeCublas:
    lib = FakeCublas()
    types = {
        np.dtype(np.float16): (R16F, C32F, np.dtype(np.float32)),
        np.dtype(np.float32): (R32F, C32F, np.dtype(np.float32)),
        np.dtype(np.float64): (R64F, C64F, np.dtype(np.float64)),
    }
    monkeypatch.setattr(cublas, "_lib", {"cublas": lib, "types": types, "tf32": C32F_TF32})
    monkeypatch.setattr(cublas, "handle", lambda device_id, stream_ptr: 7)
    kept: list[FakeDeviceArray] = []

    def ones(device_id: int, dtype: Any, n: int) -> FakeDeviceArray:
        kept.append(FakeDeviceArray(np.ones(n, dtype)))
        return kept[-1]

    monkeypatch.setattr(cublas, "ones", ones)
    return lib


def _operand(rng: np.random.Generator, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    # small integers: every product and sum is exact in each dtype, so results compare equal
    return rng.integers(-3, 4, size=shape).astype(dtype)


LAYOUTS = {  # (batch of a, batch of b): None is a 2-D operand
    "2d": (None, None),
    "3d": (3, 3),
    "3d_a": (3, None),
    "3d_b": (None, 3),
}


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize(("ta", "tb"), [(False, False), (True, False), (False, True), (True, True)])
@pytest.mark.parametrize("add", [False, True])
@pytest.mark.parametrize("with_bias", [False, True])
def test_gemm_mapping_matches_numpy(
    fake: FakeCublas, dtype: Any, layout: str, ta: bool, tb: bool, add: bool, with_bias: bool
) -> None:
    rng = np.random.default_rng(0)
    m, n, k = 5, 3, 7
    za, zb = LAYOUTS[layout]
    a = _operand(rng, (*((za,) if za else ()), *((k, m) if ta else (m, k))), dtype)
    b = _operand(rng, (*((zb,) if zb else ()), *((n, k) if tb else (k, n))), dtype)
    batch = za or zb
    out = _operand(rng, (*((batch,) if batch else ()), m, n), dtype)
    bias = _operand(rng, (n,), dtype) if with_bias else None
    op_a = np.swapaxes(a, -1, -2) if ta else a
    op_b = np.swapaxes(b, -1, -2) if tb else b
    want = np.matmul(op_a.astype(np.float64), op_b.astype(np.float64))
    if bias is not None:
        want = want + bias
    if add:
        want = want + out
    arrays = [FakeDeviceArray(x) for x in (out, a, b)]
    cublas.gemm(0, 0, *arrays[:1], arrays[1], ta, arrays[2], tb,
                None if bias is None else FakeDeviceArray(bias), add)  # fmt: skip
    np.testing.assert_array_equal(out, want.astype(dtype))
    assert len(fake.calls) == (2 if with_bias else 1)
    assert all(call[-1] == (batch or 1) for call in fake.calls)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(("ta", "tb"), [(False, False), (True, False), (False, True), (True, True)])
@pytest.mark.parametrize("stacked", [False, True])
def test_k_slices_are_strided_views_of_the_operands(
    fake: FakeCublas, dtype: Any, ta: bool, tb: bool, stacked: bool
) -> None:
    """Split-K (ops/_gemm_split.py): out[z] = op(a)[:, slice z] @ op(b)[slice z, :], one
    strided batched call over the slices of the operands as stored (2-D, or `stacked`:
    3-D with a batch of one, as a one-group convolution's weight gradient passes them)."""
    rng = np.random.default_rng(3)
    m, n, s, depth = 5, 3, 4, 2
    k = s * depth
    a = _operand(rng, (k, m) if ta else (m, k), dtype)
    b = _operand(rng, (n, k) if tb else (k, n), dtype)
    out = np.full((s, m, n), 99, dtype)
    a_in, b_in = (a[None], b[None]) if stacked else (a, b)
    cublas.gemm(0, 0, FakeDeviceArray(out), FakeDeviceArray(a_in), ta, FakeDeviceArray(b_in),
                tb, None, False, False, s)  # fmt: skip
    op_a, op_b = (a.T if ta else a), (b.T if tb else b)
    for z in range(s):
        part = slice(z * depth, (z + 1) * depth)
        np.testing.assert_array_equal(out[z], op_a[:, part] @ op_b[part, :])
    ((*_, batch),) = fake.calls
    assert batch == s


def test_gemm_mapping_swaps_operands_and_keeps_no_copy(fake: FakeCublas) -> None:
    """C^T = op(B)^T op(A)^T: the first cuBLAS operand is b, as stored, ld its row length."""
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.arange(12, dtype=np.float32).reshape(3, 4)
    out = np.zeros((2, 4), np.float32)
    cublas.gemm(0, 0, FakeDeviceArray(out), FakeDeviceArray(a), False, FakeDeviceArray(b), False)
    ((ta, tb, m, n, k, lda, ldb, ldc, *_),) = fake.calls
    assert (ta, tb, m, n, k) == (OP_N, OP_N, 4, 2, 3)
    assert (lda, ldb, ldc) == (4, 3, 4)
    np.testing.assert_array_equal(out, a @ b)


@pytest.mark.parametrize(
    ("dtype", "tf32", "compute"),
    [
        (np.float32, False, C32F),
        (np.float32, True, C32F_TF32),
        (np.float64, True, C64F),  # TF32 is a float32 path: others keep their own
        (np.float16, True, C32F),
    ],
)
def test_tf32_changes_only_float32_gemms(
    fake: FakeCublas, dtype: Any, tf32: bool, compute: int
) -> None:
    a = np.arange(6, dtype=dtype).reshape(2, 3)
    b = np.arange(12, dtype=dtype).reshape(3, 4)
    out = np.zeros((2, 4), dtype)
    bias = np.ones(4, dtype)
    cublas.gemm(0, 0, FakeDeviceArray(out), FakeDeviceArray(a), False, FakeDeviceArray(b),
                False, FakeDeviceArray(bias), False, tf32)  # fmt: skip
    assert fake.computes == [compute, compute]  # the bias product and the main one
    np.testing.assert_array_equal(out, (a @ b + 1).astype(dtype))


def test_supports_needs_one_float_dtype_and_contiguity() -> None:
    f32 = FakeDeviceArray(np.zeros((2, 2), np.float32))
    f64 = FakeDeviceArray(np.zeros((2, 2), np.float64))
    i32 = FakeDeviceArray(np.zeros((2, 2), np.int32))
    strided = FakeDeviceArray(np.zeros((2, 4), np.float32)[:, ::2])
    assert cublas.supports(f32, f32, f32)
    assert cublas.supports(f32, f32, f32, FakeDeviceArray(np.zeros(2, np.float32)))
    assert not cublas.supports(f32, f32, f64)
    assert not cublas.supports(i32, i32, i32)
    assert not cublas.supports(f32, strided, f32)
    assert not cublas.supports(f32, f32, f32, FakeDeviceArray(np.zeros(2, np.float64)))


def _real_gpu_with_cupy() -> bool:
    import importlib.util
    import os

    if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1" or not importlib.util.find_spec("cupy"):
        return False
    from numba import cuda

    return bool(cuda.is_available())


def test_gpu_lib_reports_why_it_is_unavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without a real GPU and CuPy (this machine, CI, the simulator) CuPy is not used, and
    unavailable_reason says why; NNVMPY_CUPY=0 turns it off everywhere."""
    from nnvmpy.kernel import gpu_lib

    monkeypatch.setenv("NNVMPY_CUPY", "0")
    assert not gpu_lib.available()
    assert gpu_lib.unavailable_reason() == "NNVMPY_CUPY=0"
    monkeypatch.setenv("NNVMPY_CUPY", "1")
    reason = gpu_lib.unavailable_reason()
    if _real_gpu_with_cupy():
        assert reason is None
    else:
        assert isinstance(reason, str)
        assert reason
        assert not gpu_lib.available()


def test_stream_ptr_reads_the_stream_handle() -> None:
    """RunContext.stream is a numba Stream: its handle is the cudaStream_t cuBLAS and CuPy
    are given; None (and 0) are the legacy default stream."""
    from nnvmpy.kernel import gpu_lib

    class Stream:
        handle = 0x7F00_1234

        def __int__(self) -> int:  # numba's returns an enum member for default streams
            raise AssertionError("stream_ptr must read .handle")

    assert gpu_lib.stream_ptr(Stream()) == 0x7F00_1234
    assert gpu_lib.stream_ptr(None) == 0
    assert gpu_lib.stream_ptr(0) == 0
