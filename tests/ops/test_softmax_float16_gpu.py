"""float16 softmax, log_softmax, softmin, SoftmaxActivation and SoftmaxOutput on the GPU
compute as the CPU does, forward and backward.

The CPU runs float16 through float32 copies (ops/nn/_layer_util.via_float32): the row
loops compute in float64 (x / T, exp, sums) or in float32 (a float32 array's products),
store float32 and the copy is rounded to float16 once more. The GPU loops read float16
directly and widen explicitly (ops/nn/softmax.py): on numba's simulator the two devices
agree bit for bit (float64 results to a few ulps: the sums' order; float32 rows along the
last axis, which the CPU runs through ops/nn/_softmax_f32.py, to a few ulps). Before, the GPU
rounded e to float16 and then e * (1/s) again, computed dy * y in float16 and, on the
simulator, x / T in float16 (up to 5 float16 ulps forward, hundreds in the gradients).
On hardware libdevice's exp and FMA contraction may move a value by one float16 ulp,
which is what the check allows there.

Runs under NUMBA_ENABLE_CUDASIM=1 or on a GPU (tests/conftest.py); the CPU reference
checks run everywhere.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from numeric_reference import softmax_grad_ref, softmax_ref
from symbol_runs import run_symbol, uniform_values

import nnvmpy as nv
from nnvmpy import sym

SIMULATOR = os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"
F16, F32, F64 = np.float16, np.float32, np.float64
gpu = pytest.mark.gpu


def _ulps(a: np.ndarray, b: np.ndarray) -> int:
    """The largest distance in float16 units in the last place (a and b float16)."""
    ia, ib = a.view(np.int16).astype(np.int32), b.view(np.int16).astype(np.int32)
    ia = np.where(ia < 0, -32768 - ia, ia)  # sign-magnitude to a monotone integer line
    ib = np.where(ib < 0, -32768 - ib, ib)
    return int(np.abs(ia - ib).max()) if a.size else 0


def _assert_same(got: np.ndarray, want: np.ndarray, vector_rows: bool = False) -> None:
    """Bitwise on the simulator, but for float64: a GPU block adds a row's float64 sum in
    another order than the CPU's row loop (the last bit or two; float32 and float16
    results round both to the same value). Within one ulp of the dtype on a GPU.
    vector_rows: the CPU ran float32 rows along the last axis through _softmax_f32.py
    (float32 exp, 8-lane sums), a few float32 ulps from the GPU's float64 rows: the GPU's
    tolerance applies on the simulator too."""
    assert got.dtype == want.dtype
    if SIMULATOR and got.dtype != F64 and not vector_rows:
        np.testing.assert_array_equal(got, want)
    elif got.dtype == F16:
        assert _ulps(got, want) <= 1, f"{_ulps(got, want)} float16 ulps apart"
    else:
        eps = np.finfo(got.dtype).eps
        np.testing.assert_allclose(got, want, rtol=4 * eps, atol=4 * eps * np.abs(want).max())


def _both(build, data, dy, grad_req="write"):
    cpu = run_symbol(nv.cpu(), build, data, dy, grad_req)
    return cpu, run_symbol(nv.gpu(0), build, data, dy, grad_req)


# -- NumPy references (float64, then the CPU's float32 and float16 roundings) --------------


def _to_half(v: np.ndarray) -> np.ndarray:
    return v.astype(F32).astype(F16)


# -- softmax / log_softmax / softmin -------------------------------------------------------

_KINDS = {"softmax": (False, 1.0), "log_softmax": (True, 1.0), "softmin": (False, -1.0)}


@gpu
@pytest.mark.parametrize("op", list(_KINDS))
@pytest.mark.parametrize(
    ("shape", "axis", "temperature"),
    [((9, 37), -1, None), ((9, 37), -1, 0.7), ((3, 6, 5), 1, None)],
    ids=["last", "temperature", "axis1"],
)
def test_float16_softmax_family_matches_the_cpu(op, shape, axis, temperature) -> None:
    x = uniform_values(shape, 1).astype(F16)
    dy = uniform_values(shape, 2, -1, 1).astype(F16)
    kw = {} if temperature is None else {"temperature": temperature}

    def build():
        return getattr(sym, op)(sym.var("x"), axis=axis, **kw)

    (y_cpu, dx_cpu), (y_gpu, dx_gpu) = _both(build, {"x": x}, dy)
    log, sign = _KINDS[op]
    inv_t = sign / (temperature or 1.0)
    assert _ulps(y_cpu, _to_half(softmax_ref(x, axis, inv_t, log))) <= 1
    want_dx = _to_half(softmax_grad_ref(dy, y_cpu, axis, inv_t, log))
    np.testing.assert_allclose(dx_cpu.astype(F64), want_dx, rtol=2e-3, atol=2e-3)
    _assert_same(y_gpu, y_cpu)
    _assert_same(dx_gpu, dx_cpu)


@gpu
@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
def test_float16_softmax_adds_to_its_gradient_as_the_cpu(op: str) -> None:
    """grad_req='add': old + v summed in float64, rounded to float32, then to float16."""
    x, dy = uniform_values((9, 37), 3).astype(F16), uniform_values((9, 37), 4, -1, 1).astype(F16)
    (y_cpu, dx_cpu), (y_gpu, dx_gpu) = _both(
        lambda: getattr(sym, op)(sym.var("x"), axis=-1), {"x": x}, dy, "add"
    )
    log = op == "log_softmax"
    want = _to_half(0.25 + softmax_grad_ref(dy, y_cpu, -1, 1.0, log))
    np.testing.assert_allclose(dx_cpu.astype(F64), want, rtol=2e-3, atol=2e-3)
    _assert_same(y_gpu, y_cpu)
    _assert_same(dx_gpu, dx_cpu)


@gpu
def test_float16_softmax_with_lengths_matches_the_cpu() -> None:
    x, dy = uniform_values((9, 37), 5).astype(F16), uniform_values((9, 37), 6, -1, 1).astype(F16)
    lengths = np.array([0, 5, 37, 12, 1, 20, 36, 3, 9], np.int32)
    (y_cpu, dx_cpu), (y_gpu, dx_gpu) = _both(
        lambda: sym.softmax(sym.var("x"), sym.var("l"), axis=-1, use_length=True),
        {"x": x, "l": lengths},
        dy,
    )
    for r, n in enumerate(lengths):
        assert not y_cpu[r, n:].any()
        assert not dx_cpu[r, n:].any()
        if n:
            want = _to_half(softmax_ref(x[r, :n], -1, 1.0, False))
            assert _ulps(y_cpu[r, :n], want) <= 1
    _assert_same(y_gpu, y_cpu)
    _assert_same(dx_gpu, dx_cpu)


@gpu
@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
@pytest.mark.parametrize(("din", "dout"), [(F16, "float32"), (F32, "float16"), (F16, "float64")])
def test_softmax_dtype_between_float16_and_wider_matches_the_cpu(op, din, dout) -> None:
    """A float16 input with a wider output (and the reverse) widens and rounds the same."""
    x = uniform_values((9, 37), 7).astype(din)
    dy = uniform_values((9, 37), 8, -1, 1).astype(np.dtype(dout))
    (y_cpu, dx_cpu), (y_gpu, dx_gpu) = _both(
        lambda: getattr(sym, op)(sym.var("x"), axis=-1, dtype=dout), {"x": x}, dy
    )
    assert y_cpu.dtype == np.dtype(dout)
    assert dx_cpu.dtype == np.dtype(din)
    want = softmax_ref(x, -1, 1.0, op == "log_softmax")
    np.testing.assert_allclose(y_cpu.astype(F64), want, rtol=1e-3, atol=1e-3)
    _assert_same(y_gpu, y_cpu, vector_rows=True)  # float16 runs as float32 on the CPU
    _assert_same(dx_gpu, dx_cpu, vector_rows=True)


@gpu
@pytest.mark.parametrize("dtype", [F32, F64])
@pytest.mark.parametrize("op", list(_KINDS))
def test_float32_and_float64_softmax_match_the_cpu(op: str, dtype: type) -> None:
    """The explicit widening is numba's own promotion: float64 computes as before on the
    CPU and a GPU, and the simulator matches the CPU bit for bit (it multiplied by a weak
    Python float in float32 before). float32 rows along the last axis take the CPU's
    vectorised loop (float32 exp): a few ulps from the GPU's float64 rows."""
    x, dy = (
        uniform_values((9, 37), 9).astype(dtype),
        uniform_values((9, 37), 10, -1, 1).astype(dtype),
    )
    (y_cpu, dx_cpu), (y_gpu, dx_gpu) = _both(
        lambda: getattr(sym, op)(sym.var("x"), axis=-1), {"x": x}, dy
    )
    log, sign = _KINDS[op]
    eps = np.finfo(dtype).eps
    np.testing.assert_allclose(y_cpu, softmax_ref(x, -1, sign, log), rtol=8 * eps, atol=8 * eps)
    _assert_same(y_gpu, y_cpu, vector_rows=dtype == F32)
    _assert_same(dx_gpu, dx_cpu, vector_rows=dtype == F32)


