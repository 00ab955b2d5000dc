"""nd's creation functions against NumPy: arange, linspace, eye, full/zeros/ones/empty,
array, moveaxis, onehot_encode, concatenate, stack, from_numpy and DLPack."""

from __future__ import annotations

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy import util

nd = nv.nd


@pytest.mark.parametrize(
    ("args", "kwargs"),
    [
        ((5,), {}),
        ((2, 6), {"step": 1.5, "repeat": 2}),
        ((3.0, -2.0), {"step": -0.5}),
        ((0, 10000**2), {"step": 10001, "dtype": "int32"}),
        ((1.5, 1.0), {}),  # empty
    ],
)
def test_arange_matches_numpy(args: tuple, kwargs: dict) -> None:
    repeat = kwargs.pop("repeat", 1)
    dtype = kwargs.get("dtype")
    start, stop = (0, args[0]) if len(args) == 1 else args
    want = np.repeat(np.arange(start, stop, kwargs.get("step", 1), dtype=dtype), repeat)
    got = nd.arange(*args, repeat=repeat, **kwargs)
    assert got.dtype == np.dtype(dtype or np.float32)
    np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-6)


@pytest.mark.parametrize("num", [0, 1, 2, 7])
@pytest.mark.parametrize("endpoint", [True, False])
def test_linspace_matches_numpy(num: int, endpoint: bool) -> None:
    got = nd.linspace(2.0, -3.0, num, endpoint=endpoint, dtype="float64")
    np.testing.assert_allclose(got.asnumpy(), np.linspace(2.0, -3.0, num, endpoint=endpoint))
    as_int = nd.linspace(0, 50, 7, dtype="int32").asnumpy()
    np.testing.assert_array_equal(as_int, np.linspace(0, 50, 7).astype(np.int32))


@pytest.mark.parametrize(("n", "m", "k"), [(3, 0, 0), (2, 5, 1), (4, 3, -2), (3, 3, 7)])
def test_eye_matches_numpy(n: int, m: int, k: int) -> None:
    np.testing.assert_array_equal(nd.eye(n, m, k).asnumpy(), np.eye(n, m or n, k))


def test_full_zeros_ones_empty_with_out_and_ctx(ctx: nv.Context) -> None:
    out = nd.zeros((2, 3), ctx=ctx)
    assert nd.ones((2, 3), out=out) is out
    np.testing.assert_array_equal(out.asnumpy(), np.ones((2, 3)))
    nd.full((2, 3), 2.5, out=out)
    np.testing.assert_array_equal(out.asnumpy(), np.full((2, 3), 2.5))
    z = nd.zeros(4, ctx, "int64")
    assert z.context == ctx
    assert z.dtype == np.int64
    np.testing.assert_array_equal(z.asnumpy(), np.zeros(4))
    assert nd.empty((0, 3), ctx).shape == (0, 3)
    for shape in [(), (2, 0)]:  # unknown shapes in MXNet's legacy semantics ...
        with pytest.raises(nv.NNVMError, match="np_shape"):
            nd.zeros(shape)
        with util.np_shape(True):  # ... and real ones in NumPy's
            np.testing.assert_array_equal(nd.ones(shape, ctx).asnumpy(), np.ones(shape))
    with pytest.raises(nv.NNVMError, match="negative"):
        nd.zeros((2, -1))
    with pytest.raises(nv.NNVMError, match="stype"):
        nd.zeros((2,), stype="csr")


def test_array_dtypes_and_shapes() -> None:
    assert nd.array(np.ones([])).shape == ()
    assert nd.array(3).shape == ()
    assert nd.array(np.arange(3)).dtype == np.float32  # float32 default, as MXNet
    x = nd.array([[1, 2], [3, 4]], dtype="int32")
    assert nd.array(x).dtype == np.int32  # an NDArray keeps its dtype
    np.testing.assert_array_equal(nd.array(np.arange(6).reshape(2, 3).T).asnumpy(),
                                  np.arange(6).reshape(2, 3).T)  # fmt: skip
    with pytest.raises(nv.NNVMError, match="regular shape"):
        nd.array([[1, 2], [3]])


def test_array_takes_mxnets_keyword_names() -> None:
    # MXNet 1.9.1: nd.array(source_array, ctx=None, dtype=None)
    x = nd.array(source_array=[[1, 2], [3, 4]], ctx=nv.cpu(), dtype="float64")
    assert (x.dtype, x.context) == (np.float64, nv.cpu())
    np.testing.assert_array_equal(x.asnumpy(), [[1.0, 2.0], [3.0, 4.0]])
    assert nd.array(source_array=x).dtype == np.float64


MOVES = [(0, 2), (2, 0), ([0, 1], [2, 3]), ([3, 0], [1, 0]), (-1, 0), (range(4), range(4))]


@pytest.mark.parametrize(("src", "dst"), MOVES)
def test_moveaxis_matches_numpy(src: object, dst: object) -> None:
    a = np.arange(24).reshape(1, 2, 3, 4)
    got = nd.moveaxis(nd.array(a), src, dst)
    np.testing.assert_array_equal(got.asnumpy(), np.moveaxis(a, src, dst))


@pytest.mark.parametrize(
    ("src", "dst"), [(3, 0), (-4, 0), (0, 5), ([0, 0], [0, 1]), ([0, 1], [1, 1]), (0, [0, 1])]
)
def test_moveaxis_errors_are_value_errors(src: object, dst: object) -> None:
    with pytest.raises(ValueError, match="moveaxis") as info:
        nd.moveaxis(nd.zeros((1, 2, 3)), src, dst)
    assert isinstance(info.value, nv.NNVMError)


