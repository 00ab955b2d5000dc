"""nv.util: MXNet's np_shape / np_array switches (per thread, scoped, decorators)."""

from __future__ import annotations

import os
import threading

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy import util


@pytest.fixture(autouse=True)
def _legacy_semantics() -> None:
    util.reset_np()
    yield
    util.reset_np()


def test_np_shape_is_off_by_default_and_scoped() -> None:
    assert not util.is_np_shape()
    with util.np_shape():
        assert util.is_np_shape()
        with nv.np_shape(False):  # also at the top level, as mx.np_shape
            assert not nv.is_np_shape()
        assert util.is_np_shape()
    assert not util.is_np_shape()


def test_set_np_shape_returns_the_previous_state() -> None:
    assert nv.set_np_shape(True) is False
    assert util.set_np_shape(np.bool_(False)) is True
    assert util.set_np_shape(1) is False
    assert util.is_np_shape()


def test_np_shape_is_per_thread() -> None:
    seen: list[bool] = []
    with util.np_shape():
        thread = threading.Thread(target=lambda: seen.append(util.is_np_shape()))
        thread.start()
        thread.join()
        assert util.is_np_shape()
    assert seen == [False]


def test_set_np_shape_2_turns_it_on_in_every_thread() -> None:
    seen: list[bool] = []

    def look() -> None:
        seen.append(util.is_np_shape())

    try:
        assert util.set_np_shape(2) is False
        thread = threading.Thread(target=look)
        thread.start()
        thread.join()
        assert util.set_np_shape(1) is True  # back to this thread only
        thread = threading.Thread(target=look)
        thread.start()
        thread.join()
    finally:
        util.set_np_shape(0)
    assert seen == [True, False]
    assert not util.is_np_shape()


def test_numpy_array_scope_is_per_thread_and_settable_on_the_class() -> None:
    scope_cls = util._NumpyArrayScope
    scope_cls._current = scope_cls(True)  # MXNet's tests assign the class attribute
    assert util.is_np_array()
    status: list[bool] = []

    def other() -> None:
        with util.np_array(False) as scope:
            status.append(scope_cls._current is scope and not util.is_np_array())
        status.append(util.is_np_array())

    thread = threading.Thread(target=other)
    thread.start()
    thread.join()
    assert status == [True, False]
    assert util.is_np_array()  # this thread's scope is untouched


def test_use_np_shape_decorates_functions_and_classes() -> None:
    @nv.use_np_shape
    def inside() -> bool:
        return util.is_np_shape()

    @util.use_np_shape
    class Holder:
        def flag(self) -> bool:
            return util.is_np_shape()

    assert inside() is True
    assert Holder().flag() is True
    assert inside.__name__ == "inside"
    assert not util.is_np_shape()


def test_use_np_turns_on_both_switches() -> None:
    @util.use_np
    def flags() -> tuple[bool, bool]:
        return util.is_np_shape(), util.is_np_array()

    assert flags() == (True, True)
    assert (util.is_np_shape(), util.is_np_array()) == (False, False)
    with util.np_array():
        assert util.is_np_array()
    util.set_np()
    assert util.is_np_shape()
    assert util.is_np_array()


def test_bad_switch_values_are_named_errors() -> None:
    with pytest.raises(
        nv.NNVMError, match="set_np_shape: 'active' expects a bool or 0, 1, 2, got 'yes'"
    ):
        util.set_np_shape("yes")
    with pytest.raises(nv.NNVMError, match="set_np_array: 'active' expects a bool, got 2"):
        util.set_np_array(2)
    with pytest.raises(nv.NNVMError, match="set_np: NumPy array semantics need shape=True"):
        util.set_np(shape=False, array=True)
    with pytest.raises(nv.NNVMError, match=r"set_np: dtype=True .* is not supported"):
        util.set_np(dtype=True)
    with pytest.raises(nv.NNVMError, match="use_np_shape: expects a function or a class"):
        util.use_np_shape(3)
    assert not util.is_np_shape()  # nothing changed by the failed calls
    assert not util.is_np_array()


def test_getenv_and_setenv_are_the_process_environment() -> None:
    name = "NNVMPY_UTIL_TEST_VAR"
    util.setenv(name, "7")
    assert os.environ[name] == "7"
    assert util.getenv(name) == "7"
    util.setenv(name, None)
    assert util.getenv(name) is None
    assert util.get_gpu_count() == nv.num_gpus()
