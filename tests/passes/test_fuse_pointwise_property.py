"""Random element-wise DAGs: fused against unfused against NumPy, forward and backward.

Each example draws a DAG of element-wise ops over 1-3 inputs, where any value may feed
several nodes and be a graph output too (so groups expose intermediates), sometimes
also read by a non-element-wise op (`sum`). The forward is checked against the same
expression evaluated by NumPy in float64, gradients against central finite differences
of that NumPy function (float64) and against the unfused graph, with grad_req write or
add. CPU always; the GPU kernels under the CUDA simulator (or a GPU) with `-m gpu`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import nnvmpy as nv
from nnvmpy import sym

# name -> (arity, symbol builder, NumPy reference); smooth, so finite differences hold
OPS: dict[str, tuple[int, Callable[..., Any], Callable[..., Any]]] = {
    "tanh": (1, sym.tanh, np.tanh),
    "sigmoid": (1, sym.sigmoid, lambda a: 1 / (1 + np.exp(-a))),
    "sin": (1, sym.sin, np.sin),
    "softsign": (1, sym.softsign, lambda a: a / (1 + np.abs(a))),
    "negative": (1, sym.negative, np.negative),
    "half": (1, lambda a: a * 0.5, lambda a: a * 0.5),
    "plus1": (1, lambda a: a + 1, lambda a: a + 1),
    "exp_of_tanh": (1, lambda a: sym.exp(sym.tanh(a)), lambda a: np.exp(np.tanh(a))),
    "act_tanh": (1, lambda a: sym.Activation(a, act_type="tanh"), np.tanh),
    "add": (2, sym.elemwise_add, np.add),
    "sub": (2, sym.elemwise_sub, np.subtract),
    "mul": (2, sym.elemwise_mul, np.multiply),
}
NAMES = sorted(OPS)


@st.composite
def dags(draw: Any) -> dict[str, Any]:
    n_in = draw(st.integers(1, 3))
    nodes = []
    for k in range(draw(st.integers(2, 8))):
        name = draw(st.sampled_from(NAMES))
        args = [draw(st.integers(0, n_in + k - 1)) for _ in range(OPS[name][0])]
        nodes.append((name, args))
    n_vals = n_in + len(nodes)
    extra = (
        draw(st.lists(st.integers(n_in, n_vals - 2), max_size=2, unique=True))
        if len(nodes) > 1
        else []
    )
    summed = draw(st.none() | st.integers(n_in, n_vals - 1))
    return {"n_in": n_in, "nodes": nodes, "outputs": [n_vals - 1, *extra], "summed": summed}


def build(dag: dict[str, Any]) -> Any:
    vals: list[Any] = [sym.var(f"x{j}") for j in range(dag["n_in"])]
    for name, args in dag["nodes"]:
        vals.append(OPS[name][1](*[vals[a] for a in args]))
    heads = [vals[o] for o in dag["outputs"]]
    if dag["summed"] is not None:
        heads.append(sym.sum(vals[dag["summed"]]))
    return sym.Group(heads)


def reference(dag: dict[str, Any], xs: list[np.ndarray]) -> list[np.ndarray]:
    vals = list(xs)
    for name, args in dag["nodes"]:
        vals.append(OPS[name][2](*[vals[a] for a in args]))
    outs = [vals[o] for o in dag["outputs"]]
    if dag["summed"] is not None:
        outs.append(np.asarray(vals[dag["summed"]].sum()).reshape(1))  # MXNet: shape (1,)
    return outs


def run(
    symbol: Any, xs: list[np.ndarray], heads: list[np.ndarray], ctx: Any, req: str, fusion: str
) -> tuple[list[np.ndarray], list[np.ndarray], Any]:
    import os

    old = os.environ.get("NNVMPY_FUSION")
    os.environ["NNVMPY_FUSION"] = fusion
    try:
        dtype = xs[0].dtype
        names = symbol.list_arguments()
        args = {n: nv.nd.array(x, ctx, dtype=dtype) for n, x in zip(names, xs)}
        grads = {n: nv.nd.ones(x.shape, ctx, dtype=dtype) for n, x in zip(names, xs)}
        exe = symbol.bind(ctx, args, args_grad=grads, grad_req=req)
    finally:
        if old is None:
            del os.environ["NNVMPY_FUSION"]
        else:
            os.environ["NNVMPY_FUSION"] = old
    outs = [o.asnumpy() for o in exe.forward(is_train=True)]
    exe.backward([nv.nd.array(h, ctx, dtype=dtype) for h in heads])
    return outs, [exe.grad_dict[n].asnumpy() for n in names], exe


def numeric_grads(dag: dict[str, Any], xs: list[np.ndarray], heads: list[np.ndarray]) -> list[Any]:
    def loss(values: list[np.ndarray]) -> float:
        return float(sum((o * h).sum() for o, h in zip(reference(dag, values), heads)))

    grads = []
    eps = 1e-6
    for j, x in enumerate(xs):
        g = np.zeros_like(x)
        for i in np.ndindex(x.shape):
            up = [v.copy() for v in xs]
            down = [v.copy() for v in xs]
            up[j][i] += eps
            down[j][i] -= eps
            g[i] = (loss(up) - loss(down)) / (2 * eps)
        grads.append(g)
    return grads


TOLS = {np.float64: 1e-9, np.float32: 2e-5, np.float16: 2e-2}


def check(dag: dict[str, Any], dtype: Any, req: str, seed: int, ctx: Any) -> None:
    symbol = build(dag)
    rng = np.random.default_rng(seed)
    names = symbol.list_arguments()
    xs64 = [rng.uniform(-1, 1, (2, 3)) for _ in names]
    xs = [x.astype(dtype) for x in xs64]
    xs64 = [x.astype(np.float64) for x in xs]  # the values the graph sees
    ref = reference_by_name(dag, names, xs64)
    assume(all(np.all(np.isfinite(r)) and np.abs(r).max() < 1e3 for r in ref))
    heads = [rng.uniform(-1, 1, np.shape(r)).astype(dtype) for r in ref]
    outs, grads, exe = run(symbol, xs, heads, ctx, req, "1")
    if _has_chain(dag):
        assert exe._fused_groups  # a live node reads another: they fuse
    ref_outs, ref_grads, _ = run(symbol, xs, heads, ctx, req, "0")
    tol = TOLS[dtype]
    for got, want, exact in zip(outs, ref, ref_outs):
        scale = max(1.0, float(np.abs(want).max()))
        np.testing.assert_allclose(got.astype(np.float64), want, rtol=tol, atol=tol * scale)
        np.testing.assert_allclose(got.astype(np.float64), exact.astype(np.float64), rtol=tol,
                                   atol=tol * scale)  # fmt: skip
    heads64 = [h.astype(np.float64) for h in heads]
    fd = numeric_grads_by_name(dag, names, xs64, heads64)
    start = 1.0 if req == "add" else 0.0  # the gradient arrays start as ones
    for got, want, exact in zip(grads, fd, ref_grads):
        scale = max(1.0, float(np.abs(want).max()))
        gtol = max(tol, 1e-6) * 4
        np.testing.assert_allclose(got.astype(np.float64), want + start, rtol=gtol,
                                   atol=gtol * scale)  # fmt: skip
        np.testing.assert_allclose(got.astype(np.float64), exact.astype(np.float64),
                                   rtol=gtol, atol=gtol * scale)  # fmt: skip


def _has_chain(dag: dict[str, Any]) -> bool:
    """Some node the outputs depend on reads another node's value."""
    n_in = dag["n_in"]
    live = set(dag["outputs"]) | ({dag["summed"]} if dag["summed"] is not None else set())
    for v in range(n_in + len(dag["nodes"]) - 1, n_in - 1, -1):
        if v in live:
            args = dag["nodes"][v - n_in][1]
            if any(a >= n_in for a in args):
                return True
            live.update(args)
    return False


