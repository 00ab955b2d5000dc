"""Special cases of the indexing ops beyond the op table (cases_indexing.py): index modes
and their errors, repeated indices in gradients, partial shape inference, dtype rules,
float16 on the CPU, the GPU backward kernels (on the simulator) and the engine after an
error. References are NumPy (np.take, np.add.at, one-hot products)."""

from __future__ import annotations

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy.base import InferError, NNVMError, ParamError
from nnvmpy.ops import _index_kernels as K
from nnvmpy.test_utils import check_symbolic_backward, check_symbolic_forward

# the CUDA simulator wraps unsigned integers with NumPy scalars, which warn about it
pytestmark = pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")


def nd(x, ctx=None, dtype=None):
    x = np.asarray(x)
    return nv.nd.array(x, ctx=ctx or nv.cpu(), dtype=dtype or x.dtype)


def still_works(ctx=None):
    """The engine and registry keep working after an error."""
    y = nv.nd.take(nd(np.arange(6.0).reshape(3, 2), ctx), nd([2, 0], ctx)).asnumpy()
    np.testing.assert_array_equal(y, [[4, 5], [0, 1]])


# -- take: modes and their errors ------------------------------------------------------------


@pytest.mark.parametrize("mode", ["clip", "wrap"])
def test_take_out_of_range_indices_follow_the_mode(ctx, mode):
    x = np.arange(12.0).reshape(4, 3)
    idx = np.array([[-5, -1, 0], [3, 4, 11]], dtype=np.float32)
    got = nv.nd.take(nd(x, ctx), nd(idx, ctx), axis=0, mode=mode).asnumpy()
    np.testing.assert_array_equal(got, np.take(x, idx.astype(int), axis=0, mode=mode))


def test_take_truncates_float_indices_toward_zero(ctx):
    x = np.arange(5.0)
    got = nv.nd.take(nd(x, ctx), nd([1.9, -0.7, 3.2], ctx)).asnumpy()
    np.testing.assert_array_equal(got, [1.0, 0.0, 3.0])


@pytest.mark.parametrize("bad", [4, -1])
def test_take_raise_mode_raises_index_error_naming_the_op(ctx, bad):
    x = nd(np.ones((4, 2)), ctx)
    y = nv.nd.take(x, nd([0, bad], ctx), mode="raise")
    with pytest.raises(NNVMError, match=r"take: .*out of bounds") as info:
        y.asnumpy()
    assert isinstance(info.value.__cause__, IndexError)
    still_works(ctx)


def test_take_raise_mode_in_a_bound_graph_raises_at_the_output():
    a, i = nv.sym.Variable("a"), nv.sym.Variable("i")
    exe = nv.sym.take(a, i, mode="raise").simple_bind(nv.cpu(), a=(3, 2), i=(2,))
    exe.forward(a=np.ones((3, 2)), i=np.array([0, 7]))
    with pytest.raises(NNVMError, match="out of bounds"):
        exe.outputs[0].asnumpy()
    exe.forward(a=np.ones((3, 2)), i=np.array([0, 2]))
    np.testing.assert_array_equal(exe.outputs[0].asnumpy(), np.ones((2, 2)))


def test_take_bad_axis_and_mode_are_named_errors():
    x = nd(np.ones((2, 3)))
    with pytest.raises(InferError, match=r"take: axis 2 is out of range.*-2 <= axis < 2"):
        nv.nd.take(x, nd([0]), axis=2)
    with pytest.raises(ParamError, match="take: parameter 'mode'"):
        nv.nd.take(x, nd([0]), mode="nearest")
    still_works()


def test_take_from_an_empty_axis_raises():
    with pytest.raises(NNVMError, match="empty axis"):
        nv.nd.take(nd(np.ones((0, 3))), nd([0])).asnumpy()
    still_works()


def test_take_infers_shapes_both_ways():
    a, i = nv.sym.Variable("a"), nv.sym.Variable("i")
    y = nv.sym.take(a, i, axis=1)
    _, outs, _ = y.infer_shape(a=(2, 5, 3), i=(4, 6))
    assert outs == [(2, 4, 6, 3)]
    _, outs, _ = y.infer_shape_partial(i=(4, 6))
    assert outs == [()]  # a unknown: nothing to say about the output yet


