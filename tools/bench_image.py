"""Benchmark nd.image.resize (CPU) against the machine's copy bandwidth and MXNet 1.9.1.

    .venv/bin/python tools/bench_image.py                  # against np.copyto
    .venv/bin/python tools/bench_image.py --mxnet .mxenv   # and MXNet 1.9.1 (OpenCV)

Per case (dtype, a 480x640x3 camera frame shrunk to 224x224 or grown to 960x1280, each
interp), the best of `--repeat` calls through nv.nd. The baseline in the same run is
np.copyto of the output's bytes (a resize writes its output once and reads the input at
most a few times, so this is the floor it cannot beat). With --mxnet the same cases run
in that venv's Python on MXNet's `nd.image.resize`, OpenCV's resize underneath, and the
ratio nnvmpy / MXNet is printed (below 1: nnvmpy is faster).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

import numpy as np

from _vs_mxnet import best_of, results_in

SOURCE = (480, 640, 3)
SIZES = {"shrink": (224, 224), "grow": (1280, 960)}  # (width, height), as resize's size
INTERPS = {0: "nearest", 1: "bilinear", 2: "bicubic", 3: "area"}
DTYPES = ("uint8", "float32")


def run_here(lib_name: str, repeat: int) -> dict[str, float]:
    """{case: ms} for every case, on nnvmpy or mxnet (`lib_name`)."""
    lib: Any = __import__(lib_name)
    rng = np.random.default_rng(0)
    results = {}
    for dtype in DTYPES:
        x = lib.nd.array((rng.random(SOURCE) * 255).astype(dtype), dtype=dtype)
        for name, size in SIZES.items():
            for interp in INTERPS:

                def call(x: Any = x, size: tuple = size, interp: int = interp) -> None:
                    lib.nd.image.resize(x, size=size, interp=interp).wait_to_read()

                results[f"{dtype} {name} {interp}"] = best_of(call, repeat)
    return results


def copy_ms(dtype: str, size: tuple[int, int], repeat: int) -> float:
    """np.copyto of the output's bytes: the bandwidth floor."""
    src = np.ones((size[1], size[0], SOURCE[2]), dtype)
    dst = np.empty_like(src)
    return best_of(lambda: np.copyto(dst, src), repeat)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--mxnet", help="a venv with MXNet 1.9.1 (its bin/python runs this)")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(run_here(args.worker, args.repeat)))
        return
    theirs: dict[str, float] = {}
    if args.mxnet:
        theirs = results_in(args.mxnet, __file__, ["--repeat", str(args.repeat)])
    ours = run_here("nnvmpy", args.repeat)
    print(f"resize {SOURCE}, best of {args.repeat}; load {os.getloadavg()[0]:.1f}")
    print(f"{'dtype':<8}{'case':<16}{'interp':<10}{'ms':>7}{'/ copy':>8}", end="")
    print(f"{'MXNet ms':>10}{'ratio':>7}" if theirs else "")
    for dtype in DTYPES:
        for name, size in SIZES.items():
            floor = copy_ms(dtype, size, args.repeat)
            case = f"{name} {size[1]}x{size[0]}"
            for interp, label in INTERPS.items():
                key = f"{dtype} {name} {interp}"
                ms = ours[key]
                line = f"{dtype:<8}{case:<16}{label:<10}{ms:7.2f}{ms / floor:7.1f}x"
                if key in theirs:
                    line += f"{theirs[key]:10.2f}{ms / theirs[key]:6.2f}x"
                print(line)
    print("/ copy: time over np.copyto of the output's bytes (the floor)")
    if theirs:
        print("ratio: nnvmpy's time over MXNet's (below 1: faster)")


if __name__ == "__main__":
    sys.exit(main())
