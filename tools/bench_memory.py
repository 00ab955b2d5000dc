"""Memory planning: planned bytes against one buffer per entry, for training and inference.

    .venv/bin/python tools/bench_memory.py [--batch 64] [--chain 50]

Binds each graph (simple_bind: InferShape, InferType, Gradient, PlanMemory) and prints,
per case, the bytes of intermediate storage the executor allocates (`exe.storage_bytes`,
PlanMemory's storage_allocated_bytes) against what the same entries take with one buffer
each (`exe.storage_naive_bytes`, PlanMemory's storage_naive_bytes). Arguments, gradients,
auxiliary states and outputs belong to the caller and are counted by neither. Cases:

  a. a chain of element-wise ops (relu, sigmoid, tanh, quadratic, _mul_scalar in turn);
  b. MXNet's 3-layer MLP (784-512-512-10): FullyConnected / Activation / SoftmaxOutput
     when they are registered, else dense layers from a small `dot`-like op this tool
     registers for the run.

Training binds with grad_req='write' for the parameters (and the chain's input),
inference with grad_req='null'. No kernels run; binding takes well under a second.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np

import nnvmpy as nv
from nnvmpy import registry

sym = nv.sym
CHAIN_OPS = ["relu", "sigmoid", "tanh", "quadratic", "_mul_scalar"]


def chain(length: int) -> nv.sym.Symbol:
    y = sym.var("data")
    for i in range(length):
        op = CHAIN_OPS[i % len(CHAIN_OPS)]
        if op == "quadratic":
            y = sym.quadratic(y, a=0.5, b=1.0, name=f"op{i}")
        elif op == "_mul_scalar":
            y = sym._internal._mul_scalar(y, scalar=0.5, name=f"op{i}")
        else:
            y = getattr(sym, op)(y, name=f"op{i}")
    return y


def mlp_from_registered_ops() -> nv.sym.Symbol:
    """MXNet's example MLP, as in /work/shared/models/mlp-symbol.json."""
    y = sym.var("data")
    for i, hidden in enumerate([512, 512], start=1):
        y = sym.FullyConnected(y, num_hidden=hidden, name=f"fc{i}")
        y = sym.Activation(y, act_type="relu", name=f"relu{i}")
    y = sym.FullyConnected(y, num_hidden=10, name="fc3")
    return sym.SoftmaxOutput(y, name="softmax")


def register_dense() -> None:
    """bench_dense(data (N, K), weight (M, K)) = data · weightᵀ, with its backward."""

    def infer_shape(attrs: Any, ins: list[Any], outs: list[Any]) -> bool:
        m = int(attrs.dict["num_hidden"])
        if ins[0] is not None:
            nv.shape_assign(outs, 0, (ins[0][0], m))
            nv.shape_assign(ins, 1, (m, ins[0][1]))
        return all(s is not None and None not in s for s in [*ins, *outs])

    def forward(attrs: Any, ctx: Any, ins: list[Any], req: list[Any], outs: list[Any]) -> None:
        outs[0][...] = ins[0] @ ins[1].T

    def backward(attrs: Any, ctx: Any, ins: list[Any], req: list[Any], outs: list[Any]) -> None:
        dy, data, weight = ins
        outs[0][...] = dy @ weight
        outs[1][...] = dy.T @ data

    (
        nv.register_op("bench_dense")
        .set_attr_parser(lambda attrs: dict(attrs.dict))
        .set_num_inputs(2)
        .set_num_outputs(1)
        .set_attr("FListInputNames", lambda attrs: ["data", "weight"])
        .set_attr("FInferShape", infer_shape)
        .set_attr("FInferType", nv.elemwise_type(2, 1))
        .set_attr("FCompute<cpu>", forward)
        .set_attr("FGradient", nv.ElemwiseGradUseIn("_backward_bench_dense"))
    )
    (
        nv.register_op("_backward_bench_dense")
        .set_attr_parser(lambda attrs: dict(attrs.dict))
        .set_num_inputs(3)
        .set_num_outputs(2)
        .set_attr("TIsBackward", True)
        .set_attr("FCompute<cpu>", backward)
    )


def mlp_from_dense() -> nv.sym.Symbol:
    y = sym.var("data")
    for i, hidden in enumerate([512, 512], start=1):
        y = sym.relu(sym.bench_dense(y, num_hidden=hidden, name=f"fc{i}"), name=f"relu{i}")
    return sym.bench_dense(y, num_hidden=10, name="fc3")


def measure(s: nv.sym.Symbol, shapes: dict[str, Any], grad_req: Any) -> dict[str, Any]:
    started = time.perf_counter()
    exe = s.simple_bind(nv.cpu(), grad_req=grad_req, **shapes)
    plan = exe.debug_str()
    return {
        "planned": exe.storage_bytes,
        "naive": exe.storage_naive_bytes,
        "inplace": plan.count(" inplace(input"),
        "nodes": plan.count("\nOp:"),
        "bind_ms": 1e3 * (time.perf_counter() - started),
    }


def mib(n: int) -> str:
    return f"{n / 2**20:9.2f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--chain", type=int, default=50, help="length of the element-wise chain")
    parser.add_argument("--width", type=int, default=1 << 16, help="elements per chain row")
    args = parser.parse_args()

    rows: list[tuple[str, str, dict[str, Any]]] = []
    chain_sym = chain(args.chain)
    chain_shape = {"data": (args.batch, args.width // args.batch or 1)}
    rows.append((f"chain of {args.chain}", "training", measure(chain_sym, chain_shape, "write")))
    rows.append((f"chain of {args.chain}", "inference", measure(chain_sym, chain_shape, "null")))

    names = set(nv.Op.list_op_names())
    mlp_ops = {"FullyConnected", "Activation", "SoftmaxOutput"}
    with registry.scoped_registry():
        if mlp_ops <= names:
            mlp, label = mlp_from_registered_ops(), "MLP (FullyConnected)"
        else:
            register_dense()
            mlp, label = mlp_from_dense(), "MLP (bench_dense)"
        data_shape = {"data": (args.batch, 784)}
        params = [n for n in mlp.list_arguments() if n not in ("data", "softmax_label")]
        train_req = {n: ("write" if n in params else "null") for n in mlp.list_arguments()}
        rows.append((label, "training", measure(mlp, data_shape, train_req)))
        rows.append((label, "inference", measure(mlp, data_shape, "null")))

    print(f"memory plan of the executor (batch {args.batch}, float32)\n")
    header = (
        f"{'graph':<22} {'mode':<10} {'nodes':>5} {'in place':>8} "
        f"{'naive MiB':>9} {'planned MiB':>11} {'planned/naive':>13} {'bind ms':>8}"
    )
    print(header)
    print("-" * len(header))
    for graph, mode, r in rows:
        ratio = r["planned"] / r["naive"] if r["naive"] else float("nan")
        print(
            f"{graph:<22} {mode:<10} {r['nodes']:>5} {r['inplace']:>8} "
            f"{mib(r['naive'])} {mib(r['planned']):>11} {ratio:>13.3f} {r['bind_ms']:>8.1f}"
        )
    print(
        "\nnaive: one buffer per intermediate entry; planned: PlanMemory's shared blocks, in "
        "which\nthe forward values backward reads are kept to the end (backward may run twice)."
    )
    return 0


if __name__ == "__main__":
    np.seterr(all="ignore")
    raise SystemExit(main())
