"""AdaptiveAvgPooling2D: windows by hand and the errors the op table cannot reach."""

from __future__ import annotations

import numpy as np
import pytest

import nnvmpy as nv


def test_overlapping_windows_by_hand() -> None:
    """5 rows onto 3: windows [0, 2), [1, 4), [3, 5); one column stays one column."""
    x = np.array([1.0, 2.0, 4.0, 8.0, 16.0]).reshape(1, 1, 5, 1)
    y = nv.nd.contrib.AdaptiveAvgPooling2D(nv.nd.array(x), output_size=(3, 1))
    np.testing.assert_allclose(y.asnumpy().ravel(), [1.5, 14 / 3, 12.0])


def test_bad_output_size_and_rank_are_reported() -> None:
    with pytest.raises(nv.NNVMError, match="output_size"):
        nv.nd.contrib.AdaptiveAvgPooling2D(nv.nd.ones((1, 1, 4, 4)), output_size=(1, 2, 3))
    with pytest.raises(nv.NNVMError, match="output_size"):
        nv.nd.contrib.AdaptiveAvgPooling2D(nv.nd.ones((1, 1, 4, 4)), output_size=(0, 2))
    with pytest.raises(nv.NNVMError, match="NCHW"):
        nv.nd.contrib.AdaptiveAvgPooling2D(nv.nd.ones((2, 3, 4)), output_size=2)
