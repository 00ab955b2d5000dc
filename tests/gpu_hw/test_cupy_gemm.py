"""cuBLAS GEMM on a real GPU: ops/matrix.gemm against NumPy for every transpose, request,
layout and dtype, the numba fallback where cuBLAS does not apply, and the ops on top."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy.base import Context
from nnvmpy.ops import matrix

pytestmark = [pytest.mark.gpu]

GPU = Context("gpu", 0)
LAYOUTS = {"2d": (None, None), "3d": (3, 3), "3d_a": (3, None), "3d_b": (None, 3)}


def _to_device(x: np.ndarray) -> Any:
    from numba import cuda

    return cuda.to_device(np.ascontiguousarray(x))


def _run(out: np.ndarray, req: str, a: np.ndarray, ta: bool, b: np.ndarray, tb: bool,
         bias: np.ndarray | None = None) -> np.ndarray:  # fmt: skip
    from numba import cuda

    d_out = _to_device(out)
    d_bias = None if bias is None else _to_device(bias)
    matrix.gemm(GPU, d_out, req, _to_device(a), ta, _to_device(b), tb, d_bias)
    cuda.synchronize()
    return d_out.copy_to_host()


def _operands(rng: np.random.Generator, layout: str, ta: bool, tb: bool, m: int, n: int, k: int,
              dtype: Any, ints: bool) -> tuple[np.ndarray, ...]:  # fmt: skip
    def make(*shape: int) -> np.ndarray:
        if ints:  # products and sums exact in every dtype: results compare equal
            return rng.integers(-3, 4, size=shape).astype(dtype)
        return rng.uniform(-1, 1, size=shape).astype(dtype)

    za, zb = LAYOUTS[layout]
    a = make(*((za,) if za else ()), *((k, m) if ta else (m, k)))
    b = make(*((zb,) if zb else ()), *((n, k) if tb else (k, n)))
    batch = za or zb
    return a, b, make(*((batch,) if batch else ()), m, n), make(n)


def _reference(a: np.ndarray, ta: bool, b: np.ndarray, tb: bool, out: np.ndarray, add: bool,
               bias: np.ndarray | None) -> np.ndarray:  # fmt: skip
    op_a = np.swapaxes(a, -1, -2) if ta else a
    op_b = np.swapaxes(b, -1, -2) if tb else b
    want = np.matmul(op_a.astype(np.float64), op_b.astype(np.float64))
    if bias is not None:
        want = want + bias
    return want + out if add else want


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize(("ta", "tb"), [(False, False), (True, False), (False, True), (True, True)])
@pytest.mark.parametrize("req", ["write", "add"])
@pytest.mark.parametrize("with_bias", [False, True])
def test_cublas_gemm_equals_numpy_on_exact_values(
    cublas_calls: list, dtype: Any, layout: str, ta: bool, tb: bool, req: str, with_bias: bool
) -> None:
    rng = np.random.default_rng(1)
    a, b, out, bias = _operands(rng, layout, ta, tb, 37, 19, 45, dtype, ints=True)
    bias_or_none = bias if with_bias else None
    got = _run(out, req, a, ta, b, tb, bias_or_none)
    want = _reference(a, ta, b, tb, out, req == "add", bias_or_none)
    np.testing.assert_array_equal(got, want.astype(dtype))
    assert len(cublas_calls) == 1  # on cuBLAS, not the numba kernel


@pytest.mark.parametrize(
    ("dtype", "rtol", "atol"),
    [(np.float16, 2e-3, 2e-2), (np.float32, 2e-5, 1e-4), (np.float64, 1e-12, 1e-12)],
)
@pytest.mark.parametrize(("ta", "tb"), [(False, False), (True, True)])
def test_cublas_gemm_random_values_odd_sizes(
    cublas_calls: list, dtype: Any, rtol: float, atol: float, ta: bool, tb: bool
) -> None:
    """Sizes that fit no tile, and float16 summing 1000 products: the float32 accumulation
    keeps it within float16 rounding of the exact result (float16 sums drift far more)."""
    rng = np.random.default_rng(2)
    a, b, out, bias = _operands(rng, "2d", ta, tb, 257, 131, 1000, dtype, ints=False)
    got = _run(out, "write", a, ta, b, tb, bias)
    want = _reference(a, ta, b, tb, out, False, bias)
    scale = np.sqrt(1000)  # |sum| of 1000 uniform(-1, 1) products is about this
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=rtol, atol=atol * scale)
    assert len(cublas_calls) == 1


def test_nnvmpy_cupy_0_runs_the_numba_kernel_with_the_same_result(
    cublas_calls: list, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = np.random.default_rng(3)
    a, b, out, bias = _operands(rng, "3d", True, False, 33, 17, 29, np.float32, ints=True)
    on_cublas = _run(out, "add", a, True, b, False, bias)
    assert len(cublas_calls) == 1
    monkeypatch.setenv("NNVMPY_CUPY", "0")
    on_numba = _run(out, "add", a, True, b, False, bias)
    assert len(cublas_calls) == 1  # not called again
    np.testing.assert_array_equal(on_numba, on_cublas)


def test_k_zero_stays_on_numba(cublas_calls: list) -> None:
    """cuBLAS rejects a leading dimension of 0; an empty sum is 0 (write) or nothing (add)."""
    a, b = np.zeros((4, 0), np.float32), np.zeros((0, 3), np.float32)
    out = np.full((4, 3), 7, np.float32)
    np.testing.assert_array_equal(_run(out, "write", a, False, b, False), np.zeros((4, 3)))
    np.testing.assert_array_equal(_run(out, "add", a, False, b, False), out)
    assert cublas_calls == []


def test_integer_dtypes_stay_on_numba(cublas_calls: list) -> None:
    a = np.arange(6, dtype=np.int32).reshape(2, 3)
    b = np.arange(12, dtype=np.int32).reshape(3, 4)
    got = _run(np.zeros((2, 4), np.int32), "write", a, False, b, False)
    np.testing.assert_array_equal(got, a @ b)
    assert cublas_calls == []


def _cpu_and_gpu(fn: Any, *arrays: np.ndarray) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """fn's outputs and input gradients (head gradient: ones) on the CPU and on the GPU."""
    results = []
    for ctx in (nv.cpu(), nv.gpu(0)):
        xs = [nv.nd.array(x, ctx=ctx, dtype=x.dtype) for x in arrays]
        for x in xs:
            x.attach_grad()
        with nv.autograd.record():
            y = fn(*xs)
        y.backward()
        results.append(([y.asnumpy()], [x.grad.asnumpy() for x in xs]))
    return results[0], results[1]


