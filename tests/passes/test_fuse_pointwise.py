"""FusePointwise: which nodes fuse, what the fused graph computes, and how bind uses it.

References are NumPy formulas of the same expressions; "unfused" is the same symbol
bound with NNVMPY_FUSION=0.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy import sym
from nnvmpy.base import NNVMError, ParamError
from nnvmpy.graph import Graph, apply_passes
from nnvmpy.passes.fuse_pointwise import fused_groups
from nnvmpy.registry import Op


def ops_of(symbol: Any) -> list[str]:
    return [n.op.name for n in Graph(symbol._heads).indexed.nodes if n.op is not None]


@pytest.fixture
def unfused(monkeypatch: pytest.MonkeyPatch) -> Any:
    """bind(symbol, **arrays) with fusion off."""

    def run(symbol: Any, **kw: Any) -> Any:
        monkeypatch.setenv("NNVMPY_FUSION", "0")
        try:
            return symbol.bind(nv.cpu(), {k: nv.nd.array(v, dtype=v.dtype) for k, v in kw.items()})
        finally:
            monkeypatch.delenv("NNVMPY_FUSION")

    return run


def bind(symbol: Any, grad: bool = False, req: str = "write", **kw: np.ndarray) -> Any:
    args = {k: nv.nd.array(v, dtype=v.dtype) for k, v in kw.items()}
    grads = {k: nv.nd.zeros(v.shape, dtype=v.dtype) for k, v in kw.items()} if grad else None
    return symbol.bind(nv.cpu(), args, args_grad=grads, grad_req=req)


RNG = np.random.default_rng(7)


def rand(*shape: int, dtype: Any = np.float64, low: float = -1.0, high: float = 1.0) -> Any:
    return RNG.uniform(low, high, shape).astype(dtype)


# -- the pass -----------------------------------------------------------------------------------


def test_a_chain_becomes_one_fused_node_named_after_its_result() -> None:
    x, y = sym.var("x"), sym.var("y")
    s = sym.tanh(sym.elemwise_add(sym.exp(x, name="e") * y, y, name="a"), name="t")
    f = s.optimize_for("fuse")
    assert ops_of(f) == ["_FusedOp"]
    assert f.list_outputs() == s.list_outputs()
    assert f.list_arguments() == ["x", "y"]
    (members,) = fused_groups(Graph(f._heads)).values()
    assert members[0] == "e"
    assert members[-1] == "t"
    # the original symbol is untouched
    assert ops_of(s) == ["exp", "elemwise_mul", "elemwise_add", "tanh"]


def test_fused_symbol_computes_the_formula() -> None:
    x, y = sym.var("x"), sym.var("y")
    f = (sym.tanh(sym.exp(x) * y + 1) / (y * y + 2)).optimize_for("fuse")
    X, Y = rand(4, 5), rand(4, 5)
    out = bind(f, x=X, y=Y).forward()[0].asnumpy()
    np.testing.assert_allclose(out, np.tanh(np.exp(X) * Y + 1) / (Y * Y + 2), rtol=1e-12)


@pytest.mark.parametrize("n", [64 * 500, 300_000])  # both loop paths (serial, prange)
def test_a_group_run_in_place_reads_its_input_from_the_output(
    n: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With out in its input's storage (the planner's FInplaceOption) the generated loop
    reads the input from out (fusion/compute.py _in_place; the overlap otherwise sends
    LLVM down the scalar loop): the same bits as out of place."""
    from nnvmpy.fusion import codegen, compute

    built: list[tuple[Any, ...]] = []
    real = codegen.build
    monkeypatch.setattr(codegen, "build", lambda *a: built.append(a) or real(*a))
    f = sym.tanh(sym.sigmoid(sym.var("x")) * 2.0).optimize_for("fuse")
    X = rand(n, dtype=np.float32, low=-4, high=4)
    want = bind(f, x=X).forward()[0].asnumpy()
    spec, modes = built[0][0], built[0][3]
    buf = X.copy()
    compute._run_cpu(None, spec, [buf], modes, [buf])
    np.testing.assert_array_equal(buf, want)
    assert built[-1][6] == ((0, 0),)  # the in-place variant ran: it reads x from out
    assert "x0 = o0[i]" in codegen.kernel_source(*built[-1])


