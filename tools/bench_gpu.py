"""GPU speed against the device's own limits and anchors, measured in the same run (issue 16).

    python3 tools/bench_gpu.py                       # on a GPU: every section
    python3 tools/bench_gpu.py --torch /path/python  # PyTorch anchor from another interpreter
    python3 tools/bench_gpu.py --only gemm,dispatch  # some sections
    NUMBA_ENABLE_CUDASIM=1 python3 tools/bench_gpu.py --smoke   # tiny sizes on the simulator

Sections (targets from issue 16):

  elementwise  elemwise_add and relu on 100M float32 through nd (out=), as GB/s moved,
               against CuPy's device-to-device copy in the same run: >= 0.8x its bandwidth
  gemm         nd.dot 4096^2 float32 (cuBLAS where CuPy is in use), the numba tiled kernel
               (NNVMPY_CUPY=0 for that row) and cupy.matmul: nnvmpy >= 0.8x cupy.matmul;
               then ResNet-18's first weight-gradient GEMMs at batch 64 (few output tiles,
               k up to 802816) with split-K on and off, beside cupy.matmul
  dispatch     an imperative op on a 16-element GPU array: pushed back to back (async
               dispatch) and waited for each time (engine round trip): <= 20 us per op;
               with numba-cuda's launches and with kernel/cuda_fast.py's direct ones
  layers       the row and channel kernels checked for coalescing (issue 16): BatchNorm
               training forward and backward on ResNet-18's (64, 64, 56, 56), softmax
               forward and backward on (4096, 1000), LayerNorm on (4096, 768), sum over
               each axis of (8192, 8192), a depthwise 3x3 convolution with a bias forward
               and backward on (64, 32, 112, 112): the least traffic each must move, as
               GB/s and as a fraction of CuPy's copy bandwidth (no target; watch the trend)
  resnet       ResNet-18 v1 training step at batch 64, 3x224x224 (forward, backward,
               sgd_mom_update; MXNet's symbol file when found, else the same network built
               here), against PyTorch eager (torchvision resnet18, float32, TF32 off, and
               with TF32 convolutions as PyTorch's default) in --torch's interpreter,
               else the achieved TFLOP/s: <= 2x PyTorch; and ours with split-K off
               (NNVMPY_GPU_SPLIT_K=0), what splitting the weight gradients buys

Times are wall-clock around work followed by a device-wide wait, best of `--rounds`; the
load average is printed (the host's CPUs run the dispatch). Rows needing CuPy are skipped,
with the reason, where the CuPy layer is not in use (`--smoke` on the simulator: the tiny
sizes only check that every section runs). `--json PATH` writes the numbers too.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

import nnvmpy as nv
from nnvmpy.kernel import cuda_fast, gpu_lib

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tools"))
import bench_nets  # noqa: E402  (the shared weights/init recipe and the models folder)

# the CuPy layer is the default; measured with it unless NNVMPY_CUPY says otherwise
os.environ.setdefault("NNVMPY_CUPY", "1")
RESNET18_MACS = 1.814e9  # multiply-adds of one 3x224x224 forward pass (torchvision's count)
RESULTS: dict[str, Any] = {}


def say(text: str) -> None:
    print(text, flush=True)


def best_s(run: Callable[[], Any], sync: Callable[[], Any], reps: int, rounds: int) -> float:
    """Seconds per repetition: `reps` runs then one wait, best of `rounds` (after a warm-up)."""
    run()
    sync()
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(reps):
            run()
        sync()
        best = min(best, (time.perf_counter() - start) / reps)
    return best


def cupy_or_none() -> Any:
    reason = gpu_lib.unavailable_reason()
    if reason is not None:
        say(f"  (CuPy rows skipped: {reason})")
        return None
    import cupy

    return cupy


def cupy_sync(cupy: Any) -> Callable[[], None]:
    return lambda: cupy.cuda.runtime.deviceSynchronize()


def time_bandwidth(
    rows: dict[str, tuple[Callable[[], Any], int]],
    copy_gbs: float | None,
    args: argparse.Namespace,
    label: str,
    key: str,
    target: str,
) -> None:
    """Time each row (run, bytes it moves) and print its GB/s and fraction of the copy's."""
    for name, (run, moved) in rows.items():
        t = best_s(run, nv.nd.waitall, args.reps, args.rounds)
        gbs = moved / t / 1e9
        ratio = f"  {gbs / copy_gbs:5.2f}x copy{target}" if copy_gbs else ""
        say(f"  {label}{name:<18}{1e3 * t:8.3f} ms  {gbs:8.1f} GB/s{ratio}")
        RESULTS[f"{key}{name.replace(' ', '_')}_GBps"] = gbs


