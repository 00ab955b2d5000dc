"""nd.contrib.boolean_mask (op _contrib_boolean_mask) against NumPy boolean indexing, with
its gradient, on every device (the GPU's block-wise scan with blocks of a few entries
too); the symbolic form, whose output shape stays unknown as in MXNet."""

from __future__ import annotations

import numpy as np
import pytest

import nnvmpy as nv


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_keeps_the_slices_where_the_mask_is_nonzero(axis: int, ctx: nv.Context) -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(4, 5, 3))
    mask = rng.integers(0, 3, x.shape[axis]).astype(np.float32) - 1  # -1, 0 and 1
    data = nv.nd.array(x, dtype=np.float64, ctx=ctx)
    data.attach_grad()
    dy_shape = np.compress(mask != 0, x, axis=axis).shape
    dy = rng.normal(size=dy_shape)
    with nv.autograd.record():
        out = nv.nd.contrib.boolean_mask(data, nv.nd.array(mask, ctx=ctx), axis=axis)
    out.backward(nv.nd.array(dy, dtype=np.float64, ctx=ctx))
    np.testing.assert_array_equal(out.asnumpy(), np.compress(mask != 0, x, axis=axis))
    want = np.zeros_like(x)
    kept = [slice(None)] * 3
    kept[axis] = np.flatnonzero(mask)
    want[tuple(kept)] = dy
    np.testing.assert_array_equal(data.grad.asnumpy(), want)


def test_documented_example_and_an_empty_result(ctx: nv.Context) -> None:
    data = nv.nd.array([[1, 2, 3], [4, 5, 6], [7, 8, 9]], ctx=ctx)
    out = nv.nd.contrib.boolean_mask(data, nv.nd.array([0, 1, 0], ctx=ctx))
    np.testing.assert_array_equal(out.asnumpy(), [[4, 5, 6]])
    with nv.util.np_shape(True):
        empty = nv.nd.contrib.boolean_mask(data, nv.nd.array([0, 0, 0], ctx=ctx))
        assert empty.shape == (0, 3)


def test_out_argument_and_errors() -> None:
    data = nv.nd.array(np.arange(6.0).reshape(3, 2))
    out = nv.nd.zeros((2, 2))
    assert nv.nd.contrib.boolean_mask(data, nv.nd.array([1, 0, 1]), out=out) is out
    np.testing.assert_array_equal(out.asnumpy(), [[0, 1], [4, 5]])
    with pytest.raises(nv.NNVMError, match="expected a 1-D mask of 3 entries"):
        nv.nd.contrib.boolean_mask(data, nv.nd.array([1, 0]))
    with pytest.raises(nv.NNVMError, match="axis 2"):
        nv.nd.contrib.boolean_mask(data, nv.nd.array([1, 0]), axis=2)
    with pytest.raises(nv.NNVMError, match=r"boolean_mask: out\[0\] has shape \(2, 2\)"):
        nv.nd.contrib.boolean_mask(data, nv.nd.array([1, 1, 1]), out=out)


def test_gradient_matches_finite_differences() -> None:
    rng = np.random.default_rng(1)
    x = rng.normal(size=(5, 3))
    mask = nv.nd.array([1, 0, 0, 1, 1])
    w = rng.normal(size=(3, 3))  # a weighted sum makes every kept element's gradient distinct

    def loss(v: np.ndarray) -> float:
        out = nv.nd.contrib.boolean_mask(nv.nd.array(v, dtype=np.float64), mask).asnumpy()
        return float((out * w).sum())

    data = nv.nd.array(x, dtype=np.float64)
    data.attach_grad()
    with nv.autograd.record():
        out = nv.nd.contrib.boolean_mask(data, mask)
    out.backward(nv.nd.array(w, dtype=np.float64))
    eps, numeric = 1e-6, np.zeros_like(x)
    for i in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[i] += eps
        down[i] -= eps
        numeric[i] = (loss(up) - loss(down)) / (2 * eps)
    np.testing.assert_allclose(data.grad.asnumpy(), numeric, atol=1e-6)


def test_mxnet_unittest_gradient_accumulates_over_two_masks(ctx: nv.Context) -> None:
    """MXNet's test_boolean_mask: grad_req='add', two masks, three backward passes."""
    rng = np.random.default_rng(2)
    a_np = rng.integers(0, 100, (20, 4)).astype(np.float32)
    bi, ci = rng.integers(0, 100, 20) > 50, rng.integers(0, 100, 20) < 50
    a = nv.nd.array(a_np, ctx=ctx)
    grad = nv.nd.zeros_like(a)
    nv.autograd.mark_variables([a], [grad], grad_reqs="add")
    for _ in range(3):
        with nv.autograd.record():
            b = nv.nd.contrib.boolean_mask(a, nv.nd.array(bi, ctx=ctx))
            c = nv.nd.contrib.boolean_mask(a, nv.nd.array(ci, ctx=ctx))
            (b.sum() + c.sum()).backward()
    want = np.tile((bi.astype(np.float32) + ci)[:, None], (1, 4)) * 3
    np.testing.assert_array_equal(grad.asnumpy(), want)
    np.testing.assert_array_equal(b.asnumpy(), a_np[bi])


