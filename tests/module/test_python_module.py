"""nv.mod.PythonModule / PythonLossModule: modules computed in Python (MXNet 1.x's).

References: NumPy formulas for the subclass's computation and the loss gradient.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy.base import NNVMError, ParamError

nd = nv.nd


class Scale(nv.mod.PythonModule):
    """y = 3 x; dx = 3 dy."""

    def __init__(self) -> None:
        super().__init__(["data"], None, ["scale_output"])
        self._out: Any = None
        self._grad: Any = None

    def _compute_output_shapes(self) -> list[tuple[str, tuple[int, ...]]]:
        return [("scale_output", tuple(self.data_shapes[0][1]))]

    def forward(self, data_batch: Any, is_train: bool | None = None) -> None:
        self._out = data_batch.data[0] * 3

    def get_outputs(self, merge_multi_context: bool = True) -> list[Any]:
        return [self._out]

    def backward(self, out_grads: Any = None) -> None:
        self._grad = out_grads[0] * 3

    def get_input_grads(self, merge_multi_context: bool = True) -> list[Any]:
        return [self._grad]


def test_a_python_module_subclass_works_alone_and_in_a_chain() -> None:
    mod = Scale()
    mod.bind([("data", (2, 3))])
    assert mod.binded
    assert mod.output_shapes == [("scale_output", (2, 3))]
    mod.init_params()
    mod.init_optimizer()
    assert mod.get_params() == ({}, {})
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    mod.forward(nv.io.DataBatch([nd.array(x)]))
    np.testing.assert_array_equal(mod.get_outputs()[0].asnumpy(), 3 * x)
    mod.update()  # nothing to update
    # Scale -> FullyConnected: the FC sees 3x, and Scale passes the FC's input gradient on
    fc = nv.mod.Module(
        nv.sym.FullyConnected(nv.sym.Variable("data"), num_hidden=2, name="fc"), label_names=None
    )
    seq = nv.mod.SequentialModule().add(Scale()).add(fc, auto_wiring=True)
    seq.bind([("data", (2, 3))], inputs_need_grad=True)
    w = np.array([[1, 0, 2], [0, 1, -1]], dtype=np.float32)
    seq.init_params(arg_params={"fc_weight": nd.array(w), "fc_bias": nd.zeros((2,))})
    seq.forward(nv.io.DataBatch([nd.array(x)]), is_train=True)
    np.testing.assert_allclose(seq.get_outputs()[0].asnumpy(), (3 * x) @ w.T)
    dy = np.ones((2, 2), dtype=np.float32)
    seq.backward([nd.array(dy)])
    np.testing.assert_allclose(seq.get_input_grads()[0].asnumpy(), 3 * (dy @ w))


def test_python_loss_module_passes_scores_and_computes_grad_func() -> None:
    def grad_func(scores: Any, labels: Any) -> np.ndarray:  # squared error: 2 (s - y)
        return 2 * (scores.asnumpy() - labels.asnumpy()[:, None])

    loss = nv.mod.PythonLossModule(name="l2", grad_func=grad_func)
    assert loss.output_names == ["l2_output"]
    loss.bind([("data", (3, 1))], [("softmax_label", (3,))])
    scores = np.array([[0.5], [2.0], [-1.0]], dtype=np.float32)
    labels = np.array([1.0, 2.0, 0.0], dtype=np.float32)
    batch = nv.io.DataBatch([nd.array(scores)], [nd.array(labels)])
    loss.forward(batch)
    np.testing.assert_array_equal(loss.get_outputs()[0].asnumpy(), scores)
    loss.backward()
    grad = loss.get_input_grads()[0]
    assert isinstance(grad, nd.NDArray)  # a NumPy result becomes an NDArray
    np.testing.assert_allclose(grad.asnumpy(), 2 * (scores - labels[:, None]))
    metric = nv.metric.create("mse")
    loss.update_metric(metric, [nd.array(labels)])
    assert metric.get()[1] == pytest.approx(np.mean((scores[:, 0] - labels) ** 2))


def test_python_modules_give_named_errors() -> None:
    with pytest.raises(ParamError, match=r"PythonLossModule: data_names must name one input"):
        nv.mod.PythonLossModule(data_names=("a", "b"))
    with pytest.raises(ParamError, match=r"PythonLossModule: grad_func must be callable"):
        nv.mod.PythonLossModule(grad_func=3)
    loss = nv.mod.PythonLossModule()
    with pytest.raises(ParamError, match=r"PythonLossModule.bind: data_shapes name \['x'\]"):
        loss.bind([("x", (3, 1))])
    with pytest.raises(ParamError, match=r"PythonLossModule.bind: grad_req must be 'write'"):
        loss.bind([("data", (3, 1))], grad_req="add")
    with pytest.raises(ParamError, match=r"label_shapes name \['y'\]"):
        loss.bind([("data", (3, 1))], [("y", (3,))])
    loss.bind([("data", (3, 1))], [("softmax_label", (3,))])
    loss.forward(nv.io.DataBatch([nd.ones((3, 1))], [nd.zeros((3,))]))
    with pytest.raises(NotImplementedError, match=r"give grad_func"):
        loss.backward()
    with pytest.raises(ParamError, match=r"a loss takes no out_grads"):
        loss.backward(out_grads=[nd.ones((3, 1))])
    with pytest.raises(NNVMError, match=r"a training batch needs labels"):
        loss.forward(nv.io.DataBatch([nd.ones((3, 1))]))
    with pytest.raises(NotImplementedError, match=r"write _compute_output_shapes"):
        nv.mod.PythonModule(["data"], None, ["out"]).bind([("data", (1,))])
