"""What a bound executor keeps alive, counted: every object CPython's garbage collector
tracks is walked again by each full collection, and after binding a large unrolled
graph that collection lands inside the first training steps (it once took ~190 ms after
tools/bench_bind.py's 4000-node LSTM, with ~59 tracked objects left per node).

The bound here is loose enough for small changes and tight enough to catch a return of
per-node closures, per-run lists kept by habit, the graph index, or the unfused forward
graph kept after binding (measured 2026-12-06 on this test's LSTM: 33.7 per node with
gradients, 28.6 without; before those cuts 58.4 and 43.2).
"""

from __future__ import annotations

import gc
from typing import Any

import pytest
from unrolled_lstm import unrolled_lstm

import nnvmpy as nv

#: tracked objects a bound and once-run executor may keep per node it runs, by grad_req
MAX_OBJECTS_PER_NODE = {"write": 42, "null": 36}


@pytest.mark.parametrize("grad_req", ["write", "null"])
def test_a_bound_graph_keeps_few_tracked_objects_per_node(grad_req: str) -> None:
    net, shapes = unrolled_lstm(20, layers=2)

    def bind_and_run() -> Any:
        exe = net.simple_bind(nv.cpu(), grad_req=grad_req, **shapes)
        exe.forward(is_train=grad_req != "null")
        exe.backward()
        nv.nd.waitall()
        return exe

    bind_and_run()  # first-use caches (kernels, fused code) are not the bind's
    gc.collect()
    before = len(gc.get_objects())
    exe = bind_and_run()
    gc.collect()
    kept = len(gc.get_objects()) - before
    nodes = len(exe._fwd_runs) + len(exe._bwd_runs)
    assert nodes > 200
    assert kept / nodes <= MAX_OBJECTS_PER_NODE[grad_req], (
        f"{kept} tracked objects for {nodes} nodes: {kept / nodes:.1f} per node"
    )
