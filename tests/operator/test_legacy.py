"""Legacy OperatorProperty / Operator: every interface of "Operators in MXNet", as attributes."""

from __future__ import annotations

import re
import runpy
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy.attrs import FInplaceOption, FListInputNames, FMutateInputs, FNumVisibleOutputs
from nnvmpy.base import EngineError, InferError, NNVMError, ParamError
from nnvmpy.operator import Operator, OperatorProperty, assign, register_op_property
from nnvmpy.resource import ResourceRequest
from nnvmpy.test_utils import check_numeric_gradient

pytestmark = pytest.mark.usefixtures("scoped_registry")

ROOT = Path(__file__).resolve().parents[2]
RNG = np.random.default_rng(3)


class Affine(Operator):
    """y = 2x + 1 (elementwise); records how often it was created and what it was given."""

    created = 0
    requested: dict[str, list[Any]] = {}  # resource kinds each pass was given, last call

    def __init__(self, behaviour: str = "") -> None:
        Affine.created += 1
        self.behaviour = behaviour

    def forward(self, ctx, in_data, req, out_data, aux_states):  # type: ignore[no-untyped-def]
        if self.behaviour == "forward":
            raise ValueError("forward exploded")
        Affine.requested["forward"] = [r.kind for r in ctx.requested]
        if ctx.requested:
            tmp = ctx.requested[0].get_space(in_data[0].shape, in_data[0].dtype)
            tmp[...] = 2 * in_data[0]  # the temp space is usable scratch memory
            assign(out_data[0], req[0], tmp + 1)
        else:
            assign(out_data[0], req[0], 2 * in_data[0] + 1)

    def backward(self, ctx, out_grad, in_data, out_data, req, in_grad, aux_states):  # type: ignore[no-untyped-def]
        if self.behaviour == "backward":
            raise ValueError("backward exploded")
        Affine.requested["backward"] = [r.kind for r in ctx.requested]
        assign(in_grad[0], req[0], 2 * out_grad[0])


def affine_prop(**overrides: Any) -> type[OperatorProperty]:
    """An Affine property; keyword arguments replace its methods (bad or optional behaviour)."""

    class Prop(OperatorProperty):
        def declare_backward_dependency(self, out_grad, in_data, out_data):  # type: ignore[no-untyped-def]
            return [out_grad[0]]

        def create_operator(self, ctx: Any) -> Operator:
            return Affine(self._kwargs.get("behaviour", ""))

    for name, fn in overrides.items():
        setattr(Prop, name, fn)
    return Prop


def _bind_chain(op_name: str, shape: tuple[int, ...] = (4, 6), **kwargs: Any) -> Any:
    """x -> negative -> <op> -> negative: the middle op's input and output are pooled."""
    x = nv.sym.Variable("x")
    y = nv.sym.negative(getattr(nv.sym, op_name)(nv.sym.negative(x), name="mid", **kwargs))
    return y.simple_bind(nv.cpu(), x=shape)


def test_the_legacy_fully_connected_example_passes_its_numeric_checks() -> None:
    runpy.run_path(str(ROOT / "examples" / "legacy_fully_connected.py"), run_name="__main__")
    op = nv.Op.get("LegacyFullyConnected")
    attrs = op.parse_attrs({"num_hidden": 3, "no_bias": True})
    assert op.get_attr(FListInputNames)(attrs) == ["data", "weight"]
    assert attrs.parsed.prop.get_params() == {"num_hidden": "3", "no_bias": "True"}
    with pytest.raises(ParamError, match=r"LegacyFullyConnected.*num_hidden"):
        nv.sym.LegacyFullyConnected(nv.sym.Variable("x"))


def test_nd_and_sym_forward_backward_and_finite_differences() -> None:
    register_op_property("legacy_affine", affine_prop())
    x = RNG.normal(size=(3, 4))
    # float32 output: near 0 (2x ~ -1) its rounding is absolute (~1e-7), not relative
    got = nv.nd.legacy_affine(nv.nd.array(x)).asnumpy()
    np.testing.assert_allclose(got, 2 * x + 1, rtol=1e-6, atol=1e-6)
    s = nv.sym.legacy_affine(nv.sym.Variable("x"))
    check_numeric_gradient(s, {"x": x}, numeric_eps=1e-4, rtol=1e-3, dtype=np.float64)


