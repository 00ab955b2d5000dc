"""Special cases of slicing.py, gather_scatter.py, stack.py, squeeze and compare.py beyond
the op table: bad parameters, out-of-range indices, duplicates, inference both ways, and
zero gradients of comparisons."""

from __future__ import annotations

import numpy as np
import pytest
from fcompute_call import run_fcompute

import nnvmpy as nv
from nnvmpy import autograd

nd = nv.nd


def still_works() -> None:
    np.testing.assert_array_equal((nd.ones(3) * 2).asnumpy(), [2, 2, 2])


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"begin": (0,), "end": (1,), "step": (0,)}, "step"),
        ({"begin": (0, 1), "end": (1,)}, "same length"),
        ({"begin": (0, 0, 0, 0), "end": (1, 1, 1, 1)}, "has 4 axes"),
        ({"begin": (0,), "end": (1,), "step": (1, 1)}, "step"),
    ],
)
def test_slice_bad_parameters(params: dict, match: str) -> None:
    with pytest.raises(nv.NNVMError, match="slice") as info:
        nd.slice(nd.zeros((2, 3, 4)), **params)
    assert match in str(info.value)
    still_works()


def test_slice_assign_shape_mismatch_names_the_op() -> None:
    with pytest.raises(nv.NNVMError, match=r"_slice_assign: input 'rhs' has shape \(2, 2\)"):
        nd._internal._slice_assign(nd.zeros((3, 4)), nd.ones((2, 2)), begin=(0,), end=(1,))
    still_works()


def test_crop_assign_in_place() -> None:
    x = nd.ones((2, 3, 4))
    nd._internal._crop_assign(x, nd.zeros((2, 1, 3)), begin=(0, 0, 0), end=(2, 1, 3), out=x)
    nd._internal._crop_assign_scalar(x, scalar=5, begin=(1, 2), end=(2, 3), out=x)
    want = np.ones((2, 3, 4), np.float32)
    want[0:2, 0:1, 0:3] = 0
    want[1:2, 2:3] = 5
    np.testing.assert_array_equal(x.asnumpy(), want)


def test_slice_infers_partial_shapes() -> None:
    x = nv.sym.Variable("x")
    y = nv.sym.slice(x, begin=(1, None), end=(None, None), step=(1, -2))
    _, out, _ = y.infer_shape(x=(5, 7))
    assert out == [(4, 4)]
    s = nv.sym.stack(nv.sym.Variable("a"), nv.sym.Variable("b"), axis=1)
    args, out, _ = s.infer_shape(a=(2, 3))
    assert args == [(2, 3), (2, 3)]
    assert out == [(2, 2, 3)]


def test_gather_nd_bounds_and_negative_indices() -> None:
    data = nd.array([[0, 1, 2], [3, 4, 5]])
    wrapped = nd.gather_nd(data, nd.array([[0, 1, -1], [0, 1, -2]]))
    np.testing.assert_array_equal(wrapped.asnumpy(), [0, 4, 4])  # data[-1, -2] is data[1, 1]
    for bad in ([[0, 1, 0], [0, 1, 3]], [[0, 1, 0], [0, 1, -5]], [[2], [0]]):
        out = nd.gather_nd(data, nd.array(bad))
        with pytest.raises(nv.NNVMError, match="out of bounds for axis"):
            out.asnumpy()
    still_works()
    with pytest.raises(nv.NNVMError, match="indexes 3 axes"):
        nd.gather_nd(data, nd.array([[0], [0], [0]]))


def test_scatter_duplicates_and_backward_accumulation() -> None:
    data = nd.array([2, 3, 0])
    idx = nd.array([[1, 1, 0], [1, 1, 0]])
    accumulated = nd._internal._backward_gather_nd(data, idx, shape=(2, 2))
    np.testing.assert_array_equal(accumulated.asnumpy(), [[0, 0], [0, 5]])
    kept = nd.scatter_nd(data, idx, shape=(2, 2)).asnumpy()
    assert kept[1, 1] in (2, 3)  # one of the duplicates' values (which one is unspecified)
    total = nd._internal._backward_gather_nd(
        nd.array(np.arange(100)), nd.zeros((1, 100), dtype="int32"), shape=(1,)
    )
    assert total.asscalar() == np.arange(100).sum()


