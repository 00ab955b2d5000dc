"""The "Custom Operator" category: a CustomOp's Python callbacks and what they push.

MXNet 1.9.1's test_profiler.py (test_custom_operator_profiling*, held back) asserts what
dumps(format='json') holds after a custom op ran imperatively with autograd, and after two
custom ops ran imperatively and symbolically, on every engine: '<op_type>::pure_python'
for forward, '_backward_<op_type>::pure_python' for backward, '<op_type>::<op>' for the nd
ops the callback called ('MySigmoid::_zeros', 'MyAdd1::_plus_scalar'). Those assertions
are here, on every engine, plus what MXNet's tests leave out: the values the ops computed
(NumPy), the callback's span against a sleep of known length inside it, and where the
events sit in the trace.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy import autograd, engine, profiler
from nnvmpy.operator import CustomOp, CustomOpProp, register

ENGINES = sorted(engine.ENGINE_TYPES)
NAP_S = 0.02  # MySigmoid.forward sleeps this long: its pure_python span must cover it


class Sigmoid(CustomOp):
    """MXNet's test op: y = 1 / (1 + e^-x) in NumPy; dx = dy * y * (1 - y)."""

    def forward(self, is_train, req, in_data, out_data, aux):  # type: ignore[no-untyped-def]
        x = in_data[0].asnumpy()
        self.assign(out_data[0], req[0], nv.nd.array(1.0 / (1.0 + np.exp(-x))))
        nv.nd.zeros(shape=(100, 100))  # an nd op inside: 'MySigmoid::_zeros'
        time.sleep(NAP_S)

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):  # type: ignore[no-untyped-def]
        y = out_data[0].asnumpy()
        dy = out_grad[0].asnumpy()
        self.assign(in_grad[0], req[0], nv.nd.array(dy * (1.0 - y) * y))


@register("MySigmoid")
class SigmoidProp(CustomOpProp):
    def infer_shape(self, in_shape):  # type: ignore[no-untyped-def]
        return (in_shape[0],), (in_shape[0],), ()

    def create_operator(self, ctx, in_shapes, in_dtypes):  # type: ignore[no-untyped-def]
        return Sigmoid()


class AddOne(CustomOp):
    """y = x + 1 with an nd op (a (100, 100) array: pushed to an engine worker)."""

    def forward(self, is_train, req, in_data, out_data, aux):  # type: ignore[no-untyped-def]
        self.assign(out_data[0], req[0], in_data[0] + 1)

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):  # type: ignore[no-untyped-def]
        self.assign(in_grad[0], req[0], out_grad[0])


@register("MyAdd1")
class AddOneProp(CustomOpProp):
    def create_operator(self, ctx, shapes, dtypes):  # type: ignore[no-untyped-def]
        return AddOne()


@register("MyAdd2")
class AddOneAgainProp(AddOneProp):
    pass


class Broken(CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):  # type: ignore[no-untyped-def]
        raise ValueError("no luck")


@register("prof_broken")
class BrokenProp(CustomOpProp):
    def create_operator(self, ctx, shapes, dtypes):  # type: ignore[no-untyped-def]
        return Broken()


def _start(trace_file: Path) -> None:
    """MXNet's enable_profiler(..., continuous_dump=True, aggregate_stats=True)."""
    profiler.set_config(
        profile_symbolic=True,
        profile_imperative=True,
        profile_memory=True,
        profile_api=True,
        filename=str(trace_file),
        continuous_dump=True,
        aggregate_stats=True,
    )
    profiler.set_state("run")
    profiler.dumps(reset=True)


def _stats() -> dict[str, Any]:
    return json.loads(profiler.dumps(format="json"))["Time"]


@pytest.mark.parametrize("name", ENGINES)
def test_custom_op_callbacks_and_their_ops_are_custom_operator_rows(
    fresh_profiler: Path, name: str
) -> None:
    x_np = np.array([0.0, 1.0, 2.0, 3.0], np.float32)
    with engine.engine_type(name):
        x = nv.nd.array(x_np)
        x.attach_grad()  # its zeros come before the statistics start
        _start(fresh_profiler)
        before = time.perf_counter()
        with autograd.record():
            y = nv.nd.Custom(x, op_type="MySigmoid")
        y.backward()
        nv.nd.waitall()
        wall_ms = (time.perf_counter() - before) * 1e3
        profiler.dump(False)
        stats = _stats()
        profiler.set_state("stop")
    custom = stats["Custom Operator"]
    # MXNet's assertions
    assert {"MySigmoid::pure_python", "_backward_MySigmoid::pure_python"} <= set(custom)
    assert "MySigmoid::_zeros" in custom
    # and what they leave out
    forward = custom["MySigmoid::pure_python"]
    assert forward["Count"] == 1
    assert NAP_S * 1e3 <= forward["Total"] <= wall_ms
    assert custom["_backward_MySigmoid::pure_python"]["Count"] == 1
    assert custom["MySigmoid::_zeros"]["Count"] == 1
    assert "_zeros" not in stats["operator"]  # counted once, under the custom op
    assert not [n for n in stats["operator"] if "op_type=" in n]  # the hand-off is not a row
    y_np = 1.0 / (1.0 + np.exp(-x_np))
    np.testing.assert_allclose(y.asnumpy(), y_np, rtol=1e-6)
    np.testing.assert_allclose(x.grad.asnumpy(), y_np * (1.0 - y_np), rtol=1e-6)


