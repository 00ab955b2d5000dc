"""SimpleOp: unary/binary functions, gradients chosen by annotations, scalar/kwargs, resources."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy.attrs import FGradient, FInplaceOption, TIsBackward
from nnvmpy.base import InferError, NNVMError, ParamError
from nnvmpy.resource import ResourceRequest
from nnvmpy.simple_op import (
    EnvArguments,
    Input0,
    Input1,
    OutputGrad,
    OutputValue,
    SimpleOpInplaceOption,
    assign,
    register_simple_op,
)
from nnvmpy.test_utils import check_numeric_gradient, check_op

pytestmark = pytest.mark.usefixtures("scoped_registry")
RNG = np.random.default_rng(11)


# -- the reference's smooth l1 loss ---------------------------------------------------------------


@nv.kernel.elementwise
def _smooth_l1(x, sigma2):  # a is x, b is sigma2 (mshadow_op::smooth_l1_loss)
    if x > 1.0 / sigma2:
        return x - 0.5 / sigma2
    if x < -1.0 / sigma2:
        return -x - 0.5 / sigma2
    return 0.5 * x * x * sigma2


@nv.kernel.elementwise
def _smooth_l1_grad(dy, x, sigma2):  # dy * f'(x)
    if x > 1.0 / sigma2:
        return dy
    if x < -1.0 / sigma2:
        return -dy
    return dy * x * sigma2


def smooth_l1_forward(src: Any, env: EnvArguments, ret: Any, req: Any, ctx: Any) -> None:
    sigma2 = env.scalar * env.scalar
    _smooth_l1.launch(ctx, ret, req, src, sigma2)


def smooth_l1_backward_use_in(
    out_grad: OutputGrad, in_data0: Input0, env: EnvArguments, in_grad: Any, req: Any, ctx: Any
) -> None:
    sigma2 = env.scalar * env.scalar
    _smooth_l1_grad.launch(ctx, in_grad, req, out_grad.data, in_data0.data, sigma2)


def smooth_l1_reference(x: np.ndarray, sigma: float) -> np.ndarray:
    s2 = sigma * sigma
    return np.where(np.abs(x) > 1 / s2, np.abs(x) - 0.5 / s2, 0.5 * x * x * s2)


def register_smooth_l1(*devs: Any) -> None:
    """The reference's registration, for CPU and GPU (one kernel serves both)."""
    builder = register_simple_op("simple_smooth_l1")
    for dev in devs or (nv.cpu, nv.gpu):
        builder.set_function(dev, smooth_l1_forward, SimpleOpInplaceOption.kNoInplace)
        builder.set_gradient(dev, smooth_l1_backward_use_in, SimpleOpInplaceOption.kInplaceOutIn)
    builder.set_enable_scalar(True).describe("Calculate Smooth L1 Loss(lhs, scalar)")


def test_smooth_l1_through_nd_sym_and_check_op(ctx: nv.Context) -> None:
    register_smooth_l1()
    x = RNG.uniform(-2, 2, size=(4, 5)).astype(np.float32)
    y = nv.nd.simple_smooth_l1(nv.nd.array(x, ctx), scalar=1.5)
    np.testing.assert_allclose(y.asnumpy(), smooth_l1_reference(x, 1.5), rtol=1e-5, atol=1e-6)
    s = nv.sym.simple_smooth_l1(nv.sym.Variable("x"), scalar=2.0)
    check_numeric_gradient(
        s, {"x": x.astype(np.float64)}, numeric_eps=1e-5, dtype=np.float64, ctx=ctx
    )
    check_op("simple_smooth_l1", shapes=[(3, 4)], params={"scalar": 2.0})
    assert "Smooth L1" in nv.nd.simple_smooth_l1.__doc__


