"""Kernels: element-wise scalar functions compiled per device, hand-written kernels, storage.

Importing this package compiles nothing and does not import numba; every kernel is
compiled on its first launch (see elementwise.py, cpu.py, cuda.py).
"""

from . import storage
from .elementwise import ElementwiseKernel, elementwise
from .handwritten import CPUKernel, CUDAKernel, cpu_kernel, cuda_kernel

__all__ = [
    "CPUKernel",
    "CUDAKernel",
    "ElementwiseKernel",
    "cpu_kernel",
    "cuda_kernel",
    "elementwise",
    "storage",
]
