"""Fused kernels are cached on disk by structure: a second process compiles nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = r"""
import json, time
import numpy as np
import nnvmpy as nv
from nnvmpy import sym

x, y = sym.var("x"), sym.var("y")
s = sym.tanh(sym.exp(x) * y + {c}) * x                  # the constant is a parameter
X = np.linspace(-1, 1, 12).reshape(3, 4)
args = {{"x": nv.nd.array(X, dtype="float64"), "y": nv.nd.ones((3, 4), dtype="float64")}}
exe = s.bind(nv.cpu(), args)
t = time.perf_counter()
out = exe.forward()[0].asnumpy()
elapsed = time.perf_counter() - t
nodes = exe._graph.indexed.nodes
fused = [n.attrs.parsed for n in nodes if n.op is not None and n.op.name == "_FusedOp"]
stats = [fn.stats for spec in fused for fn in spec.launchers.values()]
print(json.dumps({{
    "err": float(np.abs(out - np.tanh(np.exp(X) + {c}) * X).max()),
    "hits": sum(len(s.cache_hits) for s in stats),
    "misses": sum(len(s.cache_misses) for s in stats),
    "kernels": len(stats),
    "seconds": elapsed,
}}))
"""


def _run(cache: Path, c: float) -> dict:
    env = {**os.environ, "NNVMPY_FUSION_CACHE_DIR": str(cache), "NNVMPY_FUSION": "1"}
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT.format(c=c)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_second_process_loads_the_kernel_from_disk(tmp_path: Path) -> None:
    first = _run(tmp_path, 1.0)
    assert first["kernels"] == 1
    assert first["misses"] == 1  # compiled and written
    assert first["hits"] == 0
    assert first["err"] < 1e-12
    assert list(tmp_path.glob("fused_cpu_*.py"))
    second = _run(tmp_path, 2.5)  # another parameter value: the same kernel
    assert second["misses"] == 0
    assert second["hits"] == 1
    assert second["err"] < 1e-12
    assert second["seconds"] < first["seconds"]


def test_an_empty_cache_dir_compiles_in_memory(tmp_path: Path) -> None:
    env = {**os.environ, "NNVMPY_FUSION_CACHE_DIR": ""}
    code = "from nnvmpy.fusion import codegen; print(codegen.cache_dir())"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    assert done.stdout.strip() == "None"