@pytest.mark.parametrize("dev", [nv.cpu, "cpu", nv.cpu()])
def test_dev_may_be_the_function_the_string_or_a_context(dev: Any) -> None:
    register_smooth_l1(dev)
    assert register_simple_op("simple_smooth_l1") is register_simple_op("simple_smooth_l1")
    op = nv.Op.get("simple_smooth_l1")
    assert op.has_attr("FCompute<cpu>")
    assert op.get_attr(FInplaceOption)(op.parse_attrs({"scalar": 1})) == []
    bwd = nv.Op.get("_backward_simple_smooth_l1")
    assert bwd.get_attr(TIsBackward) is True
    assert bwd.get_attr(FInplaceOption)(bwd.parse_attrs({"scalar": 1})) == [(0, 0)]


def test_scalar_is_required_and_parsed() -> None:
    register_smooth_l1()
    with pytest.raises(ParamError, match=r"simple_smooth_l1.*scalar"):
        nv.nd.simple_smooth_l1(nv.nd.ones((2,)))
    with pytest.raises(ParamError, match=r"simple_smooth_l1.*scalar"):
        nv.nd.simple_smooth_l1(nv.nd.ones((2,)), scalar="abc")


# -- binary ops, OutputValue, kwargs, shape functions, resources ----------------------------------


def mul_forward(lhs: Any, rhs: Any, env: EnvArguments, ret: Any, req: Any, ctx: Any) -> None:
    assign(ret, req, lhs * rhs)


def mul_backward(
    out_grad: OutputGrad,
    lhs: Input0,
    rhs: Input1,
    env: EnvArguments,
    lhs_grad: Any,
    rhs_grad: Any,
    req_lhs: Any,
    req_rhs: Any,
    ctx: Any,
) -> None:
    assign(lhs_grad, req_lhs, out_grad.data * rhs.data)
    assign(rhs_grad, req_rhs, out_grad.data * lhs.data)


def test_binary_op_with_input_gradient_and_default_shape_check() -> None:
    (
        register_simple_op("simple_mul")
        .set_function("cpu", mul_forward, SimpleOpInplaceOption.kInplaceLhsOut)
        .set_gradient("cpu", mul_backward, SimpleOpInplaceOption.kInplaceOutLhs)
    )
    a, b = RNG.normal(size=(3, 2)), RNG.normal(size=(3, 2))
    out = nv.nd.simple_mul(nv.nd.array(a), nv.nd.array(b))
    np.testing.assert_allclose(out.asnumpy(), a * b, rtol=1e-6)
    s = nv.sym.simple_mul(nv.sym.Variable("a"), nv.sym.Variable("b"))
    assert s.list_arguments() == ["a", "b"]
    check_numeric_gradient(s, {"a": a, "b": b}, numeric_eps=1e-5, dtype=np.float64)
    with pytest.raises(InferError, match="simple_mul"):
        nv.nd.simple_mul(nv.nd.ones((2, 3)), nv.nd.ones((3, 2)))
    check_op("simple_mul", shapes=[(2, 3), (2, 3)])


def exp_forward(src: Any, env: EnvArguments, ret: Any, req: Any, ctx: Any) -> None:
    assign(ret, req, np.exp(src))


def exp_backward(
    out_grad: OutputGrad,
    out_value: OutputValue,
    env: EnvArguments,
    in_grad: Any,
    req: Any,
    ctx: Any,
) -> None:
    assign(in_grad, req, out_grad.data * out_value.data)


def scale_forward(src: Any, env: EnvArguments, ret: Any, req: Any, ctx: Any) -> None:
    assign(ret, req, src * float(env.kwargs["factor"]))


def scale_backward(
    out_grad: OutputGrad, env: EnvArguments, in_grad: Any, req: Any, ctx: Any
) -> None:
    assign(in_grad, req, out_grad.data * float(env.kwargs["factor"]))


