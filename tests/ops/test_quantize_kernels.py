"""The quantization kernels (ops/quantization/_kernels.py) over many elements: codes
against the element-by-element references of the op tables, the data's own range found
over several blocks (the block minimum and maximum anywhere), NaN and empty data; CPU
and GPU."""

from __future__ import annotations

import numpy as np
import op_db  # noqa: F401  (first: it loads every cases_*.py)
import pytest
from cases_contrib_quantize import dequantize_int8_ref, dequantize_uint8_ref, quantize_ref
from cases_quantization import quantize_v2_int8_ref, requantize_ref

import nnvmpy as nv
from nnvmpy.ops.quantization import _kernels
from nnvmpy.ops.quantization._kernels import BLOCK

DEVICES = ["cpu", pytest.param("gpu", marks=pytest.mark.gpu)]


def _ctx(device: str):
    return nv.cpu() if device == "cpu" else nv.gpu(0)


@pytest.fixture
def block(device: str, monkeypatch: pytest.MonkeyPatch) -> int:
    """Elements per partial min/max item: the real one on the CPU, 64 on the GPU (the
    simulator runs each thread in Python: its blocks of 16k took minutes)."""
    if device == "gpu":
        monkeypatch.setattr(_kernels, "BLOCK", 64)
        return 64
    return BLOCK


def _values(rng: np.random.Generator, n: int) -> np.ndarray:
    """Uniform values past the range (-0.75, 2) both ways, plus the range's ends, zeros
    of both signs and points that land exactly half a code step apart."""
    x = rng.uniform(-2.0, 3.0, n).astype(np.float32)
    x[:6] = [-0.75, 2.0, 0.0, -0.0, 2.0 / 127 * 3.5, -0.75 + 2.75 / 255 * 7.5]
    return x


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("out_type", ["int8", "uint8"])
def test_quantize_and_dequantize_match_the_references(device: str, out_type: str) -> None:
    ctx = _ctx(device)
    n = 3000 if device == "cpu" else 300
    x = _values(np.random.default_rng(2), n)
    lo, hi = np.array([-0.75], np.float32), np.array([2.0], np.float32)
    q, qlo, qhi = nv.nd.contrib.quantize(
        *(nv.nd.array(a, ctx=ctx, dtype=np.float32) for a in (x, lo, hi)), out_type=out_type
    )
    want = quantize_ref(x.astype(np.float64), lo, hi, out_type)  # the op's float64
    np.testing.assert_array_equal(q.asnumpy(), want[0])
    np.testing.assert_array_equal(qlo.asnumpy(), want[1].astype(np.float32))
    np.testing.assert_array_equal(qhi.asnumpy(), want[2].astype(np.float32))
    back = nv.nd.contrib.dequantize(q, qlo, qhi).asnumpy()
    reference = dequantize_int8_ref if out_type == "int8" else dequantize_uint8_ref
    want_back = reference(want[0], want[1], want[2])
    np.testing.assert_array_equal(back, want_back.astype(np.float32))


@pytest.mark.parametrize("device", DEVICES)
def test_quantize_v2_finds_the_range_over_blocks(device: str, block: int) -> None:
    """The extremes sit in the last, partial block and in the middle of another."""
    n = 2 * block + 37
    x = np.random.default_rng(3).uniform(-1, 1, n).astype(np.float32)
    x[-3], x[block + 5] = -4.5, 3.25
    q, lo, hi = nv.nd.contrib.quantize_v2(nv.nd.array(x, ctx=_ctx(device)))
    want = quantize_v2_int8_ref(x.astype(np.float64))
    assert (lo.asnumpy()[0], hi.asnumpy()[0]) == (-4.5, 4.5)
    np.testing.assert_array_equal(q.asnumpy(), want[0])


@pytest.mark.parametrize("device", DEVICES)
def test_requantize_over_blocks_matches_the_reference(device: str, block: int) -> None:
    rng = np.random.default_rng(4)
    data = rng.integers(-(10**9), 10**9, 2 * block + 11).astype(np.int32)
    data[block + 1] = -(2**31) + 1
    lo, hi = np.array([-1010.0], np.float32), np.array([1020.0], np.float32)
    ctx = _ctx(device)
    q, _, qhi = nv.nd.contrib.requantize(
        nv.nd.array(data, ctx=ctx, dtype=np.int32),
        nv.nd.array(lo, ctx=ctx),
        nv.nd.array(hi, ctx=ctx),
    )
    want = requantize_ref(data, lo, hi)
    np.testing.assert_array_equal(q.asnumpy(), want[0])
    np.testing.assert_array_equal(qhi.asnumpy(), want[2].astype(np.float32))


def test_nan_gives_code_zero_and_a_nan_found_range() -> None:
    """NaN has no code: 0, as the C cast of a clipped NaN gives on x86. A range found in
    data holding NaN is NaN (NumPy's min and max): every code is then 0."""
    x = np.array([1.0, np.nan, -2.0, 0.5], np.float32)
    lo, hi = nv.nd.array([-2.0]), nv.nd.array([2.0])
    for out_type, want in (("int8", [64, 0, -127, 32]), ("uint8", [191, 0, 0, 159])):
        q = nv.nd.contrib.quantize(nv.nd.array(x), lo, hi, out_type=out_type)[0]
        np.testing.assert_array_equal(q.asnumpy(), want)
    big = np.random.default_rng(5).uniform(-1, 1, BLOCK + 9).astype(np.float32)
    big[BLOCK + 2] = np.nan
    q, lo_out, hi_out = nv.nd.contrib.quantize_v2(nv.nd.array(big))
    assert np.isnan(lo_out.asnumpy()[0])
    assert np.isnan(hi_out.asnumpy()[0])
    np.testing.assert_array_equal(q.asnumpy(), 0)


def test_empty_data_has_the_zero_range() -> None:
    q, lo, hi = nv.nd.contrib.quantize_v2(nv.nd.array(np.zeros((0, 3), np.float32)))
    assert q.shape == (0, 3)
    assert (lo.asnumpy()[0], hi.asnumpy()[0]) == (0.0, 0.0)


@pytest.mark.parametrize("name", ["quantize_codes", "requantize_codes"])
def test_code_loops_are_vectorised_in_32_bit_lanes(name: str) -> None:
    """The CPU loops of the code kernels vectorise and convert to int32 lanes: written as
    conditional expressions, clip_code / signed_code left them scalar (0.8-3.5 ns per
    element instead of ~0.1), and int() converts to int64."""
    import re

    import numba

    from nnvmpy.kernel import device

    pf = getattr(_kernels, name)
    body = device._njit(device.for_device(pf.py_func, "cpu"), inline="always")
    source = device._make_loop(device._CPU_LOOP, {"body": body}, 5, name, range="range")
    loop = numba.njit(nogil=True, error_model="numpy")(source)  # uncached: LLVM to read
    x = np.ones(64, np.int32 if name == "requantize_codes" else np.float32)
    loop(64, x, np.empty(64, np.int8), np.array([0.5, 2.0, 1.0]), True, 1)
    llvm = loop.inspect_llvm(loop.signatures[0])
    assert re.search(r"fptosi <\d+ x (float|double)> [^\n]* to <\d+ x i32>", llvm), (
        f"{name}: no vectorised conversion to int32"
    )
    wide = re.findall(r"fptosi <\d+ x (?:float|double)> [^\n]* to <\d+ x i64>", llvm)
    assert not wide, f"{name}: converts to int64 lanes"
