"""GPU kernels cached on disk (kernel/disk_cache.py), with the CUDA driver faked.

The three GPU builders (element-wise loops, parallel_for loops, hand-written kernels)
make dispatchers only on numba-cuda's real target, so each test runs a script in a
subprocess under tools/gpu_compile_check.py's fake driver (compute capability 9.0), over
kernels in a temp module, with NUMBA_CACHE_DIR in a temp dir. Keys need numba-cuda only;
compiling needs NVVM and NVRTC, and those tests are skipped where they are missing, as
tests/test_gpu_compile_check.py's are.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
TOOLS = ROOT / "tools"

needs_numba_cuda = pytest.mark.skipif(
    importlib.util.find_spec("numba_cuda") is None, reason="numba-cuda not installed"
)


def _nvvm_found() -> bool:
    probe = "from cuda.pathfinder import load_nvidia_dynamic_lib as l; l('nvvm'); l('nvrtc')"
    try:
        return subprocess.run([sys.executable, "-c", probe], capture_output=True).returncode == 0
    except OSError:
        return False


needs_nvvm = pytest.mark.skipif(
    importlib.util.find_spec("numba_cuda") is None or not _nvvm_found(),
    reason="numba-cuda, NVVM or NVRTC not installed",
)

_HELPER = """
import nnvmpy.kernel as K

@K.device_function
def bump(v):
    return v + {offset}
"""
_KERNELS = """
from numba import cuda
import nnvmpy.kernel as K
from cached_helper import bump

@K.elementwise
def scaled(x, k):
    return bump(k * x)

@K.parallel_for
def bumped(i, out, x):
    out[i] = bump(x[i])

@K.cuda_kernel
def doubled(out, x):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = bump(x[i]) * 2.0
"""
_PRELUDE = """
import json, sys
sys.path[:0] = [sys.argv[1], sys.argv[2]]
import gpu_compile_check
records = []
gpu_compile_check.install(records)
import numpy as np
import nnvmpy as nv
from nnvmpy.kernel import cuda as gpu
import cached_kernels as m
gpu.get_cuda("test")
"""
_KEYS = """
def key(dispatcher):
    return repr(getattr(dispatcher._cache, "key", None))

keys = {
    f"scaled {mode} {pattern} {more}": key(gpu.build_loop(m.scaled, mode, pattern, *more))
    for mode, pattern, *more in [
        ("write", "AF", None, False),
        ("write", "AS", None, False),
        ("write", "AA", None, False),
        ("add", "AF", np.float32, False),
        ("add", "AF", np.int32, False),
        ("write", "HF", None, True),
    ]
}
keys["bumped 2"] = key(m.bumped._loop(("gpu", 2)))
keys["bumped 3"] = key(m.bumped._loop(("gpu", 3)))
keys["doubled"] = key(m.doubled.dispatcher)
print(json.dumps(keys))
"""
_LAUNCH = """
if sys.argv[3] == "loads-only":  # any compile now fails: every kernel must come from disk
    from numba.cuda import dispatcher

    def compiled(self, *args, **kwargs):
        raise RuntimeError(f"compiled {args[0].__qualname__}")

    dispatcher._Kernel.__init__ = compiled
ctx = nv.gpu(0)
x = gpu.cuda.to_device(np.arange(8, dtype=np.float32))
out = gpu.cuda.device_array(8, np.float32)
m.scaled.launch(ctx, out, "write", x, 3.0)
m.bumped.launch(ctx, 8, out, x)
m.doubled.launch(ctx, 8, out, x)
a = nv.nd.array(np.ones((4, 4), np.float32), ctx=ctx)  # kernels of nnvmpy's own ops
for y in (nv.nd.relu(a), nv.nd.concat(a, a, dim=0), nv.nd.sum(a, axis=1)):
    y.wait_to_read()
