"""ModulatedDeformableConvolution: the mask scales each sampled tap (DCNv2)."""

from __future__ import annotations

import numpy as np
import pytest

import nnvmpy as nv

KW = {"kernel": (3, 3), "pad": (1, 1), "num_filter": 4, "num_group": 2}


def _nd(x: np.ndarray) -> nv.nd.NDArray:
    return nv.nd.array(x, dtype=np.float64)


def test_a_mask_of_ones_is_deformable_convolution_off_the_border() -> None:
    """With a mask of ones the two ops differ only where a sample nears the border (as
    MXNet's: DCNv2 blends with zeros beyond it, DCNv1 reads nothing above row 0 and
    clamps to the last row); with the border pixels 0 they agree everywhere."""
    rng = np.random.default_rng(0)
    x, w, b = rng.normal(size=(2, 4, 6, 5)), rng.normal(size=(4, 2, 3, 3)), rng.normal(size=4)
    offset = rng.uniform(-1.5, 1.5, (2, 2 * 18, 6, 5))
    mask = np.ones((2, 2 * 9, 6, 5))

    def both(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        got = nv.nd.contrib.ModulatedDeformableConvolution(
            _nd(x), _nd(offset), _nd(mask), _nd(w), _nd(b), num_deformable_group=2, **KW
        )
        want = nv.nd.contrib.DeformableConvolution(
            _nd(x), _nd(offset), _nd(w), _nd(b), num_deformable_group=2, **KW
        )
        return got.asnumpy(), want.asnumpy()

    v2, v1 = both(x)
    assert np.abs(v2 - v1).max() > 1e-3
    x[:, :, [0, -1]] = 0.0
    x[:, :, :, [0, -1]] = 0.0
    v2, v1 = both(x)
    np.testing.assert_allclose(v2, v1, atol=1e-12)


def test_hand_computed_taps_match_mxnet() -> None:
    """2 x 2 kernel, one fractional offset per tap and a per-tap mask. Output (0, 0):
    0.5*1*x(0.5, 0) + 1*2*x(0, 0.75) + 0.25*3*x(1, 0) + 2*4*x(2.5, 1) = 1 + 1.5 + 3 + 36
    (x(2.5, 1) blends row 2 with the zero past the edge). MXNet 1.9.1 gives the same."""
    x = np.arange(12.0).reshape(1, 1, 3, 4)
    offset = np.zeros((1, 8, 2, 3))
    offset[0, 0], offset[0, 3], offset[0, 6] = 0.5, -0.25, 1.5
    mask = np.array([0.5, 1, 0.25, 2.0]).reshape(1, 4, 1, 1) * np.ones((1, 4, 2, 3))
    w = np.array([1.0, 2, 3, 4]).reshape(1, 1, 2, 2)
    out = nv.nd.contrib.ModulatedDeformableConvolution(
        _nd(x), _nd(offset), _nd(mask), _nd(w), kernel=(2, 2), num_filter=1, no_bias=True
    )
    want = [[41.5, 48.75, 56.0], [18.5, 21.75, 25.0]]
    np.testing.assert_allclose(out.asnumpy()[0, 0], want, atol=1e-12)


def test_the_mask_gradient_is_the_unscaled_sample_times_the_weight() -> None:
    """With zero offsets and a 1 x 1 kernel, d out / d mask = weight * data."""
    rng = np.random.default_rng(1)
    x = rng.normal(size=(1, 2, 3, 3))
    w = np.array([2.0, -3.0]).reshape(1, 2, 1, 1)
    data, offset, mask, weight = (
        _nd(x),
        _nd(np.zeros((1, 4, 3, 3))),
        _nd(rng.uniform(size=(1, 2, 3, 3))),
        _nd(w),
    )
    for a in (data, offset, mask, weight):
        a.attach_grad()
    with nv.autograd.record():
        out = nv.nd.contrib.ModulatedDeformableConvolution(
            data,
            offset,
            mask,
            weight,
            kernel=(1, 1),
            num_filter=1,
            num_deformable_group=2,
            no_bias=True,
        )
    out.backward()
    np.testing.assert_allclose(mask.grad.asnumpy(), w.reshape(1, 2, 1, 1) * x, atol=1e-12)
    np.testing.assert_allclose(data.grad.asnumpy(), w.reshape(1, 2, 1, 1) * mask.asnumpy())


def test_symbol_infers_offset_and_mask_shapes() -> None:
    s = nv.sym.contrib.ModulatedDeformableConvolution(kernel=(3, 3), num_filter=4, name="m")
    assert s.list_arguments() == ["m_data", "m_offset", "m_mask", "m_weight", "m_bias"]
    args, outs, _ = s.infer_shape(m_data=(2, 2, 7, 6))
    assert args == [(2, 2, 7, 6), (2, 18, 5, 4), (2, 9, 5, 4), (4, 2, 3, 3), (4,)]
    assert outs == [(2, 4, 5, 4)]


def test_a_wrong_mask_shape_names_the_mask() -> None:
    with pytest.raises(nv.NNVMError, match=r"ModulatedDeformableConvolution.*'mask'"):
        nv.nd.contrib.ModulatedDeformableConvolution(
            nv.nd.ones((1, 2, 5, 5)),
            nv.nd.zeros((1, 18, 5, 5)),
            nv.nd.ones((1, 18, 5, 5)),
            nv.nd.ones((4, 2, 3, 3)),
            kernel=(3, 3),
            pad=(1, 1),
            num_filter=4,
            no_bias=True,
        )


def test_the_batch_must_divide_by_im2col_step() -> None:
    """As MXNet: a batch of 3 with im2col_step=2 is refused, with 64 (> 3) it is not."""
    args = (
        nv.nd.ones((3, 1, 3, 3)),
        nv.nd.zeros((3, 2, 3, 3)),
        nv.nd.ones((3, 1, 3, 3)),
        nv.nd.ones((1, 1, 1, 1)),
    )
    kw = {"kernel": (1, 1), "num_filter": 1, "no_bias": True}
    with pytest.raises(nv.NNVMError, match="im2col_step=2"):
        nv.nd.contrib.ModulatedDeformableConvolution(*args, im2col_step=2, **kw)
    out = nv.nd.contrib.ModulatedDeformableConvolution(*args, im2col_step=64, **kw)
    assert out.shape == (3, 1, 3, 3)