# -- take / Embedding gradients: repeated rows add up ------------------------------------------


@pytest.mark.parametrize(("shape", "axis"), [((5, 3), 0), ((2, 4, 6), 1), ((3, 7), -1)])
@pytest.mark.parametrize("grad_req", ["write", "add"])
def test_take_gradient_adds_repeated_rows(ctx, shape, axis, grad_req):
    rng = np.random.default_rng(0)
    n = shape[axis]
    idx = np.array([[0, n - 1, 0], [1, 0, 0]], dtype=np.float64)
    a = rng.normal(size=shape)
    y = nv.sym.take(nv.sym.Variable("a"), nv.sym.Variable("i"), axis=axis)
    dy = rng.normal(size=np.take(a, idx.astype(int), axis=axis).shape)
    # d a: each of dy's slices along `axis` added back at its index, one at a time
    ax = axis % len(shape)
    slices = np.moveaxis(dy.reshape((*shape[:ax], idx.size, *shape[ax + 1 :])), ax, 0)
    da = np.zeros(shape)
    moved = np.moveaxis(da, ax, 0)  # a view: writes reach da
    for j, i in enumerate(idx.astype(int).ravel()):
        moved[i] += slices[j]
    check_symbolic_backward(y, {"a": a, "i": idx}, [dy], {"a": da, "i": np.zeros_like(idx)},
                            grad_req=grad_req, ctx=ctx, dtype=np.float64)  # fmt: skip


def test_embedding_gradient_is_the_one_hot_product(ctx):
    # MXNet's test_embedding: out = onehot(data) @ W, dW = onehot(data).T @ dy
    rng = np.random.default_rng(1)
    data = rng.integers(0, 10, size=24).astype(np.float64)
    weight = rng.uniform(-0.01, 0.01, size=(10, 4))
    onehot = np.eye(10)[data.astype(int)]
    dy = rng.uniform(-1, 1, size=(24, 4))
    y = nv.sym.Embedding(nv.sym.Variable("d"), nv.sym.Variable("w"), input_dim=10, output_dim=4)
    loc = {"d": data, "w": weight}
    check_symbolic_forward(y, loc, [onehot @ weight], ctx=ctx, dtype=np.float64)
    reqs = {"d": "null", "w": "write"}
    want = {"w": onehot.T @ dy}
    check_symbolic_backward(y, loc, [dy], want, grad_req=reqs, ctx=ctx, dtype=np.float64)


def test_embedding_many_rows_into_few_columns(ctx):
    """100k indices into a 7x3 table: the scatter's row chunks (atomics on the GPU) add up."""
    rng = np.random.default_rng(2)
    n = 100_000 if ctx.device_type == "cpu" else 4_000
    data = rng.integers(0, 7, size=n).astype(np.float32)
    dy = rng.integers(-3, 4, size=(n, 3)).astype(np.float32)  # exact float32 sums
    want = np.zeros((7, 3), np.float32)
    np.add.at(want, data.astype(int), dy)
    y = nv.sym.Embedding(nv.sym.Variable("d"), nv.sym.Variable("w"), input_dim=7, output_dim=3)
    exe = y.simple_bind(ctx, grad_req={"d": "null", "w": "write"}, d=(n,))
    exe.forward(is_train=True, d=data, w=np.zeros((7, 3), np.float32))
    exe.backward([nd(dy, ctx)])
    np.testing.assert_array_equal(exe.grad_dict["w"].asnumpy(), want)


def test_embedding_shapes_and_dtypes():
    x, w = nv.sym.Variable("x"), nv.sym.Variable("w")
    y = nv.sym.Embedding(data=x, weight=w, input_dim=100, output_dim=10)
    _, outs, _ = y.infer_shape_partial(x=(0, 5), w=(100, 10))
    assert outs == [(0, 5, 10)]
    args, outs, _ = y.infer_shape(x=(2, 5))
    assert dict(zip(y.list_arguments(), args))["w"] == (100, 10)
    # the weight's dtype wins over `dtype`, which is only the default (as in MXNet)
    args, outs, _ = y.infer_type(x=np.int32, w=np.float64)
    assert outs == [np.float64]
    args, outs, _ = y.infer_type(x=np.int32)
    assert outs == [np.float32]
    with pytest.raises(InferError, match="Embedding: input 'weight'"):
        y.infer_shape(x=(2,), w=(99, 10))
    with pytest.raises(ParamError, match="Embedding: parameter 'input_dim'"):
        nv.nd.Embedding(nd([0]), nd(np.ones((1, 1))), input_dim=0, output_dim=1)


