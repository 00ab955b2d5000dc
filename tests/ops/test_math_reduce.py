"""argmax/argmin, cumsum, moments, nansum/nanprod, broadcast_like, and the binary ops mod,
hypot, maximum/minimum beyond the op table: ties and NaN, dtypes, gradients, bad input.

References: NumPy (np.argmax, np.cumsum, np.nansum, np.mod, np.hypot), formulas written
out in the tests, and finite differences (check_numeric_gradient).
"""

from __future__ import annotations

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy.base import InferError, ParamError
from nnvmpy.test_utils import check_numeric_gradient

nd, sym = nv.nd, nv.sym


def still_works() -> None:
    np.testing.assert_array_equal(nd.argmax(nd.array([[1.0, 3.0, 2.0]]), axis=1).asnumpy(), [1])


# -- argmax / argmin ---------------------------------------------------------------------------


def test_argmax_first_tie_wins_and_nan_is_the_extreme(ctx: nv.Context) -> None:
    x = nd.array([[2, 5, 5, 1], [np.nan, 1, np.nan, 9], [3, 3, 3, 3]], ctx=ctx)
    np.testing.assert_array_equal(nd.argmax(x, axis=1).asnumpy(), [1, 0, 0])
    np.testing.assert_array_equal(nd.argmin(x, axis=1).asnumpy(), [3, 0, 0])
    y = nd.array([[1.0, 1.0, np.nan, np.nan]], ctx=ctx)
    np.testing.assert_array_equal(nd.argmin(y, axis=1).asnumpy(), [2])


def test_argmax_returns_the_input_dtype_and_mxnets_shapes() -> None:
    x = np.arange(24).reshape(2, 3, 4) % 7
    for dtype in ("float32", "int32", "uint8", "float16"):
        got = nd.argmax(nd.array(x, dtype=dtype), axis=1)
        assert got.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(got.asnumpy(), np.argmax(x, axis=1))
    assert nd.argmax(nd.array(x)).shape == (1,)
    assert nd.argmax(nd.array(x), keepdims=True).shape == (1, 1, 1)
    assert nd.argmax(nd.array(x), axis=-1, keepdims=True).shape == (2, 3, 1)
    np.testing.assert_array_equal(nd.argmax_channel(nd.array(x)).asnumpy(), np.argmax(x, axis=1))


def test_argmax_has_a_zero_gradient() -> None:
    s = sym.argmax(sym.var("x"), axis=1) * sym.var("w")
    exe = s.simple_bind(nv.cpu(), x=(2, 3), w=(2,))
    exe.forward(is_train=True, x=np.arange(6.0).reshape(2, 3), w=np.ones(2))
    exe.backward(nd.ones((2,)))
    np.testing.assert_array_equal(exe.grad_dict["x"].asnumpy(), 0)


def test_argmax_bad_axis_is_a_named_error() -> None:
    with pytest.raises(InferError, match=r"argmax: axis 3 is out of range"):
        nd.argmax(nd.ones((2, 3)), axis=3)
    with pytest.raises(InferError, match=r"argmin: cannot reduce over axis 1 of size 0"):
        nd.argmin(nd.array(np.zeros((2, 0))), axis=1)
    still_works()


# -- cumsum ----------------------------------------------------------------------------------


def test_cumsum_dtypes_and_shapes(ctx: nv.Context) -> None:
    x = np.arange(24).reshape(2, 3, 4) % 5
    got = nd.cumsum(nd.array(x, dtype="int32", ctx=ctx))
    assert got.dtype == np.int32
    assert got.shape == (24,)
    np.testing.assert_array_equal(got.asnumpy(), np.cumsum(x))
    got = nd.cumsum(nd.array(x, dtype="int8", ctx=ctx), axis=1, dtype="float64")
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got.asnumpy(), np.cumsum(x, axis=1))
    got = nd.cumsum(nd.array(x, dtype="float16", ctx=ctx), axis=0)
    assert got.dtype == np.float16
    np.testing.assert_array_equal(got.asnumpy(), np.cumsum(x, axis=0))


def test_cumsum_gradient_is_the_reversed_cumsum() -> None:
    x = nd.array(np.arange(6.0).reshape(2, 3))
    x.attach_grad()
    head = np.arange(6.0).reshape(2, 3)
    with nv.autograd.record():
        y = nd.cumsum(x, axis=1)
    y.backward(nd.array(head))
    np.testing.assert_array_equal(x.grad.asnumpy(), np.cumsum(head[:, ::-1], axis=1)[:, ::-1])


