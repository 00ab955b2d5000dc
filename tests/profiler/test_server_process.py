"""profile_process='server': MXNet addresses the kvstore's server processes. nnvmpy's
kvstores have none, so (as MXNet answers for a kvstore without servers) such a call needs a
kvstore handle, then changes nothing about the worker's profiling."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

import nnvmpy as nv
from nnvmpy import profiler
from nnvmpy.profiler.recorder import RECORDER


@pytest.fixture
def no_kvstore_handle() -> Iterator[None]:
    profiler.set_kvstore_handle(None)
    yield
    profiler.set_kvstore_handle(None)


@pytest.mark.usefixtures("no_kvstore_handle")
def test_server_calls_need_a_kvstore_handle(fresh_profiler: Path) -> None:
    calls = [
        lambda: profiler.set_config(profile_process="server", filename=str(fresh_profiler)),
        lambda: profiler.set_state("run", profile_process="server"),
        lambda: profiler.pause(profile_process="server"),
        lambda: profiler.resume(profile_process="server"),
        lambda: profiler.dump(True, profile_process="server"),
    ]
    for call in calls:
        with pytest.raises(nv.NNVMError, match="profile_process='server' needs the kvstore"):
            call()
    assert not RECORDER.running


@pytest.mark.usefixtures("no_kvstore_handle")
def test_server_calls_leave_the_worker_alone(
    fresh_profiler: Path, caplog: pytest.LogCaptureFixture
) -> None:
    profiler.set_kvstore_handle(nv.kv.create("local"))
    other = fresh_profiler.with_name("server.json")
    with caplog.at_level(logging.WARNING, logger="nnvmpy.profiler"):
        profiler.set_config(profile_process="server", filename=str(other), aggregate_stats=True)
        profiler.set_state("run", profile_process="server")
        profiler.dump(True, profile_process="server")
    assert "no server process to profile" in caplog.text
    assert profiler.get_config().filename == str(fresh_profiler)  # the worker's, unchanged
    assert not profiler.get_config().aggregate_stats
    assert not RECORDER.running
    assert not other.exists()
    profiler.set_state("run")  # the worker's own calls still work
    profiler.pause(profile_process="server")
    assert RECORDER.on  # not paused by a server call
    profiler.set_state("stop")


@pytest.mark.usefixtures("no_kvstore_handle")
def test_bad_profile_process_is_a_param_error(fresh_profiler: Path) -> None:
    with pytest.raises(nv.ParamError, match="profile_process expects 'worker' or 'server'"):
        profiler.set_state("run", profile_process="scheduler")