def test_embedding_clips_and_accepts_sparse_grad(ctx):
    w = np.arange(6.0).reshape(3, 2)
    got = nv.nd.Embedding(nd([-2, 1, 5], ctx), nd(w, ctx), input_dim=3, output_dim=2,
                          sparse_grad=True).asnumpy()  # fmt: skip
    np.testing.assert_array_equal(got, w[[0, 1, 2]])


# -- the scatter kernel's geometry --------------------------------------------------------------


@pytest.mark.parametrize("sizes", [(1, 9, 300, 1), (1, 4, 50, 129), (3, 5, 7, 20), (70, 2, 3, 4)])
def test_scatter_add_rows_matches_np_add_at(sizes):
    outer, n, m, inner = sizes
    rng = np.random.default_rng(3)
    idx = rng.integers(-n, 2 * n, size=m).astype(np.float64)
    dy = rng.normal(size=(outer, m, inner))
    da = rng.normal(size=(outer, n, inner))
    want = da.copy()
    np.add.at(want, (slice(None), np.clip(idx.astype(int), 0, n - 1)), dy)
    K.scatter_add_rows(nv.cpu(), da, dy, idx, sizes, False)
    np.testing.assert_allclose(da, want, rtol=1e-12, atol=1e-12)


# -- batch_take ---------------------------------------------------------------------------------


def test_batch_take_picks_one_element_per_row(ctx):
    rng = np.random.default_rng(4)
    data = rng.uniform(-1, 1, size=(17, 30)).astype(np.float32)
    idx = rng.integers(0, 30, size=17).astype(np.int32)
    got = nv.nd.batch_take(nd(data, ctx), nd(idx, ctx)).asnumpy()
    np.testing.assert_array_equal(got, data[np.arange(17), idx])


def test_batch_take_has_no_gradient_as_in_mxnet():
    x, idx = nv.sym.Variable("x"), nv.sym.Variable("idx")
    y = nv.sym.batch_take(x, idx)
    with pytest.raises(NNVMError, match="batch_take"):
        y.simple_bind(nv.cpu(), x=(10, 10), idx=(10,))
    exe = y.simple_bind(nv.cpu(), grad_req="null", x=(10, 10), idx=(10,))
    exe.forward(x=np.ones((10, 10)), idx=np.arange(10))
    np.testing.assert_array_equal(exe.outputs[0].asnumpy(), np.ones(10))


def test_batch_take_rejects_a_wrong_index_count():
    with pytest.raises(InferError, match="batch_take"):
        nv.nd.batch_take(nd(np.ones((3, 4))), nd([0, 1]))
    still_works()


# -- pick ----------------------------------------------------------------------------------------


def test_pick_matches_mxnet_doc_examples(ctx):
    x = nd([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], ctx)
    np.testing.assert_array_equal(nv.nd.pick(x, nd([0, 1], ctx), axis=0).asnumpy(), [1, 4])
    np.testing.assert_array_equal(nv.nd.pick(x, nd([0, 1, 0], ctx), axis=1).asnumpy(), [1, 4, 5])
    got = nv.nd.pick(x, nd([2, -1, -2], ctx), axis=1, mode="wrap").asnumpy()
    np.testing.assert_array_equal(got, [1, 4, 5])
    got = nv.nd.pick(x, nd([[1.0], [0.0], [2.0]], ctx), axis=1, keepdims=True).asnumpy()
    np.testing.assert_array_equal(got, [[2], [3], [6]])


