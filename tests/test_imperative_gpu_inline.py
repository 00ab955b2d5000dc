"""With GPU functions completing once queued (NNVMPY_GPU_STREAM_ORDER=1, engine/fences.py),
an imperative GPU call is pushed INLINE: a threaded engine runs it in the calling thread
when its inputs are free (tests/engine/test_gpu_fences.py shows how). Otherwise, and for
stateful ops, it goes to a GPU worker as before; CPU calls keep their size rule."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy import imperative
from nnvmpy.engine import FnProperty, fences

pytestmark = pytest.mark.gpu


def _props(monkeypatch: pytest.MonkeyPatch, stream_order: bool) -> list[tuple[str, str, Any]]:
    """(op, device, prop) of every push of `x * 2 + 1` on the GPU and `relu` on the CPU."""
    pushed: list[tuple[str, str, Any]] = []
    for cache in ("_plans", "_plans_positional", "_plans_one_param"):
        monkeypatch.setattr(imperative, cache, {})  # plans keep the prop they were made with
    with nv.engine.engine_type("NaiveEngine"):
        eng = nv.engine.get_engine()
        real = eng.push_sync

        def spy(fn, ctx, const=(), mutate=(), priority=0, name=None, prop=FnProperty.NORMAL):
            pushed.append((name, ctx.device_type, prop))
            return real(fn, ctx, const, mutate, priority, name, prop)

        monkeypatch.setattr(eng, "push_sync", spy)
        fences.set_on(stream_order)
        try:
            x = nv.nd.array(np.arange(4.0), ctx=nv.gpu(0))
            y = x * 2 + 1
            np.testing.assert_array_equal(y.asnumpy(), np.arange(4.0) * 2 + 1)
            nv.nd.relu(nv.nd.ones((3,))).wait_to_read()
        finally:
            fences.set_on(None)
    return [p for p in pushed if p[0] in ("_mul_scalar", "_plus_scalar", "relu")]


def test_gpu_calls_are_inline_when_gpu_functions_complete_queued(monkeypatch):
    props = _props(monkeypatch, stream_order=True)
    assert [p[:2] for p in props] == [("_mul_scalar", "gpu"), ("_plus_scalar", "gpu"),
                                      ("relu", "cpu")]  # fmt: skip
    assert all(p[2] is FnProperty.INLINE for p in props)


def test_gpu_calls_go_to_the_workers_otherwise(monkeypatch):
    props = _props(monkeypatch, stream_order=False)
    assert [p[2] for p in props if p[1] == "gpu"] == [FnProperty.NORMAL] * 2
    assert [p[2] for p in props if p[1] == "cpu"] == [FnProperty.INLINE]  # a small CPU call
