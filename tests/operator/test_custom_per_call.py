"""An imperative Custom call builds its CustomOpProp, infers and creates its operator every
time, as MXNet 1.9.1 does (measured there: three nd.Custom calls make three props, three
infer_shape, three infer_type and three create_operator calls). Other ops reuse the parse and
inference of an earlier call with the same signature; Custom must not, because the user's
prop is code with effects the user sees."""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy.base import NNVMError
from nnvmpy.operator import CustomOp, CustomOpProp, register

CALLS: Counter[str] = Counter()
SETTINGS = {"factor": 2.0}  # read by the prop's __init__: a later call sees a change


class _Scale(CustomOp):
    def __init__(self, factor: float) -> None:
        self.factor = factor

    def forward(self, is_train, req, in_data, out_data, aux):  # type: ignore[no-untyped-def]
        CALLS["forward"] += 1
        self.assign(out_data[0], req[0], in_data[0] * self.factor)
        self.assign(out_data[1], req[1], in_data[0] + in_data[1])

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):  # type: ignore[no-untyped-def]
        self.assign(in_grad[0], req[0], out_grad[0] * self.factor + out_grad[1])
        self.assign(in_grad[1], req[1], out_grad[1])


@register("t_per_call_scale")
class _ScaleProp(CustomOpProp):
    def __init__(self) -> None:
        CALLS["init"] += 1
        super().__init__(need_top_grad=True)
        self.factor = SETTINGS["factor"]

    def list_arguments(self) -> list[str]:
        return ["a", "b"]

    def list_outputs(self) -> list[str]:
        return ["scaled", "summed"]

    def infer_shape(self, in_shape: list[Any]) -> tuple[list[Any], list[Any], list[Any]]:
        CALLS["infer_shape"] += 1
        return in_shape, [in_shape[0], in_shape[0]], []

    def infer_type(self, in_type: list[Any]) -> tuple[list[Any], list[Any], list[Any]]:
        CALLS["infer_type"] += 1
        return in_type, [in_type[0], in_type[0]], []

    def create_operator(self, ctx: Any, in_shapes: list[Any], in_dtypes: list[Any]) -> CustomOp:
        CALLS["create"] += 1
        return _Scale(self.factor)


def _inputs() -> tuple[nv.nd.NDArray, nv.nd.NDArray]:
    return nv.nd.array([[1.0, 2.0], [3.0, 4.0]]), nv.nd.array([[0.5, 0.5], [1.0, 1.0]])


def test_each_call_builds_the_prop_infers_and_creates_once() -> None:
    a, b = _inputs()
    CALLS.clear()
    for _ in range(3):
        scaled, summed = nv.nd.Custom(a, b, op_type="t_per_call_scale")
    nv.nd.waitall()
    assert dict(CALLS) == {"init": 3, "infer_shape": 3, "infer_type": 3, "create": 3, "forward": 3}
    np.testing.assert_allclose(scaled.asnumpy(), 2.0 * a.asnumpy())
    np.testing.assert_allclose(summed.asnumpy(), a.asnumpy() + b.asnumpy())


def test_a_later_call_sees_what_the_prop_reads_now() -> None:
    a, b = _inputs()
    try:
        first = nv.nd.Custom(a, b, op_type="t_per_call_scale")[0]
        SETTINGS["factor"] = 5.0
        second = nv.nd.Custom(a, b, op_type="t_per_call_scale")[0]
    finally:
        SETTINGS["factor"] = 2.0
    np.testing.assert_allclose(first.asnumpy(), 2.0 * a.asnumpy())
    np.testing.assert_allclose(second.asnumpy(), 5.0 * a.asnumpy())


def test_recorded_calls_build_one_prop_each_and_differentiate() -> None:
    a, b = _inputs()
    a.attach_grad()
    b.attach_grad()
    CALLS.clear()
    with nv.autograd.record():
        scaled, summed = nv.nd.Custom(a, b, op_type="t_per_call_scale")
        loss = scaled + summed * 3
    loss.backward()
    assert CALLS["init"] == 1
    assert CALLS["create"] == 1
    np.testing.assert_allclose(a.grad.asnumpy(), np.full((2, 2), 2.0 + 3.0))
    np.testing.assert_allclose(b.grad.asnumpy(), np.full((2, 2), 3.0))


def test_other_ops_still_reuse_their_call_plans() -> None:
    from nnvmpy import imperative

    x = nv.nd.ones((3, 4))
    nv.nd.sum(x, axis=1)
    before = len(imperative._plans)
    for _ in range(5):
        nv.nd.sum(x, axis=1)
    assert len(imperative._plans) == before


def test_inputs_by_keyword_are_refused_with_the_op_named() -> None:
    a, b = _inputs()
    with pytest.raises(NNVMError, match=r"Custom: inputs are passed by position.*\['a', 'b'\]"):
        nv.nd.Custom(a=a, b=b, op_type="t_per_call_scale")
    scaled = nv.nd.Custom(a, b, op_type="t_per_call_scale")[0]  # and it still works
    np.testing.assert_allclose(scaled.asnumpy(), 2.0 * a.asnumpy())
