"""Symbol operators and MXNet's two-way functions (maximum, minimum, pow, power, hypot) and
creation functions (zeros, ones, full, arange, linspace, eye), against NumPy."""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import nnvmpy as nv

sym = nv.sym
RNG = np.random.default_rng(7)
A = RNG.uniform(0.5, 2.0, (3, 4))
B = RNG.uniform(0.5, 2.0, (3, 4))
B[0, :2] = A[0, :2]  # ties, so == and >= see both outcomes


def _run(s: nv.sym.Symbol, **arrays: np.ndarray) -> np.ndarray:
    nd = {k: nv.nd.array(v, dtype="float64") for k, v in arrays.items()}
    return s.eval(nv.cpu(), **nd)[0].asnumpy()


BINARY: list[tuple[str, Callable[[Any, Any], Any]]] = [
    ("add", operator.add),
    ("sub", operator.sub),
    ("mul", operator.mul),
    ("truediv", operator.truediv),
    ("mod", operator.mod),
    ("pow", operator.pow),
    ("eq", operator.eq),
    ("ne", operator.ne),
    ("gt", operator.gt),
    ("ge", operator.ge),
    ("lt", operator.lt),
    ("le", operator.le),
]


@pytest.mark.parametrize(("name", "fn"), BINARY, ids=[b[0] for b in BINARY])
def test_operators_between_symbols_match_numpy(name: str, fn: Callable[[Any, Any], Any]) -> None:
    a, b = sym.var("a"), sym.var("b")
    got = _run(fn(a, b), a=A, b=B)
    np.testing.assert_allclose(got, np.asarray(fn(A, B), dtype=np.float64), rtol=1e-12)


@pytest.mark.parametrize(("name", "fn"), BINARY, ids=[b[0] for b in BINARY])
def test_operators_with_a_number_on_either_side_match_numpy(
    name: str, fn: Callable[[Any, Any], Any]
) -> None:
    a = sym.var("a")
    scalar = 1.5
    np.testing.assert_allclose(
        _run(fn(a, scalar), a=A), np.asarray(fn(A, scalar), float), rtol=1e-12
    )
    reflected = fn(scalar, a)  # Python swaps comparisons: 1.5 < a is a > 1.5
    np.testing.assert_allclose(_run(reflected, a=A), np.asarray(fn(scalar, A), float), rtol=1e-12)


def test_unary_operators() -> None:
    a = sym.var("a")
    x = A - 1.0
    np.testing.assert_allclose(_run(-a, a=x), -x)
    np.testing.assert_allclose(_run(abs(a), a=x), np.abs(x))


def test_operator_nodes_are_named_as_mxnet_names_them() -> None:
    with nv.name.NameManager():
        a, b = sym.var("a"), sym.var("b")
        names = [(a + b).name, (a + 1).name, (1 - a).name, (a * b).name, (a / 2).name,
                 (2 / a).name, (a**2).name, (2**a).name, (a % b).name, (a == b).name,
                 (a < 1).name, (-a).name, (a + b).name]  # fmt: skip
    assert names == [
        "_plus0", "_plusscalar0", "_rminusscalar0", "_mul0", "_divscalar0", "_rdivscalar0",
        "_powerscalar0", "_rpowerscalar0", "_mod0", "_equal0", "_lesser_scalar0",
        "_mulscalar0", "_plus1",
    ]  # fmt: skip


def test_operands_that_are_not_numbers_or_symbols_raise_type_errors() -> None:
    a = sym.var("a")
    for bad in ("x", [1, 2], None, np.ones(2), True):
        with pytest.raises(TypeError):
            a + bad
    with pytest.raises(nv.NNVMError, match="__pow__ does not support operands of type str"):
        a ** "2"


TWO_WAY: list[tuple[str, Callable[[Any, Any], Any]]] = [
    ("maximum", np.maximum),
    ("minimum", np.minimum),
    ("pow", np.power),
    ("power", np.power),
    ("hypot", np.hypot),
]


@pytest.mark.parametrize(("name", "ref"), TWO_WAY, ids=[t[0] for t in TWO_WAY])
def test_two_way_functions_take_any_mix_of_symbols_and_numbers(
    name: str, ref: Callable[[Any, Any], Any]
) -> None:
    fn = getattr(sym, name)
    a, b = sym.var("a"), sym.var("b")
    np.testing.assert_allclose(_run(fn(a, b), a=A, b=B), ref(A, B), rtol=1e-12)
    np.testing.assert_allclose(_run(fn(a, 1.25), a=A), ref(A, 1.25), rtol=1e-12)
    np.testing.assert_allclose(_run(fn(1.25, a), a=A), ref(1.25, A), rtol=1e-12)
    assert fn(2.0, 3.0) == pytest.approx(float(ref(2.0, 3.0)))
    with pytest.raises(TypeError):
        fn(a, "x")