OPS = {
    "dot": (lambda a, b: nv.nd.dot(a, b), [(6, 5), (5, 4)]),
    "dot_ta_tb": (
        lambda a, b: nv.nd.dot(a, b, transpose_a=True, transpose_b=True),
        [(5, 6), (4, 5)],
    ),
    "dot_nd": (lambda a, b: nv.nd.dot(a, b), [(2, 3, 5), (5, 2, 2)]),
    "batch_dot": (lambda a, b: nv.nd.batch_dot(a, b, transpose_b=True), [(3, 4, 5), (3, 6, 5)]),
    "FullyConnected": (
        lambda x, w, b: nv.nd.FullyConnected(x, w, b, num_hidden=7),
        [(8, 3, 4), (7, 12), (7,)],
    ),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", list(OPS))
def test_ops_on_cublas_match_the_cpu(cublas_calls: list, name: str, dtype: Any) -> None:
    fn, shapes = OPS[name]
    rng = np.random.default_rng(4)
    arrays = [rng.uniform(-1, 1, size=s).astype(dtype) for s in shapes]
    (cpu_y, cpu_g), (gpu_y, gpu_g) = _cpu_and_gpu(fn, *arrays)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    for got, want in zip(gpu_y + gpu_g, cpu_y + cpu_g, strict=True):
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
    assert len(cublas_calls) >= 3  # forward and both input gradients


@pytest.mark.parametrize(("ta", "tb"), [(False, False), (False, True), (True, False)])
@pytest.mark.parametrize("req", ["write", "add"])
@pytest.mark.parametrize("stacked", [False, True])
def test_split_k_on_cublas_equals_numpy(
    cublas_calls: list, ta: bool, tb: bool, req: str, stacked: bool
) -> None:
    """A weight-gradient-shaped GEMM (64 x 147 output, k = 131072) takes split-K by
    default (ops/_gemm_split.py): a strided batch over 128 slices of k, then their sum.
    `stacked`: 3-D operands with a batch of one, as a one-group convolution passes them."""
    from nnvmpy.ops import _gemm_split

    m, n, k = 64, 147, 131072
    rng = np.random.default_rng(4)
    a, b, out, _ = _operands(rng, "2d", ta, tb, m, n, k, np.float32, ints=True)
    s = _gemm_split.slices(m, n, k, 1, np.float32, _gemm_split.CUBLAS_TILE, False)
    assert s == 128
    a_in, b_in = (a[None], b[None]) if stacked else (a, b)
    out_in = out[None] if stacked else out
    got = _run(out_in, req, a_in, ta, b_in, tb).reshape(m, n)
    want = _reference(a, ta, b, tb, out, req == "add", None)
    np.testing.assert_array_equal(got, want.astype(np.float32))  # integers: exact sums
    ((*_, k_slices),) = cublas_calls
    assert k_slices == s
