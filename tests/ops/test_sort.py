"""Special cases of sort, argsort and topk beyond the op table (cases_sort.py): the order of
ties and NaN, the partial (argpartition) path, the bitonic network the GPU runs (checked
on the CPU against np.argsort), hidden outputs, gradients and errors."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import nnvmpy as nv
from nnvmpy.base import Context, InferError, ParamError
from nnvmpy.ops import _bitonic
from nnvmpy.ops.sort import top_positions
from nnvmpy.test_utils import check_numeric_gradient, check_symbolic_backward

pytestmark = pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")


def nd(x, ctx=None, dtype=None):
    x = np.asarray(x)
    return nv.nd.array(x, ctx=ctx or nv.cpu(), dtype=dtype or x.dtype)


def stable_order(x: np.ndarray, ascending: bool) -> np.ndarray:
    """Reference: positions sorting the last axis, equal values by position (NaN last when
    ascending, as np.sort; first when descending)."""
    n = x.shape[-1]
    keys = np.where(np.isnan(x), np.inf, x)
    nan = np.isnan(x)
    if ascending:  # (is NaN, value, position)
        return np.lexsort((np.broadcast_to(np.arange(n), x.shape), keys, nan), axis=-1)
    return np.lexsort((np.broadcast_to(np.arange(n), x.shape), -keys, ~nan), axis=-1)


# -- order: ties and NaN -----------------------------------------------------------------------


@pytest.mark.parametrize("ascending", [True, False])
def test_equal_values_keep_their_order_in_both_directions(ctx, ascending):
    x = np.array([[1.0, 3.0, 3.0, 2.0, 1.0, 3.0]])
    got = nv.nd.argsort(nd(x, ctx), is_ascend=ascending, dtype="int32").asnumpy()
    np.testing.assert_array_equal(got, stable_order(x, ascending))


@pytest.mark.parametrize("ascending", [True, False])
def test_nan_sorts_as_the_largest_value(ctx, ascending):
    x = np.array([[0.5, np.nan, -1.0, np.nan, 2.0]])
    got = nv.nd.sort(nd(x, ctx), is_ascend=ascending).asnumpy()
    want = np.sort(x) if ascending else np.flip(np.sort(x), axis=-1)
    np.testing.assert_array_equal(got, want)


PACKED = ["float16", "float32", "int8", "int16", "int32", "uint8", "uint16"]


def _tied_values(rng, dtype: str, shape: tuple[int, ...]) -> np.ndarray:
    """Few distinct values (many ties), with the dtype's extremes; floats also get NaN of
    both signs, -0 beside +0, and infinities."""
    if dtype.startswith("float"):
        pool = np.array([np.nan, -np.nan, -0.0, 0.0, np.inf, -np.inf, 1.5, -1.5, 6e-8, 2.0])
    else:
        info = np.iinfo(dtype)
        pool = np.array([info.min, info.max, 0, 1, info.min + 1, info.max - 1, 7], dtype)
    return rng.choice(pool, size=shape).astype(dtype)


@pytest.mark.parametrize("dtype", PACKED)
@pytest.mark.parametrize("shape", [(3, 700), (40, 6000)])  # serial; row parts on threads
@pytest.mark.parametrize("ascending", [True, False])
def test_the_packed_key_sort_gives_the_stable_order(dtype, shape, ascending):
    """32-bit and smaller dtypes sort packed (key, position) integers (_packed_sort): the
    positions and values of a stable sort, NaN of either sign tied last (first when
    descending), -0 tied with +0, along the last axis and along the first."""
    x = _tied_values(np.random.default_rng(len(shape) + shape[1]), dtype, shape)
    order = stable_order(x.astype(np.float64), ascending)
    got = nv.nd.argsort(nd(x), is_ascend=ascending, dtype="int32").asnumpy()
    np.testing.assert_array_equal(got, order)
    values = nv.nd.sort(nd(x), is_ascend=ascending).asnumpy()
    want = np.take_along_axis(x, order, axis=-1)
    np.testing.assert_array_equal(values.view(f"u{x.itemsize}"), want.view(f"u{x.itemsize}"))
    along_rows = nv.nd.argsort(nd(x.T), axis=0, is_ascend=ascending, dtype="int32").asnumpy()
    np.testing.assert_array_equal(along_rows, order.T)


def exact_stable_order(x: np.ndarray, ascending: bool) -> np.ndarray:
    """stable_order without the float64 detour (exact for 64-bit integers): NumPy's
    stable argsort, of the reversed row for descending order."""
    if x.dtype.kind == "f":
        return stable_order(x, ascending)
    if ascending:
        return np.argsort(x, axis=-1, kind="stable")
    return (x.shape[-1] - 1) - np.argsort(x[..., ::-1], axis=-1, kind="stable")[..., ::-1]


@pytest.mark.parametrize("dtype", ["float64", "int64", "uint64"])
@pytest.mark.parametrize("shape", [(3, 700), (40, 6000)])  # serial; row parts on threads
@pytest.mark.parametrize("ascending", [True, False])
def test_the_wide_key_sort_gives_the_stable_order(dtype, shape, ascending):
    """64-bit dtypes sort their order keys with NumPy's unstable argsort, then order the
    positions of equal keys (_wide_sort): NaN of either sign tied last (first when
    descending), -0 tied with +0, the integer extremes apart from their neighbours."""
    from nnvmpy.ops import _wide_sort

    x = _tied_values(np.random.default_rng(shape[1]), dtype, shape)
    order = exact_stable_order(x, ascending)
    np.testing.assert_array_equal(_wide_sort.argsort_rows(x, ascending), order)
    if dtype == "uint64":  # not an MXNet dtype
        return
    got = nv.nd.argsort(nd(x), is_ascend=ascending, dtype="int64").asnumpy()
    np.testing.assert_array_equal(got, order)
    values = nv.nd.sort(nd(x), is_ascend=ascending).asnumpy()
    want = np.take_along_axis(x, order, axis=-1)
    np.testing.assert_array_equal(values.view("u8"), want.view("u8"))


@pytest.mark.parametrize("axis", [-1, None, 0])
def test_large_sorts_write_their_outputs_in_place(axis):
    """A full packed sort along the last axis writes its int64 positions and its values
    straight into the outputs (no copy); other axes and index dtypes copy. Both give the
    stable order, and the hidden positions sort's gradient reads are right."""
    x = _tied_values(np.random.default_rng(5), "float32", (24, 900))
    flat = x.reshape(1, -1) if axis is None else (x.T if axis == 0 else x)
    order = stable_order(flat.astype(np.float64), False)

    def as_x(a):  # from the sorted rows' layout back to x's
        return a.reshape(-1) if axis is None else (a.T if axis == 0 else a)

    want = np.take_along_axis(flat, order, axis=-1)
    a = nd(x)
    a.attach_grad()
    with nv.autograd.record():
        values = nv.nd.sort(a, axis=axis, is_ascend=False)
    np.testing.assert_array_equal(values.asnumpy().view("u4"), as_x(want).view("u4"))
    dy = np.random.default_rng(6).normal(size=values.shape).astype(np.float32)
    values.backward(nv.nd.array(dy))
    dx = np.zeros_like(flat)  # the value sorted to place j came from order[j]
    np.put_along_axis(dx, order, dy.reshape(-1) if axis is None else as_x(dy), axis=-1)
    np.testing.assert_array_equal(a.grad.asnumpy(), as_x(dx).reshape(x.shape))
    for dtype in ("int64", "float32"):
        got = nv.nd.argsort(a, axis=axis, is_ascend=False, dtype=dtype).asnumpy()
        np.testing.assert_array_equal(got, as_x(order))
    v, i = nv.nd.topk(a, axis=axis, k=0, ret_typ="both", dtype="int64")
    np.testing.assert_array_equal(i.asnumpy(), as_x(order))
    np.testing.assert_array_equal(v.asnumpy().view("u4"), as_x(want).view("u4"))


