"""Element-wise fusion: fused against unfused, hand-written ops and memory bandwidth.

    .venv/bin/python tools/bench_fusion.py            # all cases (a minute or two)
    .venv/bin/python tools/bench_fusion.py --quick    # fewer repeats
    .venv/bin/python tools/bench_fusion.py --nets     # also bench_nets' five networks: the
                                                      # same outputs with and without fusion

Cases (issue 13's targets in brackets; ratios from one run, the machine is shared):

  quadratic    a*x*x + b*x + c as 5 nodes at 10M float32, fused, against the registered
               `quadratic` op, forward and forward+backward              [<= 1.2x]
  chain10      10 element-wise ops at 10M float32: fused against NNVMPY_FUSION=0
               [>= 4x faster] and against np.copyto's one read + one write [>= 0.7x]
  adam         Adam written as element-wise ops on 10M float32 weights against the
               registered adam_update                                    [<= 1.2x]
  gelu-mlp     a GELU(tanh) MLP training step, batch 256, 1024 hidden, fused against
               unfused                                                   [>= 1.3x]
  bn-relu      BatchNorm -> relu training step (forward + backward) on ResNet-18's first
               activation (32x64x112x112 float32): one _contrib_BatchNormWithReLU node
               (FuseBatchNormReLU) against NNVMPY_FUSE_BN_RELU=0's two nodes [< 1]; and
               BatchNorm -> add -> relu on a layer1 activation (32x64x56x56), one
               _BatchNormAddReLU node against three [< 1]
  compile      a new fused group's compile time [<= 2 s], and the time a second process
               takes to load it from the disk cache [<= 50 ms]

Times are the median of several runs after a warm-up, in ms; bound executors, each step
waited for. The load average is printed: above the core count the numbers are noisy.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import nnvmpy as nv

sym = nv.sym
N = 10_000_000


def median_ms(step: Callable[[], Any], repeats: int) -> float:
    step()
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        step()
        nv.nd.waitall()
        times.append(time.perf_counter() - t)
    return 1000 * statistics.median(times)


def bind(symbol: Any, fusion: bool, train: bool = False, **arrays: np.ndarray) -> Any:
    os.environ["NNVMPY_FUSION"] = "1" if fusion else "0"
    try:
        args = {k: nv.nd.array(v, dtype=v.dtype) for k, v in arrays.items()}
        grads = {k: nv.nd.zeros(v.shape, dtype=v.dtype) for k, v in arrays.items()}
        return symbol.bind(nv.cpu(), args, args_grad=grads if train else None)
    finally:
        del os.environ["NNVMPY_FUSION"]


def step_of(exe: Any, train: bool) -> Callable[[], Any]:
    def step() -> Any:
        exe.forward(is_train=train)
        if train:
            exe.backward()
        return exe.outputs[0]

    return step


def case_quadratic(reps: int) -> list[tuple[str, float, float, str]]:
    x = np.random.default_rng(0).uniform(-1, 1, N).astype(np.float32)
    v = sym.var("x")
    a, b, c = 2.0, 3.0, 1.0
    composed = (v * v) * a + v * b + c
    op = sym.quadratic(v, a=a, b=b, c=c)
    rows = []
    for train, label in ((False, "forward"), (True, "forward+backward")):
        fused = median_ms(step_of(bind(composed, True, train, x=x), train), reps)
        ref = median_ms(step_of(bind(op, True, train, x=x), train), reps)
        unfused = median_ms(step_of(bind(composed, False, train, x=x), train), reps)
        rows.append((f"quadratic {label}: composed fused vs quadratic op", fused, ref, "<= 1.2"))
        rows.append((f"quadratic {label}: composed fused vs unfused", fused, unfused, ""))
    return rows


def chain10(v: Any, transcendental: bool = True) -> Any:
    y = v
    for i in range(10):
        kind = i % 5
        if kind == 0:
            y = y * 0.9
        elif kind == 1:
            y = y + 0.1
        elif kind == 2:
            y = sym.relu(y)
        elif kind == 3:
            y = sym.sigmoid(y) if transcendental else sym.softsign(y)
        else:
            y = sym.elemwise_mul(y, y)
    return y


def case_chain(reps: int) -> list[tuple[str, float, float, str]]:
    x = np.random.default_rng(1).uniform(-1, 1, N).astype(np.float32)
    dst = np.empty_like(x)
    copy = median_ms(lambda: np.copyto(dst, x), reps)
    rows = []
    for transcendental, what in ((False, "arithmetic"), (True, "with 2 sigmoid")):
        s = chain10(sym.var("x"), transcendental)
        fused = median_ms(step_of(bind(s, True, x=x), False), reps)
        unfused = median_ms(step_of(bind(s, False, x=x), False), reps)
        rows.append((f"chain of 10 ({what}): fused vs NNVMPY_FUSION=0", fused, unfused, "<= 0.25"))
        rows.append((f"chain of 10 ({what}): fused vs np.copyto", fused, copy, "<= 1.43"))
    return rows


def adam_symbol(lr: float, b1: float, b2: float, eps: float) -> Any:
    w, g, m, v = (sym.var(n) for n in ("weight", "grad", "mean", "var"))
    m2 = m * b1 + g * (1 - b1)
    v2 = v * b2 + sym.square(g) * (1 - b2)
    w2 = w - lr * m2 / (sym.sqrt(v2) + eps)
    return sym.Group([w2, m2, v2])


def interleaved_ms(steps: dict[str, Callable[[], Any]], repeats: int) -> dict[str, float]:
    """Median ms of each step, the steps run in turns so that they share the machine's load."""
    for step in steps.values():
        step()
    nv.nd.waitall()
    times: dict[str, list[float]] = {k: [] for k in steps}
    for _ in range(repeats):
        for k, step in steps.items():
            t = time.perf_counter()
            step()
            nv.nd.waitall()
            times[k].append(time.perf_counter() - t)
    return {k: 1000 * statistics.median(v) for k, v in times.items()}


