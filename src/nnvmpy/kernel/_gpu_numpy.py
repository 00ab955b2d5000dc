"""NumPy as GPU device code sees it: `np` in a kernel body, rebound for its CUDA build.

numba-cuda lowers `math`'s functions but its ufunc table has no np.floor, np.ceil,
np.trunc, np.fix, np.rint or np.cbrt: a body using them compiled on the CPU and ran on
numba's simulator (plain Python) but failed to compile on a real GPU (KeyError: <ufunc
'floor'>; found on an H200, where _mod, floor/ceil/round/rint/trunc/fix, the random
pdfs and the rcbrt gradients all failed). `kernel.device.for_device(fn, "gpu")` gives a
body this module in place of numpy: these names are CUDA device functions written with
`math` (whose floor/ceil/trunc return floats on the GPU), every other name is numpy's.
Not used on the simulator, where Python's math.floor returns an int and raises on inf.
"""

from __future__ import annotations

import math
import threading
import types
from typing import Any

import numpy as np

_lock = threading.Lock()
_module: list[types.ModuleType] = []


def _floor(x):
    return math.floor(x)


def _ceil(x):
    return math.ceil(x)


def _trunc(x):
    return math.trunc(x)


def _rint(x):  # to the nearest integer, ties to even (np.rint)
    r = math.floor(x)
    d = x - r
    up = (d > 0.5) | ((d == 0.5) & (math.fmod(r, 2.0) != 0.0))
    return r + 1.0 if up else r * 1.0


def module() -> types.ModuleType:
    """The stand-in numpy module (built once, on the first GPU build)."""
    if not _module:
        with _lock:
            if not _module:
                _module.append(_build())
    return _module[0]


def _build() -> types.ModuleType:
    from numba import cuda, float64
    from numba.cuda import libdevice

    def cbrt(x):  # libdevice's, in float64 (math.cbrt is not lowered)
        return libdevice.cbrt(float64(x))

    device = cuda.jit(device=True)
    overrides: dict[str, Any] = {
        "floor": device(_floor),
        "ceil": device(_ceil),
        "trunc": device(_trunc),
        "fix": device(_trunc),
        "rint": device(_rint),
        "cbrt": device(cbrt),
    }
    shim = types.ModuleType("nnvmpy.kernel._gpu_numpy.numpy")
    shim.__dict__.update(overrides)
    shim.__getattr__ = lambda name: getattr(np, name)  # type: ignore[method-assign]
    return shim


OVERRIDDEN = frozenset({"floor", "ceil", "trunc", "fix", "rint", "cbrt"})

__all__ = ["OVERRIDDEN", "module"]