# -- SoftmaxActivation ---------------------------------------------------------------------


@gpu
@pytest.mark.parametrize(("mode", "shape"), [("instance", (9, 37)), ("channel", (3, 6, 5))])
def test_float16_softmax_activation_matches_the_cpu(mode: str, shape: tuple[int, ...]) -> None:
    x, dy = uniform_values(shape, 11).astype(F16), uniform_values(shape, 12, -1, 1).astype(F16)
    (y_cpu, dx_cpu), (y_gpu, dx_gpu) = _both(
        lambda: sym.SoftmaxActivation(sym.var("x"), mode=mode), {"x": x}, dy
    )
    axis = -1 if mode == "instance" else 1
    assert _ulps(y_cpu, _to_half(softmax_ref(x, axis, 1.0, False))) <= 1
    _assert_same(y_gpu, y_cpu)
    _assert_same(dx_gpu, dx_cpu)


# -- SoftmaxOutput -------------------------------------------------------------------------

_SOFTMAX_OUTPUT = {
    "plain": ({}, "write"),
    "ignore-valid": (
        {"use_ignore": True, "normalization": "valid", "grad_scale": 0.3},
        "write",
    ),
    "batch-smooth-add": ({"normalization": "batch", "smooth_alpha": 0.1}, "add"),
    "out_grad": ({"out_grad": True, "grad_scale": 0.7}, "write"),
}


