"""Bit-level arithmetic and selects for kernel bodies outside kernel.vmath.

numba types int32 + int32 (and -, &, |, ^, >>, <<, likewise uint32, int16, int8 operands
and int32 arithmetic with a literal) as int64. In a loop vectorised over 16 float32
lanes that integer code then runs in 64-bit lanes: each vector is split in halves,
widened (`sext/zext <16 x i32> ... to <16 x i64>`), computed and narrowed back. vmath's
bodies avoid it with numba intrinsics that emit the int32 operation itself (add32, ...,
shl32 in vmath/_dispatch.py, swapped in by name there); this module offers the same
intrinsics to every other kernel body as device functions:

    from ...kernel.bits import add32, and32, sra32

    @kernel.device_function
    def _rne(u):                       # u an int32 (the bits of a float32)
        return sra32(add32(u, 0x7FFF), 16)

A body names them as plain globals, as any device function, and its CPU build (kernel
bodies, parallel_for loops, cpu_kernel functions: all built through device.for_device)
gets the intrinsic. The left operand must be an int32 (np.int32(u) of a uint32 is a
free reinterpretation); the right one is any integer, cast to int32. They wrap around as
C's int32 does, and so do their Python versions (a call from Python, the tests).
sra32 shifts arithmetically: mask the result where a logical shift is meant.

`pick(cond, a, b)` is `a if cond else b` as one select (vmath's pick): numba lowers the
conditional expression to branches, and a loop whose body is inlined at numba's IR
level (device functions, parallel_for bodies) was then left scalar by LLVM.

The int32 operations are CPU-only (their Python versions do not compile for CUDA, where
numba's int64 arithmetic costs nothing comparable); pick's GPU build is its Python body.
"""

from __future__ import annotations

from typing import Any

from ..base import NNVMError
from .device import _Intrinsic
from .vmath import _dispatch


class _CPUIntrinsic(_Intrinsic):
    """An _Intrinsic with no GPU build (its Python version is not CUDA code)."""

    def _build(self, device: str) -> Any:
        if device != "cpu":
            raise NNVMError(f"kernel.bits.{self.__name__} is CPU-only (no {device} build)")
        return super()._build(device)


add32 = _CPUIntrinsic(_dispatch.add32)
sub32 = _CPUIntrinsic(_dispatch.sub32)
and32 = _CPUIntrinsic(_dispatch.and32)
or32 = _CPUIntrinsic(_dispatch.or32)
xor32 = _CPUIntrinsic(_dispatch.xor32)
sra32 = _CPUIntrinsic(_dispatch.sra32)
shl32 = _CPUIntrinsic(_dispatch.shl32)
pick = _Intrinsic(_dispatch.pick)

__all__ = ["add32", "and32", "or32", "pick", "shl32", "sra32", "sub32", "xor32"]
