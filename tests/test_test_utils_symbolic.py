"""nv.test_utils' symbol checks: each passes on a correct op and fails on a deliberately wrong one.

check_symbolic_forward / check_symbolic_backward / check_numeric_gradient (MXNet's
signatures), check_consistency across dtypes, simple_forward, check_speed, and check_op.
The references are NumPy formulas of sin and its derivative.
"""

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


# -- check_symbolic_forward ----------------------------------------------------------------------


def test_check_symbolic_forward_accepts_lists_dicts_and_ndarrays(sin_ops: None) -> None:
    loc = location()
    s = sym.t_tu_sin(sym.var("x"), name="s")
    outputs = tu.check_symbolic_forward(s, loc, [np.sin(loc[0])])
    assert isinstance(outputs[0], nv.nd.NDArray)  # MXNet returns the executor's outputs
    np.testing.assert_allclose(outputs[0].asnumpy(), np.sin(loc[0]), rtol=1e-6)
    tu.check_symbolic_forward(s, {"x": nv.nd.array(loc[0])}, {"s_output": np.sin(loc[0])})
    out64 = tu.check_symbolic_forward(s, loc, [np.sin(loc[0])], dtype="asnumpy")
    assert out64[0].dtype == np.float64  # 'asnumpy' keeps the location's dtype


def test_check_symbolic_forward_fails_on_wrong_values(sin_ops: None) -> None:
    loc = location()
    s = sym.t_tu_sin(sym.var("x"), name="s")
    with pytest.raises(AssertionError, match="EXPECTED_s_output and FORWARD_s_output differ"):
        tu.check_symbolic_forward(s, loc, [np.cos(loc[0])])
    near = np.sin(loc[0]) + 5e-4  # inside float32's default atol 1e-3, outside a tight one
    tu.check_symbolic_forward(s, loc, [near])
    with pytest.raises(AssertionError):
        tu.check_symbolic_forward(s, loc, [near], rtol=1e-6, atol=1e-6)


# -- check_symbolic_backward ---------------------------------------------------------------------


def test_check_symbolic_backward_with_each_grad_req(sin_ops: None) -> None:
    loc, head = location(), np.full((2, 3), 2.0)
    good = sym.t_tu_sin(sym.var("x"))
    expected = head * np.cos(loc[0])
    grads = tu.check_symbolic_backward(good, loc, [head], [expected])
    np.testing.assert_allclose(grads["x"].asnumpy(), expected, rtol=1e-5)
    tu.check_symbolic_backward(good, loc, head, {"x": expected})
    # keyed by output name (t_tu_sin0_output when this is the process's first t_tu_sin)
    tu.check_symbolic_backward(good, loc, {good.list_outputs()[0]: head}, {"x": expected})
    tu.check_symbolic_backward(good, loc, [head], [expected], grad_req="add")
    tu.check_symbolic_backward(good, loc, [head], [expected], grad_req=["add"])
    # 'null': the gradient array keeps its starting values, whatever `expected` says
    tu.check_symbolic_backward(good, loc, [head], [np.zeros((2, 3))], grad_req="null")


def test_check_symbolic_backward_fails_on_a_wrong_gradient(sin_ops: None) -> None:
    loc, head = location(), np.full((2, 3), 2.0)
    with pytest.raises(AssertionError, match="EXPECTED_x and BACKWARD_x differ"):
        tu.check_symbolic_backward(
            sym.t_tu_scaled_grad(sym.var("x")), loc, [head], [head * np.cos(loc[0])]
        )


def test_check_symbolic_backward_with_add_catches_a_backward_ignoring_req(sin_ops: None) -> None:
    loc, head = location(), np.ones((2, 3))
    s = sym.t_tu_backward_no_add(sym.var("x"))
    tu.check_symbolic_backward(s, loc, [head], [np.cos(loc[0])])  # 'write' is fine
    with pytest.raises(AssertionError, match="EXPECTED_x and BACKWARD_x"):
        tu.check_symbolic_backward(s, loc, [head], [np.cos(loc[0])], grad_req="add")


def test_check_symbolic_backward_of_some_arguments_only(sin_ops: None) -> None:
    x, y = sym.var("x"), sym.var("y")
    loc = {"x": location(seed=1)[0], "y": location(seed=2)[0]}
    head = np.ones((2, 3))
    s = sym.elemwise_mul(x, sym.t_tu_sin(y))
    # d/dy x sin(y) = x cos(y); x's gradient is not asked for
    tu.check_symbolic_backward(s, loc, [head], {"y": loc["x"] * np.cos(loc["y"])})


