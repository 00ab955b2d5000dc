"""Bulk execution (executor/bulk.py): runs of nodes pushed as one engine operation.

The reference is the same graph bound with bulking off and run on NaiveEngine (one push
per node, each run at once: the obvious order), plus NumPy formulas where a graph is
small enough to write out. Each test also checks that bulking really happened (fewer
pushes, the segment it expects), so that a silent fallback to per-node pushes fails.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy import engine, profiler, sym
from nnvmpy.engine import NaiveEngine
from nnvmpy.executor.bulk import Segment, plan_steps
from nnvmpy.executor.node_run import NodeRun
from nnvmpy.operator import CustomOp, CustomOpProp, register
from nnvmpy.profiler.recorder import RECORDER

ENGINES = sorted(engine.ENGINE_TYPES)
KNOBS = (
    "NNVMPY_EXEC_BULK_EXEC_INFERENCE",
    "NNVMPY_EXEC_BULK_EXEC_TRAIN",
    "NNVMPY_EXEC_BULK_EXEC_MAX_NODE_TRAIN_FWD",
    "NNVMPY_EXEC_BULK_EXEC_MAX_NODE_TRAIN_BWD",
)


@contextmanager
def knobs(**values: str) -> Iterator[None]:
    """Set bulk knobs (short names: inference, train, fwd, bwd) for the binds inside."""
    names = dict(zip(("inference", "train", "fwd", "bwd"), KNOBS))
    old = {k: os.environ.get(k) for k in KNOBS}
    try:
        for short, value in values.items():
            os.environ[names[short]] = value
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def bind(s: sym.Symbol, bulk: bool, grad_req: Any = "write", **shapes: Any) -> Any:
    value = "1" if bulk else "0"
    with knobs(inference=value, train=value, fwd="4", bwd="4"):
        return s.simple_bind(nv.cpu(), grad_req=grad_req, **shapes)


def fill(exe: Any, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    for name, arr in [*exe.arg_dict.items(), *exe.aux_dict.items()]:
        if name.endswith("label"):
            arr[:] = rng.integers(0, arr.shape[-1] if arr.ndim > 1 else 3, arr.shape)
        elif name.endswith("moving_var"):
            arr[:] = rng.uniform(0.5, 1.5, arr.shape)
        else:
            arr[:] = rng.uniform(-0.5, 0.5, arr.shape)


def step(exe: Any, train: bool, times: int = 1) -> dict[str, np.ndarray]:
    """forward (+ backward) `times` times; every output, gradient and aux state after."""
    for _ in range(times):
        exe.forward(is_train=train)
        if train:
            exe.backward()
    got = {f"out{i}": o.asnumpy() for i, o in enumerate(exe.outputs)}
    got.update({f"grad:{n}": g.asnumpy() for n, g in exe.grad_dict.items()})
    got.update({f"aux:{n}": a.asnumpy() for n, a in exe.aux_dict.items()})
    return got


def assert_same(got: dict[str, np.ndarray], want: dict[str, np.ndarray]) -> None:
    assert got.keys() == want.keys()
    for key in want:
        np.testing.assert_allclose(got[key], want[key], rtol=1e-5, atol=1e-6, err_msg=key)


def reference(make: Callable[[bool], Any], train: bool, times: int = 1) -> dict[str, np.ndarray]:
    """The per-node run on NaiveEngine."""
    with engine.engine_type("NaiveEngine"):
        exe = make(False)
        fill(exe)
        return step(exe, train, times)


class CountingEngine(NaiveEngine):
    """NaiveEngine that counts pushes."""

    def __init__(self) -> None:
        super().__init__()
        self.pushes: list[str] = []

    def push_sync(
        self,
        fn: Any,
        ctx: Any,
        const_vars: Any = (),
        mutate_vars: Any = (),
        priority: int = 0,
        name: Any = None,
        prop: Any = None,
    ) -> None:
        self.pushes.append(str(name))
        kwargs = {} if prop is None else {"prop": prop}
        super().push_sync(fn, ctx, const_vars, mutate_vars, priority, name, **kwargs)


# -- graphs --------------------------------------------------------------------------------------


def mlp() -> sym.Symbol:
    x = sym.Variable("data")
    h = sym.Activation(sym.FullyConnected(x, num_hidden=16, name="fc1"), act_type="relu")
    h = sym.Activation(sym.FullyConnected(h, num_hidden=16, name="fc2"), act_type="tanh")
    return sym.SoftmaxOutput(sym.FullyConnected(h, num_hidden=3, name="fc3"), name="softmax")


def lenet() -> sym.Symbol:
    x = sym.Variable("data")
    h = sym.Convolution(x, kernel=(3, 3), num_filter=4, name="conv1")
    h = sym.Pooling(
        sym.Activation(h, act_type="relu"), kernel=(2, 2), stride=(2, 2), pool_type="max"
    )
    h = sym.Convolution(h, kernel=(3, 3), num_filter=6, name="conv2")
    h = sym.Pooling(
        sym.Activation(h, act_type="tanh"), kernel=(2, 2), stride=(2, 2), pool_type="avg"
    )
    h = sym.FullyConnected(sym.Flatten(h), num_hidden=3, name="fc")
    return sym.SoftmaxOutput(h, name="softmax")


def resnetish() -> sym.Symbol:
    """conv-BN-relu, a residual block with BatchNorm (aux states), global pool, FC."""
    x = sym.Variable("data")
    h = sym.Convolution(x, kernel=(3, 3), pad=(1, 1), num_filter=4, no_bias=True, name="c0")
    h = sym.Activation(sym.BatchNorm(h, name="bn0"), act_type="relu", name="r0")
    r = sym.Convolution(h, kernel=(3, 3), pad=(1, 1), num_filter=4, no_bias=True, name="c1")
    r = sym.Activation(sym.BatchNorm(r, name="bn1"), act_type="relu", name="r1")
    r = sym.Convolution(r, kernel=(3, 3), pad=(1, 1), num_filter=4, no_bias=True, name="c2")
    r = sym.BatchNorm(r, name="bn2")
    h = sym.Activation(h + r, act_type="relu", name="r2")
    h = sym.Pooling(h, kernel=(1, 1), global_pool=True, pool_type="avg", name="gp")
    h = sym.FullyConnected(sym.Flatten(h), num_hidden=3, name="fc")
    return sym.SoftmaxOutput(h, name="softmax")


NETS = {
    "mlp": (mlp, {"data": (5, 8)}),
    "lenet": (lenet, {"data": (2, 1, 12, 12)}),
    "resnetish": (resnetish, {"data": (2, 3, 6, 6)}),
}


# -- segments ------------------------------------------------------------------------------------


def test_an_inference_executor_is_one_push_and_training_is_cut_by_the_knobs() -> None:
    s, shapes = NETS["resnetish"]
    infer = bind(s(), True, grad_req="null", **shapes)
    assert [type(st) for st in infer._bulk.fwd] == [Segment]
    assert infer._bulk.fwd[0].runs == infer._fwd_runs
    n, first = len(infer._fwd_runs), infer._fwd_runs[0].node.name
    assert f"Bulk forward: {n} nodes in 1 engine push(es)\n\tsegment {first}.." in infer.debug_str()
    with knobs(inference="1", train="1", fwd="3", bwd="2"):
        train = s().simple_bind(nv.cpu(), **shapes)
    for steps, runs, most in (
        (train._bulk.fwd, train._fwd_runs, 3),
        (train._bulk.bwd, train._bwd_runs, 2),
    ):
        flat = [r for st in steps for r in (st.runs if isinstance(st, Segment) else [st])]
        assert flat == runs  # every node once, in order
        assert all(len(st.runs) <= most for st in steps if isinstance(st, Segment))
        assert len(steps) == -(-len(runs) // most)  # nothing else cuts this graph


def test_a_bad_segment_size_is_named_at_bind() -> None:
    s, shapes = NETS["mlp"]
    with (
        knobs(train="1", bwd="fifteen"),
        pytest.raises(
            nv.NNVMError,
            match=r"MAX_NODE_TRAIN_BWD expects an integer >= 0, got 'fifteen'",
        ),
    ):
        s().simple_bind(nv.cpu(), **shapes)
    with knobs(train="1", fwd="-2"), pytest.raises(nv.NNVMError, match="got '-2'"):
        s().simple_bind(nv.cpu(), **shapes)
    with knobs(train="1", fwd="0", bwd="1"):
        exe = s().simple_bind(nv.cpu(), **shapes)
    assert exe._bulk.fwd == exe._fwd_runs
    assert exe._bulk.bwd == exe._bwd_runs


def test_knobs_off_push_node_by_node_and_mxnet_spellings_are_read() -> None:
    s, shapes = NETS["mlp"]
    counting = CountingEngine()
    with engine.engine_type(counting):
        off = bind(s(), False, grad_req="null", **shapes)
        fill(off)
        counting.pushes.clear()
        off.forward()
        assert counting.pushes == [r.label for r in off._fwd_runs]
        assert all(isinstance(st, NodeRun) for st in off._bulk.fwd)
        on = bind(s(), True, grad_req="null", **shapes)
        fill(on)
        counting.pushes.clear()
        on.forward()
        assert len(counting.pushes) == 1
        assert counting.pushes[0].startswith("segment ")
        np.testing.assert_array_equal(on.outputs[0].asnumpy(), off.outputs[0].asnumpy())
    os.environ["MXNET_EXEC_BULK_EXEC_INFERENCE"] = "0"
    try:
        with knobs():
            for k in KNOBS:
                os.environ.pop(k, None)
            alias = s().simple_bind(nv.cpu(), grad_req="null", **shapes)
    finally:
        del os.environ["MXNET_EXEC_BULK_EXEC_INFERENCE"]
    assert all(isinstance(st, NodeRun) for st in alias._bulk.fwd)


def _hidden(seg: Segment) -> set[int]:
    used = {id(v) for r in seg.runs for v in (*r.const_vars, *r.mutate_vars)}
    return used - {id(v) for v in (*seg.const_vars, *seg.mutate_vars)}


def _visible(exe: Any) -> set[int]:
    arrays = [*exe.outputs, *exe.arg_arrays, *exe.aux_arrays, *exe.head_grad_arrays]
    arrays += [g for g in exe.grad_arrays if g is not None]
    return {id(a._chunk.var) for a in arrays}


@contextmanager
def cpu_workers(n: int) -> Iterator[Any]:
    """The default engine with `n` CPU workers while inside."""
    eng = engine.ThreadedEnginePerDevice(cpu_workers=n)
    try:
        with engine.engine_type(eng):
            yield eng
    finally:
        eng.shutdown()


def _runs(st: Any) -> list[NodeRun]:
    return st.runs if isinstance(st, Segment) else [st]


def test_a_segment_hides_only_the_blocks_nothing_outside_it_touches() -> None:
    """With two CPU workers, segments may run side by side: a block's variable is hidden
    only where one segment is its only user."""
    s, shapes = NETS["resnetish"]
    with cpu_workers(2):
        infer = bind(s(), True, grad_req="null", **shapes)
        with knobs(train="1", fwd="5", bwd="100"):
            exe = s().simple_bind(nv.cpu(), **shapes)
    assert not infer._bulk.chained
    assert not exe._bulk.chained
    (seg,) = infer._bulk.fwd
    assert len(_hidden(seg)) >= 2  # intermediate blocks: the engine never sees them
    assert not _hidden(seg) & _visible(infer)
    assert seg.const_vars[-1] is infer._bulk.token  # so that lending memory waits for it
    for st in (*exe._bulk.fwd, *exe._bulk.bwd):
        if isinstance(st, NodeRun):  # a node alone is pushed as it is: it hides nothing
            continue
        others = {
            id(v)
            for r in (*exe._fwd_runs, *exe._bwd_runs)
            if r not in st.runs
            for v in (*r.const_vars, *r.mutate_vars)
        }
        assert not _hidden(st) & (others | _visible(exe))
    mutated = {id(v) for st in exe._bulk.fwd for v in st.mutate_vars}
    assert {id(a._chunk.var) for a in exe.aux_arrays} <= mutated  # BatchNorm's statistics


@pytest.mark.parametrize("name", ENGINES)
def test_with_one_worker_every_step_writes_the_token_and_declares_only_what_others_see(
    name: str,
) -> None:
    """One worker runs the steps one at a time: chained through the token, a step needs
    none of the blocks only this executor uses (an unrolled LSTM declared ~17k variable
    uses per training step without this)."""
    s, shapes = NETS["resnetish"]
    with engine.engine_type(name), knobs(train="1", fwd="5", bwd="100"):
        exe = s().simple_bind(nv.cpu(), **shapes)
    assert exe._bulk.chained
    steps = [*exe._bulk.fwd, *exe._bulk.bwd]
    assert len(steps) > 2
    assert all(isinstance(st, Segment) for st in steps)
    own = exe._bulk.hideable  # this executor's blocks that nothing outside it sees
    assert not own & _visible(exe)
    hidden = set()
    for st in steps:
        assert st.mutate_vars[-1] is exe._bulk.token
        assert not own & {id(v) for v in (*st.const_vars, *st.mutate_vars)}
        hidden |= _hidden(st)
    assert hidden == own
    assert len(own) > len(steps)
    with engine.engine_type(name):
        want = reference(lambda bulk: bind(s(), bulk, "write", **shapes), True, times=3)
        with knobs(train="1", fwd="5", bwd="100"):
            exe = s().simple_bind(nv.cpu(), **shapes)
        fill(exe)
        assert_same(step(exe, True, times=3), want)


def test_two_workers_or_a_node_by_node_phase_do_not_chain() -> None:
    s, shapes = NETS["mlp"]
    with cpu_workers(2):
        assert not bind(s(), True, "write", **shapes)._bulk.chained
    with knobs(train="1", fwd="1", bwd="4"):  # forward pushed node by node, as it declares
        exe = s().simple_bind(nv.cpu(), **shapes)
    assert not exe._bulk.chained
    assert all(isinstance(st, NodeRun) for st in exe._bulk.fwd)


def test_a_monitor_set_while_chained_steps_wait_takes_the_token_too() -> None:
    """Monitored nodes are pushed one by one with all their variables. Steps of a chained
    plan still queued declare none of the hidden blocks: without the token, a monitored
    push whose inputs look idle to the engine would run before them, on blocks they have
    not written yet."""
    s, shapes = NETS["mlp"]
    exe = bind(s(), True, "write", **shapes)
    assert exe._bulk.chained
    fill(exe)
    want = exe.forward(is_train=False)[0].asnumpy()
    writes: list[list[Any]] = []

    class Recording(NaiveEngine):
        def push_sync(self, fn: Any, ctx: Any, const_vars: Any = (), mutate_vars: Any = (),
                      *args: Any, **kwargs: Any) -> None:  # fmt: skip
            writes.append(list(mutate_vars))
            super().push_sync(fn, ctx, const_vars, mutate_vars, *args, **kwargs)

    with engine.engine_type(Recording()):
        exe.set_monitor_callback(lambda n, a: None)
        got = exe.forward(is_train=False)[0].asnumpy()
    assert len(writes) == len(exe._fwd_runs)
    assert all(w[-1] is exe._bulk.token for w in writes)
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_a_memoizable_node_reading_what_its_segment_writes_starts_the_next_one() -> None:
    """Its skip test reads variable versions, which a segment bumps only when it ends."""
    s, shapes = NETS["mlp"]
    runs = bind(s(), False, grad_req="null", **shapes)._fwd_runs
    token = engine.get_engine().new_var()
    assert [len(st.runs) for st in plan_steps(runs, 100, nv.cpu(), {}, token)] == [len(runs)]
    memo = NodeRun(**{**runs[3].__dict__, "memo": True, "fn_train": None, "fn_infer": None})
    memo.const_vars = list(runs[2].mutate_vars)
    steps = plan_steps([*runs[:3], memo, *runs[4:]], 100, nv.cpu(), {}, token)
    assert [len(st.runs) for st in steps] == [3, len(runs) - 3]
    memo.const_vars = list(runs[0].const_vars)  # reads only what comes from outside
    assert len(plan_steps([*runs[:3], memo, *runs[4:]], 100, nv.cpu(), {}, token)) == 1


# -- same results as per-node pushes -------------------------------------------------------------


@pytest.mark.parametrize("net", sorted(NETS))
@pytest.mark.parametrize("name", ENGINES)
def test_training_and_inference_match_per_node_pushes(net: str, name: str) -> None:
    s, shapes = NETS[net]
    for train in (True, False):
        req = "write" if train else "null"
        want = reference(lambda bulk, req=req: bind(s(), bulk, req, **shapes), train, times=2)
        with engine.engine_type(name):
            exe = bind(s(), True, req, **shapes)
            assert any(isinstance(st, Segment) for st in exe._bulk.fwd)
            fill(exe)
            assert_same(step(exe, train, times=2), want)


def test_mlp_matches_numpy() -> None:
    s, shapes = NETS["mlp"]
    exe = bind(s(), True, "null", **shapes)
    fill(exe)
    a = {n: v.asnumpy().astype(np.float64) for n, v in exe.arg_dict.items()}
    h = np.maximum(a["data"] @ a["fc1_weight"].T + a["fc1_bias"], 0)
    h = np.tanh(h @ a["fc2_weight"].T + a["fc2_bias"])
    z = h @ a["fc3_weight"].T + a["fc3_bias"]
    p = np.exp(z - z.max(1, keepdims=True))
    np.testing.assert_allclose(exe.forward()[0].asnumpy(), p / p.sum(1, keepdims=True), rtol=1e-4)


@pytest.mark.parametrize("name", ENGINES)
def test_grad_req_add_accumulates_as_per_node(name: str) -> None:
    s, shapes = NETS["resnetish"]
    want = reference(lambda bulk: bind(s(), bulk, "add", **shapes), True, times=3)
    with engine.engine_type(name):
        exe = bind(s(), True, "add", **shapes)
        fill(exe)
        assert len(exe._bulk.bwd) < len(exe._bwd_runs)
        assert_same(step(exe, True, times=3), want)


@pytest.mark.parametrize("name", ENGINES)
def test_executors_sharing_arrays_and_memory_stay_ordered(name: str) -> None:
    """Two executors over the same arguments, and a reshaped one borrowing the blocks of
    the first, run back to back without waits: as per-node pushes, every value is right."""
    s, _ = NETS["mlp"]
    with engine.engine_type("NaiveEngine"):
        ref = bind(s(), False, "null", data=(5, 8))
        fill(ref)
        want_big = ref.forward()[0].asnumpy()
        small_ref = ref.reshape(data=(3, 8), softmax_label=(3,))
        want_small = small_ref.forward()[0].asnumpy()
    with engine.engine_type(name):
        exe = bind(s(), True, "null", data=(5, 8))
        fill(exe)
        twin = s().bind(nv.cpu(), exe.arg_dict, aux_states=exe.aux_dict, grad_req="null")
        assert exe._bulk.hideable
        outs = [exe.forward()[0]]
        small = exe.reshape(
            data=(3, 8), softmax_label=(3,)
        )  # borrows exe's blocks: exe now hides none
        assert not exe._bulk.hideable
        assert all(
            not st.const_vars or st.const_vars[-1] is not exe._bulk.token for st in exe._bulk.fwd
        )
        for _ in range(3):
            outs += [small.forward()[0], exe.forward()[0], twin.forward()[0]]
        np.testing.assert_allclose(outs[0].asnumpy(), want_big, rtol=1e-6)
        np.testing.assert_allclose(small.outputs[0].asnumpy(), want_small, rtol=1e-6)
        np.testing.assert_allclose(exe.outputs[0].asnumpy(), want_big, rtol=1e-6)
        np.testing.assert_allclose(twin.outputs[0].asnumpy(), want_big, rtol=1e-6)


# -- what stays per node ---------------------------------------------------------------------------


class BulkCube(CustomOp):
    """y = x^3 with nd ops on the callback thread; dx = 3 x^2 dy."""

    def forward(self, is_train, req, in_data, out_data, aux):  # type: ignore[no-untyped-def]
        self.assign(out_data[0], req[0], in_data[0] * in_data[0] * in_data[0])

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):  # type: ignore[no-untyped-def]
        self.assign(in_grad[0], req[0], out_grad[0] * in_data[0] * in_data[0] * 3.0)


@register("t_bulk_cube")
class BulkCubeProp(CustomOpProp):
    def create_operator(self, ctx, shapes, dtypes):  # type: ignore[no-untyped-def]
        return BulkCube()


@pytest.mark.parametrize("name", ENGINES)
def test_a_custom_op_inside_runs_alone_between_segments(name: str) -> None:
    def net() -> sym.Symbol:
        x = sym.Variable("data")
        h = sym.FullyConnected(x, num_hidden=6, name="fc1")
        h = sym.Activation(h, act_type="tanh", name="t1")
        h = sym.Custom(h, op_type="t_bulk_cube", name="cube")
        h = sym.FullyConnected(h, num_hidden=4, name="fc2")
        h = sym.FullyConnected(sym.Activation(h, act_type="relu"), num_hidden=3, name="fc3")
        return sym.SoftmaxOutput(h, name="softmax")

    shapes = {"data": (4, 5)}
    want = reference(lambda bulk: bind(net(), bulk, "write", **shapes), True, times=2)
    with engine.engine_type(name):
        exe = bind(net(), True, "write", **shapes)
        names = [[r.node.name for r in _runs(st)] for st in exe._bulk.fwd]
        assert len(names) == 3
        assert names[1] == ["cube"]
        if exe._bulk.chained:  # with all its variables, and the token
            (cube,) = _runs(exe._bulk.fwd[1])
            assert exe._bulk.fwd[1].mutate_vars == [*cube.mutate_vars, exe._bulk.token]
        fill(exe)
        assert_same(step(exe, True, times=2), want)
    x = exe.arg_dict["data"].asnumpy()
    a = {n: v.asnumpy() for n, v in exe.arg_dict.items()}
    cube = np.tanh(x @ a["fc1_weight"].T + a["fc1_bias"]) ** 3
    h = np.maximum(cube @ a["fc2_weight"].T + a["fc2_bias"], 0) @ a["fc3_weight"].T + a["fc3_bias"]
    p = np.exp(h - h.max(1, keepdims=True))
    np.testing.assert_allclose(exe.outputs[0].asnumpy(), p / p.sum(1, keepdims=True), rtol=1e-4)


@pytest.mark.parametrize("name", ENGINES)
def test_a_monitor_sees_every_node_as_without_bulking(name: str) -> None:
    net, shapes = NETS["lenet"]
    s = net()  # one symbol: the same node names for both binds

    def seen(bulk: bool) -> list[tuple[str, np.ndarray]]:
        exe = bind(s, bulk, "write", **shapes)
        fill(exe)
        got: list[tuple[str, np.ndarray]] = []
        exe.set_monitor_callback(lambda n, a: got.append((n, a.asnumpy().copy())), True)
        exe.forward(is_train=True)
        exe.backward()
        return got

    with engine.engine_type("NaiveEngine"):
        want = seen(False)
    with engine.engine_type(name):
        got = seen(True)
    assert [n for n, _ in got] == [n for n, _ in want]
    assert len(got) > 20
    for (n, a), (_, b) in zip(got, want):
        if n.endswith("_mask"):  # max pooling's mask: kNullOp (unwritten) when nothing reads it
            continue
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6, err_msg=n)


@pytest.mark.parametrize("name", ENGINES)
def test_profiler_records_each_node_of_a_segment(name: str, tmp_path: Any) -> None:
    s, shapes = NETS["lenet"]
    with engine.engine_type(name):
        exe = bind(s(), True, "write", **shapes)
        fill(exe)
        step(exe, True)
        profiler.set_config(profile_all=True, filename=str(tmp_path / "p.json"))
        RECORDER.clear()
        profiler.set_state("run")
        try:
            step(exe, True)
            nv.nd.waitall()
        finally:
            profiler.set_state("stop")
    names = [op.name for op in RECORDER.ops if " (" in op.name]
    RECORDER.clear()
    want = [r.label for r in exe._fwd_runs + exe._bwd_runs]
    assert sorted(names) == sorted(want)  # each node once, no row for the segments
    assert len(exe._bulk.fwd) + len(exe._bulk.bwd) < len(want)


@pytest.fixture
def picky_op(scoped_registry: None) -> None:
    def forward(attrs: Any, ctx: Any, ins: list[Any], req: list[Any], outs: list[Any]) -> None:
        if (np.asarray(ins[0]) < 0).any():
            raise ValueError("t_bulk_picky wants non-negative input")
        outs[0][...] = ins[0]

    (
        nv.register_op("t_bulk_picky")
        .set_num_inputs(1)
        .set_num_outputs(1)
        .set_attr("FInferShape", nv.elemwise_shape(1, 1))
        .set_attr("FInferType", nv.elemwise_type(1, 1))
        .set_attr("FCompute<cpu>", forward)
    )


@pytest.mark.parametrize("name", ENGINES)
def test_a_failing_node_mid_segment_is_named_and_the_executor_recovers(
    picky_op: None, name: str
) -> None:
    x = sym.Variable("data")
    h = sym.FullyConnected(x, num_hidden=4, name="fc1")
    h = sym.t_bulk_picky(h, name="pk")
    h = sym.FullyConnected(h, num_hidden=3, name="fc2")
    s = sym.FullyConnected(h, num_hidden=2, name="fc3")
    with engine.engine_type(name):
        exe = bind(s, True, "null", data=(2, 3))
        assert [len(st.runs) for st in exe._bulk.fwd] == [4]
        exe.arg_dict["fc1_weight"][:] = np.eye(4, 3)
        for n in ("fc1_bias", "fc2_bias", "fc3_bias"):
            exe.arg_dict[n][:] = 0
        exe.arg_dict["fc2_weight"][:] = np.ones((3, 4))
        exe.arg_dict["fc3_weight"][:] = np.ones((2, 3))
        out = exe.forward(data=-np.ones((2, 3)))[0]
        with pytest.raises(nv.NNVMError, match=r"'pk \(t_bulk_picky\)'.*non-negative"):
            out.asnumpy()
        good = exe.forward(data=np.array([[1.0, 2.0, 3.0], [0.0, 1.0, 0.0]]))[0]
        np.testing.assert_allclose(good.asnumpy(), [[18.0, 18.0], [3.0, 3.0]])
        np.testing.assert_allclose(nv.nd.relu(nv.nd.array([-1.0, 2.0])).asnumpy(), [0.0, 2.0])
        nv.nd.waitall()


def test_folded_batchnorm_follows_new_parameters_inside_a_segment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """SimplifyInference's fold node is memoizable (skipped while its inputs are
    unchanged): inside a segment it must still rerun when gamma changes."""
    monkeypatch.setenv("NNVMPY_SIMPLIFY_INFERENCE", "1")
    x = sym.Variable("data")
    h = sym.Convolution(x, kernel=(1, 1), num_filter=2, no_bias=True, name="c")
    s = sym.Activation(sym.BatchNorm(h, fix_gamma=False, name="bn"), act_type="relu")
    exe = bind(s, True, "null", data=(1, 2, 2, 2))
    assert exe._simplified
    assert [type(st) for st in exe._bulk.fwd] == [Segment]
    assert any(r.memo for r in exe._bulk.fwd[0].runs)
    fill(exe)
    a = {**{n: v.asnumpy() for n, v in exe.arg_dict.items()}}
    a.update({n: v.asnumpy() for n, v in exe.aux_dict.items()})

    def want() -> np.ndarray:
        y = np.einsum("oc,nchw->nohw", a["c_weight"][:, :, 0, 0], a["data"])
        scale = a["bn_gamma"] / np.sqrt(a["bn_moving_var"] + 1e-3)
        y = (y - a["bn_moving_mean"][:, None, None]) * scale[:, None, None]
        return np.maximum(y + a["bn_beta"][:, None, None], 0)

    for gamma in ([1.0, 2.0], [0.5, -1.0], [0.5, -1.0]):
        a["bn_gamma"] = np.array(gamma, np.float32)
        exe.copy_params_from({"bn_gamma": a["bn_gamma"]})
        np.testing.assert_allclose(exe.forward()[0].asnumpy(), want(), rtol=1e-5, atol=1e-6)
