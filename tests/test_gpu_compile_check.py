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


_GPU_TEST_HEADER = """
import numpy as np
import pytest
import nnvmpy as nv
import nnvmpy.kernel as K

pytestmark = pytest.mark.gpu
"""


def _gpu_test_file(path: Path, body: str) -> Path:
    """A gpu-marked test file: the common imports, then `body` (dedented)."""
    path.write_text(_GPU_TEST_HEADER + textwrap.dedent(body))
    return path


@needs_nvvm
def test_a_kernel_cuda_cannot_compile_is_reported_though_the_simulator_runs_it(
    tmp_path: Path,
) -> None:
    test_file = _gpu_test_file(
        tmp_path / "test_kernels.py",
        """
            from numba import cuda

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
            """,
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


def _tool_module() -> object:
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import gpu_compile_check
    finally:
        sys.path.remove(str(ROOT / "tools"))
    return gpu_compile_check


def test_ptx_stats_count_double_precision_math_not_64_bit_moves() -> None:
    tool = _tool_module()
    ptx = textwrap.dedent(
        """
        .visible .entry k(.param .u64 k_param_0) {
            ld.global.f32   %f1, [%rd1];
            cvt.f64.f32     %fd1, %f1;
            mul.f64         %fd2, %fd1, 0d3FE0000000000000;
            fma.rn.f64      %fd3, %fd2, %fd2, %fd1;
            setp.lt.f64     %p1, %fd3, %fd1;
            cvt.rn.f32.f64  %f2, %fd3;
            mov.f64         %fd4, %fd3;
            ld.global.f64   %fd5, [%rd2];
            st.global.f32   [%rd1], %f2;
            add.f32         %f3, %f2, %f1;
        }
        """
    )
    stats = tool.ptx_stats(ptx)  # type: ignore[attr-defined]
    # cvt.f64.f32, mul, fma, setp and cvt.rn.f32.f64; not the mov or the load of a double
    assert stats["f64"] == 5
    assert stats["instructions"] == 10


def test_float32_in_f64_lists_float32_signatures_with_double_math_only() -> None:
    tool = _tool_module()
    compiled = {
        ("a", "int64, array(float32, 1d, C), float64"): {"ptx": {"f64": 7, "instructions": 90}},
        ("b", "array(float32, 1d, C), array(int32, 1d, C)"): {
            "ptx": {"f64": 30, "instructions": 200}
        },
        ("c", "array(float32, 1d, C)"): {"ptx": {"f64": 0, "instructions": 50}},
        ("d", "array(float64, 1d, C), array(float32, 1d, C)"): {
            "ptx": {"f64": 40, "instructions": 80}
        },
        ("e", "array(float16, 1d, C)"): {"ptx": {"f64": 9, "instructions": 80}},
    }
    rows = tool.float32_in_f64(compiled)  # type: ignore[attr-defined]
    assert [r[2] for r in rows] == ["b", "a"]  # most f64 first; c has none; d, e not float32


@needs_nvvm
def test_f64_lists_a_float32_kernel_a_python_float_promotes(tmp_path: Path) -> None:
    test_file = _gpu_test_file(
        tmp_path / "test_promoted.py",
        """
            import math

            @K.elementwise
            def halved_in_f64(x):
                return x * 0.5 + math.exp(x)  # float64 constant and libm exp: f64 math

            @K.elementwise
            def plain_sum(x, y):
                return x + y  # stays float32

            def test_launches():
                x = nv.nd.array(np.ones(64, np.float32), ctx=nv.gpu())
                halved_in_f64.launch(None, x._data, "write", x._data)
                plain_sum.launch(None, x._data, "write", x._data, x._data)
            """,
    )
    done = _check("--f64", "-m", "gpu", str(test_file))
    assert done.returncode == 0, done.stdout + done.stderr
    listed = done.stdout.split("computing in double precision:")[1]
    assert "halved_in_f64" in listed
    assert "plain_sum" not in listed