# -- check_numeric_gradient ----------------------------------------------------------------------


def test_check_numeric_gradient_passes_on_correct_ops(sin_ops: None) -> None:
    x = sym.var("x")
    tu.check_numeric_gradient(sym.t_tu_sin(x), location(), dtype=np.float64)
    tu.check_numeric_gradient(sym.quadratic(x, a=2, b=3, c=1), location())  # float32
    tu.check_numeric_gradient(sym.quadratic(x, a=2, b=3, c=1), [nv.nd.array(location()[0])])
    y = sym.var("y")
    loc = {"x": location(seed=1)[0], "y": location(seed=2)[0]}
    s = sym.elemwise_mul(x, sym.t_tu_sin(y))
    tu.check_numeric_gradient(s, loc, dtype=np.float64, grad_nodes=["y"])
    tu.check_numeric_gradient(s, loc, dtype=np.float64, grad_nodes={"x": "add", "y": "write"})


def test_check_numeric_gradient_fails_on_a_wrong_backward(sin_ops: None) -> None:
    with pytest.raises(AssertionError, match="NUMERICAL_x and BACKWARD_x differ"):
        tu.check_numeric_gradient(sym.t_tu_scaled_grad(sym.var("x")), location(), dtype=np.float64)


def test_check_numeric_gradient_with_add_catches_a_backward_ignoring_req(sin_ops: None) -> None:
    s = sym.t_tu_backward_no_add(sym.var("x"))
    tu.check_numeric_gradient(s, location(), dtype=np.float64)
    with pytest.raises(AssertionError, match="NUMERICAL_x and BACKWARD_x"):
        tu.check_numeric_gradient(s, location(), dtype=np.float64, grad_nodes={"x": "add"})


def test_central_difference_restores_x_and_writes_through_any_layout() -> None:
    from nnvmpy.test_utils.symbolic import central_difference

    x = np.array([0.3, -1.2, 2.0])
    grad = central_difference(lambda: float(np.sum(x**3)), x, 1e-4)
    np.testing.assert_allclose(grad, 3 * x**2, rtol=1e-6)
    np.testing.assert_array_equal(x, [0.3, -1.2, 2.0])  # restored
    w = np.arange(6.0).reshape(2, 3).T  # a transposed (Fortran-ordered) view
    scale = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    np.testing.assert_allclose(central_difference(lambda: float((w * scale).sum()), w, 1e-3), scale)


def test_numeric_grad_differentiates_an_executors_first_output_as_mxnet() -> None:
    # MXNet 1.9.1: numeric_grad(executor, location, aux_states=None, eps=1e-4,
    # use_forward_train=True, dtype=np.float32) -> {name: d sum(outputs[0]) / d name}
    x, w = sym.var("x"), sym.var("w")
    s = sym.Group([sym.sum(x * x * w, axis=1), w * 100])  # only output 0 counts
    X = np.array([[1.0, -2.0], [0.5, 3.0]])
    W = np.array([[2.0, 1.0], [1.0, 4.0]])
    exe = s.simple_bind(nv.cpu(), grad_req="null", type_dict={"x": np.float64, "w": np.float64},
                        x=X.shape, w=W.shape)  # fmt: skip
    grads = tu.numeric_grad(exe, {"x": X, "w": W}, eps=1e-4, dtype=np.float64)
    assert set(grads) == {"x", "w"}
    assert grads["x"].dtype == np.float64
    np.testing.assert_allclose(grads["x"], 2 * X * W, rtol=1e-6)
    np.testing.assert_allclose(grads["w"], X * X, rtol=1e-6)
    np.testing.assert_array_equal(exe.arg_dict["x"].asnumpy(), X)  # left at location
    np.testing.assert_array_equal(X, [[1.0, -2.0], [0.5, 3.0]])  # caller's array untouched
    default = tu.numeric_grad(exe, {"x": X, "w": W}, eps=1e-2)
    assert default["x"].dtype == np.float32
    np.testing.assert_allclose(default["x"], 2 * X * W, rtol=1e-2)
    with pytest.raises(AssertionError, match="numeric_grad: dtype expects float16"):
        tu.numeric_grad(exe, {"x": X}, dtype=np.int32)


