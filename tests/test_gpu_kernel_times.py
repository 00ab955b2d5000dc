"""tools/gpu_kernel_times.py times every kernel of a ResNet-18 step on a GPU; here, on the
simulator, it must run end to end, count the launches by kernel and operator, and leave
the launch points as they were (a hardware session's profile must not fail on a typo)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = [pytest.mark.gpu, pytest.mark.timeout(600)]


@pytest.mark.slow
def test_resnet_step_kernels_are_counted_per_kernel_and_operator(tmp_path: Path) -> None:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    proc = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "gpu_kernel_times.py"), "--smoke", "--batch",
         "1", "--size", "8", "--steps", "1", "--out", str(tmp_path)],
        capture_output=True, text=True, timeout=580, env=env, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    text = (tmp_path / "kernels.txt").read_text()
    launches = int(re.search(r"per step: (\d+) launches", text).group(1))
    rows = re.findall(r"^\s*(\d+)\s+[-\d.]+\s+[\d.]+%\s+[\d.]+\s+(.+)$", text, re.M)
    assert sum(int(count) for count, _ in rows) == launches
    kernels = {key for _, key in rows}
    # ResNet-18 has 20 BatchNorm layers: a statistics launch each way, forward and backward,
    # whose last blocks finish the channels (no finish kernel in training)
    bn_sums = [int(c) for c, key in rows if key.startswith("_bn_sums_")]
    assert sum(bn_sums) == 40
    assert not [key for _, key in rows if "_finish_cuda" in key]
    assert any("nn/convolution.py" in key or "_conv_cuda.py" in key for key in kernels)
    assert any(key.startswith("gemm ") for key in kernels)  # the classifier's GEMMs
    # SGD with momentum, ResNet-18's 62 parameters in one multi_sgd_mom_update: 16 a launch
    assert sum(int(c) for c, key in rows if "optimizer" in key) == 4


def test_layer_rows_get_wall_and_device_columns_per_kernel(monkeypatch: pytest.MonkeyPatch) -> None:
    # --layers times bench_gpu's rows; two cheap ones here (test_bench_gpu runs them all)
    sys.path.insert(0, str(ROOT / "tools"))
    import bench_gpu
    import gpu_kernel_times
    import nnvmpy as nv

    x = nv.nd.ones((64,), ctx=nv.gpu(0))
    rows = {"relu": (lambda: nv.nd.relu(x), 512), "sum": (lambda: nv.nd.sum(x), 256)}
    monkeypatch.setattr(bench_gpu, "elementwise_rows", lambda n: {"relu": rows["relu"]})
    monkeypatch.setattr(bench_gpu, "layer_rows", lambda scale: ({"sum": rows["sum"]}, None))
    lines = gpu_kernel_times.layer_lines(bench_gpu, smoke=True, calls=2)
    table = {line.split()[-1]: line.split() for line in lines[2:] if "[" not in line}
    assert set(table) == {"relu", "sum"}
    assert all(int(cols[2]) == 1 for cols in table.values())  # one launch per call each
    kernels = [line for line in lines[2:] if "[" in line]
    assert len(kernels) == 2, lines
    assert any("_reduce_" in line for line in kernels), lines
