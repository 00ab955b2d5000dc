"""Does the profiler's trace account for the time of a ResNet-18 training step?

    .venv/bin/python tools/bench_profiler.py [--batch 2] [--steps 5] [--engine NAME]

Binds MXNet's ResNet-18 (../shared/models/resnet18_v1-symbol.json) for training, warms up,
then times `--steps` steps (forward(is_train=True) + backward + wait) with the profiler
off, and the same number with it on. For the profiled steps it reports, against the
measured wall time of those steps:

  op sum    the sum of every operation's duration in the trace (dumps' per-op totals);
            above the wall time when operations overlap on several workers
  op busy   the time at least one operation was running (the union of their spans):
            the part of the step the trace accounts for; the rest is Python dispatch
            between pushes and waiting

and the profiler's overhead (profiled wall / unprofiled wall). The issue asks the per-op
total to match the step time within 10%: with one worker (or NaiveEngine) op sum equals
op busy. No assertions: a report. Run `tools/bench_elementwise.py --dispatch-reps 20`
for the cost of the off-switch per push.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

MODELS = Path(__file__).resolve().parents[1].parent / "shared" / "models"


def _union_ns(spans: list[tuple[float, float]]) -> float:
    total, end = 0.0, float("-inf")
    for a, b in sorted(spans):
        if b <= end:
            continue
        total += b - max(a, end)
        end = b
    return total


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--engine", default=None, help="NNVMPY_ENGINE_TYPE for this run")
    args = ap.parse_args()
    if args.engine:
        os.environ["NNVMPY_ENGINE_TYPE"] = args.engine
    import nnvmpy as nv
    from nnvmpy import profiler

    symbol = nv.sym.load(str(MODELS / "resnet18_v1-symbol.json"))
    inputs = ("data", "softmax_label")
    req = {n: "null" if n in inputs else "write" for n in symbol.list_arguments()}
    exe = symbol.simple_bind(nv.cpu(), grad_req=req, data=(args.batch, 3, 224, 224))
    nv.random.seed(0)
    params = {n: a for n, a in exe.arg_dict.items() if n not in inputs}
    nv.init.init_params(nv.init.Xavier(), {**params, **exe.aux_dict}, symbol.attr_dict())
    rng = np.random.default_rng(0)
    x = rng.normal(size=(args.batch, 3, 224, 224)).astype(np.float32)
    label = rng.integers(0, 1000, size=args.batch).astype(np.float32)

    def step() -> None:
        exe.forward(is_train=True, data=x, softmax_label=label)
        exe.backward()
        nv.nd.waitall()

    for _ in range(2):
        step()

    def timed() -> list[float]:
        out = []
        for _ in range(args.steps):
            t0 = time.perf_counter()
            step()
            out.append(time.perf_counter() - t0)
        return out

    plain = timed()
    trace_file = Path(tempfile.mkdtemp()) / "resnet18.json"
    profiler.set_config(profile_all=True, aggregate_stats=True, filename=str(trace_file))
    profiler.set_state("run")
    profiled = timed()
    profiler.set_state("stop")
    profiler.dump()
    events = json.loads(trace_file.read_text())["traceEvents"]
    ops = [e for e in events if e.get("cat") == "operator" and e["ph"] == "X"]
    op_sum_ms = sum(e["dur"] for e in ops) / 1e3
    busy_ms = _union_ns([(e["ts"], e["ts"] + e["dur"]) for e in ops]) / 1e3
    wall_ms = sum(profiled) * 1e3
    stats = json.loads(profiler.dumps(format="json"))["Time"]["operator"]
    table_ms = sum(row["Total"] for row in stats.values())
    workers = {e["tid"] for e in ops}
    engine = type(nv.engine.get_engine()).__name__
    print(f"ResNet-18 training step, batch {args.batch}, {args.steps} steps, {engine}")
    print(f"  load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"  step, profiler off : {statistics.median(plain) * 1e3:9.1f} ms (median)")
    print(f"  step, profiler on  : {statistics.median(profiled) * 1e3:9.1f} ms (median)")
    print(f"  profiled wall total: {wall_ms:9.1f} ms over {len(ops)} operations")
    print(f"  op sum             : {op_sum_ms:9.1f} ms = {op_sum_ms / wall_ms:6.1%} of wall")
    print(f"  op busy (union)    : {busy_ms:9.1f} ms = {busy_ms / wall_ms:6.1%} of wall")
    print(f"  dumps() op totals  : {table_ms:9.1f} ms")
    print(f"  threads running ops: {len(workers)}")
    print(f"  overhead           : {statistics.median(profiled) / statistics.median(plain):.3f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
