"""The memory arena (NNVMPY_MEMORY_PLAN=arena, the default): planned blocks as byte ranges
of one buffer, packed by lifetime (passes/_arena.py, executor/planned_memory.py).

References: the same symbol bound with NNVM's block plan (NNVMPY_MEMORY_PLAN=blocks), which
must give the same bits, and NumPy for the concurrency case. Blocks that share bytes have
their own engine variables, so the executor orders them: the case for it runs independent
branches on four engine workers, one push per node, where a missing order corrupts values.
That no two live entries share bytes is checked on random graphs in
tests/passes/test_plan_memory_property.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy import engine, sym, threads
from nnvmpy.engine import ThreadedEngine
from nnvmpy.executor.bulk import Segment
from nnvmpy.graph import Graph, apply_passes

_SHARED = (Path(__file__).resolve().parents[2].parent / "shared", Path("/work/shared"))
MODELS = next((p / "models" for p in _SHARED if (p / "models").is_dir()), None)


def _bind(net: Any, plan: str, mp: pytest.MonkeyPatch, **kwargs: Any) -> Any:
    mp.setenv("NNVMPY_MEMORY_PLAN", plan)
    try:
        return net.simple_bind(nv.cpu(), **kwargs)
    finally:
        mp.delenv("NNVMPY_MEMORY_PLAN")


def _fill(exe: Any, seed: int) -> None:
    rng = np.random.default_rng(seed)
    for d in (exe.arg_dict, exe.aux_dict):
        for name, a in d.items():
            if name.endswith(("moving_var", "gamma")):
                a[:] = rng.uniform(0.5, 1.5, a.shape)
            elif name.endswith("label"):
                a[:] = rng.integers(0, a.shape[0], a.shape)
            else:
                a[:] = rng.normal(0, 0.1, a.shape)


@pytest.mark.skipif(MODELS is None, reason="shared model files not present")
def test_resnet18_training_takes_less_memory_and_gives_the_same_bits(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    net = nv.sym.load(str(MODELS / "resnet18_v1-symbol.json"))
    runs = {}
    monkeypatch.setenv("NNVMPY_THREADS_ADAPT", "0")  # one width, one reduction split for both
    saved = threads.width()
    threads.set_width(1)
    try:
        for plan in ("blocks", "arena"):
            exe = _bind(net, plan, monkeypatch, grad_req="write", data=(2, 3, 64, 64))
            _fill(exe, 0)
            out = exe.forward(is_train=True)[0].asnumpy()
            exe.backward()
            grads = {n: g.asnumpy() for n, g in exe.grad_dict.items() if g is not None}
            runs[plan] = (exe.storage_bytes, out, grads)
    finally:
        threads.set_width(saved)
    (blocks, out_b, grads_b), (arena, out_a, grads_a) = runs["blocks"], runs["arena"]
    assert arena < 0.9 * blocks  # 24.6 vs 28.5 MiB here; 619 vs 732 at batch 32, 224x224
    np.testing.assert_array_equal(out_a, out_b)
    for name, g in grads_b.items():
        np.testing.assert_array_equal(grads_a[name], g, err_msg=name)


def _branches(width: int, depth: int) -> Any:
    """`width` independent chains of element-wise ops on x whose rows grow to twice the
    width and back (sizes that change give the arena bytes to share), summed at the end."""
    x = sym.var("x")
    ends = []
    for b in range(width):
        h, wide = x * float(b + 1), False
        for k in range(depth):
            if k % 3 == 2:
                h = (
                    sym.slice_axis(h, axis=1, begin=0, end=1024)
                    if wide
                    else sym.concat(h, h * 0.5, dim=1)
                )
                wide = not wide
            elif k % 2:
                h = sym.tanh(h) * 1.5 + h * (0.1 * k)
            else:
                h = sym.relu(h - 0.25 * b) + h
        ends.append(sym.slice_axis(h, axis=1, begin=0, end=1024))
    return sym.add_n(*ends), sym.Group(ends)


def _numpy_branches(x: np.ndarray, width: int, depth: int) -> list[np.ndarray]:
    ends = []
    for b in range(width):
        h, wide = x * float(b + 1), False
        for k in range(depth):
            if k % 3 == 2:
                h = h[:, :1024] if wide else np.concatenate([h, h * 0.5], axis=1)
                wide = not wide
            elif k % 2:
                h = np.tanh(h) * 1.5 + h * (0.1 * k)
            else:
                h = np.maximum(h - 0.25 * b, 0) + h
        ends.append(h[:, :1024])
    return ends


def _bound_branches(width: int, depth: int, mp: pytest.MonkeyPatch) -> tuple[Any, Any]:
    """The branch graph's sum, and a training executor of it on the arena (x: 64 x 1024)."""
    net, _ = _branches(width, depth)
    return net, _bind(net, "arena", mp, grad_req="write", x=(64, 1024))