def test_onehot_encode_and_concatenate() -> None:
    idx = np.array([3, 0, 1, 3])
    out = nd.full((4, 5), 9)
    assert nd.onehot_encode(nd.array(idx), out) is out
    np.testing.assert_array_equal(out.asnumpy(), np.eye(5)[idx])
    parts = [np.random.default_rng(i).standard_normal((2, i + 1, 3)) for i in range(3)]
    got = nd.concatenate([nd.array(p) for p in parts], axis=1)
    np.testing.assert_allclose(got.asnumpy(), np.concatenate(parts, axis=1), rtol=1e-6)
    one = nd.ones((2, 2))
    assert nd.concatenate([one], always_copy=False) is one
    assert nd.concatenate([one]) is not one
    with pytest.raises(nv.NNVMError, match="dtype"):
        nd.concatenate([one, nd.ones((2, 2), dtype="int32")])
    with pytest.raises(nv.NNVMError, match="out must be"):
        nd.onehot_encode(nd.array([0]), nd.zeros(3))


def test_stack_and_squeeze_functions() -> None:
    parts = [np.full((2, 3), i, np.float32) for i in range(4)]
    np.testing.assert_array_equal(
        nd.stack(*[nd.array(p) for p in parts], axis=-1).asnumpy(), np.stack(parts, axis=-1)
    )
    x = nd.zeros((1, 5, 1, 3))
    assert nd.squeeze(x).shape == (5, 3)
    assert x.squeeze(axis=2).shape == (1, 5, 3)
    with pytest.raises(nv.NNVMError, match="squeeze"):
        nd.squeeze(x, axis=1).wait_to_read()


@pytest.mark.parametrize(
    ("arg", "axis"), [(3, 1), ((1, 3, 5), 1), ((2, 9), 0), ([0, 0, 4], 0), (5, 0)]
)
def test_split_v2_matches_numpy(arg: object, axis: int) -> None:
    a = np.arange(30, dtype=np.float32).reshape(5, 6)
    got = nd.split_v2(nd.array(a), arg, axis=axis)
    want = np.split(a, arg if isinstance(arg, int) else list(arg), axis=axis)
    got = got if isinstance(got, list) else [got]
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g.asnumpy(), w)
    squeezed = nd.array(a).split_v2(5, axis=0, squeeze_axis=True)
    np.testing.assert_array_equal(squeezed[3].asnumpy(), a[3])
    with pytest.raises(ValueError, match="equal division"):
        nd.split_v2(nd.array(a), 4, axis=0)
    with pytest.raises(nv.NNVMError, match="squeeze_axis"):
        nd.split_v2(nd.array(a), 2, axis=1, squeeze_axis=True)


def test_from_numpy_shares_memory() -> None:
    a = np.array([[1, 2], [3, 4], [5, 6]], dtype=np.float32)
    x = nd.from_numpy(a)
    with pytest.raises(ValueError, match="read-only"):
        a[2, 1] = 0
    x[2, 1] = 100
    assert a[2, 1] == 100  # the write reached the NumPy array's memory
    again = nd.from_numpy(a)  # a read-only array shares too
    again[0, 0] = -1
    assert a[0, 0] == -1
    copy = nd.from_numpy(np.ones(3), zero_copy=False)
    assert copy.dtype == np.float64
    for special in (np.array(5.0), np.zeros((1, 0, 2))):
        np.testing.assert_array_equal(nd.from_numpy(special).asnumpy(), special)
    with pytest.raises(ValueError, match="C-contiguous"):
        nd.from_numpy(np.ones((2, 3)).T)


def test_dlpack_round_trips() -> None:
    x = nd.array(np.arange(12).reshape(3, 4), dtype="int32")
    y = nd.from_dlpack(x.to_dlpack_for_read())
    np.testing.assert_array_equal(y.asnumpy(), x.asnumpy())
    w = nd.from_dlpack(nd.to_dlpack_for_write(x))
    w[:] = 7  # shares x's memory
    assert (x.asnumpy() == 7).all()
    t = nd.from_dlpack(np.arange(4.0))  # any object with __dlpack__
    np.testing.assert_array_equal(t.asnumpy(), np.arange(4.0))
    with pytest.raises(nv.NNVMError, match="from_dlpack"):
        nd.from_dlpack(object())


@pytest.mark.gpu
def test_creation_on_gpu() -> None:
    g = nv.gpu(0)
    np.testing.assert_allclose(nd.arange(1, 4, 0.5, ctx=g).asnumpy(), np.arange(1, 4, 0.5))
    np.testing.assert_array_equal(nd.eye(3, 4, -1, ctx=g).asnumpy(), np.eye(3, 4, -1))
    np.testing.assert_allclose(nd.linspace(0, 1, 5, ctx=g).asnumpy(), np.linspace(0, 1, 5))
    with pytest.raises(nv.NNVMError, match="CPU"):
        nd.ones(3, ctx=g).to_dlpack_for_read()


def test_tostype_default_is_a_copy_and_sparse_types_are_named_errors() -> None:
    x = nd.array([[1.0, 2.0], [3.0, 4.0]])
    y = x.tostype("default")
    assert y.stype == "default"
    np.testing.assert_array_equal(y.asnumpy(), x.asnumpy())
    y[:] = 0  # a copy: x keeps its values
    np.testing.assert_array_equal(x.asnumpy(), [[1.0, 2.0], [3.0, 4.0]])
    for stype in ("csr", "row_sparse", "dense"):
        with pytest.raises(nv.ParamError, match=f"tostype.*'{stype}'.*'default'"):
            x.tostype(stype)