def test_create_operator_runs_once_per_bound_node() -> None:
    register_op_property("legacy_affine", affine_prop())
    x = nv.sym.Variable("x")
    two = nv.sym.legacy_affine(nv.sym.legacy_affine(x))
    Affine.created = 0
    exe = two.simple_bind(nv.cpu(), x=(2, 2))
    assert Affine.created == 2
    for _ in range(3):
        exe.forward(is_train=True, x=np.ones((2, 2), np.float32))
        exe.backward()
    np.testing.assert_allclose(exe.outputs[0].asnumpy(), 7.0)
    np.testing.assert_allclose(exe.grad_dict["x"].asnumpy(), 4.0)
    assert Affine.created == 2  # backward reused each forward node's Operator


class Stats(Operator):
    """y = x - mean; moving_mean (aux) <- 0.5 moving_mean + 0.5 mean(x) when training."""

    def forward(self, ctx, in_data, req, out_data, aux_states):  # type: ignore[no-untyped-def]
        x, moving = in_data[0], aux_states[0]
        mean = x.mean(axis=0)
        assign(out_data[0], req[0], x - mean)
        assign(out_data[1], req[1], np.broadcast_to(mean, x.shape))  # hidden output
        if ctx.is_train:
            moving[...] = 0.5 * moving + 0.5 * mean

    def backward(self, ctx, out_grad, in_data, out_data, req, in_grad, aux_states):  # type: ignore[no-untyped-def]
        dy = out_grad[0]
        assign(in_grad[0], req[0], dy - dy.mean(axis=0))


class StatsProp(OperatorProperty):
    def list_outputs(self) -> list[str]:
        return ["output", "mean"]

    def num_visible_outputs(self) -> int:
        return 1

    def list_auxiliary_states(self) -> list[str]:
        return ["moving_mean"]

    def infer_shape(self, in_shape):  # type: ignore[no-untyped-def]
        return in_shape, [in_shape[0], in_shape[0]], [in_shape[0][1:]]

    def declare_backward_dependency(self, out_grad, in_data, out_data):  # type: ignore[no-untyped-def]
        return [out_grad[0]]

    def create_operator(self, ctx: Any) -> Operator:
        return Stats()


def test_aux_states_are_trailing_inputs_updated_in_place_and_hidden_outputs_stay_hidden() -> None:
    op = register_op_property("legacy_stats", StatsProp)
    attrs = op.parse_attrs({})
    assert op.get_attr(FMutateInputs)(attrs) == [1]
    assert op.get_attr(FNumVisibleOutputs)(attrs) == 1
    x = RNG.normal(size=(5, 3))
    moving = nv.nd.zeros((3,), dtype=np.float64)
    y = nv.nd.legacy_stats(nv.nd.array(x, dtype=np.float64), moving)
    assert isinstance(y, nv.nd.NDArray)  # one visible output
    np.testing.assert_allclose(y.asnumpy(), x - x.mean(0), rtol=1e-6)
    np.testing.assert_allclose(moving.asnumpy(), 0.0)  # not training: untouched

    s = nv.sym.legacy_stats(nv.sym.Variable("x"), name="st")
    assert s.list_outputs() == ["st_output"]
    assert s.list_auxiliary_states() == ["st_moving_mean"]
    assert s.infer_shape(x=(5, 3))[2] == [(3,)]
    exe = s.simple_bind(nv.cpu(), x=(5, 3))
    exe.forward(is_train=True, x=x)
    exe.forward(is_train=True, x=x)
    np.testing.assert_allclose(
        exe.aux_dict["st_moving_mean"].asnumpy(), 0.75 * x.mean(0), rtol=1e-5
    )
    aux = {"st_moving_mean": np.zeros(3)}
    check_numeric_gradient(s, {"x": x}, aux, numeric_eps=1e-4, rtol=1e-3, dtype=np.float64)


