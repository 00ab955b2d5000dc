"""nd.CachedOp: a symbol called on NDArrays, eagerly and under autograd, against NumPy."""

from __future__ import annotations

import numpy as np
import pytest

import nnvmpy as nv

nd, sym = nv.nd, nv.sym


def _conv_ref(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Valid 2-D cross-correlation, NCHW / OIHW, by loops over the kernel."""
    n, _, h, wd = x.shape
    f, _, kh, kw = w.shape
    out = np.zeros((n, f, h - kh + 1, wd - kw + 1))
    for i in range(kh):
        for j in range(kw):
            patch = x[:, :, i : i + out.shape[2], j : j + out.shape[3]]
            out += np.einsum("nchw,fc->nfhw", patch, w[:, :, i, j])
    return out + b[None, :, None, None]


def test_cached_op_computes_the_symbol_and_writes_out() -> None:
    op = nd.CachedOp(sym.Convolution(kernel=(3, 3), num_filter=4) + 2)
    rng = np.random.default_rng(0)
    x, w, b = (
        rng.standard_normal((2, 3, 6, 6)),
        rng.standard_normal((4, 3, 3, 3)),
        rng.standard_normal(4),
    )
    args = [nd.array(v, dtype="float64") for v in (x, w, b)]
    o1 = op(*args)
    np.testing.assert_allclose(o1.asnumpy(), _conv_ref(x, w, b) + 2, rtol=1e-10)
    args[2][:] = b + 1  # a new call reads the arrays as they are now
    o2 = op(*args)
    np.testing.assert_allclose(o2.asnumpy(), o1.asnumpy() + 1, rtol=1e-10)
    target = nd.zeros(o1.shape, dtype="float64")
    assert op(*args, out=target) is target
    np.testing.assert_allclose(target.asnumpy(), o2.asnumpy())


def test_cached_op_is_differentiated_by_autograd() -> None:
    a, b = sym.var("a"), sym.var("b")
    op = nd.CachedOp(sym.Group([a * b, sym.exp(a)]))
    av, bv = np.array([0.5, -1.0, 2.0]), np.array([3.0, 1.5, -2.0])
    x, y = nd.array(av, dtype="float64"), nd.array(bv, dtype="float64")
    x.attach_grad()
    y.attach_grad()
    with nv.autograd.record():
        prod, ex = op(x, y)
        loss = prod * 2 + ex
    loss.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), 2 * bv + np.exp(av), rtol=1e-12)
    np.testing.assert_allclose(y.grad.asnumpy(), 2 * av, rtol=1e-12)


def test_cached_op_updates_auxiliary_states_in_the_callers_arrays() -> None:
    bn = sym.BatchNorm(sym.var("x"), name="bn", momentum=0.5, fix_gamma=False)
    op = nd.CachedOp(bn)
    names = bn.list_inputs()
    assert names == ["x", "bn_gamma", "bn_beta", "bn_moving_mean", "bn_moving_var"]
    xv = np.arange(8.0).reshape(4, 2)
    arrays = [nd.array(xv), nd.ones((2,)), nd.zeros((2,)), nd.zeros((2,)), nd.ones((2,))]
    with nv.autograd.train_mode():
        out = op(*arrays)
    mean = xv.mean(axis=0)
    np.testing.assert_allclose(
        out.asnumpy(), (xv - mean) / np.sqrt(xv.var(axis=0) + 1e-3), rtol=1e-4
    )
    np.testing.assert_allclose(arrays[3].asnumpy(), 0.5 * mean, rtol=1e-6)


def test_cached_op_checks_its_arguments_and_keeps_working() -> None:
    op = nd.CachedOp(sym.relu(sym.var("x")))
    with pytest.raises(nv.NNVMError, match=r"expects 1 inputs \['x'\], got 2"):
        op(nd.ones((2,)), nd.ones((2,)))
    with pytest.raises(nv.NNVMError, match="input 'x' must be an NDArray"):
        op(np.ones(2))
    with pytest.raises(nv.NNVMError, match="out= needs 1 arrays"):
        op(nd.ones((2,)), out=[nd.ones((2,)), nd.ones((2,))])
    with pytest.raises(nv.NNVMError, match="flags must be"):
        nd.CachedOp(sym.var("x"), flags=[1, 2])
    with pytest.raises(nv.NNVMError, match="expected a Symbol"):
        nd.CachedOp("relu")
    flagged = nd.CachedOp(sym.relu(sym.var("x")), flags=[("static_alloc", True)])
    assert flagged.flags == {"static_alloc": "True"}
    np.testing.assert_array_equal(op(nd.array([-1.0, 2.0])).asnumpy(), [0.0, 2.0])


def test_cached_op_runs_a_fused_symbol_whose_nodes_have_no_string_form() -> None:
    x, y = sym.var("x"), sym.var("y")
    s = sym.sigmoid(x * 2.0 + y) * y
    X, Y = np.linspace(-2, 2, 12).reshape(3, 4), np.linspace(1, 3, 12).reshape(3, 4)
    fused = s.optimize_for("fuse", args={"x": nd.array(X), "y": nd.array(Y)})
    assert "Op:_FusedOp" in fused.debug_str()
    values = {"x": X, "y": Y}
    out = nd.CachedOp(fused)(*(nd.array(values[n]) for n in fused.list_inputs())).asnumpy()
    np.testing.assert_allclose(out, Y / (1 + np.exp(-(2 * X + Y))), rtol=1e-6)