def test_maximum_and_minimum_gradients_route_dy_as_mxnet() -> None:
    a, b = sym.var("a"), sym.var("b")
    out = sym.Group([sym.maximum(a, b), sym.minimum(a, b)])
    exe = out.simple_bind(
        nv.cpu(), type_dict={"a": np.float64, "b": np.float64}, a=A.shape, b=B.shape
    )
    exe.forward(is_train=True, a=A, b=B)
    exe.backward([nv.nd.ones(A.shape, dtype="float64"), nv.nd.ones(A.shape, dtype="float64")])
    ga, gb = exe.grad_dict["a"].asnumpy(), exe.grad_dict["b"].asnumpy()
    # max: dy to a where a >= b; min: dy to a where a <= b (ties count for both)
    np.testing.assert_array_equal(ga, (A >= B).astype(float) + (A <= B).astype(float))
    np.testing.assert_array_equal(gb, (B > A).astype(float) + (B < A).astype(float))


def test_creation_functions_fill_float32_by_default() -> None:
    zeros, ones = sym.zeros((2, 3)), sym.ones((2, 3), dtype="float64")
    full = sym.full((2, 2), 7)
    assert zeros.infer_type()[1] == [np.float32]
    assert ones.infer_type()[1] == [np.float64]
    np.testing.assert_array_equal(zeros.eval(nv.cpu())[0].asnumpy(), np.zeros((2, 3)))
    np.testing.assert_array_equal(ones.eval(nv.cpu())[0].asnumpy(), np.ones((2, 3)))
    np.testing.assert_array_equal(full.eval(nv.cpu())[0].asnumpy(), np.full((2, 2), 7.0))
    got = sym.arange(1, 7, step=2, repeat=2, name="r").eval(nv.cpu())[0].asnumpy()
    np.testing.assert_array_equal(got, np.repeat(np.arange(1, 7, 2), 2))
    lin = sym.linspace(0, 1, 5).eval(nv.cpu())[0].asnumpy()
    np.testing.assert_allclose(lin, np.linspace(0, 1, 5), rtol=1e-6)
    np.testing.assert_array_equal(sym.eye(3, k=1).eval(nv.cpu())[0].asnumpy(), np.eye(3, k=1))
    assert sym.zeros((1,)).name.startswith("_zeros")


def test_symbols_compose_with_creation_functions() -> None:
    a = sym.var("a")
    out = sym.broadcast_add(a, sym.ones((1, 4), dtype="float64"))
    np.testing.assert_allclose(_run(out, a=A), A + 1)


def test_init_ops_leave_minus_one_dims_to_the_graph() -> None:
    """sym.ones(shape=(-1, -1)) takes its shape from what it is combined with, forwards
    (from the other operand) and backwards through transpose, as MXNet infers it."""
    known = nv.sym.ones(shape=(2, 3))
    for unknown in [nv.sym.ones(shape=(-1, -1)), nv.sym.ones(shape=(3, -1))]:
        exe = (known + nv.sym.transpose(unknown)).bind(nv.cpu(), args={})
        np.testing.assert_array_equal(exe.forward()[0].asnumpy(), np.full((2, 3), 2.0))
    with pytest.raises(nv.InferError, match="_ones"):
        nv.nd._internal._ones(shape=(-1, 2))  # imperatively nothing can fill it in


@pytest.mark.parametrize("parts", [(3, 7), (2,), 4, (1, 11)])
def test_split_v2_matches_numpy_split(parts: Any) -> None:
    data = np.arange(24.0).reshape(2, 12)
    s = nv.sym.split_v2(nv.sym.Variable("data"), parts, axis=1)
    exe = s.simple_bind(nv.cpu(), data=data.shape)
    exe.arg_dict["data"][:] = data
    want = np.split(data, parts, axis=1)
    got = exe.forward()
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g.asnumpy(), w)


def test_split_v2_bad_sections_are_named_errors() -> None:
    with pytest.raises(nv.InferError, match="12 cannot be split into 5"):
        nv.sym.split_v2(nv.sym.Variable("d"), 5, axis=1).infer_shape(d=(2, 12))
    with pytest.raises(nv.NNVMError, match="indices_or_sections must be"):
        nv.sym.split_v2(nv.sym.Variable("d"), "3")


def test_init_ops_refuse_dims_below_minus_one_by_name() -> None:
    """A fuzz finding: shape=(-3, -4) has a positive size and reached NumPy's ValueError."""
    for shape in [(-3, -4), (-2, 3)]:
        with pytest.raises(nv.InferError, match=r"_zeros: shape .* negative dimension"):
            nv.nd._internal._zeros(shape=shape)
        with pytest.raises(nv.InferError, match=r"negative dimension"):
            nv.sym.zeros(shape=shape).infer_shape()