def test_requested_resources_reach_forward_and_backward() -> None:
    kinds = [ResourceRequest.kTempSpace, ResourceRequest.kRandom]
    register_op_property(
        "legacy_res",
        affine_prop(
            forward_resource=lambda self, shapes: kinds,
            backward_resource=lambda self, shapes: [ResourceRequest.kTempSpace],
        ),
    )
    exe = nv.sym.legacy_res(nv.sym.Variable("x"), name="r").simple_bind(nv.cpu(), x=(2, 3))
    Affine.requested.clear()
    exe.forward(is_train=True, x=np.ones((2, 3), np.float32))
    exe.backward()
    np.testing.assert_allclose(exe.outputs[0].asnumpy(), 3.0)  # computed in the temp space
    np.testing.assert_allclose(exe.grad_dict["x"].asnumpy(), 2.0)
    assert Affine.requested == {"forward": kinds, "backward": [ResourceRequest.kTempSpace]}
    Affine.requested.clear()
    np.testing.assert_allclose(nv.nd.legacy_res(nv.nd.ones((2,))).asnumpy(), 3.0)
    assert Affine.requested == {"forward": kinds}


def test_inplace_hints_change_the_plan_but_not_the_results() -> None:
    register_op_property("legacy_plain", affine_prop())
    register_op_property(
        "legacy_inplace",
        affine_prop(
            forward_inplace_option=lambda self, in_data, out_data: [(in_data[0], out_data[0])],
            backward_inplace_option=lambda self, og, ind, od, ig: [(og[0], ig[0])],
        ),
    )
    op = nv.Op.get("legacy_inplace")
    assert op.get_attr(FInplaceOption)(op.parse_attrs({})) == [(0, 0)]
    x = RNG.normal(size=(4, 6)).astype(np.float32)
    dy = RNG.normal(size=(4, 6)).astype(np.float32)
    results = []
    for name in ("legacy_plain", "legacy_inplace"):
        exe = _bind_chain(name)
        exe.forward(is_train=True, x=x)
        exe.backward([dy])
        results.append((exe.outputs[0].asnumpy(), exe.grad_dict["x"].asnumpy(), exe.debug_str()))
    (y0, g0, plan0), (y1, g1, plan1) = results
    np.testing.assert_allclose(y0, -(2 * -x + 1), rtol=1e-6)
    np.testing.assert_array_equal(y0, y1)
    np.testing.assert_array_equal(g0, g1)
    assert "inplace" not in plan0
    assert "inplace(input 0)" in plan1


def _storage_of(plan: str, node: str) -> str:
    """The storage tag of output 0 of `node` in an Executor.debug_str()."""
    block = plan.split(f"Name={node}\n", 1)[1]
    return re.search(r"out\[0\][^\n]*storage=(\S+)", block).group(1)  # type: ignore[union-attr]