def test_numeric_grad_writes_the_aux_states_before_each_forward() -> None:
    # BatchNorm with use_global_stats normalizes by its aux states: the executor's own
    # (zeros from simple_bind) would give gamma / sqrt(0 + 1e-3), the given ones gamma / 2, 3
    data = sym.var("data")
    s = sym.BatchNorm(data, fix_gamma=False, use_global_stats=True, name="bn")
    X = np.array([[1.0, 2.0], [3.0, 5.0]])
    shapes = {"data": X.shape}
    exe = s.simple_bind(nv.cpu(), grad_req="null", **shapes)
    loc = {"data": X, "bn_gamma": np.array([2.0, 3.0]), "bn_beta": np.zeros(2)}
    aux = {"bn_moving_mean": np.array([1.0, 2.0]), "bn_moving_var": np.array([4.0, 9.0])}
    grads = tu.numeric_grad(exe, loc, aux, eps=1e-2)
    # y = gamma (x - mean) / sqrt(var + eps) + beta with the given statistics
    np.testing.assert_allclose(grads["data"], np.tile([2.0 / 2.0, 3.0 / 3.0], (2, 1)), rtol=1e-2)
    np.testing.assert_allclose(grads["bn_beta"], [2.0, 2.0], rtol=1e-2)


def test_location_error_is_mxnets_mismatch_note() -> None:
    a = np.array([[1.0, 2.0], [3.0, 4.0]])
    b = a + np.array([[0.0, 0.0], [0.0, 0.1]])
    where = np.unravel_index(3, a.shape)  # NumPy integers print as plain ints
    assert tu.locationError(a, b, where, ("A", "B")) == (
        "Location of error: (1, 1), A=4.00000000, B=4.10000000"
    )
    assert tu.locationError(a, b, (1, 0), ("x", "y"), maxError=True) == (
        "Location of maximum error: (1, 0), x=3.00000000, y=3.00000000"
    )


def test_check_numeric_gradient_of_transposed_locations() -> None:
    # MXNet's test_dot passes m.T views: their values must still be perturbed
    m1 = np.random.default_rng(0).normal(size=(3, 4))
    m2 = np.random.default_rng(1).normal(size=(3, 5))
    s = sym.dot(sym.var("a"), sym.var("b"), transpose_a=True)
    tu.check_numeric_gradient(s, [m1, m2], numeric_eps=1e-3, rtol=1e-3, dtype=np.float64)
    tu.check_numeric_gradient(s, [m1.T.copy().T, m2], numeric_eps=1e-3, dtype=np.float64)
    loose = np.asfortranarray(m2)
    tu.check_numeric_gradient(s, [m1, loose], numeric_eps=1e-3, dtype=np.float64)


LOCATION_ERRORS = [
    (lambda s: tu.check_numeric_gradient(s, {"y": np.ones(2)}), r"unknown arguments \['y'\]"),
    (lambda s: tu.check_numeric_gradient(s, [np.ones(2)] * 2), "2 arrays for 1 arguments"),
    (lambda s: tu.check_numeric_gradient(s, {}), r"location is missing \['x'\]"),
    (lambda s: tu.check_numeric_gradient(s, [np.ones(2)], dtype=np.int32), "dtype expects"),
    (lambda s: tu.check_numeric_gradient(s, [np.ones(2)], grad_nodes="x"), "grad_nodes expects"),
    (
        lambda s: tu.check_numeric_gradient(s, [np.ones(2)], grad_stype_dict={"x": "csr"}),
        "storage types .* are not supported",
    ),
    (lambda s: tu.check_symbolic_forward(s, np.ones(2), [np.ones(2)]), "expects a list or dict"),
    (
        lambda s: tu.check_symbolic_backward(s, [np.ones(2)], None, [np.ones(2)], grad_req="up"),
        "expects 'write', 'add' or 'null', got 'up'",
    ),
    (
        lambda s: tu.check_symbolic_forward(s, [np.ones(2)], [np.ones(2)] * 2),
        "2 expected arrays for 1 outputs",
    ),
]


@pytest.mark.parametrize(("call", "message"), LOCATION_ERRORS, ids=range(len(LOCATION_ERRORS)))
def test_bad_arguments_are_named_errors(call: Any, message: str) -> None:
    s = sym.quadratic(sym.var("x"))
    with pytest.raises(nv.NNVMError, match=message):
        call(s)
    tu.check_symbolic_forward(s, [np.ones(2)], [np.zeros(2)])  # the checks still work


