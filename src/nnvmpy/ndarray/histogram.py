"""nd.histogram: MXNet's front end of the _histogram op (numpy.histogram's signature).

`bins` an NDArray of edges runs the op with them as input `bins`; an int with `range`
runs equal-width bins on the device. An int without `range` falls back to
numpy.histogram on the host (its automatic range is the data's min and max), with a
warning, as MXNet does.
"""

from __future__ import annotations

import warnings

import numpy as np

from ..base import ParamError
from .ndarray import NDArray, array


def histogram(
    a: NDArray, bins: int | NDArray = 10, range: tuple[float, float] | None = None
) -> tuple[NDArray, NDArray]:
    """(counts, bin_edges) of a, as numpy.histogram: counts are int64, edges a's dtype."""
    from nnvmpy.ndarray import _internal

    if isinstance(bins, NDArray):
        return _internal._histogram(data=a, bins=bins)
    if isinstance(bins, (int, np.integer)) and not isinstance(bins, bool):
        if range is None:
            warnings.warn(
                "range is not specified, using numpy's result to ensure consistency with numpy",
                stacklevel=2,
            )
            if bins < 1:
                raise ParamError(f"histogram: bins must be >= 1 when an int, got {bins}")
            counts, edges = np.histogram(a.asnumpy(), bins=int(bins))
            return array(counts), array(edges)
        return _internal._histogram(data=a, bin_cnt=int(bins), range=range)
    raise ParamError(
        f"histogram: bins argument should be either an integer or an NDArray, got {bins!r}"
    )