# -- element-wise -------------------------------------------------------------------------------


def elementwise_rows(n: int) -> dict[str, tuple[Callable[[], Any], int]]:
    """The elementwise section's rows on n float32: name: (run, bytes it moves); each run
    writes the same output (gpu_kernel_times.py times their kernels too)."""
    gpu = nv.gpu(0)
    a, b, c = nv.nd.ones((n,), ctx=gpu), nv.nd.ones((n,), ctx=gpu), nv.nd.zeros((n,), ctx=gpu)
    nv.nd.waitall()
    size = 4 * n
    return {
        "elemwise_add": (lambda: nv.nd.elemwise_add(a, b, out=c), 3 * size),
        "relu": (lambda: nv.nd.relu(a, out=c), 2 * size),
    }


def bench_elementwise(n: int, args: argparse.Namespace) -> None:
    say(f"elementwise: {n:,} float32")
    rows = elementwise_rows(n)
    size = 4 * n
    copy_gbs = None
    cupy = cupy_or_none()
    if cupy is not None:
        src, dst = cupy.ones(n, cupy.float32), cupy.empty(n, cupy.float32)
        t = best_s(lambda: cupy.copyto(dst, src), cupy_sync(cupy), args.reps, args.rounds)
        copy_gbs = 2 * size / t / 1e9
        say(f"  cupy copy        {1e3 * t:8.3f} ms  {copy_gbs:8.1f} GB/s (read + write)")
        RESULTS["copy_GBps"] = copy_gbs
        del src, dst
    time_bandwidth(rows, copy_gbs, args, "nnvmpy ", "", " (target >= 0.8)")
    want = np.float32(2.0)
    got = rows["elemwise_add"][0]()[0:4].asnumpy()
    assert (got == want).all(), f"elemwise_add gave {got}, expected 2"


# -- GEMM ---------------------------------------------------------------------------------------


