"""The CPU's tiled transpose (ops/_transpose_cpu.py) against np.transpose.

Permutations that swap two blocks of axes after a kept prefix run by cache tiles of the
collapsed matrices; other permutations that move the last axis by tiles of the two
contiguous axes; permutations keeping the last axis, and small or float16 arrays, take
NumPy's copy. Sizes that are not a multiple of the tile, integer dtypes, req 'add', and
which permutations are block swaps.
"""

from __future__ import annotations

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy.ops import _transpose_cpu

nd = nv.nd


@pytest.mark.parametrize(
    ("shape", "axes", "dims"),
    [
        ((5, 7), (1, 0), (1, 5, 7)),
        ((2, 3, 4), (0, 2, 1), (2, 3, 4)),
        ((2, 3, 4, 5), (0, 2, 3, 1), (2, 3, 20)),  # NCHW -> NHWC
        ((2, 3, 4, 5), (0, 3, 1, 2), (2, 12, 5)),  # NHWC -> NCHW
        ((2, 3, 4, 5), (2, 3, 0, 1), (1, 6, 20)),
        ((2, 3, 4), (1, 0, 2), None),  # the last axis stays: not a swap of two blocks
        ((2, 3, 4), (2, 0, 1), (1, 6, 4)),
        ((2, 3, 4), (1, 2, 0), (1, 2, 12)),
        ((2, 3, 4, 5), (0, 3, 2, 1), None),
        ((2, 3), (0, 1), None),
    ],
)
def test_block_swap_names_the_collapsed_matrix(shape, axes, dims) -> None:
    assert _transpose_cpu.block_swap(shape, axes) == dims
    if dims is not None:  # the claim itself: the (B, R, C) view transposed
        x = np.arange(np.prod(shape)).reshape(shape)
        b, r, c = dims
        np.testing.assert_array_equal(
            np.transpose(x, axes).reshape(b, c, r), x.reshape(b, r, c).transpose(0, 2, 1)
        )


@pytest.mark.parametrize(
    ("shape", "axes"),
    [
        ((300, 257), None),
        ((3, 130, 97), (0, 2, 1)),
        ((4, 33, 17, 19), (0, 2, 3, 1)),
        ((4, 17, 19, 33), (0, 3, 1, 2)),
        ((70, 40, 30), (1, 0, 2)),  # NumPy's path
        ((4, 33, 17, 19), (0, 3, 2, 1)),  # swapaxes(1, 3): the general tiles
        ((3, 5, 17, 7, 19), (4, 1, 3, 0, 2)),
        ((33, 4, 17, 19), (3, 1, 0, 2)),
    ],
)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.uint8])
def test_large_transposes_match_numpy(shape, axes, dtype) -> None:
    x = (np.random.default_rng(0).uniform(-100, 100, shape)).astype(dtype)
    assert x.size >= _transpose_cpu.MIN_SIZE  # the tiled path's size
    kw = {} if axes is None else {"axes": axes}
    want = np.transpose(x, axes)
    got = nd.transpose(nd.array(x, dtype=dtype), **kw).asnumpy()
    np.testing.assert_array_equal(got, want)
    out = nd.array(np.ones(want.shape, dtype), dtype=dtype)
    nd.transpose(nd.array(x, dtype=dtype), out=out, **kw)  # into an existing array
    np.testing.assert_array_equal(out.asnumpy(), want)


def test_req_add_adds_the_transpose() -> None:
    x = np.random.default_rng(1).standard_normal((3, 200, 90))
    dy = np.random.default_rng(2).standard_normal((3, 90, 200))
    a = nd.array(x, dtype=np.float64)
    a.attach_grad(grad_req="add")
    for _ in range(2):  # the gradient of a transpose is a transpose, added twice
        with nv.autograd.record():
            y = nd.transpose(a, axes=(0, 2, 1))
        y.backward(nd.array(dy, dtype=np.float64))
    np.testing.assert_allclose(a.grad.asnumpy(), 2 * dy.transpose(0, 2, 1))


def test_transpose_into_adds_with_add() -> None:
    x = np.random.default_rng(3).standard_normal((2, 190, 180)).astype(np.float32)
    out = np.ones((2, 180, 190), np.float32)
    assert _transpose_cpu.transpose_into(out, x, (0, 2, 1), True)
    np.testing.assert_array_equal(out, 1 + x.transpose(0, 2, 1))
    x4 = x.reshape(2, 19, 10, 180)
    out = np.ones((180, 19, 2, 10), np.float32)
    assert _transpose_cpu.transpose_into(out, x4, (3, 1, 0, 2), True)
    np.testing.assert_array_equal(out, 1 + x4.transpose(3, 1, 0, 2))
    small = np.ones((3, 2), np.float32)
    assert not _transpose_cpu.transpose_into(small, np.ones((2, 3), np.float32), (1, 0), False)
