"""nv.test_utils: every helper passes on a correct op and fails on a deliberately wrong one."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy import test_utils as tu
from nnvmpy.base import OpReqType

sym = nv.sym
Compute = Callable[[Any, Any, list[Any], list[Any], list[Any]], None]


def assign(out: np.ndarray, req: OpReqType, value: Any) -> None:
    """KERNEL_ASSIGN: what a correct kernel does with each request."""
    if req == OpReqType.kAddTo:
        out[...] += value
    elif req != OpReqType.kNullOp:
        out[...] = value


# y = sin(x), dx = dy cos(x): the correct op and one deliberate bug per variant.


def sin_forward(attrs: Any, ctx: Any, ins: list[Any], req: list[Any], outs: list[Any]) -> None:
    assign(outs[0], req[0], np.sin(ins[0]))


def sin_backward(attrs: Any, ctx: Any, ins: list[Any], req: list[Any], outs: list[Any]) -> None:
    assign(outs[0], req[0], ins[0] * np.cos(ins[1]))  # ins: (dy, x)


def scaled_backward(attrs: Any, ctx: Any, ins: list[Any], req: list[Any], outs: list[Any]) -> None:
    assign(outs[0], req[0], 1.5 * ins[0] * np.cos(ins[1]))  # off by a factor


def forward_ignoring_req(
    attrs: Any, ctx: Any, ins: list[Any], req: list[Any], outs: list[Any]
) -> None:
    outs[0][...] = np.sin(ins[0])  # always writes, even for req='add'


def backward_ignoring_req(
    attrs: Any, ctx: Any, ins: list[Any], req: list[Any], outs: list[Any]
) -> None:
    outs[0][...] = ins[0] * np.cos(ins[1])


def shift_forward(attrs: Any, ctx: Any, ins: list[Any], req: list[Any], outs: list[Any]) -> None:
    """out[k] = sin(x[k-1]) (cyclic), written element by element: unsafe in place."""
    x, out = ins[0].reshape(-1), outs[0].reshape(-1)
    first = np.sin(x[-1])
    for k in range(1, x.size):  # in place, x[k - 1] was overwritten one step earlier
        value = np.sin(x[k - 1])
        out[k] = out[k] + value if req[0] == OpReqType.kAddTo else value
    out[0] = out[0] + first if req[0] == OpReqType.kAddTo else first


def shift_backward(attrs: Any, ctx: Any, ins: list[Any], req: list[Any], outs: list[Any]) -> None:
    dy, x = ins[0].reshape(-1), ins[1].reshape(-1)
    assign(outs[0], req[0], (np.roll(dy, -1) * np.cos(x)).reshape(ins[1].shape))


def transposing_shape(attrs: Any, ins: list[Any], outs: list[Any]) -> bool:
    """Forward right, backward wrong: infers the input as the transposed output."""
    if ins[0] is not None:
        nv.shape_assign(outs, 0, ins[0])
        return True
    if outs[0] is not None:
        ins[0] = tuple(reversed(outs[0]))
        return True
    return False


def overwriting_shape(attrs: Any, ins: list[Any], outs: list[Any]) -> bool:
    """Ignores a known output that contradicts the input instead of raising."""
    if ins[0] is not None:
        outs[0] = ins[0]
    elif outs[0] is not None:
        ins[0] = outs[0]
    return ins[0] is not None


def widening_type(attrs: Any, ins: list[Any], outs: list[Any]) -> bool:
    """Output type right; from the output it infers the input as float64 regardless."""
    if ins[0] is not None:
        nv.type_assign(outs, 0, ins[0])
    elif outs[0] is not None:
        ins[0] = np.dtype(np.float64)
    return ins[0] is not None


def register_sin(
    name: str,
    forward: Compute = sin_forward,
    backward: Compute = sin_backward,
    infer_shape: Any = None,
    infer_type: Any = None,
    inplace: bool = True,
) -> None:
    op = (
        nv.register_op(name)
        .set_num_inputs(1)
        .set_num_outputs(1)
        .set_attr("FInferShape", infer_shape or nv.elemwise_shape(1, 1))
        .set_attr("FInferType", infer_type or nv.elemwise_type(1, 1))
        .set_attr("FCompute<cpu>", forward)
        .set_attr("FGradient", nv.ElemwiseGradUseIn(f"_backward_{name}"))
    )
    if inplace:
        op.set_attr("FInplaceOption", lambda attrs: [(0, 0)])
    (
        nv.register_op(f"_backward_{name}")
        .set_num_inputs(2)
        .set_num_outputs(1)
        .set_attr("TIsBackward", True)
        .set_attr("FCompute<cpu>", backward)
    )


@pytest.fixture
def sin_ops(scoped_registry: None) -> None:
    register_sin("t_tu_sin")
    register_sin("t_tu_scaled_grad", backward=scaled_backward)
    register_sin("t_tu_forward_no_add", forward=forward_ignoring_req)
    register_sin("t_tu_backward_no_add", backward=backward_ignoring_req)
    register_sin("t_tu_shift", forward=shift_forward, backward=shift_backward)
    register_sin("t_tu_shift_no_inplace", shift_forward, shift_backward, inplace=False)
    register_sin("t_tu_transposing_shape", infer_shape=transposing_shape)
    register_sin("t_tu_overwriting_shape", infer_shape=overwriting_shape)
    register_sin("t_tu_widening_type", infer_type=widening_type)


def location(shape: tuple[int, ...] = (2, 3), seed: int = 0) -> list[np.ndarray]:
    return [np.random.default_rng(seed).uniform(-1, 1, shape)]


# -- assert_almost_equal ---------------------------------------------------------------------------


def test_assert_almost_equal_passes_within_tolerance() -> None:
    a = np.array([1.0, 2.0, 3.0])
    tu.assert_almost_equal(a, a + 1e-9, rtol=1e-6)
    tu.assert_almost_equal(nv.nd.array(a), a)  # NDArrays are read with asnumpy
    assert tu.almost_equal(a, a * (1 + 1e-9), rtol=1e-6)
    assert not tu.almost_equal(a, a + 1)
    tu.assert_almost_equal(np.array([np.nan]), np.array([np.nan]), equal_nan=True)


def test_assert_almost_equal_names_the_worst_element() -> None:
    a = np.zeros((3, 4))
    b = a.copy()
    b[1, 2], b[2, 0] = 0.5, 0.1
    with pytest.raises(AssertionError) as info:
        tu.assert_almost_equal(a, b, rtol=1e-5, atol=1e-8, names=("got", "want"))
    message = str(info.value)
    assert "differ in 2 of 12 elements" in message
    assert "worst at index (1, 2)" in message
    assert "got=np.float64(0.0), want=np.float64(0.5)" in message
    with pytest.raises(AssertionError, match=r"shapes differ: a \(2,\) vs b \(3,\)"):
        tu.assert_almost_equal(np.zeros(2), np.zeros(3))
    with pytest.raises(AssertionError, match="worst at index"):
        tu.assert_almost_equal(np.array([1.0, np.nan]), np.array([1.0, 2.0]))


# -- check_numeric_gradient ------------------------------------------------------------------------


def test_check_numeric_gradient_passes_on_correct_ops(sin_ops: None) -> None:
    x = sym.var("x")
    tu.check_numeric_gradient(sym.t_tu_sin(x), location(), dtype=np.float64)
    tu.check_numeric_gradient(sym.quadratic(x, a=2, b=3, c=1), location())  # float32
    y = sym.var("y")
    tu.check_numeric_gradient(
        sym.elemwise_mul(x, sym.t_tu_sin(y)),
        {"x": location(seed=1)[0], "y": location(seed=2)[0]},
        dtype=np.float64,
        grad_nodes=["y"],
    )


def test_check_numeric_gradient_fails_on_a_wrong_backward(sin_ops: None) -> None:
    with pytest.raises(AssertionError, match="symbolic gradient of x and numeric gradient"):
        tu.check_numeric_gradient(sym.t_tu_scaled_grad(sym.var("x")), location(), dtype=np.float64)


def test_location_errors_are_named() -> None:
    s = sym.quadratic(sym.var("x"))
    with pytest.raises(nv.NNVMError, match=r"unknown arguments \['y'\]"):
        tu.check_numeric_gradient(s, {"y": np.ones(2)})
    with pytest.raises(nv.NNVMError, match="2 arrays for 1 arguments"):
        tu.check_numeric_gradient(s, [np.ones(2), np.ones(2)])


# -- check_symbolic_forward / backward -------------------------------------------------------------


def test_check_symbolic_forward(sin_ops: None) -> None:
    loc = location()
    s = sym.t_tu_sin(sym.var("x"), name="s")
    outputs = tu.check_symbolic_forward(s, loc, [np.sin(loc[0])])
    np.testing.assert_allclose(outputs[0], np.sin(loc[0]), rtol=1e-6)
    tu.check_symbolic_forward(s, {"x": loc[0]}, {"s_output": np.sin(loc[0])})
    with pytest.raises(AssertionError, match="forward s_output and expected"):
        tu.check_symbolic_forward(s, loc, [np.cos(loc[0])])


def test_check_symbolic_backward(sin_ops: None) -> None:
    loc, head = location(), np.full((2, 3), 2.0)
    good = sym.t_tu_sin(sym.var("x"))
    tu.check_symbolic_backward(good, loc, [head], [head * np.cos(loc[0])], rtol=1e-5)
    tu.check_symbolic_backward(good, loc, head, {"x": head * np.cos(loc[0])}, rtol=1e-5)
    tu.check_symbolic_backward(good, loc, [head], [head * np.cos(loc[0])], grad_req="add")
    with pytest.raises(AssertionError, match="gradient of x and expected"):
        tu.check_symbolic_backward(
            sym.t_tu_scaled_grad(sym.var("x")), loc, [head], [head * np.cos(loc[0])]
        )


def test_check_symbolic_backward_with_add_catches_a_backward_ignoring_req(sin_ops: None) -> None:
    loc, head = location(), np.ones((2, 3))
    s = sym.t_tu_backward_no_add(sym.var("x"))
    tu.check_symbolic_backward(s, loc, [head], [np.cos(loc[0])])  # 'write' is fine
    with pytest.raises(AssertionError, match="gradient of x and expected"):
        tu.check_symbolic_backward(s, loc, [head], [np.cos(loc[0])], grad_req="add")


# -- check_op --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "params"),
    [("quadratic", {"a": 2.0, "b": -1.0, "c": 0.5}), ("elemwise_mul", {}), ("sigmoid", {})],
)
def test_check_op_passes_on_built_in_ops(name: str, params: dict[str, Any]) -> None:
    tu.check_op(name, params=params)


def test_check_op_passes_on_correct_test_ops(sin_ops: None) -> None:
    tu.check_op("t_tu_sin")
    tu.check_op("t_tu_shift_no_inplace")  # not element-wise, and says so: no in-place pair


WRONG_OPS = [
    ("t_tu_scaled_grad", "symbolic gradient of x0 and numeric gradient"),
    ("t_tu_forward_no_add", "with req='add'"),
    ("t_tu_backward_no_add", "gradient of x0 and expected"),
    ("t_tu_shift", "in place of input 0 and out of place"),
    ("t_tu_transposing_shape", r"inferred input 0 backward as \(3, 2\), but it is \(2, 3\)"),
    ("t_tu_overwriting_shape", r"accepted output 0 of shape \(3, 3\)"),
    ("t_tu_widening_type", "inferred input 0 backward as float64, but it is float32"),
]


@pytest.mark.parametrize(("name", "message"), WRONG_OPS, ids=[w[0] for w in WRONG_OPS])
def test_check_op_catches_each_deliberate_bug(sin_ops: None, name: str, message: str) -> None:
    with pytest.raises(AssertionError, match=message):
        tu.check_op(name)


def test_check_op_errors_are_named(scoped_registry: None) -> None:
    with pytest.raises(nv.NNVMError, match="2 inputs, got 1 shapes"):
        tu.check_op("elemwise_add", shapes=[(2, 3)])
    nv.register_op("t_tu_bare").set_num_inputs(1).set_num_outputs(1)
    with pytest.raises(nv.NNVMError, match="no FInferShape"):
        tu.check_op("t_tu_bare")
    tu.check_op("quadratic", shapes=[(4,)])  # and checks still run afterwards