def test_in_place_pairs_are_kept_only_for_the_same_arrays(monkeypatch: pytest.MonkeyPatch) -> None:
    """fusion.compute keeps the in-place pairs of a node's last arrays: other arrays, or
    the first ones back again, get their own (a stale pair would read x from out)."""
    from nnvmpy.fusion import codegen, compute

    built: list[tuple[Any, ...]] = []
    real = codegen.build
    monkeypatch.setattr(codegen, "build", lambda *a: built.append(a) or real(*a))
    f = sym.tanh(sym.sigmoid(sym.var("x")) * 2.0).optimize_for("fuse")
    X = rand(64, dtype=np.float32, low=-4, high=4)
    want = bind(f, x=X).forward()[0].asnumpy()
    spec, modes = built[0][0], built[0][3]
    buf = X.copy()
    compute._run_cpu(None, spec, [buf], modes, [buf])
    np.testing.assert_array_equal(buf, want)
    for _ in range(2):
        x, out = X.copy(), np.full_like(X, np.nan)
        compute._run_cpu(None, spec, [x], modes, [out])
        np.testing.assert_array_equal(out, want)
        assert spec.last_in_place[1] == ()
    buf[:] = X
    compute._run_cpu(None, spec, [buf], modes, [buf])
    np.testing.assert_array_equal(buf, want)
    assert spec.last_in_place[1] == ((0, 0),)


def test_groups_of_one_layout_share_one_built_kernel(fused_sources: list[str]) -> None:
    """Four groups alike but for their constants (flip between them stops fusion): no
    kernel source is generated twice (codegen.build's layout memo; an unrolled LSTM has
    hundreds of such groups), and each group still computes with its own constants."""
    h = sym.var("x")
    for c in (0.5, -0.25, 1.5, 2.0):
        h = sym.flip(sym.tanh(h * c + c), axis=0)
    X = rand(6, 5)
    want = X
    for c in (0.5, -0.25, 1.5, 2.0):
        want = np.tanh(want * c + c)[::-1]
    exe = bind(h, x=X)
    assert len(exe._fused_groups) == 4
    np.testing.assert_allclose(exe.forward()[0].asnumpy(), want, rtol=1e-12)
    assert 0 < len(fused_sources) == len(set(fused_sources)) < 4  # in place or not: two
    built = len(fused_sources)
    bind(h, x=X.astype(np.float32)).forward()[0].wait_to_read()  # other dtypes: own kernels
    assert len(fused_sources) == 2 * built


def test_groups_alike_but_for_names_infer_member_types_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Member dtypes are inferred once per member list and input dtypes in a process
    (FusedSpec.member_types; an unrolled LSTM has 800 such groups), keyed by the
    members' ops and attributes: other constants are other keys."""
    from nnvmpy.fusion import spec as spec_module

    monkeypatch.setattr(spec_module, "_member_types_cache", {})
    inferred: list[Any] = []
    real = spec_module.FusedSpec._infer_member_types
    monkeypatch.setattr(
        spec_module.FusedSpec,
        "_infer_member_types",
        lambda self, in_types: inferred.append(self) or real(self, in_types),
    )
    h = sym.var("x")
    for c in (0.5, 0.5, 0.5, 2.0):
        h = sym.flip(sym.tanh(h * c + c), axis=0)
    X = rand(6, 5)
    want = X
    for c in (0.5, 0.5, 0.5, 2.0):
        want = np.tanh(want * c + c)[::-1]
    exe = bind(h, x=X)
    nodes = exe._graph.indexed.nodes
    specs = [n.attrs.parsed for n in nodes if n.op is not None and n.op.name == "_FusedOp"]
    assert len(specs) == 4
    assert len({s.types_key for s in specs}) == 2
    np.testing.assert_allclose(exe.forward()[0].asnumpy(), want, rtol=1e-12)
    assert len({s.types_key for s in inferred}) == len(inferred) == 2
    for s in specs:
        assert s.member_types([np.dtype(np.float64)]) == [[np.dtype(np.float64)]] * 3