def _softmax_output_data(seed: int) -> tuple[np.ndarray, np.ndarray]:
    x = uniform_values((9, 37), seed).astype(F16)
    label = np.random.default_rng(seed + 1).integers(0, 37, 9).astype(F16)
    label[2] = -1  # ignored with use_ignore
    return x, label


def _softmax_output_grad_ref(y, label, kw, dy) -> np.ndarray:
    """(p - target) * grad_scale / norm (* dy), float64 from the float16 output."""
    n, k = y.shape
    alpha = kw.get("smooth_alpha", 0.0)
    target = np.full((n, k), alpha / (k - 1))
    valid = label != -1
    rows = np.flatnonzero(valid)
    target[rows, label[rows].astype(int)] = 1.0 - alpha
    g = y.astype(F64) - target
    if kw.get("use_ignore"):
        g[~valid] = 0.0
    norm = {"batch": n, "valid": max(int(valid.sum()), 1)}.get(kw.get("normalization"), 1)
    g *= kw.get("grad_scale", 1.0) / norm
    return g * dy.astype(F64) if kw.get("out_grad") else g


def test_float16_softmax_output_runs_on_the_cpu_through_float32() -> None:
    """SoftmaxOutput takes float16 on the CPU as softmax does (it raised before)."""
    x, label = _softmax_output_data(13)

    def build():
        return sym.SoftmaxOutput(sym.var("x"), sym.var("l"), grad_scale=0.5)

    y, dx = run_symbol(nv.cpu(), build, {"x": x, "l": label}, None)
    assert y.dtype == F16
    assert dx.dtype == F16
    assert _ulps(y, _to_half(softmax_ref(x, -1, 1.0, False))) <= 1
    want = _softmax_output_grad_ref(y, label, {"grad_scale": 0.5}, y)
    np.testing.assert_allclose(dx.astype(F64), want, rtol=2e-3, atol=1e-4)


@gpu
@pytest.mark.parametrize("case", list(_SOFTMAX_OUTPUT))
def test_float16_softmax_output_matches_the_cpu(case: str) -> None:
    kw, grad_req = _SOFTMAX_OUTPUT[case]
    x, label = _softmax_output_data(14)
    dy = uniform_values(x.shape, 16, -1, 1).astype(F16)

    def build():
        return sym.SoftmaxOutput(sym.var("x"), sym.var("l"), **kw)

    (y_cpu, dx_cpu), (y_gpu, dx_gpu) = _both(build, {"x": x, "l": label}, dy, grad_req)
    want = _softmax_output_grad_ref(y_cpu, label, kw, dy) + (0.25 if grad_req == "add" else 0)
    np.testing.assert_allclose(dx_cpu.astype(F64), want, rtol=2e-3, atol=1e-4)
    _assert_same(y_gpu, y_cpu)
    _assert_same(dx_gpu, dx_cpu)


@gpu
def test_float16_softmax_output_multi_output_and_probabilities_match_the_cpu() -> None:
    x3 = uniform_values((3, 6, 5), 17).astype(F16)
    label3 = np.random.default_rng(18).integers(0, 6, (3, 5)).astype(F16)
    cpu, got = _both(
        lambda: sym.SoftmaxOutput(sym.var("x"), sym.var("l"), multi_output=True),
        {"x": x3, "l": label3},
        None,
    )
    for a, b in zip(got, cpu, strict=True):
        _assert_same(a, b)
    x = uniform_values((9, 37), 19).astype(F16)
    probs = np.random.default_rng(20).dirichlet(np.ones(37), 9).astype(F16)
    (y_cpu, dx_cpu), (y_gpu, dx_gpu) = _both(
        lambda: sym.SoftmaxOutput(sym.var("x"), sym.var("l"), grad_scale=0.7),
        {"x": x, "l": probs},
        None,
    )
    # p - label in float32 (exact for these float16 values), then * 0.7 in float64
    want = _to_half((y_cpu.astype(F32) - probs.astype(F32)).astype(F64) * 0.7)
    np.testing.assert_array_equal(dx_cpu, want)
    _assert_same(y_gpu, y_cpu)
    _assert_same(dx_gpu, dx_cpu)
