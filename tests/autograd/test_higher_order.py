"""Gradients of gradients (autograd.grad(create_graph=True)), checked against central
finite differences of the first gradient, which autograd computes without create_graph."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy.attrs import FGradient
from nnvmpy.registry import Op

nd, ag = nv.nd, nv.autograd
Fn = Callable[..., Any]


def first_gradient(fn: Fn, xs: list[np.ndarray], i: int, head: np.ndarray) -> np.ndarray:
    """d/dx_i of sum(head * fn(xs)), by autograd (no create_graph)."""
    arrays = [nd.array(x, dtype=np.float64) for x in xs]
    arrays[i].attach_grad()
    with ag.record():
        y = fn(*arrays)
    y.backward(nd.array(head, dtype=np.float64))
    return arrays[i].grad.asnumpy()


def check_second_order(fn: Fn, xs: list[np.ndarray], i: int, seed: int = 0) -> None:
    """d/dx_j of sum(v * d/dx_i sum(head * fn)) for every j, against finite differences."""
    rng = np.random.default_rng(seed)
    arrays = [nd.array(x, dtype=np.float64) for x in xs]
    for a in arrays:
        a.attach_grad()
    with ag.record():
        y = fn(*arrays)
    head = rng.uniform(0.5, 1.5, size=y.shape)
    v = rng.uniform(0.5, 1.5, size=xs[i].shape)
    with ag.record():
        g = ag.grad(y, [arrays[i]], head_grads=nd.array(head, dtype=np.float64), create_graph=True)[
            0
        ]
    np.testing.assert_allclose(g.asnumpy(), first_gradient(fn, xs, i, head), rtol=1e-10)
    g.backward(nd.array(v, dtype=np.float64))
    eps = 1e-6
    for j, x in enumerate(xs):
        want = np.zeros_like(x)
        for k in np.ndindex(x.shape):
            plus, minus = [a.copy() for a in xs], [a.copy() for a in xs]
            plus[j][k] += eps
            minus[j][k] -= eps
            fp = np.sum(v * first_gradient(fn, plus, i, head))
            fm = np.sum(v * first_gradient(fn, minus, i, head))
            want[k] = (fp - fm) / (2 * eps)
        np.testing.assert_allclose(
            arrays[j].grad.asnumpy(), want, rtol=1e-5, atol=1e-7, err_msg=f"d/dx{j}"
        )


RNG = np.random.default_rng(3)


def u(*shape: int, low: float = -1.0, high: float = 1.0) -> np.ndarray:
    return RNG.uniform(low, high, size=shape)


@pytest.mark.parametrize("ta", [False, True])
@pytest.mark.parametrize("tb", [False, True])
@pytest.mark.parametrize("i", [0, 1])
def test_dot(ta: bool, tb: bool, i: int) -> None:
    a = u(3, 2) if ta else u(2, 3)
    b = u(4, 3) if tb else u(3, 4)
    check_second_order(lambda x, y: nd.dot(x, y, transpose_a=ta, transpose_b=tb), [a, b], i)


def test_dot_of_nd_arrays() -> None:
    check_second_order(lambda x, y: nd.dot(x, y), [u(2, 2, 3), u(3, 2)], 0)


@pytest.mark.parametrize("i", [0, 1])
def test_batch_dot(i: int) -> None:
    check_second_order(
        lambda x, y: nd.batch_dot(x, y, transpose_b=True), [u(2, 2, 3), u(2, 4, 3)], i
    )


@pytest.mark.parametrize("no_bias", [False, True])
@pytest.mark.parametrize("i", [0, 1])
def test_fully_connected(no_bias: bool, i: int) -> None:
    xs = [u(3, 2, 2), u(4, 4)] + ([] if no_bias else [u(4)])
    check_second_order(lambda *a: nd.FullyConnected(*a, num_hidden=4, no_bias=no_bias), xs, i)


def test_fully_connected_without_flatten() -> None:
    check_second_order(
        lambda *a: nd.FullyConnected(*a, num_hidden=3, flatten=False),
        [u(2, 2, 4), u(3, 4), u(3)],
        1,
    )


@pytest.mark.parametrize("op", ["broadcast_add", "broadcast_sub", "broadcast_mul"])
@pytest.mark.parametrize("i", [0, 1])
def test_broadcast_binary(op: str, i: int) -> None:
    # nonlinear around the op, so that the second derivative is not zero
    f = getattr(nd, op)
    check_second_order(
        lambda x, y: nd.dot(f(x, y), f(x, y), transpose_b=True), [u(3, 1), u(1, 4)], i
    )


def test_broadcast_to() -> None:
    check_second_order(
        lambda x: nd.dot(
            nd.broadcast_to(x, shape=(3, 4)), nd.broadcast_to(x, shape=(3, 4)), transpose_b=True
        ),
        [u(3, 1)],
        0,
    )


def test_the_mxnet_example_exp_plus_x() -> None:
    if not Op.get("_backward_exp").has_attr(FGradient):
        pytest.skip("_backward_exp has no FGradient yet (elemwise_unary.py)")
    x = nd.ones((1,))
    x.attach_grad()
    with ag.record():
        z = nd.elemwise_add(nd.exp(x), x)
    (dx,) = ag.grad(z, [x], create_graph=True)
    np.testing.assert_allclose(dx.asnumpy(), np.e + 1, rtol=1e-6)
    dx.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), np.e, rtol=1e-6)


UNARY = [
    "sin",
    "cos",
    "tan",
    "log",
    "log2",
    "log10",
    "exp",
    "sigmoid",
    "tanh",
    "relu",
    "reciprocal",
    "abs",
    "arcsin",
    "arctan",
    "sqrt",
    "square",
    "rsqrt",
    "expm1",
    "log1p",
]


@pytest.mark.parametrize("name", UNARY)
def test_unary_math(name: str) -> None:
    if name not in Op.list_op_names():
        pytest.skip(f"{name} is not registered")
    backward = Op.get(name).get_attr(FGradient)
    if backward is None:
        pytest.skip(f"{name} has no FGradient")
    bwd_ops = [o for o in (f"_backward_{name}",) if o in Op.list_op_names()]
    if not bwd_ops or not Op.get(bwd_ops[0]).has_attr(FGradient):
        pytest.skip(f"_backward_{name} has no FGradient yet (elemwise_unary.py)")
    f = getattr(nd, name)
    check_second_order(f, [u(2, 3, low=0.2, high=0.8)], 0)


def test_third_order_through_dot() -> None:
    """grad of grad of grad: d^3/dx^3 of sum((x w)^2 ...) stays on the tape each time."""
    w = nd.array(u(3, 3), dtype=np.float64)
    x = nd.array(u(2, 3), dtype=np.float64)
    x.attach_grad()
    with ag.record():
        h = nd.dot(x, w)
        y = nd.dot(h, h, transpose_b=True)  # quadratic in x
        (g1,) = ag.grad(y, [x], create_graph=True)
        (g2,) = ag.grad(g1, [x], create_graph=True)  # constant in x
    g2.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), 0, atol=1e-12)
    # g2 = d/dx sum(g1) for a quadratic: the same as the analytic 2 * (1 1^T) x-independent term
    ones = np.ones((2, 2))
    wn = w.asnumpy()
    want = (ones + ones.T) @ np.ones((2, 3)) @ (wn @ wn.T)
    np.testing.assert_allclose(g2.asnumpy(), want, rtol=1e-10)
