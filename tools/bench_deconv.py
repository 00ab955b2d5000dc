"""Benchmark Deconvolution (2x upsampling of 32x64x56x56, float32, CPU) against PyTorch.

    .venv/bin/python tools/bench_deconv.py [--batch 32] [--rounds 3] [--steps 3]
                                           [--torch PATH] [--mxnet PATH]

Cases (data (N, 64, 56, 56) -> (N, 64, 112, 112), weight (64, 64, k, k), no bias):

  k4s2p1  kernel 4, stride 2, pad 1: the usual learned 2x upsampling (DCGAN, U-Net)
  k2s2    kernel 2, stride 2: each input pixel becomes a 2x2 block

For each: the forward alone (`nv.nd.Deconvolution(..., out=...)`, waited for) and a
training step (a bound executor: forward(is_train=True) + backward, d data and d weight).
PyTorch (`--torch PATH`, a venv or its python; default ./.torchenv) runs
torch.nn.functional.conv_transpose2d on the same data in its own process, with its
default thread count; MXNet 1.9.1 (`--mxnet PATH`, default ./.mxenv when present) the
same symbol. The sides take turns for `--rounds` rounds and each keeps its best time,
so a busy machine hurts all alike; the outputs are compared (max |difference|).
Target (issue 12): forward <= 1.2x PyTorch.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

import nnvmpy as nv
from _vs_mxnet import side_python

TARGET = 1.2
CASES = {"k4s2p1": (4, 2, 1), "k2s2": (2, 2, 0)}

TORCH_SCRIPT = """
import sys, time, numpy as np, torch
k, s, p, steps = (int(a) for a in sys.argv[1:5])
data = np.load(sys.argv[5])
x = torch.from_numpy(data["x"]).requires_grad_()
w = torch.from_numpy(data["w"]).requires_grad_()
dy = torch.from_numpy(data["dy"])
f = torch.nn.functional.conv_transpose2d
def fwd():
    with torch.no_grad():
        return f(x, w, stride=s, padding=p)
def train():
    x.grad = w.grad = None
    f(x, w, stride=s, padding=p).backward(dy)
def best(fn):
    fn()
    t_best = float("inf")
    for _ in range(steps):
        t = time.perf_counter()
        fn()
        t_best = min(t_best, time.perf_counter() - t)
    return t_best * 1e3
np.save(sys.argv[6], fwd().numpy())
print(best(fwd), best(train), torch.get_num_threads())
"""

MXNET_SCRIPT = """
import sys, time, numpy as np, mxnet as mx
k, s, p, steps = (int(a) for a in sys.argv[1:5])
data = np.load(sys.argv[5])
sym = mx.sym.Deconvolution(mx.sym.var("x"), mx.sym.var("w"), kernel=(k, k), stride=(s, s),
                           pad=(p, p), num_filter=data["w"].shape[1], no_bias=True)
exe = sym.simple_bind(mx.cpu(), x=data["x"].shape, w=data["w"].shape)
exe.arg_dict["x"][:] = data["x"]
exe.arg_dict["w"][:] = data["w"]
dy = mx.nd.array(data["dy"])
def fwd():
    exe.forward(is_train=False)[0].wait_to_read()
def train():
    exe.forward(is_train=True)
    exe.backward(dy)
    mx.nd.waitall()
def best(fn):
    fn()
    t_best = float("inf")
    for _ in range(steps):
        t = time.perf_counter()
        fn()
        t_best = min(t_best, time.perf_counter() - t)
    return t_best * 1e3
