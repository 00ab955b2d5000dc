"""sym.histogram: MXNet's front end of the _histogram op (numpy.histogram's signature).

`bins` a Symbol of edges becomes input `bins`; an int needs `range` (a symbol cannot
look at its data to find one, so MXNet refuses range=None here).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..base import ParamError
from .symbol import Symbol


def histogram(
    a: Symbol, bins: int | Symbol = 10, range: tuple[float, float] | None = None, **kwargs: Any
) -> Symbol:
    """Symbol of (counts, bin_edges) of a, as numpy.histogram (kwargs: name, attr)."""
    from nnvmpy.symbol import _internal

    if isinstance(bins, Symbol):
        return _internal._histogram(data=a, bins=bins, **kwargs)
    if isinstance(bins, (int, np.integer)) and not isinstance(bins, bool):
        if range is None:
            raise ParamError("histogram: null range is not supported in symbol mode")
        return _internal._histogram(data=a, bin_cnt=int(bins), range=range, **kwargs)
    raise ParamError(
        f"histogram: bins argument should be either an integer or a Symbol, got {bins!r}"
    )
