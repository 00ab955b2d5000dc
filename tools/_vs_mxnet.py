"""What the benchmarks that compare with MXNet 1.9.1 share: timing, and the MXNet run.

MXNet lives in its own venv (its NumPy is older), so a benchmark runs itself there with
`--worker mxnet` and reads back one JSON object of results; `results_in(venv, script,
args)` does that. `best_of(fn, repeat)` is the best time of `repeat` calls after one
warm-up, in milliseconds.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Callable, Sequence
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
