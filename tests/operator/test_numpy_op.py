"""nv.operator.NumpyOp: MXNet's deprecated NumPy-level Python op, run through Custom."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import nnvmpy as nv


class WeightedSum(nv.operator.NumpyOp):
    """out = a * x + y; two inputs, one output, its own names and shapes."""

    def __init__(self, a: float) -> None:
        super().__init__(need_top_grad=True)
        self.a = a

    def list_arguments(self) -> list[str]:
        return ["x", "y"]

    def list_outputs(self) -> list[str]:
        return ["sum"]

    def infer_shape(self, in_shape: list[Any]) -> tuple[list[Any], list[Any]]:
        return [in_shape[0], in_shape[0]], [in_shape[0]]

    def forward(self, in_data: list[np.ndarray], out_data: list[np.ndarray]) -> None:
        out_data[0][:] = self.a * in_data[0] + in_data[1]

    def backward(self, out_grad: Any, in_data: Any, out_data: Any, in_grad: Any) -> None:
        in_grad[0][:] = self.a * out_grad[0]
        in_grad[1][:] = out_grad[0]


def test_the_base_class_is_the_identity_forward_and_backward() -> None:
    s = nv.operator.NumpyOp().get_symbol(nv.sym.Variable("X"), name="numpy_op")
    x, dx = nv.nd.ones((10,)) * 10, nv.nd.zeros((10,))
    exe = s.bind(nv.cpu(), args=[x], args_grad={"X": dx})
    np.testing.assert_array_equal(exe.forward(is_train=True)[0].asnumpy(), np.full(10, 10.0))
    exe.backward(nv.nd.array(np.arange(10.0)))
    np.testing.assert_array_equal(dx.asnumpy(), np.arange(10.0))


def test_a_subclass_with_two_inputs_matches_numpy() -> None:
    rng = np.random.default_rng(0)
    x, y, dy = (rng.normal(size=(3, 4)) for _ in range(3))
    op = WeightedSum(2.5)
    s = op.get_symbol(nv.sym.Variable("p"), nv.sym.Variable("q"), name="ws")
    assert s.list_arguments() == ["p", "q"]
    assert s.list_outputs() == ["ws_sum"]
    assert s.infer_shape(p=(3, 4))[0] == [(3, 4), (3, 4)]
    exe = s.simple_bind(nv.cpu(), p=(3, 4), q=(3, 4))
    got = exe.forward(is_train=True, p=x, q=y)[0].asnumpy()
    np.testing.assert_allclose(got, 2.5 * x + y, rtol=1e-6)
    exe.backward([dy])
    np.testing.assert_allclose(exe.grad_dict["p"].asnumpy(), 2.5 * dy, rtol=1e-6)
    np.testing.assert_allclose(exe.grad_dict["q"].asnumpy(), dy, rtol=1e-6)
    # the same instance makes more symbols under its one registration
    assert (
        op.get_symbol(nv.sym.Variable("p"), nv.sym.Variable("q")).list_outputs()[0].endswith("_sum")
    )


def test_a_bad_infer_shape_is_a_named_error() -> None:
    class Bad(nv.operator.NumpyOp):
        def infer_shape(self, in_shape: list[Any]) -> Any:
            return in_shape[0]

    s = Bad().get_symbol(nv.sym.Variable("x"))
    with pytest.raises(nv.NNVMError, match=r"Bad\.infer_shape must return"):
        s.infer_shape(x=(2, 3))
    assert nv.nd.relu(nv.nd.ones((2,))).asnumpy().tolist() == [1.0, 1.0]  # still usable
