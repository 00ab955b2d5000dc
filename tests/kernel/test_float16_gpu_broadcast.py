"""float16 broadcast loops and fused groups on the GPU compute in float32 and round once.

The CPU runs float16 through float32 copies (ops/_broadcast_map.py's _cpu_map,
fusion/compute.py's _run_cpu): every intermediate is a float32 and the result is rounded
to float16 once. The GPU's broadcast loops widen float16 arguments on load and round on
the store, and a fused group's GPU kernel loads float16 inputs as float32, keeps its
intermediates in float32 and rounds on the store (req add: the float32 sum, rounded
once), so on the simulator both devices agree bit for bit. On a real GPU NVVM may
contract `x * y + x` into a fused multiply-add, so there the check is one float16 ulp.

Runs under NUMBA_ENABLE_CUDASIM=1 or on a GPU; skipped otherwise (tests/conftest.py).
"""

from __future__ import annotations

import os

import numpy as np
import pytest

import nnvmpy as nv
import nnvmpy.kernel as K
from nnvmpy import sym
from nnvmpy.base import cpu, gpu
from nnvmpy.ops._broadcast_map import broadcast_map

cuda = pytest.importorskip("numba.cuda")

pytestmark = pytest.mark.gpu

SIMULATOR = os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"
F16, F32 = np.float16, np.float32


@K.elementwise
def _mul_add(x, y):
    return x * y + x


@K.elementwise
def _cube_add(x):
    return x * x * x + x


@K.elementwise
def _fma3(x, y, z):
    return x * y + z * x


def _values(shape: tuple[int, ...], seed: int, low: float = -4, high: float = 4) -> np.ndarray:
    return np.random.default_rng(seed).uniform(low, high, shape).astype(F16)


def _wide(a: np.ndarray) -> np.ndarray:
    return a.astype(F32)


def _assert_same(got: np.ndarray, want: np.ndarray) -> None:
    """Bitwise on the simulator; within one float16 ulp on a GPU (FMA contraction)."""
    assert got.dtype == want.dtype
    if SIMULATOR:
        np.testing.assert_array_equal(got, want)
        return
    ulps = np.abs(got.view(np.int16).astype(np.int32) - want.view(np.int16).astype(np.int32))
    assert ulps.max() <= 1, f"{ulps.max()} float16 ulps apart"


