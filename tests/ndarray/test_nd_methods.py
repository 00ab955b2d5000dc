"""NDArray's operators, nd's element-wise functions and NDArray's own methods vs NumPy."""

from __future__ import annotations

import operator

import numpy as np
import pytest

import nnvmpy as nv

nd = nv.nd
RNG = np.random.default_rng(7)

COMPARISONS = [
    (operator.eq, np.equal, nd.equal),
    (operator.ne, np.not_equal, nd.not_equal),
    (operator.gt, np.greater, nd.greater),
    (operator.ge, np.greater_equal, nd.greater_equal),
    (operator.lt, np.less, nd.lesser),
    (operator.le, np.less_equal, nd.lesser_equal),
]
PAIRS = [((2, 3), (2, 3)), ((2, 3), (3,)), ((4, 1, 3), (2, 1)), ((1,), (3, 2))]


@pytest.mark.parametrize(("py", "ref", "fn"), COMPARISONS)
@pytest.mark.parametrize(("ls", "rs"), PAIRS)
def test_comparisons_match_numpy(py: object, ref: object, fn: object, ls: tuple, rs: tuple) -> None:
    a = RNG.integers(-2, 3, size=ls).astype(np.float32)
    b = RNG.integers(-2, 3, size=rs).astype(np.float32)
    want = ref(a, b).astype(np.float32)  # 1/0 in the input's dtype, as MXNet
    for got in (py(nd.array(a), nd.array(b)), fn(nd.array(a), nd.array(b))):
        assert got.dtype == np.float32
        np.testing.assert_array_equal(got.asnumpy(), want)
    # with a scalar on either side (Python reflects x > 1 into 1 < x)
    np.testing.assert_array_equal(py(nd.array(a), 1).asnumpy(), ref(a, 1).astype(np.float32))
    np.testing.assert_array_equal(py(1, nd.array(a)).asnumpy(), ref(1, a).astype(np.float32))
    np.testing.assert_array_equal(fn(1, nd.array(a)).asnumpy(), ref(1, a).astype(np.float32))
    assert fn(2, 1) == int(ref(2, 1))


def test_nan_compares_unequal() -> None:
    x = nd.array([np.nan, 1.0])
    np.testing.assert_array_equal((x == x).asnumpy(), [0, 1])
    np.testing.assert_array_equal((x != x).asnumpy(), [1, 0])
    np.testing.assert_array_equal((x >= 1).asnumpy(), [0, 1])


@pytest.mark.parametrize(
    ("fn", "ref"),
    [(nd.logical_and, np.logical_and), (nd.logical_or, np.logical_or),
     (nd.logical_xor, np.logical_xor)],
)  # fmt: skip
def test_logical_functions(fn: object, ref: object) -> None:
    a = np.array([[0, 1, 2], [0, 0, -1]], dtype=np.float32)
    b = np.array([0, 3, 0], dtype=np.float32)
    np.testing.assert_array_equal(fn(nd.array(a), nd.array(b)).asnumpy(), ref(a, b))
    np.testing.assert_array_equal(fn(nd.array(a), 0).asnumpy(), ref(a, 0))
    np.testing.assert_array_equal(fn(1, nd.array(a)).asnumpy(), ref(1, a))


ARITH = [
    (operator.add, nd.add),
    (operator.sub, nd.subtract),
    (operator.mul, nd.multiply),
    (operator.truediv, nd.divide),
    (operator.pow, nd.power),
]


@pytest.mark.parametrize(("py", "fn"), ARITH)
@pytest.mark.parametrize(("ls", "rs"), PAIRS)
def test_arithmetic_matches_numpy(py: object, fn: object, ls: tuple, rs: tuple) -> None:
    a = RNG.uniform(0.5, 2, size=ls)
    b = RNG.uniform(0.5, 2, size=rs)
    x, y = nd.array(a, dtype=np.float64), nd.array(b, dtype=np.float64)
    np.testing.assert_allclose(py(x, y).asnumpy(), py(a, b))
    np.testing.assert_allclose(fn(x, y).asnumpy(), py(a, b))
    np.testing.assert_allclose(py(x, 1.5).asnumpy(), py(a, 1.5))
    np.testing.assert_allclose(py(1.5, x).asnumpy(), py(1.5, a))
    np.testing.assert_allclose(py(np.float32(1.5), x).asnumpy(), py(1.5, a))