print(best(fwd), best(train))
"""


def run_other(python: str, script: str, case: tuple[int, ...], steps: int, data: Path) -> list:
    out = Path(os.environ.get("TMPDIR", "/tmp")) / f"bench_deconv_out_{os.getpid()}.npy"
    k, s, p = case
    args = [python, "-c", script, str(k), str(s), str(p), str(steps), str(data), str(out)]
    env = nv.threads.anchor_env()  # the anchor's own OpenMP defaults, not nnvmpy's
    done = subprocess.run(args, capture_output=True, text=True, check=True, env=env)
    fields = done.stdout.split()
    result = [float(v) for v in fields]
    if out.exists():
        result.append(np.load(out))
        out.unlink()
    return result


class Ours:
    """nnvmpy: the nd call (forward) and a bound executor (training step)."""

    def __init__(self, data: dict[str, np.ndarray], case: tuple[int, ...]) -> None:
        k, s, p = case
        self.params = {"kernel": (k, k), "stride": (s, s), "pad": (p, p), "num_filter": 64}
        self.x, self.w = nv.nd.array(data["x"]), nv.nd.array(data["w"])
        n, _, h, _ = data["x"].shape
        size = s * (h - 1) + k - 2 * p
        self.out = nv.nd.empty((n, data["w"].shape[1], size, size))
        sym = nv.sym.Deconvolution(nv.sym.var("x"), nv.sym.var("w"), **self.params)
        self.exe = sym.simple_bind(nv.cpu(), x=data["x"].shape, w=data["w"].shape)
        self.exe.arg_dict["x"][:] = data["x"]
        self.exe.arg_dict["w"][:] = data["w"]
        self.dy = nv.nd.array(data["dy"])

    def forward(self) -> None:
        nv.nd.Deconvolution(self.x, self.w, out=self.out, **self.params).wait_to_read()

    def train(self) -> None:
        self.exe.forward(is_train=True)
        self.exe.backward(self.dy)
        nv.nd.waitall()


def best_ms(fn: Callable[[], None], steps: int) -> float:
    fn()
    best = float("inf")
    for _ in range(steps):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--size", type=int, default=56)
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--torch", default=None, help="venv (or python) with torch")
    parser.add_argument("--mxnet", default=None, help="venv (or python) with mxnet 1.9.1")
    parser.add_argument("--only", default=None, help="run the cases whose name contains this")
    args = parser.parse_args()

    torch_py = side_python(args.torch, ".torchenv", "torch")
    mx_py = side_python(args.mxnet, ".mxenv", "mxnet")
    print(f"load average before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    rng = np.random.default_rng(0)
    for name, case in CASES.items():
        if args.only and args.only not in name:
            continue
        k, s, p = case
        shape = (args.batch, 64, args.size, args.size)
        out_size = s * (args.size - 1) + k - 2 * p
        data = {
            "x": rng.standard_normal(shape, dtype=np.float32),
            "w": (rng.standard_normal((64, 64, k, k)) * 0.05).astype(np.float32),
            "dy": rng.standard_normal((args.batch, 64, out_size, out_size), dtype=np.float32),
        }
        path = Path(os.environ.get("TMPDIR", "/tmp")) / f"bench_deconv_{os.getpid()}.npz"
        np.savez(path, **data)  # type: ignore[arg-type]
        ours = Ours(data, case)
        best = {"nnvmpy": [np.inf, np.inf], "PyTorch": [np.inf, np.inf], "MXNet": [np.inf, np.inf]}
        diff = threads = None
        try:
            for _ in range(args.rounds):
                best["nnvmpy"][0] = min(best["nnvmpy"][0], best_ms(ours.forward, args.steps))
                best["nnvmpy"][1] = min(best["nnvmpy"][1], best_ms(ours.train, args.steps))
                if torch_py:
                    f, t, threads, y = run_other(torch_py, TORCH_SCRIPT, case, args.steps, path)
                    best["PyTorch"] = [min(best["PyTorch"][0], f), min(best["PyTorch"][1], t)]
                    diff = float(np.abs(y - ours.out.asnumpy()).max())
                if mx_py:
                    f, t = run_other(mx_py, MXNET_SCRIPT, case, args.steps, path)[:2]
                    best["MXNet"] = [min(best["MXNet"][0], f), min(best["MXNet"][1], t)]
        finally:
            path.unlink(missing_ok=True)
        print(f"\nDeconvolution {name}: {shape} -> {(args.batch, 64, out_size, out_size)}")
        print(f"{'':<22}{'forward ms':>12}{'fwd+bwd ms':>12}")
        for side, (f, t) in best.items():
            if np.isfinite(f):
                label = f"{side} ({threads} threads)" if side == "PyTorch" else side
                print(f"{label:<22}{f:>12.1f}{t:>12.1f}")
        if np.isfinite(best["PyTorch"][0]):
            ratio = best["nnvmpy"][0] / best["PyTorch"][0]
            train = best["nnvmpy"][1] / best["PyTorch"][1]
            verdict = "meets" if ratio <= TARGET else "MISSES"
            print(
                f"nnvmpy / PyTorch: forward {ratio:.2f}x (target <= {TARGET}: {verdict}), "
                f"fwd+bwd {train:.2f}x; outputs differ by at most {diff:.1e}"
            )
        else:
            print("PyTorch: not found (pass --torch PATH to a venv with torch); skipped")
        if np.isfinite(best["MXNet"][0]):
            print(f"nnvmpy / MXNet: forward {best['nnvmpy'][0] / best['MXNet'][0]:.2f}x")
    print(f"\nload average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
