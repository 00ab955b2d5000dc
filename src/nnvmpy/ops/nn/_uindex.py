"""`u(i)`: an array index numba need not check for negative wraparound.

numba (like Python) lets a negative index count from the end, so every signed index
costs a compare and a branch, and the inner loops of the nn kernels then neither
vectorise nor keep up with memory (LeNet's im2col ran 4x slower, max pooling 3x). The
kernels index flat contiguous arrays with offsets that are never negative, wrapped in
`u(...)`. Imports numba: the kernel modules using it are imported on first launch.
"""

from __future__ import annotations

from typing import Any

import numba


@numba.njit(inline="always")
def u(i: int) -> Any:
    return numba.uint64(i)
