"""quantize / dequantize: hand-computed values, round trips and the forward-only contract."""

from __future__ import annotations

import numpy as np
import pytest

import nnvmpy as nv


def _range(lo: float, hi: float) -> tuple[nv.nd.NDArray, nv.nd.NDArray]:
    return nv.nd.array([lo]), nv.nd.array([hi])


def test_int8_by_hand() -> None:
    """Range [0, 1]: scale 127; 0.1392 * 127 + 0.5 = 18.18 -> 18, and back 18 / 127."""
    a = nv.nd.array([[0.1392, 0.5928], [0.6027, -0.8579]])
    q, lo, hi = nv.nd.contrib.quantize(a, *_range(0.0, 1.0), out_type="int8")
    assert q.dtype == np.int8
    np.testing.assert_array_equal(q.asnumpy(), [[18, 75], [77, -109]])
    np.testing.assert_array_equal(lo.asnumpy(), [-1.0])
    np.testing.assert_array_equal(hi.asnumpy(), [1.0])
    back = nv.nd.contrib.dequantize(q, lo, hi)
    np.testing.assert_allclose(back.asnumpy(), np.array([[18, 75], [77, -109]]) / 127, rtol=1e-6)


def test_uint8_by_hand_and_clipping() -> None:
    """Range [-1, 1.55]: 255 / 2.55 = 100 steps per unit, zero point at -1."""
    a = nv.nd.array([-2.0, -1.0, 0.0, 0.234, 1.55, 9.0])
    q, lo, hi = nv.nd.contrib.quantize(a, *_range(-1.0, 1.55))
    assert q.dtype == np.uint8
    np.testing.assert_array_equal(q.asnumpy(), [0, 0, 100, 123, 255, 255])
    np.testing.assert_allclose(lo.asnumpy(), [-1.0])
    np.testing.assert_allclose(hi.asnumpy(), [1.55])
    back = nv.nd.contrib.dequantize(q, lo, hi)
    np.testing.assert_allclose(back.asnumpy(), [-1, -1, 0, 0.23, 1.55, 1.55], atol=1e-6)


@pytest.mark.parametrize("out_type", ["uint8", "int8"])
def test_round_trip_error_is_at_most_half_a_step(out_type: str) -> None:
    x = np.random.default_rng(0).uniform(-2.0, 3.0, 500).astype(np.float32)
    q, lo, hi = nv.nd.contrib.quantize(nv.nd.array(x), *_range(-2.0, 3.0), out_type=out_type)
    back = nv.nd.contrib.dequantize(q, lo, hi).asnumpy()
    step = 5.0 / 255 if out_type == "uint8" else 3.0 / 127
    assert np.abs(back - x).max() <= step / 2 + 1e-6


def test_forward_only_gradients_are_zero() -> None:
    x = nv.nd.array([0.3, -0.7])
    x.attach_grad()
    with nv.autograd.record():
        q, lo, hi = nv.nd.contrib.quantize(x, *_range(-1.0, 1.0), out_type="int8")
        y = nv.nd.contrib.dequantize(q, lo, hi)
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [0.0, 0.0])


def test_dtypes_are_checked() -> None:
    lo, hi = _range(0.0, 1.0)
    with pytest.raises(nv.NNVMError, match="data"):
        nv.nd.contrib.quantize(nv.nd.array([0.5], dtype=np.float64), lo, hi)
    with pytest.raises(nv.NNVMError, match="expected uint8 or int8"):
        nv.nd.contrib.dequantize(nv.nd.array([1], dtype=np.int32), lo, hi)
    with pytest.raises(nv.NNVMError, match="out_type"):
        nv.nd.contrib.quantize(nv.nd.array([0.5]), lo, hi, out_type="int16")
