"""engine.bulk / engine.set_bulk_size: MXNet's API; ops run exactly as without bulking."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy import engine


def test_set_bulk_size_returns_the_previous_size_per_thread() -> None:
    assert engine.set_bulk_size(0) == 0
    assert engine.set_bulk_size(16) == 0
    seen: list[int] = []
    thread = threading.Thread(target=lambda: seen.append(engine.set_bulk_size(4)))
    thread.start()
    thread.join()
    assert seen == [0]  # another thread starts from 0
    assert engine.set_bulk_size(np.int64(0)) == 16


def test_bulk_scope_restores_the_size_and_keeps_results() -> None:
    # MXNet's test_bulk: results inside and after a bulk scope are the unbulked ones
    with engine.bulk(10):
        assert engine.set_bulk_size(10) == 10
        x = nv.nd.ones((10,))
        x *= 2
        x += 1
        x.wait_to_read()
        x += 1
        np.testing.assert_array_equal(x.asnumpy(), np.full(10, 4.0))
        for _ in range(100):
            x += 1
    np.testing.assert_array_equal(x.asnumpy(), np.full(10, 104.0))
    assert engine.set_bulk_size(0) == 0  # restored on exit


def test_bad_bulk_size_is_a_named_error_and_the_engine_keeps_working() -> None:
    for bad in (-1, 2.5, "8", True):
        with pytest.raises(nv.NNVMError, match=r"engine\.set_bulk_size: size expects an int >= 0"):
            engine.set_bulk_size(bad)  # type: ignore[arg-type]
    with pytest.raises(nv.NNVMError), engine.bulk(-3):
        pass
    assert engine.set_bulk_size(0) == 0
    y = nv.nd.ones((3,)) + 1
    np.testing.assert_array_equal(y.asnumpy(), [2.0, 2.0, 2.0])
