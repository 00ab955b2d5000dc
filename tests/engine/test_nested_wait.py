"""Waiting from inside a pushed function with one worker thread must not deadlock."""

from __future__ import annotations

import threading

import pytest

from nnvmpy.base import EngineError, cpu
from nnvmpy.engine import Engine, RunContext

CTX = cpu()


@pytest.mark.timeout(30)
def test_worker_waits_for_work_queued_behind_it(one_worker_engine: Engine) -> None:
    eng = one_worker_engine
    v, w = eng.new_var(), eng.new_var()
    data: dict[str, int] = {}
    pushed = threading.Event()

    def outer(rc: RunContext) -> None:
        assert pushed.wait(20)
        eng.wait_for_var(v)  # v's writer is queued on this very pool
        data["w"] = data["v"] + 1

    eng.push_sync(outer, CTX, [], [w], name="outer")
    eng.push_sync(lambda rc: data.__setitem__("v", 10), CTX, [], [v], name="inner")
    pushed.set()
    eng.wait_for_var(w)
    assert data == {"v": 10, "w": 11}


@pytest.mark.timeout(30)
def test_worker_pushes_then_waits(one_worker_engine: Engine) -> None:
    """A CustomOp-style function: push work, then read its result (.asnumpy())."""
    eng = one_worker_engine
    x, y, tmp = eng.new_var(), eng.new_var(), eng.new_var()
    data: dict[str, int] = {"x": 2}

    def custom_forward(rc: RunContext) -> None:
        eng.wait_for_var(x)  # its own input: returns at once
        eng.push_sync(lambda rc: data.__setitem__("tmp", data["x"] * 3), CTX, [x], [tmp])
        eng.wait_for_var(tmp)
        data["y"] = data["tmp"] + 1

    eng.push_sync(custom_forward, CTX, [x], [y], name="custom")
    eng.push_sync(lambda rc: data.__setitem__("x", 100), CTX, [], [x], name="later_write")
    eng.wait_for_all()
    assert data == {"x": 100, "tmp": 6, "y": 7}


@pytest.mark.timeout(30)
def test_worker_waits_on_its_own_input_while_a_writer_is_queued(
    one_worker_engine: Engine,
) -> None:
    eng = one_worker_engine
    x, y = eng.new_var(), eng.new_var()
    data: dict[str, int] = {"x": 1}
    writer_pushed = threading.Event()

    def reader(rc: RunContext) -> None:
        assert writer_pushed.wait(20)
        eng.wait_for_var(x)  # a writer of x waits behind this reader: must not wait for it
        data["y"] = data["x"]

    eng.push_sync(reader, CTX, [x], [y])
    eng.push_sync(lambda rc: data.__setitem__("x", 2), CTX, [], [x])
    writer_pushed.set()
    eng.wait_for_all()
    assert data == {"x": 2, "y": 1}


@pytest.mark.timeout(30)
def test_worker_waits_for_all(one_worker_engine: Engine) -> None:
    eng = one_worker_engine
    v, w = eng.new_var(), eng.new_var()
    data: dict[str, int] = {}
    pushed = threading.Event()

    def outer(rc: RunContext) -> None:
        assert pushed.wait(20)
        eng.wait_for_all()  # everything except this very function
        data["w"] = data["v"] * 2

    eng.push_sync(outer, CTX, [], [w])
    eng.push_sync(lambda rc: data.__setitem__("v", 4), CTX, [], [v])
    pushed.set()
    eng.wait_for_var(w)
    assert data == {"v": 4, "w": 8}


@pytest.mark.timeout(30)
def test_nested_wait_reraises_inside_the_worker(one_worker_engine: Engine) -> None:
    eng = one_worker_engine
    v, w = eng.new_var(), eng.new_var()

    def bad(rc: RunContext) -> None:
        raise ValueError("inner failure")

    def outer(rc: RunContext) -> None:
        eng.push_sync(bad, CTX, [], [v], name="inner")
        eng.wait_for_var(v)  # raises; outer fails in turn

    eng.push_sync(outer, CTX, [], [w], name="outer")
    with pytest.raises(EngineError, match="outer") as info:
        eng.wait_for_var(w)
    assert isinstance(info.value.__cause__, EngineError)
    assert "inner" in str(info.value.__cause__)
    eng.wait_for_all()


@pytest.mark.timeout(30)
def test_deeply_nested_waits(one_worker_engine: Engine) -> None:
    eng = one_worker_engine
    vs = [eng.new_var() for _ in range(6)]
    data: dict[int, int] = {}

    def level(i: int) -> None:
        if i == len(vs) - 1:
            data[i] = 1
            return
        eng.push_sync(lambda rc: level(i + 1), CTX, [], [vs[i + 1]])
        eng.wait_for_var(vs[i + 1])
        data[i] = data[i + 1] + 1

    eng.push_sync(lambda rc: level(0), CTX, [], [vs[0]])
    eng.wait_for_var(vs[0])
    assert data[0] == len(vs)


@pytest.mark.timeout(30)
def test_nested_write_is_part_of_the_pushing_function(one_worker_engine: Engine) -> None:
    """``y = custom(x); z = y * 2``, where custom pushes the write of y itself."""
    eng = one_worker_engine
    y, z = eng.new_var(), eng.new_var()
    data: dict[str, int] = {}
    main_pushed = threading.Event()

    def custom(rc: RunContext) -> None:
        assert main_pushed.wait(20)  # the main thread's use of y is queued already
        eng.push_sync(lambda rc: data.__setitem__("y", 5), CTX, [], [y], name="assign")
        eng.wait_for_var(y)  # waits for the nested assign, not for the queued reader
        data["seen"] = data["y"]

    eng.push_sync(custom, CTX, [], [y], name="custom")
    eng.push_sync(lambda rc: data.__setitem__("z", data["y"] * 2), CTX, [y], [z], name="double")
    main_pushed.set()
    eng.wait_for_var(z)
    assert data == {"y": 5, "seen": 5, "z": 10}


@pytest.mark.timeout(30)
def test_nested_push_after_return_still_orders_before_later_pushes(
    threaded_engine: Engine,
) -> None:
    """A function that pushes the write of its output and returns without waiting."""
    eng = threaded_engine
    y, z = eng.new_var(), eng.new_var()
    data: dict[str, int] = {}
    main_pushed = threading.Event()
    release = threading.Event()

    def slow_assign(rc: RunContext) -> None:
        assert release.wait(20)
        data["y"] = 3

    def custom(rc: RunContext) -> None:
        assert main_pushed.wait(20)
        eng.push_sync(slow_assign, CTX, [], [y], name="assign")

    eng.push_sync(custom, CTX, [], [y], name="custom")
    eng.push_sync(lambda rc: data.__setitem__("z", data["y"] + 1), CTX, [y], [z], name="inc")
    main_pushed.set()
    release.set()
    eng.wait_for_var(z)
    assert data == {"y": 3, "z": 4}
