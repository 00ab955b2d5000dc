"""Failures inside pushed functions: stored, propagated, reported once, engine still works."""

from __future__ import annotations

import threading
import time

import pytest

from nnvmpy.base import EngineError, NNVMError, cpu
from nnvmpy.engine import Engine, OnComplete, RunContext

CTX = cpu()


def _boom(rc: RunContext) -> None:
    raise ValueError("boom")


def test_wait_for_var_reraises_with_the_op_name(engine: Engine) -> None:
    v = engine.new_var()
    engine.push_sync(_boom, CTX, [], [v], name="exploding_op")
    with pytest.raises(EngineError, match="exploding_op") as info:
        engine.wait_for_var(v)
    assert isinstance(info.value.__cause__, ValueError)
    assert "boom" in str(info.value)


def test_unnamed_op_is_reported_by_its_function_name(engine: Engine) -> None:
    v = engine.new_var()
    engine.push_sync(_boom, CTX, [], [v])
    with pytest.raises(EngineError, match="_boom"):
        engine.wait_for_var(v)


def test_failure_propagates_to_dependents_which_do_not_run(engine: Engine) -> None:
    a, b, c, free = (engine.new_var() for _ in range(4))
    ran: list[str] = []
    engine.push_sync(_boom, CTX, [], [a], name="source")
    engine.push_sync(lambda rc: ran.append("reader"), CTX, [a], [b], name="reader")
    engine.push_sync(lambda rc: ran.append("chained"), CTX, [b], [c], name="chained")
    engine.push_sync(lambda rc: ran.append("writer"), CTX, [], [a], name="writer")
    engine.push_sync(lambda rc: ran.append("free"), CTX, [], [free], name="free")
    engine.wait_for_var(free)
    with pytest.raises(EngineError, match="'source'") as info:
        engine.wait_for_var(c)
    assert isinstance(info.value.__cause__, ValueError)
    engine.wait_for_all()  # every holder shared the one failure, now reported
    assert ran == ["free"]


def test_engine_keeps_working_after_a_failure(engine: Engine) -> None:
    v, w = engine.new_var(), engine.new_var()
    data: dict[str, int] = {}
    engine.push_sync(_boom, CTX, [], [v], name="bad")
    with pytest.raises(EngineError):
        engine.wait_for_var(v)
    # Reported: v is clean again, and writes and reads of it run normally.
    engine.push_sync(lambda rc: data.__setitem__("v", 3), CTX, [], [v])
    engine.push_sync(lambda rc: data.__setitem__("w", data["v"] * 5), CTX, [v], [w])
    engine.wait_for_var(w)
    engine.wait_for_all()
    assert data == {"v": 3, "w": 15}


def test_wait_for_all_raises_the_first_unreported_failure_once(engine: Engine) -> None:
    v, w = engine.new_var(), engine.new_var()

    def bad_type(rc: RunContext) -> None:
        raise TypeError("second")

    engine.push_sync(_boom, CTX, [], [v], name="first_bad")
    # "first" is the first failure stored: independent functions finish in any order on a
    # threaded engine, so let first_bad fail (without reporting it) before pushing the other
    assert engine.quiesce(30)
    engine.push_sync(bad_type, CTX, [], [w], name="second_bad")
    with pytest.raises(EngineError, match="first_bad") as info:
        engine.wait_for_all()
    assert isinstance(info.value.__cause__, ValueError)
    engine.wait_for_all()  # all stored failures were reported
    engine.wait_for_var(v)
    engine.wait_for_var(w)


def test_failure_reported_by_wait_for_var_is_not_reported_again(engine: Engine) -> None:
    v = engine.new_var()
    engine.push_sync(_boom, CTX, [], [v], name="once")
    with pytest.raises(EngineError, match="once"):
        engine.wait_for_var(v)
    engine.wait_for_var(v)
    engine.wait_for_all()


def test_on_complete_with_an_exception_marks_failure(engine: Engine) -> None:
    v = engine.new_var()

    def start(rc: RunContext, on_complete: OnComplete) -> None:
        threading.Thread(target=on_complete, args=(KeyError("late"),)).start()

    engine.push_async(start, CTX, [], [v], name="async_fail")
    with pytest.raises(EngineError, match="async_fail") as info:
        engine.wait_for_var(v)
    assert isinstance(info.value.__cause__, KeyError)


def test_async_function_raising_before_on_complete_fails(engine: Engine) -> None:
    v = engine.new_var()

    def start(rc: RunContext, on_complete: OnComplete) -> None:
        raise RuntimeError("no callback")

    engine.push_async(start, CTX, [], [v], name="async_raise")
    with pytest.raises(EngineError, match="async_raise"):
        engine.wait_for_var(v)