def test_gather_nd_gradient_adds_duplicates() -> None:
    data = nd.array(np.arange(12, dtype=np.float32).reshape(3, 4))
    idx = nd.array([[1, 1, 2], [3, 3, 0]])
    data.attach_grad()
    with autograd.record():
        y = nd.gather_nd(data, idx)
    y.backward(nd.array([1.0, 2.0, 3.0]))
    want = np.zeros((3, 4), np.float32)
    np.add.at(want, (np.array([1, 1, 2]), np.array([3, 3, 0])), [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(data.grad.asnumpy(), want)


@pytest.mark.parametrize(
    "dtype", ["float32", "float64", "int32", "int64", "float16", "uint8", "bool"]
)
@pytest.mark.parametrize("index_axes", [1, 2])
def test_gather_nd_and_its_gradient_match_numpy(dtype: str, index_axes: int) -> None:
    """The CPU row loops (_gather_nd_cpu) against NumPy's fancy indexing and np.add.at,
    bit for bit: duplicates and negative indices included, rows split across threads."""
    from nnvmpy.ops.gather_scatter import gather_nd, scatter_nd

    rng = np.random.default_rng(index_axes)
    shape = (37, 5, 6)[: index_axes + 1] if index_axes == 1 else (9, 7, 6)
    data = rng.standard_normal(shape).astype(dtype)
    lead = shape[:index_axes]
    idx = np.stack([rng.integers(-n, n, (4, 25)) for n in lead])  # many duplicates
    coords = tuple(idx)
    gathered = np.empty((4, 25, *shape[index_axes:]), dtype)
    gather_nd(None, gathered, "write", data, idx.astype(np.float32))
    np.testing.assert_array_equal(gathered, data[coords])
    if dtype in ("float32", "float64", "int32", "int64"):
        gather_nd(None, gathered, "add", data, idx)
        np.testing.assert_array_equal(gathered, data[coords] + data[coords])
        head = rng.standard_normal(gathered.shape).astype(dtype)
        want = np.zeros(shape, dtype)
        np.add.at(want, coords, head)
        got = np.full(shape, np.nan if dtype[0] == "f" else 7, dtype)
        scatter_nd(None, got, "write", head, idx, True, "_backward_gather_nd")
        np.testing.assert_array_equal(got, want)
        scatter_nd(None, got, "add", head, idx, True, "_backward_gather_nd")
        np.add.at(want, coords, head)
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("req", ["write", "add"])
def test_boolean_mask_backward_requests_on_both_outputs(req: str, ctx: nv.Context) -> None:
    """The backward op as an executor calls it: d_data gets dy's slices back in place
    (zeros between them), d_index gets zeros, each written or added as requested."""
    rng = np.random.default_rng(5)
    mask = np.array([1, 0, 0, 2, 1, 0], np.float32)
    dy = rng.normal(size=(2, 3, 3))
    starts = [rng.normal(size=(2, 6, 3)), rng.normal(size=6).astype(np.float32)]
    got = run_fcompute(
        "_backward_contrib_boolean_mask", {"axis": 1}, [dy, mask], starts, [req, req],
        ctx.device_type,
    )  # fmt: skip
    want = np.zeros((2, 6, 3))
    want[:, np.flatnonzero(mask)] = dy
    base = [s if req == "add" else 0 * s for s in starts]
    np.testing.assert_array_equal(got[0], base[0] + want)
    np.testing.assert_array_equal(got[1], base[1])


def test_squeeze_and_stack_errors() -> None:
    with pytest.raises(nv.NNVMError, match="cannot squeeze axis 1"):
        nd.squeeze(nd.zeros((1, 2)), axis=1)
    with pytest.raises(nv.NNVMError, match="stack"):
        nd.stack(nd.zeros((2, 3)), nd.zeros((3, 2)))
    with pytest.raises(nv.NNVMError, match="axis"):
        nd.stack(nd.zeros((2, 3)), nd.zeros((2, 3)), axis=3)
    still_works()


def test_range_initialiser_errors() -> None:
    with pytest.raises(nv.NNVMError, match="step"):
        nd.arange(0, 5, step=0)
    with pytest.raises(nv.NNVMError, match="num"):
        nd.linspace(0, 1, -1)
    with pytest.raises(nv.NNVMError, match="N"):
        nd.eye(-2)
    still_works()


@pytest.mark.parametrize(
    "op", ["broadcast_not_equal", "broadcast_greater_equal", "broadcast_logical_xor"]
)
def test_comparison_gradients_are_zero(op: str) -> None:
    a, b = nv.sym.Variable("a"), nv.sym.Variable("b")
    y = getattr(nv.sym, op)(a, b)
    exe = y.simple_bind(nv.cpu(), a=(2, 3), b=(3,))
    exe.forward(is_train=True, a=np.ones((2, 3)), b=np.arange(3.0))
    exe.backward([nd.ones((2, 3))])
    assert not exe.grad_dict["a"].asnumpy().any()
    assert not exe.grad_dict["b"].asnumpy().any()
    with autograd.record():
        x = nd.array([1.0, 2.0])
        x.attach_grad()
    with autograd.record():
        z = nd._internal._lesser_equal_scalar(x, scalar=1.5) * 3
    z.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [0, 0])


@pytest.mark.gpu
def test_gather_scatter_on_gpu_match_cpu() -> None:
    g = nv.gpu(0)
    data = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
    idx = np.array([[0, 2, -1], [1, 3, 0]])
    want = data[idx[0], idx[1]]
    got = nd.gather_nd(nd.array(data, ctx=g), nd.array(idx, ctx=g, dtype="int64"))
    np.testing.assert_array_equal(got.asnumpy(), want)
    acc = nd._internal._backward_gather_nd(
        nd.ones((3,), ctx=g), nd.array([[1, 1, 0]], ctx=g), shape=(2,)
    )
    np.testing.assert_array_equal(acc.asnumpy(), [1, 2])
