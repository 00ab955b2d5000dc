"""Split-K for GPU GEMMs whose output is too small to fill the device (ops/matrix.gemm).

Why. A GEMM runs one thread block per tile of its output and each block walks the whole
inner dimension k. A convolution's weight gradient is the extreme case: dW (F, C*kh*kw)
= dy (F, N*P) @ col^T, where the inner size is every output position of every image. In
ResNet-18 at batch 64 the first convolution's is 64 x 147 with k = 802816, and layer1's
are 64 x 576 with k = 200704: two and five 128 x 128 tiles, that is two to five of an
H100's 132 multiprocessors busy for the longest products of the step (cuBLAS may split
such a k itself; its heuristics are not ours to rely on, and the tiled numba kernel never
does).

How. The inner dimension is cut into `s` equal slices, and the product becomes a batch of
s GEMMs over them, each writing its own partial product (s, m, n) into scratch: for a 2-D
operand a slice is a pointer offset with the same leading dimension, so the batch is
cuBLAS's strided batched GEMM (kernel/cublas.gemm's `k_slices`) or the tiled kernel's
grid z, and nothing is copied. A second kernel sums the partials into the output with
the request (write or add). The partial sums round in a different order than one long
sum does, no less accurately (shorter chains).

When (`slices`). Only single GEMMs (batch 1) without bias, in float32 or float64 (float16
would round its partials to float16), whose output has fewer tiles than the device has
multiprocessors: enough slices to give about two blocks per multiprocessor, each slice at
least MIN_SLICE_K deep, the partials at most MAX_PARTIAL_BYTES, and s a divisor of k
(equal slices: one strided batch). NNVMPY_GPU_SPLIT_K=0 turns it off.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import config
from ..kernel.launch import cuda, gpu_kernel  # cuda: numba.cuda once built

#: multiprocessors the decision plans for: an H100's or H200's 132
SMS = 132
#: output tile edge assumed of cuBLAS (its largest float32 tiles): fewer tiles, more slices
CUBLAS_TILE = 128
#: no slice shallower than this: each block then still streams a long inner loop
MIN_SLICE_K = 1024
#: scratch cap for the partial products
MAX_PARTIAL_BYTES = 64 << 20
_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def slices(m: int, n: int, k: int, batch: int, dtype: Any, tile: int, bias: bool) -> int:
    """How many slices to cut k into for an (m x k) @ (k x n) GEMM of `batch` matrices
    whose thread blocks each compute a tile x tile block of the output; 1: no split."""
    if batch != 1 or bias or np.dtype(dtype) not in _DTYPES or config.GPU_SPLIT_K.get() == "0":
        return 1
    tiles = math.ceil(m / tile) * math.ceil(n / tile)
    if tiles >= SMS:
        return 1
    most = min(
        math.ceil(2 * SMS / tiles),
        k // MIN_SLICE_K,
        MAX_PARTIAL_BYTES // (m * n * np.dtype(dtype).itemsize),
    )
    for s in range(most, 1, -1):
        if k % s == 0:
            return s
    return 1


def sum_slices(ctx: Any, out: Any, partials: Any, add: bool) -> None:
    """out (+)= partials.sum(axis=0): out holds m*n values, partials (s, m*n) (flat views)."""
    size = int(out.size)
    _sum_slices_cuda.launch(ctx, size, out, partials, size, int(partials.size) // size, add)


@gpu_kernel
def _sum_slices_cuda(out, partials, size, s, add):
    # one output element per work item; neighbouring items read neighbouring partials
    for j in range(cuda.grid(1), size, cuda.gridsize(1)):
        v = partials[j]
        for z in range(1, s):
            v += partials[z * size + j]
        if add:
            out[j] += v
        else:
            out[j] = v


__all__ = ["CUBLAS_TILE", "MAX_PARTIAL_BYTES", "MIN_SLICE_K", "SMS", "slices", "sum_slices"]
