"""take / Embedding / topk / sort speed against NumPy, measured in turns in the same run.

    .venv/bin/python tools/bench_indexing.py [--rows N] [--vocab V] [--dim D] [--rounds R]

Prints (no assertions; each side keeps its best time over `--rounds` rounds of turns):
  1. nd.take of `--rows` random rows (axis 0, float32, width `--dim`) from a
     (`--vocab`, `--dim`) table, and nd.Embedding of the same indices, against np.take;
  2. take forward + backward (rows added back into the table) in a bound graph, against
     np.take + np.add.at;
  3. nd.topk along the last axis (k=10, indices and values) of a (1000, 8192) array,
     against np.argpartition of the same k;
  4. nd.sort along the last axis (float32, float64) against np.sort.
Each nnvmpy time includes the engine push and the wait (what a user sees); every result
is checked against NumPy once. Targets (issue 11): take and Embedding within 1.5x
np.take, topk within 1.5x np.argpartition.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import nnvmpy as nv

TARGET = 1.5  # nnvmpy time / NumPy time


def best(fn: Callable[[], Any], repeat: int) -> float:
    fn()  # compile and warm the caches
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def in_turns(ours: Callable[[], Any], numpy: Callable[[], Any], rounds: int, repeat: int):
    """(best of ours, best of NumPy), timed alternately so drift affects both alike."""
    a, b = float("inf"), float("inf")
    for _ in range(rounds):
        a = min(a, best(ours, repeat))
        b = min(b, best(numpy, repeat))
    return a, b


def report(name: str, ours: float, base: float, base_name: str, target: float | None) -> None:
    ratio = ours / base
    verdict = "" if target is None else ("  ok" if ratio <= target else f"  ABOVE {target}x")
    print(
        f"{name:<34} {ours * 1e3:8.2f} ms   {base_name:<18} {base * 1e3:8.2f} ms   "
        f"ratio {ratio:5.2f}{verdict}"
    )


def bench_take(args: argparse.Namespace) -> None:
    rng = np.random.default_rng(0)
    table = rng.standard_normal((args.vocab, args.dim), dtype=np.float32)
    idx = rng.integers(0, args.vocab, size=args.rows).astype(np.int32)
    t_nd, i_nd = nv.nd.array(table), nv.nd.array(idx, dtype=np.int32)
    out = nv.nd.empty((args.rows, args.dim))
    emb = {"input_dim": args.vocab, "output_dim": args.dim}
    np.testing.assert_array_equal(nv.nd.take(t_nd, i_nd).asnumpy(), np.take(table, idx, axis=0))
    np.testing.assert_array_equal(nv.nd.Embedding(i_nd, t_nd, **emb).asnumpy(), table[idx])
    base_out = np.empty((args.rows, args.dim), np.float32)

    def np_take() -> None:
        np.take(table, idx, axis=0, out=base_out)

    ours, base = in_turns(
        lambda: nv.nd.take(t_nd, i_nd, out=out).wait_to_read(), np_take, args.rounds, 5
    )
    report(f"take {args.rows} rows x {args.dim}", ours, base, "np.take", TARGET)
    ours, base = in_turns(
        lambda: nv.nd.Embedding(i_nd, t_nd, out=out, **emb).wait_to_read(),
        np_take,
        args.rounds,
        5,
    )
    report(f"Embedding {args.rows} rows x {args.dim}", ours, base, "np.take", TARGET)

    # backward: the rows added back into a zeroed table
    dy = rng.standard_normal((args.rows, args.dim), dtype=np.float32)
    y = nv.sym.take(nv.sym.Variable("a"), nv.sym.Variable("i"))
    exe = y.simple_bind(nv.cpu(), grad_req={"a": "write", "i": "null"},
                        a=table.shape, i=idx.shape)  # fmt: skip
    exe.forward(is_train=True, a=table, i=idx)
    dy_nd = nv.nd.array(dy)
    grad = np.zeros_like(table)

    def np_add_at() -> None:
        np.take(table, idx, axis=0, out=base_out)
        grad[...] = 0
        np.add.at(grad, idx, dy)

    def ours_backward() -> None:  # each backward needs its forward (the memory plan)
        exe.forward(is_train=True)
        exe.backward([dy_nd])
        exe.grad_dict["a"].wait_to_read()

    np_add_at()
    ours_backward()
    np.testing.assert_allclose(exe.grad_dict["a"].asnumpy(), grad, rtol=1e-4, atol=1e-4)
    ours, base = in_turns(ours_backward, np_add_at, args.rounds, 3)
    report("take forward + backward", ours, base, "np.take+add.at", None)


def bench_topk(args: argparse.Namespace) -> None:
    rng = np.random.default_rng(1)
    x = rng.standard_normal((1000, 8192), dtype=np.float32)
    x_nd = nv.nd.array(x)
    k = 10
    got = nv.nd.topk(x_nd, k=k).asnumpy()
    np.testing.assert_array_equal(got, np.argsort(-x, axis=-1, kind="stable")[:, :k])
    out_i = nv.nd.empty((1000, k))

    def np_part() -> None:
        np.argpartition(x, -k, axis=-1)

    ours, base = in_turns(
        lambda: nv.nd.topk(x_nd, k=k, out=out_i).wait_to_read(), np_part, args.rounds, 5
    )
    report("topk k=10 of (1000, 8192), indices", ours, base, "np.argpartition", TARGET)
    ours, base = in_turns(
        lambda: nv.nd.topk(x_nd, k=k, ret_typ="value").wait_to_read(), np_part, args.rounds, 5
    )
    report("topk k=10 of (1000, 8192), values", ours, base, "np.argpartition", TARGET)
    ours, base = in_turns(
        lambda: nv.nd.sort(x_nd).wait_to_read(), lambda: np.sort(x, axis=-1), args.rounds, 3
    )
    report("sort (1000, 8192) float32", ours, base, "np.sort", None)
    x64 = x.astype(np.float64)
    x64_nd = nv.nd.array(x64, dtype=np.float64)
    np.testing.assert_array_equal(nv.nd.sort(x64_nd).asnumpy(), np.sort(x64, axis=-1))
    ours, base = in_turns(
        lambda: nv.nd.sort(x64_nd).wait_to_read(), lambda: np.sort(x64, axis=-1), args.rounds, 3
    )
    report("sort (1000, 8192) float64", ours, base, "np.sort", None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--vocab", type=int, default=50_000)
    parser.add_argument("--dim", type=int, default=128)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    print(f"nnvmpy vs NumPy, best of {args.rounds} rounds in turns (ratio: lower is better)")
    bench_take(args)
    bench_topk(args)


if __name__ == "__main__":
    main()
