"""quantize_asym: hand-computed values (checked against MXNet 1.9.1's CPU kernel) on every
device, the data's range over many blocks, NaN, the round trip, the
forward-only contract and the dtype/parameter checks."""

from __future__ import annotations

import numpy as np
import pytest

import nnvmpy as nv


def test_data_range_by_hand(ctx: nv.Context) -> None:
    """Range [-1, 3]: scale 255 / 4 = 63.75, shift 255 - 3 * 63.75 = 63.75."""
    x = np.linspace(-1, 3, 12, dtype=np.float32).reshape(2, 2, 3)
    q, scale, shift = nv.nd.contrib.quantize_asym(nv.nd.array(x, ctx=ctx))
    assert (q.dtype, scale.dtype, shift.dtype) == (np.uint8, np.float32, np.float32)
    assert (q.shape, scale.shape, shift.shape) == ((2, 2, 3), (1,), (1,))
    np.testing.assert_array_equal(
        q.asnumpy().ravel(), [0, 23, 46, 70, 93, 116, 139, 162, 185, 209, 232, 255]
    )
    np.testing.assert_array_equal(scale.asnumpy(), [63.75])
    np.testing.assert_array_equal(shift.asnumpy(), [63.75])


@pytest.mark.parametrize(
    ("lo", "hi", "want", "scale", "shift"),
    [
        (-0.5, 1.5, [0, 89, 230, 255, 0, 64], 127.5, 63.75),
        (1.5, -0.5, [255, 166, 26, 0, 255, 191], -127.5, 191.25),  # reversed: mirrored
    ],
)
def test_calibrated_range_saturates(ctx: nv.Context, lo: float, hi: float, want, scale, shift
                                    ) -> None:  # fmt: skip
    x = nv.nd.array([-0.7, 0.2, 1.3, 2.9, -1.2, 0.0047], ctx=ctx)
    q, s, t = nv.nd.contrib.quantize_asym(x, min_calib_range=lo, max_calib_range=hi)
    np.testing.assert_array_equal(q.asnumpy(), want)
    np.testing.assert_array_equal(s.asnumpy(), [scale])
    np.testing.assert_array_equal(t.asnumpy(), [shift])


def test_one_calibration_bound_alone_is_ignored() -> None:
    """As MXNet: both bounds or none; with one the data's range is used."""
    x = nv.nd.array([-0.7, 0.2, 1.3, 2.9, -1.2, 0.0047])
    q, s, _ = nv.nd.contrib.quantize_asym(x, min_calib_range=-0.5)
    np.testing.assert_array_equal(q.asnumpy(), [31, 87, 155, 255, 0, 75])
    np.testing.assert_allclose(s.asnumpy(), [255 / 4.1], rtol=1e-6)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # the simulator's 255 / 0
def test_constant_tensor_gives_zeros(ctx: nv.Context) -> None:
    q, s, _ = nv.nd.contrib.quantize_asym(nv.nd.array(np.full((2, 2), 0.5), ctx=ctx))
    np.testing.assert_array_equal(q.asnumpy(), np.zeros((2, 2)))
    assert np.isinf(s.asnumpy()[0])


@pytest.mark.parametrize("device", ["cpu", pytest.param("gpu", marks=pytest.mark.gpu)])
def test_range_over_many_blocks_and_nan(device: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The data's min and max found across blocks (64 elements a block on the GPU: the
    simulator is slow), the formula against NumPy's float32; a NaN anywhere makes every
    code 0 (NaN range, as NumPy's min)."""
    from nnvmpy.ops.quantization import _kernels

    ctx = nv.cpu() if device == "cpu" else nv.gpu(0)
    n = 40000 if device == "cpu" else 300
    if device == "gpu":
        monkeypatch.setattr(_kernels, "BLOCK", 64)
    x = np.random.default_rng(4).uniform(-2.0, 3.0, n).astype(np.float32)
    x[n // 2], x[n - 3] = -2.5, 3.5  # the extremes in later blocks
    scale = np.float32(255) / (np.float32(3.5) - np.float32(-2.5))
    shift = np.float32(255) - np.float32(3.5) * scale
    want = np.trunc(np.clip((x * scale + shift).astype(np.float64) + 0.5, 0, 255))
    q, s, t = nv.nd.contrib.quantize_asym(nv.nd.array(x, ctx=ctx))
    np.testing.assert_array_equal(q.asnumpy(), want.astype(np.uint8))
    np.testing.assert_array_equal([s.asnumpy()[0], t.asnumpy()[0]], [scale, shift])

    outs = [nv.nd.ones(n, ctx=ctx, dtype=np.uint8), nv.nd.ones(1, ctx=ctx), nv.nd.ones(1, ctx=ctx)]
    data = nv.nd.array(np.where(np.arange(n) == 7, np.nan, x).astype(np.float32), ctx=ctx)
    nv.nd.contrib.quantize_asym(data, out=outs)
    np.testing.assert_array_equal(outs[0].asnumpy(), np.zeros(n))
    assert np.isnan(outs[1].asnumpy()[0])


def test_round_trip_error_is_at_most_half_a_step() -> None:
    x = np.random.default_rng(0).uniform(-2.0, 3.0, 500).astype(np.float32)
    q, scale, shift = nv.nd.contrib.quantize_asym(nv.nd.array(x))
    back = (q.asnumpy() - shift.asnumpy()[0]) / scale.asnumpy()[0]
    assert np.abs(back - x).max() <= 0.5 / scale.asnumpy()[0] + 1e-6


def test_symbolic_outputs_and_zero_gradient() -> None:
    with nv.name.NameManager():  # fresh counters: quantize_asym0 whatever ran before
        s = nv.sym.contrib.quantize_asym(nv.sym.var("data"), min_calib_range=-1, max_calib_range=1)
    assert s.list_outputs() == [
        "quantize_asym0_output",
        "quantize_asym0_scale",
        "quantize_asym0_shift",
    ]
    assert s.infer_shape(data=(2, 3)) == ([(2, 3)], [(2, 3), (1,), (1,)], [])
    assert s.infer_type(data=np.float32)[1] == [np.uint8, np.float32, np.float32]
    x = nv.nd.array([0.3, -0.7])
    x.attach_grad()
    with nv.autograd.record():
        q, scale, shift = nv.nd.contrib.quantize_asym(x)
        y = (q.astype(np.float32) - shift) / scale
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [0.0, 0.0])


def test_bad_input_is_refused() -> None:
    with pytest.raises(nv.NNVMError, match=r"_contrib_quantize_asym: input 'data'.*float32"):
        nv.nd.contrib.quantize_asym(nv.nd.array([0.5], dtype=np.float64))
    with pytest.raises(nv.NNVMError, match="min_calib_range"):
        nv.nd.contrib.quantize_asym(nv.nd.array([0.5]), min_calib_range="low")
