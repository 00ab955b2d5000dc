"""BilinearResize2D: values by hand, output sizes per mode, and errors."""

from __future__ import annotations

import numpy as np
import pytest

import nnvmpy as nv


def test_two_by_two_to_three_by_three_by_hand() -> None:
    """With aligned corners the corners stay and the centre is the mean of all four."""
    x = nv.nd.array(np.array([[0.0, 4.0], [8.0, 16.0]]).reshape(1, 1, 2, 2))
    y = nv.nd.contrib.BilinearResize2D(x, height=3, width=3).asnumpy()[0, 0]
    np.testing.assert_allclose(y, [[0, 2, 4], [4, 7, 10], [8, 12, 16]])


def test_pixel_centres_without_aligned_corners() -> None:
    """2 -> 4 columns: sources -0.25 (clamped to 0), 0.25, 0.75, 1.25 (the last column)."""
    x = nv.nd.array(np.array([[10.0, 20.0]]).reshape(1, 1, 1, 2))
    y = nv.nd.contrib.BilinearResize2D(x, height=1, width=4, align_corners=False)
    np.testing.assert_allclose(y.asnumpy().ravel(), [10, 12.5, 17.5, 20])


@pytest.mark.parametrize(
    ("mode", "params", "want"),
    [
        ("size", {"scale_height": 1.3, "scale_width": 0.25}, (13, 2)),
        ("size", {"height": 4, "scale_width": 2.0}, (4, 18)),
        ("odd_scale", {"scale_height": 0.5, "scale_width": 3.0}, (5, 25)),  # (9 - 1) * 3 + 1
        ("to_even_down", {}, (10, 8)),
        ("to_even_up", {}, (10, 10)),
        ("to_odd_down", {}, (9, 9)),
        ("to_odd_up", {}, (11, 9)),
    ],
)
def test_output_size_per_mode(mode: str, params: dict, want: tuple[int, int]) -> None:
    x = nv.nd.ones((1, 2, 10, 9))
    y = nv.nd.contrib.BilinearResize2D(x, mode=mode, **params)
    assert y.shape == (1, 2, *want)
    np.testing.assert_allclose(y.asnumpy(), 1.0)  # interpolating a constant keeps it


def test_errors_name_the_problem() -> None:
    with pytest.raises(nv.NNVMError, match="odd_scale"):
        nv.nd.contrib.BilinearResize2D(nv.nd.ones((1, 1, 4, 4)), mode="odd_scale")
    with pytest.raises(nv.NNVMError, match="NCHW"):
        nv.nd.contrib.BilinearResize2D(nv.nd.ones((1, 4, 4)), height=2, width=2)
    x = nv.nd.ones((1, 1, 4, 4))  # fuzz findings: int() of these raised bare Python errors
    with pytest.raises(nv.NNVMError, match="scale nan turns a side of 4 into nan"):
        nv.nd.contrib.BilinearResize2D(x, scale_height=2.0, scale_width=float("nan"))
    with pytest.raises(nv.NNVMError, match="into -inf"):
        nv.nd.contrib.BilinearResize2D(x, scale_height=-1e300, scale_width=-1e300)
    assert nv.nd.contrib.BilinearResize2D(x, scale_height=2.0, scale_width=0.5).shape == (
        1, 1, 8, 2,
    )  # fmt: skip