@pytest.mark.parametrize("plan_layout", ["blocks", "arena"])
@pytest.mark.parametrize("keeps_output", [False, True])
def test_an_output_backward_does_not_declare_is_freed_before_backward(
    keeps_output: bool, plan_layout: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    deps = (lambda s, og, i, o: [og[0], *o]) if keeps_output else (lambda s, og, i, o: [og[0]])
    register_op_property("legacy_dep", affine_prop(declare_backward_dependency=deps))
    x = nv.sym.Variable("x")
    monkeypatch.setenv("NNVMPY_MEMORY_PLAN", plan_layout)
    exe = nv.sym.negative(nv.sym.legacy_dep(x, name="mid"), name="neg").simple_bind(
        nv.cpu(), x=(16, 16)
    )
    plan = exe.debug_str()
    mid_inputs = plan.split("Name=mid_backward\n", 1)[1].split("Outputs:")[0]
    reused = _storage_of(plan, "mid") == _storage_of(plan, "neg_backward")
    if keeps_output:  # mid's output is a backward input, so its memory stays reserved
        assert "=mid storage" in mid_inputs
        assert not reused
    else:  # read only by neg: freed after it and reused for neg's gradient
        assert "=mid storage" not in mid_inputs
        assert reused or plan_layout == "arena"  # the arena: other block, same bytes
    sizes = {True: 2 * 16 * 16 * 4, False: 16 * 16 * 4}
    assert exe.storage_bytes == sizes[keeps_output]
    exe.forward(is_train=True, x=np.ones((16, 16), np.float32))
    exe.backward([np.ones((16, 16), np.float32)])
    np.testing.assert_allclose(exe.grad_dict["x"].asnumpy(), -2.0)


# -- errors name the op; the system keeps working ----------------------------------------------


def _check_usable() -> None:
    register_op_property("legacy_ok", affine_prop())
    exe = nv.sym.legacy_ok(nv.sym.Variable("x")).simple_bind(nv.cpu(), x=(2,))
    exe.forward(is_train=True, x=np.array([1.0, 2.0], np.float32))
    exe.backward()
    np.testing.assert_allclose(exe.outputs[0].asnumpy(), [3.0, 5.0])
    np.testing.assert_allclose(exe.grad_dict["x"].asnumpy(), [2.0, 2.0])


@pytest.mark.parametrize("where", ["forward", "backward"])
def test_exceptions_in_operator_calls_surface_at_wait_naming_the_op(where: str) -> None:
    register_op_property("legacy_bad", affine_prop())
    exe = nv.sym.legacy_bad(nv.sym.Variable("x"), behaviour=where).simple_bind(nv.cpu(), x=(2,))
    exe.forward(is_train=True, x=np.ones(2, np.float32))
    exe.backward()
    out = exe.outputs[0] if where == "forward" else exe.grad_dict["x"]
    with pytest.raises(EngineError, match=f"legacy_bad: Operator.{where} raised ValueError"):
        out.asnumpy()
    _check_usable()


def _raise(*args: Any) -> Any:
    raise RuntimeError("user code exploded")


@pytest.mark.parametrize(
    ("overrides", "error", "message"),
    [
        ({"infer_shape": _raise}, NNVMError, "legacy_bad: infer_shape raised RuntimeError"),
        ({"create_operator": _raise}, NNVMError, "legacy_bad: create_operator raised Runtime"),
        ({"list_arguments": _raise}, NNVMError, "legacy_bad: list_arguments\\(\\) raised"),
        (
            {"infer_shape": lambda self, s: (s, [s[0], s[0]], [])},
            NNVMError,
            "legacy_bad: infer_shape returned 2 output shapes, expected 1",
        ),
        ({"infer_shape": lambda self, s: (s, [("a",)], [])}, InferError, "legacy_bad.*output"),
        ({"infer_shape": lambda self, s: ([(3,)], [(2,)], [])}, InferError, "legacy_bad.*'data'"),
        ({"num_outputs": lambda self: 2}, NNVMError, "legacy_bad: num_outputs\\(\\) is 2"),
        (
            {"declare_backward_dependency": lambda self, og, i, o: [42]},
            NNVMError,
            "legacy_bad: declare_backward_dependency returned unknown ids \\[42\\]",
        ),
    ],
)
def test_bad_property_callbacks_raise_errors_naming_the_op(
    overrides: dict[str, Any], error: type, message: str
) -> None:
    register_op_property("legacy_bad", affine_prop(**overrides))
    with pytest.raises(error, match=message):
        nv.sym.legacy_bad(nv.sym.Variable("x")).simple_bind(nv.cpu(), x=(2,))
    with pytest.raises(error, match=message):
        nv.nd.legacy_bad(nv.nd.ones((2,)))
    _check_usable()


def test_register_op_property_needs_a_property_class() -> None:
    with pytest.raises(NNVMError, match="legacy_x: register_op_property expects"):
        register_op_property("legacy_x", object)  # type: ignore[arg-type]
