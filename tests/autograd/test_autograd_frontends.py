"""autograd.Function, and ops from the CustomOp, SimpleOp and legacy OperatorProperty
front-ends differentiated under autograd (their backward comes from their attributes)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy.base import NNVMError
from nnvmpy.operator import CustomOp, CustomOpProp, register

nd, ag = nv.nd, nv.autograd
RNG = np.random.default_rng(23)
ROOT = Path(__file__).resolve().parents[2]


# -- autograd.Function ---------------------------------------------------------------------------


class DivMul(ag.Function):
    def forward(self, x, y):  # type: ignore[no-untyped-def]
        self.save_for_backward(x, y)
        return x / y, x * y

    def backward(self, dm, dn):  # type: ignore[no-untyped-def]
        x, y = self.saved_tensors
        return dm / y + dn * y, dn * x - dm * x / y / y


def test_function_backward_matches_the_same_ops_recorded() -> None:
    x, y = nd.array(RNG.uniform(0.5, 2, 6)), nd.array(RNG.uniform(0.5, 2, 6))
    x.attach_grad()
    y.attach_grad()
    with ag.record():
        m, n = DivMul()(x, y)
    ag.backward([m, n])
    dx, dy = x.grad.asnumpy(), y.grad.asnumpy()
    xn, yn = x.asnumpy(), y.asnumpy()
    np.testing.assert_allclose(m.asnumpy(), xn / yn, rtol=1e-6)
    np.testing.assert_allclose(dx, 1 / yn + yn, rtol=1e-5)
    np.testing.assert_allclose(dy, xn - xn / yn**2, rtol=1e-5)


class Sigmoid(ag.Function):
    def forward(self, x):  # type: ignore[no-untyped-def]
        y = 1 / (1 + nd.exp(-x))
        self.save_for_backward(y)
        return y

    def backward(self, dy):  # type: ignore[no-untyped-def]
        (y,) = self.saved_tensors
        return dy * y * (1 - y)


def test_function_in_a_chain_with_grad_req_add() -> None:
    x = nd.array(RNG.uniform(-2, 2, 5))
    x.attach_grad(grad_req="add")
    for _ in range(2):
        with ag.record():
            z = Sigmoid()(x * 2) * 3
        z.backward()
    s = 1 / (1 + np.exp(-2 * x.asnumpy()))
    np.testing.assert_allclose(x.grad.asnumpy(), 2 * 6 * s * (1 - s), rtol=1e-5)


def test_function_outside_record_just_runs_forward_and_is_called_once() -> None:
    f = Sigmoid()
    y = f(nd.zeros((2,)))
    np.testing.assert_allclose(y.asnumpy(), 0.5)
    with pytest.raises(NNVMError, match="only once"):
        f(nd.zeros((2,)))


class BadBackward(ag.Function):
    def forward(self, x):  # type: ignore[no-untyped-def]
        return x * 2

    def backward(self, dy):  # type: ignore[no-untyped-def]
        return dy, dy


def test_function_backward_returning_the_wrong_count_is_an_error() -> None:
    x = nd.ones((2,))
    x.attach_grad()
    with ag.record():
        y = BadBackward()(x)
    with pytest.raises(NNVMError, match=r"BadBackward.*one NDArray per forward input"):
        y.backward()


# -- CustomOp ------------------------------------------------------------------------------------


class Cube(CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):  # type: ignore[no-untyped-def]
        self.assign(out_data[0], req[0], in_data[0] * in_data[0] * in_data[0])

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):  # type: ignore[no-untyped-def]
        x = in_data[0]
        self.assign(in_grad[0], req[0], out_grad[0] * x * x * 3.0)


@register("ag_cube")
class CubeProp(CustomOpProp):
    def declare_backward_dependency(self, out_grad, in_data, out_data):  # type: ignore[no-untyped-def]
        return [out_grad[0], in_data[0]]

    def create_operator(self, ctx, shapes, dtypes):  # type: ignore[no-untyped-def]
        return Cube()


def test_custom_op_is_differentiable_under_autograd() -> None:
    x = nd.array(RNG.uniform(-1, 1, (3, 4)))
    x.attach_grad()
    with ag.record():
        y = nd.Custom(x, op_type="ag_cube") * 2
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), 6 * x.asnumpy() ** 2, rtol=1e-5)


# -- SimpleOp ------------------------------------------------------------------------------------


def test_simple_op_is_differentiable_under_autograd(scoped_registry: None) -> None:
    sys.path.insert(0, str(ROOT / "tests"))
    try:
        from test_simple_op import register_smooth_l1, smooth_l1_reference
    finally:
        sys.path.pop(0)
    register_smooth_l1(nv.cpu)
    xn = RNG.uniform(-2, 2, (4, 5))
    x = nd.array(xn)
    x.attach_grad()
    with ag.record():
        y = nd.simple_smooth_l1(x, scalar=1.0)
    np.testing.assert_allclose(y.asnumpy(), smooth_l1_reference(xn, 1.0), rtol=1e-5)
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), np.clip(xn, -1, 1), rtol=1e-5)


# -- legacy OperatorProperty ----------------------------------------------------------------------


def _legacy_fc() -> Any:
    sys.path.insert(0, str(ROOT / "examples"))
    try:
        import legacy_fully_connected as example
    finally:
        sys.path.pop(0)
    return example


def test_legacy_operator_property_is_differentiable_under_autograd(scoped_registry: None) -> None:
    example = _legacy_fc()
    nv.operator.register_op_property(
        "ag_legacy_fc", example.FullyConnectedProp, example.FullyConnectedParam
    )
    x, w, b = RNG.uniform(-1, 1, (4, 3)), RNG.uniform(-1, 1, (2, 3)), RNG.uniform(-1, 1, 2)
    arrays = [nd.array(v) for v in (x, w, b)]
    for a in arrays:
        a.attach_grad()
    dy = RNG.uniform(-1, 1, (4, 2))
    with ag.record():
        y = nd.ag_legacy_fc(*arrays, num_hidden=2)
    np.testing.assert_allclose(y.asnumpy(), x @ w.T + b, rtol=1e-5)
    y.backward(nd.array(dy))
    np.testing.assert_allclose(arrays[0].grad.asnumpy(), dy @ w, rtol=1e-5)
    np.testing.assert_allclose(arrays[1].grad.asnumpy(), dy.T @ x, rtol=1e-5)
    np.testing.assert_allclose(arrays[2].grad.asnumpy(), dy.sum(0), rtol=1e-5)


class Cubed(ag.Function):
    def forward(self, x):  # type: ignore[no-untyped-def]
        self.save_for_backward(x)
        return x * x * x

    def backward(self, dy):  # type: ignore[no-untyped-def]
        (x,) = self.saved_tensors
        return dy * x * x * 3.0


def test_function_backward_is_recorded_under_create_graph() -> None:
    """The ops Function.backward calls are recorded, so its gradient has a gradient."""
    x = nd.array(RNG.uniform(0.5, 1.5, 4))
    x.attach_grad()
    with ag.record():
        y = Cubed()(x)
        (dx,) = ag.grad(y, [x], create_graph=True)
    np.testing.assert_allclose(dx.asnumpy(), 3 * x.asnumpy() ** 2, rtol=1e-5)
    dx.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), 6 * x.asnumpy(), rtol=1e-5)
