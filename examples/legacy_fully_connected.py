"""A FullyConnected layer written as a legacy OperatorProperty / Operator pair.

This is the C++ recipe of MXNet's "Operators in MXNet" in Python: a Parameter class
(num_hidden, no_bias), a property that names the arguments, infers the weight and bias
shapes from the data (mutual inference), and declares that backward needs out_grad and
the inputs but *not* the output — so the executor may free the output once its readers
are done — and an Operator doing the math on NumPy arrays, honouring `req`.

Run it: ``python examples/legacy_fully_connected.py`` (checks against finite differences).
"""

from __future__ import annotations

from typing import Any

import numpy as np

import nnvmpy as nv
from nnvmpy.operator import Operator, OperatorProperty, assign


class FullyConnectedParam(nv.Parameter):
    num_hidden = nv.field(int, lower_bound=1, describe="Number of hidden units of the output.")
    no_bias = nv.field(bool, default=False, describe="Whether to leave the bias out.")


class FullyConnectedOp(Operator):
    """out = data · weightᵀ + bias, with data flattened to (batch, -1)."""

    def __init__(self, param: FullyConnectedParam) -> None:
        self.param = param

    def forward(self, ctx, in_data, req, out_data, aux_states):  # type: ignore[no-untyped-def]
        x = in_data[0].reshape(in_data[0].shape[0], -1)
        y = x @ in_data[1].T
        if not self.param.no_bias:
            y = y + in_data[2]
        assign(out_data[0], req[0], y)

    def backward(self, ctx, out_grad, in_data, out_data, req, in_grad, aux_states):  # type: ignore[no-untyped-def]
        dy = out_grad[0]
        x = in_data[0].reshape(in_data[0].shape[0], -1)
        assign(in_grad[0], req[0], (dy @ in_data[1]).reshape(in_data[0].shape))  # dx = dy·W
        assign(in_grad[1], req[1], dy.T @ x)  # dW = dyᵀ·x
        if not self.param.no_bias:
            assign(in_grad[2], req[2], dy.sum(axis=0))  # db = Σ_batch dy


class FullyConnectedProp(OperatorProperty):
    """Fully connected layer (legacy OperatorProperty version)."""

    param: FullyConnectedParam

    def list_arguments(self) -> list[str]:
        return ["data", "weight"] if self.param.no_bias else ["data", "weight", "bias"]

    def infer_shape(self, in_shape: list[Any]) -> Any:
        data = in_shape[0]
        if data is None or any(d is None for d in data):
            return False  # weight and bias do not determine the batch size
        n = self.param.num_hidden
        k = int(np.prod(data[1:]))
        shapes = [tuple(data), (n, k)] + ([] if self.param.no_bias else [(n,)])
        return shapes, [(data[0], n)], []

    def declare_backward_dependency(self, out_grad, in_data, out_data):  # type: ignore[no-untyped-def]
        return [out_grad[0], *in_data]  # NOTE: out_data[0] is NOT included

    def create_operator(self, ctx: Any) -> Operator:
        return FullyConnectedOp(self.param)


nv.operator.register_op_property("LegacyFullyConnected", FullyConnectedProp, FullyConnectedParam)


def main() -> None:
    """Shapes, forward against NumPy, gradients against finite differences, through sym and nd."""
    from nnvmpy.test_utils import check_numeric_gradient, check_symbolic_forward

    rng = np.random.default_rng(0)
    data = nv.sym.Variable("data")
    for no_bias in (False, True):
        fc = nv.sym.LegacyFullyConnected(data, num_hidden=4, no_bias=no_bias, name="fc")
        arg_shapes, out_shapes, _ = fc.infer_shape(data=(3, 2, 5))
        assert arg_shapes[1] == (4, 10), arg_shapes  # weight: (num_hidden, 2 * 5)
        assert out_shapes == [(3, 4)], out_shapes
        loc = {n: rng.normal(size=s) for n, s in zip(fc.list_arguments(), arg_shapes)}
        expected = loc["data"].reshape(3, -1) @ loc["fc_weight"].T
        if not no_bias:
            expected = expected + loc["fc_bias"]
        check_symbolic_forward(fc, loc, [expected], rtol=1e-4, atol=1e-5)
        check_numeric_gradient(fc, loc, numeric_eps=1e-4, rtol=1e-3, dtype=np.float64)
    x, w, b = (nv.nd.array(rng.normal(size=s)) for s in [(3, 5), (4, 5), (4,)])
    y = nv.nd.LegacyFullyConnected(x, w, b, num_hidden=4)
    np.testing.assert_allclose(
        y.asnumpy(), x.asnumpy() @ w.asnumpy().T + b.asnumpy(), rtol=1e-5, atol=1e-6
    )
    print("LegacyFullyConnected: forward and gradients match NumPy and finite differences")


if __name__ == "__main__":
    main()
