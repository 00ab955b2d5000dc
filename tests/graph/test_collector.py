"""paused_collector: gc off inside, its previous state back after the last open block."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator

import pytest

from nnvmpy.graph.collector import paused_collector


@pytest.fixture
def gc_enabled() -> Iterator[None]:
    was = gc.isenabled()
    gc.enable()
    yield
    (gc.enable if was else gc.disable)()


def test_the_collector_is_off_inside_and_back_on_after(gc_enabled: None) -> None:
    with paused_collector():
        assert not gc.isenabled()
        with paused_collector():  # nested
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()


def test_an_error_inside_still_turns_it_back_on(gc_enabled: None) -> None:
    with pytest.raises(ValueError, match="bind failed"), paused_collector():
        raise ValueError("bind failed")
    assert gc.isenabled()


def test_a_collector_that_was_off_stays_off(gc_enabled: None) -> None:
    gc.disable()
    with paused_collector():
        pass
    assert not gc.isenabled()


def test_overlapping_blocks_in_two_threads_restore_it_when_the_last_ends(
    gc_enabled: None,
) -> None:
    inside, release = threading.Event(), threading.Event()

    def other() -> None:
        with paused_collector():
            inside.set()
            release.wait(10)

    thread = threading.Thread(target=other)
    with paused_collector():
        thread.start()
        assert inside.wait(10)
    assert not gc.isenabled()  # the other thread's block is still open
    release.set()
    thread.join(10)
    assert gc.isenabled()
