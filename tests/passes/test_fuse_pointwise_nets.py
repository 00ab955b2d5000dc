"""tools/bench_nets.py's networks give the same outputs, updates and memory plan with fusion.

The cheap cases run here (ResNet-18 at batch 1 has residual add+relu groups); the
batch-32 ResNet cases take minutes on a small machine and are checked the same way by
`python tools/bench_fusion.py --nets`.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parents[2] / "tools"))
import bench_nets as bn
from nnvmpy import threads

CHEAP = [c for c in bn.CASES if c.name in ("mlp-train", "lenet-train", "resnet18-infer1")]


@pytest.fixture
def fixed_width(monkeypatch: pytest.MonkeyPatch) -> Any:
    """One thread width for both runs: the load governor narrows the teams while other
    processes (a second xdist worker) hold a core, and a different width means other
    reduction splits and possibly another measured convolution algorithm, so last-bit
    differences that have nothing to do with fusion."""
    monkeypatch.setenv("NNVMPY_THREADS_ADAPT", "0")  # read per governor sample
    saved = threads.width()
    threads.set_width(1)
    yield
    threads.set_width(saved)


def _run(case: Any, monkeypatch: pytest.MonkeyPatch, fusion: str) -> tuple[Any, ...]:
    assert threads.width() == 1
    monkeypatch.setenv("NNVMPY_FUSION", fusion)
    # FusePointwise alone: at inference FuseEpilogue would take the add+relu pairs first
    monkeypatch.setenv("NNVMPY_SIMPLIFY_INFERENCE", "0")
    monkeypatch.setenv("NNVMPY_FUSE_EPILOGUE", "0")
    path = bn.models_dir() / f"{case.model}-symbol.json"
    exe = bn.bind_nnvmpy(path, case)
    step = bn.nnvmpy_step(exe, case, bn.weights_for(path, case))
    outs = [step().asnumpy() for _ in range(2 if case.train else 1)]
    params = {n: a.asnumpy() for n, a in exe.arg_dict.items()}
    return outs, params, exe.storage_bytes, exe._fused_groups


@pytest.mark.parametrize("case", CHEAP, ids=[c.name for c in CHEAP])
def test_network_is_the_same_with_and_without_fusion(
    case: Any, monkeypatch: pytest.MonkeyPatch, fixed_width: Any
) -> None:
    if not (Path(__file__).parents[3] / "shared" / "models").is_dir():
        pytest.skip("no ../shared/models")
    outs, params, storage, groups = _run(case, monkeypatch, "1")
    ref_outs, ref_params, ref_storage, ref_groups = _run(case, monkeypatch, "0")
    assert ref_groups == {}
    if case.model.startswith("resnet"):
        assert groups  # the residual adds fuse with their relu
    for a, b in zip(outs, ref_outs):
        np.testing.assert_array_equal(a, b)
    for name, value in params.items():
        np.testing.assert_array_equal(value, ref_params[name])
    assert storage <= ref_storage