def test_dtypes_and_mask_values(ctx: nv.Context) -> None:
    """Any non-zero mask value keeps a slice (MXNet: 1.5 and -0.2 keep, 0 drops); the
    output has data's dtype whatever the mask's."""
    data = nv.nd.array([[1, 2], [3, 4], [5, 6]], dtype=np.int32, ctx=ctx)
    out = nv.nd.contrib.boolean_mask(data, nv.nd.array([1.5, -0.2, 0.0], ctx=ctx))
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out.asnumpy(), [[1, 2], [3, 4]])
    index = nv.nd.array([0, 1, 1], dtype=np.int64, ctx=ctx)
    out = nv.nd._internal._contrib_boolean_mask(data, index)
    np.testing.assert_array_equal(out.asnumpy(), [[3, 4], [5, 6]])


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_gpu_scan_over_many_blocks(monkeypatch: pytest.MonkeyPatch, dtype: type) -> None:
    """Blocks of 4 mask entries: positions carry across blocks (empty, full and partly
    kept ones); forward and the add-request gradient against NumPy."""
    import nnvmpy.ops.contrib_boolean_mask as bm

    monkeypatch.setattr(bm, "BLOCK", 4)
    ctx = nv.gpu(0)
    mask = np.array([0, 0, 0, 0, 1, 1, 1, 1, 0, 1, 0, 1, 1], np.float32)  # 13: four blocks
    rng = np.random.default_rng(3)
    x = rng.uniform(-1, 1, (2, 13, 3)).astype(dtype)
    data = nv.nd.array(x, dtype=dtype, ctx=ctx)
    grad = nv.nd.ones(x.shape, dtype=dtype, ctx=ctx)
    nv.autograd.mark_variables([data], [grad], grad_reqs="add")
    dy = rng.uniform(-1, 1, (2, 7, 3)).astype(dtype)
    with nv.autograd.record():
        out = nv.nd.contrib.boolean_mask(data, nv.nd.array(mask, ctx=ctx), axis=1)
    out.backward(nv.nd.array(dy, dtype=dtype, ctx=ctx))
    np.testing.assert_array_equal(out.asnumpy(), x[:, mask != 0])
    want = np.ones(x.shape, dtype)
    want[:, mask != 0] += dy
    np.testing.assert_array_equal(grad.asnumpy(), want)


def test_symbolic_output_shape_is_unknown_and_binding_fails_clearly() -> None:
    """As MXNet 1.9.1: infer_shape cannot decide the output, infer_shape_partial leaves it
    (), simple_bind refuses, naming the node and why."""
    s = nv.sym.contrib.boolean_mask(nv.sym.var("data"), nv.sym.var("index"))
    assert s.tojson().count('"_contrib_boolean_mask"') == 1
    assert s.list_arguments() == ["data", "index"]
    with pytest.warns(UserWarning, match="Cannot decide shape"):
        assert s.infer_shape(data=(3, 2), index=(3,)) == (None, None, None)
    assert s.infer_shape_partial(data=(3, 2), index=(3,)) == ([(3, 2), (3,)], [()], [])
    with pytest.raises(nv.NNVMError, match=r"'boolean_mask0' \(_contrib_boolean_mask\).*input"):
        s.simple_bind(nv.cpu(), data=(3, 2), index=(3,))
    with pytest.raises(nv.NNVMError, match="_contrib_boolean_mask: input 'index' has shape"):
        s.infer_shape_partial(data=(3, 2), index=(4,))


def test_loads_mxnet_symbol_json() -> None:
    """A symbol file MXNet wrote names the op _contrib_boolean_mask."""
    js = (
        '{"nodes": [{"op": "null", "name": "data", "inputs": []}, '
        '{"op": "null", "name": "index", "inputs": []}, '
        '{"op": "_contrib_boolean_mask", "name": "boolean_mask0", "attrs": {"axis": "0"}, '
        '"inputs": [[0, 0, 0], [1, 0, 0]]}], "arg_nodes": [0, 1], '
        '"node_row_ptr": [0, 1, 2, 3], "heads": [[2, 0, 0]], '
        '"attrs": {"mxnet_version": ["int", 10901]}}'
    )
    s = nv.sym.load_json(js)
    assert s.list_outputs() == ["boolean_mask0_output"]
