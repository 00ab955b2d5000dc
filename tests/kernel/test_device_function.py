"""kernel.device_function / kernel.parallel_for: one body, CPU (numba) and GPU (numba.cuda).

References are NumPy formulas; GPU tests run on a GPU or numba's simulator
(NUMBA_ENABLE_CUDASIM=1 set before the run).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import device_kernels as dk
import numpy as np
import pytest

import nnvmpy.kernel as K
from nnvmpy.base import Context, NNVMError, cpu, gpu
from nnvmpy.kernel.device import SERIAL_CUTOFF
from nnvmpy.resource import OpContext

HERE = Path(__file__).parent
SRC = HERE.parents[1] / "src"


def _poly_ref(x: np.ndarray, a: float, b: float) -> np.ndarray:
    x64 = x.astype(np.float64)
    return a * x64 * x64 + b * x64


# ---------------------------------------------------------------- plain Python
def test_calling_from_python_runs_the_python_function():
    assert dk.square(3.0) == 9.0
    assert dk.poly(2.0, 3.0, -1.0) == 3.0 * 4.0 - 2.0
    out = np.zeros(3)
    dk.poly_map(1, out, np.array([0.0, 2.0, 0.0]), 1.0, 1.0)  # the body for item 1
    assert out.tolist() == [0.0, 6.0, 0.0]


def test_decorating_imports_no_numba_and_compiles_nothing():
    code = textwrap.dedent(
        """
        import sys
        import nnvmpy.kernel as K

        @K.device_function
        def f(x):
            return x + 1

        @K.parallel_for
        def body(i, out, x):
            out[i] = f(x[i])

        assert "numba" not in sys.modules, "numba imported at decoration"
        assert body._loops == {} and f._builds == {}
        """
    )
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    subprocess.run([sys.executable, "-c", code], check=True, env=env, timeout=120)


# ---------------------------------------------------------------- CPU
@pytest.mark.parametrize("n", [1, 37, SERIAL_CUTOFF + 5])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_cpu_nested_device_functions(n, dtype):
    x = np.random.default_rng(0).uniform(-3, 3, n).astype(dtype)
    out = np.full(n, np.nan, dtype)
    dk.poly_map.launch(None, n, out, x, 1.5, -0.5)
    tol = 1e-6 if dtype == np.float32 else 1e-12  # square(x) rounds to float32 first
    np.testing.assert_allclose(out, _poly_ref(x, 1.5, -0.5), rtol=tol, atol=tol)


@pytest.mark.parametrize("n", [5, SERIAL_CUTOFF + 5])
def test_cpu_a_called_device_function_is_compiled_once_not_inlined(n):
    x = np.random.default_rng(4).uniform(-3, 3, n)
    out = np.full(n, np.nan)
    dk.clipped_poly_map.launch(None, n, out, x, 1.5, -0.5)
    np.testing.assert_allclose(out, np.clip(_poly_ref(x, 1.5, -0.5), -1, 1), rtol=1e-12)
    assert dk.clipped_poly.compiled("cpu").targetoptions["inline"] == "never"
    assert dk.poly.compiled("cpu").targetoptions["inline"] == "always"
    assert dk.clipped_poly(0.5, 1.0, 0.0) == 0.25  # plain Python still calls the function


def test_cpu_several_arrays_and_scalars_with_a_context():
    rng = np.random.default_rng(1)
    x, y = rng.standard_normal(1000), rng.standard_normal(1000)
    out = np.empty(1000)
    dk.axpby.launch(cpu(), x.size, out, x, y, 2.0, -3)
    np.testing.assert_allclose(out, 2.0 * x - 3 * y, rtol=1e-12)


def test_cpu_opcontext_and_2d_rows_with_work():
    x = np.random.default_rng(2).standard_normal((300, 200))
    out = np.empty_like(x)
    ctx = OpContext(run_ctx=SimpleNamespace(ctx=cpu(), stream=None))
    dk.center_rows.launch(ctx, x.shape[0], out, x, x.shape[1], work=x.size)  # parallel
    np.testing.assert_allclose(out, x - x.mean(axis=1, keepdims=True), atol=1e-12)
    small = x[:3].copy()
    out3 = np.empty_like(small)
    dk.center_rows.launch(ctx, 3, out3, small, small.shape[1])  # serial
    np.testing.assert_allclose(out3, small - small.mean(axis=1, keepdims=True), atol=1e-12)


def test_cpu_integers_and_unsigned_index():
    x = np.arange(10, dtype=np.int32)
    out = np.empty(10, np.int32)
    dk.int_add.launch(None, 10, out, x, 7)
    np.testing.assert_array_equal(out, x + 7)
    src = np.random.default_rng(3).standard_normal(50)
    idx = np.array([4, 0, 49, 7], np.int64)
    got = np.empty(4)
    dk.gather_flat.launch(None, 4, got, src, idx)
    np.testing.assert_array_equal(got, src[idx])


def test_elementwise_kernels_may_call_device_functions():
    x = np.linspace(-4, 4, 101)
    out = np.empty_like(x)
    dk.softsign_map.launch(None, out, "write", x)
    np.testing.assert_allclose(out, x / (1 + np.abs(x)), rtol=1e-12)


def test_device_function_in_a_closure_cell():
    body = dk.make_scaled(dk.square)
    x = np.arange(5.0)
    out = np.empty(5)
    body.launch(None, 5, out, x)
    np.testing.assert_array_equal(out, x * x)


def test_empty_n_launches_nothing():
    @K.parallel_for
    def never(i, out):  # pragma: no cover - not a file-level kernel: must not compile
        out[i] = 1.0

    never.launch(None, 0, np.empty(0))
    never.launch(gpu(0), 0, np.empty(0))  # not even the device is looked at
    assert never._loops == {}


# ---------------------------------------------------------------- errors
def test_errors_name_the_kernel_and_argument_and_leave_it_working():
    x = np.arange(4.0)
    out = np.empty(4)
    with pytest.raises(NNVMError, match=r"poly_map: n must be an int >= 0, got -1"):
        dk.poly_map.launch(None, -1, out, x, 1.0, 1.0)
    with pytest.raises(NNVMError, match=r"poly_map: ctx must be an OpContext, a Context or None"):
        dk.poly_map.launch("cpu", 4, out, x, 1.0, 1.0)
    with pytest.raises(NNVMError, match=r"poly_map: ctx is None and no argument is an array"):
        dk.poly_map.launch(None, 4, 1.0, 2.0)
    with pytest.raises(NNVMError, match=r"poly_map: arg 1 is float16"):
        dk.poly_map.launch(None, 4, out, x.astype(np.float16), 1.0, 1.0)
    fake_gpu = SimpleNamespace(__cuda_array_interface__={}, shape=(4,), dtype=np.float64)
    with pytest.raises(NNVMError, match=r"poly_map: arg 1 is a gpu array; a cpu launch"):
        dk.poly_map.launch(cpu(), 4, out, fake_gpu, 1.0, 1.0)
    with pytest.raises(NNVMError, match=r"poly_map: cannot compile the cpu loop"):
        dk.poly_map.launch(None, 4, out, x, "a string", 1.0)
    dk.poly_map.launch(None, 4, out, x, 1.0, 1.0)  # still works
    np.testing.assert_allclose(out, _poly_ref(x, 1.0, 1.0))


# ---------------------------------------------------------------- concurrency
def test_concurrent_cpu_launches_from_threads():
    n_threads = 6
    rng = np.random.default_rng(4)
    xs = [rng.standard_normal(SERIAL_CUTOFF * 2) for _ in range(n_threads)]
    outs = [np.empty_like(x) for x in xs]
    errors: list[BaseException] = []
    barrier = threading.Barrier(n_threads)

    def work(k: int) -> None:
        try:
            barrier.wait()
            for _ in range(3):
                dk.poly_map.launch(None, xs[k].size, outs[k], xs[k], float(k), 1.0)
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for k in range(n_threads):
        np.testing.assert_allclose(outs[k], _poly_ref(xs[k], float(k), 1.0), rtol=1e-12, atol=1e-12)


def _fmax_inputs(dtype: Any) -> tuple[np.ndarray, np.ndarray]:
    """Every pairing of NaN, infinities, signed zeros and ordinary values."""
    special = np.array([np.nan, -np.inf, np.inf, -0.0, 0.0, 1.5, -2.0, 3e-39], dtype)
    a, b = np.meshgrid(special, special)
    return a.ravel(), b.ravel()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fmax_is_c_fmax(dtype: Any) -> None:
    """kernel.fmax (LLVM's maxnum on the CPU) skips NaN as C's fmax and np.fmax do."""
    a, b = _fmax_inputs(dtype)
    out = np.empty_like(a)
    dk.fmax_map.launch(None, a.size, out, a, b)
    np.testing.assert_array_equal(out, np.fmax(a, b))  # ±0 compare equal either way
    assert [K.fmax(x, y) for x, y in zip(a, b)] == pytest.approx(np.fmax(a, b), nan_ok=True)
    wide = np.empty(a.size)
    dk.fmax_map.launch(None, a.size, wide, a.astype(np.float32), b.astype(np.float64))
    np.testing.assert_array_equal(wide, np.fmax(a.astype(np.float32), b.astype(np.float64)))


def test_hand_written_cpu_kernels_may_call_device_functions():
    x = np.random.default_rng(8).uniform(-3, 3, (5, 7))
    out = np.empty_like(x)
    dk.poly_rows_cpu(out, x, 2.0, 0.5)
    np.testing.assert_allclose(out, _poly_ref(x, 2.0, 0.5), rtol=1e-12, atol=1e-12)
    flat = np.linspace(-2.5, 2.5, 11, dtype=np.float32)
    sq = np.empty_like(flat)
    dk.floor_poly_cpu(sq, flat)
    np.testing.assert_array_equal(sq, np.floor(flat) ** 2)
    assert dk.floor_poly_cpu.parallel is False


# ---------------------------------------------------------------- disk cache
def test_a_second_process_compiles_nothing(tmp_path):
    mod = tmp_path / "cached_body.py"
    mod.write_text(
        textwrap.dedent(
            """
            import nnvmpy.kernel as K

            @K.device_function
            def twice(x):
                return 2 * x

            @K.parallel_for
            def body(i, out, x):
                out[i] = twice(x[i]) + 1
            """
        )
    )
    run = textwrap.dedent(
        """
        import numpy as np
        import cached_body as m
        x = np.arange(100.0)
        out = np.empty_like(x)
        m.body.launch(None, x.size, out, x)
        assert np.array_equal(out, 2 * x + 1)
        stats = m.body._loops[("cpu", 2, False)].stats
        print(sum(stats.cache_hits.values()), sum(stats.cache_misses.values()))
        """
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(SRC)])}
    env.pop("NUMBA_DISABLE_JIT", None)

    def hits_misses() -> list[int]:
        done = subprocess.run(
            [sys.executable, "-c", run], env=env, capture_output=True, text=True, timeout=300
        )
        assert done.returncode == 0, done.stderr
        return [int(v) for v in done.stdout.split()]

    assert hits_misses() == [0, 1]  # compiled and stored
    assert hits_misses() == [1, 0]  # loaded: nothing compiled


_RULE = "import nnvmpy.kernel as K\n\n@K.device_function\ndef rule(x):\n    return {} * x\n"
_APPLY_RULE = """
import numpy as np
import user

x, out = np.arange(4.0), np.empty(4)
user.apply(out, x)
print(out.tolist(), sum(user.apply.dispatcher.stats.cache_hits.values()))
"""


def test_a_device_function_edit_recompiles_a_hand_written_kernel(tmp_path):
    """A hand-written kernel's disk cache is keyed by its callees: after an edit to the
    device function (in another file) a new process must not load the old machine code."""
    (tmp_path / "rule.py").write_text(_RULE.format(2))
    (tmp_path / "user.py").write_text(
        textwrap.dedent(
            """
            import nnvmpy.kernel as K
            from rule import rule

            @K.cpu_kernel(parallel=False)
            def apply(out, x):
                for i in range(x.size):
                    out[i] = rule(x[i])
            """
        )
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(SRC)])}
    env.pop("NUMBA_DISABLE_JIT", None)

    def result() -> str:
        done = subprocess.run(
            [sys.executable, "-c", _APPLY_RULE], env=env, capture_output=True, text=True,
            timeout=300,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    assert result() == "[0.0, 2.0, 4.0, 6.0] 0"
    assert result() == "[0.0, 2.0, 4.0, 6.0] 1"  # loaded from the cache
    (tmp_path / "rule.py").write_text(_RULE.format(3))
    assert result() == "[0.0, 3.0, 6.0, 9.0] 0"


# ---------------------------------------------------------------- GPU (or the simulator)
def _cuda():
    from numba import cuda

    return cuda


@pytest.mark.gpu
@pytest.mark.parametrize("n", [1, 70])
def test_gpu_nested_device_functions(n):
    cuda = _cuda()
    x = np.random.default_rng(5).uniform(-3, 3, n)
    dx, dout = cuda.to_device(x), cuda.device_array(n)
    dk.poly_map.launch(None, n, dout, dx, 1.5, -0.5)
    np.testing.assert_allclose(dout.copy_to_host(), _poly_ref(x, 1.5, -0.5), rtol=1e-12, atol=1e-12)
    dk.clipped_poly_map.launch(None, n, dout, dx, 1.5, -0.5)  # cpu_inline: the CPU's choice
    want = np.clip(_poly_ref(x, 1.5, -0.5), -1, 1)
    np.testing.assert_allclose(dout.copy_to_host(), want, rtol=1e-12, atol=1e-12)


@pytest.mark.gpu
def test_gpu_rows_arrays_scalars_on_an_opcontext_stream():
    cuda = _cuda()
    stream = cuda.stream()
    ctx = OpContext(run_ctx=SimpleNamespace(ctx=gpu(0), stream=stream))
    x = np.random.default_rng(6).standard_normal((9, 13))
    dx, dout = cuda.to_device(x), cuda.device_array(x.shape)
    dk.center_rows.launch(ctx, 9, dout, dx, 13)
    stream.synchronize()
    np.testing.assert_allclose(dout.copy_to_host(), x - x.mean(axis=1, keepdims=True), atol=1e-12)
    a, b = np.arange(40.0), np.linspace(0, 1, 40)
    dres = cuda.device_array(40)
    dk.axpby.launch(Context("gpu", 0), 40, dres, cuda.to_device(a), cuda.to_device(b), 2.0, -3)
    np.testing.assert_allclose(dres.copy_to_host(), 2 * a - 3 * b, rtol=1e-12)
    idx = np.array([3, 0, 39], np.int64)
    dg = cuda.device_array(3)
    dk.gather_flat.launch(None, 3, dg, cuda.to_device(a), cuda.to_device(idx))
    np.testing.assert_array_equal(dg.copy_to_host(), a[idx])


@pytest.mark.gpu
def test_gpu_elementwise_and_closure_device_functions():
    cuda = _cuda()
    x = np.linspace(-4, 4, 33)
    dout = cuda.device_array(33)
    dk.softsign_map.launch(None, dout, "write", cuda.to_device(x))
    np.testing.assert_allclose(dout.copy_to_host(), x / (1 + np.abs(x)), rtol=1e-12)
    dk.make_scaled(dk.square).launch(gpu(0), 33, dout, cuda.to_device(x))
    np.testing.assert_allclose(dout.copy_to_host(), x * x, rtol=1e-12)


@pytest.mark.gpu
def test_gpu_hand_written_kernel_calls_a_device_function():
    cuda = _cuda()
    x = np.random.default_rng(9).uniform(-3, 3, (6, 5))
    dout = cuda.device_array(x.shape)
    dk.poly_rows_cuda.launch(None, 6, dout, cuda.to_device(x), -1.5, 2.0)
    np.testing.assert_allclose(dout.copy_to_host(), _poly_ref(x, -1.5, 2.0), rtol=1e-12, atol=1e-12)


@pytest.mark.gpu
def test_gpu_fmax_is_c_fmax():
    cuda = _cuda()
    a, b = _fmax_inputs(np.float64)
    dout = cuda.device_array(a.size)
    dk.fmax_map.launch(None, a.size, dout, cuda.to_device(a), cuda.to_device(b))
    np.testing.assert_array_equal(dout.copy_to_host(), np.fmax(a, b))


@pytest.mark.gpu
def test_gpu_wrong_device_errors_leave_it_working():
    cuda = _cuda()
    x = np.arange(8.0)
    dx, dout = cuda.to_device(x), cuda.device_array(8)
    with pytest.raises(NNVMError, match=r"poly_map: arg 1 is a NumPy \(cpu\) array"):
        dk.poly_map.launch(gpu(0), 8, dout, x, 1.0, 1.0)
    with pytest.raises(NNVMError, match=r"poly_map: arg 0 is a gpu array; a cpu launch"):
        dk.poly_map.launch(cpu(), 8, dout, dx, 1.0, 1.0)
    dk.poly_map.launch(gpu(0), 8, dout, dx, 1.0, 1.0)
    np.testing.assert_allclose(dout.copy_to_host(), _poly_ref(x, 1.0, 1.0))


@pytest.mark.gpu
def test_concurrent_gpu_launches_from_threads():
    cuda = _cuda()
    n_threads, n = 4, 50
    xs = [np.random.default_rng(k).standard_normal(n) for k in range(n_threads)]
    results: dict[int, np.ndarray] = {}
    errors: list[BaseException] = []

    def work(k: int) -> None:
        try:
            dout = cuda.device_array(n)
            dk.poly_map.launch(gpu(0), n, dout, cuda.to_device(xs[k]), float(k), 2.0)
            results[k] = dout.copy_to_host()
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for k in range(n_threads):
        np.testing.assert_allclose(
            results[k], _poly_ref(xs[k], float(k), 2.0), rtol=1e-12, atol=1e-12
        )


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_like_is_the_constant_in_the_arrays_float_type(dtype: Any) -> None:
    """kernel.like(x, c): c rounded to x's type first, so a float32 product is the float32
    one (a float64 0.1 would make a double product, rounded once more on the store)."""
    # 270.5169372558594 and 17.5111083984375 round differently through a float64 product
    a = np.array([3.0, 1e-3, 270.5169372558594, 17.5111083984375, 1.0 / 3.0], dtype)
    out = np.empty_like(a)
    dk.tenth_map.launch(None, a.size, out, a)
    np.testing.assert_array_equal(out, a * dtype(0.1))  # NumPy: dtype * dtype, no widening
    if dtype is np.float32:  # the float64 route gives another float32 for two of these
        wide = (a.astype(np.float64) * 0.1).astype(np.float32)
        assert (wide != out).sum() == 2
    assert type(K.like(dtype(2.0), 0.1)) is dtype
    assert K.like(np.float16(2.0), 0.1) == 0.1  # float16 and integers meet c as it is
    assert K.like(3, 0.5) == 0.5


@pytest.mark.gpu
def test_gpu_like_matches_the_cpu():
    cuda = _cuda()
    a = np.array([3.0, 1e-3, 7.25, -2.5e5, 1.0 / 3.0], np.float32)
    dout = cuda.device_array(a.size, np.float32)
    dk.tenth_map.launch(None, a.size, dout, cuda.to_device(a))
    np.testing.assert_array_equal(dout.copy_to_host(), a * np.float32(0.1))
