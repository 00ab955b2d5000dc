"""Benchmark DeformableConvolution and ModulatedDeformableConvolution (CPU, float32).

    .venv/bin/python tools/bench_deformable.py                  # against Convolution
    .venv/bin/python tools/bench_deformable.py --mxnet .mxenv   # and MXNet 1.9.1

Per layer shape (N, C, H = W, F, 3x3 kernel, pad 1, offsets up to 2 pixels), the best of
`--repeat` runs of the forward and of forward + backward (every input's gradient) through
nv.nd and autograd, beside the ordinary Convolution of the same shape in the same run
(the deformable op's cost over it: sampling and the two extra gradients). With --mxnet the
same script runs in that venv's Python on MXNet's ops (MXNet 1.9.1 has no CPU
ModulatedDeformableConvolution: "only implemented in GPU"), printed as a ratio.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

import numpy as np

from _vs_mxnet import best_of, results_in

# (N, C, H = W, F): a detection head's and two ResNet stages' shapes
LAYERS = [(2, 64, 56, 64), (2, 128, 28, 128), (2, 256, 14, 256)]
OPS = ("conv", "dcn", "dcnv2")


def measure(lib: Any, layer: tuple[int, int, int, int], op: str, repeat: int) -> tuple[float, ...]:
    """(forward ms, forward + backward ms) of `op` in nnvmpy or mxnet (`lib`)."""
    n, c, hw, f = layer
    rng = np.random.default_rng(0)
    x = lib.nd.array(rng.standard_normal((n, c, hw, hw)).astype(np.float32))
    offset = lib.nd.array(rng.uniform(-2, 2, (n, 18, hw, hw)).astype(np.float32))
    mask = lib.nd.array(rng.uniform(0, 1, (n, 9, hw, hw)).astype(np.float32))
    w = lib.nd.array((0.05 * rng.standard_normal((f, c, 3, 3))).astype(np.float32))
    b = lib.nd.zeros((f,))
    kw = {"kernel": (3, 3), "pad": (1, 1), "num_filter": f}
    inputs = {"conv": [x, w, b], "dcn": [x, offset, w, b], "dcnv2": [x, offset, mask, w, b]}[op]
    call = {
        "conv": lib.nd.Convolution,
        "dcn": lib.nd.contrib.DeformableConvolution,
        "dcnv2": lib.nd.contrib.ModulatedDeformableConvolution,
    }[op]
    for a in inputs:
        a.attach_grad()

    def forward() -> None:
        call(*inputs, **kw).wait_to_read()

    def both() -> None:
        with lib.autograd.record():
            y = call(*inputs, **kw)
        y.backward()
        for a in inputs:
            a.grad.wait_to_read()

    return best_of(forward, repeat), best_of(both, repeat)


def run_here(lib_name: str, repeat: int) -> dict[str, Any]:
    lib: Any = __import__(lib_name)
    results: dict[str, Any] = {}
    for layer in LAYERS:
        for op in OPS:
            try:
                results[f"{layer} {op}"] = measure(lib, layer, op, repeat)
            except Exception as e:  # MXNet: no CPU DCNv2
                results[f"{layer} {op}"] = str(e).strip().splitlines()[-1][:60]
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--mxnet", help="a venv with MXNet 1.9.1 (its bin/python runs this)")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(run_here(args.worker, args.repeat)))
        return
    theirs: dict[str, Any] = {}
    if args.mxnet:
        theirs = results_in(args.mxnet, __file__, ["--repeat", str(args.repeat)])
    ours = run_here("nnvmpy", args.repeat)
    print(f"float32, 3x3 pad 1, best of {args.repeat}; load {os.getloadavg()[0]:.1f}")
    print(f"{'N, C, H, F':<20}{'op':<7}{'fwd ms':>8}{'fwd+bwd':>9}{'/ conv':>8}", end="")
    print(f"{'MXNet fwd':>11}{'fwd+bwd':>9}{'ratio':>7}" if theirs else "")
    for layer in LAYERS:
        conv = ours[f"{layer} conv"]
        for op in OPS:
            fwd, both = ours[f"{layer} {op}"]
            line = f"{layer!s:<20}{op:<7}{fwd:8.1f}{both:9.1f}{both / conv[1]:7.1f}x"
            mx = theirs.get(f"{layer} {op}")
            if isinstance(mx, list):
                line += f"{mx[0]:11.1f}{mx[1]:9.1f}{both / mx[1]:6.2f}x"
            elif mx is not None:
                line += f"   MXNet: {mx}"
            print(line)
    if theirs:
        print("ratio: nnvmpy's forward + backward time over MXNet's (below 1: faster)")


if __name__ == "__main__":
    sys.exit(main())