def test_a_non_element_wise_node_between_two_members_keeps_the_graph_acyclic() -> None:
    """exp -> flip -> mul with exp -> mul too: fusing exp with mul would need flip inside."""
    x = sym.var("x")
    t = sym.exp(x)
    s = sym.relu(t * sym.flip(t, axis=0))
    f = s.optimize_for("fuse")
    X = rand(3, 4)
    out = bind(f, x=X).forward()[0].asnumpy()
    np.testing.assert_allclose(out, np.maximum(np.exp(X) * np.exp(X)[::-1], 0), rtol=1e-12)
    groups = list(fused_groups(Graph(f._heads)).values())
    assert all(not ({"exp0", "_mul0"} <= set(g)) for g in groups)


def test_a_value_read_outside_the_group_is_an_output_of_the_fused_node() -> None:
    x = sym.var("x")
    t = sym.sin(x) * 3
    s = sym.Group([sym.cos(t) + t, sym.sum(t)])
    f = s.optimize_for("fuse")
    X = rand(2, 6)
    outs = [o.asnumpy() for o in bind(f, x=X).forward()]
    T = np.sin(X) * 3
    np.testing.assert_allclose(outs[0], np.cos(T) + T, rtol=1e-12)
    np.testing.assert_allclose(outs[1], T.sum(), rtol=1e-12)
    fused = [
        n for n in Graph(f._heads).indexed.nodes if n.op is not None and n.op.name == "_FusedOp"
    ]
    assert len(fused) == 1
    assert fused[0].num_outputs() == 2  # cos(t)+t, and t for sum


def test_each_fused_output_names_the_member_output_it_exposes() -> None:
    """fuse_entry_origins: the given node and output behind each fused output, from which
    the executor takes its shape and dtype instead of inferring them again."""
    x = sym.var("x")
    t = sym.sin(x, name="t") * 3
    s = sym.Group([sym.cos(t, name="c") + t, sym.sum(t)])
    given = Graph(s._heads)
    g = apply_passes(given, ["FusePointwise"])
    (node,) = [n for n in g.indexed.nodes if n.op is not None and n.op.name == "_FusedOp"]
    origins = g.attrs["fuse_entry_origins"][node]
    assert len(origins) == node.num_outputs() == 2  # the product, read by sum, and the add
    assert [(src.op.name, i) for src, i in origins] == [("_mul_scalar", 0), ("elemwise_add", 0)]
    assert all(given.indexed.exist(src) for src, _ in origins)  # nodes of the given graph


def test_shapes_and_dtypes_restrict_groups_when_known() -> None:
    """A bool input cannot be computed in by the generated kernels: its readers stay apart."""
    x = sym.var("x")
    s = sym.exp(x) + 1
    graph = apply_passes(
        Graph(s._heads),
        ["InferShape", "InferType", "FusePointwise"],
        shapes={"x": (2, 2)},
        dtypes={"x": "bool"},
    )
    assert graph.attrs["fused_groups"] == {}


def test_unknown_backend_is_a_named_error() -> None:
    with pytest.raises(NNVMError, match=r"optimize_for: unknown backend 'tensorrt'"):
        sym.exp(sym.var("x")).optimize_for("tensorrt")


def test_fused_op_cannot_be_made_from_attributes_and_the_registry_survives() -> None:
    f = (sym.exp(sym.var("x")) + 1).optimize_for("fuse")  # registers _FusedOp
    assert "_FusedOp" in Op.list_op_names()
    with pytest.raises(ParamError, match="_FusedOp: node 'n' cannot be made from attributes"):
        Op.get("_FusedOp").parse_attrs({"members": "a,b"}, "n")
    with pytest.raises(NNVMError, match="_FusedOp"):
        sym.load_json(f.tojson())
    X = rand(3)
    np.testing.assert_allclose(bind(f, x=X).forward()[0].asnumpy(), np.exp(X) + 1)


# -- at bind ------------------------------------------------------------------------------------


