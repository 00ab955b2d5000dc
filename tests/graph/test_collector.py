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


def _generation_of(obj: object) -> int | None:
    for generation in range(3):
        if any(o is obj for o in gc.get_objects(generation=generation)):
            return generation
    return None  # frozen (the permanent generation), or not tracked


def test_what_a_block_built_goes_to_the_oldest_generation(gc_enabled: None) -> None:
    """A bound graph's objects live as long as its executor: no young collection walks
    them after the block (the first step after a large bind paid ~250 ms for that)."""
    outside = [object()]  # young, made before any block
    with paused_collector():
        built = {"node": [1, 2]}
        assert _generation_of(built) == 0
    assert _generation_of(built) == 2
    assert _generation_of(built["node"]) == 2
    assert _generation_of(outside) == 2  # anything young then is promoted alike
    after = [object()]
    assert _generation_of(after) in (0, 1)  # new allocations start young again
    assert gc.get_freeze_count() == 0


def test_objects_the_application_froze_stay_frozen(gc_enabled: None) -> None:
    kept = [object()]
    gc.freeze()
    try:
        with paused_collector():
            built = [object()]
        # not unfrozen by us (the count itself may drop: a frozen object can still die)
        assert gc.get_freeze_count() > 0
        assert _generation_of(kept) is None
        # promotion skipped (unfreeze would release them): still young (a collection
        # another thread's allocations start may have moved it to generation 1)
        assert _generation_of(built) in (0, 1)
    finally:
        gc.unfreeze()


def test_nothing_is_promoted_while_the_collector_was_off(gc_enabled: None) -> None:
    gc.disable()
    with paused_collector():
        built = [object()]
    assert _generation_of(built) == 0