def case_adam(reps: int) -> list[tuple[str, float, float, str]]:
    lr, b1, b2, eps = 0.01, 0.9, 0.999, 1e-8
    rng = np.random.default_rng(2)
    arrs = {k: rng.uniform(0.1, 1, N).astype(np.float32) for k in ("weight", "grad", "mean")}
    arrs["var"] = rng.uniform(0.1, 1, N).astype(np.float32)
    exe = bind(adam_symbol(lr, b1, b2, eps), True, **arrs)
    w, g, m, v = (nv.nd.array(arrs[k]) for k in ("weight", "grad", "mean", "var"))
    w2, m2, v2 = (nv.nd.array(arrs[k]) for k in ("weight", "mean", "var"))

    @nv.fuse
    def adam(w: Any, g: Any, m: Any, v: Any) -> Any:
        m = m * b1 + g * (1 - b1)
        v = v * b2 + nv.nd.square(g) * (1 - b2)
        return w - lr * m / (nv.nd.sqrt(v) + eps), m, v

    def registered() -> None:
        nv.nd.adam_update(w, g, m, v, out=w, lr=lr, beta1=b1, beta2=b2, epsilon=eps)

    ms = interleaved_ms(
        {
            "executor": step_of(exe, False),
            "in place": lambda: adam(w2, g, m2, v2, out=(w2, m2, v2)),
            "adam_update": registered,
        },
        reps,
    )
    ref = ms["adam_update"]
    return [
        (
            "adam as element-wise ops, bound (new outputs) vs adam_update",
            ms["executor"],
            ref,
            "<= 1.2",
        ),
        (
            "adam as element-wise ops, nv.fuse out=(w,m,v) vs adam_update",
            ms["in place"],
            ref,
            "<= 1.2",
        ),
    ]


def gelu_mlp() -> Any:
    x = sym.var("data")
    h = sym.FullyConnected(x, num_hidden=1024, name="fc1")
    c = 0.7978845608028654
    h = 0.5 * h * (1 + sym.tanh(c * (h + 0.044715 * h * h * h)))  # GELU(tanh) as ops
    h = sym.FullyConnected(h, num_hidden=1024, name="fc2")
    h = 0.5 * h * (1 + sym.tanh(c * (h + 0.044715 * h * h * h)))
    h = sym.FullyConnected(h, num_hidden=10, name="fc3")
    return sym.SoftmaxOutput(h, name="softmax")


def case_gelu(reps: int) -> list[tuple[str, float, float, str]]:
    s = gelu_mlp()
    times = {}
    for fusion in (False, True, False, True):  # alternate: the machine's load drifts
        os.environ["NNVMPY_FUSION"] = "1" if fusion else "0"
        try:
            exe = s.simple_bind(nv.cpu(), data=(256, 1024), softmax_label=(256,))
        finally:
            del os.environ["NNVMPY_FUSION"]
        rng = np.random.default_rng(3)
        for arr in exe.arg_dict.values():
            arr[:] = rng.uniform(-0.05, 0.05, arr.shape).astype(np.float32)
        exe.arg_dict["softmax_label"][:] = rng.integers(0, 10, 256).astype(np.float32)
        ms = median_ms(step_of(exe, True), reps)
        times[fusion] = min(ms, times.get(fusion, ms))
    return [
        ("GELU(tanh) MLP training step: fused vs unfused", times[True], times[False], "<= 0.77")
    ]


