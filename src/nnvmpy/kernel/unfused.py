"""Products that are never fused into an FMA on the GPU: `product` (float64) and
`product32` (float32), device functions for kernel bodies on both devices.

Why. NVVM fuses a product and the sum that follows it into one FMA by default (its
-fma=1; numba-cuda offers no switch short of fastmath, which fuses more), rounding once
where the CPU rounds twice. Mostly that is an ulp, but where a result is compared or
rounded afterwards it changes results, not only rounds them: a roi corner x2 s - 0.5 an
ulp off flips a bin's ceil(size) sample count; OpenCV's float32 bicubic weights (the
resize tables) came out an ulp off on an H200, and with them every resized value; a
quantized sum a x + b y next to a code boundary rounded to the next code. Here the GPU
build is libdevice's dmul_rn / fmul_rn: a product rounded on its own. The CPU's and the
simulator's build is the plain product (neither fuses: numba's CPU code carries no
contract flag, and the simulator is Python).

    x0 = product(corner, scale) - 0.5        # rounds as NumPy's x0 = corner * scale - 0.5
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .device import DeviceFunction


class _UnfusedProduct(DeviceFunction):
    """a * b; on a real GPU, libdevice's `rounded` (dmul_rn or fmul_rn)."""

    def __init__(self, py_func: Any, rounded: str) -> None:
        super().__init__(py_func)
        self.rounded = rounded

    def _build(self, device: str) -> Any:
        from nnvmpy.kernel.cuda import get_cuda, simulated

        if device != "gpu" or simulated():
            return super()._build(device)
        from numba.cuda import libdevice

        multiply = getattr(libdevice, self.rounded)

        def product(a, b):
            return multiply(a, b)

        return get_cuda(self.__name__).jit(device=True)(product)


def _product(a, b):
    return a * b


def _product32(a, b):
    return np.float32(a) * np.float32(b)


#: a * b in float64, rounded as NumPy rounds it also where a sum follows
product = _UnfusedProduct(_product, "dmul_rn")
#: a * b in float32, likewise (OpenCV's float32 arithmetic)
product32 = _UnfusedProduct(_product32, "fmul_rn")

__all__ = ["product", "product32"]
