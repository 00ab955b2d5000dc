"""tools/gpu_compile_check.py: kernels compiled for a real GPU's target, without a GPU.

Needs NVVM and NVRTC (`pip install nvidia-nvvm nvidia-cuda-nvrtc`) and numba-cuda;
skipped where they are missing (CI). Each run is a subprocess: the tool fakes the CUDA
driver for the whole process.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TOOL = ROOT / "tools" / "gpu_compile_check.py"

pytestmark = pytest.mark.slow


def _nvvm_found() -> bool:
    probe = "from cuda.pathfinder import load_nvidia_dynamic_lib as l; l('nvvm'); l('nvrtc')"
    try:
        return subprocess.run([sys.executable, "-c", probe], capture_output=True).returncode == 0
    except OSError:
        return False


needs_nvvm = pytest.mark.skipif(not _nvvm_found(), reason="NVVM/NVRTC not installed")


def _check(*pytest_args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    return subprocess.run(
        [sys.executable, str(TOOL), *pytest_args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


@needs_nvvm
def test_a_kernel_cuda_cannot_compile_is_reported_though_the_simulator_runs_it(
    tmp_path: Path,
) -> None:
    test_file = tmp_path / "test_kernels.py"
    test_file.write_text(
        textwrap.dedent(
            """
            import numpy as np
            import pytest
            import nnvmpy as nv
            import nnvmpy.kernel as K
            from numba import cuda

            pytestmark = pytest.mark.gpu

            @K.elementwise
            def doubled(x):
                return x * 2

            @K.elementwise
            def rounded_text(x):
                return float(int(x).bit_length())  # a Python int method: the simulator's only

            def _scaled_by(factor):
                table = (factor,)  # not plain data: no stable disk-cache key

                def scaled(out, x):
                    i = cuda.grid(1)
                    if i < out.size:
                        out[i] = x[i] * table[0]

                return K.cuda_kernel(scaled)

            scaled = _scaled_by(3.0)

            def test_launches():
                x = nv.nd.array(np.arange(4, dtype=np.float32), ctx=nv.gpu(0))
                doubled.launch(nv.gpu(0), x._data, "write", x._data)
                scaled.launch(nv.gpu(0), 4, x._data, x._data)
                rounded_text.launch(nv.gpu(0), x._data, "write", x._data)  # fails: the last
            """
        )
    )
    done = _check("-m", "gpu", str(test_file), "--rootdir", str(tmp_path))
    assert "3 signatures of 3 kernels, 1 failed" in done.stdout, done.stdout + done.stderr
    assert "kernels with no disk cache (compiled in every process): 1\n" in done.stdout
    assert "NOT CACHED test_kernels._scaled_by.<locals>.scaled\n" in done.stdout
    assert "FAILED <nnvmpy.kernel.cuda loop write A>[test_kernels.rounded_text].loop" in done.stdout
    assert "TypingError" in done.stdout
    assert "first reached by" in done.stdout
    assert done.returncode == 1
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")  # while the simulator runs it fine
    simulated = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(test_file)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert simulated.returncode == 0, simulated.stdout + simulated.stderr


@needs_nvvm
def test_the_planned_launch_tests_compile_for_sm_90() -> None:
    done = _check("-m", "gpu", "tests/kernel/test_gpu_plain_launcher.py")
    assert done.returncode == 0, done.stdout + done.stderr
    assert ", 0 failed" in done.stdout
    count = int(done.stdout.split("without a GPU: ")[1].split(" signatures")[0])
    assert count >= 20


@needs_nvvm
def test_every_numpy_stand_in_compiles_for_sm_90(tmp_path: Path) -> None:
    """kernel/_gpu_numpy's bodies, called as np.<name> from element-wise kernels in
    float32 and float64, compile on the CUDA target (numba-cuda lacks these ufuncs)."""
    from nnvmpy.kernel import _gpu_numpy

    binary = {"add", "subtract", "multiply", "power", "float_power", "copysign", "fmod"}
    binary |= {"remainder", "mod", "floor_divide", "logaddexp", "logaddexp2", "ldexp"}
    lines = [
        "import numpy as np",
        "import pytest",
        "import nnvmpy as nv",
        "import nnvmpy.kernel as K",
    ]
    lines += ["pytestmark = pytest.mark.gpu", "KERNELS = []"]
    for name in sorted(_gpu_numpy.OVERRIDDEN):
        args = "x, y" if name in binary else "x"
        lines += ["@K.elementwise", f"def k_{name}(x, y):", f"    return np.{name}({args})"]
        lines += [f"KERNELS.append(k_{name})"]
    lines += [
        "@pytest.mark.parametrize('dtype', [np.float32, np.float64])",
        "def test_launches(dtype):",
        "    x = nv.nd.array(np.arange(1, 5, dtype=dtype), ctx=nv.gpu(0), dtype=dtype)",
        "    for k in KERNELS:",
        "        k.launch(nv.gpu(0), x._data, 'write', x._data, x._data)",
    ]
    test_file = tmp_path / "test_stand_ins.py"
    test_file.write_text("\n".join(lines) + "\n")
    done = _check("-m", "gpu", str(test_file), "--rootdir", str(tmp_path))
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"{2 * len(_gpu_numpy.OVERRIDDEN)} signatures" in done.stdout, done.stdout