@pytest.mark.parametrize(
    ("name", "forward", "backward", "kwargs", "reference", "grad_inputs"),
    [
        ("simple_exp", exp_forward, exp_backward, {}, np.exp, 2),
        ("simple_scale", scale_forward, scale_backward, {"factor": "3"}, lambda x: 3 * x, 1),
    ],
)
def test_the_gradient_reads_what_its_annotations_ask_for(
    name: str, forward: Any, backward: Any, kwargs: dict[str, str], reference: Any, grad_inputs: int
) -> None:
    builder = register_simple_op(name).set_function(nv.cpu, forward)
    if kwargs:
        builder.set_enable_kwargs(True)
    builder.set_gradient(nv.cpu, backward)
    assert nv.Op.get(f"_backward_{name}").num_inputs == grad_inputs
    x = RNG.uniform(-1, 1, size=(2, 3))
    np.testing.assert_allclose(
        getattr(nv.nd, name)(nv.nd.array(x), **kwargs).asnumpy(), reference(x), rtol=1e-6
    )
    s = getattr(nv.sym, name)(nv.sym.Variable("x"), **kwargs)
    check_numeric_gradient(s, {"x": x}, numeric_eps=1e-5, dtype=np.float64)


def rowsum_forward(src: Any, env: EnvArguments, ret: Any, req: Any, ctx: Any) -> None:
    tmp = env.resource[0].get_space(src.shape, src.dtype)  # the requested temp space
    np.multiply(src, 2.0, out=tmp)
    assign(ret, req, tmp.sum(axis=1))


def test_shape_function_and_resources() -> None:
    (
        register_simple_op("simple_rowsum2")
        .set_shape_function(lambda shape, env: (shape[0],))
        .set_function(nv.cpu, rowsum_forward)
        .set_resource_request(ResourceRequest.kTempSpace)
    )
    x = RNG.normal(size=(4, 3)).astype(np.float32)
    np.testing.assert_allclose(
        nv.nd.simple_rowsum2(nv.nd.array(x)).asnumpy(), 2 * x.sum(1), rtol=1e-5
    )
    assert nv.sym.simple_rowsum2(nv.sym.Variable("x")).infer_shape(x=(4, 3))[1] == [(4,)]


# -- mistakes are reported with the op's name ---------------------------------------------------


def no_annotations(out_grad, env, in_grad, req, ctx):  # type: ignore[no-untyped-def]
    pass


def test_registration_mistakes_name_the_op() -> None:
    b = register_simple_op("simple_bad")
    with pytest.raises(NNVMError, match="simple_bad: scalar and kwargs"):
        b.set_enable_scalar(True).set_enable_kwargs(True)
    with pytest.raises(NNVMError, match=r"simple_bad: set_function: .* takes 4 parameters"):
        b.set_function(nv.cpu, lambda a, b, c, d: None)
    with pytest.raises(NNVMError, match="simple_bad: set_function: inplace option kInplaceOutIn"):
        b.set_function(nv.cpu, exp_forward, SimpleOpInplaceOption.kInplaceOutIn)
    with pytest.raises(NNVMError, match="simple_bad: set_gradient: annotate"):
        b.set_gradient(nv.cpu, no_annotations)
    b.set_function(nv.cpu, exp_forward)
    with pytest.raises(NNVMError, match="simple_bad: set_gradient: a binary function"):
        b.set_gradient(nv.cpu, mul_backward)
    with pytest.raises(
        NNVMError,
        match=r"'simple_bad': attribute FCompute<cpu> is already set at .*test_simple_op.py:\d+",
    ):
        b.set_function(nv.cpu, exp_forward)
    with pytest.raises(NNVMError, match="dev must be"):
        b.set_function("tpu", exp_forward)
    assert not nv.Op.get("simple_bad").has_attr(FGradient)


def test_parameters_need_enabling_and_callback_errors_name_the_op() -> None:
    (
        register_simple_op("simple_shape_bug")
        .set_shape_function(lambda shape, env: shape[5])
        .set_function(nv.cpu, exp_forward)
    )
    with pytest.raises(ParamError, match="simple_shape_bug: takes no parameters"):
        nv.nd.simple_shape_bug(nv.nd.ones((2,)), alpha=1)
    with pytest.raises(NNVMError, match="simple_shape_bug: shape function raised IndexError"):
        nv.nd.simple_shape_bug(nv.nd.ones((2,)))
    register_smooth_l1()  # the registry still works
    y = nv.nd.simple_smooth_l1(nv.nd.array([3.0]), scalar=1.0)
    np.testing.assert_allclose(y.asnumpy(), [2.5])
