"""x[key] and x[key] = value against NumPy, views vs copies, and bad keys.

NumPy's indexing is the reference for every key form (basic: ints, slices with any step,
None, Ellipsis; advanced: integer lists / NumPy arrays / NDArrays, mixed with basic
ones). The one documented difference: indexing every axis with an int gives shape (1,)
(MXNet's legacy NDArray has no 0-d results).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import nnvmpy as nv
from nnvmpy import autograd

nd = nv.nd


def numpy_result(a: np.ndarray, key: object) -> np.ndarray:
    out = a[np_key(key)]
    return out.reshape(1) if out.ndim == 0 else out


def np_key(key: object) -> object:
    if isinstance(key, nd.NDArray):
        return key.asnumpy().astype(np.int64)
    if isinstance(key, tuple):
        return tuple(np_key(k) for k in key)
    return key


# -- random keys -----------------------------------------------------------------------------


@st.composite
def shapes(draw: st.DrawFn) -> tuple[int, ...]:
    return tuple(draw(st.lists(st.integers(1, 5), min_size=1, max_size=4)))


def axis_entry(n: int, advanced: bool) -> st.SearchStrategy[object]:
    ints = st.integers(-n, n - 1)
    bound = st.one_of(st.none(), st.integers(-n - 2, n + 2))
    step = st.one_of(st.none(), st.integers(-3, 3).filter(lambda s: s != 0))
    slices = st.builds(slice, bound, bound, step)
    whole = st.sampled_from([slice(None), slice(None, None, -1), slice(None, None, 2)])
    options = [ints, slices, whole]
    if advanced:
        options.append(st.lists(ints, min_size=1, max_size=4))
        options.append(st.lists(ints, min_size=1, max_size=3).map(lambda v: np.array(v)))
    return st.one_of(*options)


@st.composite
def keys(draw: st.DrawFn, shape: tuple[int, ...], advanced: bool) -> object:
    ndim = len(shape)
    n_head = draw(st.integers(0, ndim))
    ellipsis = n_head < ndim and draw(st.booleans())  # "...", then entries for the last axes
    n_tail = draw(st.integers(0, ndim - n_head)) if ellipsis else 0
    axes = [*range(n_head), *range(ndim - n_tail, ndim)]
    entries: list[object] = [draw(axis_entry(shape[d], advanced)) for d in axes]
    if ellipsis:
        entries.insert(n_head, Ellipsis)
    for _ in range(draw(st.integers(0, 2))):  # new axes
        entries.insert(draw(st.integers(0, len(entries))), None)
    if not entries:
        entries = [slice(None)]
    if advanced:
        # list entries broadcast together: make all of them one length
        lens = {len(e) for e in entries if isinstance(e, list | np.ndarray)}
        if len(lens) > 1:
            size = max(lens)
            entries = [
                (list(e) * size)[:size] if isinstance(e, list | np.ndarray) else e for e in entries
            ]
    return entries[0] if len(entries) == 1 and draw(st.booleans()) else tuple(entries)


@given(data=st.data())
def test_getitem_matches_numpy(data: st.DataObject) -> None:
    shape = data.draw(shapes())
    key = data.draw(keys(shape, advanced=data.draw(st.booleans())))
    a = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    got = nd.array(a)[key]
    np.testing.assert_array_equal(got.asnumpy(), numpy_result(a, key))


@given(data=st.data())
def test_setitem_matches_numpy(data: st.DataObject) -> None:
    shape = data.draw(shapes())
    key = data.draw(keys(shape, advanced=data.draw(st.booleans())))
    a = np.arange(np.prod(shape), dtype=np.float64).reshape(shape)
    target = a[np_key(key)].shape
    kind = data.draw(st.sampled_from(["scalar", "numpy", "ndarray", "broadcast", "list"]))
    value: object
    if kind == "scalar":
        value = -7.5
    elif kind == "numpy":
        value = -np.arange(np.prod(target)).reshape(target) - 1
    elif kind == "ndarray":
        value = nd.array(-np.arange(np.prod(target)).reshape(target) - 1, dtype=np.float64)
    elif kind == "broadcast":  # the last dim only, broadcast over the rest
        value = -np.arange(target[-1] if target else 1) - 1
    else:
        value = [-3.0] * (target[-1] if target else 1)
    x = nd.array(a, dtype=np.float64)
    x[key] = value
    expected = a.copy()
    np_value = value.asnumpy() if isinstance(value, nd.NDArray) else np.asarray(value)
    if not target:  # MXNet takes a one-element value for one element; NumPy 2 wants a scalar
        np_value = np_value.reshape(())
    expected[np_key(key)] = np_value
    np.testing.assert_array_equal(x.asnumpy(), expected)


BASIC_KEYS = [
    slice(None, None, -1),
    (slice(None), slice(None, None, -2)),
    (Ellipsis, slice(None, None, -1)),
    (slice(7, 0, -1), 2, slice(1, 5), 1),
    (slice(1, 8, 2), slice(14, 2, -2), slice(3, 8), slice(0, 7, 3)),
    (1, None, -2, 3, -4),
    (None, slice(1, 2), 3, None),
]


@pytest.mark.parametrize("key", BASIC_KEYS, ids=[str(i) for i in range(len(BASIC_KEYS))])
def test_basic_keys_match_numpy(key: object) -> None:
    a = np.arange(8 * 16 * 9 * 9, dtype=np.int32).reshape(8, 16, 9, 9)
    x = nd.array(a, dtype=np.int32)
    np.testing.assert_array_equal(x[key].asnumpy(), numpy_result(a, key))
    value = -np.arange(np.prod(a[key].shape)).reshape(a[key].shape) - 1
    x[key] = value
    a[key] = value
    np.testing.assert_array_equal(x.asnumpy(), a)


MIXED_KEYS = [
    (1, [2, 3]),
    (1, [2, 3], np.array([[3], [0]])),
    ([1, 2], slice(3, 5), [2, 3], [3, 4]),
    ([1, 2], slice(3, 5), None, None, [3, 4]),
    (slice(None), slice(3, 5), None, [2, 3], None, [3, 4]),
    ([[[[1]]]], [[1]], slice(0, 3), [1, 5]),
    (slice(0, 2), [[1], [6]], slice(0, 2), slice(0, 5, 2)),
    np.array([[7, 3], [2, 6], [0, 5], [4, 1]], dtype=np.int64),
    ([2, 3, 4], None, [3, 4, 6], None, slice(1, 2), None, [1, 2, 3]),
]


@pytest.mark.parametrize("key", MIXED_KEYS, ids=[str(i) for i in range(len(MIXED_KEYS))])
def test_mixed_advanced_keys_match_numpy(key: object) -> None:
    a = np.arange(8 * 16 * 9 * 9, dtype=np.int32).reshape(8, 16, 9, 9)
    x = nd.array(a, dtype=np.int32)
    np.testing.assert_array_equal(x[key].asnumpy(), a[key])
    x[key] = -1
    a[key] = -1
    np.testing.assert_array_equal(x.asnumpy(), a)


def test_ndarray_and_float_index_arrays() -> None:
    a = np.array([[0, 1], [2, 3]], dtype=np.float32)
    x = nd.array(a)
    idx = (nd.array([1, 1, 0]), nd.array([0, 1, 0]))  # float32, as nd.array makes them
    np.testing.assert_array_equal(x[idx].asnumpy(), a[[1, 1, 0], [0, 1, 0]])
    np.testing.assert_array_equal(x[nd.array([1, 0], dtype=np.int64)].asnumpy(), a[[1, 0]])


# -- views -----------------------------------------------------------------------------------

SLICES = [
    slice(None),
    slice(2),
    slice(1, 4),
    slice(None, None, 2),
    slice(0, 1),
    slice(None, None, -1),
    slice(3, None, -2),
]


def test_contiguity_rule_matches_numpy_flags() -> None:
    shape = (6, 7, 8)
    a = np.arange(np.prod(shape)).reshape(shape)
    is_contiguous = nd.NDArray._basic_indexing_slice_is_contiguous
    for key in itertools.product(SLICES, repeat=3):
        assert is_contiguous(key, shape) == a[key].flags.c_contiguous, key


@pytest.mark.parametrize(
    "key", [1, slice(1, 3), (1, 2), (1, slice(1, 3), slice(None)), (0, slice(1, 3)), Ellipsis]
)
def test_contiguous_basic_index_is_a_view(key: object) -> None:
    a = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
    x = nd.array(a)
    y = x[key]
    y[:] = -1
    a[key] = -1
    np.testing.assert_array_equal(x.asnumpy(), a)  # the write went through the view
    x[:] = 5
    assert (y.asnumpy() == 5).all()  # and the view sees writes to x


def test_strided_basic_index_is_a_copy() -> None:
    a = np.arange(24, dtype=np.float32).reshape(4, 6)
    x = nd.array(a)
    y = x[:, ::2]
    np.testing.assert_array_equal(y.asnumpy(), a[:, ::2])
    y[:] = 0
    np.testing.assert_array_equal(x.asnumpy(), a)  # x unchanged


def test_view_of_view_and_reshape_of_view() -> None:
    a = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
    x = nd.array(a)
    v = x[1][2:4].reshape(10)
    np.testing.assert_array_equal(v.asnumpy(), a[1, 2:4].reshape(10))
    v[:] = 0
    a[1, 2:4] = 0
    np.testing.assert_array_equal(x.asnumpy(), a)


def test_all_int_key_gives_shape_one_and_iteration() -> None:
    x = nd.array(np.arange(6).reshape(2, 3))
    assert x[1, 2].shape == (1,)
    assert x[1, 2].asscalar() == 5
    rows = list(x)
    assert len(rows) == 2
    np.testing.assert_array_equal(rows[1].asnumpy(), [3, 4, 5])
    assert [float(v.asscalar()) for v in nd.array([1, 2, 3])] == [1.0, 2.0, 3.0]


# -- assignment forms ----------------------------------------------------------------------


def test_assign_forms() -> None:
    x = nd.zeros((3, 4, 2))
    x[:] = np.ones((3, 4, 2))
    x[1] = 2
    x[-1, ...] = nd.full((4, 2), 3)
    x[:, 1:3, 1] = nd.ones((3, 2)) * 4
    x[0, :2, 0] = [5, 6]
    want = np.ones((3, 4, 2), dtype=np.float32)
    want[1] = 2
    want[-1, ...] = 3
    want[:, 1:3, 1] = 4
    want[0, :2, 0] = [5, 6]
    np.testing.assert_array_equal(x.asnumpy(), want)


def test_assign_casts_and_keeps_large_ints() -> None:
    a = nd.zeros((4, 1), dtype=np.int32)
    a[1, 0] = 16800001
    a[2] = np.array([2.9])  # a float value truncates toward zero, as a NumPy cast
    np.testing.assert_array_equal(a.asnumpy().ravel(), [0, 16800001, 2, 0])


def test_whole_assignment_from_numpy_waits_for_pending_users() -> None:
    """x[:] = numpy on the CPU copies synchronously (MXNet's SyncCopyFromCPU): reads and
    writes of x pushed before it see the old values, ones pushed after see the new, and
    the write counts as a new version of x (memoized nodes rely on it)."""
    x = nd.array(np.arange(6.0).reshape(2, 3))
    version = x._chunk.var.version
    doubled = [x * 2 for _ in range(20)]  # pushed, not waited for
    x += 1  # a pending write: the copy must land after it
    x[:] = np.full((2, 3), 7.0)  # float64 source: cast to x's float32
    after = x * 2
    for d in doubled:
        np.testing.assert_array_equal(d.asnumpy(), np.arange(6.0).reshape(2, 3) * 2)
    np.testing.assert_array_equal(x.asnumpy(), np.full((2, 3), 7.0))
    np.testing.assert_array_equal(after.asnumpy(), np.full((2, 3), 14.0))
    assert x._chunk.var.version >= version + 2  # x += 1 and the copy
    ints = nd.zeros((3,), dtype=np.int32)
    ints[:] = np.array([1.9, -2.9, 3.0])  # truncates toward zero, as a NumPy cast
    np.testing.assert_array_equal(ints.asnumpy(), [1, -2, 3])


def test_assign_value_with_extra_leading_ones() -> None:
    a = np.zeros((4, 5), dtype=np.float32)
    x = nd.array(a)
    value = np.arange(5).reshape(1, 1, 1, 5)
    x[1:3] = value
    a[1:3] = value.reshape(5)
    np.testing.assert_array_equal(x.asnumpy(), a)


# -- bad keys --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "error"),
    [
        (3, IndexError),
        ((0, -4), IndexError),
        ((0, 0, 0), IndexError),
        ((Ellipsis, 0, Ellipsis), IndexError),
        (np.array([True, False, True]), IndexError),
        ([0, 5], IndexError),
        ("a", IndexError),
        (1.5, IndexError),
        (slice(0, 2, 0), ValueError),
    ],
)
def test_bad_keys_raise_named_errors(key: object, error: type) -> None:
    x = nd.array(np.arange(9).reshape(3, 3))
    with pytest.raises(error) as info:
        x[key]
    assert isinstance(info.value, nv.NNVMError)
    assert "NDArray indexing" in str(info.value)
    with pytest.raises(nv.NNVMError):
        x[key] = 1
    np.testing.assert_array_equal((x + 1).asnumpy(), np.arange(9).reshape(3, 3) + 1)  # still fine


def test_bad_values_raise_named_errors() -> None:
    x = nd.zeros((2, 3))
    with pytest.raises(nv.NNVMError, match="broadcast"):
        x[0] = np.ones(4)
    with pytest.raises(nv.NNVMError, match="broadcast"):
        x[[0, 1]] = nd.ones((2, 2))
    with pytest.raises(nv.NNVMError, match="numeric"):
        x[0] = "abc"
    x[0] = 1
    assert x.asnumpy().sum() == 3


# -- autograd --------------------------------------------------------------------------------


@pytest.mark.parametrize("key", [(slice(1, 3), slice(None, None, 2)), 1, ([0, 2], [1, 3])])
def test_getitem_is_recorded(key: object) -> None:
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    x = nd.array(a)
    x.attach_grad()
    with autograd.record():
        y = x[key]
    y.backward()
    want = np.zeros_like(a)
    np.add.at(want, key, 1)  # each picked element gets a gradient of 1 per pick
    np.testing.assert_array_equal(x.grad.asnumpy(), want)


def test_region_assignment_while_recording_raises() -> None:
    x = nd.zeros((3, 4))
    y = nd.ones((1, 4))
    with autograd.record(), pytest.raises(nv.NNVMError, match="Inplace operations"):
        x[1:2] = y
    with autograd.record():
        x[...] = y.broadcast_to((3, 4))  # a whole-array copy is allowed, as in MXNet
    assert x.asnumpy().sum() == 12


@pytest.mark.gpu
def test_indexing_on_gpu_matches_numpy() -> None:
    a = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
    x = nd.array(a, ctx=nv.gpu(0))
    for key in [1, (slice(None), slice(1, 3)), (Ellipsis, slice(None, None, -2)), ([0, 2], 1)]:
        np.testing.assert_array_equal(x[key].asnumpy(), numpy_result(a, key))
    x[:, ::2, 1] = -1
    x[[0, 1], [3, 3]] = nd.full((2, 5), 9, ctx=nv.gpu(0))
    a[:, ::2, 1] = -1
    a[[0, 1], [3, 3]] = 9
    np.testing.assert_array_equal(x.asnumpy(), a)
