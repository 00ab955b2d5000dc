"""Benchmark LayerNorm forward + backward on (32*128, 768) float32 (a BERT-base layer), CPU.

    .venv/bin/python tools/bench_layernorm.py [--rows 4096] [--dim 768] [--steps 20]
                                              [--rounds 3] [--torch PATH]

nnvmpy runs a bound executor (forward(is_train=True) + backward(), then waits): the
head gradient is the executor's ones, set once, as under a loss; passing one per step
would add a copy of it to every step (the executor copies out_grads in). The work is
the same whatever the head gradient holds; PyTorch (`--torch PATH`: a venv or its python, default
./.torchenv) runs torch.nn.LayerNorm forward + backward in its own process on the same
data, with its default thread count (`--threads N` sets both sides' threads). The two
sides take turns (`--rounds`) and each keeps its best step, so a busy machine hurts both
alike. Target: nnvmpy / PyTorch <= 1.0.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import time
from pathlib import Path

import numpy as np

import nnvmpy as nv
from _vs_mxnet import side_python

TARGET = 1.0

TORCH_SCRIPT = """
import sys, time, numpy as np, torch
steps = int(sys.argv[1])
data = np.load(sys.argv[2])
if int(sys.argv[3]) > 0:
    torch.set_num_threads(int(sys.argv[3]))
x = torch.from_numpy(data["x"]).requires_grad_()
dy = torch.from_numpy(data["dy"])
ln = torch.nn.LayerNorm(x.shape[1], eps=1e-5)
with torch.no_grad():
    ln.weight.copy_(torch.from_numpy(data["gamma"]))
    ln.bias.copy_(torch.from_numpy(data["beta"]))
def step():
    x.grad = None
    ln.weight.grad = None
    ln.bias.grad = None
    ln(x).backward(dy)
for _ in range(3):
    step()
best = float("inf")
for _ in range(steps):
    t = time.perf_counter()
    step()
    best = min(best, time.perf_counter() - t)
print(best * 1e3, torch.get_num_threads())
"""


def torch_ms(
    python: str, data: dict[str, np.ndarray], steps: int, threads: int
) -> tuple[float, int]:
    """(best ms of a forward + backward step, threads) of PyTorch, in its own process."""
    path = Path(os.environ.get("TMPDIR", "/tmp")) / f"bench_layernorm_{os.getpid()}.npz"
    np.savez(path, **data)  # type: ignore[arg-type]
    try:
        out = subprocess.run(
            [python, "-c", TORCH_SCRIPT, str(steps), str(path), str(threads)],
            capture_output=True,
            text=True,
            check=True,
            env=nv.threads.anchor_env(),  # the anchor's own OpenMP defaults
        ).stdout.split()
    finally:
        path.unlink(missing_ok=True)
    return float(out[0]), int(out[1])


class NnvmpyStep:
    """A bound LayerNorm executor: forward(is_train=True) + backward(), then wait."""

    def __init__(self, data: dict[str, np.ndarray]) -> None:
        sym = nv.sym.LayerNorm(
            nv.sym.Variable("x"), nv.sym.Variable("gamma"), nv.sym.Variable("beta"), eps=1e-5
        )
        self.exe = sym.simple_bind(nv.cpu(), x=data["x"].shape)
        for name in ("x", "gamma", "beta"):
            self.exe.arg_dict[name][:] = data[name]

    def __call__(self) -> None:
        self.exe.forward(is_train=True)
        self.exe.backward()
        nv.nd.waitall()


def best_ms(fn: NnvmpyStep, steps: int) -> float:
    best = float("inf")
    for _ in range(steps):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=32 * 128)
    parser.add_argument("--dim", type=int, default=768)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--torch", default=None, help="venv (or python) with torch")
    parser.add_argument(
        "--threads", type=int, default=0, help="threads for both sides (default: all cores)"
    )
    args = parser.parse_args()
    if args.threads > 0:
        import numba

        numba.set_num_threads(args.threads)

    rng = np.random.default_rng(0)
    shape = (args.rows, args.dim)
    data = {
        "x": rng.standard_normal(shape, dtype=np.float32),
        "dy": rng.standard_normal(shape, dtype=np.float32),
        "gamma": rng.uniform(0.5, 1.5, args.dim).astype(np.float32),
        "beta": rng.standard_normal(args.dim, dtype=np.float32),
    }
    step = NnvmpyStep(data)
    for _ in range(3):  # compile, fill the pools
        step()
    python = side_python(args.torch, ".torchenv", "torch")
    ours = theirs = float("inf")
    threads = 0
    for _ in range(args.rounds):
        ours = min(ours, best_ms(step, args.steps))
        if python:
            ms, threads = torch_ms(python, data, args.steps, args.threads)
            theirs = min(theirs, ms)
    print(f"LayerNorm {shape} float32, forward + backward, best of {args.rounds} rounds")
    print(f"  nnvmpy (executor)          {ours:8.2f} ms")
    if not python:
        print("  PyTorch: not found (pass --torch PATH to a venv with torch); skipped")
        return
    print(f"  PyTorch ({threads} threads)        {theirs:8.2f} ms")
    ratio = ours / theirs
    verdict = "meets" if ratio <= TARGET else "MISSES"
    print(f"  nnvmpy / PyTorch: {ratio:.2f}x  (target <= {TARGET}: {verdict})")


if __name__ == "__main__":
    main()