def test_bind_fuses_by_default_and_debug_str_lists_the_members(unfused: Any) -> None:
    x, y = sym.var("x"), sym.var("y")
    s = sym.sigmoid(x * y - 1, name="act")
    X, Y = rand(3, 3), rand(3, 3)
    exe = bind(s, x=X, y=Y)
    plan = exe.debug_str()
    assert "Op:_FusedOp, Name=act" in plan
    assert "Fused:3 nodes" in plan
    assert "\tOp:elemwise_mul, Name=_mul0" in plan or "Op:elemwise_mul" in plan
    ref = unfused(s, x=X, y=Y)
    assert "_FusedOp" not in ref.debug_str()
    np.testing.assert_allclose(
        exe.forward()[0].asnumpy(), ref.forward()[0].asnumpy(), rtol=0, atol=0
    )
    np.testing.assert_allclose(exe.outputs[0].asnumpy(), 1 / (1 + np.exp(-(X * Y - 1))))


@pytest.mark.parametrize("req", ["write", "add"])
def test_backward_is_fused_apart_from_forward_and_matches_the_formula(req: str) -> None:
    x, y = sym.var("x"), sym.var("y")
    s = sym.tanh(sym.exp(x) * y + 1) * x
    X, Y = rand(4, 3), rand(4, 3)
    exe = bind(s, grad=True, req=req, x=X, y=Y)
    groups = exe._fused_groups
    assert len(groups) == 2  # one forward, one backward group
    fwd = {n.name for n in Graph(exe.get_optimized_symbol()._heads).indexed.nodes}
    assert sum(name in fwd for name in groups) == 1
    exe.forward(is_train=True)
    dy = rand(4, 3)
    exe.backward(nv.nd.array(dy, dtype=dy.dtype))
    if req == "add":
        exe.forward(is_train=True)
        exe.backward(nv.nd.array(dy, dtype=dy.dtype))
    e = np.exp(X)
    t = np.tanh(e * Y + 1)
    dt = dy * X * (1 - t * t)
    gx = dy * t + dt * Y * e
    gy = dt * e
    times = 2 if req == "add" else 1
    np.testing.assert_allclose(exe.grad_dict["x"].asnumpy(), times * gx, rtol=1e-12)
    np.testing.assert_allclose(exe.grad_dict["y"].asnumpy(), times * gy, rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32])
def test_dtypes_match_the_unfused_graph(dtype: Any, unfused: Any) -> None:
    x, y = sym.var("x"), sym.var("y")
    s = sym.relu(x * y + 3) - y
    X = rand(5, 7, dtype=dtype, low=-4, high=4)
    Y = rand(5, 7, dtype=dtype, low=-4, high=4)
    got = bind(s, x=X, y=Y).forward()[0].asnumpy()
    want = unfused(s, x=X, y=Y).forward()[0].asnumpy()
    assert got.dtype == want.dtype == np.dtype(dtype)
    # float intermediates stay in registers (rounded once, at the store); the unfused graph
    # rounds each to its dtype: a few ulp apart. Integers are truncated at every step alike.
    tol = {np.float16: 4e-3, np.float32: 1e-6, np.int32: 0}[dtype]
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=tol, atol=tol)
    ref = np.maximum(X.astype(np.float64) * Y + 3, 0) - Y
    np.testing.assert_allclose(got.astype(np.float64), ref, rtol=2e-2 if tol else 1e-6)