def test_topk_partial_path_picks_the_right_elements():
    """k much smaller than the axis takes the argpartition path; compare with a full sort."""
    rng = np.random.default_rng(0)
    x = rng.permutation(4 * 3001).reshape(4, 3001).astype(np.float32)
    for ascending in (True, False):
        got = top_positions(x, 5, ascending)
        np.testing.assert_array_equal(got, stable_order(x, ascending)[:, :5])
    # equal values come out by position, also those tied at the k-th place
    y = np.array([[1.0, 5.0, 3.0, 5.0, 4.0, 5.0] + [0.0] * 100] * 2)
    np.testing.assert_array_equal(top_positions(y, 2, False), [[1, 3]] * 2)
    np.testing.assert_array_equal(top_positions(y, 4, False), [[1, 3, 5, 4]] * 2)
    np.testing.assert_array_equal(top_positions(-y, 2, True), [[1, 3]] * 2)
    z = np.array([[np.nan, 1.0, np.nan] + [0.0] * 60])
    np.testing.assert_array_equal(top_positions(z, 2, False), [[0, 2]])


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64"])
@pytest.mark.parametrize("ascending", [True, False])
@pytest.mark.parametrize("k", [1, 7, 64])
@pytest.mark.parametrize("parallel", [False, True])
def test_the_one_pass_topk_keeps_a_stable_sorts_first_k(dtype, ascending, k, parallel):
    """_top_rows (k <= 64, no NaN): ties in long runs, -0.0 beside 0.0, sorted and
    reversed rows (an insertion at every element), rows shorter than a chunk."""
    from nnvmpy.ops import _top_rows

    rng = np.random.default_rng(k)
    ties = rng.integers(-3, 4, (6, 900)).astype(dtype)
    spread = (rng.standard_normal((6, 900)) * 1000).astype(dtype)
    if dtype.startswith("float"):
        ties[:, ::5] = -0.0
    ramps = np.stack([np.arange(900), -np.arange(900)]).astype(dtype)
    for x in (ties, spread, ramps, spread[:, : k + 5]):
        x = np.ascontiguousarray(x)
        got = _top_rows.top_rows(x, k, ascending, parallel)
        np.testing.assert_array_equal(got, stable_order(x, ascending)[:, :k])