def case_bn_relu(reps: int) -> list[tuple[str, float, float, str]]:
    x, r = nv.sym.var("data"), nv.sym.var("residual")
    bn = nv.sym.BatchNorm(x, name="bn", fix_gamma=False)
    rows = []
    for label, s, shape in (
        ("BatchNorm+relu training step: one node vs two", nv.sym.relu(bn), (32, 64, 112, 112)),
        ("BatchNorm+add+relu training step: one node vs three", nv.sym.relu(bn + r),
         (32, 64, 56, 56)),
    ):  # fmt: skip
        s = nv.sym.sum(s)
        rng = np.random.default_rng(5)
        arrays = {name: rng.normal(size=shape).astype(np.float32) for name in ("data", "residual")}
        steps = {}
        for on in ("1", "0"):
            os.environ["NNVMPY_FUSE_BN_RELU"] = on
            try:
                exe = s.simple_bind(nv.cpu(), data=shape)
            finally:
                del os.environ["NNVMPY_FUSE_BN_RELU"]
            for name, value in arrays.items():
                if name in exe.arg_dict:
                    exe.arg_dict[name][:] = value
            exe.arg_dict["bn_gamma"][:] = 1.0
            steps[on] = step_of(exe, True)
        times = interleaved_ms(steps, reps)
        rows.append((label, times["1"], times["0"], "< 1"))
    return rows


COMPILE_SCRIPT = r"""
import json, time
import numpy as np
import nnvmpy as nv
v = nv.sym.var("x")
s = nv.sym.sigmoid(nv.sym.tanh(v * {k} + 0.5) * v) - v * v
exe = s.bind(nv.cpu(), {{"x": nv.nd.array(np.ones(1000, np.float32))}})
t = time.perf_counter()
exe.forward()
nv.nd.waitall()
print(json.dumps({{"ms": 1000 * (time.perf_counter() - t)}}))
"""


def case_compile() -> list[tuple[str, float, float, str]]:
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "NNVMPY_FUSION_CACHE_DIR": cache}
        runs = []
        for _ in range(2):
            out = subprocess.run(
                [sys.executable, "-c", COMPILE_SCRIPT.format(k=time.time_ns() % 7 + 1)],
                capture_output=True, text=True, env=env, check=True,
            )  # fmt: skip
            runs.append(json.loads(out.stdout.strip().splitlines()[-1])["ms"])
    return [
        ("new fused group: first forward (compile) ms vs 2000 ms", runs[0], 2000.0, "<= 1"),
        ("cached group, new process: first forward ms vs 50 ms", runs[1], 50.0, "<= 1"),
    ]


def case_nets() -> list[tuple[str, float, float, str]]:
    sys.path.insert(0, os.path.dirname(__file__))
    import bench_nets as bn

    rows = []
    models = bn.models_dir()
    for case in bn.CASES:
        path = models / f"{case.model}-symbol.json"
        weights = bn.weights_for(path, case)
        got = {}
        for fusion in ("1", "0"):
            os.environ["NNVMPY_FUSION"] = fusion
            try:
                exe = bn.bind_nnvmpy(path, case)
            finally:
                del os.environ["NNVMPY_FUSION"]
            step = bn.nnvmpy_step(exe, case, weights)
            outs = [step().asnumpy() for _ in range(2 if case.train else 1)]
            t = median_ms(step, 2)
            got[fusion] = (outs, exe.storage_bytes, t, len(getattr(exe, "_fused_groups", {})))
        diff = max(float(np.abs(a - b).max()) for a, b in zip(got["1"][0], got["0"][0]))
        print(
            f"  {case.name}: |out fused - unfused| = {diff:.3g}, planned bytes "
            f"{got['1'][1]} vs {got['0'][1]}, {got['1'][3]} fused groups",
            flush=True,
        )
        rows.append((f"{case.name} step: fused vs unfused", got["1"][2], got["0"][2], "<= 1"))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    parser.add_argument("--nets", action="store_true", help="also bench_nets' networks")
    parser.add_argument("--only", help="run only the cases whose name contains this")
    args = parser.parse_args()
    reps = 3 if args.quick else 7
    print(f"load average before: {os.getloadavg()[0]:.1f} ({os.cpu_count()} cores)")
    cases: dict[str, Callable[[], list[tuple[str, float, float, str]]]] = {
        "quadratic": lambda: case_quadratic(reps),
        "chain10": lambda: case_chain(reps),
        "adam": lambda: case_adam(reps),
        "gelu-mlp": lambda: case_gelu(max(2, reps // 2)),
        "bn-relu": lambda: case_bn_relu(reps),
        "compile": case_compile,
    }
    if args.nets:
        cases["nets"] = case_nets
    print(f"{'case':<58} {'ms':>9} {'vs ms':>9} {'ratio':>7}  target")
    for name, run in cases.items():
        if args.only and args.only not in name:
            continue
        for label, ms, ref, target in run():
            print(f"{label:<58} {ms:9.2f} {ref:9.2f} {ms / ref:7.2f}  {target}", flush=True)
    print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
