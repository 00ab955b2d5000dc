"""The softmax CustomOp of MXNet's "How to Create New Operators", run on nnvmpy.

The operator code below is the reference's text; only the import changed (``import nnvmpy
as mx``) and ``np.int`` became ``int``, because NumPy 2 removed the ``np.int`` alias.
Run it: ``python examples/custom_softmax.py``.
"""

# ruff: noqa: E741, UP008, I001
# fmt: off
import os
import nnvmpy as mx
import numpy as np

class Softmax(mx.operator.CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):
        x = in_data[0].asnumpy()
        y = np.exp(x - x.max(axis=1).reshape((x.shape[0], 1)))
        y /= y.sum(axis=1).reshape((x.shape[0], 1))
        self.assign(out_data[0], req[0], mx.nd.array(y))

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        l = in_data[1].asnumpy().ravel().astype(int)
        y = out_data[0].asnumpy()
        y[np.arange(l.shape[0]), l] -= 1.0
        self.assign(in_grad[0], req[0], mx.nd.array(y))

@mx.operator.register("softmax")
class SoftmaxProp(mx.operator.CustomOpProp):
    def __init__(self):
        super(SoftmaxProp, self).__init__(need_top_grad=False)

    def list_arguments(self):
        return ['data', 'label']

    def list_outputs(self):
        return ['output']

    def infer_shape(self, in_shape):
        data_shape = in_shape[0]
        label_shape = (in_shape[0][0],)
        output_shape = in_shape[0]
        return [data_shape, label_shape], [output_shape], []

    def infer_type(self, in_type):
        dtype = in_type[0]
        return [dtype, dtype], [dtype], []

    def create_operator(self, ctx, shapes, dtypes):
        return Softmax()

fc3 = mx.symbol.Variable('fc3')
mlp = mx.symbol.Custom(data=fc3, name='softmax', op_type='softmax')
# fmt: on


def main() -> None:
    """Forward is softmax, backward is softmax - one_hot(label), symbolic and imperative."""
    rng = np.random.default_rng(int(os.environ.get("SEED", "0")))
    x = rng.normal(size=(4, 5)).astype(np.float32)
    label = np.array([0, 3, 1, 4], dtype=np.float32)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    expected = e / e.sum(axis=1, keepdims=True)
    grad = expected.copy()
    grad[np.arange(4), label.astype(int)] -= 1.0

    assert mlp.list_arguments() == ["fc3", "softmax_label"]
    assert mlp.infer_shape(fc3=(4, 5))[0] == [(4, 5), (4,)]
    exe = mlp.simple_bind(mx.cpu(), fc3=(4, 5), grad_req={"fc3": "write"})
    out = exe.forward(is_train=True, fc3=x, softmax_label=label)[0]
    exe.backward()
    np.testing.assert_allclose(out.asnumpy(), expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(exe.grad_dict["fc3"].asnumpy(), grad, rtol=1e-5, atol=1e-6)

    y = mx.nd.Custom(mx.nd.array(x), mx.nd.array(label), op_type="softmax")
    np.testing.assert_allclose(y.asnumpy(), expected, rtol=1e-5, atol=1e-6)
    print("custom softmax: forward and backward match NumPy")


if __name__ == "__main__":
    main()