def test_large_arrays_take_the_parallel_loop_inside_a_thread_region(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Only a parallel launch takes a team out of the process's thread budget
    (nnvmpy.threads.region), as single element-wise kernels do."""
    from nnvmpy import threads
    from nnvmpy.fusion import compute

    entered: list[int] = []
    real_region = threads.region

    def counting_region(want: int | None = None) -> Any:
        if sys._getframe(1).f_globals["__name__"] == compute.__name__:
            entered.append(want)
        return real_region(want)

    monkeypatch.setattr(threads, "region", counting_region)
    x = sym.var("x")
    s = sym.sqrt(sym.abs(x) + 1) * 2
    small = rand(1000, dtype=np.float32)
    bind(s, x=small).forward()[0].wait_to_read()
    assert entered == []
    X = rand(max(300_000, compute.SERIAL_CUTOFF), dtype=np.float32)
    out = bind(s, x=X).forward()[0].asnumpy()
    np.testing.assert_allclose(out, np.sqrt(np.abs(X) + 1) * 2, rtol=1e-6)
    assert len(entered) == 1
    assert threads.in_regions() == 0  # the team went back to the budget


def test_monitor_sees_every_member_as_if_unfused() -> None:
    x = sym.var("x")
    s = sym.sigmoid(sym.square(sym.relu(x, name="r"), name="m"), name="s")
    exe = s.simple_bind(nv.cpu(), x=(2, 3), grad_req="null")
    assert exe._fused_groups
    seen: dict[str, np.ndarray] = {}
    exe.set_monitor_callback(lambda name, arr: seen.__setitem__(name, arr.asnumpy()))
    X = np.array([[-1.0, 0.5, 2.0], [3.0, -0.1, 0.0]], dtype=np.float32)
    exe.forward(x=X)
    assert set(seen) == {"r_output", "m_output", "s_output"}
    np.testing.assert_allclose(seen["r_output"], np.maximum(X, 0))
    np.testing.assert_allclose(seen["s_output"], 1 / (1 + np.exp(-(np.maximum(X, 0) ** 2))), 1e-6)


# -- a user's own element-wise op ---------------------------------------------------------------


@nv.kernel.elementwise
def _softclip(x, k):
    return k * x / (k + abs(x))


@nv.kernel.elementwise
def _softclip_grad(dy, x, k):
    return dy * k * k / ((k + abs(x)) * (k + abs(x)))


class SoftclipParam(nv.param.Parameter):
    k = nv.param.field(float, default=1.0, describe="Scale.")


def _softclip_compute(attrs: Any, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]):
    _softclip.launch(ctx, outputs[0], req[0], inputs[0], attrs.parsed.k)


def _softclip_backward(attrs: Any, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]):
    _softclip_grad.launch(ctx, outputs[0], req[0], inputs[0], inputs[1], attrs.parsed.k)


@pytest.fixture
def softclip() -> Iterator[None]:
    with nv.registry.scoped_registry():
        (
            nv.register_op("t_softclip")
            .set_attr_parser(SoftclipParam)
            .set_attr("FInferShape", nv.elemwise_shape(1, 1))
            .set_attr("FInferType", nv.elemwise_type(1, 1))
            .set_attr("FCompute<cpu>", _softclip_compute)
            .set_attr("FGradient", nv.ElemwiseGradUseIn("_backward_t_softclip"))
            .set_attr("FScalarFunction", nv.kernel.scalar_function(_softclip, params=("k",)))
            .add_argument("data", "NDArray-or-Symbol", "The input.")
            .add_arguments(SoftclipParam.fields())
        )
        (
            nv.register_op("_backward_t_softclip")
            .set_attr_parser(SoftclipParam)
            .set_num_inputs(2)
            .set_attr("TIsBackward", True)
            .set_attr("FCompute<cpu>", _softclip_backward)
            .set_attr("FScalarFunction", nv.kernel.scalar_function(_softclip_grad, params=("k",)))
        )
        yield


def test_a_user_op_written_with_kernel_elementwise_fuses(softclip: None) -> None:
    x = sym.var("x")
    node = sym.t_softclip(x * 3, k=2.0)
    s = node + 1
    X = rand(4, 4)
    exe = bind(s, grad=True, x=X)
    members = [m for ms in exe._fused_groups.values() for m in ms]
    assert any(m.startswith("t_softclip") for m in members)
    assert any("t_softclip" in m and "backward" in m for m in members)
    exe.forward(is_train=True)
    exe.backward(nv.nd.ones((4, 4), dtype=np.float64))
    u = 3 * X
    np.testing.assert_allclose(exe.outputs[0].asnumpy(), 2 * u / (2 + np.abs(u)) + 1, rtol=1e-12)
    np.testing.assert_allclose(
        exe.grad_dict["x"].asnumpy(), 3 * 4 / (2 + np.abs(u)) ** 2, rtol=1e-12
    )


# -- nv.fuse: imperative code traced into a fused graph -----------------------------------------


def test_nv_fuse_traces_once_per_signature_and_computes_the_formula() -> None:
    calls = []

    @nv.fuse
    def gelu(x: Any) -> Any:
        calls.append(x.shape)
        return 0.5 * x * (1 + nv.nd.tanh(0.7978845608 * (x + 0.044715 * x * x * x)))

    def ref(v: np.ndarray) -> np.ndarray:
        return 0.5 * v * (1 + np.tanh(0.7978845608 * (v + 0.044715 * v**3)))

    X = rand(4, 5)
    first = gelu(nv.nd.array(X, dtype=np.float64))
    second = gelu(nv.nd.array(2 * X, dtype=np.float64))
    np.testing.assert_allclose(first.asnumpy(), ref(X), rtol=1e-12)  # not overwritten
    np.testing.assert_allclose(second.asnumpy(), ref(2 * X), rtol=1e-12)
    assert calls == [(4, 5)]
    gelu(nv.nd.array(rand(3), dtype=np.float64))
    assert calls == [(4, 5), (3,)]
    program, single = next(iter(gelu._programs.values()))
    assert single
    assert [op.name for op, _, _ in program.steps] == ["_FusedOp"]  # one kernel per call


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_nv_fuse_out_updates_arguments_in_place_as_an_optimizer_step(dtype: Any) -> None:
    lr, b1, b2, eps = 0.01, 0.9, 0.999, 1e-8

    @nv.fuse
    def adam(w: Any, g: Any, m: Any, v: Any) -> Any:
        m2 = m * b1 + g * (1 - b1)
        v2 = v * b2 + nv.nd.square(g) * (1 - b2)
        return w - lr * m2 / (nv.nd.sqrt(v2) + eps), m2, v2

    rng = np.random.default_rng(7)
    W, M, V = (rng.uniform(0.1, 1, (64, 33)) for _ in range(3))
    arrays = [nv.nd.array(a, dtype=dtype) for a in (W, M, V)]
    w, m, v = arrays
    for _ in range(3):
        G = rng.uniform(-1, 1, W.shape)
        result = adam(w, nv.nd.array(G, dtype=dtype), m, v, out=(w, m, v))
        assert result[0] is w
        assert result[1] is m
        assert result[2] is v
        M = b1 * M + (1 - b1) * G
        V = b2 * V + (1 - b2) * G**2
        W = W - lr * M / (np.sqrt(V) + eps)
    tol = {"rtol": 1e-5, "atol": 1e-6} if dtype == np.float32 else {"rtol": 1e-12}
    for got, want in zip((w, m, v), (W, M, V)):
        np.testing.assert_allclose(got.asnumpy(), want, **tol)
    program, _ = next(iter(adam._programs.values()))
    assert program.direct is not None  # one fused node writing straight into out=
    with pytest.raises(NNVMError, match=r"nv.fuse\(adam\): out= needs 3 NDArray"):
        adam(w, w, m, v, out=(w, m))


def test_nv_fuse_out_on_a_graph_of_several_nodes_and_under_autograd() -> None:
    @nv.fuse
    def mixed(x: Any, y: Any) -> Any:
        return nv.nd.dot(x, y) * 2 + 1, x * 3

    X, Y = rand(4, 4), rand(4, 4)
    x, y = nv.nd.array(X, dtype=np.float64), nv.nd.array(Y, dtype=np.float64)
    mixed(x, y, out=(y, x))  # each result over an argument the other result reads
    np.testing.assert_allclose(y.asnumpy(), 2 * X @ Y + 1, rtol=1e-12)
    np.testing.assert_allclose(x.asnumpy(), 3 * X, rtol=1e-12)
    program, _ = next(iter(mixed._programs.values()))
    assert program.direct is None
    assert len(program.steps) >= 2

    @nv.fuse
    def softsign(x: Any) -> Any:
        return x / (1 + nv.nd.abs(x))

    x = nv.nd.array(X, dtype=np.float64)
    x.attach_grad()
    with nv.autograd.record():  # recorded op by op: differentiable
        z = softsign(x)
    z.backward()
    np.testing.assert_allclose(z.asnumpy(), X / (1 + np.abs(X)), rtol=1e-12)
    np.testing.assert_allclose(x.grad.asnumpy(), 1 / (1 + np.abs(X)) ** 2, rtol=1e-12)


def test_nv_fuse_returns_tuples_and_refuses_what_it_cannot_trace() -> None:
    @nv.fuse
    def two(x: Any, y: Any) -> Any:
        s = x * y + 1
        return s, nv.nd.sigmoid(s) - y

    X, Y = rand(3, 3), rand(3, 3)
    a, b = two(nv.nd.array(X, dtype=np.float64), nv.nd.array(Y, dtype=np.float64))
    np.testing.assert_allclose(a.asnumpy(), X * Y + 1, rtol=1e-12)
    np.testing.assert_allclose(b.asnumpy(), 1 / (1 + np.exp(-(X * Y + 1))) - Y, rtol=1e-12)

    outside = nv.nd.ones((3, 3), dtype=np.float64)

    @nv.fuse
    def leaky(x: Any) -> Any:
        return x * outside

    with pytest.raises(NNVMError, match=r"nv.fuse\(leaky\): fn reads an array that is not"):
        leaky(nv.nd.array(X, dtype=np.float64))
    with pytest.raises(NNVMError, match=r"nv.fuse\(two\): argument 1 must be an NDArray"):
        two(nv.nd.array(X), X)

    @nv.fuse
    def number(x: Any) -> Any:
        return 3

    with pytest.raises(NNVMError, match="must return an NDArray"):
        number(nv.nd.array(X))
    np.testing.assert_allclose(
        two(nv.nd.array(X, dtype=np.float64), nv.nd.array(Y, dtype=np.float64))[0].asnumpy(),
        X * Y + 1,
    )


def test_backward_recomputes_forward_values_instead_of_keeping_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A chain of 20 cheap ops: fused, backward recomputes what it reads from the input."""
    y = sym.var("x")
    for i in range(20):
        y = [sym.relu, sym.softsign, lambda v: sym.quadratic(v, a=0.5, b=1.0), lambda v: v * 0.5][
            i % 4
        ](y)
    X = rand(64, 512)
    exe = bind(y, grad=True, x=X)
    monkeypatch.setenv("NNVMPY_FUSION", "0")
    ref_exe = bind(y, grad=True, x=X)
    assert ref_exe.storage_bytes > 0  # unfused: the chain's values are kept for backward
    assert exe.storage_bytes < ref_exe.storage_bytes
    forward = [n for n in Graph(y._heads).indexed.nodes if n.op is not None]
    assert len(forward) == 20
    fwd_fused = [
        n
        for n in exe._graph.indexed.nodes
        if n.op is not None and n.op.name == "_FusedOp" and "backward" not in n.name
    ]
    assert [n.num_outputs() for n in fwd_fused] == [1]  # only the result is exposed
    dy = rand(64, 512)
    for e in (exe, ref_exe):
        e.forward(is_train=True)
        e.backward(nv.nd.array(dy, dtype=dy.dtype))
    np.testing.assert_allclose(exe.outputs[0].asnumpy(), ref_exe.outputs[0].asnumpy(), 1e-12)
    np.testing.assert_allclose(
        exe.grad_dict["x"].asnumpy(), ref_exe.grad_dict["x"].asnumpy(), rtol=1e-12, atol=1e-15
    )


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_gpu_kernels_match_the_cpu_forward_backward_and_add(dtype: Any) -> None:
    x, y = sym.var("x"), sym.var("y")
    s = sym.softsign(x * y + 0.5) * x - y
    X, Y = rand(3, 5, dtype=dtype), rand(3, 5, dtype=dtype)
    got = {}
    for ctx in (nv.cpu(), nv.gpu()):
        args = {"x": nv.nd.array(X, ctx, dtype=dtype), "y": nv.nd.array(Y, ctx, dtype=dtype)}
        grads = {k: nv.nd.ones((3, 5), ctx, dtype=dtype) for k in args}
        exe = s.bind(ctx, args, args_grad=grads, grad_req="add")
        assert exe._fused_groups
        exe.forward(is_train=True)
        exe.backward(nv.nd.ones((3, 5), ctx, dtype=dtype))
        got[ctx.device_type] = [exe.outputs[0].asnumpy(), *(g.asnumpy() for g in grads.values())]
    tol = 2e-2 if dtype == np.float16 else 1e-5
    for a, b in zip(got["gpu"], got["cpu"]):
        np.testing.assert_allclose(a.astype(np.float64), b.astype(np.float64), rtol=tol, atol=tol)
    X64, Y64 = X.astype(np.float64), Y.astype(np.float64)
    u = X64 * Y64 + 0.5
    ref = u / (1 + np.abs(u)) * X64 - Y64
    np.testing.assert_allclose(got["gpu"][0].astype(np.float64), ref, rtol=tol * 2, atol=tol * 2)
