"""OpCase rows for histogram.py: _histogram against numpy.histogram.

Equal-width bins over a range whose edges are exact in float32 (multiples of 1/4), and
given edges that are too, so float32 and float64 data fall in the same bins. The counts
are piecewise constant (no gradient to check by finite differences).
"""

from __future__ import annotations

import numpy as np
from op_db import OpCase


def _edges_input(rng: np.random.Generator, dtype: object) -> list[np.ndarray]:
    x = rng.uniform(-1.5, 1.5, size=(4, 9)).astype(dtype)
    x.flat[:3] = [-1.0, 0.5, 1.0]  # on an edge, the last edge (inclusive) included
    return [x, np.array([-1.0, -0.25, 0.5, 0.75, 1.0], dtype=dtype)]


CASES = [
    OpCase(
        "_histogram",
        shapes=[(5, 6)],
        params={"bin_cnt": 8, "range": (-1.0, 1.0)},
        reference=lambda x, bin_cnt, range: np.histogram(x, bin_cnt, range=range),
        low=-1.2,
        high=1.2,
        grad=False,
        id="equal_width",
    ),
    OpCase(
        "_histogram",
        shapes=[(4, 9), (5,)],
        inputs=_edges_input,
        reference=lambda x, bins: np.histogram(x, bins),
        grad=False,
        id="edges",
    ),
]