def test_trace_shows_callbacks_on_their_thread_and_their_ops_on_the_device(
    fresh_profiler: Path,
) -> None:
    _start(fresh_profiler)
    x = nv.nd.array([0.5, -0.5])
    x.attach_grad()
    with autograd.record():
        y = nv.nd.Custom(x, op_type="MySigmoid")
    y.backward()
    nv.nd.waitall()
    profiler.set_state("stop")
    profiler.dump()
    events = json.loads(fresh_profiler.read_text())["traceEvents"]
    procs = {e["pid"]: e["args"]["name"] for e in events if e["name"] == "process_name"}
    rows = {(e["pid"], e["tid"]): e["args"]["name"] for e in events if e["name"] == "thread_name"}
    custom = {e["name"]: e for e in events if e.get("cat") == "Custom Operator"}
    fwd, bwd = custom["MySigmoid::pure_python"], custom["_backward_MySigmoid::pure_python"]
    assert procs[fwd["pid"]] == procs[bwd["pid"]] == "Custom Operator"
    assert rows[(fwd["pid"], fwd["tid"])].startswith("nnvmpy-custom-")  # the callback thread
    assert fwd["dur"] >= NAP_S * 1e6
    assert fwd["ts"] + fwd["dur"] <= bwd["ts"]  # backward ran after forward
    zeros = custom["MySigmoid::_zeros"]
    assert procs[zeros["pid"]] == "cpu/0"
    assert zeros["ph"] == "X"
    # the Custom node itself is one operation spanning its callback
    (node,) = [e for e in events if e.get("cat") == "operator" and e["name"] == "Custom"]
    assert node["ts"] <= fwd["ts"]
    assert fwd["ts"] + fwd["dur"] <= node["ts"] + node["dur"]


@pytest.mark.parametrize("name", ENGINES)
@pytest.mark.parametrize("mode", ["imperative", "symbolic"])
def test_two_custom_ops_each_get_their_rows(fresh_profiler: Path, name: str, mode: str) -> None:
    with engine.engine_type(name):
        _start(fresh_profiler)
        inp = nv.nd.zeros(shape=(100, 100))
        if mode == "imperative":
            y = nv.nd.Custom(inp, op_type="MyAdd1")
            z = nv.nd.Custom(inp, op_type="MyAdd2")
        else:
            a = nv.sym.Variable("a")
            b = nv.sym.Custom(data=a, op_type="MyAdd1")
            c = nv.sym.Custom(data=a, op_type="MyAdd2")
            y = b.bind(nv.cpu(), {"a": inp}).forward()[0]
            z = c.bind(nv.cpu(), {"a": inp}).forward()[0]
        nv.nd.waitall()
        profiler.dump(False)
        stats = _stats()
        profiler.set_state("stop")
    custom = stats["Custom Operator"]
    for op_type in ("MyAdd1", "MyAdd2"):  # MXNet's assertions
        assert custom[f"{op_type}::pure_python"]["Count"] == 1
        assert custom[f"{op_type}::_plus_scalar"]["Count"] == 1
    assert "_plus_scalar" not in stats["operator"]
    np.testing.assert_array_equal(y.asnumpy(), np.ones((100, 100)))
    np.testing.assert_array_equal(z.asnumpy(), np.ones((100, 100)))
    events = json.loads(fresh_profiler.read_text())["traceEvents"]  # dump(False) wrote it
    names = {e["name"] for e in events if e.get("cat") == "Custom Operator"}
    assert {"MyAdd1::_plus_scalar", "MyAdd2::pure_python"} <= names


def test_callbacks_outside_the_profiler_record_nothing_and_still_work(
    fresh_profiler: Path,
) -> None:
    profiler.set_config(filename=str(fresh_profiler), aggregate_stats=True)
    y = nv.nd.Custom(nv.nd.zeros((3,)), op_type="MyAdd1")  # profiler stopped
    nv.nd.waitall()  # operations are recorded when they run, not when pushed
    profiler.set_state("run")
    profiler.pause()
    z = nv.nd.Custom(y, op_type="MyAdd2")  # paused
    nv.nd.waitall()
    profiler.resume()
    assert "Custom Operator" not in _stats()
    w = nv.nd.Custom(z, op_type="MyAdd1")
    nv.nd.waitall()
    assert _stats()["Custom Operator"]["MyAdd1::pure_python"]["Count"] == 1
    np.testing.assert_array_equal(w.asnumpy(), [3, 3, 3])


def test_a_failing_callback_is_still_timed_and_the_profiler_goes_on(
    fresh_profiler: Path,
) -> None:
    _start(fresh_profiler)
    out = nv.nd.Custom(nv.nd.zeros((2,)), op_type="prof_broken")
    with pytest.raises(nv.NNVMError, match=r"prof_broken.*forward raised ValueError: no luck"):
        out.asnumpy()
    ok = nv.nd.Custom(nv.nd.zeros((2,)), op_type="MyAdd1")
    np.testing.assert_array_equal(ok.asnumpy(), [1, 1])
    custom = _stats()["Custom Operator"]
    assert custom["prof_broken::pure_python"]["Count"] == 1
    assert custom["MyAdd1::_plus_scalar"]["Count"] == 1  # scope reset after the failure


def test_a_custom_op_on_each_device_is_profiled_there(
    fresh_profiler: Path, ctx: nv.Context
) -> None:
    _start(fresh_profiler)
    y = nv.nd.Custom(nv.nd.zeros((4,), ctx), op_type="MyAdd1")
    np.testing.assert_array_equal(y.asnumpy(), [1, 1, 1, 1])
    profiler.set_state("stop")
    assert _stats()["Custom Operator"]["MyAdd1::_plus_scalar"]["Count"] == 1
    profiler.dump()
    events = json.loads(fresh_profiler.read_text())["traceEvents"]
    procs = {e["pid"]: e["args"]["name"] for e in events if e["name"] == "process_name"}
    (add,) = [e for e in events if e["name"] == "MyAdd1::_plus_scalar"]
    assert procs[add["pid"]] == f"{ctx.device_type}/{ctx.device_id}"
