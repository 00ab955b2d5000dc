"""OpCase rows for contrib_fft.py: references are the DFT sums written out with cos and sin
(no FFT), so they check NumPy's FFT and the interleaving too. Gradients: finite
differences in test_op_db; MXNet's own checks (against np.fft) in test_contrib_fft.py."""

from __future__ import annotations

import numpy as np
from op_db import OpCase


def _angles(d: int) -> np.ndarray:
    j = np.arange(d)
    return 2 * np.pi * np.outer(j, j) / d  # [j, k] -> 2 pi jk / d


def fft_ref(data: np.ndarray, compute_size: int = 128) -> np.ndarray:
    d = data.shape[-1]
    a = _angles(d)
    re = data @ np.cos(a)  # sum_j x_j cos(2 pi jk / d)
    im = -(data @ np.sin(a))
    out = np.empty((*data.shape[:-1], 2 * d))
    out[..., 0::2], out[..., 1::2] = re, im
    return out


def ifft_ref(data: np.ndarray, compute_size: int = 128) -> np.ndarray:
    re, im = data[..., 0::2], data[..., 1::2]
    a = _angles(re.shape[-1])
    return re @ np.cos(a) - im @ np.sin(a)  # Re sum_k z_k exp(+2 pi i jk / d), no 1/d


CASES = [
    OpCase("_contrib_fft", [(3, 5)], fft_ref, rtol=1e-4, atol=1e-5),
    OpCase("_contrib_fft", [(2, 1, 3, 4)], fft_ref, params={"compute_size": 2}, id="4d"),
    OpCase("_contrib_ifft", [(3, 10)], ifft_ref),
    OpCase("_contrib_ifft", [(2, 3, 2, 8)], ifft_ref, params={"compute_size": 1}, id="4d"),
]