def bench_gemm(n: int, args: argparse.Namespace) -> None:
    say(f"gemm: {n}x{n}x{n} float32")
    flop = 2.0 * n**3
    gpu = nv.gpu(0)
    rng = np.random.default_rng(0)
    x_host = rng.uniform(-1, 1, (n, n)).astype(np.float32)
    y_host = rng.uniform(-1, 1, (n, n)).astype(np.float32)
    x, y = nv.nd.array(x_host, ctx=gpu), nv.nd.array(y_host, ctx=gpu)
    out = nv.nd.zeros((n, n), ctx=gpu)
    cupy = cupy_or_none()
    cublas_tf = None
    if cupy is not None:
        cx, cy, cz = cupy.asarray(x_host), cupy.asarray(y_host), cupy.empty((n, n), cupy.float32)
        t = best_s(lambda: cupy.matmul(cx, cy, out=cz), cupy_sync(cupy), args.reps, args.rounds)
        cublas_tf = flop / t / 1e12
        say(f"  cupy.matmul      {1e3 * t:8.3f} ms  {cublas_tf:7.2f} TFLOP/s")
        RESULTS["cupy_matmul_TFLOPs"] = cublas_tf
        del cx, cy, cz
    for label, knob in (("nnvmpy dot", "1"), ("numba tiled", "0")):
        old = os.environ.get("NNVMPY_CUPY")
        if knob is not None:
            os.environ["NNVMPY_CUPY"] = knob
        try:
            reps = args.reps if knob == "1" else max(1, args.reps // 5)
            t = best_s(lambda: nv.nd.dot(x, y, out=out), nv.nd.waitall, reps, args.rounds)
        finally:
            if old is None:
                os.environ.pop("NNVMPY_CUPY", None)
            else:
                os.environ["NNVMPY_CUPY"] = old
        tf = flop / t / 1e12
        ratio = f"  {tf / cublas_tf:5.2f}x cupy.matmul" if cublas_tf else ""
        say(f"  {label:<16} {1e3 * t:8.3f} ms  {tf:7.2f} TFLOP/s{ratio}")
        RESULTS[f"{label.replace(' ', '_')}_TFLOPs"] = tf
    got = out.asnumpy()[:8, :8]
    want = x_host[:8].astype(np.float64) @ y_host[:, :8].astype(np.float64)
    err = float(np.abs(got - want).max())
    say(f"  check: max |nnvmpy - float64 NumPy| on an 8x8 corner = {err:.2e}")
    assert err < 1e-3 * np.sqrt(n), "GEMM result is wrong"


#: ResNet-18's weight gradients at batch 64, dW (F, C*kh*kw) = dy (F, N*P) @ col^T: few
#: output tiles, a long inner size (what split-K, ops/_gemm_split.py, is for)
WEIGHT_GRADIENTS = {"conv1 7x7": (64, 147, 64 * 112 * 112), "layer1 3x3": (64, 576, 64 * 56 * 56)}


def bench_gemms(args: argparse.Namespace) -> None:
    bench_gemm(32 if args.smoke else 4096, args)
    bench_weight_gradients(16 if args.smoke else 1, args)


def bench_weight_gradients(scale: int, args: argparse.Namespace) -> None:
    """nd.dot(dy, col, transpose_b=True) on weight-gradient shapes (each size / scale,
    the inner one / scale^4), split-K on and off (NNVMPY_GPU_SPLIT_K), against
    cupy.matmul of the same operands."""
    for label, (m, n, k) in WEIGHT_GRADIENTS.items():
        _bench_weight_gradient(label, m // scale, n // scale, k // scale**4, args)


def _bench_weight_gradient(label: str, m: int, n: int, k: int, args: argparse.Namespace) -> None:
    say(f"gemm, weight gradient {label}: ({m} x {k}) @ ({n} x {k})^T float32")
    gpu, cupy = nv.gpu(0), cupy_or_none()
    flop = 2.0 * m * n * k
    rng = np.random.default_rng(0)
    dy_host = rng.uniform(-1, 1, (m, k)).astype(np.float32)
    col_host = rng.uniform(-1, 1, (n, k)).astype(np.float32)
    dy, col = nv.nd.array(dy_host, ctx=gpu), nv.nd.array(col_host, ctx=gpu)
    out = nv.nd.zeros((m, n), ctx=gpu)
    base = None
    if cupy is not None:
        cdy, ccol = cupy.asarray(dy_host), cupy.asarray(col_host)
        cz = cupy.empty((m, n), cupy.float32)
        base = best_s(lambda: cupy.matmul(cdy, ccol.T, out=cz), cupy_sync(cupy), args.reps,
                      args.rounds)  # fmt: skip
        say(f"  cupy.matmul      {1e3 * base:8.3f} ms  {flop / base / 1e12:7.2f} TFLOP/s")
        del cdy, ccol, cz
    key = label.split()[0]
    for row, knob in (("split-K", "1"), ("one GEMM", "0")):
        with nv.test_utils.environment("NNVMPY_GPU_SPLIT_K", knob):
            t = best_s(lambda: nv.nd.dot(dy, col, transpose_b=True, out=out), nv.nd.waitall,
                       args.reps, args.rounds)  # fmt: skip
        ratio = f"  {base / t:5.2f}x cupy.matmul's speed" if base else ""
        say(f"  nnvmpy {row:<9} {1e3 * t:8.3f} ms  {flop / t / 1e12:7.2f} TFLOP/s{ratio}")
        RESULTS[f"wgrad_{key}_{'split' if knob == '1' else 'one'}_ms"] = 1e3 * t
    got = out.asnumpy()[:4, :4]
    want = dy_host[:4].astype(np.float64) @ col_host[:4].T.astype(np.float64)
    err = float(np.abs(got - want).max())
    assert err < 1e-4 * np.sqrt(k), f"weight-gradient GEMM {label} is wrong ({err:.2e})"


# -- layers -------------------------------------------------------------------------------------


def layer_rows(scale: int) -> tuple[dict[str, tuple[Callable[[], Any], int]], Callable[[], None]]:
    """The layers section's rows, sizes divided by `scale`: name: (run, bytes: inputs read
    once + outputs written once); and a check of sum(axis=0) against NumPy (raises).
    gpu_kernel_times.py times their kernels too."""
    gpu = nv.gpu(0)
    rng = np.random.default_rng(0)

    def arr(*shape: int) -> Any:
        return nv.nd.array(rng.uniform(-1, 1, shape).astype(np.float32), ctx=gpu)

    def d(size: int) -> int:
        return max(size // scale, 2)

    x_bn = arr(d(64), d(64), d(56), d(56))
    c = x_bn.shape[1]
    gamma, beta, mm, mv = arr(c), arr(c), arr(c), nv.nd.ones((c,), ctx=gpu)
    for a in (x_bn, gamma):
        a.attach_grad()
    dy_bn = arr(*x_bn.shape)
    x_sm, dy_sm = arr(d(4096), d(1000)), arr(d(4096), d(1000))
    x_sm.attach_grad()
    x_ln, g_ln, b_ln = arr(d(4096), d(768)), arr(d(768)), arr(d(768))
    x_red = arr(d(8192), d(8192))
    # MobileNet's first depthwise layer: direct kernels, a sliced weight gradient, a bias
    x_dw, w_dw, b_dw = arr(d(64), d(32), d(112), d(112)), arr(d(32), 1, 3, 3), arr(d(32))
    dy_dw = arr(*x_dw.shape)
    for a in (x_dw, w_dw, b_dw):
        a.attach_grad()

    def bn_train() -> None:
        with nv.autograd.record():
            y = nv.nd.BatchNorm(x_bn, gamma, beta, mm, mv, fix_gamma=False)
        y.backward(dy_bn)

    def bn_relu_train() -> None:  # what FuseBatchNormReLU makes of BatchNorm -> relu
        with nv.autograd.record():
            y = nv.nd.contrib.BatchNormWithReLU(x_bn, gamma, beta, mm, mv, fix_gamma=False)
        y.backward(dy_bn)

    def bn_forward() -> None:
        with nv.autograd.train_mode():
            nv.nd.BatchNorm(x_bn, gamma, beta, mm, mv, fix_gamma=False)

    def softmax_train() -> None:
        with nv.autograd.record():
            y = nv.nd.softmax(x_sm, axis=-1)
        y.backward(dy_sm)

    def depthwise_train() -> None:
        with nv.autograd.record():
            y = nv.nd.Convolution(x_dw, w_dw, b_dw, kernel=(3, 3), pad=(1, 1),
                                  num_filter=x_dw.shape[1], num_group=x_dw.shape[1])  # fmt: skip
        y.backward(dy_dw)

    def check() -> None:
        got = nv.nd.sum(x_red, axis=0).asnumpy()
        want = x_red.asnumpy().astype(np.float64).sum(axis=0)
        assert np.allclose(got, want, rtol=1e-4, atol=1e-3), "sum(axis=0) is wrong"

    size_bn, size_sm, size_dw = 4 * x_bn.size, 4 * x_sm.size, 4 * x_dw.size
    rows = {
        "BatchNorm fwd": (bn_forward, 2 * size_bn),
        "BatchNorm fwd+bwd": (bn_train, 2 * size_bn + 3 * size_bn),  # + read x, dy; write dx
        "BatchNorm+relu fwd+bwd": (bn_relu_train, 2 * size_bn + 4 * size_bn),  # + read y
        "softmax fwd": (lambda: nv.nd.softmax(x_sm, axis=-1), 2 * size_sm),
        "softmax fwd+bwd": (softmax_train, 2 * size_sm + 3 * size_sm),  # + read y, dy; write dx
        "LayerNorm fwd": (lambda: nv.nd.LayerNorm(x_ln, g_ln, b_ln), 8 * x_ln.size),
        "sum(axis=0)": (lambda: nv.nd.sum(x_red, axis=0), 4 * x_red.size),
        "sum(axis=1)": (lambda: nv.nd.sum(x_red, axis=1), 4 * x_red.size),
        "depthwise fwd+bwd": (depthwise_train, 2 * size_dw + 3 * size_dw),  # as softmax's
    }
    return rows, check


def bench_layers(scale: int, args: argparse.Namespace) -> None:
    """Each row's least traffic (every input read once, every output written once) per
    second, against a device-to-device copy measured here: how near a kernel gets to the
    memory's bandwidth. `scale` divides the sizes (--smoke)."""
    say("layers: float32, GB/s of the least traffic each op must move")
    copy_gbs = RESULTS.get("copy_GBps")
    cupy = cupy_or_none()
    if copy_gbs is None and cupy is not None:
        n = 1 << 26 if scale == 1 else 1 << 10
        src, dst = cupy.ones(n, cupy.float32), cupy.empty(n, cupy.float32)
        t = best_s(lambda: cupy.copyto(dst, src), cupy_sync(cupy), args.reps, args.rounds)
        copy_gbs = 8 * n / t / 1e9
        del src, dst

    rows, check = layer_rows(scale)
    time_bandwidth(rows, copy_gbs, args, "", "layer_", "")
    check()


# -- ResNet-18 training step --------------------------------------------------------------------


def resnet18_symbol(width: int = 64, classes: int = 1000) -> tuple[Any, str]:
    """MXNet's resnet18_v1 symbol file when a models folder is found (full size only), else
    the same network built here (Gluon's ResNet-18 v1: conv7x7/2, max-pool, 4 stages of 2
    basic blocks, global average pool, dense), `width` channels in the first stage."""
    folders = (REPO / ".gpu_models", REPO.parent / "shared" / "models", Path("/work/shared/models"))
    for folder in folders if (width, classes) == (64, 1000) else ():
        path = folder / "resnet18_v1-symbol.json"
        if path.is_file():
            return nv.sym.load(str(path)), str(path)
    sym = nv.sym

    def conv_bn(x: Any, name: str, filters: int, kernel: int, stride: int, relu: bool) -> Any:
        pad = kernel // 2
        x = sym.Convolution(x, name=f"{name}_conv", num_filter=filters, kernel=(kernel, kernel),
                            stride=(stride, stride), pad=(pad, pad), no_bias=True)  # fmt: skip
        x = sym.BatchNorm(x, name=f"{name}_bn", eps=1e-5, fix_gamma=False)
        return sym.Activation(x, act_type="relu") if relu else x

    x = conv_bn(sym.Variable("data"), "stem", width, 7, 2, True)
    x = sym.Pooling(x, kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="max")
    channels = width
    for stage in range(4):
        filters = width << stage
        for block in range(2):
            stride = 2 if stage > 0 and block == 0 else 1
            name = f"s{stage}b{block}"
            y = conv_bn(x, f"{name}a", filters, 3, stride, True)
            y = conv_bn(y, f"{name}b", filters, 3, 1, False)
            if stride != 1 or channels != filters:
                x = conv_bn(x, f"{name}d", filters, 1, stride, False)
            x = sym.Activation(y + x, act_type="relu")
            channels = filters
    x = sym.Pooling(x, kernel=(1, 1), global_pool=True, pool_type="avg")
    x = sym.FullyConnected(sym.Flatten(x), num_hidden=classes, name="dense")
    return sym.SoftmaxOutput(x, name="softmax"), f"built in bench_gpu, width {width}"


def resnet_step(batch: int, size: int, width: int, classes: int) -> tuple[Any, Any, str]:
    """(executor, step, source): ResNet-18 bound on gpu(0) with bench_nets' initial values,
    and one training step (forward, backward, SGD with momentum) that returns at once."""
    symbol, source = resnet18_symbol(width, classes)
    shape = (batch, 3, size, size)
    gpu = nv.gpu(0)
    case = bench_nets.Case("resnet18-gpu", "resnet18_v1", shape, True, (1, 1), 0.0, 2.0)
    grad_req = {n: "null" if n in bench_nets.INPUTS else "write" for n in symbol.list_arguments()}
    exe = symbol.simple_bind(gpu, grad_req=grad_req, data=shape)
    arg_shapes, _, aux_shapes = symbol.infer_shape(data=shape)
    rng = np.random.default_rng(0)
    names = symbol.list_arguments() + symbol.list_auxiliary_states()
    for name, s in zip(names, list(arg_shapes) + list(aux_shapes), strict=True):
        if name not in bench_nets.INPUTS:
            value = bench_nets.init_value(name, tuple(s), rng)
            (exe.aux_dict if name in exe.aux_dict else exe.arg_dict)[name][:] = value
    x, label = bench_nets.make_inputs(case)
    label = label % classes
    exe.arg_dict["data"][:] = x
    exe.arg_dict["softmax_label"][:] = label
    params = [n for n in exe.arg_dict if n not in bench_nets.INPUTS]
    weights = [exe.arg_dict[n] for n in params]
    interleaved = []  # (weight, grad, mom) per parameter: multi_sgd_mom_update's inputs
    for n, w in zip(params, weights, strict=True):
        interleaved += [w, exe.grad_dict[n], nv.nd.zeros(w.shape, ctx=gpu)]
    k = len(params)

    def step() -> None:
        exe.forward(is_train=True)
        exe.backward()
        # every parameter in one op, as PyTorch's foreach SGD (the anchor) updates them
        nv.nd.multi_sgd_mom_update(*interleaved, out=weights, lrs=[bench_nets.LR] * k,
                                   wds=[bench_nets.WD] * k, momentum=bench_nets.MOMENTUM,
                                   rescale_grad=1.0 / batch, num_weights=k)  # fmt: skip

    return exe, step, source


def bench_resnet(batch: int, size: int, args: argparse.Namespace) -> None:
    width, classes = (2, 10) if args.smoke else (64, 1000)  # the simulator runs a narrow net
    start = time.perf_counter()
    exe, step, source = resnet_step(batch, size, width, classes)
    say(f"resnet18 training step: batch {batch}, 3x{size}x{size} ({source})")
    step()
    nv.nd.waitall()
    first = time.perf_counter() - start
    say(f"  bind + first step (kernel compiles included): {first:.1f} s")
    if args.smoke:  # the simulator: that step showed it runs; its time means nothing
        t = first
    elif first > args.slow_step_s:  # one more step, no warm-up
        start = time.perf_counter()
        step()
        nv.nd.waitall()
        t = time.perf_counter() - start
    else:
        t = best_s(step, nv.nd.waitall, args.net_reps, args.rounds)
    # forward + twice that for backward; the stem's and the stages' MACs scale with width^2
    flop = 3 * 2 * RESNET18_MACS * batch * (size / 224) ** 2 * (width / 64) ** 2
    say(f"  nnvmpy fp32      {1e3 * t:8.1f} ms/step  {flop / t / 1e12:6.2f} TFLOP/s")
    logits = exe.outputs[0].asnumpy()
    assert np.isfinite(logits).all(), "ResNet-18 outputs are not finite"
    RESULTS["resnet18_ms"] = 1e3 * t
    RESULTS["resnet18_TFLOPs"] = flop / t / 1e12
    ours = {"fp32": t}
    if not args.smoke and first <= args.slow_step_s:
        # convolutions on TF32 (NNVMPY_GPU_TF32=conv), as cuDNN runs them by default
        with nv.test_utils.environment("NNVMPY_GPU_TF32", "conv"):
            ours["tf32-conv"] = best_s(step, nv.nd.waitall, args.net_reps, args.rounds)
        t32 = ours["tf32-conv"]
        say(f"  nnvmpy tf32-conv {1e3 * t32:8.1f} ms/step  {flop / t32 / 1e12:6.2f} TFLOP/s")
        RESULTS["resnet18_tf32_conv_ms"] = 1e3 * t32
        # the weight gradients as one GEMM each (ops/_gemm_split.py off): what split-K buys
        with nv.test_utils.environment("NNVMPY_GPU_SPLIT_K", "0"):
            t1 = best_s(step, nv.nd.waitall, args.net_reps, args.rounds)
        say(f"  nnvmpy fp32, split-K off {1e3 * t1:8.1f} ms/step")
        RESULTS["resnet18_no_split_k_ms"] = 1e3 * t1
    torch_ms = run_torch_resnet(args, batch, size)
    if torch_ms:
        for label, ms in torch_ms.items():
            # each PyTorch setting against ours with the same math, where that was timed
            mine = label if label in ours else "fp32"
            say(f"  PyTorch {label:<9}{ms:8.1f} ms/step   nnvmpy {mine} "
                f"{1e3 * ours[mine] / ms:5.2f}x (target <= 2)")  # fmt: skip
        RESULTS["torch_resnet18_ms"] = torch_ms


TORCH_SCRIPT = r"""
import json, statistics, sys, time
import torch, torch.nn.functional as F, torchvision
cfg = json.loads(sys.argv[1])
assert torch.cuda.is_available(), "torch has no CUDA here"
dev = torch.device("cuda")
model = torchvision.models.resnet18(num_classes=1000).to(dev)
opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=1e-4)
x = torch.randn(cfg["batch"], 3, cfg["size"], cfg["size"], device=dev)
y = torch.randint(0, 1000, (cfg["batch"],), device=dev)
def step():
    opt.zero_grad(set_to_none=True)
    F.cross_entropy(model(x), y).backward()
    opt.step()
out = {}
for label, tf32 in (("fp32", False), ("tf32-conv", True)):
    torch.backends.cudnn.allow_tf32 = tf32   # PyTorch's default lets convolutions use TF32
    torch.backends.cuda.matmul.allow_tf32 = False
    for _ in range(3):
        step()
    torch.cuda.synchronize()
    ts = []
    for _ in range(cfg["reps"]):
        t = time.perf_counter()
        step()
        torch.cuda.synchronize()
        ts.append(time.perf_counter() - t)
    out[label] = 1000 * min(ts)
t = torch.ones(16, device=dev)
torch.cuda.synchronize()
s = time.perf_counter()
for _ in range(2000):
    t = t + 1
torch.cuda.synchronize()
out["dispatch_us"] = (time.perf_counter() - s) / 2000 * 1e6
print("RESULT " + json.dumps(out))
"""


def torch_python(args: argparse.Namespace) -> str | None:
    """The interpreter for the PyTorch anchor: --torch (a python or a venv), else this one
    when it can import torch and torchvision."""
    if args.torch == "none":
        return None
    if args.torch:
        path = Path(args.torch)
        return str(path / "bin" / "python") if path.is_dir() else str(path)
    import importlib.util

    if importlib.util.find_spec("torch") and importlib.util.find_spec("torchvision"):
        return sys.executable
    return None


def run_torch_resnet(args: argparse.Namespace, batch: int, size: int) -> dict[str, float] | None:
    python = torch_python(args)
    if python is None or args.smoke:
        say("  (PyTorch anchor skipped: no --torch and no torch+torchvision here)")
        return None
    cfg = {"batch": batch, "size": size, "reps": args.net_reps}
    try:
        proc = subprocess.run([python, "-c", TORCH_SCRIPT, json.dumps(cfg)], capture_output=True,
                              text=True, timeout=300, check=False,
                              env=nv.threads.anchor_env())  # fmt: skip
    except subprocess.TimeoutExpired:
        say("  (PyTorch anchor timed out)")
        return None
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT "):
            result = json.loads(line[len("RESULT ") :])
            RESULTS["torch_dispatch_us"] = result.pop("dispatch_us")
            say(f"  PyTorch dispatch, t = t + 1 on 16 elements: "
                f"{RESULTS['torch_dispatch_us']:.1f} us/op")  # fmt: skip
            return result
    say(f"  (PyTorch anchor failed: {proc.stderr.strip().splitlines()[-3:]})")
    return None


# -- dispatch -----------------------------------------------------------------------------------


def bench_dispatch(n_ops: int) -> None:
    """Both launch paths in turn: numba-cuda's, and kernel/cuda_fast.py's direct one."""
    say("dispatch: x = x + 1 on a 16-element float32 GPU array")
    for fast, label in ((False, "numba-cuda launches"), (True, "direct launches")):
        cuda_fast.set_enabled(fast)
        try:
            async_us, trip_us = _dispatch_times(n_ops)
        finally:
            cuda_fast.set_enabled(None)
        say(f"  {label} (NNVMPY_GPU_FAST_LAUNCH={int(fast)}):")
        say(f"    pushed back to back    {async_us:7.1f} us/op (target <= 20)")
        say(f"    waited for each        {trip_us:7.1f} us/op")
        suffix = "_fast" if fast else ""
        RESULTS[f"dispatch_async{suffix}_us"] = async_us
        RESULTS[f"dispatch_roundtrip{suffix}_us"] = trip_us


def _dispatch_times(n_ops: int) -> tuple[float, float]:
    gpu = nv.gpu(0)
    x = nv.nd.ones((16,), ctx=gpu)
    for _ in range(20):  # compile, and the first launch on each engine worker thread
        x = x + 1
    x.wait_to_read()
    start = time.perf_counter()
    for _ in range(n_ops):
        x = x + 1
    nv.nd.waitall()
    async_us = (time.perf_counter() - start) / n_ops * 1e6
    start = time.perf_counter()
    for _ in range(n_ops // 4):
        x = x + 1
        x.wait_to_read()
    trip_us = (time.perf_counter() - start) / (n_ops // 4) * 1e6
    want = 21 + n_ops + n_ops // 4
    assert float(x.asnumpy()[0]) == want, f"x is {x.asnumpy()[0]}, expected {want}"
    return async_us, trip_us


# -- main ---------------------------------------------------------------------------------------


SECTIONS = ("elementwise", "gemm", "dispatch", "layers", "resnet")  # the longest last


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="tiny sizes (runs on the simulator)")
    parser.add_argument("--only", default=",".join(SECTIONS), help="comma-separated sections")
    parser.add_argument("--torch", help="python (or venv) with CUDA PyTorch and torchvision "
                        "('none': no PyTorch anchor)")  # fmt: skip
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--reps", type=int, default=20, help="repetitions per timed round")
    parser.add_argument("--net-reps", type=int, default=5, help="ResNet steps per round")
    parser.add_argument("--slow-step-s", type=float, default=60.0,
                        help="a slower first ResNet step: time one more step only")  # fmt: skip
    parser.add_argument("--json", help="also write the numbers to this file")
    args = parser.parse_args(argv)
    only = set(args.only.split(","))
    if unknown := only - set(SECTIONS):
        parser.error(f"unknown sections {sorted(unknown)}; expected some of {SECTIONS}")
    if args.smoke:
        args.rounds, args.reps, args.net_reps = 1, 2, 1
    say(f"bench_gpu: load average {os.getloadavg()}, CuPy layer: "
        f"{gpu_lib.unavailable_reason() or 'in use'}")  # fmt: skip
    started = time.perf_counter()
    sections: dict[str, Callable[[], None]] = {
        "elementwise": lambda: bench_elementwise(1000 if args.smoke else 100_000_000, args),
        "gemm": lambda: bench_gemms(args),
        "dispatch": lambda: bench_dispatch(20 if args.smoke else 2000),
        "layers": lambda: bench_layers(256 if args.smoke else 1, args),
        "resnet": lambda: bench_resnet(1 if args.smoke else 64, 16 if args.smoke else 224, args),
    }
    failed = []
    for name, run in sections.items():
        if name not in only:
            continue
        try:  # one failing section must not cost the others' device time
            run()
        except Exception:
            traceback.print_exc()
            say(f"  {name}: FAILED (traceback above)")
            failed.append(name)
    say(f"bench_gpu: done in {time.perf_counter() - started:.0f} s, load average "
        f"{os.getloadavg()}")  # fmt: skip
    if args.json:
        Path(args.json).write_text(json.dumps(RESULTS, indent=1, default=float))
    if failed:
        sys.exit(f"bench_gpu: failed sections: {', '.join(failed)}")


if __name__ == "__main__":
    main()
