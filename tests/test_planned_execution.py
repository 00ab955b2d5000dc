"""Planned execution gives the unplanned results: random element-wise DAGs vs NumPy.

The executor runs a graph with PlanMemory's shared blocks and in-place outputs; the
reference evaluates the same DAG node by node with NumPy formulas, each value in its own
array, and differentiates it by hand in reverse. Entries are read several times (random
fan-out) and several outputs (repeats included) are returned, so blocks are only free
when every reader is done. That no two live entries share a block is the invariant
tests/passes/test_plan_memory_property.py checks; here the point is the numbers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import nnvmpy as nv

sym = nv.sym
UNARY = ["relu", "sigmoid", "tanh", "exp", "_mul_scalar", "quadratic"]
BINARY = ["elemwise_add", "elemwise_sub", "elemwise_mul"]
LIMIT = 50.0  # largest |value| a node may produce; bigger ones are replaced by tanh
RTOL, ATOL = 1e-10, 1e-12


@dataclass
class Program:
    """A DAG: n_inputs variables, then nodes (op, input value ids, params); some outputs."""

    n_inputs: int
    shape: tuple[int, ...]
    nodes: list[tuple[str, list[int], dict[str, float]]] = field(default_factory=list)
    outputs: list[int] = field(default_factory=list)


def bound(op: str, ins: list[float], p: dict[str, float]) -> float:
    """An upper bound of |output| from bounds of |inputs| (keeps exp and products finite)."""
    if op in ("sigmoid", "tanh"):
        return 1.0
    if op == "relu":
        return ins[0]
    if op == "exp":
        return math.exp(ins[0]) if ins[0] < 20 else math.inf
    if op == "_mul_scalar":
        return abs(p["scalar"]) * ins[0]
    if op == "quadratic":
        return abs(p["a"]) * ins[0] ** 2 + abs(p["b"]) * ins[0] + abs(p["c"])
    if op == "elemwise_mul":
        return ins[0] * ins[1]
    return sum(ins)  # add, sub, add_n


@st.composite
def programs(draw: Any) -> Program:
    n_inputs = draw(st.integers(1, 3))
    shape = draw(st.sampled_from([(3,), (2, 3), (2, 1, 4)]))
    prog = Program(n_inputs, shape)
    bounds = [1.0] * n_inputs
    for _ in range(draw(st.integers(1, 10))):
        op = draw(st.sampled_from([*UNARY, *BINARY, "add_n"]))
        arity = 1 if op in UNARY else 2 if op in BINARY else draw(st.integers(2, 4))
        # any earlier value: fan-out happens, and recent ones are as likely as inputs
        ins = [draw(st.integers(0, len(bounds) - 1)) for _ in range(arity)]
        params: dict[str, float] = {}
        if op == "_mul_scalar":
            params = {"scalar": draw(st.sampled_from([-2.0, -0.5, 0.5, 3.0]))}
        elif op == "quadratic":
            params = {
                "a": draw(st.sampled_from([-1.0, -0.5, 0.5, 1.0])),
                "b": draw(st.sampled_from([-1.0, 0.0, 2.0])),
                "c": draw(st.sampled_from([0.0, 0.5])),
            }
        b = bound(op, [bounds[i] for i in ins], params)
        if b > LIMIT:
            op, ins, params, b = "tanh", ins[:1], {}, 1.0
        prog.nodes.append((op, ins, params))
        bounds.append(b)
    last = len(bounds) - 1
    nodes = st.integers(n_inputs, last)
    prog.outputs = [*draw(st.lists(nodes, min_size=0, max_size=3)), last]
    return prog


# -- the reference: NumPy, node by node ------------------------------------------------------------


def sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def forward_value(op: str, x: list[np.ndarray], p: dict[str, float]) -> np.ndarray:
    if op == "relu":
        return np.maximum(x[0], 0.0)
    if op == "sigmoid":
        return sigmoid(x[0])
    if op == "tanh":
        return np.tanh(x[0])
    if op == "exp":
        return np.exp(x[0])
    if op == "_mul_scalar":
        return x[0] * p["scalar"]
    if op == "quadratic":
        return p["a"] * x[0] * x[0] + p["b"] * x[0] + p["c"]
    if op == "elemwise_add":
        return x[0] + x[1]
    if op == "elemwise_sub":
        return x[0] - x[1]
    if op == "elemwise_mul":
        return x[0] * x[1]
    assert op == "add_n"
    return sum(x[1:], x[0].copy())


def input_grads(
    op: str, x: list[np.ndarray], y: np.ndarray, dy: np.ndarray, p: dict[str, float]
) -> list[np.ndarray]:
    """d(inputs) from d(output) — the chain rule for each op, written out."""
    if op == "relu":
        return [dy * (x[0] > 0)]
    if op == "sigmoid":
        return [dy * y * (1 - y)]
    if op == "tanh":
        return [dy * (1 - y * y)]
    if op == "exp":
        return [dy * y]
    if op == "_mul_scalar":
        return [dy * p["scalar"]]
    if op == "quadratic":
        return [dy * (2 * p["a"] * x[0] + p["b"])]
    if op == "elemwise_sub":
        return [dy, -dy]
    if op == "elemwise_mul":
        return [dy * x[1], dy * x[0]]
    return [dy] * len(x)  # add, add_n


def reference(
    prog: Program, inputs: list[np.ndarray], heads: list[np.ndarray]
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """(outputs, gradients of the inputs) without any sharing of memory."""
    values = list(inputs)
    for op, ins, p in prog.nodes:
        values.append(forward_value(op, [values[i] for i in ins], p))
    grads = [np.zeros(prog.shape) for _ in values]
    for out, head in zip(prog.outputs, heads):
        grads[out] = grads[out] + head
    for k in range(len(prog.nodes) - 1, -1, -1):
        op, ins, p = prog.nodes[k]
        vid = prog.n_inputs + k
        for i, g in zip(ins, input_grads(op, [values[i] for i in ins], values[vid], grads[vid], p)):
            grads[i] = grads[i] + g
    return [values[o] for o in prog.outputs], grads[: prog.n_inputs]


# -- the system under test -------------------------------------------------------------------------


def build(prog: Program) -> nv.sym.Symbol:
    symbols = [sym.var(f"x{i}") for i in range(prog.n_inputs)]
    for k, (op, ins, p) in enumerate(prog.nodes):
        args = [symbols[i] for i in ins]
        fn = getattr(sym._internal if op.startswith("_") else sym, op)
        symbols.append(fn(*args, name=f"n{k}", **p))
    return sym.Group([symbols[o] for o in prog.outputs])


def check_run(exe: Any, prog: Program, seed: int, train: bool) -> None:
    rng = np.random.default_rng(seed)
    inputs = [rng.uniform(-1, 1, prog.shape) for _ in range(prog.n_inputs)]
    heads = [rng.normal(size=prog.shape) for _ in prog.outputs]
    want, want_grads = reference(prog, inputs, heads)
    names = exe._symbol.list_arguments()
    feed = {n: inputs[int(n[1:])] for n in names}
    outs = exe.forward(is_train=train, **feed)
    for k, (got, expected) in enumerate(zip(outs, want)):
        np.testing.assert_allclose(got.asnumpy(), expected, RTOL, ATOL, err_msg=f"output {k}")
    if train:
        exe.backward(heads)
        for n in names:
            np.testing.assert_allclose(
                exe.grad_dict[n].asnumpy(), want_grads[int(n[1:])], RTOL, ATOL, err_msg=n
            )
        if exe._backward_alone:  # fused, backward recomputes what it reads: it may repeat
            exe.backward(heads)
            for n in names:
                np.testing.assert_allclose(
                    exe.grad_dict[n].asnumpy(), want_grads[int(n[1:])], RTOL, ATOL, err_msg=n
                )
        else:
            with pytest.raises(nv.NNVMError, match="call forward"):
                exe.backward(heads)  # the plan reused forward values backward has read
    for n, value in feed.items():  # in-place outputs never write into the arguments
        np.testing.assert_array_equal(exe.arg_dict[n].asnumpy(), value, err_msg=n)


@given(programs(), st.integers(0, 2**16))
def test_planned_execution_matches_unplanned_reference(prog: Program, seed: int) -> None:
    s = build(prog)
    shapes = dict.fromkeys(s.list_arguments(), prog.shape)
    types = dict.fromkeys(shapes, np.float64)
    train = s.simple_bind(nv.cpu(), grad_req="write", type_dict=types, **shapes)
    check_run(train, prog, seed, train=True)
    check_run(train, prog, seed + 1, train=True)  # the same buffers, new values
    infer = s.simple_bind(nv.cpu(), grad_req="null", type_dict=types, **shapes)
    check_run(infer, prog, seed, train=False)


def test_a_chain_with_fan_out_reuses_memory_and_stays_exact(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A fixed case: a value read by three later nodes, in-place candidates all along."""
    # the planner's sharing of the unfused chain (fused, no intermediate is left to share)
    monkeypatch.setenv("NNVMPY_FUSION", "0")
    prog = Program(
        2,
        (4, 5),
        nodes=[
            ("elemwise_mul", [0, 1], {}),  # 2
            ("_mul_scalar", [2], {"scalar": 0.5}),  # 3
            ("tanh", [3], {}),  # 4
            ("elemwise_add", [4, 2], {}),  # 5: reads 2 again
            ("quadratic", [5], {"a": 0.5, "b": -1.0, "c": 0.5}),  # 6
            ("add_n", [6, 2, 4], {}),  # 7: reads 2 and 4 again
            ("relu", [7], {}),  # 8
        ],
        outputs=[8, 4],
    )
    s = build(prog)
    exe = s.simple_bind(nv.cpu(), type_dict={"x0": np.float64}, x0=(4, 5))
    assert exe.storage_bytes < exe.storage_naive_bytes  # the plan shares blocks
    check_run(exe, prog, 0, train=True)
    infer = s.simple_bind(nv.cpu(), grad_req="null", type_dict={"x0": np.float64}, x0=(4, 5))
    assert "inplace" in infer.debug_str()
    check_run(infer, prog, 1, train=False)
