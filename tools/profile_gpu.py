"""Where a GPU op's host time goes, on hardware: stacks sampled in every thread (issue 16).

    python3 tools/profile_gpu.py [--ops N] [--steps N] [--out DIR] [--only matrix]

bench_gpu.py measures the dispatch of `x = x + 1` (target 20 us) and a ResNet-18 training
step (target 2x PyTorch eager); tools/bench_gpu_launch_host.py measures the dispatch with
the driver faked. This runs both on a real GPU while a thread samples every other
thread's stack each SAMPLE_S (sys._current_frames: any Python, any thread, where
cProfile's hooks are per thread before 3.12 and one process-wide tool after), and writes
per thread kind (main, engine workers, others) the functions seen running (self) and on
the stack (inclusive), to DIR (default $OUT or ./gpu_profile): dispatch.txt,
resnet.txt. Each file opens with the wall time per op or step, sampled and not.
`--only matrix` profiles the dispatch once per engine and launch setting (VARIANTS),
each in a process of its own, into one file: matrix.txt.

Read the shares with care: the sampler needs the GIL, so a thread running Python is
seen where it next lets the GIL go, mostly in C calls (a launch, an event query, a
cudaMalloc). A large share in such a call says the thread spends its time up to there,
not necessarily in it; the matrix's times per op, taken without the sampler too, are
the measure.
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import sys
import threading
import time
from pathlib import Path
from typing import Any

SAMPLE_S = 0.0005


def _where(frame: Any) -> str:
    code = frame.f_code
    return f"{Path(code.co_filename).name}:{code.co_firstlineno} {code.co_name}"


class Sampler:
    """Counts, per thread kind, each sample's running function and every function on
    its stack (once per sample)."""

    def __init__(self) -> None:
        self.own: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
        self.inclusive: dict[str, collections.Counter] = collections.defaultdict(
            collections.Counter
        )
        self.samples: collections.Counter = collections.Counter()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Sampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        me = threading.get_ident()
        main = threading.main_thread().ident
        while not self._stop.wait(SAMPLE_S):
            names = {t.ident: t.name for t in threading.enumerate()}
            for ident, frame in sys._current_frames().items():
                if ident == me:
                    continue
                name = names.get(ident, "?")
                # nnvmpy-<pool>-<i>: the engine's workers, one kind per pool (the
                # completion threads, nnvmpy-gpu<d>-events, apart)
                kind = "main" if ident == main else re.sub(r"-\d+$", "", name)
                self.samples[kind] += 1
                self.own[kind][_where(frame)] += 1
                seen = set()
                while frame is not None:
                    seen.add(_where(frame))
                    frame = frame.f_back
                for w in seen:
                    self.inclusive[kind][w] += 1

    def report(self, top: int = 40) -> str:
        lines = []
        for kind in sorted(self.samples, key=lambda k: -self.samples[k]):
            n = self.samples[kind]
            for title, table in (("self", self.own), ("inclusive", self.inclusive)):
                lines.append(f"\n==== {kind}: {title}, % of {n} samples")
                for where, count in table[kind].most_common(top):
                    lines.append(f"{100 * count / n:6.1f}%  {where}")
        return "\n".join(lines)


def _sampled(path: Path, title: str, run: Any, per: int, unit: str, scale: float) -> None:
    start = time.perf_counter()
    run()
    plain = (time.perf_counter() - start) / per * scale
    with Sampler() as sampler:
        start = time.perf_counter()
        run()
        sampled = (time.perf_counter() - start) / per * scale
    text = f"{title}: {plain:.1f} {unit}, {sampled:.1f} {unit} sampled\n{sampler.report()}\n"
    path.write_text(text)
    print(text[:5000])


def profile_dispatch(out: Path, n_ops: int) -> None:
    import nnvmpy as nv

    x = nv.nd.ones((16,), ctx=nv.gpu(0))
    for _ in range(50):  # compiles, and each worker's first launch
        x = x + 1
    nv.nd.waitall()

    def ops() -> None:
        nonlocal x
        for _ in range(n_ops):
            x = x + 1
        nv.nd.waitall()

    _sampled(out / "dispatch.txt", f"x = x + 1, {n_ops} ops", ops, n_ops, "us/op", 1e6)


def profile_resnet(out: Path, steps: int) -> None:
    import bench_gpu
    import nnvmpy as nv

    _, step, _ = bench_gpu.resnet_step(64, 224, 64, 1000)
    step()  # compiles
    nv.nd.waitall()

    def run() -> None:
        for _ in range(steps):
            step()
        nv.nd.waitall()

    _sampled(out / "resnet.txt", "ResNet-18 batch 64 step", run, steps, "ms", 1e3)


# --matrix: the dispatch under each of these settings, each in a process of its own
VARIANTS: dict[str, dict[str, str]] = {
    "default": {},
    "one GPU worker": {"NNVMPY_GPU_WORKER_NTHREADS": "1"},
    "default stream, completion at launch": {"NNVMPY_GPU_STREAMS": "0"},
    "stream-ordered completion (fences)": {"NNVMPY_GPU_STREAM_ORDER": "1"},
    "numba-cuda launches": {"NNVMPY_GPU_FAST_LAUNCH": "0"},
    "no CuPy layer": {"NNVMPY_CUPY": "0"},
    "NaiveEngine (all in the pushing thread)": {"NNVMPY_ENGINE_TYPE": "NaiveEngine"},
}


def profile_matrix(out: Path, n_ops: int) -> None:
    """Each VARIANTS entry's dispatch profile, its time and each thread's busiest own
    frames, in one file (matrix.txt): the device tool returns at most 8 files."""
    import subprocess
    import tempfile

    lines = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, env in VARIANTS.items():
            folder = Path(tmp) / str(len(lines))
            cmd = [sys.executable, __file__, "--only", "dispatch", "--ops", str(n_ops)]
            done = subprocess.run(
                [*cmd, "--out", str(folder)], env={**os.environ, **env},
                capture_output=True, text=True, timeout=300, check=False,
            )  # fmt: skip
            lines.append(f"## {name} {env or ''}")
            report = folder / "dispatch.txt"
            if done.returncode or not report.exists():
                lines.append(f"failed ({done.returncode}): {done.stderr[-1500:]}")
                continue
            kept = 0
            for line in report.read_text().splitlines():
                if line.startswith("====") or not line.strip():
                    kept = 6 if ": self" in line else 0
                    if kept:
                        lines.append(line)
                elif kept or line.startswith("x = x"):
                    lines.append(line)
                    kept -= 1
    text = "\n".join(lines) + "\n"
    (out / "matrix.txt").write_text(text)
    print(text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, default=3000)
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--only", default="dispatch,resnet", help="or matrix (see VARIANTS)")
    parser.add_argument("--out", default=os.environ.get("OUT", "gpu_profile"))
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    if "dispatch" in args.only:
        profile_dispatch(out, args.ops)
    if "resnet" in args.only:
        profile_resnet(out, args.steps)
    if "matrix" in args.only:
        profile_matrix(out, args.ops)


if __name__ == "__main__":
    main()
