"""MXNet 1.x's higher-order gradient conventions (its test_higher_order_grad.py pattern):
autograd.grad's return type and gradients of gradients through Dropout, checked against
NumPy formulas."""

from __future__ import annotations

import numpy as np

from nnvmpy import autograd as ag
from nnvmpy import nd


def test_grad_of_a_single_variable_is_a_one_element_list() -> None:
    # MXNet 1.x rebinds `variables` to a list before its `return ret[0]` check, so
    # grad(y, x) is always a list; code written for it indexes the result with [0]
    x_np = np.array([0.5, -1.0, 2.0, 3.0, -0.25, 1.5, 0.75], dtype=np.float32)
    x = nd.array(x_np)
    x.attach_grad()
    with ag.record():
        y = nd.sin(x)
        dx = ag.grad(y, x, retain_graph=True)
    assert isinstance(dx, list)
    assert len(dx) == 1
    assert dx[0].shape == x.shape
    np.testing.assert_allclose(dx[0].asnumpy(), np.cos(x_np), rtol=1e-6)


def test_second_order_with_head_gradients_as_mxnet_checks_it() -> None:
    rng = np.random.default_rng(3)
    x_np = rng.uniform(0.5, 2.0, (3, 4)).astype(np.float32)
    h1 = rng.standard_normal((3, 4)).astype(np.float32)
    h2 = rng.standard_normal((3, 4)).astype(np.float32)
    x = nd.array(x_np)
    x.attach_grad()
    with ag.record():
        y = nd.log(x)
        g1 = ag.grad(heads=y, variables=x, head_grads=nd.array(h1), create_graph=True)[0]
        g2 = ag.grad(heads=g1, variables=x, head_grads=nd.array(h2), create_graph=True)[0]
    np.testing.assert_allclose(g1.asnumpy(), h1 / x_np, rtol=1e-5)
    np.testing.assert_allclose(g2.asnumpy(), -h1 * h2 / x_np**2, rtol=1e-5)


def test_dropout_is_differentiable_twice() -> None:
    # dx = dy * mask: linear in dy, piecewise constant in x, so d(dx)/dx is zero and
    # d(dx)/d(dy) masks the incoming gradient the same way
    x_np = np.arange(1, 41, dtype=np.float32)
    x = nd.array(x_np)
    hg = nd.full((40,), 2.0)
    x.attach_grad()
    hg.attach_grad()
    with ag.record():
        y = nd.Dropout(x, p=0.5)
        g = ag.grad(y, [x], head_grads=hg, create_graph=True, retain_graph=True)[0]
    mask = y.asnumpy() / x_np  # 0 or 1/(1-p) per element
    assert set(np.unique(mask)) <= {0.0, 2.0}
    np.testing.assert_allclose(g.asnumpy(), 2.0 * mask)
    g.backward(nd.full((40,), 3.0))
    np.testing.assert_array_equal(x.grad.asnumpy(), np.zeros(40, dtype=np.float32))
    np.testing.assert_allclose(hg.grad.asnumpy(), 3.0 * mask)
