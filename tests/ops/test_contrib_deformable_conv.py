"""DeformableConvolution: zero offsets give Convolution; whole-pixel offsets move the taps."""

from __future__ import annotations

import numpy as np
import pytest

import nnvmpy as nv

KW = {"kernel": (3, 3), "pad": (1, 1), "num_filter": 4, "num_group": 2}


def _nd(x: np.ndarray) -> nv.nd.NDArray:
    return nv.nd.array(x, dtype=np.float64)


def test_zero_offsets_are_an_ordinary_grouped_convolution() -> None:
    rng = np.random.default_rng(0)
    x, w, b = rng.normal(size=(2, 4, 6, 5)), rng.normal(size=(4, 2, 3, 3)), rng.normal(size=4)
    offset = np.zeros((2, 2 * 18, 6, 5))
    got = nv.nd.contrib.DeformableConvolution(
        _nd(x), _nd(offset), _nd(w), _nd(b), num_deformable_group=2, **KW
    )
    want = nv.nd.Convolution(_nd(x), _nd(w), _nd(b), **KW)
    np.testing.assert_allclose(got.asnumpy(), want.asnumpy(), atol=1e-12)


def test_a_whole_pixel_offset_reads_the_neighbouring_pixel() -> None:
    """A 1 x 1 kernel with x-offset +1 reads the pixel to the right (0 past the edge)."""
    x = np.arange(12.0).reshape(1, 1, 3, 4)
    offset = np.zeros((1, 2, 3, 4))
    offset[:, 1] = 1.0
    out = nv.nd.contrib.DeformableConvolution(
        _nd(x), _nd(offset), _nd(np.ones((1, 1, 1, 1))), kernel=(1, 1), num_filter=1, no_bias=True
    )
    want = np.concatenate([x[..., 1:], np.zeros((1, 1, 3, 1))], axis=-1)
    np.testing.assert_array_equal(out.asnumpy(), want)


def test_channels_must_split_into_the_groups() -> None:
    with pytest.raises(nv.NNVMError, match="num_deformable_group=3"):
        nv.nd.contrib.DeformableConvolution(
            nv.nd.ones((1, 4, 5, 5)),
            nv.nd.zeros((1, 54, 5, 5)),
            nv.nd.ones((4, 2, 3, 3)),
            nv.nd.zeros((4,)),
            num_deformable_group=3,
            **KW,
        )