def test_cumsum_bad_axis_and_dtype_are_named_errors() -> None:
    with pytest.raises(InferError, match=r"cumsum: axis 2 is out of range for input 'a'"):
        nd.cumsum(nd.ones((2, 3)), axis=2)
    with pytest.raises(ParamError, match=r"cumsum.*dtype"):
        nd.cumsum(nd.ones((2, 3)), dtype="complex64")
    still_works()


# -- moments, nansum, nanprod ---------------------------------------------------------------------


def test_moments_returns_mean_and_biased_variance() -> None:
    x = np.random.default_rng(0).normal(3.0, 2.0, size=(4, 5, 6))
    mean, var = nd.moments(nd.array(x, dtype="float64"), axes=(0, 2))
    np.testing.assert_allclose(mean.asnumpy(), x.mean(axis=(0, 2)), rtol=1e-12)
    np.testing.assert_allclose(var.asnumpy(), x.var(axis=(0, 2)), rtol=1e-12)
    with nv.name.NameManager():  # counting afresh: other tests in this worker made some
        s = sym.moments(sym.var("x"), axes=(1,))
    assert s.list_outputs() == ["moments0_mean", "moments0_var"]


def test_moments_gradient_of_both_outputs() -> None:
    x = np.random.default_rng(1).uniform(-1, 1, size=(3, 4))
    s = sym.moments(sym.var("x"), axes=(1,), keepdims=True)
    check_numeric_gradient(s, {"x": x}, rtol=1e-5, atol=1e-8, dtype=np.float64, ctx=nv.cpu())


def test_moments_without_axes_is_a_named_error() -> None:
    with pytest.raises(InferError, match=r"moments: 'axes' is empty.*axes=\(0, 1\)"):
        nd.moments(nd.ones((2, 3)))
    with pytest.raises(InferError, match=r"moments: axis 2 is out of range"):
        nd.moments(nd.ones((2, 3)), axes=(2,))
    still_works()


def test_nansum_and_nanprod_of_all_nan_rows_are_the_identities(ctx: nv.Context) -> None:
    x = nd.array([[1.0, np.nan, 2.0], [np.nan, np.nan, np.nan]], ctx=ctx)
    np.testing.assert_array_equal(nd.nansum(x, axis=1).asnumpy(), [3, 0])
    np.testing.assert_array_equal(nd.nanprod(x, axis=1).asnumpy(), [2, 1])


def test_nanprod_gradient_skips_nans() -> None:
    x = nd.array([1.0, 2.0, np.nan, 4.0], dtype="float64")
    x.attach_grad()
    with nv.autograd.record():
        y = nd.nanprod(x)
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [8, 4, 0, 2])


# -- broadcast_like ------------------------------------------------------------------------------


def test_broadcast_like_gradient_goes_to_lhs_only() -> None:
    lhs = np.random.default_rng(2).uniform(-1, 1, size=(2, 1, 3))
    rhs = np.zeros((4, 5, 6))
    s = sym.broadcast_like(sym.var("a"), sym.var("b"), lhs_axes=(1,), rhs_axes=(0,))
    exe = s.simple_bind(nv.cpu(), a=lhs.shape, b=rhs.shape)
    exe.forward(is_train=True, a=lhs, b=rhs)
    assert exe.outputs[0].shape == (2, 4, 3)
    head = np.random.default_rng(3).uniform(size=(2, 4, 3))
    exe.backward(nd.array(head))
    np.testing.assert_allclose(exe.grad_dict["a"].asnumpy(), head.sum(axis=1, keepdims=True))
    np.testing.assert_array_equal(exe.grad_dict["b"].asnumpy(), 0)


