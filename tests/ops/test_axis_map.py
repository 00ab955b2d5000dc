"""The AxisMap kernels (ops/_axis_map.py) against their definitions.

gather is checked against NumPy fancy indexing built from the per-axis formulas; the
adjoint by the dot-product identity <gather(x), y> = <x, adjoint(y)>, which holds only
if the adjoint adds every dy element exactly where gather read it.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from nnvmpy.base import OpReqType
from nnvmpy.ops._axis_map import (
    AFFINE,
    EDGE,
    REFLECT,
    REPEAT,
    TILE,
    AxisMap,
    adjoint,
    axis_map,
    contiguous_strides,
    gather,
    inverse,
)

W, A = OpReqType.kWriteTo, OpReqType.kAddTo


def source_index(kind: int, i: np.ndarray, n: int, a: int, b: int) -> np.ndarray:
    """The per-axis formulas of the module docstring, in NumPy."""
    if kind == TILE:
        return i % n
    if kind == REPEAT:
        return i // a
    if kind == EDGE:
        return np.clip(i - b, 0, n - 1)
    if kind == REFLECT:
        j = np.abs(i - b)
        return np.where(j >= n, 2 * (n - 1) - j, j)
    return a * i + b


def gather_reference(x: np.ndarray, amap: AxisMap) -> np.ndarray:
    grids = np.meshgrid(*[np.arange(m) for m in amap.oshape], indexing="ij")
    flat_src = np.full(amap.oshape, amap.base)
    inside = np.ones(amap.oshape, bool)
    for k, g in enumerate(grids):
        j = source_index(amap.kinds[k], g, amap.n[k], amap.a[k], amap.b[k])
        inside &= (j >= 0) & (j < amap.n[k])
        flat_src = flat_src + j * amap.stride[k]
    src = x.reshape(-1)[np.where(inside, flat_src, 0)]
    return np.where(inside, src, amap.fill)


@st.composite
def maps(draw: st.DrawFn) -> tuple[tuple[int, ...], AxisMap]:
    """An input shape and an AxisMap over it: one random kind per axis."""
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=3)))
    axes, oshape = [], []
    for n, s in zip(shape, contiguous_strides(shape)):
        kind = draw(st.sampled_from(["identity", "flip", "pad", TILE, REPEAT, EDGE, REFLECT]))
        if kind == TILE:
            m, row = n * draw(st.integers(1, 3)), (TILE, n, 0, 0, s)
        elif kind == REPEAT:
            r = draw(st.integers(1, 3))
            m, row = n * r, (REPEAT, n, r, 0, s)
        elif kind in (EDGE, REFLECT, "pad"):
            limit = n - 1 if kind == REFLECT else 3
            before, after = draw(st.integers(0, limit)), draw(st.integers(0, limit))
            code = AFFINE if kind == "pad" else kind
            m = n + before + after
            row = (AFFINE, n, 1, -before, s) if code == AFFINE else (code, n, 0, before, s)
        else:
            m, row = n, (AFFINE, n, -1, n - 1, s) if kind == "flip" else (AFFINE, n, 1, 0, s)
        axes.append(row)
        oshape.append(m)
    order = draw(st.permutations(range(len(shape))))  # output axes in any order (swapaxes)
    return shape, axis_map([oshape[k] for k in order], [axes[k] for k in order])


@given(maps(), st.floats(-3, 3))
def test_gather_matches_the_formulas(case: tuple, fill: float) -> None:
    shape, amap = case
    amap = replace(amap, fill=fill)
    x = np.random.default_rng(0).standard_normal(shape)
    out = np.full(amap.oshape, np.nan)
    gather("test", None, out, W, x, amap)
    np.testing.assert_array_equal(out, gather_reference(x, amap))


@given(maps())
def test_adjoint_is_the_transpose_of_gather(case: tuple) -> None:
    shape, amap = case
    rng = np.random.default_rng(1)
    x, dy = rng.standard_normal(shape), rng.standard_normal(amap.oshape)
    y = np.empty(amap.oshape)
    gather("test", None, y, W, x, amap)
    dx = np.full(shape, np.nan)
    adjoint("test", None, dx, W, dy, amap)
    np.testing.assert_allclose(np.vdot(y, dy), np.vdot(x, dx), rtol=1e-12)


@given(maps())
def test_add_requests_accumulate(case: tuple) -> None:
    shape, amap = case
    rng = np.random.default_rng(2)
    x, dy = rng.standard_normal(shape), rng.standard_normal(amap.oshape)
    y0, dx0 = rng.standard_normal(amap.oshape), rng.standard_normal(shape)
    y, dx = y0.copy(), dx0.copy()
    gather("test", None, y, A, x, amap)
    adjoint("test", None, dx, A, dy, amap)
    np.testing.assert_allclose(y - y0, gather_reference(x, amap), atol=1e-12)
    written = np.empty(shape)
    adjoint("test", None, written, W, dy, amap)
    np.testing.assert_allclose(dx - dx0, written, atol=1e-12)


@given(st.lists(st.integers(1, 4), min_size=1, max_size=4), st.data())
def test_a_permutation_with_flips_has_an_inverse(shape: list[int], data: st.DataObject) -> None:
    """swapaxes and flip read every element once: the adjoint is the gather through
    inverse(), which np.transpose and np.flip spell out."""
    order = data.draw(st.permutations(range(len(shape))))
    flips = data.draw(st.lists(st.booleans(), min_size=len(shape), max_size=len(shape)))
    strides = contiguous_strides(shape)
    rows = [
        (AFFINE, shape[k], -1, shape[k] - 1, strides[k]) if flips[k] else
        (AFFINE, shape[k], 1, 0, strides[k])
        for k in order
    ]  # fmt: skip
    amap = axis_map([shape[k] for k in order], rows)
    undo = inverse(amap)
    assert undo is not None
    dy = np.random.default_rng(3).standard_normal(amap.oshape)
    want = np.flip(dy, [i for i, k in enumerate(order) if flips[k]]).transpose(np.argsort(order))
    dx = np.full(shape, np.nan)
    gather("test", None, dx, W, dy, undo)
    np.testing.assert_array_equal(dx, want)
    adjoint("test", None, dx, A, dy, amap)
    np.testing.assert_array_equal(dx, 2 * want)
    n = shape[0]
    for not_once in [(AFFINE, n, 1, -1, 1), (TILE, n, 0, 0, 1), (EDGE, n, 0, 1, 1)]:
        assert inverse(axis_map([n + 2 if not_once[0] != TILE else 2 * n], [not_once])) is None


def test_float16_on_cpu_goes_through_float32() -> None:
    amap = axis_map((6,), [(REPEAT, 3, 2, 0, 1)])
    dy = np.arange(6, dtype=np.float16)
    dx = np.zeros(3, np.float16)
    adjoint("test", None, dx, W, dy, amap)
    np.testing.assert_array_equal(dx, np.array([1, 5, 9], np.float16))


def test_one_compiled_loop_per_dtype_whatever_the_rank() -> None:
    """The map reaches the kernels as one int64 array: a new rank compiles nothing new."""
    from nnvmpy.ops._axis_map import gather_rows

    def flip_all(shape: tuple[int, ...]) -> AxisMap:
        rows = [(AFFINE, n, -1, n - 1, s) for n, s in zip(shape, contiguous_strides(shape))]
        return axis_map(shape, rows)

    x = np.arange(2.0)
    out = np.empty(2)
    gather("test", None, out, W, x, flip_all((2,)))  # the serial float64 loop exists now
    loop = next(v for k, v in gather_rows._loops.items() if k[0] == "cpu" and not k[2])
    compiled = len(loop.signatures)
    for shape in [(2, 3), (3, 1, 2), (2, 1, 3, 2), (1, 2, 2, 1, 3, 2)]:
        x = np.random.default_rng(3).standard_normal(shape)
        out = np.empty(shape)
        gather("test", None, out, W, x, flip_all(shape))
        np.testing.assert_array_equal(out, x[(slice(None, None, -1),) * len(shape)])
    assert len(loop.signatures) == compiled


def test_large_permutations_take_the_tiles_both_ways() -> None:
    """A swapaxes big enough for _transpose_cpu's tiles: the forward gather and the
    adjoint (a gather through inverse()) both agree with np.swapaxes, 'add' included."""
    import nnvmpy as nv
    from nnvmpy.ops import _transpose_cpu

    rng = np.random.default_rng(4)
    x = rng.standard_normal((4, 33, 17, 19)).astype(np.float32)
    assert x.size >= _transpose_cpu.MIN_SIZE
    a = nv.nd.array(x)
    a.attach_grad(grad_req="add")
    dy = rng.standard_normal((4, 19, 17, 33)).astype(np.float32)
    for _ in range(2):
        with nv.autograd.record():
            y = nv.nd.SwapAxis(a, dim1=1, dim2=3)
        y.backward(nv.nd.array(dy))
    np.testing.assert_array_equal(y.asnumpy(), np.swapaxes(x, 1, 3))
    np.testing.assert_array_equal(a.grad.asnumpy(), 2 * np.swapaxes(dy, 1, 3))
