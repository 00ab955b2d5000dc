"""A thread block per row on the GPU, for row kernels whose rows lie near the last axis.

A row kernel (softmax, LayerNorm, ...) sees an array as rows of n elements `inner` apart.
One GPU thread per row reads coalesced only when rows next to each other are next to each
other in memory (inner >= MIN_INNER); nearer the last axis neighbouring threads are a row
apart, and a few long rows are a few threads. There a block takes each row instead:

    @gpu_kernel
    def _op_block_cuda(rows, out, x, n, inner, ...):
        tid, nt = cuda.threadIdx.x, cuda.blockDim.x
        sh = cuda.shared.array(BLOCK, np.float64)
        for r in range(cuda.blockIdx.x, rows, cuda.gridDim.x):   # grid-stride over rows
            s = 0.0
            for k in range(tid, n, nt):                          # neighbours read neighbours
                s += x[base + k * inner]
            s = block_sum(sh, tid, nt, s)                        # every thread gets the sum

    run_block_rows(ctx, name, _op_row, _op_block_cuda, rows, n, inner, out, x, n, inner, ...)

blockDim.x is a power of two <= BLOCK (shared arrays are sized by it) and the grid is
capped as every grid-stride launch is (kernel/cuda.py: BLOCKS_PER_SM blocks per SM, 4 on
the simulator). A block's sums add in another order than a row loop's, so float64
results may differ from a thread per row's in the last bit.
"""

from __future__ import annotations

from typing import Any

from ...kernel import device_function
from ...kernel.launch import cuda, is_gpu, run_rows  # cuda: numba.cuda once built

BLOCK = 128  # threads per block at most (a power of two: the reduction trees halve it)
MIN_INNER = 32  # from here rows next to each other are coalesced as they are
MIN_ROW = 32  # shorter rows would leave most of a warp idle: a thread each is cheaper


def by_block(ctx: Any, n: int, inner: int) -> bool:
    """Whether rows of n elements `inner` apart take a block each on ctx's device."""
    return is_gpu(ctx) and inner < MIN_INNER and n >= MIN_ROW


def block_threads(n: int) -> int:
    """blockDim.x for rows of n elements: the power of two >= n, at most BLOCK."""
    return min(BLOCK, 1 << (n - 1).bit_length())


@device_function
def block_max(sh, tid, nt, m):
    """The largest m of the block's threads (every thread gets it)."""
    sh[tid] = m
    cuda.syncthreads()
    step = nt // 2
    while step > 0:
        if tid < step and sh[tid + step] > sh[tid]:
            sh[tid] = sh[tid + step]
        cuda.syncthreads()
        step //= 2
    m = sh[0]
    cuda.syncthreads()  # every thread has read sh[0] before sh is written again
    return m


@device_function
def block_sum(sh, tid, nt, s):
    """The sum of the block's threads' s (every thread gets it)."""
    sh[tid] = s
    cuda.syncthreads()
    step = nt // 2
    while step > 0:
        if tid < step:
            sh[tid] += sh[tid + step]
        cuda.syncthreads()
        step //= 2
    s = sh[0]
    cuda.syncthreads()  # every thread has read sh[0] before sh is written again
    return s


def launch_blocks(ctx: Any, name: str, block_k: Any, rows: int, n: int, *args: Any) -> None:
    """block_k(rows, *args) with a block of block_threads(n) threads per row: kernel/cuda.py's
    launch_blocks (arrays flattened, the grid capped; a smaller grid strides over the rows)."""
    from nnvmpy.kernel.cuda import launch_blocks as launch

    launch(ctx, name, block_k, rows, block_threads(n), (rows, *args))


def run_block_rows(
    ctx: Any, name: str, loop: Any, block_k: Any, rows: int, n: int, inner: int, *args: Any
) -> None:
    """Op `name`'s rows of n elements `inner` apart: `loop` (a kernel.parallel_for body,
    `loop(r, *args)`) a thread per row, or on a GPU where by_block says so `block_k`
    (`block_k(rows, *args)`) a block per row."""
    if by_block(ctx, n, inner):
        launch_blocks(ctx, name, block_k, rows, n, *args)
    else:
        run_rows(ctx, name, loop, rows, *args)


__all__ = [
    "BLOCK",
    "MIN_INNER",
    "MIN_ROW",
    "block_max",
    "block_sum",
    "block_threads",
    "by_block",
    "launch_blocks",
    "run_block_rows",
]
