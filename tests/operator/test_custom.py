"""Python CustomOp / CustomOpProp: nd and sym, gradients, aux states, errors, threads, fork."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy.base import EngineError, InferError, NNVMError
from nnvmpy.engine import ThreadedEngine, engine_type
from nnvmpy.operator import CustomOp, CustomOpProp, register
from nnvmpy.test_utils import check_numeric_gradient, check_symbolic_backward

ROOT = Path(__file__).resolve().parents[2]
RNG = np.random.default_rng(7)


# -- custom ops used below (op_type names are global: keep them unique to this file) --------


class Cube(CustomOp):
    """y = x^3 with nd ops only (no .asnumpy()); dx = dy * 3x^2."""

    def forward(self, is_train, req, in_data, out_data, aux):  # type: ignore[no-untyped-def]
        x = in_data[0]
        self.assign(out_data[0], req[0], x * x * x)

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):  # type: ignore[no-untyped-def]
        x = in_data[0]
        self.assign(in_grad[0], req[0], out_grad[0] * x * x * 3.0)


@register("t_cube")
class CubeProp(CustomOpProp):
    def declare_backward_dependency(self, out_grad, in_data, out_data):  # type: ignore[no-untyped-def]
        return [out_grad[0], in_data[0]]  # y is not needed

    def create_operator(self, ctx, shapes, dtypes):  # type: ignore[no-untyped-def]
        return Cube()


class Scale(CustomOp):
    """y = factor * x computed in NumPy (.asnumpy() inside forward); counts calls in aux."""

    def __init__(self, factor: float) -> None:
        self.factor = factor

    def forward(self, is_train, req, in_data, out_data, aux):  # type: ignore[no-untyped-def]
        self.assign(out_data[0], req[0], nv.nd.array(in_data[0].asnumpy() * self.factor))
        if is_train:
            self.assign(aux[0], "write", aux[0] + 1.0)

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):  # type: ignore[no-untyped-def]
        assert in_data[0] is None
        assert out_data[0] is None
        self.assign(in_grad[0], req[0], out_grad[0] * self.factor)


@register("t_scale")
class ScaleProp(CustomOpProp):
    seen_types: list[type] = []

    def __init__(self, factor: Any = "1") -> None:
        super().__init__(need_top_grad=True)
        ScaleProp.seen_types.append(type(factor))
        self.factor = float(factor)

    def list_auxiliary_states(self) -> list[str]:
        return ["calls"]

    def infer_shape(self, in_shape):  # type: ignore[no-untyped-def]
        return in_shape, [in_shape[0]], [(1,)]

    def declare_backward_dependency(self, out_grad, in_data, out_data):  # type: ignore[no-untyped-def]
        return [out_grad[0]]

    def create_operator(self, ctx, shapes, dtypes):  # type: ignore[no-untyped-def]
        return Scale(self.factor)


class Sleepy(CustomOp):
    """Records when forward starts and ends; meets the other forward at a barrier between.

    Run one after the other, the first forward would wait at the barrier for the second
    and time out; run at the same time, both pass it (no timing threshold involved).
    """

    log: list[tuple[str, float, float]] = []
    barrier = threading.Barrier(2, timeout=30)

    def forward(self, is_train, req, in_data, out_data, aux):  # type: ignore[no-untyped-def]
        start = time.perf_counter()
        Sleepy.barrier.wait()
        time.sleep(0.05)  # blocking, with the GIL released
        self.assign(out_data[0], req[0], in_data[0] + 1.0)
        Sleepy.log.append((threading.current_thread().name, start, time.perf_counter()))


@register("t_sleepy")
class SleepyProp(CustomOpProp):
    def create_operator(self, ctx, shapes, dtypes):  # type: ignore[no-untyped-def]
        return Sleepy()


class Failing(CustomOp):
    def __init__(self, where: str) -> None:
        self.where = where

    def forward(self, is_train, req, in_data, out_data, aux):  # type: ignore[no-untyped-def]
        if self.where == "forward":
            raise ValueError("forward exploded")
        self.assign(out_data[0], req[0], in_data[0] * 2.0)

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):  # type: ignore[no-untyped-def]
        raise ValueError("backward exploded")


@register("t_failing")
class FailingProp(CustomOpProp):
    def __init__(self, where: str = "forward") -> None:
        super().__init__()
        self.where = where

    def infer_shape(self, in_shape):  # type: ignore[no-untyped-def]
        if self.where == "infer_shape":
            raise RuntimeError("infer_shape exploded")
        if self.where == "wrong_count":
            return in_shape, [in_shape[0], in_shape[0]], []
        if self.where == "wrong_shape":
            return [(99,)], [in_shape[0]], []
        return in_shape, [in_shape[0]], []

    def create_operator(self, ctx, shapes, dtypes):  # type: ignore[no-untyped-def]
        if self.where == "create_operator":
            raise RuntimeError("create_operator exploded")
        return Failing(self.where)


@pytest.fixture
def one_worker() -> Iterator[ThreadedEngine]:
    """The process-wide engine replaced by a ThreadedEngine with a single worker thread."""
    eng = ThreadedEngine(num_workers=1)
    with engine_type(eng):
        yield eng
    eng.shutdown()


def _check_system_usable() -> None:
    """After an error: imperative and symbolic custom ops still run and give right values."""
    x = RNG.normal(size=(3, 4)).astype(np.float32)
    y = nv.nd.Custom(nv.nd.array(x), op_type="t_cube")
    np.testing.assert_allclose(y.asnumpy(), x**3, rtol=1e-5)
    exe = nv.sym.Custom(nv.sym.Variable("x"), op_type="t_cube").simple_bind(nv.cpu(), x=(3, 4))
    np.testing.assert_allclose(exe.forward(x=x)[0].asnumpy(), x**3, rtol=1e-5)


# -- the reference example ---------------------------------------------------------------------


@pytest.mark.timeout(120)
def test_reference_softmax_example_runs_with_a_single_engine_worker() -> None:
    env = dict(os.environ, NNVMPY_CPU_WORKER_NTHREADS="1", NNVMPY_ENGINE_TYPE="ThreadedEngine")
    proc = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "custom_softmax.py")],
        env=env,
        capture_output=True,
        text=True,
        timeout=100,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "forward and backward match NumPy" in proc.stdout


def test_example_text_keeps_the_reference_code() -> None:
    text = (ROOT / "examples" / "custom_softmax.py").read_text()
    assert "import nnvmpy as mx" in text
    assert "l = in_data[1].asnumpy().ravel().astype(int)" in text  # np.int: gone in NumPy 2
    assert "super(SoftmaxProp, self).__init__(need_top_grad=False)" in text
    assert "mlp = mx.symbol.Custom(data=fc3, name='softmax', op_type='softmax')" in text


# -- nd and sym ---------------------------------------------------------------------------------


def test_nd_custom_with_nd_ops_inside(ctx: nv.Context) -> None:
    x = RNG.normal(size=(2, 5)).astype(np.float32)
    y = nv.nd.Custom(nv.nd.array(x, ctx), op_type="t_cube")
    assert y.context == ctx
    np.testing.assert_allclose(y.asnumpy(), x**3, rtol=1e-5)


class Counted(Cube):
    made = 0

    def __init__(self) -> None:
        Counted.made += 1


@register("t_counted")
class CountedProp(CubeProp):
    def create_operator(self, ctx, shapes, dtypes):  # type: ignore[no-untyped-def]
        return Counted()


def test_each_nd_call_creates_one_operator() -> None:
    x = nv.nd.array(RNG.normal(size=(2, 3)).astype(np.float32))
    before = Counted.made
    for _ in range(3):
        nv.nd.Custom(x, op_type="t_counted").wait_to_read()
    assert Counted.made - before == 3


def test_sym_custom_gradient_matches_finite_differences() -> None:
    s = nv.sym.Custom(nv.sym.Variable("x"), op_type="t_cube", name="cube")
    assert s.list_arguments() == ["x"]
    assert s.list_outputs() == ["cube_output"]
    x = RNG.uniform(-1, 1, size=(3, 4))
    check_numeric_gradient(s, {"x": x}, numeric_eps=1e-4, rtol=1e-3, dtype=np.float64)


def test_grad_req_add_accumulates_through_assign() -> None:
    s = nv.sym.Custom(nv.sym.Variable("x"), op_type="t_cube")
    x, dy = RNG.normal(size=(2, 3)), RNG.normal(size=(2, 3))
    check_symbolic_backward(s, {"x": x}, [dy], {"x": dy * 3 * x**2}, rtol=1e-4, grad_req="add")


def test_kwargs_reach_the_prop_as_strings_and_aux_states_update() -> None:
    x = RNG.normal(size=(4,)).astype(np.float32)
    ScaleProp.seen_types.clear()
    calls = nv.nd.zeros((1,))
    y = nv.nd.Custom(nv.nd.array(x), calls, op_type="t_scale", factor=3)
    np.testing.assert_allclose(y.asnumpy(), 3 * x, rtol=1e-6)
    assert ScaleProp.seen_types
    assert set(ScaleProp.seen_types) == {str}
    assert calls.asnumpy().tolist() == [0.0]  # is_train=False: aux untouched

    s = nv.sym.Custom(nv.sym.Variable("x"), op_type="t_scale", factor="2.5", name="sc")
    assert s.list_auxiliary_states() == ["sc_calls"]
    exe = s.simple_bind(nv.cpu(), x=(4,))
    for _ in range(3):
        exe.forward(is_train=True, x=x)
        exe.backward([np.ones(4, np.float32)])
    np.testing.assert_allclose(exe.outputs[0].asnumpy(), 2.5 * x, rtol=1e-6)
    np.testing.assert_allclose(exe.grad_dict["x"].asnumpy(), np.full(4, 2.5), rtol=1e-6)
    assert exe.aux_dict["sc_calls"].asnumpy().tolist() == [3.0]


# -- errors name the op_type, and nothing hangs ---------------------------------------------


@pytest.mark.timeout(60)
def test_exception_in_forward_surfaces_at_the_next_wait() -> None:
    y = nv.nd.Custom(nv.nd.ones((2, 2)), op_type="t_failing", where="forward")
    with pytest.raises(EngineError, match=r"t_failing.*forward exploded") as info:
        y.asnumpy()
    assert isinstance(info.value.__cause__, NNVMError)
    _check_system_usable()


@pytest.mark.timeout(60)
def test_exception_in_backward_surfaces_at_the_next_wait() -> None:
    s = nv.sym.Custom(nv.sym.Variable("x"), op_type="t_failing", where="backward")
    exe = s.simple_bind(nv.cpu(), x=(2, 2))
    exe.forward(is_train=True, x=np.ones((2, 2), np.float32))
    np.testing.assert_allclose(exe.outputs[0].asnumpy(), 2.0)
    exe.backward()
    with pytest.raises(EngineError, match=r"t_failing.*backward exploded"):
        exe.grad_dict["x"].asnumpy()
    _check_system_usable()


@pytest.mark.parametrize(
    ("where", "error", "message"),
    [
        ("infer_shape", NNVMError, "t_failing.*infer_shape raised RuntimeError"),
        ("wrong_count", NNVMError, "t_failing.*returned 2 output shapes, expected 1"),
        ("wrong_shape", InferError, "t_failing.*input 'data' has shape \\(2, 2\\)"),
        ("create_operator", NNVMError, "t_failing.*create_operator raised RuntimeError"),
    ],
)
def test_bad_callbacks_raise_errors_naming_the_op_type(
    where: str, error: type, message: str
) -> None:
    with pytest.raises(error, match=message):
        nv.nd.Custom(nv.nd.ones((2, 2)), op_type="t_failing", where=where)
    s = nv.sym.Custom(nv.sym.Variable("x"), op_type="t_failing", where=where)
    with pytest.raises(error, match=message):
        s.simple_bind(nv.cpu(), x=(2, 2))
    _check_system_usable()


def test_unknown_op_type_lists_the_registered_ones() -> None:
    with pytest.raises(NNVMError, match=r"'t_nope' is not registered.*t_cube"):
        nv.nd.Custom(nv.nd.ones((2,)), op_type="t_nope")
    with pytest.raises(NNVMError, match="op_type argument is required"):
        nv.sym.Custom(nv.sym.Variable("x"))


# -- threads: one worker, concurrency, fork ---------------------------------------------------


class Nested(CustomOp):
    """forward/backward push engine ops, wait on them, and call another custom op."""

    def forward(self, is_train, req, in_data, out_data, aux):  # type: ignore[no-untyped-def]
        x = in_data[0]
        doubled = (x * 2.0).asnumpy()  # an engine op, then a wait, on the callback thread
        inner = nv.nd.Custom(nv.nd.array(doubled, dtype=x.dtype), op_type="t_cube")  # 8x^3
        self.assign(out_data[0], req[0], inner + x)

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):  # type: ignore[no-untyped-def]
        x = in_data[0].asnumpy()
        grad = out_grad[0].asnumpy() * (24.0 * x * x + 1.0)
        self.assign(in_grad[0], req[0], nv.nd.array(grad, dtype=grad.dtype))


@register("t_nested")
class NestedProp(CustomOpProp):
    def create_operator(self, ctx, shapes, dtypes):  # type: ignore[no-untyped-def]
        return Nested()


@pytest.mark.timeout(60)
def test_nested_engine_calls_work_with_a_single_worker(one_worker: ThreadedEngine) -> None:
    x = RNG.uniform(-1, 1, size=(3, 2))
    y = nv.nd.Custom(nv.nd.array(x), op_type="t_nested")
    np.testing.assert_allclose(y.asnumpy(), 8 * x**3 + x, rtol=1e-5)
    s = nv.sym.Custom(nv.sym.Variable("x"), op_type="t_nested")
    check_numeric_gradient(s, {"x": x}, numeric_eps=1e-4, rtol=1e-3, dtype=np.float64)


@pytest.mark.timeout(60)
def test_independent_custom_ops_run_at_the_same_time(one_worker: ThreadedEngine) -> None:
    Sleepy.log.clear()
    Sleepy.barrier.reset()
    a = nv.nd.Custom(nv.nd.zeros((2,)), op_type="t_sleepy")
    b = nv.nd.Custom(nv.nd.ones((2,)), op_type="t_sleepy")
    assert a.asnumpy().tolist() == [1.0, 1.0]
    assert b.asnumpy().tolist() == [2.0, 2.0]
    (name_a, start_a, end_a), (name_b, start_b, end_b) = Sleepy.log
    assert name_a != name_b  # two callback threads
    assert start_b < end_a
    assert start_a < end_b


@pytest.mark.timeout(60)
def test_custom_ops_work_in_a_forked_child(run_in_child) -> None:
    x = RNG.normal(size=(2, 3)).astype(np.float32)
    np.testing.assert_allclose(
        nv.nd.Custom(nv.nd.array(x), op_type="t_nested").asnumpy(), 8 * x**3 + x, rtol=1e-5
    )  # engine and callback threads started

    def child() -> bool:
        y = nv.nd.Custom(nv.nd.array(x), op_type="t_nested").asnumpy()
        z = nv.nd.Custom(nv.nd.array(x), calls := nv.nd.zeros((1,)), op_type="t_scale")
        ok = np.allclose(y, 8 * x**3 + x, rtol=1e-5) and np.allclose(z.asnumpy(), x)
        return bool(ok and calls.asnumpy()[0] == 0)

    assert run_in_child(child) == 0
    _check_system_usable()


def test_a_custom_node_survives_a_json_round_trip() -> None:
    s = nv.sym.Custom(nv.sym.Variable("x"), op_type="t_scale", factor="4", name="sc")
    loaded = nv.sym.load_json(s.tojson())
    assert loaded.list_auxiliary_states() == ["sc_calls"]
    exe = loaded.simple_bind(nv.cpu(), x=(3,))
    np.testing.assert_allclose(exe.forward(x=np.ones(3, np.float32))[0].asnumpy(), 4.0)
