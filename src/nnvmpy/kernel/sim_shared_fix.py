"""A thread-safe `cuda.shared.array` for numba's CUDA simulator.

Why. The simulator runs every thread of a block as a Python thread, and gives them one
shared array per call site by looking the site up in a dict and, when it is missing,
creating the array and storing it (numba-cuda 0.x, simulator/kernelapi.py,
FakeCUDAShared.array). The look-up and the store are not atomic: two threads of a
block's first pass can both miss, each get its own uninitialised array, and from then on
read shared values the others never wrote. Block reductions then sum garbage.
multi_sum_sq failed that way about one process in four with a 1 us switch interval
(sys.setswitchinterval), and would at the default 5 ms more rarely. Here the look-up
and the store happen under a lock, and the call site is read from the caller's frame
(sys._getframe) instead of traceback.extract_stack, which formatted the whole stack on
every call of every thread.

Installed by kernel/cuda.py's get_cuda when the simulator is on; nothing changes on
real GPUs.
"""

from __future__ import annotations

import sys
import threading
from typing import Any

import numpy as np

_lock = threading.Lock()
_new_array = np.empty  # what makes a missing array (tests slow it down to widen the window)


def _shared_array(self: Any, shape: Any, dtype: Any, alignment: Any = None) -> Any:
    """FakeCUDAShared.array: one array per (file, line) of the calling kernel code per
    launch, the same object for every thread of the block."""
    if alignment is not None or shape == 0:  # dynamic shared memory: no look-up to race
        return _original(self, shape, dtype, alignment)
    from numba.core import types
    from numba.np import numpy_support

    if isinstance(dtype, types.Type):
        dtype = numpy_support.as_dtype(dtype)
    frame = sys._getframe(1)
    site = (frame.f_code.co_filename, frame.f_lineno)
    with _lock:
        found = self._allocations.get(site)
        if found is None:
            found = self._allocations[site] = _new_array(shape, dtype)
    return found


_original: Any = None


def install() -> None:
    """Replace the simulator's FakeCUDAShared.array (once; call only with the simulator)."""
    global _original
    from numba.cuda.simulator import kernelapi

    with _lock:
        if _original is None:
            _original = kernelapi.FakeCUDAShared.array
            kernelapi.FakeCUDAShared.array = _shared_array


__all__ = ["install"]
