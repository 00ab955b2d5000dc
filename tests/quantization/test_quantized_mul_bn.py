"""quantized_elemwise_mul and quantized_batch_norm: values MXNet 1.9.1 gives on small inputs,
each also derived by hand in the test, and their errors."""

from __future__ import annotations

import numpy as np
import pytest

import nnvmpy as nv

I32 = 2147483647


def _r(v: float) -> nv.nd.NDArray:
    return nv.nd.array([v])


A = np.array([[89, -100, 127, -127], [5, 64, -3, 0]], np.int8)
B = np.array([[1, 100, 127, -13], [-127, 2, 99, 7]], np.int8)


def _mul(**kw):
    args = [nv.nd.array(A, dtype="int8"), nv.nd.array(B, dtype="int8")]
    return nv.nd.contrib.quantized_elemwise_mul(*args, _r(-2.0), _r(1.5), _r(-0.5), _r(3.0), **kw)


def test_mul_default_is_the_exact_int32_product() -> None:
    out, lo, hi = _mul()
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out.asnumpy(), A.astype(np.int32) * B)
    top = I32 * (2.0 / 127) * (3.0 / 127)  # MXNet: -798865.5, 798865.5
    np.testing.assert_allclose([lo.asnumpy()[0], hi.asnumpy()[0]], [-top, top], rtol=1e-7)


def test_mul_float_output_has_one_output() -> None:
    """code product * (2 / 127.5) * (3 / 127.5): MXNet's 127.5 codes per MaxAbs."""
    out = _mul(enable_float_output=True)
    assert isinstance(out, nv.nd.NDArray)
    assert out.dtype == np.float32
    want = A.astype(np.float64) * B * 6.0 / 127.5**2
    np.testing.assert_allclose(out.asnumpy(), want, rtol=1e-6)
    np.testing.assert_allclose(out.asnumpy()[0, :2], [0.03284890577, -3.69088816643], rtol=1e-6)


def test_mul_calibrated_truncates_and_saturates() -> None:
    """MXNet gives [[0, -94, -105, 15], [-5, 1, -2, 0]]: truncation toward zero, and its
    cast wraps 151 round to -105; nnvmpy saturates at 127 instead."""
    out, lo, hi = _mul(min_calib_range=-4.0, max_calib_range=5.0)
    assert out.dtype == np.int8
    np.testing.assert_array_equal(out.asnumpy(), [[0, -94, 127, 15], [-5, 1, -2, 0]])
    assert (lo.asnumpy()[0], hi.asnumpy()[0]) == (-4.0, 5.0)


def test_mul_takes_int8_only() -> None:
    u = nv.nd.array(A.astype(np.uint8), dtype="uint8")
    with pytest.raises(nv.NNVMError, match="quantized_elemwise_mul: input 'lhs' has dtype uint8"):
        nv.nd.contrib.quantized_elemwise_mul(
            u, nv.nd.array(B, dtype="int8"), _r(0.0), _r(1.0), _r(-1.0), _r(1.0)
        )


def test_mul_shapes_must_match() -> None:
    with pytest.raises(nv.NNVMError, match="quantized_elemwise_mul"):
        nv.nd.contrib.quantized_elemwise_mul(
            nv.nd.zeros((2, 4), dtype="int8"), nv.nd.zeros((4, 2), dtype="int8"),
            _r(-1.0), _r(1.0), _r(-1.0), _r(1.0),
        )  # fmt: skip


def _bn(**kw):
    x = np.array([[[[-127, 0], [64, 127]], [[5, -5], [100, -100]]]], np.int8)
    return nv.nd.contrib.quantized_batch_norm(
        nv.nd.array(x, dtype="int8"), nv.nd.array([0.5, 2.0]), nv.nd.array([0.25, -1.0]),
        nv.nd.array([0.5, -0.5]), nv.nd.array([1.0, 4.0]), _r(-1.0), _r(2.0), **kw,
    )  # fmt: skip


def test_batch_norm_matches_mxnet() -> None:
    """Channel 0, code -127: x = -127 * 2 / 127.5, y = (x - 0.5) / 1 * 0.5 + 0.25 = -0.996,
    code round(y * 127.5 / 3) = -42. MXNet 1.9.1 gives the same for all eight."""
    out, lo, hi = _bn(min_calib_range=-2.0, max_calib_range=3.0, fix_gamma=False, eps=0.0)
    assert out.dtype == np.int8
    np.testing.assert_array_equal(out.asnumpy(), [[[[-42, 0], [21, 42]], [[-18, -25], [45, -88]]]])
    assert (lo.asnumpy()[0], hi.asnumpy()[0]) == (-2.0, 3.0)


def test_batch_norm_moving_stats_are_auxiliary_states() -> None:
    s = nv.sym.contrib.quantized_batch_norm(name="b", min_calib_range=-1.0, max_calib_range=1.0)
    assert s.list_arguments() == ["b_data", "b_gamma", "b_beta", "b_min_data", "b_max_data"]
    assert s.list_auxiliary_states() == ["b_moving_mean", "b_moving_var"]
    assert s.list_outputs() == ["b_output", "b_min_output", "b_max_output"]
    args, outs, aux = s.infer_shape(b_data=(2, 5, 3))
    assert args[1] == (5,)
    assert aux == [(5,), (5,)]
    assert outs == [(2, 5, 3), (1,), (1,)]


def test_batch_norm_needs_a_calibrated_range() -> None:
    with pytest.raises(nv.NNVMError, match="quantized_batch_norm: min_calib_range and max_calib"):
        _bn()[0].asnumpy()