def _order(dag: dict[str, Any], names: list[str]) -> list[int]:
    return [int(n[1:]) for n in names]


def reference_by_name(dag: dict[str, Any], names: list[str], xs: list[np.ndarray]) -> Any:
    """NumPy outputs, with xs given in list_arguments order (inputs a DAG never reads are
    not arguments)."""
    full = [np.zeros((2, 3)) for _ in range(dag["n_in"])]
    for j, x in zip(_order(dag, names), xs):
        full[j] = x
    return reference(dag, full)


def numeric_grads_by_name(
    dag: dict[str, Any], names: list[str], xs: list[np.ndarray], heads: list[np.ndarray]
) -> Any:
    full = [np.zeros((2, 3)) for _ in range(dag["n_in"])]
    order = _order(dag, names)
    for j, x in zip(order, xs):
        full[j] = x
    grads = numeric_grads(dag, full, heads)
    return [grads[j] for j in order]


def _settings(examples: int) -> Any:
    return settings(
        max_examples=examples,
        deadline=None,
        derandomize=True,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    )


@_settings(40)
@given(
    dag=dags(),
    dtype=st.sampled_from([np.float64, np.float32, np.float16]),
    req=st.sampled_from(["write", "add"]),
    seed=st.integers(0, 2**16),
)
def test_random_dags_cpu(dag: dict[str, Any], dtype: Any, req: str, seed: int) -> None:
    check(dag, dtype, req, seed, nv.cpu())


@pytest.mark.gpu
@_settings(6)
@given(
    dag=dags(),
    dtype=st.sampled_from([np.float64, np.float32, np.float16]),
    req=st.sampled_from(["write", "add"]),
    seed=st.integers(0, 2**16),
)
def test_random_dags_gpu(dag: dict[str, Any], dtype: Any, req: str, seed: int) -> None:
    check(dag, dtype, req, seed, nv.gpu())