def test_maximum_minimum_functions() -> None:
    a, b = np.array([1.0, 5.0, -2.0]), np.array([[3.0], [0.0]])
    np.testing.assert_array_equal(nd.maximum(nd.array(a), nd.array(b)).asnumpy(), np.maximum(a, b))
    np.testing.assert_array_equal(nd.minimum(2, nd.array(a)).asnumpy(), np.minimum(2, a))
    assert nd.maximum(1, 2) == 2


def test_binary_functions_take_mxnets_keyword_names() -> None:
    # MXNet 1.9.1: nd.power(base, exp); nd.maximum/minimum (lhs, rhs); sym's (left, right)
    x = nd.array([1.0, 2.0, 3.0])
    np.testing.assert_array_equal(nd.power(base=x, exp=2).asnumpy(), [1.0, 4.0, 9.0])
    np.testing.assert_array_equal(nd.power(base=2, exp=x).asnumpy(), [2.0, 4.0, 8.0])
    np.testing.assert_array_equal(nd.maximum(lhs=x, rhs=2).asnumpy(), [2.0, 2.0, 3.0])
    np.testing.assert_array_equal(nd.minimum(lhs=2, rhs=x).asnumpy(), [1.0, 2.0, 2.0])
    with pytest.raises(TypeError, match="lhs"):
        nd.power(lhs=x, rhs=2)  # type: ignore[call-arg]
    s = nv.sym.power(base=nv.sym.var("b"), exp=nv.sym.maximum(left=nv.sym.var("e"), right=1))
    out = s.eval(b=nd.array([2.0, 3.0]), e=nd.array([0.0, 2.0]))[0]
    np.testing.assert_array_equal(out.asnumpy(), [2.0, 9.0])


def test_in_place_operators_write_into_the_array() -> None:
    x = nd.ones((2, 3))
    alias = x[0]  # a view: sees the in-place writes
    x += 1
    x *= nd.array([1.0, 2.0, 3.0])  # broadcast into x's shape
    x -= nd.ones((2, 3))
    x /= 2
    want = ((np.ones((2, 3)) + 1) * [1, 2, 3] - 1) / 2
    np.testing.assert_allclose(x.asnumpy(), want)
    np.testing.assert_allclose(alias.asnumpy(), want[0])
    with pytest.raises(nv.NNVMError, match="does not fit"):
        x += nd.ones((3, 2, 3))
    with pytest.raises(TypeError, match="operand"):
        x += "a"


def test_unsupported_operands_raise_type_error() -> None:
    x = nd.ones(2)
    for bad in ("a", None, [1, 2]):
        with pytest.raises(TypeError, match=r"nd\.add"):
            x + bad
    with pytest.raises(TypeError):
        nd.equal("a", x)


def test_scalar_protocols() -> None:
    assert not bool(nd.array([]))
    assert not bool(nd.zeros((1,)))
    assert bool(nd.ones((1, 1)))
    with pytest.raises(ValueError, match="ambiguous"):
        bool(nd.ones((2, 3)))
    x = nd.array([2.5], dtype="float64")
    assert x.asscalar() == 2.5
    assert isinstance(x.asscalar(), np.float64)
    with pytest.raises(ValueError, match="not a scalar"):
        nd.ones((2,)).asscalar()
    assert len(nd.ones((4, 2))) == 4
    with pytest.raises(TypeError):
        len(nd.array(np.array(1.0)))
    assert repr(nd.ones((2, 3))).endswith("<NDArray 2x3 @cpu(0)>")
    assert nd.ones(2).stype == "default"


def test_astype_copyto_as_in_context() -> None:
    x = nd.array([1.7, -2.2])
    y = x.astype("int32")
    assert y is not x
    np.testing.assert_array_equal(y.asnumpy(), [1, -2])
    assert x.astype("float32", copy=False) is x
    assert x.astype(np.float32) is not x
    target = nd.zeros(2, dtype="float64")
    assert x.copyto(target) is target
    np.testing.assert_allclose(target.asnumpy(), x.asnumpy())
    with pytest.warns(RuntimeWarning, match="itself"):
        assert x.copyto(x) is False
    assert x.as_in_context(nv.cpu()) is x
    with pytest.raises(ValueError, match="shape"):
        x.copyto(nd.zeros(3))
    with pytest.raises(TypeError, match="copyto"):
        x.copyto("cpu")


