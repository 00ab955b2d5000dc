"""The fork helper the fork tests share (the run_in_child fixture): a child can never
outlive its test, even stuck where no Python runs."""

from __future__ import annotations

import ctypes
import os
import signal
import time

import pytest

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")


def test_the_child_reports_its_outcome(run_in_child) -> None:
    assert run_in_child(lambda: True) == 0
    assert run_in_child(lambda: False) == 1

    def raises() -> bool:
        raise RuntimeError("in the child")

    assert run_in_child(raises) == 2


@pytest.mark.timeout(30)
def test_a_child_stuck_in_native_code_is_ended_at_its_limit(run_in_child) -> None:
    libc = ctypes.CDLL(None)

    def stuck() -> bool:
        libc.pause()  # a C call that never returns: no Python handler could run
        return True

    start = time.monotonic()
    assert run_in_child(stuck, limit_s=1) == -signal.SIGALRM
    assert time.monotonic() - start < 20


@pytest.mark.timeout(30)
def test_a_parent_stopped_while_waiting_kills_its_child(run_in_child) -> None:
    """As when pytest-timeout ends the test: the exception leaves no child behind."""
    pids: list[int] = []
    real_waitpid = os.waitpid

    def interrupted(pid: int, options: int) -> tuple[int, int]:
        if not pids:
            pids.append(pid)
            raise KeyboardInterrupt  # what a timeout's signal handler raises, in effect
        return real_waitpid(pid, options)

    os.waitpid = interrupted  # type: ignore[assignment]
    try:
        with pytest.raises(KeyboardInterrupt):
            run_in_child(lambda: time.sleep(60) or True)
    finally:
        os.waitpid = real_waitpid
    with pytest.raises(ChildProcessError):  # reaped: the helper waited for it after the kill
        os.waitpid(pids[0], os.WNOHANG)