def test_simple_forward_and_check_speed(sin_ops: None) -> None:
    s = sym.t_tu_sin(sym.var("x"))
    x = location()[0]
    np.testing.assert_allclose(tu.simple_forward(s, x=x), np.sin(x), rtol=1e-12)
    assert tu.check_speed(s, x=(2, 3), N=2) > 0
    assert tu.check_speed(s, location={"x": x}, N=2, typ="forward") > 0
    with pytest.raises(nv.NNVMError, match="check_speed: typ expects 'whole' or 'forward'"):
        tu.check_speed(s, x=(2, 3), typ="backward")


# -- check_consistency ---------------------------------------------------------------------------


def _ctx_list(shape: tuple[int, ...], dtypes: list[Any]) -> list[dict[str, Any]]:
    return [{"ctx": nv.cpu(), "x": shape, "type_dict": {"x": t}} for t in dtypes]


def test_check_consistency_across_dtypes(sin_ops: None) -> None:
    np.random.seed(0)  # noqa: NPY002 - check_consistency draws from the global generator
    s = sym.t_tu_sin(sym.var("x"), name="s")
    gt = tu.check_consistency(s, _ctx_list((3, 4), [np.float64, np.float32]))
    assert set(gt) == {"s_output", "x"}
    assert gt["s_output"].dtype == np.float64  # the most precise run is the ground truth
    tu.check_consistency(s, _ctx_list((3, 4), [np.float32, np.float64]), grad_req="null")
    tu.check_consistency(s, _ctx_list((3, 4), [np.float64, np.float32]), use_uniform=True)
    x = np.linspace(-1, 1, 12).reshape(3, 4)
    gt = tu.check_consistency(s, _ctx_list((3, 4), [np.float64] * 2), arg_params={"x": x})
    np.testing.assert_allclose(gt["s_output"].asnumpy(), np.sin(x), rtol=1e-12)
    np.testing.assert_allclose(gt["x"].asnumpy(), np.sin(x) * np.cos(x), rtol=1e-12)


def test_check_consistency_catches_two_symbols_that_disagree(sin_ops: None) -> None:
    np.random.seed(1)  # noqa: NPY002
    x = sym.var("x")
    good, bad = sym.t_tu_sin(x, name="s"), sym.t_tu_scaled_grad(x, name="s")
    ctx = _ctx_list((2, 5), [np.float64, np.float64])
    tu.check_consistency([good, bad], ctx, grad_req="null")  # forwards agree
    with pytest.raises(AssertionError, match="ctx_list"):
        tu.check_consistency([good, bad], ctx)  # gradients do not
    tu.check_consistency([good, bad], ctx, raise_on_err=False)  # reported, not raised


def test_check_consistency_errors_are_named(sin_ops: None) -> None:
    s = sym.t_tu_sin(sym.var("x"))
    with pytest.raises(nv.NNVMError, match="ctx_list needs at least two"):
        tu.check_consistency(s, _ctx_list((2,), [np.float32]))
    with pytest.raises(nv.NNVMError, match="2 symbols for 3 entries"):
        tu.check_consistency([s, s], _ctx_list((2,), [np.float32] * 3))
    with pytest.raises(nv.NNVMError, match=r"ctx_list\[1\] expects a dict"):
        tu.check_consistency(s, [{"x": (2,)}, nv.cpu()])


# -- check_op ------------------------------------------------------------------------------------


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
    ("t_tu_scaled_grad", "NUMERICAL_x0 and BACKWARD_x0 differ"),
    ("t_tu_forward_no_add", "with req='add'"),
    ("t_tu_backward_no_add", "EXPECTED_x0 and BACKWARD_x0 differ"),
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


@pytest.mark.gpu
def test_check_consistency_between_cpu_and_gpu() -> None:
    s = sym.quadratic(sym.var("x"), a=1.5, b=-2.0, c=0.5, name="q")
    ctx_list = [
        {"ctx": nv.cpu(), "x": (3, 4), "type_dict": {"x": np.float64}},
        {"ctx": nv.gpu(0), "x": (3, 4), "type_dict": {"x": np.float32}},
    ]
    x = np.linspace(-2, 2, 12).reshape(3, 4)
    gt = tu.check_consistency(s, ctx_list, arg_params={"x": x})
    y = 1.5 * x**2 - 2.0 * x + 0.5
    np.testing.assert_allclose(gt["q_output"].asnumpy(), y, rtol=1e-12)
    # backward ran with the float32 outputs as head gradients: dx = (2 a x + b) * y
    np.testing.assert_allclose(gt["x"].asnumpy(), (3.0 * x - 2.0) * y, rtol=1e-6)
    assert gt["x"].context == nv.cpu()  # the float64 run is the ground truth