def _both(fn, out0: np.ndarray, req: str, *arrays: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(cpu, gpu) results of broadcast_map(fn, out (+)= fn(*arrays)) from out0."""
    host = out0.copy()
    broadcast_map(fn, cpu(), host, req, *arrays)
    dout = cuda.to_device(out0.copy())
    broadcast_map(fn, gpu(0), dout, req, *(cuda.to_device(a) for a in arrays))
    return host, dout.copy_to_host()


# -- broadcast loops ------------------------------------------------------------------------


@pytest.mark.parametrize("req", ["write", "add"])
def test_broadcast_two_float16_arrays_compute_in_float32_and_round_once(req: str) -> None:
    x, y, out0 = _values((40, 50), 1), _values((50,), 2), _values((40, 50), 3)
    wide = _wide(x) * _wide(y) + _wide(x)
    want = ((_wide(out0) + wide) if req == "add" else wide).astype(F16)
    in_half = x * y + x  # float16 arithmetic: two roundings to 11 bits
    if req == "add":
        in_half = out0 + in_half
    assert np.count_nonzero(in_half != want) > 20  # the inputs tell the two apart
    host, got = _both(_mul_add, out0, req, x, y)
    np.testing.assert_array_equal(host, want)
    _assert_same(got, want)


@pytest.mark.parametrize("req", ["write", "add"])
def test_broadcast_one_float16_array_to_a_wider_output(req: str) -> None:
    x, out0 = _values((30, 1), 4, -2, 2), _values((30, 40), 5)
    wide = np.broadcast_to(_wide(x) * _wide(x) * _wide(x) + _wide(x), out0.shape)
    want = ((_wide(out0) + wide) if req == "add" else wide).astype(F16)
    host, got = _both(_cube_add, out0, req, x)
    np.testing.assert_array_equal(host, want)
    _assert_same(got, want)
    in_half = np.broadcast_to(x * x * x + x, out0.shape)
    if req == "add":
        in_half = out0 + in_half
    assert np.count_nonzero(in_half != want) > 20


@pytest.mark.parametrize("req", ["write", "add"])
def test_broadcast_three_float16_arrays_as_reduction_gradients_use_them(req: str) -> None:
    x, y, z = _values((6, 7, 30), 6), _values((6, 1, 30), 7), _values((1, 7, 1), 8)
    out0 = _values((6, 7, 30), 9)
    wide = _wide(x) * _wide(y) + _wide(z) * _wide(x)
    want = ((_wide(out0) + wide) if req == "add" else wide).astype(F16)
    host, got = _both(_fma3, out0, req, x, y, z)
    np.testing.assert_array_equal(host, want)
    _assert_same(got, want)
    assert np.count_nonzero((x * y + z * x) != wide.astype(F16)) > 20


def test_broadcast_float16_inputs_into_a_float32_output_are_widened_exactly() -> None:
    x, y = _values((20, 30), 10), _values((30,), 11)
    want = _wide(x) * _wide(y) + _wide(x)
    host, got = _both(_mul_add, np.zeros((20, 30), F32), "write", x, y)
    np.testing.assert_array_equal(host, want)
    if SIMULATOR:
        np.testing.assert_array_equal(got, want)
    else:  # one fused multiply-add: within a float32 ulp of the product's size
        np.testing.assert_allclose(got, want, rtol=0, atol=2e-6 * np.abs(want).max())


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_broadcast_float32_and_float64_keep_their_own_precision(dtype: type) -> None:
    x = np.random.default_rng(12).uniform(-4, 4, (20, 30)).astype(dtype)
    y = np.random.default_rng(13).uniform(-4, 4, (30,)).astype(dtype)
    out0 = np.random.default_rng(14).uniform(-4, 4, (20, 30)).astype(dtype)
    want = out0 + (x * y + x)  # NumPy in the arrays' dtype
    host, got = _both(_mul_add, out0, "add", x, y)
    np.testing.assert_array_equal(host, want)
    if SIMULATOR:
        np.testing.assert_array_equal(got, want)
    else:
        eps = np.finfo(dtype).eps
        np.testing.assert_allclose(got, want, rtol=0, atol=40 * eps * np.abs(want).max())


def test_broadcast_hypot_backward_on_float16_matches_the_cpu() -> None:
    """broadcast_hypot's lhs gradient dy * lhs / hypot(lhs, rhs) runs in the three-array
    broadcast loop (rhs broadcast): float32 with one rounding, on both devices."""
    rng = np.random.default_rng(15)
    X, Y = _values((16, 24), 15), _values((16, 1), 16)
    D = rng.uniform(-4, 4, (16, 24)).astype(F16)
    got = {}
    for ctx in (nv.cpu(), nv.gpu(0)):
        args = {"x": nv.nd.array(X, ctx, dtype=F16), "y": nv.nd.array(Y, ctx, dtype=F16)}
        grads = {k: nv.nd.zeros(v.shape, ctx, dtype=F16) for k, v in args.items()}
        exe = sym.broadcast_hypot(sym.var("x"), sym.var("y")).bind(ctx, args, args_grad=grads)
        exe.forward(is_train=True)
        exe.backward(nv.nd.array(D, ctx, dtype=F16))
        got[ctx.device_type] = grads["x"].asnumpy()
    x, y, d = _wide(X), _wide(Y), _wide(D)
    want = (d * x / np.sqrt(x.astype(np.float64) ** 2 + y.astype(np.float64) ** 2)).astype(F16)
    np.testing.assert_array_equal(got["cpu"], want)
    assert np.count_nonzero(want != (D * X / np.hypot(X, Y)).astype(F16)) > 20
    _assert_same(got["gpu"], got["cpu"])


# -- fused element-wise groups --------------------------------------------------------------


def _fused_run(ctx, X: np.ndarray, Y: np.ndarray, G: np.ndarray) -> list[np.ndarray]:
    """x * y + x fused: its output, and x's gradient (dy * y + dy) added to G."""
    x, y = sym.var("x"), sym.var("y")
    s = x * y + x
    args = {"x": nv.nd.array(X, ctx, dtype=F16), "y": nv.nd.array(Y, ctx, dtype=F16)}
    grads = {"x": nv.nd.array(G, ctx, dtype=F16), "y": nv.nd.zeros(Y.shape, ctx, dtype=F16)}
    exe = s.bind(ctx, args, args_grad=grads, grad_req="add")
    assert exe._fused_groups
    exe.forward(is_train=True)
    exe.backward(nv.nd.array(Y, ctx, dtype=F16))  # dy = y
    return [exe.outputs[0].asnumpy(), grads["x"].asnumpy()]


def test_fused_float16_group_computes_in_float32_write_and_add() -> None:
    X, Y, G = _values((8, 50), 17), _values((8, 50), 18), _values((8, 50), 19)
    out_cpu, dx_cpu = _fused_run(nv.cpu(), X, Y, G)
    out_gpu, dx_gpu = _fused_run(nv.gpu(0), X, Y, G)
    x, y, g = _wide(X), _wide(Y), _wide(G)
    want_out = (x * y + x).astype(F16)
    np.testing.assert_array_equal(out_cpu, want_out)
    assert np.count_nonzero(want_out != (X * Y + X)) > 20  # float16 math would differ
    _assert_same(out_gpu, out_cpu)
    # d(x*y + x)/dx = dy * y + dy with dy = y, added to G: every step in float32
    want_dx = (g + (y * y + y)).astype(F16)
    np.testing.assert_allclose(dx_cpu.astype(np.float64), want_dx, rtol=0, atol=4e-3)
    _assert_same(dx_gpu, dx_cpu)


def test_fused_float16_gpu_source_loads_as_float32(fused_sources: list[str]) -> None:
    X = _values((4, 5), 20)
    _fused_run(nv.gpu(0), X, X, X)
    gpu_sources = [src for src in fused_sources if "(gpu)" in src]
    assert gpu_sources
    for src in gpu_sources:
        code = [line for line in src.splitlines() if not line.startswith("#")]
        assert not [line for line in code if "float16" in line]  # no float16 arithmetic
        assert "x0 = np.float32(a0[i])" in src


# -- reductions -----------------------------------------------------------------------------


@pytest.mark.parametrize("op", ["sum", "mean", "norm"])
def test_float16_reductions_accumulate_wider_than_float16(op: str) -> None:
    """32 values of 300, then 4096 of 1/32: a float16 running sum (or every thread's
    partial sum) stays at 300 * k (1/32 is under half of 300's ulp, 0.25), and x^2
    overflows float16 (90000 > 65504). Every partial sum here is exact in float32, so
    the CPU (float32 accumulation, as MXNet) and the GPU (float64) both round the exact
    value once: the float64 result's float16, bit for bit."""
    row = np.concatenate([np.full(32, 300.0), np.full(4096, 1 / 32)])
    X = np.stack([row, row / 2]).astype(F16)
    x64 = X.astype(np.float64)
    ref = {"sum": x64.sum(1), "mean": x64.mean(1), "norm": np.sqrt((x64 * x64).sum(1))}[op]
    for ctx in (nv.cpu(), nv.gpu(0)):
        got = getattr(nv.nd, op)(nv.nd.array(X, ctx, dtype=F16), axis=1).asnumpy()
        np.testing.assert_array_equal(got, ref.astype(F16), err_msg=str(ctx))