@pytest.fixture
def four_workers(monkeypatch: pytest.MonkeyPatch) -> Any:
    """Four engine workers and one push per node: what may run at once, will."""
    monkeypatch.setenv("NNVMPY_FUSION", "0")  # one node per op: many short-lived blocks
    monkeypatch.setenv("NNVMPY_EXEC_BULK_EXEC_INFERENCE", "0")
    monkeypatch.setenv("NNVMPY_EXEC_BULK_EXEC_TRAIN", "0")
    previous = engine.set_engine(ThreadedEngine(num_workers=4))
    yield
    nv.nd.waitall()
    engine.set_engine(previous or "ThreadedEnginePerDevice").shutdown()


def test_blocks_that_share_bytes_are_ordered_on_concurrent_workers(
    monkeypatch: pytest.MonkeyPatch, four_workers: Any
) -> None:
    width, depth = 6, 8
    total, exe = _bound_branches(width, depth, monkeypatch)
    offsets = exe._graph.attrs["storage_offsets"]
    sizes = exe._graph.attrs["storage_sizes"]
    shared = sum(
        1
        for a in range(len(offsets))
        for b in range(a)
        if offsets[a] < offsets[b] + sizes[b] and offsets[b] < offsets[a] + sizes[a]
    )
    assert shared > 0, "the case needs blocks that share bytes"
    rng = np.random.default_rng(3)
    for step in range(15):
        x = rng.normal(size=(64, 1024))
        head = rng.normal(size=(64, 1024))
        exe.forward(is_train=True, x=x)  # no wait: steps overlap too
        exe.backward([nv.nd.array(head)])
        if step % 5 == 4:
            want = sum(_numpy_branches(x.astype(np.float32), width, depth))
            np.testing.assert_allclose(exe.outputs[0].asnumpy(), want, rtol=1e-5, atol=1e-4)
            ref = _bind(total, "blocks", monkeypatch, grad_req="write", x=(64, 1024))
            ref.forward(is_train=True, x=x)
            ref.backward([nv.nd.array(head)])
            np.testing.assert_allclose(
                exe.grad_dict["x"].asnumpy(), ref.grad_dict["x"].asnumpy(), 1e-6, 1e-5
            )


def test_an_executor_bound_against_another_takes_its_arena_and_both_stay_right(
    monkeypatch: pytest.MonkeyPatch, four_workers: Any
) -> None:
    width, depth = 3, 6
    net, big = _bound_branches(width, depth, monkeypatch)
    small = big.reshape(x=(8, 1024))
    assert big._planned.arena is not None
    assert small._planned.arena is big._planned.arena  # the bytes are lent whole
    rng = np.random.default_rng(5)
    for step in range(4):  # alternate without waiting: the arena's variable orders them
        xb, xs = rng.normal(size=(64, 1024)), rng.normal(size=(8, 1024))
        head = rng.normal(size=(64, 1024))
        ob = big.forward(is_train=True, x=xb)[0]
        if step % 2:  # the borrower writes its output over the lender's (MXNet's reshape)
            want = sum(_numpy_branches(xb.astype(np.float32), width, depth))
            np.testing.assert_allclose(ob.asnumpy(), want, rtol=1e-5, atol=1e-4)
        big.backward([nv.nd.array(head)])
        out_small = small.forward(x=xs)[0]
        want = sum(_numpy_branches(xs.astype(np.float32), width, depth))
        np.testing.assert_allclose(out_small.asnumpy(), want, rtol=1e-5, atol=1e-4)
        ref = _bind(net, "blocks", monkeypatch, grad_req="write", x=(64, 1024))
        ref.forward(is_train=True, x=xb)
        ref.backward([nv.nd.array(head)])
        np.testing.assert_allclose(
            big.grad_dict["x"].asnumpy(), ref.grad_dict["x"].asnumpy(), 1e-6, 1e-5
        )


