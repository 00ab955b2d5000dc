"""Kernels: element-wise scalar functions and one-body loops compiled per device, storage.

Importing this package compiles nothing and does not import numba; every kernel is
compiled on its first launch (see elementwise.py, cpu.py, cuda.py).
"""

import numpy as _np

# numba-cuda 0.30 still calls np.row_stack, which NumPy 2.5 removed (seen on the lent GPU
# machines' image): every cuda.jit compile failed there. The alias is what NumPy's own
# deprecation pointed to; it is only added when missing.
if not hasattr(_np, "row_stack"):
    setattr(_np, "row_stack", _np.vstack)  # noqa: B010 - a name ruff would "fix" away

from . import storage
from .device import DeviceFunction, ParallelFor, device_function, fmax, like, parallel_for
from .elementwise import ElementwiseKernel, ScalarBody, elementwise, scalar_function
from .handwritten import CPUKernel, CUDAKernel, cpu_kernel, cuda_kernel
from .launch import uindex

__all__ = [
    "CPUKernel",
    "CUDAKernel",
    "DeviceFunction",
    "ElementwiseKernel",
    "ParallelFor",
    "ScalarBody",
    "cpu_kernel",
    "cuda_kernel",
    "device_function",
    "elementwise",
    "fmax",
    "like",
    "parallel_for",
    "scalar_function",
    "storage",
    "uindex",
]
