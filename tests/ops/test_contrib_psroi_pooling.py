"""PSROIPooling: which channel each bin reads, and its errors."""

from __future__ import annotations

import numpy as np
import pytest

import nnvmpy as nv


def test_each_bin_reads_its_own_channel_group() -> None:
    """Channel k holds the constant k: bin (ph, pw) of class c reads channel (c G + ph) G + pw."""
    data = np.broadcast_to(np.arange(8.0)[:, None, None], (8, 6, 6))[None].copy()
    rois = nv.nd.array([[0, 0, 0, 23, 23]])
    out = nv.nd.contrib.PSROIPooling(
        nv.nd.array(data), rois, spatial_scale=0.25, output_dim=2, pooled_size=2
    )
    want = np.arange(8.0).reshape(1, 2, 2, 2)
    np.testing.assert_array_equal(out.asnumpy(), want)


def test_channel_count_must_match_output_dim_and_groups() -> None:
    with pytest.raises(nv.NNVMError, match="expected output_dim x group_size"):
        nv.nd.contrib.PSROIPooling(
            nv.nd.ones((1, 9, 4, 4)),
            nv.nd.ones((1, 5)),
            spatial_scale=1.0,
            output_dim=2,
            pooled_size=2,
        )