def test_async_function_raising_after_on_complete_is_reported_once_by_wait_for_all(
    engine: Engine,
) -> None:
    """The op completed cleanly, so its variable holds no failure; the late error is kept
    as unreported and the next wait_for_all that sees it raises it, once."""
    v = engine.new_var()
    raised = threading.Event()

    def start(rc: RunContext, on_complete: OnComplete) -> None:
        on_complete()
        try:
            raise RuntimeError("after the callback")
        finally:
            raised.set()

    engine.push_async(start, CTX, [], [v], name="late_raise")
    assert raised.wait(30)
    engine.wait_for_var(v)  # the variable was completed before the raise: no failure on it
    reported: list[EngineError] = []
    deadline = time.monotonic() + 30
    while not reported:  # the worker records the error just after `raised` is set
        try:
            engine.wait_for_all()
        except EngineError as e:
            reported.append(e)
        assert time.monotonic() < deadline, "the late failure was never reported"
        time.sleep(0.01)
    assert "late_raise" in str(reported[0])
    assert isinstance(reported[0].__cause__, RuntimeError)
    engine.wait_for_all()  # reported once
    ran: list[int] = []
    engine.push_sync(lambda rc: ran.append(1), CTX, [], [v])
    engine.wait_for_var(v)
    assert ran == [1]


def test_nnvm_errors_keep_their_type_reachable(engine: Engine) -> None:
    v = engine.new_var()

    def bad(rc: RunContext) -> None:
        raise NNVMError("kernel said no")

    engine.push_sync(bad, CTX, [], [v], name="kernel")
    with pytest.raises(NNVMError, match="kernel said no") as info:
        engine.wait_for_var(v)
    assert type(info.value.__cause__) is NNVMError


def test_delete_variable_runs_even_when_the_var_holds_a_failure(engine: Engine) -> None:
    v = engine.new_var()
    freed: list[bool] = []
    engine.push_sync(_boom, CTX, [], [v], name="bad")
    engine.delete_variable(lambda rc: freed.append(True), CTX, v)
    with pytest.raises(EngineError, match="bad"):
        engine.wait_for_all()
    assert freed == [True]


@pytest.mark.parametrize("later", ["NaiveEngine", "ThreadedEngine", "ThreadedEnginePerDevice"])
def test_a_failure_reported_by_one_engine_does_not_skip_pushes_of_the_next(later: str) -> None:
    """A shared variable (a device's scratch space) keeps the failure of an op that ran on
    the threaded engine after it was reported; an engine switched to later must still run
    the pushes that use it (the naive engine, and then a new threaded one numbering its
    pushes from 1, once skipped them, silently leaving outputs unwritten)."""
    from nnvmpy.engine import engine_type

    with engine_type("ThreadedEngine") as threaded:
        shared = threaded.new_var()
        for _ in range(3):  # the failing engine's numbers run ahead of the next one's
            threaded.push_sync(lambda rc: None, CTX, [], [threaded.new_var()])
        threaded.push_sync(_boom, CTX, [], [shared], name="failed_before")
        with pytest.raises(EngineError, match="failed_before"):
            threaded.wait_for_all()
    with engine_type(later) as next_engine:
        ran: list[str] = []
        out = next_engine.new_var()
        next_engine.push_sync(lambda rc: ran.append("later"), CTX, [], [shared, out], name="later")
        next_engine.wait_for_var(out)
        next_engine.wait_for_all()
        assert ran == ["later"]


def test_a_scratch_space_failure_leaves_later_engines_computing() -> None:
    """The end-to-end case: an op that failed while holding the CPU scratch space, then a
    network run on a new threaded engine computes (its outputs were zeros, unwritten)."""
    import numpy as np

    import nnvmpy as nv
    from nnvmpy.engine import engine_type
    from nnvmpy.resource import ResourceRequest, get_resource

    _, scratch = get_resource(ResourceRequest.kTempSpace, CTX)
    with engine_type("ThreadedEngine") as first:
        for _ in range(5):
            first.push_sync(lambda rc: None, CTX, [], [first.new_var()])
        first.push_sync(_boom, CTX, [], [scratch], name="scratch_user")
        with pytest.raises(EngineError, match="scratch_user"):
            first.wait_for_all()
    x = nv.sym.Variable("x")
    net = nv.sym.Convolution(x, kernel=(3, 3), num_filter=2, no_bias=True, name="c")
    with engine_type("ThreadedEngine"):
        exe = net.simple_bind(CTX, grad_req="null", x=(1, 1, 4, 4))
        exe.arg_dict["x"][:] = 1.0
        exe.arg_dict["c_weight"][:] = 0.5
        got = exe.forward()[0].asnumpy()
    np.testing.assert_array_equal(got, np.full((1, 2, 2, 2), 4.5, np.float32))


@pytest.mark.parametrize("kind", [IndexError, ValueError, ZeroDivisionError, TypeError])
def test_a_standard_failure_is_raised_as_an_engine_error_of_its_kind(
    engine: Engine, kind: type[Exception]
) -> None:
    """MXNet's gather_nd out of bounds is an IndexError at the wait: ours is an EngineError
    that is an IndexError too, message and cause kept."""
    v = engine.new_var()

    def fail(rc: RunContext) -> None:
        raise kind("bad index 3")

    engine.push_sync(fail, CTX, [], [v], name="typed_failure")
    with pytest.raises(kind, match=r"typed_failure.*bad index 3") as info:
        engine.wait_for_var(v)
    assert isinstance(info.value, EngineError)
    assert isinstance(info.value.__cause__, kind)


def test_an_unusual_failure_is_a_plain_engine_error(engine: Engine) -> None:
    v = engine.new_var()

    def fail(rc: RunContext) -> None:
        raise KeyError("k")

    engine.push_sync(fail, CTX, [], [v], name="key_failure")
    with pytest.raises(EngineError, match="key_failure") as info:
        engine.wait_for_var(v)
    assert type(info.value) is EngineError