ours = [m.scaled._variants[("gpu", "write", "AF")], m.bumped._loops[("gpu", 2)]]
ours.append(m.doubled.dispatcher)
print(json.dumps({
    "hits": [sum(d.stats.cache_hits.values()) for d in ours],
    "misses": [sum(d.stats.cache_misses.values()) for d in ours],
    "records": len(records),
    "errors": [r for r in records if r["error"]],
}))
"""


def _run(tmp_path: Path, script: str, *args: str, **env: str) -> dict[str, Any]:
    """The JSON the script prints last, run with the fake driver over tmp_path's modules."""
    environ = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    environ.update(NUMBA_CACHE_DIR=str(tmp_path / "cache"), NNVMPY_CUPY="0", **env)
    done = subprocess.run(
        [sys.executable, "-c", _PRELUDE + script, str(TOOLS), str(tmp_path / "src"), *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=environ,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def _write_modules(tmp_path: Path, offset: str = "1.0") -> None:
    src = tmp_path / "src"
    src.mkdir(exist_ok=True)
    (src / "cached_kernels.py").write_text(_KERNELS)
    (src / "cached_helper.py").write_text(_HELPER.format(offset=offset))


@needs_numba_cuda
def test_keys_are_stable_across_processes_and_follow_an_edit_to_a_callee(tmp_path):
    _write_modules(tmp_path)
    first = _run(tmp_path, _KEYS)
    assert "None" not in first.values(), first
    assert len(set(first.values())) == len(first)  # every variant is its own entry
    assert _run(tmp_path, _KEYS) == first  # another process: the same keys

    _write_modules(tmp_path, offset="50.0")  # only the device function's file changes
    edited = _run(tmp_path, _KEYS)
    assert all(edited[name] != first[name] for name in first), edited


@needs_numba_cuda
def test_the_knob_turns_the_cache_off(tmp_path):
    _write_modules(tmp_path)
    keys = _run(tmp_path, _KEYS, NNVMPY_GPU_DISK_CACHE="0")
    assert set(keys.values()) == {"None"}


@needs_nvvm
@pytest.mark.slow
def test_a_second_process_loads_every_kernel_from_disk(tmp_path):
    _write_modules(tmp_path)
    first = _run(tmp_path, _LAUNCH, "compiles")
    assert first["errors"] == [], first
    assert first["records"] >= 6
    assert (first["hits"], first["misses"]) == ([0, 0, 0], [1, 1, 1])
    assert list((tmp_path / "cache").rglob("*.nbc")), "nothing was saved"

    second = _run(tmp_path, _LAUNCH, "loads-only")  # compiling raises in this process
    assert second["errors"] == [], second
    assert second["records"] == first["records"]
    assert (second["hits"], second["misses"]) == ([1, 1, 1], [0, 0, 0])

    _write_modules(tmp_path, offset="50.0")  # an edited callee: compiled again
    third = _run(tmp_path, _LAUNCH, "compiles")
    assert third["errors"] == [], third
    assert third["hits"] == [0, 0, 0]


@needs_nvvm
@pytest.mark.slow
def test_the_knob_off_compiles_every_time(tmp_path):
    _write_modules(tmp_path)
    for _ in range(2):
        run = _run(tmp_path, _LAUNCH, "compiles", NNVMPY_GPU_DISK_CACHE="0")
        assert (run["hits"], run["misses"]) == ([0, 0, 0], [1, 1, 1])
    assert not list((tmp_path / "cache").rglob("cached_kernels.*"))  # nothing saved


@needs_nvvm
@pytest.mark.slow
def test_the_compile_check_reports_kernels_loaded_from_disk(tmp_path):
    tests = tmp_path / "test_cached_launches.py"
    tests.write_text(
        textwrap.dedent(
            """
            import numpy as np
            import pytest
            import nnvmpy as nv

            pytestmark = pytest.mark.gpu

            def test_launches():
                a = nv.nd.array(np.ones((4, 4), np.float32), ctx=nv.gpu(0))
                for y in (nv.nd.relu(a), nv.nd.concat(a, a, dim=0), nv.nd.sum(a, axis=1)):
                    y.wait_to_read()
            """
        )
    )
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    env["NUMBA_CACHE_DIR"] = str(tmp_path / "cache")

    def check() -> str:
        done = subprocess.run(
            [sys.executable, str(TOOLS / "gpu_compile_check.py"), "-m", "gpu", str(tests)],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout

    assert ", 0 failed (0 loaded from the disk cache)" in check()
    warm = check()
    count = warm.split("without a GPU: ")[1].split(" signatures")[0]
    assert f", 0 failed ({count} loaded from the disk cache)" in warm, warm
