"""Benchmark the fused LSTM forward + backward on the CPU against MXNet 1.9.1 and PyTorch.

    .venv/bin/python tools/bench_rnn.py [--layers 2] [--hidden 512] [--seq 35] [--batch 32]
                                        [--steps 5] [--rounds 2] [--mxnet PATH] [--torch PATH]
                                        [--baseline SRC]

Each side runs in its own process on the same sizes (input size = hidden): nnvmpy and
MXNet bind `RNN(mode='lstm', state_outputs=True)` and run forward(is_train=True) +
backward with a ones head gradient; PyTorch runs torch.nn.LSTM forward + backward.
`--mxnet` / `--torch` name a venv (or its python); defaults ./.mxenv and ./.torchenv.
The sides take turns (`--rounds`) and each keeps its best step, so a busy machine hurts
all alike. Targets: nnvmpy / MXNet <= 1.0, nnvmpy / PyTorch <= 1.2.
`--baseline SRC` adds a side that imports nnvmpy from another source tree (PYTHONPATH=SRC,
e.g. `git archive HEAD src | tar -x -C /tmp/base` then SRC=/tmp/base/src), for before and
after numbers from one run.
The load average is printed beside the numbers: OpenBLAS's threads on a busy 2-core
machine can make any side several times slower.
"""

from __future__ import annotations

import argparse
import os
import sys

from _vs_mxnet import run_side, side_python

COMMON = """
import sys, time
L, H, T, N, steps = (int(a) for a in sys.argv[1:6])
def best_of(step):
    for _ in range(2):
        step()
    best = float("inf")
    for _ in range(steps):
        t = time.perf_counter()
        step()
        best = min(best, time.perf_counter() - t)
    return best * 1e3
"""

MX_LIKE = (
    COMMON
    + """
import numpy as np
mx = __import__(sys.argv[6])
sym = mx.sym.RNN(mx.sym.Variable("data"), mx.sym.Variable("params"), mx.sym.Variable("h"),
                 mx.sym.Variable("c"), mode="lstm", state_size=H, num_layers=L,
                 state_outputs=True)
exe = sym.simple_bind(mx.cpu(), data=(T, N, H), h=(L, N, H), c=(L, N, H))
rng = np.random.default_rng(0)
for name, arr in exe.arg_dict.items():
    arr[:] = rng.uniform(-0.1, 0.1, arr.shape).astype(np.float32)
heads = [mx.nd.ones(o.shape) for o in exe.outputs]
def step():
    exe.forward(is_train=True)
    exe.backward(heads)
    for g in exe.grad_arrays:
        g.wait_to_read()
print(best_of(step))
"""
)

TORCH = (
    COMMON
    + """
import torch
lstm = torch.nn.LSTM(H, H, L)
x = torch.rand(T, N, H, requires_grad=True)
def step():
    lstm.zero_grad()
    x.grad = None
    y, (h, c) = lstm(x)
    (y.sum() + h.sum() + c.sum()).backward()
print(best_of(step))
"""
)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--hidden", type=int, default=512)
    ap.add_argument("--seq", type=int, default=35)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--mxnet", default=None)
    ap.add_argument("--torch", default=None)
    ap.add_argument("--baseline", default=None, help="another nnvmpy source tree (its src/)")
    a = ap.parse_args()
    sizes = [str(v) for v in (a.layers, a.hidden, a.seq, a.batch, a.steps)]
    sides = {"nnvmpy": (sys.executable, MX_LIKE, [*sizes, "nnvmpy"], None)}
    if a.baseline:
        sides["baseline"] = (sys.executable, MX_LIKE, [*sizes, "nnvmpy"], a.baseline)
    mx_py = side_python(a.mxnet, ".mxenv", "mxnet")
    if mx_py:
        sides["mxnet"] = (mx_py, MX_LIKE, [*sizes, "mxnet"], None)
    torch_py = side_python(a.torch, ".torchenv", "torch")
    if torch_py:
        sides["torch"] = (torch_py, TORCH, sizes, None)
    best = dict.fromkeys(sides, float("inf"))
    loads = [os.getloadavg()[0]]
    for _ in range(a.rounds):
        for name, (py, script, args, path) in sides.items():
            best[name] = min(best[name], float(run_side(py, script, args, path)))
        loads.append(os.getloadavg()[0])
    print(
        f"LSTM layers={a.layers} hidden={a.hidden} seq={a.seq} batch={a.batch} "
        "forward+backward, best step (ms):"
    )
    for name, ms in best.items():
        print(f"  {name:8s} {ms:9.2f}")
    for mine in [m for m in ("nnvmpy", "baseline") if m in best]:
        for name, target in (("mxnet", 1.0), ("torch", 1.2)):
            if name in best:
                ratio = best[mine] / best[name]
                verdict = "ok" if ratio <= target else "over target"
                print(f"  {mine} / {name}: {ratio:.2f} (target <= {target}: {verdict})")
    print(
        "  load average (1 min) before and after each round: " + " ".join(f"{x:.2f}" for x in loads)
    )


if __name__ == "__main__":
    main()
