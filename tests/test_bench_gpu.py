"""tools/bench_gpu.py --smoke runs every section end to end (on the simulator in CI, where
the CuPy rows are skipped; on a GPU with them), so the hardware session's benchmark does
not fail on a typo."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = [pytest.mark.gpu, pytest.mark.slow, pytest.mark.timeout(900)]


def test_bench_gpu_smoke_runs_every_section(tmp_path: Path) -> None:
    from nnvmpy.kernel import gpu_lib

    out = tmp_path / "bench.json"
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    proc = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "bench_gpu.py"), "--smoke", "--json", str(out)],
        capture_output=True, text=True, timeout=850, env=env, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    results = json.loads(out.read_text())
    keys = ["elemwise_add_GBps", "relu_GBps", "nnvmpy_dot_TFLOPs", "numba_tiled_TFLOPs",
            "resnet18_ms", "dispatch_async_us", "dispatch_roundtrip_us",
            "dispatch_async_fast_us", "dispatch_roundtrip_fast_us",
            "layer_BatchNorm_fwd+bwd_GBps", "layer_BatchNorm+relu_fwd+bwd_GBps",
            "layer_softmax_fwd+bwd_GBps",
            "layer_LayerNorm_fwd_GBps", "layer_sum(axis=0)_GBps"]  # fmt: skip
    if gpu_lib.available():
        keys += ["copy_GBps", "cupy_matmul_TFLOPs"]
    else:
        assert "CuPy rows skipped" in proc.stdout
    for key in keys:
        assert math.isfinite(results[key]), (key, results)
        assert results[key] > 0, (key, results)


@pytest.mark.skipif(
    os.environ.get("NUMBA_ENABLE_CUDASIM") != "1", reason="bench_gpu_host runs on the simulator"
)
def test_bench_gpu_host_prints_every_row() -> None:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    proc = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "bench_gpu_host.py"), "--ops", "300",
         "--rounds", "1"],
        capture_output=True, text=True, timeout=600, env=env, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    for row in ("async, process CPU", "pushing thread CPU", "engine worker alone", "per op:",
                "bound graph, per node"):  # fmt: skip
        assert row in proc.stdout, proc.stdout
