"""Device functions and parallel-for bodies for test_device_function.py.

They live at module level in a real file so numba's disk cache keeps them between runs
(and so the cache test can import them in a fresh process).
"""

from __future__ import annotations

import math

import numpy as np

import nnvmpy.kernel as K
from nnvmpy.kernel import fmax, like, uindex

cuda = None  # numba.cuda in a CUDA kernel's build (kernel.device.for_device binds it)


@K.device_function
def square(x):
    return x * x


@K.device_function
def poly(x, a, b):  # a x^2 + b x: calls another device function
    return a * square(x) + b * x


@K.device_function
def softsign(x):
    return x / (1.0 + math.fabs(x))


@K.parallel_for
def poly_map(i, out, x, a, b):
    out[i] = poly(x[i], a, b)


@K.device_function(cpu_inline=False)
def clipped_poly(x, a, b):  # called, not inlined, on the CPU; calls an inlined one
    y = poly(x, a, b)
    return min(max(y, -1.0), 1.0)


@K.parallel_for
def clipped_poly_map(i, out, x, a, b):
    out[i] = clipped_poly(x[i], a, b)


@K.parallel_for
def axpby(i, out, x, y, a, b):  # two input arrays, two scalars
    out[i] = a * x[i] + b * y[i]


@K.parallel_for
def center_rows(r, out, x, n):  # one row of a (rows, n) matrix per item: x - mean
    s = 0.0
    for k in range(n):
        s += x[r, k]
    for k in range(n):
        out[r, k] = x[r, k] - s / n


@K.parallel_for
def gather_flat(i, out, x, idx):  # out[i] = x[idx[i]] through the unsigned index
    out[i] = x[uindex(idx[i])]


@K.parallel_for
def int_add(i, out, x, c):  # integer arrays and an int scalar
    out[i] = x[i] + c


@K.elementwise
def softsign_map(x):  # an element-wise kernel calling a device function
    return softsign(x)


def make_scaled(scale_fn):
    """A body whose device function is a closure cell, not a global."""

    @K.parallel_for
    def scaled(i, out, x):
        out[i] = scale_fn(x[i])

    return scaled


@K.cpu_kernel
def poly_rows_cpu(out, x, a, b):  # a hand-written CPU kernel calling a device function
    for r in range(x.shape[0]):
        for k in range(x.shape[1]):
            out[r, k] = poly(x[r, k], a, b)


@K.cpu_kernel(parallel=False)
def floor_poly_cpu(out, x):  # np inside, device function beside it
    for i in range(x.size):
        out[i] = square(np.floor(x[i]))


@K.cuda_kernel
def poly_rows_cuda(out, x, a, b):  # the same rule from a hand-written CUDA kernel
    r = cuda.grid(1)
    if r < x.shape[0]:
        for k in range(x.shape[1]):
            out[r, k] = poly(x[r, k], a, b)


@K.parallel_for
def fmax_map(i, out, a, b):  # kernel.fmax: one LLVM maxnum on the CPU
    out[i] = fmax(a[i], b[i])


@K.parallel_for
def tenth_map(i, out, a):  # kernel.like: 0.1 in a's float type, not a float64 constant
    out[i] = a[i] * like(a[i], 0.1)
