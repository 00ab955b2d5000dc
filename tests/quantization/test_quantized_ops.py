"""Quantized ops against NumPy references: float ops on the same integers, hand values,
MXNet's documented formulas, and the errors for wrong dtypes."""

from __future__ import annotations

import numpy as np
import pytest

import nnvmpy as nv

I32 = 2147483647


def _r(v: float) -> nv.nd.NDArray:
    return nv.nd.array([v])


def _codes(rng: np.random.Generator, dtype: str, shape: tuple[int, ...]) -> np.ndarray:
    lo = 0 if dtype == "uint8" else -127
    return rng.integers(lo, 128, shape)


# -- requantize ----------------------------------------------------------------------------


def test_requantize_by_hand() -> None:
    """Range (-1, 1): one int32 step is 1/I32; the data's largest |code| sets the new range."""
    q = np.array([-I32 // 2, 0, I32 // 4, I32 // 2], np.int32)
    out, lo, hi = nv.nd.contrib.requantize(nv.nd.array(q, dtype="int32"), _r(-1.0), _r(1.0))
    assert out.dtype == np.int8
    np.testing.assert_array_equal(out.asnumpy(), [-127, 0, 64, 127])  # 63.5 + 0.5 -> 64
    np.testing.assert_allclose(lo.asnumpy(), [-0.5], rtol=1e-6)
    np.testing.assert_allclose(hi.asnumpy(), [0.5], rtol=1e-6)


def test_requantize_calibrated_clips_and_keeps_the_calib_range() -> None:
    q = np.array([-I32, -I32 // 10, I32 // 20, I32], np.int32)
    out, lo, hi = nv.nd.contrib.requantize(
        nv.nd.array(q, dtype="int32"),
        _r(-10.0),
        _r(10.0),
        min_calib_range=-2.0,
        max_calib_range=1.0,
    )
    # real values -10, -1, 0.5, 10 over range 2: codes -127 (clipped), -64, 32, 127
    np.testing.assert_array_equal(out.asnumpy(), [-127, -64, 32, 127])
    np.testing.assert_array_equal(lo.asnumpy(), [-2.0])
    np.testing.assert_array_equal(hi.asnumpy(), [2.0])


@pytest.mark.parametrize("out_type", ["uint8", "auto"])
def test_requantize_to_uint8(out_type: str) -> None:
    q = np.array([-I32 // 4, 0, I32 // 8, I32 // 4], np.int32)
    out, lo, hi = nv.nd.contrib.requantize(
        nv.nd.array(q, dtype="int32"), _r(-4.0), _r(4.0), out_type=out_type,
        min_calib_range=0.0, max_calib_range=1.0,
    )  # fmt: skip
    assert out.dtype == np.uint8
    np.testing.assert_array_equal(out.asnumpy(), [0, 0, 128, 255])  # 0.5 * 255 + 0.5 = 128
    np.testing.assert_array_equal(lo.asnumpy(), [0.0])
    np.testing.assert_array_equal(hi.asnumpy(), [1.0])


def test_requantize_symbolic_matches_imperative() -> None:
    rng = np.random.default_rng(1)
    q = nv.nd.array(rng.integers(-(10**9), 10**9, (3, 4)), dtype="int32")
    want = [a.asnumpy() for a in nv.nd.contrib.requantize(q, _r(-5.0), _r(7.0))]
    s = nv.sym.contrib.requantize(nv.sym.var("data"), nv.sym.var("lo"), nv.sym.var("hi"))
    exe = s.bind(nv.cpu(), {"data": q, "lo": _r(-5.0), "hi": _r(7.0)})
    for got, ref in zip(exe.forward(), want):
        np.testing.assert_array_equal(got.asnumpy(), ref)


def test_requantize_wants_int32() -> None:
    with pytest.raises(nv.NNVMError, match=r"_contrib_requantize.*'data'.*int32"):
        nv.nd.contrib.requantize(nv.nd.array([1.0]), _r(-1.0), _r(1.0)).wait_to_read()


# -- quantize_v2 -------------------------------------------------------------------------


def test_quantize_v2_int8_uses_the_data_range() -> None:
    out, lo, hi = nv.nd.contrib.quantize_v2(nv.nd.array([-1.0, 0.5, 2.0]))
    assert out.dtype == np.int8
    np.testing.assert_array_equal(out.asnumpy(), [-64, 32, 127])  # scale 127 / 2
    np.testing.assert_array_equal(np.r_[lo.asnumpy(), hi.asnumpy()], [-2.0, 2.0])


def test_quantize_v2_uint8_calibrated_clips() -> None:
    x = nv.nd.array([-1.0, 0.0, 0.5, 3.0])
    out, lo, hi = nv.nd.contrib.quantize_v2(
        x, out_type="uint8", min_calib_range=0.0, max_calib_range=1.0
    )
    np.testing.assert_array_equal(out.asnumpy(), [0, 0, 128, 255])
    np.testing.assert_array_equal(np.r_[lo.asnumpy(), hi.asnumpy()], [0.0, 1.0])


@pytest.mark.parametrize(
    ("calib", "want"), [((0.0, 1.0), np.uint8), ((-1.0, 1.0), np.int8), (None, np.int8)]
)
def test_quantize_v2_auto_picks_the_type(calib: tuple[float, float] | None, want: type) -> None:
    kw = {} if calib is None else {"min_calib_range": calib[0], "max_calib_range": calib[1]}
    out = nv.nd.contrib.quantize_v2(nv.nd.array([0.25, 0.75]), out_type="auto", **kw)[0]
    assert out.dtype == want


def test_quantize_v2_passes_quantized_data_through() -> None:
    q = nv.nd.array([-3, 5], dtype="int8")
    out, lo, hi = nv.nd.contrib.quantize_v2(q, min_calib_range=-2.0, max_calib_range=2.0)
    assert out.dtype == np.int8
    np.testing.assert_array_equal(out.asnumpy(), [-3, 5])
    np.testing.assert_array_equal(np.r_[lo.asnumpy(), hi.asnumpy()], [-2.0, 2.0])


# -- flatten / act / pooling ---------------------------------------------------------------


@pytest.mark.parametrize("shape", [(10,), (4, 5), (2, 3, 4, 5)])
def test_quantized_flatten(shape: tuple[int, ...]) -> None:
    q = np.random.default_rng(2).integers(-127, 128, shape).astype(np.int8)
    out, lo, hi = nv.nd.contrib.quantized_flatten(nv.nd.array(q, dtype="int8"), _r(-3.0), _r(4.5))
    np.testing.assert_array_equal(out.asnumpy(), q.reshape(shape[0], -1))
    np.testing.assert_array_equal(np.r_[lo.asnumpy(), hi.asnumpy()], [-3.0, 4.5])


def test_quantized_act_relu_keeps_the_range() -> None:
    q = nv.nd.array([[-5, 0], [7, -128]], dtype="int8")
    out, lo, hi = nv.nd.contrib.quantized_act(q, _r(-1.0), _r(2.0), act_type="relu")
    np.testing.assert_array_equal(out.asnumpy(), [[0, 0], [7, 0]])
    np.testing.assert_array_equal(np.r_[lo.asnumpy(), hi.asnumpy()], [-1.0, 2.0])
    with pytest.raises(nv.NNVMError, match="act_type"):
        nv.nd.contrib.quantized_act(q, _r(-1.0), _r(2.0), act_type="tanh")


POOLS = [
    {"kernel": (3, 3), "pool_type": "max", "stride": (2, 2)},
    {"kernel": (3, 3), "pool_type": "max", "stride": (2, 2), "pooling_convention": "full"},
    {"kernel": (7, 7), "pool_type": "avg", "global_pool": True},
    {"kernel": (3, 3), "pool_type": "avg", "stride": (2, 2), "pad": (1, 1)},
    {"kernel": (3, 3), "pool_type": "avg", "pad": (1, 1), "count_include_pad": False},
    {"kernel": (2, 3, 2), "pool_type": "max", "pad": (1, 0, 1)},
]


@pytest.mark.parametrize("params", POOLS)
@pytest.mark.parametrize("dtype", ["int8", "uint8"])
def test_quantized_pooling_matches_float_pooling(params: dict, dtype: str) -> None:
    shape = (2, 3, 5, 7, 6) if len(params["kernel"]) == 3 else (2, 3, 9, 8)
    x = _codes(np.random.default_rng(3), dtype, shape)
    out, lo, hi = nv.nd.contrib.quantized_pooling(
        nv.nd.array(x, dtype=dtype), _r(-1.0), _r(1.0), **params
    )
    ref = nv.nd.Pooling(nv.nd.array(x.astype(np.float32)), **params).asnumpy()
    assert out.dtype == np.dtype(dtype)
    assert out.shape == ref.shape
    tol = 0.0 if params["pool_type"] == "max" else 0.5  # avg rounds to the nearest code
    assert np.abs(out.asnumpy() - ref).max() <= tol
    np.testing.assert_array_equal(np.r_[lo.asnumpy(), hi.asnumpy()], [-1.0, 1.0])


def test_quantized_pooling_rejects_lp() -> None:
    x = nv.nd.array(np.zeros((1, 1, 4, 4)), dtype="int8")
    with pytest.raises(nv.NNVMError, match="pool_type"):
        nv.nd.contrib.quantized_pooling(x, _r(-1.0), _r(1.0), kernel=(2, 2), pool_type="sum")


# -- int32 accumulators --------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["int8", "uint8"])
@pytest.mark.parametrize("flatten", [True, False])
def test_quantized_fc_is_exact_and_scales_the_bias(dtype: str, flatten: bool) -> None:
    rng = np.random.default_rng(4)
    x = _codes(rng, dtype, (6, 3, 8))
    w = rng.integers(-127, 128, (5, 24 if flatten else 8))
    b = rng.integers(-127, 128, (5,))
    d_range, w_range, b_range = 2.0, 0.5, 4.0
    out, lo, hi = nv.nd.contrib.quantized_fully_connected(
        nv.nd.array(x, dtype=dtype), nv.nd.array(w, dtype="int8"), nv.nd.array(b, dtype="int8"),
        _r(-d_range), _r(d_range), _r(-w_range), _r(w_range), _r(-b_range), _r(b_range),
        num_hidden=5, flatten=flatten,
    )  # fmt: skip
    assert out.dtype == np.int32
    step = d_range / (255.0 if dtype == "uint8" else 127.0) * w_range / 127.0
    acc = nv.nd.FullyConnected(
        nv.nd.array(x, dtype="float64"), nv.nd.array(w, dtype="float64"), num_hidden=5,
        no_bias=True, flatten=flatten,
    ).asnumpy()  # fmt: skip
    np.testing.assert_array_equal(out.asnumpy(), acc + np.rint(b * (b_range / 127.0) / step))
    np.testing.assert_allclose(
        np.r_[lo.asnumpy(), hi.asnumpy()], [-step * I32, step * I32], rtol=1e-6
    )


def test_quantized_fc_dequantizes_to_the_float_product() -> None:
    """quantize -> quantized FC -> requantize -> dequantize tracks the float FC."""
    rng = np.random.default_rng(5)
    x, w = rng.normal(size=(8, 16)).astype(np.float32), rng.normal(size=(4, 16)).astype(np.float32)
    qx, xl, xh = nv.nd.contrib.quantize_v2(nv.nd.array(x))
    qw, wl, wh = nv.nd.contrib.quantize_v2(nv.nd.array(w))
    acc, al, ah = nv.nd.contrib.quantized_fully_connected(
        qx, qw, xl, xh, wl, wh, num_hidden=4, no_bias=True
    )
    y = nv.nd.contrib.dequantize(*nv.nd.contrib.requantize(acc, al, ah)).asnumpy()
    ref = x @ w.T
    assert np.abs(y - ref).max() < 0.05 * np.abs(ref).max()


@pytest.mark.parametrize("dtype", ["int8", "uint8"])
@pytest.mark.parametrize(
    "params",
    [
        {"kernel": (3, 3), "pad": (1, 1)},
        {"kernel": (3, 3), "stride": (2, 1), "dilate": (1, 2), "num_group": 2},
        {"kernel": (3,), "pad": (2,), "stride": (2,)},
        {"kernel": (2, 2, 2), "pad": (1, 0, 1)},
    ],
)
def test_quantized_conv_matches_float_convolution(dtype: str, params: dict) -> None:
    rng = np.random.default_rng(6)
    nd = len(params["kernel"])
    shape = (2, 4, *(7, 8, 6)[:nd])
    g = params.get("num_group", 1)
    x = _codes(rng, dtype, shape)
    w = rng.integers(-127, 128, (6, 4 // g, *params["kernel"]))
    b = rng.integers(-127, 128, (6,))
    out, _lo, _hi = nv.nd.contrib.quantized_conv(
        nv.nd.array(x, dtype=dtype), nv.nd.array(w, dtype="int8"), nv.nd.array(b, dtype="int8"),
        _r(-1.0), _r(1.0), _r(-1.0), _r(1.0), _r(-1.0), _r(1.0), num_filter=6, **params,
    )  # fmt: skip
    step = (1.0 / (255.0 if dtype == "uint8" else 127.0)) * (1.0 / 127.0)
    bias = np.rint(b * (1.0 / 127.0) / step)
    ref = nv.nd.Convolution(
        nv.nd.array(x, dtype="float64"), nv.nd.array(w, dtype="float64"),
        nv.nd.array(bias, dtype="float64"), num_filter=6, **params,
    ).asnumpy()  # fmt: skip
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out.asnumpy(), ref)


def test_quantized_conv_symbol_infers_int8_weights() -> None:
    s = nv.sym.contrib.quantized_conv(
        data=nv.sym.var("data", dtype="uint8"), kernel=(3, 3), num_filter=8, name="qc"
    )
    names = s.list_arguments()
    assert names == ["data", "qc_weight", "qc_bias", "qc_min_data", "qc_max_data",
                     "qc_min_weight", "qc_max_weight", "qc_min_bias", "qc_max_bias"]  # fmt: skip
    arg_shapes, out_shapes, _ = s.infer_shape(data=(2, 3, 10, 10))
    assert arg_shapes[1] == (8, 3, 3, 3)
    assert out_shapes == [(2, 8, 8, 8), (1,), (1,)]
    arg_types, out_types, _ = s.infer_type(data="uint8")
    assert arg_types[1] == np.int8
    assert arg_types[3] == np.float32
    assert out_types == [np.int32, np.float32, np.float32]


def test_quantized_fc_rejects_float_data() -> None:
    x = nv.nd.array(np.zeros((2, 3)))
    w = nv.nd.array(np.zeros((4, 3)), dtype="int8")
    with pytest.raises(nv.NNVMError, match=r"quantized_fully_connected.*'data'.*int8 or uint8"):
        nv.nd.contrib.quantized_fully_connected(
            x, w, _r(-1.0), _r(1.0), _r(-1.0), _r(1.0), num_hidden=4, no_bias=True
        ).wait_to_read()


# -- concat / elemwise_add -----------------------------------------------------------------


def test_quantized_concat_rescales_onto_the_widest_range() -> None:
    a = nv.nd.array([[10, -20]], dtype="int8")  # range +-1: step 1/127
    b = nv.nd.array([[100, 50]], dtype="uint8")  # range (0, 2): step 2/255
    out, lo, hi = nv.nd.contrib.quantized_concat(
        a, b, _r(-1.0), _r(1.0), _r(0.0), _r(2.0), num_args=2, dim=0
    )
    assert out.dtype == np.int8  # any int8 input makes the output int8
    # output step 2/127: a halves, b becomes round(code * 127 / 255)
    np.testing.assert_array_equal(out.asnumpy(), [[5, -10], [50, 25]])
    np.testing.assert_array_equal(np.r_[lo.asnumpy(), hi.asnumpy()], [-1.0, 2.0])


def test_quantized_concat_of_equal_ranges_is_a_plain_concat() -> None:
    rng = np.random.default_rng(7)
    xs = [rng.integers(0, 256, (2, k, 3)).astype(np.uint8) for k in (1, 2, 3)]
    ins = [nv.nd.array(x, dtype="uint8") for x in xs] + [_r(0.0), _r(4.0)] * 3
    out, _lo, _hi = nv.nd.contrib.quantized_concat(*ins, num_args=3, dim=1)
    assert out.dtype == np.uint8
    np.testing.assert_array_equal(out.asnumpy(), np.concatenate(xs, axis=1))


def test_quantized_elemwise_add_int32_and_calibrated() -> None:
    rng = np.random.default_rng(8)
    a, b = rng.integers(-127, 128, (4, 5)), rng.integers(-127, 128, (4, 5))
    args = [nv.nd.array(a, dtype="int8"), nv.nd.array(b, dtype="int8")]
    args += [_r(-0.5), _r(0.5), _r(-2.0), _r(1.5)]
    real = a * 0.5 / 127 + b * 2.0 / 127
    out, lo, hi = nv.nd.contrib.quantized_elemwise_add(*args)
    assert out.dtype == np.int32
    np.testing.assert_allclose(out.asnumpy() * 2.5 / I32, real, atol=2.5 / I32)
    np.testing.assert_allclose(np.r_[lo.asnumpy(), hi.asnumpy()], [-2.5, 2.5])
    out, lo, hi = nv.nd.contrib.quantized_elemwise_add(
        *args, min_calib_range=-1.0, max_calib_range=2.0
    )
    assert out.dtype == np.int8
    np.testing.assert_array_equal(out.asnumpy(), np.clip(np.rint(real * 127 / 2.0), -128, 127))


def test_quantized_embedding_gathers_rows_and_keeps_the_range() -> None:
    w = np.arange(-6, 6).reshape(4, 3).astype(np.int8)
    idx = nv.nd.array([[3, 0], [9, -2]])
    out, lo, hi = nv.nd.contrib.quantized_embedding(
        idx, nv.nd.array(w, dtype="int8"), _r(-0.3), _r(0.6), input_dim=4, output_dim=3
    )
    assert out.dtype == np.int8
    np.testing.assert_array_equal(out.asnumpy(), w[[[3, 0], [3, 0]]])
    np.testing.assert_array_equal(np.r_[lo.asnumpy(), hi.asnumpy()], np.float32([-0.3, 0.6]))