def test_pick_gradient_goes_to_the_picked_elements(ctx):
    rng = np.random.default_rng(5)
    x = rng.normal(size=(3, 4, 5))
    idx = rng.integers(-4, 8, size=(3, 5)).astype(np.float64)
    dy = rng.normal(size=(3, 5))
    dx = np.zeros_like(x)
    np.put_along_axis(dx, (idx.astype(int) % 4)[:, None, :], dy[:, None, :], axis=1)
    y = nv.sym.pick(nv.sym.Variable("x"), nv.sym.Variable("i"), axis=1, mode="wrap")
    check_symbolic_backward(y, {"x": x, "i": idx}, [dy], {"x": dx, "i": np.zeros_like(idx)},
                            ctx=ctx, dtype=np.float64)  # fmt: skip


def test_pick_partial_shapes_and_axis_none():
    x, index = nv.sym.Variable("x"), nv.sym.Variable("index")
    _, result, _ = nv.sym.pick(x, index, axis=1).infer_shape_partial(x=(0, 3, 3), index=(0, 3))
    assert result == [(0, 3)]
    with pytest.raises(InferError, match="pick: axis=None is not supported"):
        nv.nd.pick(nd(np.ones((2, 2))), nd([0, 0]), axis=None)
    still_works()


def test_pick_keepdims_index_with_or_without_the_axis():
    """MXNet infers the index without `axis` (a label vector) and also takes one with it."""
    x, index = nv.sym.Variable("x"), nv.sym.Variable("index")
    y = nv.sym.pick(x, index, axis=1, keepdims=True)
    assert y.infer_shape(x=(2, 3, 4))[:2] == ([(2, 3, 4), (2, 4)], [(2, 1, 4)])
    assert y.infer_shape(x=(2, 3, 4), index=(2, 1, 4))[0] == [(2, 3, 4), (2, 1, 4)]
    data = np.arange(24.0).reshape(2, 3, 4)
    idx = np.array([[0, 1, 2, 0], [2, 2, 1, 0]])
    want = np.take_along_axis(data, idx[:, None, :], axis=1)
    for i in (idx, idx[:, None, :]):
        got = nv.nd.pick(nd(data), nd(i), axis=1, keepdims=True).asnumpy()
        np.testing.assert_array_equal(got, want)


def test_choose_element_0index_is_pick_on_rows():
    npy = np.arange(2000.0).reshape(100, 20)
    idx = np.random.default_rng(6).integers(0, 20, size=100)
    got = nv.nd.choose_element_0index(nd(npy), nd(idx.astype(np.float32))).asnumpy()
    np.testing.assert_array_equal(got, npy[np.arange(100), idx])


# -- fill_element_0index ----------------------------------------------------------------------


def test_fill_element_0index_in_place_and_gradient():
    lhs = nd(np.arange(6.0).reshape(2, 3))
    nv.nd.fill_element_0index(lhs, nd([9.0, 8.0]), nd([2.0, 0.0]), out=lhs)
    np.testing.assert_array_equal(lhs.asnumpy(), [[0, 1, 9], [8, 4, 5]])
    s = nv.sym.fill_element_0index(*(nv.sym.Variable(n) for n in ("l", "m", "r")))
    dy = np.arange(6.0).reshape(2, 3) + 1
    loc = {"l": np.zeros((2, 3)), "m": np.zeros(2), "r": np.array([1.0, 2.0])}
    want = {"l": [[1, 0, 3], [4, 5, 0]], "m": [2, 6], "r": [0, 0]}
    check_symbolic_backward(s, loc, [dy], want, dtype=np.float64)


# -- one_hot --------------------------------------------------------------------------------------


def test_one_hot_of_out_of_range_and_float16_indices(ctx):
    idx = np.array([[-1, 0, 2], [3, 1, 9]], dtype=np.float16)
    got = nv.nd.one_hot(nd(idx, ctx), depth=3, on_value=5, off_value=-1, dtype="int32")
    want = np.where(idx.astype(int)[..., None] == np.arange(3), 5, -1)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got.asnumpy(), want)


def test_one_hot_zero_depth_and_empty_indices():
    assert nv.nd.one_hot(nd(np.ones((2, 4))), depth=0).shape == (2, 4, 0)
    assert nv.nd.one_hot(nd(np.ones((2, 0))), depth=3).shape == (2, 0, 3)
    with pytest.raises(ParamError, match="one_hot: parameter 'depth'"):
        nv.nd.one_hot(nd([1.0]), depth=-1)


