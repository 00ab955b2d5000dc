"""Partitioning by op names (passes/partition.py) and the `_CachedOp` node it makes.

The reference is always the same symbol unpartitioned (and NumPy for the values): the
graphs are the kinds MXNet's test_subgraph_op.py partitions — a shared input, a group
that would close a cycle through an outside node, BatchNorm's auxiliary states,
duplicate heads, a duplicate input entry, an empty name list, a zero (unknown) dimension.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy import sym
from nnvmpy.base import NNVMError
from nnvmpy.passes.partition import (
    SUBGRAPH_BACKENDS,
    partition_by_op_names,
    remove_subgraph_op_names,
    set_subgraph_op_names,
    subgraph_op_names,
)

PLUS = ["_Plus", "elemwise_add", "_plus"]


def shared_input() -> Any:
    data1 = sym.var("data1", shape=(2, 3, 6, 6))
    data2 = sym.var("data2")
    conv1 = sym.Convolution(data=data1, weight=data2, no_bias=True, kernel=(2, 2), num_filter=1)
    conv2 = sym.Convolution(data=data2, no_bias=True, kernel=(1, 1), num_filter=1)
    return sym.Group([conv1, conv2])


def diamond() -> Any:
    data = sym.var("data", shape=(2, 3, 4, 4))
    e = sym.exp(data)
    return sym.cos(e) + sym.sin(e)


def diamond_bn() -> Any:
    return sym.BatchNorm(sym.BatchNorm(diamond(), name="bn1"), name="bn2")


def duplicate_heads() -> Any:
    e = sym.exp(sym.var("data", shape=(2, 3)))
    return sym.Group([e, e, e])


def duplicate_input() -> Any:
    data = sym.var("data", shape=(2, 3))
    return data + data


def zero_dim() -> Any:
    data1 = sym.var("data1", shape=(3, 3, 6, 6), dtype=np.float32)
    data2 = sym.var("data2", shape=(1, 0, 2, 2))
    return sym.Convolution(data=data1, weight=sym.sin(data2), kernel=(2, 2), num_filter=1)


def long_cycle() -> Any:
    data = sym.var("data", shape=(1,))
    r1 = sym.sin(data)
    r2 = sym.cos(r1)
    for _ in range(5):
        r2 = sym.cos(r2)
    return r1 + r2


def two_inputs_reordered() -> Any:
    # the group {x, y, z} has outputs y, z: its subgraph's DFS from them meets b before a
    a = sym.var("a", shape=(2, 2))
    b = sym.var("b", shape=(2, 2))
    x = sym.exp(a)
    y = b * x
    return sym.Group([x * y, y])


def crossed_groups() -> Any:
    # {sub, mul2} and {cos, mul1} are each convex, but mul2 reads cos and mul1 reads sub:
    # as two nodes they would read each other
    v0 = sym.var("v0", shape=(2, 3))
    v2 = sym.var("v2", shape=(2, 3))
    sub = v0 - v2
    c = sym.cos(v2)
    return sym.Group([sub * c, c * sub])


def head_between() -> Any:
    # the DFS meets w1 (a head) between the two halves of a would-be group; one node
    # there would list w0 before w1
    v0 = sym.var("v0", shape=(2, 3))
    w1 = sym.var("w1", shape=(2, 3))
    w0 = sym.var("w0", shape=(2, 3))
    c = sym.cos(sym.exp(v0))
    return sym.Group([sym.cos(c), w1, c - w0])


CASES: list[tuple[str, Callable[[], Any], list[str]]] = [
    ("shared_input", shared_input, ["Convolution"]),
    ("diamond_sin", diamond, ["exp", "sin", *PLUS]),
    ("diamond_cos", diamond, ["exp", "cos", *PLUS]),
    ("diamond_all", diamond, ["exp", "sin", "cos", *PLUS]),
    ("bn_sin", diamond_bn, ["exp", "sin", *PLUS]),
    ("bn_cos", diamond_bn, ["exp", "cos", *PLUS]),
    ("bn_sin_bn", diamond_bn, ["exp", "sin", *PLUS, "BatchNorm"]),
    ("bn_cos_bn", diamond_bn, ["exp", "cos", *PLUS, "BatchNorm"]),
    ("bn_exp_bn", diamond_bn, ["exp", "BatchNorm"]),
    ("bn_only", diamond_bn, ["BatchNorm"]),
    ("dup_heads", duplicate_heads, ["exp"]),
    ("dup_input", duplicate_input, PLUS),
    ("zero_dim_none", zero_dim, []),
    ("zero_dim_sin", zero_dim, ["sin"]),
    ("zero_dim_conv", zero_dim, ["Convolution"]),
    ("zero_dim_both", zero_dim, ["sin", "Convolution"]),
    ("long_cycle", long_cycle, ["sin", *PLUS]),
    ("reordered", two_inputs_reordered, ["exp", "elemwise_mul"]),
    ("crossed", crossed_groups, ["elemwise_sub", "cos", "elemwise_mul"]),
    ("head_between", head_between, ["exp", "cos", "elemwise_sub"]),
]
IDS = [c[0] for c in CASES]


def ops_of(symbol: Any) -> list[str]:
    return [n.op.name for n in symbol._nodes() if n.op is not None]


def random_inputs(symbol: Any, seed: int = 0) -> tuple[dict[str, Any], dict[str, Any]]:
    rng = np.random.default_rng(seed)
    arg_shapes, _, aux_shapes = symbol.infer_shape()
    args = {
        n: rng.uniform(0.1, 1.0, s).astype(np.float32)
        for n, s in zip(symbol.list_arguments(), arg_shapes)
    }
    aux = {
        n: rng.uniform(0.1, 1.0, s).astype(np.float32)
        for n, s in zip(symbol.list_auxiliary_states(), aux_shapes)
    }
    return args, aux


def bind(symbol: Any, args: dict[str, Any], aux: dict[str, Any], grad: bool = False) -> Any:
    """An executor over copies of the arrays (lists in the symbol's order, as MXNet's test)."""
    arg_list = [nv.nd.array(args[n]) for n in symbol.list_arguments()]
    aux_list = [nv.nd.array(aux[n]) for n in symbol.list_auxiliary_states()]
    grads = [nv.nd.zeros(a.shape) for a in arg_list] if grad else None
    return symbol.bind(nv.cpu(), arg_list, args_grad=grads, aux_states=aux_list)


@pytest.fixture(autouse=True)
def no_registered_names() -> Iterator[None]:
    yield
    for backend in SUBGRAPH_BACKENDS:
        remove_subgraph_op_names(backend)


# -- structure -------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", SUBGRAPH_BACKENDS)
@pytest.mark.parametrize(("make", "names"), [c[1:] for c in CASES], ids=IDS)
def test_inputs_arguments_and_aux_keep_their_order(
    make: Any, names: list[str], backend: str
) -> None:
    s = make()
    p = partition_by_op_names(s, names, backend)
    assert p.list_inputs() == s.list_inputs()
    assert p.list_arguments() == s.list_arguments()
    assert p.list_auxiliary_states() == s.list_auxiliary_states()
    assert len(p.list_outputs()) == len(s.list_outputs())


def test_groups_are_convex_and_named_like_mxnet() -> None:
    # exp -> cos -> plus and exp -> sin -> plus: with cos outside, plus cannot join exp's group
    p = partition_by_op_names(diamond(), ["exp", "sin", *PLUS])
    assert ops_of(p) == ["_CachedOp", "cos", "_CachedOp"]
    names = [n.name for n in p._nodes() if n.op is not None and n.op.name == "_CachedOp"]
    assert names == ["_CachedOp0", "_CachedOp1"]
    inner = [n.op.name for n in p._nodes()[1].attrs.parsed.subgraphs[0].indexed.nodes if n.op]
    assert inner == ["exp", "sin"]
    # every selected node of the diamond: one group
    assert ops_of(partition_by_op_names(diamond(), ["exp", "sin", "cos", *PLUS])) == ["_CachedOp"]
    # sin ... cos x6 ... plus: sin and plus stay apart
    assert ops_of(partition_by_op_names(long_cycle(), ["sin", *PLUS])).count("_CachedOp") == 2


def test_groups_that_would_read_each_other_stay_apart() -> None:
    p = partition_by_op_names(crossed_groups(), ["elemwise_sub", "cos", "elemwise_mul"])
    sizes = [len(n.attrs.parsed.subgraphs[0].indexed.nodes) for n in p._nodes() if n.op]
    assert sorted(sizes) == [2, 6]  # {cos} and {sub, mul, mul}, with their variables
    p = partition_by_op_names(head_between(), ["exp", "cos", "elemwise_sub"])
    assert ops_of(p).count("_CachedOp") == 2


def test_duplicate_heads_and_inputs_are_one_entry() -> None:
    p = partition_by_op_names(duplicate_heads(), ["exp"])
    node = p._heads[0].node
    assert [h.node for h in p._heads] == [node] * 3
    assert {h.index for h in p._heads} == {0}
    assert len(node.inputs) == 1
    assert len(node.attrs.parsed.subgraphs[0].outputs) == 1
    p = partition_by_op_names(duplicate_input(), PLUS)
    node = p._heads[0].node
    assert len(node.inputs) == 1
    assert node.inputs[0].node.name == "data"


@pytest.mark.parametrize("names", [[], ["nonexistent_op"], ["Convolution"]])
def test_nothing_selected_leaves_the_graph(names: list[str]) -> None:
    s = diamond()
    p = partition_by_op_names(s, names)
    assert p is not s
    assert ops_of(p) == ops_of(s)
    assert p.tojson() == s.tojson()


def test_variables_are_never_selected() -> None:
    assert ops_of(partition_by_op_names(diamond(), ["null", "exp"])) == [
        "_CachedOp",
        "cos",
        "sin",
        "elemwise_add",
    ]


def test_original_symbol_is_unchanged() -> None:
    s = diamond_bn()
    before = s.tojson()
    partition_by_op_names(s, ["exp", "sin", "BatchNorm", *PLUS])
    assert s.tojson() == before


def test_aux_states_are_mutated_inputs_of_the_cached_op() -> None:
    p = partition_by_op_names(diamond_bn(), ["BatchNorm"])
    assert p.list_auxiliary_states() == [
        "bn1_moving_mean",
        "bn1_moving_var",
        "bn2_moving_mean",
        "bn2_moving_var",
    ]
    assert "bn1_gamma" in p.list_arguments()
    assert "bn1_moving_mean" not in p.list_arguments()


# -- values --------------------------------------------------------------------------------------


def numpy_diamond(x: np.ndarray) -> np.ndarray:
    return np.cos(np.exp(x)) + np.sin(np.exp(x))


@pytest.mark.parametrize("backend", SUBGRAPH_BACKENDS)
@pytest.mark.parametrize(("make", "names"), [c[1:] for c in CASES], ids=IDS)
def test_forward_equals_unpartitioned(make: Any, names: list[str], backend: str) -> None:
    s = make()
    p = partition_by_op_names(s, names, backend)
    args, aux = random_inputs(s)
    want = [o.asnumpy() for o in bind(s, args, aux).forward()]
    got = [o.asnumpy() for o in bind(p, args, aux).forward()]
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6)


def test_forward_matches_numpy() -> None:
    p = partition_by_op_names(diamond(), ["exp", "sin", *PLUS])
    x = np.random.default_rng(1).uniform(-1, 1, (2, 3, 4, 4)).astype(np.float32)
    out = p.bind(nv.cpu(), {"data": nv.nd.array(x)}).forward()[0].asnumpy()
    np.testing.assert_allclose(out, numpy_diamond(x), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(("make", "names"), [c[1:] for c in CASES], ids=IDS)
def test_backward_equals_unpartitioned(make: Any, names: list[str]) -> None:
    s = make()
    p = partition_by_op_names(s, names)
    args, aux = random_inputs(s, seed=2)
    results = []
    for symbol in (s, p):
        exe = bind(symbol, args, aux, grad=True)
        outs = exe.forward(is_train=True)
        rng = np.random.default_rng(3)
        exe.backward([nv.nd.array(rng.uniform(-1, 1, o.shape).astype(np.float32)) for o in outs])
        results.append(
            (
                [o.asnumpy() for o in outs],
                {n: g.asnumpy() for n, g in exe.grad_dict.items()},
                {n: a.asnumpy() for n, a in exe.aux_dict.items()},
            )
        )
    (o1, g1, a1), (o2, g2, a2) = results
    for x, y in zip(o1, o2):
        np.testing.assert_allclose(y, x, rtol=1e-5, atol=1e-6)
    assert g1.keys() == g2.keys()
    for n in g1:
        np.testing.assert_allclose(g2[n], g1[n], rtol=1e-4, atol=1e-5, err_msg=n)
    assert a1.keys() == a2.keys()
    for n in a1:
        np.testing.assert_allclose(a2[n], a1[n], rtol=1e-5, atol=1e-6, err_msg=n)


def test_batchnorm_train_updates_aux_through_the_cached_op() -> None:
    s = diamond_bn()
    p = partition_by_op_names(s, ["exp", "sin", "BatchNorm", *PLUS])
    assert "BatchNorm" not in ops_of(p)
    args, aux = random_inputs(s, seed=4)
    exe = bind(p, args, aux)
    exe.forward(is_train=True)
    ref = bind(s, args, aux)
    ref.forward(is_train=True)
    for n in s.list_auxiliary_states():
        assert not np.allclose(exe.aux_dict[n].asnumpy(), aux[n]), n  # updated
        np.testing.assert_allclose(exe.aux_dict[n].asnumpy(), ref.aux_dict[n].asnumpy(), rtol=1e-5)
    # the first BatchNorm's moving mean, from NumPy: 0.9 * old + 0.1 * batch mean
    x = numpy_diamond(args["data"])
    want = 0.9 * aux["bn1_moving_mean"] + 0.1 * x.mean(axis=(0, 2, 3))
    np.testing.assert_allclose(exe.aux_dict["bn1_moving_mean"].asnumpy(), want, rtol=1e-5)


# -- JSON, front-ends ---------------------------------------------------------------------------


@pytest.mark.parametrize(("make", "names"), [c[1:] for c in CASES], ids=IDS)
def test_json_round_trip(make: Any, names: list[str]) -> None:
    s = make()
    p = partition_by_op_names(s, names)
    q = nv.sym.load_json(p.tojson())
    assert q.tojson() == p.tojson()
    assert q.list_inputs() == s.list_inputs()
    assert q.list_auxiliary_states() == s.list_auxiliary_states()
    args, aux = random_inputs(s, seed=5)
    want = [o.asnumpy() for o in bind(s, args, aux).forward()]
    got = [o.asnumpy() for o in bind(q, args, aux).forward()]
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6)


def test_json_keeps_input_locs_when_the_subgraph_order_differs() -> None:
    p = partition_by_op_names(two_inputs_reordered(), ["exp", "elemwise_mul"])
    node = next(n for n in p._nodes() if n.op is not None and n.op.name == "_CachedOp")
    assert node.attrs.dict == {"input_locs": "[1, 0]"}
    assert "input_locs" in p.tojson()


def test_op_names_registry() -> None:
    assert subgraph_op_names("default") is None
    set_subgraph_op_names("default", ["exp", "sin"])
    assert subgraph_op_names("default") == ["exp", "sin"]
    assert subgraph_op_names("default_v2") is None
    remove_subgraph_op_names("default")
    assert subgraph_op_names("default") is None


@pytest.mark.parametrize(
    "call",
    [
        lambda: set_subgraph_op_names("MKLDNN", ["exp"]),
        lambda: remove_subgraph_op_names("MKLDNN"),
        lambda: subgraph_op_names("MKLDNN"),
        lambda: partition_by_op_names(diamond(), ["exp"], "MKLDNN"),
    ],
)
def test_unknown_backend_is_an_error(call: Any) -> None:
    with pytest.raises(NNVMError, match=r"'MKLDNN'.*\['default', 'default_v2'\]"):
        call()


@pytest.mark.parametrize("backend", SUBGRAPH_BACKENDS)
def test_optimize_for_partitions_with_the_registered_names(backend: str) -> None:
    s = diamond_bn()
    with pytest.raises(NNVMError, match="no op names are registered"):
        s.optimize_for(backend)
    set_subgraph_op_names(backend, ["exp", "sin", *PLUS])
    p = s.optimize_for(backend)
    assert ops_of(p) == ops_of(partition_by_op_names(s, ["exp", "sin", *PLUS]))
    args, aux = random_inputs(s)
    p2 = s.optimize_for(backend, {k: nv.nd.array(v) for k, v in args.items()}, None)
    assert p2.list_inputs() == s.list_inputs()
    np.testing.assert_allclose(
        bind(p2, args, aux).forward()[0].asnumpy(), bind(s, args, aux).forward()[0].asnumpy()
    )


def test_optimize_for_fuse_and_unknown_are_unchanged() -> None:
    assert "_CachedOp" not in ops_of(diamond().optimize_for("fuse"))
    with pytest.raises(NNVMError, match=r"unknown backend 'tensorrt'"):
        diamond().optimize_for("tensorrt")


@pytest.mark.parametrize("backend", SUBGRAPH_BACKENDS)
@pytest.mark.parametrize("how", ["bind", "simple_bind"])
def test_env_backend_partitions_at_bind(
    backend: str, how: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    s = diamond_bn()
    args, aux = random_inputs(s)

    def run() -> tuple[Any, np.ndarray]:
        if how == "bind":
            exe = bind(s, args, aux)
        else:
            exe = s.simple_bind(nv.cpu(), grad_req="null")
            for n, v in {**args, **aux}.items():
                (exe.arg_dict if n in exe.arg_dict else exe.aux_dict)[n][:] = v
        return exe, exe.forward()[0].asnumpy()

    plain, want = run()
    assert "_CachedOp" not in ops_of(plain._symbol)
    monkeypatch.setenv("MXNET_SUBGRAPH_BACKEND", backend)
    plain2, _ = run()  # no names registered: no partition
    assert "_CachedOp" not in ops_of(plain2._symbol)
    set_subgraph_op_names(backend, ["exp", "cos", "BatchNorm", *PLUS])
    exe, got = run()
    assert "_CachedOp" in ops_of(exe._symbol)
    assert list(exe.arg_dict) == s.list_arguments()
    assert list(exe.aux_dict) == s.list_auxiliary_states()
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    monkeypatch.setenv("MXNET_SUBGRAPH_BACKEND", "NONE")
    off, _ = run()
    assert "_CachedOp" not in ops_of(off._symbol)


def test_env_backend_nnvmpy_lacks_is_an_error_and_mkldnn_binds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """As MXNet's registry: a backend it does not have fails bind, naming the variable;
    MKLDNN (MXNet's oneDNN default) binds unpartitioned; bind works again afterwards."""
    s = diamond_bn()
    args, aux = random_inputs(s)
    set_subgraph_op_names("default", ["exp", "cos", "BatchNorm", *PLUS])
    monkeypatch.setenv("MXNET_SUBGRAPH_BACKEND", "TensorRT")
    with pytest.raises(NNVMError, match=r"MXNET_SUBGRAPH_BACKEND='TensorRT'.*'default'"):
        bind(s, args, aux)
    monkeypatch.setenv("MXNET_SUBGRAPH_BACKEND", "MKLDNN")
    exe = bind(s, args, aux)
    assert "_CachedOp" not in ops_of(exe._symbol)
    got = exe.forward()[0].asnumpy()
    monkeypatch.delenv("MXNET_SUBGRAPH_BACKEND")
    np.testing.assert_array_equal(got, bind(s, args, aux).forward()[0].asnumpy())


def test_env_backend_leaves_group2ctx_binds_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """MXNet partitions at bind only without group2ctx (placement is per original node)."""
    s = diamond_bn()
    args, aux = random_inputs(s)
    set_subgraph_op_names("default", ["exp", "cos", "BatchNorm", *PLUS])
    monkeypatch.setenv("MXNET_SUBGRAPH_BACKEND", "default")
    arrays = {n: nv.nd.array(v) for n, v in args.items()}
    aux_arrays = {n: nv.nd.array(v) for n, v in aux.items()}
    placed = s.bind(nv.cpu(), arrays, aux_states=aux_arrays, group2ctx={"dev1": nv.cpu(1)})
    assert "_CachedOp" not in ops_of(placed._symbol)
    assert "_CachedOp" in ops_of(s.bind(nv.cpu(), arrays, aux_states=aux_arrays)._symbol)


def test_cached_op_on_every_device(ctx: nv.Context) -> None:
    """Forward (train: BatchNorm's aux update) and gradients of a partitioned graph on
    the device equal the unpartitioned graph's on the CPU."""
    s = diamond_bn()
    p = partition_by_op_names(s, ["exp", "sin", "BatchNorm", *PLUS])
    args, aux = random_inputs(s, seed=6)
    results = []
    for symbol, c in ((s, nv.cpu()), (p, ctx)):
        exe = symbol.bind(
            c,
            {n: nv.nd.array(v, ctx=c) for n, v in args.items()},
            args_grad={n: nv.nd.zeros(v.shape, ctx=c) for n, v in args.items()},
            aux_states={n: nv.nd.array(v, ctx=c) for n, v in aux.items()},
        )
        out = exe.forward(is_train=True)[0]
        exe.backward([nv.nd.ones(out.shape, ctx=c)])
        results.append(
            [out.asnumpy()]
            + [exe.grad_dict[n].asnumpy() for n in args]
            + [exe.aux_dict[n].asnumpy() for n in aux]
        )
    for want, got in zip(*results):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_mxnet_json_cached_op_with_flags_loads() -> None:
    """MXNet writes a `_CachedOp` node without attributes (its inputs in its subgraph's
    input order); a hybridized block's node may carry CachedOp flags."""
    import json

    s = diamond()
    doc = json.loads(partition_by_op_names(s, ["exp", "sin", *PLUS]).tojson())
    cached = [n for n in doc["nodes"] if n["op"] == "_CachedOp"]
    assert len(cached) == 2
    assert all("attrs" not in n for n in cached)
    cached[0]["attrs"] = {"static_alloc": "true", "static_shape": "false"}
    q = nv.sym.load_json(json.dumps(doc))
    args, aux = random_inputs(s)
    np.testing.assert_allclose(
        bind(q, args, aux).forward()[0].asnumpy(), bind(s, args, aux).forward()[0].asnumpy()
    )


def random_graph(seed: int) -> tuple[Any, list[str]]:
    """A random graph of unary and binary element-wise ops, a few heads, and op names."""
    import random

    unary, binary = ["sin", "cos", "exp", "tanh", "relu"], ["elemwise_add", "elemwise_mul"]
    r = random.Random(seed)
    n_vars = r.randint(1, 4)
    pool = [sym.var(f"v{i}", shape=(2, 3)) for i in range(n_vars)]
    for k in range(r.randint(2, 12)):
        if r.random() < 0.5:
            x = r.choice(pool[-6:] if r.random() < 0.7 else pool)
            pool.append(getattr(sym, r.choice(unary))(x))
        else:
            pool.append(getattr(sym, r.choice(binary))(r.choice(pool), r.choice(pool)))
        if r.random() < 0.15:
            pool.append(sym.var(f"w{k}", shape=(2, 3)))
    heads = [pool[-1], *r.sample(pool[n_vars:], min(len(pool) - n_vars, r.randint(0, 5)))]
    return sym.Group(heads), r.sample(unary + binary, r.randint(1, 6))


def test_random_graphs_partition_acyclic_in_order() -> None:
    for seed in range(300):
        s, names = random_graph(seed)
        p = partition_by_op_names(s, names)  # a cycle would raise
        assert p.list_inputs() == s.list_inputs(), (seed, names)


@pytest.mark.parametrize("seed", [3, 17, 4050, 9287])
def test_random_graphs_values(seed: int) -> None:
    s, names = random_graph(seed)
    p = partition_by_op_names(s, names)
    args, aux = random_inputs(s, seed)
    for got, want in zip(bind(p, args, aux).forward(), bind(s, args, aux).forward()):
        np.testing.assert_allclose(got.asnumpy(), want.asnumpy(), rtol=1e-5, atol=1e-6)
