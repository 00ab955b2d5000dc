"""The order the detection ops rank boxes in: highest score first, equal scores by position.

MXNet's box_nms, MultiBoxDetection and Proposal sort every candidate by score (stably)
and keep the first k. `top_order` gives the same indices without sorting what falls
outside the top k: a partition finds the k-th highest score first, then only the scores
above it (and as many equal to it as fit, the earliest first) are sorted.
"""

from __future__ import annotations

import numpy as np


def top_order(scores: np.ndarray, k: int | None = None) -> np.ndarray:
    """np.argsort(-scores, kind="stable")[:k]: the indices of the k highest scores (all
    with k None or >= len), highest first, equal scores in index order; NaN ranks last."""
    if k is None or k >= len(scores):
        return np.argsort(-scores, kind="stable")
    if k <= 0:
        return np.empty(0, np.intp)
    numbers = int(np.count_nonzero(scores == scores))
    if k >= numbers:  # NaNs (ranked last) are in the top k
        return np.argsort(-scores, kind="stable")[:k]
    # NaN sorts above every number: the numbers fill positions 0 .. numbers - 1
    kth = np.partition(scores, numbers - k)[numbers - k]  # the k-th highest number
    above = np.flatnonzero(scores > kth)
    ties = np.flatnonzero(scores == kth)[: k - len(above)]
    picked = np.sort(np.concatenate([above, ties]))
    return picked[np.argsort(-scores[picked], kind="stable")]


__all__ = ["top_order"]
