"""Benchmark Convolution on ResNet-18's layer shapes (CPU): forward and backward per layer.

    .venv/bin/python tools/bench_conv.py                 # batch 1 and 32
    .venv/bin/python tools/bench_conv.py --batch 32 --repeat 5 --no-baseline

For each distinct layer it prints the best time of `--repeat` runs of the registered
FCompute<cpu> (called directly, as the executor does, with the shared temp space),
GFLOP/s (2 * MACs / time), and a plain NumPy im2col reference (sliding_window_view +
one matmul) measured in the same run, as a ratio. The totals weight each layer by how
often ResNet-18 uses it. Backward computes d data and d weight (no bias: ResNet has none).

    --breakdown   also time im2col alone and the GEMMs alone per image (where CPU time goes)
    --gpu         time the FCompute<gpu> kernels instead (through nv.nd, waiting on results)
    --columns N.. sweep _conv_cpu.TARGET_COLUMNS (GEMM width a chunk of images aims for)
    --cpu-time    time with the process's CPU time instead of the wall clock (robust to other
                  processes on a busy machine; with NNVMPY_NUM_THREADS=1 it is one core's time)

The header names the cblas the GEMMs ran on (NNVMPY_BLAS: mkl or openblas) and the load.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import nnvmpy as nv
from nnvmpy.base import OpReqType, cpu
from nnvmpy.engine import RunContext
from nnvmpy.registry import Op
from nnvmpy.resource import OpContext, ResourceRequest, get_resource

# (name, count in ResNet-18, C, F, H(=W), kernel, stride, pad)
LAYERS = [
    ("conv0 7x7/2", 1, 3, 64, 224, 7, 2, 3),
    ("s1 3x3", 4, 64, 64, 56, 3, 1, 1),
    ("s2 3x3/2", 1, 64, 128, 56, 3, 2, 1),
    ("s2 1x1/2", 1, 64, 128, 56, 1, 2, 0),
    ("s2 3x3", 3, 128, 128, 28, 3, 1, 1),
    ("s3 3x3/2", 1, 128, 256, 28, 3, 2, 1),
    ("s3 1x1/2", 1, 128, 256, 28, 1, 2, 0),
    ("s3 3x3", 3, 256, 256, 14, 3, 1, 1),
    ("s4 3x3/2", 1, 256, 512, 14, 3, 2, 1),
    ("s4 1x1/2", 1, 256, 512, 14, 1, 2, 0),
    ("s4 3x3", 3, 512, 512, 7, 3, 1, 1),
]


CLOCK: Callable[[], float] = time.perf_counter  # --cpu-time: time.process_time


def best_of(fn: Callable[[], Any], repeat: int) -> float:
    fn()  # warm up (compiles, grows the temp space)
    times = []
    for _ in range(repeat):
        t = CLOCK()
        fn()
        times.append(CLOCK() - t)
    return min(times)


def numpy_reference(x: np.ndarray, w: np.ndarray, k: int, s: int, p: int) -> np.ndarray:
    """Plain NumPy im2col: pad, sliding windows, one big copy, one matmul."""
    n, c = x.shape[:2]
    f = w.shape[0]
    xp = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)))
    win = np.lib.stride_tricks.sliding_window_view(xp, (k, k), axis=(2, 3))[:, :, ::s, ::s]
    ho, wo = win.shape[2], win.shape[3]
    col = win.transpose(1, 4, 5, 0, 2, 3).reshape(c * k * k, n * ho * wo)
    out = w.reshape(f, -1) @ col
    return out.reshape(f, n, ho, wo).transpose(1, 0, 2, 3)


def run_layer(
    batch: int, layer: tuple[Any, ...], repeat: int, baseline: bool
) -> tuple[float, float, float, float]:
    _, _, c, f, h, k, s, p = layer
    rng = np.random.default_rng(0)
    x = rng.standard_normal((batch, c, h, h), dtype=np.float32)
    w = rng.standard_normal((f, c, k, k), dtype=np.float32)
    params = {"kernel": (k, k), "stride": (s, s), "pad": (p, p), "num_filter": f, "no_bias": True}
    fwd, bwd = Op.get("Convolution"), Op.get("_backward_Convolution")
    attrs, battrs = fwd.parse_attrs(params), bwd.parse_attrs(params)
    ho = (h + 2 * p - k) // s + 1
    out = np.empty((batch, f, ho, ho), np.float32)
    dy = rng.standard_normal(out.shape, dtype=np.float32)
    dx, dw = np.empty_like(x), np.empty_like(w)
    res = get_resource(ResourceRequest.kTempSpace, cpu())[0]
    ctx = OpContext(True, RunContext(cpu(), None), [res])
    write = [OpReqType.kWriteTo]
    fcompute = fwd.get_attr("FCompute<cpu>")
    bcompute = bwd.get_attr("FCompute<cpu>")
    t_fwd = best_of(lambda: fcompute(attrs, ctx, [x, w], write, [out]), repeat)
    t_bwd = best_of(lambda: bcompute(battrs, ctx, [dy, x, w], write * 2, [dx, dw]), repeat)
    t_ref = best_of(lambda: numpy_reference(x, w, k, s, p), repeat) if baseline else float("nan")
    flops = 2.0 * batch * f * ho * ho * c * k * k
    return t_fwd, t_bwd, t_ref, flops


def breakdown(batch: int, layer: tuple[Any, ...], repeat: int) -> tuple[float, float]:
    """(im2col ms, GEMM ms) for the whole batch, one image at a time."""
    from nnvmpy.ops.nn import _im2col

    _, _, c, f, h, k, s, p = layer
    x = np.random.default_rng(0).standard_normal((batch, c, h, h), dtype=np.float32)
    ho = (h + 2 * p - k) // s + 1
    col = np.empty((c * k * k, ho * ho), np.float32)
    w = np.ones((f, c * k * k), np.float32)
    out = np.empty((f, ho * ho), np.float32)
    planar = _im2col.planar_args(k, k, ho * ho)

    def im2col() -> None:
        for n in range(batch):
            _im2col._im2col(x, col, n, 1, 0, c, k, k, s, s, p, p, 1, 1, ho, ho, *planar, 1)

    def gemm() -> None:
        for _ in range(batch):
            np.matmul(w, col, out=out)

    return best_of(im2col, repeat), best_of(gemm, repeat)


def run_gpu_layer(batch: int, layer: tuple[Any, ...], repeat: int) -> tuple[float, float, float]:
    _, _, c, f, h, k, s, p = layer
    ctx = nv.gpu(0)
    rng = np.random.default_rng(0)
    x = nv.nd.array(rng.standard_normal((batch, c, h, h)), ctx)
    w = nv.nd.array(rng.standard_normal((f, c, k, k)), ctx)
    params = {"kernel": (k, k), "stride": (s, s), "pad": (p, p), "num_filter": f, "no_bias": True}
    ho = (h + 2 * p - k) // s + 1
    dy = nv.nd.array(rng.standard_normal((batch, f, ho, ho)), ctx)
    backward = nv.nd._internal._backward_Convolution
    from numba import cuda  # kernels run asynchronously: time until the GPU is done

    def fwd() -> None:
        nv.nd.Convolution(x, w, **params).wait_to_read()
        cuda.synchronize()

    def bwd() -> None:
        for g in backward(dy, x, w, **params):
            g.wait_to_read()
        cuda.synchronize()

    return best_of(fwd, repeat), best_of(bwd, repeat), 2.0 * batch * f * ho * ho * c * k * k


def main_gpu(batches: list[int], repeat: int) -> None:
    print(f"Convolution FCompute<gpu> (direct numba.cuda kernels), float32, best of {repeat}")
    for batch in batches:
        print(f"\nbatch {batch}")
        print(f"{'layer':<13}{'n':>3}{'fwd ms':>9}{'GF/s':>7}{'bwd ms':>9}{'GF/s':>7}")
        total = [0.0, 0.0]
        for layer in LAYERS:
            t_fwd, t_bwd, flops = run_gpu_layer(batch, layer, repeat)
            total = [total[0] + layer[1] * t_fwd, total[1] + layer[1] * t_bwd]
            print(
                f"{layer[0]:<13}{layer[1]:>3}{t_fwd * 1e3:>9.2f}{flops / t_fwd / 1e9:>7.0f}"
                f"{t_bwd * 1e3:>9.2f}{2 * flops / t_bwd / 1e9:>7.0f}"
            )
        print(f"{'ResNet-18 convs':<16}{total[0] * 1e3:>9.1f}{'':>7}{total[1] * 1e3:>9.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, nargs="*", default=[1, 32])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-baseline", action="store_true")
    parser.add_argument("--breakdown", action="store_true")
    parser.add_argument("--gpu", action="store_true")
    parser.add_argument("--columns", type=int, nargs="*", default=[])
    parser.add_argument("--cpu-time", action="store_true")
    args = parser.parse_args()
    global CLOCK
    if args.cpu_time:
        CLOCK = time.process_time
    if args.gpu:
        main_gpu(args.batch, args.repeat)
        return
    print(f"nnvmpy {nv.__name__}: Convolution FCompute<cpu>, float32, best of {args.repeat}")
    from nnvmpy import threads
    from nnvmpy.ops.nn import _blas, _conv_cpu

    # as the engine does at its first CPU pool: OpenBLAS/MKL threads = the thread budget
    # (NNVMPY_NUM_THREADS), not the library's own default
    threads.set_blas_threads(threads.width())
    print(
        f"GEMMs on {_blas.name()} ({threads.width()} threads), "
        f"{'process CPU time' if args.cpu_time else 'wall clock'}, "
        f"load average {os.getloadavg()[0]:.2f}"
    )

    for columns in args.columns:
        _conv_cpu.TARGET_COLUMNS = columns
        for batch in args.batch:
            t = [run_layer(batch, layer, args.repeat, False)[:2] for layer in LAYERS]
            fwd = sum(layer[1] * f for layer, (f, _) in zip(LAYERS, t))
            bwd = sum(layer[1] * b for layer, (_, b) in zip(LAYERS, t))
            print(
                f"TARGET_COLUMNS={columns} batch {batch}: "
                f"fwd {fwd * 1e3:.1f} ms, bwd {bwd * 1e3:.1f} ms"
            )
    if args.columns:
        return
    for batch in args.batch:
        print(f"\nbatch {batch}")
        print(
            f"{'layer':<13}{'n':>3}{'fwd ms':>9}{'GF/s':>7}{'bwd ms':>9}{'GF/s':>7}"
            f"{'numpy fwd ms':>14}{'speedup':>9}"
        )
        totals = [0.0, 0.0, 0.0]
        for layer in LAYERS:
            t_fwd, t_bwd, t_ref, flops = run_layer(batch, layer, args.repeat, not args.no_baseline)
            n = layer[1]
            totals = [totals[0] + n * t_fwd, totals[1] + n * t_bwd, totals[2] + n * t_ref]
            print(
                f"{layer[0]:<13}{n:>3}{t_fwd * 1e3:>9.2f}{flops / t_fwd / 1e9:>7.0f}"
                f"{t_bwd * 1e3:>9.2f}{2 * flops / t_bwd / 1e9:>7.0f}"
                f"{t_ref * 1e3:>14.2f}{t_ref / t_fwd:>8.2f}x"
            )
        print(
            f"{'ResNet-18 convs':<16}{totals[0] * 1e3:>9.1f}{'':>7}{totals[1] * 1e3:>9.1f}"
            f"{'':>7}{totals[2] * 1e3:>14.1f}{totals[2] / totals[0]:>8.2f}x"
        )
        if args.breakdown:
            print(f"\n{'layer':<13}{'im2col ms':>10}{'GEMM ms':>9}  (per batch, image by image)")
            for layer in LAYERS:
                t_col, t_gemm = breakdown(batch, layer, args.repeat)
                print(f"{layer[0]:<13}{t_col * 1e3:>10.2f}{t_gemm * 1e3:>9.2f}")


if __name__ == "__main__":
    main()
