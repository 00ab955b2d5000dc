"""Gradients of any order for unary math: the second-order ops differentiate again.

Each op's n-th derivative comes from n nested autograd.grad(create_graph=True) calls and
is checked against its closed form (written out by hand below), with random head
gradients that multiply in, as MXNet's test_higher_order_grad checks them."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest

from nnvmpy import autograd as ag
from nnvmpy import nd

Fn = Callable[[np.ndarray], np.ndarray]


def _sigmoid_3rd(x: np.ndarray) -> np.ndarray:
    s = 1 / (1 + np.exp(-x))
    return s * (1 - s) * (1 - 6 * s + 6 * s**2)


def _sigmoid_4th(x: np.ndarray) -> np.ndarray:
    s = 1 / (1 + np.exp(-x))
    return s * (1 - s) * (1 - 2 * s) * (1 - 12 * s + 12 * s**2)


def _tan_3rd(x: np.ndarray) -> np.ndarray:
    t = np.tan(x)
    return 2 * (1 + t**2) * (1 + 3 * t**2)


def _tan_4th(x: np.ndarray) -> np.ndarray:
    t = np.tan(x)
    return 8 * t * (1 + t**2) * (2 + 3 * t**2)


# (op, third derivative, fourth derivative, domain)
DERIVATIVES: list[tuple[str, Fn, Fn, tuple[float, float]]] = [
    ("sin", lambda x: -np.cos(x), np.sin, (-3.0, 3.0)),
    ("cos", np.sin, np.cos, (-3.0, 3.0)),
    ("sinh", np.cosh, np.sinh, (-2.0, 2.0)),
    ("cosh", np.sinh, np.cosh, (-2.0, 2.0)),
    ("exp", np.exp, np.exp, (-2.0, 2.0)),
    ("expm1", np.exp, np.exp, (-2.0, 2.0)),
    ("square", np.zeros_like, np.zeros_like, (-2.0, 2.0)),
    ("log", lambda x: 2 / x**3, lambda x: -6 / x**4, (0.5, 2.0)),
    ("log2", lambda x: 2 / (x**3 * math.log(2)), lambda x: -6 / (x**4 * math.log(2)), (0.5, 2.0)),
    (
        "log10",
        lambda x: 2 / (x**3 * math.log(10)),
        lambda x: -6 / (x**4 * math.log(10)),
        (0.5, 2.0),
    ),
    ("log1p", lambda x: 2 / (1 + x) ** 3, lambda x: -6 / (1 + x) ** 4, (-0.5, 2.0)),
    ("reciprocal", lambda x: -6 / x**4, lambda x: 24 / x**5, (0.5, 2.0)),
    ("sqrt", lambda x: 3 / 8 * x**-2.5, lambda x: -15 / 16 * x**-3.5, (0.5, 2.0)),
    ("rsqrt", lambda x: -15 / 8 * x**-3.5, lambda x: 105 / 16 * x**-4.5, (0.5, 2.0)),
    ("rcbrt", lambda x: -28 / 27 * x ** (-10 / 3), lambda x: 280 / 81 * x ** (-13 / 3), (0.5, 2.0)),
    ("cbrt", lambda x: 10 / 27 * x ** (-8 / 3), lambda x: -80 / 81 * x ** (-11 / 3), (0.5, 2.0)),
    (
        "tanh",
        lambda x: -2 / np.cosh(x) ** 2 * (1 - 3 * np.tanh(x) ** 2),
        lambda x: 8 * np.tanh(x) / np.cosh(x) ** 2 * (2 - 3 * np.tanh(x) ** 2),
        (-1.5, 1.5),
    ),
    ("sigmoid", _sigmoid_3rd, _sigmoid_4th, (-2.0, 2.0)),
    ("tan", _tan_3rd, _tan_4th, (-1.0, 1.0)),
]


def nth_gradients(name: str, x_np: np.ndarray, order: int, seed: int = 0) -> list[np.ndarray]:
    """The 1st..order-th gradients of nd.<name>, each divided by its head gradients."""
    rng = np.random.default_rng(seed)
    x = nd.array(x_np, dtype=np.float64)
    x.attach_grad()
    out, heads = [], np.ones_like(x_np)
    with ag.record():
        y = getattr(nd, name)(x)
        for _ in range(order):
            head = rng.uniform(0.5, 1.5, size=x_np.shape)
            heads = heads * head
            (y,) = ag.grad(y, [x], head_grads=nd.array(head, dtype=np.float64), create_graph=True)
            out.append(y.asnumpy() / heads)
    return out


@pytest.mark.parametrize(
    ("name", "third", "fourth", "domain"), DERIVATIVES, ids=[d[0] for d in DERIVATIVES]
)
def test_third_and_fourth_derivative(
    name: str, third: Fn, fourth: Fn, domain: tuple[float, float]
) -> None:
    x_np = np.random.default_rng(1).uniform(*domain, size=(2, 3))
    grads = nth_gradients(name, x_np, 4)
    np.testing.assert_allclose(grads[2], third(x_np), rtol=1e-9, atol=1e-12, err_msg="3rd")
    np.testing.assert_allclose(grads[3], fourth(x_np), rtol=1e-9, atol=1e-12, err_msg="4th")


def test_sixth_derivative_of_sin_cycles_back() -> None:
    # sin -> cos -> -sin -> -cos -> sin -> cos -> -sin: the rule composes without end
    x_np = np.linspace(-2.0, 2.0, 7)
    grads = nth_gradients("sin", x_np, 6)
    np.testing.assert_allclose(grads[5], -np.sin(x_np), rtol=1e-12, atol=1e-12)


def test_third_order_backward_writes_the_variable_gradient() -> None:
    # backward() on a second-order gradient: x.grad is h1 * h2 * ograd * f'''(x)
    rng = np.random.default_rng(2)
    x_np = rng.uniform(-2, 2, size=(4,))
    h1, h2, og = (rng.uniform(0.5, 1.5, size=(4,)) for _ in range(3))
    x = nd.array(x_np, dtype=np.float64)
    x.attach_grad()
    with ag.record():
        y = nd.cos(x)
        (g1,) = ag.grad(y, [x], head_grads=nd.array(h1, dtype=np.float64), create_graph=True)
        (g2,) = ag.grad(g1, [x], head_grads=nd.array(h2, dtype=np.float64), create_graph=True)
    g2.backward(nd.array(og, dtype=np.float64))
    np.testing.assert_allclose(x.grad.asnumpy(), h1 * h2 * og * np.sin(x_np), rtol=1e-12)


def test_third_order_gradient_reaches_the_head_gradient_too() -> None:
    # the second-order op is linear in both head gradients: d/dh1 of sum(h2 * g2) is
    # h2 * f''(x), differentiated through the second-order op's first input
    rng = np.random.default_rng(4)
    x_np = rng.uniform(-2, 2, size=(5,))
    h2 = rng.uniform(0.5, 1.5, size=(5,))
    x = nd.array(x_np, dtype=np.float64)
    h1 = nd.array(rng.uniform(0.5, 1.5, size=(5,)), dtype=np.float64)
    x.attach_grad()
    h1.attach_grad()
    with ag.record():
        y = nd.sin(x)
        (g1,) = ag.grad(y, [x], head_grads=h1, create_graph=True)
        (g2,) = ag.grad(g1, [x], head_grads=nd.array(h2, dtype=np.float64), create_graph=True)
        (dh1,) = ag.grad(g2, [h1], create_graph=True)
    np.testing.assert_allclose(dh1.asnumpy(), -h2 * np.sin(x_np), rtol=1e-12)