def test_broadcast_like_bad_shapes_are_named_errors() -> None:
    with pytest.raises(InferError, match=r"broadcast_like: .*same number of dims"):
        nd.broadcast_like(nd.ones((2, 1, 3)), nd.ones((4, 5)))
    with pytest.raises(InferError, match=r"broadcast_like: .*dim 1 is 2, which is neither 1 nor 5"):
        nd.broadcast_like(nd.ones((1, 2)), nd.ones((3, 5)))
    with pytest.raises(InferError, match=r"broadcast_like: 'lhs' axis 0 has size 2"):
        nd.broadcast_like(nd.ones((2, 1)), nd.ones((3, 5)), lhs_axes=(0,), rhs_axes=(0,))
    with pytest.raises(InferError, match=r"broadcast_like: empty 'lhs_axes'"):
        nd.broadcast_like(nd.ones((1, 1)), nd.ones((3, 5)), lhs_axes=(), rhs_axes=())
    with pytest.raises(InferError, match=r"broadcast_like: 'lhs_axes' and 'rhs_axes'"):
        nd.broadcast_like(nd.ones((1, 1)), nd.ones((3, 5)), lhs_axes=(0,))
    still_works()


# -- mod, hypot, maximum / minimum ---------------------------------------------------------------


def test_mod_takes_the_sign_of_the_divisor_and_is_zero_for_a_zero_divisor(ctx: nv.Context) -> None:
    a = np.array([5.0, -5.0, 5.0, -5.0, 5.0, 0.0])
    b = np.array([3.0, 3.0, -3.0, -3.0, 0.0, 0.0])
    want = np.where(b == 0, 0, np.mod(a, np.where(b == 0, 1, b)))
    for dtype in ("float32", "int32"):
        lhs, rhs = nd.array(a, dtype=dtype, ctx=ctx), nd.array(b, dtype=dtype, ctx=ctx)
        np.testing.assert_array_equal(nd._internal._mod(lhs, rhs).asnumpy(), want)
        np.testing.assert_array_equal(nd.broadcast_mod(lhs, rhs).asnumpy(), want)
    x = nd.array([5.0, -5.0, 0.0], ctx=ctx)
    np.testing.assert_array_equal(nd._internal._rmod_scalar(x, scalar=7).asnumpy(), [2, -3, 0])
    np.testing.assert_array_equal(nd._internal._mod_scalar(x, scalar=-3).asnumpy(), [-1, -2, 0])


def test_mod_gradients() -> None:
    a = nd.array([5.0, -5.0, 5.0, -5.0], dtype="float64")
    b = nd.array([3.0, 3.0, -3.0, -3.0], dtype="float64")
    a.attach_grad()
    b.attach_grad()
    with nv.autograd.record():
        y = nd._internal._mod(a, b)
    y.backward()
    np.testing.assert_array_equal(a.grad.asnumpy(), 1)
    np.testing.assert_array_equal(b.grad.asnumpy(), -np.floor(a.asnumpy() / b.asnumpy()))


_INT_MODS = {
    "_mod": lambda a, b: a % b,
    "broadcast_mod": lambda a, b: nv.sym.broadcast_mod(a, b),
    "_mod_scalar": lambda a, b: a % 3,
    "_rmod_scalar": lambda a, b: 11 % a,
}


@pytest.mark.parametrize("kind", sorted(_INT_MODS))
def test_integer_mod_has_zero_gradients_float_mod_does_not(kind: str, ctx: nv.Context) -> None:
    """MXNet 1.9.1 gives int32 mod no gradient (head gradients 1 and 2 come back as 0 on
    both sides, measured there); float mod keeps d/dl = 1, d/dr = -floor(l / r)."""
    lhs, rhs = np.array([[5.0, 7.0]]), np.array([[3.0, 2.0]])
    for dtype in ("int32", "float32"):
        a, b = nv.sym.Variable("a"), nv.sym.Variable("b")
        y = _INT_MODS[kind](nv.sym.cast(a, dtype=dtype), nv.sym.cast(b, dtype=dtype))
        y = y * 1  # a second element-wise node: the executor's fusion may group the two
        names = y.list_arguments()
        values = {"a": lhs, "b": rhs}
        grads = {n: nd.full((1, 2), 9.0, ctx=ctx) for n in names}
        exe = y.bind(ctx, {n: nd.array(values[n], ctx=ctx) for n in names}, args_grad=grads)
        exe.forward(is_train=True)
        exe.backward([nd.array([[1.0, 2.0]], ctx=ctx)])
        head = np.array([[1.0, 2.0]])
        want = {
            "_mod": {"a": head, "b": -head * np.floor(lhs / rhs)},
            "broadcast_mod": {"a": head, "b": -head * np.floor(lhs / rhs)},
            "_mod_scalar": {"a": head},
            "_rmod_scalar": {"a": -head * np.floor(11 / lhs)},
        }[kind]
        for n in names:
            expected = want[n] if dtype == "float32" else np.zeros_like(want[n])
            np.testing.assert_array_equal(grads[n].asnumpy(), expected, err_msg=f"{dtype} {n}")