@pytest.mark.parametrize("req", ["write", "add", "null"])
def test_the_arena_is_kept_only_where_it_takes_fewer_bytes(
    req: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Greedy packing is no optimum: on a small MLP the blocks take less, and stay."""
    x = sym.var("x")
    h = sym.Activation(sym.FullyConnected(x, num_hidden=512, name="fc1"), act_type="relu")
    h = sym.Activation(sym.FullyConnected(h, num_hidden=512, name="fc2"), act_type="relu")
    mlp = sym.SoftmaxOutput(sym.FullyConnected(h, num_hidden=10, name="fc3"), name="out")
    branches, _ = _branches(6, 8)
    for net, shapes in ((mlp, {"x": (64, 784)}), (branches, {"x": (64, 1024)})):
        plans = {
            plan: _bind(net, plan, monkeypatch, grad_req=req, **shapes)
            for plan in ("blocks", "arena")
        }
        arena, blocks = plans["arena"], plans["blocks"]
        assert arena.storage_bytes <= blocks.storage_bytes
        offsets = arena._graph.attrs["storage_offsets"]
        assert (offsets is None) == (arena.storage_bytes == blocks.storage_bytes)


def test_an_unknown_memory_plan_is_named() -> None:
    graph = apply_passes(
        Graph(sym.relu(sym.var("x"))._heads), ["InferShape", "InferType"], shapes={"x": (2,)}
    )
    with pytest.raises(nv.NNVMError, match="PlanMemory: memory_plan must be 'blocks' or 'arena'"):
        apply_passes(graph, ["PlanMemory"], memory_plan="pool")


def _happens_before(pushes: list[tuple[list[Any], list[Any]]]) -> list[int]:
    """The dependency engine's order over `pushes` ((reads, writes) of variables, in push
    order): bit u of result[w] is set when push u must finish before push w starts (each
    push waits for the last writer of every variable it names and, to write one, for
    that variable's readers since; ordered by transitivity)."""
    last_writer: dict[int, int] = {}
    readers: dict[int, list[int]] = {}
    before: list[int] = []
    for p, (reads, writes) in enumerate(pushes):
        deps: set[int] = set()
        for v in reads:
            if id(v) in last_writer:
                deps.add(last_writer[id(v)])
        for v in writes:
            if id(v) in last_writer:
                deps.add(last_writer[id(v)])
            deps.update(readers.get(id(v), []))
        reach = 0
        for d in deps:
            reach |= before[d] | (1 << d)
        before.append(reach)
        for v in reads:
            readers.setdefault(id(v), []).append(p)
        for v in writes:
            last_writer[id(v)] = p
            readers[id(v)] = []
    return before


@pytest.mark.parametrize("bulk", ["0", "1"])
@pytest.mark.parametrize("calls", ["FB" * 3, "FFBFBB", "FBFFFB"])
def test_every_two_pushes_touching_the_same_arena_bytes_are_ordered(
    calls: str, bulk: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through the engine variables the pushes name (a node each, or bulk segments),
    over any sequence of forward and backward calls ('B' right after 'B': grad_req add
    keeps what backward reads): two pushes whose arena bytes meet, one writing, never
    run at once."""
    monkeypatch.setenv("NNVMPY_FUSION", "0")
    monkeypatch.setenv("NNVMPY_EXEC_BULK_EXEC_TRAIN", bulk)
    net, _ = _branches(4, 9)
    exe = _bind(net, "arena", monkeypatch, grad_req="add", x=(16, 1024))
    offsets = exe._graph.attrs["storage_offsets"]
    sizes = exe._graph.attrs["storage_sizes"]
    block_of = {id(c): q for q, c in enumerate(exe._planned.chunks)}

    def span(arrays: list[Any]) -> list[tuple[int, int]]:
        blocks = {block_of[id(a._chunk)] for a in arrays if id(a._chunk) in block_of}
        return [(offsets[q], offsets[q] + sizes[q]) for q in blocks]

    pushes, touched = [], []
    for call in calls:
        for step in exe._bulk.fwd if call == "F" else exe._bulk.bwd:
            runs = step.runs if isinstance(step, Segment) else [step]
            pushes.append((step.const_vars, step.mutate_vars))
            inputs = [a for r in runs for a in r.inputs]
            touched.append((span(inputs), span([a for r in runs for a in r.outputs])))
    before = _happens_before(pushes)

    def meet(a: list[tuple[int, int]], b: list[tuple[int, int]]) -> bool:
        return any(lo < hi2 and lo2 < hi for lo, hi in a for lo2, hi2 in b)

    checked = 0
    for w, (reads_w, writes_w) in enumerate(touched):
        for u in range(w):
            reads_u, writes_u = touched[u]
            if meet(writes_u, reads_w + writes_w) or meet(reads_u, writes_w):
                checked += 1
                assert before[w] >> u & 1, f"pushes {u} and {w} share arena bytes, unordered"
    assert checked > 100
