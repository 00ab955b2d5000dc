"""Memory an executor bound with `shared_exec` borrows from the one it shares with.

Output i takes output i's block of the shared executor when it fits (so a reshaped
executor writes its outputs where the original's are, as MXNet's does); every planned
block takes the smallest unused block that fits. What does not fit is allocated fresh.
Borrowed blocks keep their engine variables, so work on either executor stays ordered.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..base import Context
from ..ndarray.ndarray import Chunk, NDArray, empty


class SharedChunks:
    """The blocks of another executor, handed out once each."""

    def __init__(self, memory: tuple[list[NDArray], list[Chunk]], ctx: Context) -> None:
        outputs, chunks = memory
        self.ctx = ctx
        self.output_chunks = [o._chunk for o in outputs]
        self.used: set[int] = set()
        self.free = [c for c in [*chunks, *self.output_chunks] if c.ctx == ctx]

    def output(self, i: int, shape: tuple[int, ...], dtype: Any) -> NDArray:
        dtype = np.dtype(dtype)
        need = math.prod(shape) * dtype.itemsize
        if i < len(self.output_chunks):
            chunk = self.output_chunks[i]
            if id(chunk) not in self.used and chunk.ctx == self.ctx and chunk.nbytes >= need:
                self.used.add(id(chunk))
                return NDArray(chunk, shape, dtype)
        return empty(shape, self.ctx, dtype)

    def take(self, nbytes: int) -> Chunk:
        fits = [c for c in self.free if id(c) not in self.used and c.nbytes >= nbytes]
        if not fits:
            return Chunk(nbytes, self.ctx)
        best = min(fits, key=lambda c: c.nbytes)
        self.used.add(id(best))
        return best


__all__ = ["SharedChunks"]