def test_topk_sends_nan_to_numpy_and_keeps_its_order(monkeypatch):
    from nnvmpy.ops import sort

    calls = []
    real = sort._row_pass
    monkeypatch.setattr(sort, "_row_pass", lambda *a: calls.append(1) or real(*a))
    x = np.random.default_rng(3).standard_normal((5, 400)).astype(np.float32)
    top_positions(x, 3, False)
    assert calls == [1]
    x[2, 17] = np.nan
    for ascending in (True, False):
        np.testing.assert_array_equal(
            top_positions(x, 3, ascending), stable_order(x, ascending)[:, :3]
        )
    assert calls == [1]


def test_topk_on_mxnets_large_matrix_case():
    rng = np.random.default_rng(1)
    x = np.repeat(np.arange(30001, dtype=np.float32)[None], 3, axis=0)
    x = np.stack([rng.permutation(r) for r in x])
    got = nv.nd.topk(nd(x), axis=1, ret_typ="indices", k=5, is_ascend=False).asnumpy()
    np.testing.assert_array_equal(got, np.argsort(-x, axis=1)[:, :5])


# -- the GPU's bitonic network, run on the CPU ---------------------------------------------------


@settings(max_examples=25, deadline=None)
@given(
    shape=st.tuples(st.integers(1, 3), st.integers(0, 19), st.integers(1, 3)),
    values=st.sampled_from(["ties", "nan", "distinct"]),
    ascending=st.booleans(),
)
def test_bitonic_rows_equal_a_stable_sort(shape, values, ascending):
    rng = np.random.default_rng(sum(shape))
    x = rng.integers(0, 4, size=shape).astype(np.float32)
    if values == "nan" and x.size:
        x.flat[:: max(1, x.size // 3)] = np.nan
    elif values == "distinct":
        x = rng.permutation(x.size).reshape(shape).astype(np.float32)
    outer, n, inner = shape
    space = np.empty(_bitonic.scratch_bytes(outer * inner, n, x.dtype), np.uint8)
    _, idx, p2 = _bitonic.sort_rows(Context("cpu", 0), space, x, shape, ascending)
    got = idx.reshape(outer, inner, p2)[:, :, :n]
    np.testing.assert_array_equal(got, stable_order(np.moveaxis(x, 1, 2), ascending))


@pytest.mark.gpu
def test_gpu_ties_and_nan_match_the_cpu():
    x = np.array([[1.0, np.nan, 3.0, 1.0, 3.0, -2.0, np.nan]], dtype=np.float32)
    for ascending in (True, False):
        on = [nv.nd.argsort(nd(x, c), is_ascend=ascending).asnumpy() for c in (nv.cpu(), nv.gpu())]
        np.testing.assert_array_equal(on[1], on[0])


# -- outputs, dtypes and hidden outputs -----------------------------------------------------------


def test_hidden_indices_are_not_returned():
    x = nd(np.array([[3.0, 1.0, 2.0]]))
    assert isinstance(nv.nd.sort(x), nv.nd.NDArray)
    assert isinstance(nv.nd.topk(x, ret_typ="value"), nv.nd.NDArray)
    value, indices = nv.nd.topk(x, ret_typ="both", k=2)
    np.testing.assert_array_equal(value.asnumpy(), [[3, 2]])
    np.testing.assert_array_equal(indices.asnumpy(), [[0, 2]])
    assert nv.sym.sort(nv.sym.Variable("x"), name="s").list_outputs() == ["s_output"]
    assert len(nv.sym.topk(nv.sym.Variable("x"), ret_typ="both").list_outputs()) == 2


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int32", "int64", "uint8"])
def test_index_dtypes(dtype):
    x = nd(np.array([[0.3, 0.2, 0.4], [0.1, 0.3, 0.2]], dtype=np.float16))
    got = nv.nd.argsort(x, dtype=dtype)
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(got.asnumpy(), [[1, 0, 2], [0, 2, 1]])
    assert nv.nd.topk(x, dtype=dtype).dtype == np.dtype(dtype)
    assert nv.nd.topk(x, ret_typ="mask").dtype == np.float16


def test_mask_and_flattened_axis(ctx):
    x = np.array([[0.3, 0.2, 0.4], [0.1, 0.3, 0.2]])
    got = nv.nd.topk(nd(x, ctx), ret_typ="mask", k=2).asnumpy()
    np.testing.assert_array_equal(got, [[1, 0, 1], [0, 1, 1]])
    got = nv.nd.topk(nd(x, ctx), axis=None, k=3).asnumpy()
    np.testing.assert_array_equal(got, [2, 0, 4])
    got = nv.nd.topk(nd(x, ctx), axis=None, ret_typ="mask", k=3).asnumpy()
    np.testing.assert_array_equal(got, [[1, 0, 1], [0, 1, 0]])


# -- gradients ----------------------------------------------------------------------------------


def test_sym_axis_none_sorts_the_flattened_array():
    s = nv.sym.topk(nv.sym.Variable("a"), axis=None, k=4, ret_typ="value")
    assert s.infer_shape(a=(2, 3))[1] == [(4,)]


@pytest.mark.parametrize(
    "make",
    [
        lambda a: nv.sym.sort(a, axis=1, is_ascend=False),
        lambda a: nv.sym.sort(a, axis=None),
        lambda a: nv.sym.topk(a, axis=0, k=2, ret_typ="value", is_ascend=True),
    ],
)
def test_value_gradients_match_finite_differences(make):
    x = np.random.default_rng(2).permutation(60).reshape(3, 4, 5) * 0.1
    check_numeric_gradient(make(nv.sym.Variable("a")), {"a": x}, dtype=np.float64)


def test_topk_value_gradient_goes_back_to_the_chosen_positions(ctx):
    x = np.array([[0.3, 0.2, 0.4, 0.1], [0.1, 0.3, 0.2, 0.5]])
    dy = np.array([[10.0, 20.0], [30.0, 40.0]])
    want = np.array([[20.0, 0.0, 10.0, 0.0], [0.0, 40.0, 0.0, 30.0]])
    s = nv.sym.topk(nv.sym.Variable("a"), k=2, ret_typ="value")
    check_symbolic_backward(s, {"a": x}, [dy], {"a": want}, ctx=ctx, dtype=np.float64)
    check_symbolic_backward(
        s, {"a": x}, [dy], {"a": want}, grad_req="add", ctx=ctx, dtype=np.float64
    )


def test_indices_and_masks_have_zero_gradients():
    x = np.random.default_rng(3).normal(size=(3, 4))
    for ret in ("indices", "mask"):
        s = nv.sym.topk(nv.sym.Variable("a"), k=2, ret_typ=ret)
        out = np.ones((3, 2) if ret == "indices" else (3, 4))
        check_symbolic_backward(s, {"a": x}, [out], {"a": np.zeros((3, 4))}, dtype=np.float64)


# -- errors ---------------------------------------------------------------------------------------


def test_bad_parameters_are_named_errors():
    x = nd(np.ones((2, 3)))
    with pytest.raises(InferError, match="topk: parameter 'k' is 4 but the axis has only 3"):
        nv.nd.topk(x, k=4)
    with pytest.raises(InferError, match="sort: axis 2 is out of range"):
        nv.nd.sort(x, axis=2)
    with pytest.raises(ParamError, match="topk: parameter 'ret_typ'"):
        nv.nd.topk(x, ret_typ="values")
    with pytest.raises(ParamError, match="argsort: parameter 'dtype'"):
        nv.nd.argsort(x, dtype="int8")
    # the engine and the op still work
    np.testing.assert_array_equal(nv.nd.topk(x, k=0).asnumpy(), [[0, 1, 2], [0, 1, 2]])


def test_k_below_one_selects_the_whole_axis():
    x = np.array([[2.0, 9.0, 4.0]])
    np.testing.assert_array_equal(nv.nd.topk(nd(x), k=-1, ret_typ="value").asnumpy(), [[9, 4, 2]])