def test_onehot_encode_writes_into_out():
    out = nv.nd.zeros((4, 3))
    nv.nd._internal._onehot_encode(nd([0.0, 2.0, 1.0, 1.0]), out, out=out)
    np.testing.assert_array_equal(out.asnumpy(), np.eye(3)[[0, 2, 1, 1]])


# -- where ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("grad_req", ["write", "add"])
def test_where_gradients_split_by_condition(ctx, grad_req):
    rng = np.random.default_rng(7)
    cond = rng.integers(0, 2, size=(3, 4)).astype(np.float64)
    x, y, dy = (rng.normal(size=(3, 4)) for _ in range(3))
    s = nv.sym.where(*(nv.sym.Variable(n) for n in ("c", "x", "y")))
    loc = {"c": cond, "x": x, "y": y}
    check_symbolic_forward(s, loc, [np.where(cond != 0, x, y)], ctx=ctx, dtype=np.float64)
    want = {"c": np.zeros_like(cond), "x": dy * (cond != 0), "y": dy * (cond == 0)}
    check_symbolic_backward(s, loc, [dy], want, grad_req=grad_req, ctx=ctx, dtype=np.float64)


def test_where_partial_shape_needs_the_condition():
    c, x, y = (nv.sym.Variable(n) for n in ("cond", "x", "y"))
    w = nv.sym.where(c, x, y)
    assert w.infer_shape_partial(cond=(0, 2), x=(0, 2), y=(0, 2))[1] == [()]
    assert w.infer_shape_partial(cond=(0,), x=(2, 2), y=(2, 2))[1] == [()]
    assert w.infer_shape(cond=(2,), x=(2, 3), y=(2, 3))[1] == [(2, 3)]
    with pytest.raises(InferError, match="where: input 'condition'"):
        w.infer_shape(cond=(3,), x=(2, 3), y=(2, 3))


# -- ravel / unravel ------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(7, 6), (-1, 6), (3, 4, 5), (-1, 2, 2, 3)])
def test_ravel_and_unravel_round_trip(ctx, shape):
    rng = np.random.default_rng(8)
    dims = tuple(d if d > 0 else 5 for d in shape)
    coords = np.array([rng.integers(0, d, size=9) for d in dims], dtype=np.float64)
    flat = np.ravel_multi_index(tuple(coords.astype(int)), dims)
    got = nv.nd.ravel_multi_index(nd(coords, ctx), shape=shape).asnumpy()
    np.testing.assert_array_equal(got, flat)
    back = nv.nd.unravel_index(nd(flat.astype(np.float64), ctx), shape=shape).asnumpy()
    np.testing.assert_array_equal(back, coords)


def test_ravel_rejects_a_bad_shape():
    with pytest.raises(InferError, match="_ravel_multi_index: parameter 'shape'"):
        nv.nd._internal._ravel_multi_index(nd(np.ones((2, 3))), shape=(0, 4))
    with pytest.raises(InferError, match="first dimension must be len\\(shape\\)=3"):
        nv.nd.ravel_multi_index(nd(np.ones((2, 3))), shape=(2, 2, 2))
    still_works()


# -- float16 on the CPU ---------------------------------------------------------------------------


def test_float16_on_cpu_computes_through_float32():
    x = np.random.default_rng(9).uniform(-1, 1, size=(4, 5)).astype(np.float16)
    idx = np.array([3, 0, 4, 4], dtype=np.int32)
    np.testing.assert_array_equal(nv.nd.take(nd(x), nd(idx), axis=1).asnumpy(), x[:, idx])
    got = nv.nd.pick(nd(x), nd(idx), axis=1).asnumpy()
    np.testing.assert_array_equal(got, x[np.arange(4), idx])
    got = nv.nd.where(nd(x > 0), nd(x), nd(-x)).asnumpy()
    np.testing.assert_array_equal(got, np.abs(x))
    out = nd(np.ones((4, 4), np.float16))
    nv.nd.take(nd(x), nd(idx), axis=1, out=out)
    assert out.dtype == np.float16
    np.testing.assert_array_equal(out.asnumpy(), x[:, idx])
