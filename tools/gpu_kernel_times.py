"""Device time per kernel of a ResNet-18 training step on the GPU (issue 16's 2x target).

    python3 tools/gpu_kernel_times.py [--batch 64] [--size 224] [--steps 2] [--out DIR]
    python3 tools/gpu_kernel_times.py --layers     # also bench_gpu's elementwise and layers rows

bench_gpu.py times the whole step (124 ms on an H200 against PyTorch's 25 ms) and
profile_gpu.py samples where the host's time goes; neither says which kernels the device
spends the step in, nor whether the step is bound by the device or by the host. This
wraps every kernel launch (kernel.cuda.launch_kernel, wherever a module imported it)
and every GEMM (ops.matrix._gemm_gpu: cuBLAS, or the tiled kernel without CuPy) with
two CUDA events on the legacy default stream. The engine's streams are blocking
streams, so the first event waits for all work queued before it and the second for the
kernel: their interval is the kernel's device time, queueing excluded. Events there
also serialise the workers' streams, so the step runs slower while measured; the plain
step's time is printed beside the sums.

Writes kernels.txt to DIR (default $OUT or ./gpu_profile): the plain and the measured
step time, the sum of device times and of the launch calls' host times (device-bound
when the first sum is near the step time, host-bound when the second is), then one row
per operator file (summed), then one row per kernel and caller (the nearest frame in
nnvmpy/ops past the shared GEMM and update helpers, which names the operator):
launches, device ms, share, host us per launch. Runs on the simulator too (--smoke),
where the events time nothing: the rows then only count launches.

--layers adds bench_gpu.py's elementwise and layers rows (elemwise_add at 100M float32,
BatchNorm, softmax, LayerNorm, sums, depthwise): each row's wall time per call beside its
kernels' device time per call. bench_gpu gives their GB/s from wall time only, so a slow
row could be its kernels or the dispatch around them; the two columns tell which.
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

OPS_FOLDER = f"{os.sep}nnvmpy{os.sep}ops{os.sep}"


#: shared launch helpers below ops/: a GEMM or an update is charged to the op calling them
PASS_THROUGH = ("matrix.py", f"optimizer{os.sep}_common.py")


#: launches from elsewhere in nnvmpy (a fused group's kernel: fusion/compute.py)
PACKAGE_FOLDER = f"{os.sep}nnvmpy{os.sep}"


def _caller() -> str:
    """The nearest frame in nnvmpy/ops (its file below ops/ and function) that is not a
    shared helper (PASS_THROUGH, unless nothing else is on the stack); else the nearest
    frame elsewhere in nnvmpy (its file below nnvmpy/, e.g. fusion/compute.py), or '?'."""
    frame = sys._getframe(2)
    helper = outside = "?"
    while frame is not None:
        path = frame.f_code.co_filename
        if OPS_FOLDER in path:
            where = f"{path.split(OPS_FOLDER, 1)[1]}:{frame.f_code.co_name}"
            if not where.startswith(PASS_THROUGH):
                return where
            helper = helper if helper != "?" else where
        elif outside == "?" and PACKAGE_FOLDER in path and f"{os.sep}kernel{os.sep}" not in path:
            outside = f"{path.rsplit(PACKAGE_FOLDER, 1)[1]}:{frame.f_code.co_name}"
        frame = frame.f_back
    return helper if helper != "?" else outside


def _kernel_name(dispatcher: Any) -> str:
    fn = getattr(dispatcher, "py_func", None) or getattr(dispatcher, "fn", None)
    return getattr(fn, "__name__", type(dispatcher).__name__)


class KernelTimer:
    """Wraps the launch points while active; `records` holds (name, caller, start event,
    end event, host seconds) per launch."""

    def __init__(self) -> None:
        from numba import cuda

        from nnvmpy.kernel.cuda import simulated

        self.cuda = cuda
        self.timed = not simulated()  # the simulator's events record no time
        self.records: list[tuple[str, str, Any, Any, float]] = []
        self.active = False
        self._inside = threading.local()  # a GEMM's own launches are the GEMM's time
        self._patched: list[tuple[Any, str, Any]] = []

    def _timed(self, name: str, call: Any) -> None:
        if not self.active or getattr(self._inside, "on", False):
            call()
            return
        start, end = self.cuda.event(), self.cuda.event()
        self._inside.on = True
        try:
            t0 = time.perf_counter()
            start.record(0)
            call()
            end.record(0)
            host = time.perf_counter() - t0
        finally:
            self._inside.on = False
        self.records.append((name, _caller(), start, end, host))

    def install(self) -> None:
        from nnvmpy.kernel import cuda as gpu
        from nnvmpy.ops import matrix

        launch = gpu.launch_kernel

        def timed_launch(dispatcher: Any, blocks: int, threads: int, stream: Any, args: Any):
            self._timed(
                _kernel_name(dispatcher), lambda: launch(dispatcher, blocks, threads, stream, args)
            )

        for module in list(sys.modules.values()):  # every `from ... import launch_kernel`
            if getattr(module, "launch_kernel", None) is launch:
                self._patch(module, "launch_kernel", timed_launch)
        gemm_gpu = matrix._gemm_gpu

        def timed_gemm(ctx: Any, out: Any, mode: str, a: Any, ta: bool, b: Any, tb: bool,
                       *rest: Any) -> None:  # fmt: skip
            name = f"gemm {tuple(a.shape)}{'T' * ta} @ {tuple(b.shape)}{'T' * tb}"
            self._timed(name, lambda: gemm_gpu(ctx, out, mode, a, ta, b, tb, *rest))

        self._patch(matrix, "_gemm_gpu", timed_gemm)

    def _patch(self, owner: Any, attr: str, value: Any) -> None:
        self._patched.append((owner, attr, getattr(owner, attr)))
        setattr(owner, attr, value)

    def uninstall(self) -> None:
        for owner, attr, value in reversed(self._patched):
            setattr(owner, attr, value)
        self._patched.clear()

    def table(self, steps: int) -> tuple[list[tuple[str, int, float, float]], float, float]:
        """Rows (kernel [caller], launches per step, device ms per step, host us per
        launch), busiest first; and the device and host sums in ms per step."""
        launches: collections.Counter[str] = collections.Counter()
        device_ms: collections.Counter[str] = collections.Counter()
        host_s: collections.Counter[str] = collections.Counter()
        for name, caller, start, end, host in self.records:
            key = f"{name} [{caller}]"
            launches[key] += 1
            if self.timed:
                end.synchronize()
                device_ms[key] += start.elapsed_time(end)
            host_s[key] += host
        rows = [
            (key, launches[key] // steps, device_ms[key] / steps, host_s[key] / launches[key] * 1e6)
            for key in sorted(launches, key=lambda k: (-device_ms[k], -launches[k], k))
        ]
        host_ms = sum(host_s.values()) / steps * 1e3
        return rows, sum(device_ms.values()) / steps, host_ms


def layer_lines(bench_gpu: Any, smoke: bool, calls: int) -> list[str]:
    """Per row of bench_gpu's elementwise and layers sections: wall us per call (best of
    three rounds of `calls` calls and a wait, as bench_gpu times it), its kernels' device
    us per call and launches per call, then a line per kernel."""
    import nnvmpy as nv

    rows = dict(bench_gpu.elementwise_rows(1000 if smoke else 100_000_000))
    rows.update(bench_gpu.layer_rows(256 if smoke else 1)[0])
    lines = [
        "bench_gpu rows, per call: wall us (dispatch and kernels), device us (kernels alone)",
        f"{'wall us':>10} {'device us':>10} {'launches':>8}  row / kernel [caller]",
    ]
    for name, (run, _) in rows.items():
        wall = bench_gpu.best_s(run, nv.nd.waitall, calls, 3) * 1e6
        timer = KernelTimer()
        timer.install()
        try:
            timer.active = True
            for _ in range(calls):
                run()
            nv.nd.waitall()
            timer.active = False
        finally:
            timer.uninstall()
        kernels, device_ms, _ = timer.table(calls)
        launches = sum(count for _, count, _, _ in kernels)
        lines.append(f"{wall:10.1f} {device_ms * 1e3:10.1f} {launches:8d}  {name}")
        for key, count, ms, _ in kernels:
            lines.append(f"{'':10} {ms * 1e3:10.1f} {count:8d}    {key}")
    return lines


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--size", type=int, default=224)
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--smoke", action="store_true", help="a narrow net (the simulator)")
    parser.add_argument("--out", default=os.environ.get("OUT", "gpu_profile"))
    parser.add_argument(
        "--layers", action="store_true", help="also bench_gpu's elementwise and layers rows"
    )
    args = parser.parse_args(argv)
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import warnings

    import bench_gpu
    import nnvmpy as nv

    warnings.filterwarnings("ignore", "Simulator timings are bogus")
    width, classes = (2, 10) if args.smoke else (64, 1000)
    _, step, source = bench_gpu.resnet_step(args.batch, args.size, width, classes)
    step()  # compiles
    nv.nd.waitall()
    plain_ms = 0.0
    if not args.smoke:  # the simulator's times mean nothing: one step less
        start = time.perf_counter()
        for _ in range(args.steps):
            step()
        nv.nd.waitall()
        plain_ms = (time.perf_counter() - start) / args.steps * 1e3
    timer = KernelTimer()
    timer.install()
    try:
        timer.active = True
        start = time.perf_counter()
        for _ in range(args.steps):
            step()
        nv.nd.waitall()
        measured_ms = (time.perf_counter() - start) / args.steps * 1e3
        timer.active = False
    finally:
        timer.uninstall()
    rows, device_ms, host_ms = timer.table(args.steps)
    lines = [
        f"ResNet-18 training step, batch {args.batch}, 3x{args.size}x{args.size} ({source})",
        f"step: {plain_ms:.1f} ms plain, {measured_ms:.1f} ms with events on every launch",
        f"per step: {sum(r[1] for r in rows)} launches, device {device_ms:.1f} ms, "
        f"launch calls on the host {host_ms:.1f} ms",
    ]
    by_module: dict[str, list[float]] = {}
    for key, count, ms, _ in rows:  # the caller's file: one operator (or its driver)
        module = key.rsplit("[", 1)[-1].rstrip("]").split(":", 1)[0]
        total = by_module.setdefault(module, [0, 0.0])
        total[0] += count
        total[1] += ms
    lines.append(f"by operator file: {'launches':>8} {'device ms':>10} {'share':>6}")
    for module, (count, ms) in sorted(by_module.items(), key=lambda kv: -kv[1][1]):
        share = ms / device_ms if device_ms else 0.0
        lines.append(f"  {module:<32} {int(count):8d} {ms:10.3f} {share:6.1%}")
    lines.append(f"{'launches':>8} {'device ms':>10} {'share':>6} {'host us':>8}  kernel [caller]")
    for key, count, ms, host_us in rows:
        share = ms / device_ms if device_ms else 0.0
        lines.append(f"{count:8d} {ms:10.3f} {share:6.1%} {host_us:8.1f}  {key}")
    if args.layers:
        lines += layer_lines(bench_gpu, args.smoke, 2 if args.smoke else 10)
    text = "\n".join(lines) + "\n"
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "kernels.txt").write_text(text)
    print(text[:6000])


if __name__ == "__main__":
    main()