@pytest.mark.parametrize(
    ("spec", "kwargs", "want"),
    [
        ((-1,), {}, (30,)),
        ((0, -1), {}, (2, 15)),
        ((-2,), {}, (2, 3, 5)),
        ((-3, -1), {}, (6, 5)),
        ((-1, 0), {}, (10, 3)),
        ((-1, 0), {"reverse": True}, (6, 5)),
        (((2, -4, 3, -1, 0),), {}, (2, 3, 1, 5)),
    ],
)
def test_reshape_special_values(spec: tuple, kwargs: dict, want: tuple) -> None:
    a = np.arange(30, dtype=np.float32).reshape(2, 3, 5)
    x = nd.array(a)
    y = x.reshape(*spec, **kwargs)
    assert y.shape == want
    np.testing.assert_array_equal(y.asnumpy(), a.reshape(want))
    y[:] = 0  # a view
    assert x.asnumpy().sum() == 0


def test_reshape_errors() -> None:
    x = nd.zeros((2, 3, 5))
    with pytest.raises(ValueError, match="reshape") as info:
        x.reshape((2, 3))
    assert isinstance(info.value, nv.NNVMError)
    with pytest.raises(ValueError):
        x.reshape(-1, -1)
    with pytest.raises(TypeError, match="unknown keyword"):
        x.reshape((30,), order="F")


def test_view_methods_with_inplace() -> None:
    a = np.arange(6, dtype=np.float32).reshape(2, 1, 3)
    x = nd.array(a)
    for copy, view, want in [
        (x.flatten(), x.flatten(inplace=True), a.reshape(2, 3)),
        (x.expand_dims(0), x.expand_dims(-1, inplace=True), None),
        (x.squeeze(), x.squeeze(inplace=True), a.reshape(2, 3)),
    ]:
        if want is not None:
            np.testing.assert_array_equal(copy.asnumpy(), want)
            np.testing.assert_array_equal(view.asnumpy(), want)
    v = x.squeeze(axis=1, inplace=True)
    v[0] = -1
    assert x.asnumpy()[0].sum() == -3
    with pytest.raises(ValueError, match="squeeze"):
        x.squeeze(axis=0, inplace=True)
    with pytest.raises(ValueError, match="expand_dims"):
        x.expand_dims(5, inplace=True)


def test_broadcast_to_and_like() -> None:
    a = np.arange(3, dtype=np.float32).reshape(1, 3, 1)
    x = nd.array(a)
    np.testing.assert_array_equal(
        x.broadcast_to((2, 3, 4)).asnumpy(), np.broadcast_to(a, (2, 3, 4))
    )
    np.testing.assert_array_equal(
        x.broadcast_to((5, 1, 3, 2)).asnumpy(), np.broadcast_to(a, (5, 1, 3, 2))
    )
    np.testing.assert_array_equal(x.broadcast_like(nd.zeros((2, 3, 2))).shape, (2, 3, 2))
    with pytest.raises(ValueError, match="broadcast"):
        x.broadcast_to((2, 2, 4))
    with pytest.raises(ValueError, match="broadcast"):
        x.broadcast_to((3,))
    assert nd.ones((3,)).T.shape == (3,)
    assert nd.ones((2, 3)).T.shape == (3, 2)


def test_slice_assign_writes_in_place_and_returns_self() -> None:
    x = nv.nd.ones((2, 3, 4))
    rhs = np.arange(6, dtype=np.float32).reshape(1, 3, 2)
    y = x.slice_assign(nv.nd.array(rhs), (1, 0, None), (2, None, 4), (None, None, 2))
    want = np.ones((2, 3, 4), np.float32)
    want[1:2, 0:, 0:4:2] = rhs
    assert y is x
    np.testing.assert_array_equal(x.asnumpy(), want)


def test_slice_assign_scalar_casts_to_the_dtype() -> None:
    x = nv.nd.zeros((3, 4), dtype="int32")
    y = x.slice_assign_scalar(7.9, (None, 1), (2, None), (None, None))
    want = np.zeros((3, 4), np.int32)
    want[:2, 1:] = 7
    assert y is x
    np.testing.assert_array_equal(x.asnumpy(), want)