def test_hypot_does_not_overflow_as_mxnet(ctx: nv.Context) -> None:
    # MXNet 1.9.1 (.mxenv): _hypot([3, 1e30], [4, 1e30]) float32 is [5, 1.4142135e30], and
    # float64 _hypot_scalar(1e200, scalar=1e200) is 1.41421356e200: C's hypot, no overflow
    got = nd._internal._hypot(nd.array([3.0, 1e30], ctx=ctx), nd.array([4.0, 1e30], ctx=ctx))
    np.testing.assert_allclose(
        got.asnumpy(), np.hypot(np.float32([3, 1e30]), np.float32([4, 1e30]))
    )
    np.testing.assert_allclose(got.asnumpy(), [5.0, 1.4142135e30], rtol=1e-7)
    got = nd._internal._hypot_scalar(nd.array([3.0], ctx=ctx), scalar=4)
    np.testing.assert_allclose(got.asnumpy(), [5.0])
    big = nd.array([1e200], ctx=ctx, dtype=np.float64)
    got = nd._internal._hypot_scalar(big, scalar=1e200).asnumpy()
    np.testing.assert_allclose(got, [1.41421356e200], rtol=1e-8)


def test_maximum_and_minimum_propagate_nan(ctx: nv.Context) -> None:
    a = nd.array([np.nan, 1.0, 2.0, np.nan], ctx=ctx)
    b = nd.array([1.0, np.nan, 1.0, np.nan], ctx=ctx)
    for op in (nd._internal._maximum, nd._internal._minimum, nd.broadcast_maximum):
        np.testing.assert_array_equal(np.isnan(op(a, b).asnumpy()), [True, True, False, True])
    got = nd._internal._maximum_scalar(a, scalar=1.5).asnumpy()
    np.testing.assert_array_equal(got, [np.nan, 1.5, 2.0, np.nan])


@pytest.mark.parametrize("op", ["elemwise_add", "elemwise_sub", "elemwise_mul"])
def test_binary_backward_ops_are_differentiable(op: str) -> None:
    """Finite differences of the backward op itself (dy, [lhs, rhs]) -> (dlhs, drhs)."""
    rng = np.random.default_rng(4)
    names = ["dy"] if op != "elemwise_mul" else ["dy", "lhs", "rhs"]
    bwd = "_backward_" + op.removeprefix("elemwise_")
    s = getattr(sym._internal, bwd)(*[sym.var(n) for n in names])
    values = {n: rng.uniform(-1, 1, size=(2, 3)) for n in names}
    check_numeric_gradient(s, values, rtol=1e-5, atol=1e-8, dtype=np.float64, ctx=nv.cpu())


# -- allclose, zero-size max/min -------------------------------------------------------------------


def test_allclose_is_a_0d_uint8_flag_as_mxnet(ctx: nv.Context) -> None:
    a = nd.array([1.0, np.inf, np.nan], ctx=ctx)
    b = nd.array([1.0 + 1e-9, np.inf, np.nan], ctx=ctx)
    got = nd.contrib.allclose(a, b)
    assert got.shape == ()
    assert got.dtype == np.uint8
    assert got.asnumpy() == 1
    assert nd.contrib.allclose(a, b, equal_nan=False).asnumpy() == 0
    assert nd.contrib.allclose(a, nd.array([1.1, np.inf, np.nan], ctx=ctx)).asnumpy() == 0
    with pytest.raises(InferError, match=r"_contrib_allclose: inputs 'a' \(3,\) and 'b' \(2,\)"):
        nd.contrib.allclose(a, nd.array([1.0, 2.0], ctx=ctx))
    still_works()


def test_max_and_min_of_a_zero_size_axis_are_named_errors() -> None:
    empty = nd.array(np.zeros((5, 0)))
    for op in (nd.max, nd.min):
        with pytest.raises(InferError, match=r"(max|min): cannot reduce over a zero-size axis"):
            op(empty)
    np.testing.assert_array_equal(nd.sum(empty, axis=1).asnumpy(), np.zeros(5))
    still_works()
