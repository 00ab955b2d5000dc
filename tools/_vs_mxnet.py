"""What the benchmarks that compare with MXNet 1.9.1 share: timing, and the MXNet run.

MXNet lives in its own venv (its NumPy is older), so a benchmark runs itself there with
`--worker mxnet` and reads back one JSON object of results; `results_in(venv, script,
args)` does that. `best_of(fn, repeat)` is the best time of `repeat` calls after one
warm-up, in milliseconds. Benchmarks that run a script text per side (nnvmpy, MXNet, a
baseline source tree) find each side's python with `side_python` and run it with
`run_side`.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any


def best_of(fn: Callable[[], Any], repeat: int, warmup: int = 1) -> float:
    """The shortest of `repeat` timed calls of fn, after `warmup` untimed ones (ms)."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times) * 1e3


def results_in(venv: str, script: str, args: Sequence[str]) -> dict[str, Any]:
    """`script --worker mxnet *args` run by the venv's Python: the JSON object its last
    line of output holds."""
    python = os.path.join(venv, "bin", "python")
    cmd = [python, script, "--worker", "mxnet", *args]
    done = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


REPO = Path(__file__).resolve().parents[1]


def side_python(path: str | None, default: str, module: str) -> str | None:
    """The python of a venv (or the interpreter) at `path`, else at REPO/`default`, that
    imports `module`; None when there is none."""
    for c in [Path(path)] if path else [REPO / default]:
        for py in (c, c / "bin" / "python"):
            if py.is_file() and os.access(py, os.X_OK):
                probe = subprocess.run([str(py), "-c", f"import {module}"], capture_output=True)
                if probe.returncode == 0:
                    return str(py)
    return None


def run_side(python: str, script: str, args: Sequence[str], path: str | None = None) -> str:
    """The last line `python -c script *args` prints (with `path` first on PYTHONPATH:
    another nnvmpy source tree); SystemExit with its error output when it fails."""
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    if path:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [path, env.get("PYTHONPATH")]))
    out = subprocess.run(
        [python, "-c", script, *args], capture_output=True, text=True, env=env, check=False
    )
    if out.returncode:
        raise SystemExit(f"a benchmark side failed ({python}):\n{out.stderr[-2000:]}")
    return out.stdout.strip().splitlines()[-1]
