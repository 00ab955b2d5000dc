"""ElementwiseKernel on the CPU: NumPy formulas for every dtype and req, shapes, errors, threads."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
from concurrent.futures import ThreadPoolExecutor
from types import SimpleNamespace

import numpy as np
import pytest
from numba import prange

import nnvmpy.kernel as K
from nnvmpy.base import Context, NNVMError, OpReqType, cpu, gpu
from nnvmpy.kernel import cpu as cpu_launcher
from nnvmpy.resource import OpContext

DTYPES = [np.float32, np.float64, np.int32, np.int64, np.uint8, np.int8, np.float16]
A, B, C = 2.0, 3.0, 1.0


def _inputs(dtype, shape=(3, 4)):
    # Small non-negative integers: exact in every dtype, results fit in int8/uint8.
    x = (np.arange(int(np.prod(shape))) % 5).astype(dtype).reshape(shape)
    out0 = (np.arange(x.size) % 3).astype(dtype).reshape(shape)
    return x, out0


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("req", ["write", "inplace", "add", "null"])
def test_quadratic_matches_numpy_for_every_dtype_and_req(kern, quadratic_reference, dtype, req):
    x, out0 = _inputs(dtype)
    out = out0.copy()
    kern.quadratic_map.launch(cpu(), out, req, x, A, B, C)
    f = quadratic_reference(x, A, B, C, np.float64)
    expected = {
        "write": f,
        "inplace": f,
        "add": out0.astype(np.float64) + f,
        "null": out0,
    }[req].astype(dtype)
    np.testing.assert_array_equal(out, expected)
    assert out.dtype == dtype


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_quadratic_on_random_floats(kern, dtype):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((5, 7)).astype(dtype)
    out = np.empty_like(x)
    kern.quadratic_map.launch(None, out, OpReqType.kWriteTo, x, A, B, C)
    x64 = x.astype(np.float64)
    np.testing.assert_allclose(out, A * x64 * x64 + B * x64 + C, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize(
    "shape", [(), (1,), (0,), (2, 3, 4), (2, 1, 3, 1, 2), (cpu_launcher.SERIAL_CUTOFF + 3,)]
)
def test_any_shape_including_0d_empty_and_the_parallel_path(kern, quadratic_reference, shape):
    x = np.random.default_rng(2).standard_normal(shape).astype(np.float32)
    out = np.full(shape, -7.0, np.float32)
    kern.quadratic_map.launch(None, out, "write", x, A, B, C)
    expected = quadratic_reference(x, A, B, C, np.float64)
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)
    assert out.shape == shape


@pytest.mark.parametrize("n", [7, cpu_launcher.SERIAL_CUTOFF * 2 + 1])
def test_add_accumulates_on_both_loop_paths(kern, n):
    x = np.ones(n, np.float32)
    out = np.full(n, 10.0, np.float32)
    for _ in range(3):
        kern.quadratic_map.launch(None, out, "add", x, A, B, C)
    np.testing.assert_array_equal(out, np.full(n, 10.0 + 3 * 6.0, np.float32))


def test_scalars_broadcast_and_arrays_index(kern):
    x = np.arange(6, dtype=np.float64).reshape(2, 3)
    y = np.full((2, 3), 0.5)
    out = np.empty_like(x)
    kern.axpy.launch(None, out, "write", 3.0, x, y)  # scalar first, then two arrays
    np.testing.assert_array_equal(out, 3.0 * x + y)
    kern.axpy.launch(None, out, "write", np.float64(2.0), x, 1.5)  # numpy scalar, 1 array
    np.testing.assert_array_equal(out, 2.0 * x + 1.5)


def test_only_scalar_arguments_fill_out(kern):
    out = np.zeros((2, 2), np.float64)
    kern.fill.launch(None, out, "write", 4.5)
    np.testing.assert_array_equal(out, np.full((2, 2), 4.5))


def test_inplace_output_aliases_an_input(kern):
    x = np.arange(5, dtype=np.float64)
    ref = 3.0 * x + x
    kern.axpy.launch(None, x, "inplace", 3.0, x, x)
    np.testing.assert_array_equal(x, ref)
    big = np.ones(cpu_launcher.SERIAL_CUTOFF + 1, np.float32)
    kern.quadratic_map.launch(None, big, "add", big, A, B, C)  # out[i] += f(out[i])
    np.testing.assert_array_equal(big, np.full(big.shape, 7.0, np.float32))


def _variant(n: int, *key: str) -> tuple[str, ...]:
    """A CPU loop variant's key for an n-element launch: serial below the cutoff."""
    return ("cpu", *key, *(("parallel",) if n >= cpu_launcher.SERIAL_CUTOFF else ()))


@pytest.mark.parametrize("n", [1000, cpu_launcher.SERIAL_CUTOFF + 7])
def test_in_place_vector_math_reads_out_and_gives_the_same_bits(n):
    """A vector-math kernel launched with out as one of its inputs (the memory planner's
    in-place option) runs a loop variant that reads that input from out (kernel/cpu.py
    _in_place_arguments): the same bits as out of place, on both loop paths."""
    from nnvmpy.ops.elemwise_unary import _tanh, _tanh_grad

    rng = np.random.default_rng(n)
    x, dy = rng.standard_normal((2, n)).astype(np.float32)

    def out_of_place(kernel, mode, start, *args):
        out = start.copy()
        kernel.launch(None, out, mode, *args)
        return out

    from nnvmpy.kernel.elementwise import NUMPY_MIN_SIZE

    # from NUMPY_MIN_SIZE elements a unary float kernel with numpy_impl (tanh) runs NumPy's
    # ufunc, no loop of ours; the binary gradient has none and always runs the loop
    unary_loop = n < NUMPY_MIN_SIZE
    _tanh._variants.clear()  # what earlier tests compiled must not answer for this one
    _tanh_grad._variants.clear()
    got = x.copy()
    _tanh.launch(None, got, "write", got)  # y = tanh(x) into x's storage
    np.testing.assert_array_equal(got, out_of_place(_tanh, "write", x, x))
    assert (_variant(n, "write", "in0") in _tanh._variants) is unary_loop
    got = dy.copy()
    _tanh_grad.launch(None, got, "write", got, x)  # dx = dy (1 - y^2) into dy's storage
    np.testing.assert_array_equal(got, out_of_place(_tanh_grad, "write", dy, dy, x))
    assert _variant(n, "write", "in0") in _tanh_grad._variants
    got = x.copy()
    _tanh_grad.launch(None, got, "write", dy, got)  # ... into y's
    np.testing.assert_array_equal(got, out_of_place(_tanh_grad, "write", x, dy, x))
    assert _variant(n, "write", "in1") in _tanh_grad._variants
    got = x.copy()
    _tanh.launch(None, got, "add", got)  # out += tanh(out)
    np.testing.assert_array_equal(got, out_of_place(_tanh, "add", x, x))
    assert (_variant(n, "add", "in0") in _tanh._variants) is unary_loop


@pytest.mark.parametrize("n", [1000, cpu_launcher.SERIAL_CUTOFF + 7])
def test_planned_in_place_write_reads_out_for_any_kernel(n):
    """A kernel without vector math takes the reading-from-out loop too when the request
    says kWriteInplace (the executor's in-place writes: relu's gradient into dy ran the
    scalar loop, 8x slower); a plain write into an input's storage keeps the general
    loop. Same bits either way, NaN in y and dy included."""
    from nnvmpy.base import OpReqType
    from nnvmpy.ops.elemwise_unary import _relu_grad

    rng = np.random.default_rng(n)
    dy, y = rng.standard_normal((2, n)).astype(np.float32)
    y[::97], dy[5::89] = np.nan, np.nan
    expected = _relu_grad.py_func  # the scalar body, element by element, as reference
    want = np.array([expected(a, b) for a, b in zip(dy[:50], y[:50])], np.float32)
    for req in (OpReqType.kWriteInplace, "inplace"):
        got = dy.copy()
        _relu_grad.launch(None, got, req, got, y)  # dx into dy's storage
        separate = np.empty_like(dy)
        _relu_grad.launch(None, separate, "write", dy, y)
        np.testing.assert_array_equal(got, separate)
        np.testing.assert_array_equal(got[:50], want)
    assert _variant(n, "write", "in0") in _relu_grad._variants
    got = y.copy()
    _relu_grad.launch(None, got, OpReqType.kWriteInplace, dy, got)  # ... into y's
    np.testing.assert_array_equal(got, separate)
    assert _variant(n, "write", "in1") in _relu_grad._variants


def test_relu_and_math_kernels(kern):
    x = np.linspace(-2, 2, 9, dtype=np.float32)
    out = np.empty_like(x)
    kern.relu.launch(None, out, "write", x)
    np.testing.assert_array_equal(out, np.maximum(x, 0))
    kern.softsign.launch(None, out, "write", x)
    np.testing.assert_allclose(out, x / (1 + np.abs(x)), rtol=1e-6)


def test_req_accepts_enum_int_and_every_string_alias(kern):
    x, _ = _inputs(np.float32)
    for req in (OpReqType.kWriteTo, 1, 2, "kWriteTo", "kWriteInplace", "write", "inplace"):
        out = np.zeros_like(x)
        kern.quadratic_map.launch(None, out, req, x, A, B, C)
        assert out[0, 1] == 6.0, req
    for req in (OpReqType.kAddTo, 3, "kAddTo", "add"):
        out = np.ones_like(x)
        kern.quadratic_map.launch(None, out, req, x, A, B, C)
        assert out[0, 1] == 7.0, req


def test_null_req_touches_nothing_not_even_to_validate(kern):
    out = np.ones(3, np.float32)
    kern.quadratic_map.launch(None, out, "null", np.zeros(5), A, B, C)  # mismatched: ignored
    kern.quadratic_map.launch(None, out, OpReqType.kNullOp, "not an array")
    np.testing.assert_array_equal(out, np.ones(3, np.float32))


def test_ctx_may_be_an_opcontext_or_a_context(kern):
    x, _ = _inputs(np.float32)
    out = np.zeros_like(x)
    run_ctx = SimpleNamespace(ctx=cpu(0), stream=None)
    kern.quadratic_map.launch(OpContext(run_ctx=run_ctx), out, "write", x, A, B, C)
    assert out[0, 1] == 6.0
    out[:] = 0
    kern.quadratic_map.launch(Context("cpu_pinned", 0), out, "write", x, A, B, C)
    assert out[0, 1] == 6.0


def test_calling_the_kernel_runs_the_python_scalar_function(kern):
    assert kern.quadratic_map(2.0, A, B, C) == 15.0
    assert kern.quadratic_map.__name__ == "quadratic_map"
    assert "quadratic_map" in repr(kern.quadratic_map)


def test_small_launches_compile_only_the_serial_loop(kern):
    """Below SERIAL_CUTOFF a launch compiles and runs a loop without parallel=True (the
    parfor passes cost ~4x the compile); the parallel loop is a second variant, compiled
    at the first large launch. Both give NumPy's formula."""
    kern.quadratic_map._variants.clear()
    x = np.linspace(-2, 2, 11)
    out = np.empty_like(x)
    kern.quadratic_map.launch(None, out, "write", x, A, B, C)
    np.testing.assert_allclose(out, A * x * x + B * x + C, rtol=1e-15)
    assert list(kern.quadratic_map._variants) == [("cpu", "write")]
    assert not kern.quadratic_map._variants[("cpu", "write")].targetoptions["parallel"]
    big = np.linspace(-2, 2, cpu_launcher.SERIAL_CUTOFF + 1)
    out = np.empty_like(big)
    kern.quadratic_map.launch(None, out, "write", big, A, B, C)
    np.testing.assert_allclose(out, A * big * big + B * big + C, rtol=1e-15)
    assert kern.quadratic_map._variants[("cpu", "write", "parallel")].targetoptions["parallel"]


def test_variants_are_cached_per_device_and_mode(kern):
    x, _ = _inputs(np.float64)
    out = np.empty_like(x)
    kern.quadratic_map.launch(None, out, "write", x, A, B, C)
    loop = kern.quadratic_map._variants[("cpu", "write")]
    kern.quadratic_map.launch(None, out, "inplace", x, A, B, C)  # same variant as write
    assert kern.quadratic_map._variants[("cpu", "write")] is loop
    sigs = kern.quadratic_map.signatures()
    assert any(dev == "cpu" and mode == "write" for dev, mode, _ in sigs)


# ---------------------------------------------------------------- errors
@pytest.mark.parametrize(
    ("make_args", "match"),
    [
        (lambda: (np.ones(8, np.float32)[::2],), r"quadratic_map: arg 0 is not C-contiguous"),
        (lambda: (np.ones(5, np.float32),), r"quadratic_map: arg 0 has shape \(5,\) but out has"),
        (lambda: (np.ones(4, np.complex64),), r"arg 0 has dtype complex64.*not support"),
        (lambda: (np.ones(4, np.bool_),), r"arg 0 has dtype bool"),
        (lambda: ([1.0, 2.0, 3.0, 4.0],), r"arg 0 is a list"),
        (lambda: (np.ones(4, np.float16).reshape(2, 2),), r"arg 0 has shape \(2, 2\)"),
    ],
    ids=["strided", "shape", "complex", "bool", "list", "float16-shape"],
)
def test_bad_arguments_raise_nnvmerror_naming_kernel_and_argument(kern, make_args, match):
    out = np.zeros(4, np.float32)
    with pytest.raises(NNVMError, match=match):
        kern.quadratic_map.launch(None, out, "write", *make_args(), A, B, C)
    np.testing.assert_array_equal(out, np.zeros(4, np.float32))


def test_bad_out_raises(kern):
    x = np.ones(4, np.float32)
    with pytest.raises(NNVMError, match=r"quadratic_map: out is not C-contiguous"):
        kern.quadratic_map.launch(None, np.zeros(8, np.float32)[::2], "write", x, A, B, C)
    with pytest.raises(NNVMError, match=r"quadratic_map: out has dtype complex128"):
        kern.quadratic_map.launch(None, np.zeros(4, np.complex128), "write", x, A, B, C)
    readonly = np.zeros(4, np.float32)
    readonly.flags.writeable = False
    with pytest.raises(NNVMError, match=r"quadratic_map: out is read-only"):
        kern.quadratic_map.launch(None, readonly, "write", x, A, B, C)
    with pytest.raises(NNVMError, match=r"quadratic_map: out must be a NumPy array or a CUDA"):
        kern.quadratic_map.launch(None, [0.0] * 4, "write", x, A, B, C)
    with pytest.raises(NNVMError, match=r"quadratic_map: ctx must be an OpContext"):
        kern.quadratic_map.launch("cpu", np.zeros(4, np.float32), "write", x, A, B, C)


@pytest.mark.parametrize("req", ["foo", 7, 2.5, None, -1])
def test_bad_req_raises(kern, req):
    with pytest.raises(NNVMError, match=r"quadratic_map: unknown req"):
        kern.quadratic_map.launch(None, np.zeros(4), req, np.ones(4), A, B, C)


class _FakeCudaArray:
    """Looks like a GPU array to the launcher; never reaches numba."""

    __cuda_array_interface__ = {"shape": (4,), "typestr": "<f4", "data": (0, False), "version": 3}
    shape = (4,)
    dtype = np.dtype(np.float32)


def test_mixing_devices_raises(kern):
    out = np.zeros(4, np.float32)
    with pytest.raises(NNVMError, match=r"quadratic_map: arg 0 is a gpu array; a cpu launch"):
        kern.quadratic_map.launch(None, out, "write", _FakeCudaArray(), A, B, C)
    with pytest.raises(NNVMError, match=r"quadratic_map: out is a gpu array; a cpu launch"):
        kern.quadratic_map.launch(cpu(), _FakeCudaArray(), "write", out, A, B, C)


def test_float16_on_cpu_is_computed_through_float32(kern):
    x = np.linspace(-1, 1, 7, dtype=np.float16)
    out = np.ones_like(x)
    kern.quadratic_map.launch(None, out, "add", x, A, B, C)
    x32 = x.astype(np.float32)
    expected = (1 + (A * x32 * x32 + B * x32 + C)).astype(np.float16)
    np.testing.assert_allclose(out, expected, rtol=1e-3)
    assert out.dtype == np.float16
    with pytest.raises(NNVMError, match=r"arg 0 is not C-contiguous"):
        kern.quadratic_map.launch(None, np.empty(2, np.float16), "write", x[:4:2], A, B, C)


def test_an_error_leaves_the_kernel_usable(kern):
    out = np.zeros(3, np.float32)
    with pytest.raises(NNVMError):
        kern.quadratic_map.launch(None, out, "write", np.ones(4, np.float32), A, B, C)
    kern.quadratic_map.launch(None, out, "write", np.ones(3, np.float32), A, B, C)
    np.testing.assert_array_equal(out, np.full(3, 6.0, np.float32))


def test_closures_with_different_constants_get_different_code():
    def make(k):
        @K.elementwise
        def scale(x):
            return k * x

        return scale

    x = np.arange(4, dtype=np.float64)
    for k in (2.0, 5.0):  # same code object, same cache index file: the key must differ
        out = np.empty_like(x)
        make(k).launch(None, out, "write", x)
        np.testing.assert_array_equal(out, k * x)


# ---------------------------------------------------------------- threads
def test_concurrent_launches_from_threads_are_correct(kern):
    n_threads, n = 6, cpu_launcher.SERIAL_CUTOFF * 2
    barrier = threading.Barrier(n_threads)

    def work(seed: int) -> bool:
        x = np.full(n, float(seed % 4), np.float32)
        out = np.empty_like(x)
        small_x, small_out = x[:5].copy(), np.empty(5, np.float32)
        barrier.wait()
        for _ in range(20):
            kern.quadratic_map.launch(None, out, "write", x, A, B, C)
            kern.quadratic_map.launch(None, small_out, "write", small_x, A, B, C)
        v = float(seed % 4)
        ok = np.all(out == A * v * v + B * v + C)
        return bool(ok and np.all(small_out == A * v * v + B * v + C))

    with ThreadPoolExecutor(n_threads) as pool:
        assert all(pool.map(work, range(n_threads)))


@K.elementwise
def _tripled(x):
    return 3 * x


def test_the_first_launch_may_come_from_several_threads_at_once():
    n_threads = 4
    barrier = threading.Barrier(n_threads)

    def work(k: int) -> bool:
        x = np.full(10, float(k))
        out = np.empty_like(x)
        barrier.wait()
        _tripled.launch(None, out, "write", x)
        return bool(np.all(out == 3.0 * k))

    with ThreadPoolExecutor(n_threads) as pool:
        assert all(pool.map(work, range(n_threads)))
    assert len(_tripled._variants) == 1


def test_threading_layer_is_thread_safe(kern):
    import numba

    kern.relu.launch(None, np.empty(4, np.float32), "write", np.ones(4, np.float32))
    assert cpu_launcher.check_threading_layer("omp") == "omp"
    assert cpu_launcher.check_threading_layer("threadsafe") == "threadsafe"
    with pytest.raises(NNVMError, match=r"NNVMPY_NUMBA_THREADING_LAYER='workqueue' is not"):
        cpu_launcher.check_threading_layer("workqueue")
    with pytest.raises(NNVMError, match=r"'default' is not allowed"):
        cpu_launcher.check_threading_layer("default")
    big = np.ones(cpu_launcher.SERIAL_CUTOFF + 1, np.float32)
    kern.relu.launch(None, big, "write", big)  # a parallel launch fixes the layer
    assert numba.threading_layer() in ("tbb", "omp")


# ---------------------------------------------------------------- compile laziness, caching
_IMPORT_CHECK = textwrap.dedent("""
    import gc, sys, time
    t = time.perf_counter()
    import nnvmpy.kernel as K
    elapsed = time.perf_counter() - t

    @K.elementwise
    def f(x):
        return x + 1

    @K.cpu_kernel
    def g(x):
        return x

    @K.cuda_kernel
    def h(x):
        pass

    assert "numba.cuda" not in sys.modules, "numba.cuda imported"
    compiled = []
    if "numba" in sys.modules:
        from numba.core.dispatcher import Dispatcher
        compiled = [o for o in gc.get_objects()
                    if isinstance(o, Dispatcher) and o.overloads]
    assert not compiled, compiled
    assert not f._variants and g._dispatcher is None and h._dispatcher is None
    print(elapsed, "numba" in sys.modules)
""")


def test_import_compiles_nothing_and_defers_numba():
    out = subprocess.run(
        [sys.executable, "-c", _IMPORT_CHECK], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    elapsed, numba_imported = out.stdout.split()
    assert numba_imported == "False"  # so nothing can have been compiled
    assert float(elapsed) < 5.0  # generous: only a gross regression (a compile) trips it


_CACHED_MODULE = """
import nnvmpy.kernel as K

@K.elementwise
def cached_kernel(x, k):
    return {formula}
"""
_CACHED_RUN = textwrap.dedent("""
    import sys, numpy as np
    sys.path.insert(0, sys.argv[1])
    import cached_module as m
    x = np.arange(4, dtype=np.float32); out = np.empty_like(x)
    m.cached_kernel.launch(None, out, 'write', x, 3.0)
    loop = m.cached_kernel._variants[('cpu', 'write')]
    print(sum(loop.stats.cache_hits.values()), *out.tolist())
""")


def _run_cached(tmp_path: os.PathLike[str]) -> tuple[int, list[float]]:
    """(disk-cache hits, values) of _CACHED_RUN in a new process over tmp_path's modules."""
    out = subprocess.run(
        [sys.executable, "-c", _CACHED_RUN, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    hits, *values = out.stdout.split()
    return int(hits), [float(v) for v in values]


def test_disk_cache_hits_in_a_new_process_and_is_invalidated_by_an_edit(tmp_path):
    module = tmp_path / "cached_module.py"

    module.write_text(_CACHED_MODULE.format(formula="k * x"))
    assert _run_cached(tmp_path) == (0, [0.0, 3.0, 6.0, 9.0])  # compiled and saved
    assert _run_cached(tmp_path) == (1, [0.0, 3.0, 6.0, 9.0])  # loaded from the disk cache
    module.write_text(_CACHED_MODULE.format(formula="k * x + 100.0"))
    assert _run_cached(tmp_path) == (0, [100.0, 103.0, 106.0, 109.0])  # edited: no stale code


_CALLER_MODULE = """
import nnvmpy.kernel as K
from cached_helper import bump

@K.elementwise
def cached_kernel(x, k):
    return bump(k * x)
"""
_HELPER_MODULE = """
import nnvmpy.kernel as K

OFFSET = {offset}

@K.device_function
def bump(v):
    return v + OFFSET
"""


def test_disk_cache_is_invalidated_by_an_edit_to_a_function_it_calls(tmp_path):
    (tmp_path / "cached_module.py").write_text(_CALLER_MODULE)
    helper = tmp_path / "cached_helper.py"

    helper.write_text(_HELPER_MODULE.format(offset="1.0"))
    assert _run_cached(tmp_path) == (0, [1.0, 4.0, 7.0, 10.0])
    assert _run_cached(tmp_path) == (1, [1.0, 4.0, 7.0, 10.0])
    helper.write_text(_HELPER_MODULE.format(offset="50.0"))  # only the callee's file
    assert _run_cached(tmp_path) == (0, [50.0, 53.0, 56.0, 59.0])


_OUTER_MODULE = """
from nnvmpy.kernel.vmath._dispatch import _helper
from cached_helper import bump

@_helper  # not inlined into its callers: a compiled function of its own
def outer(v):
    return bump(v) * 2.0
"""


def test_a_helper_is_recompiled_when_a_function_it_calls_is_edited(tmp_path):
    """kernel -> outer (a helper numba compiles on its own; its file unchanged) -> bump
    (edited): outer's disk cache entry must not bring the old bump back (numba's
    cache=True checks outer's own file only: a vmath.blocks loop ran a stale body of
    another file that way)."""
    (tmp_path / "cached_module.py").write_text(
        _CALLER_MODULE.replace(
            "from cached_helper import bump", "from cached_outer import outer"
        ).replace("bump(k * x)", "outer(k * x)")
    )
    (tmp_path / "cached_outer.py").write_text(_OUTER_MODULE)
    helper = tmp_path / "cached_helper.py"

    helper.write_text(_HELPER_MODULE.format(offset="1.0"))
    assert _run_cached(tmp_path)[1] == [2.0, 8.0, 14.0, 20.0]
    assert _run_cached(tmp_path) == (1, [2.0, 8.0, 14.0, 20.0])
    helper.write_text(_HELPER_MODULE.format(offset="50.0"))
    assert _run_cached(tmp_path)[1] == [100.0, 106.0, 112.0, 118.0]


def test_two_processes_saving_loops_at_once_never_swap_their_machine_code(tmp_path):
    """The interleaving that broke a CI run: saver a writes its index, saver b (which read
    the same old index) writes its index and data, then a writes its data. numba's own
    cache file numbered both entries 1, so b's key then loaded a's code."""
    from nnvmpy.kernel import cpu

    cache_file = cpu._keyed_cache_file()
    a, b, reader = (cache_file(str(tmp_path), "loop", "stamp") for _ in range(3))
    deferred = []
    a._save_data = lambda name, data: deferred.append((name, data))  # a pauses here
    a.save(("sig a",), "code a")
    b._load_index = lambda: {}  # b read the index before a wrote it
    b.save(("sig b",), "code b")
    type(a)._save_data(a, *deferred[0])  # a resumes
    assert reader.load(("sig b",)) == "code b"
    assert reader.load(("sig a",)) in (None, "code a")  # lost at worst: compiled again


_NJIT_MODULES = {
    "njit_outer.py": """
from nnvmpy.kernel.cpu import cached_njit
from njit_inner import h

@cached_njit(nogil=True)
def f(x):
    return g(x) * 2.0  # g: defined below, after the decorator ran

@cached_njit(nogil=True)
def g(x):
    return h(x)
""",
    "njit_inner.py": """
from nnvmpy.kernel.cpu import cached_njit

@cached_njit(nogil=True)
def h(x):
    return x + {offset}
""",
}
_NJIT_RUN = textwrap.dedent("""
    import sys
    sys.path.insert(0, sys.argv[1])
    import njit_outer as m
    value = m.f(1.0)
    print(sum(m.f.stats.cache_hits.values()), value)
""")


def _run_njit(tmp_path: os.PathLike[str]) -> tuple[int, float]:
    out = subprocess.run(
        [sys.executable, "-c", _NJIT_RUN, str(tmp_path)], capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    hits, value = out.stdout.split()
    return int(hits), float(value)


def test_cached_njit_hits_on_disk_and_notices_an_edit_two_calls_away(tmp_path):
    """f -> g (below f in its file) -> h (another file, edited): f's key is taken at its
    first compile, when g exists, so it covers h's code too."""
    (tmp_path / "njit_outer.py").write_text(_NJIT_MODULES["njit_outer.py"])
    inner = tmp_path / "njit_inner.py"
    inner.write_text(_NJIT_MODULES["njit_inner.py"].format(offset="1.0"))
    assert _run_njit(tmp_path) == (0, 4.0)
    assert _run_njit(tmp_path) == (1, 4.0)
    inner.write_text(_NJIT_MODULES["njit_inner.py"].format(offset="50.0"))
    assert _run_njit(tmp_path) == (0, 102.0)


_VARIANTS_MODULE = """
import numpy as np
from numba import prange
from nnvmpy.kernel.cpu import cached_njit

def total(x):
    s = 0.0
    for i in prange(x.size):
        s += x[i]
    return s

parallel = cached_njit(parallel=True)(total)
serial = cached_njit()(total)
"""
_VARIANTS_RUN = textwrap.dedent("""
    import sys, numpy as np
    sys.path.insert(0, sys.argv[1])
    import variants_module as m
    for name in sys.argv[2:]:
        getattr(m, name)(np.ones(10))
    build = next(iter(getattr(m, sys.argv[-1]).overloads.values()))
    # numba restarts its threading layer for a build with parallel regions when it
    # loads it from the cache: such a build carries that hook
    print(any(getattr(f, "__name__", "") == "_reload_parfors" for f in build.reload_init))
""")


def test_cached_njit_keeps_a_parallel_and_a_serial_build_apart(tmp_path):
    """One function compiled with other options is another cache entry: with numba's own
    key (the signature) the serial build loaded the parallel one's code."""
    (tmp_path / "variants_module.py").write_text(_VARIANTS_MODULE)

    def run(*names):
        out = subprocess.run(
            [sys.executable, "-c", _VARIANTS_RUN, str(tmp_path), *names],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert out.returncode == 0, out.stderr
        return out.stdout.split()[-1] == "True"

    assert run("parallel")  # compiled and saved: a build with parallel regions
    assert not run("serial")  # a new process: the serial build, not the saved parallel one
    assert not run("serial")  # and from its own cache entry


def test_kernels_without_a_source_file_compile_in_memory():
    namespace: dict = {}
    exec("def twice(x):\n    return 2 * x\n", namespace)  # no file: no disk cache
    kernel = K.elementwise(namespace["twice"])
    out = np.empty(3)
    kernel.launch(None, out, "write", np.arange(3.0))
    np.testing.assert_array_equal(out, [0.0, 2.0, 4.0])


def test_cpu_kernel_compiles_on_first_call():
    @K.cpu_kernel
    def total(x):
        s = 0.0
        for i in prange(x.size):
            s += x[i]
        return s

    assert total._dispatcher is None
    assert total(np.arange(5.0)) == 10.0
    assert total.dispatcher.signatures

    @K.cpu_kernel(parallel=False)
    def double(out, x):
        for i in range(x.size):
            out[i] = 2 * x[i]

    out = np.empty(3)
    double(out, np.arange(3.0))
    np.testing.assert_array_equal(out, [0.0, 2.0, 4.0])
    assert K.cpu_kernel(total.py_func, False).parallel is False


def test_gpu_launch_without_a_gpu_says_how_to_get_one(kern):
    if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1":
        pytest.skip("the simulator provides a GPU")
    try:
        from numba import cuda

        if cuda.is_available():
            pytest.skip("a real GPU is present")
    except ImportError:
        pass
    with pytest.raises(NNVMError, match=r"quadratic_map: (no CUDA GPU is available|GPU kernels)"):
        kern.quadratic_map.launch(gpu(0), _FakeCudaArray(), "write", _FakeCudaArray(), A, B, C)


def test_float32_transcendentals_are_within_an_ulp_or_two_of_libm():
    # Small arrays run kernel.vmath's vectorised expf (within 1 ulp of libm's correctly
    # rounded value, which MXNet returns: exp(float32 1) may come out 2.718282 instead of
    # 2.7182817); from NUMPY_MIN_SIZE elements NumPy's SIMD exp (within 2 ulp)
    import math

    import nnvmpy as nv
    from nnvmpy.kernel.elementwise import NUMPY_MIN_SIZE

    x = np.linspace(-3, 3, 101, dtype=np.float32)
    got = nv.nd.exp(nv.nd.array(x)).asnumpy()
    np.testing.assert_array_max_ulp(got, np.array([math.exp(v) for v in x], np.float32), 1)
    big = np.resize(x, NUMPY_MIN_SIZE)
    got_big = nv.nd.exp(nv.nd.array(big)).asnumpy()
    np.testing.assert_array_max_ulp(got_big, np.exp(big.astype(np.float64)).astype(np.float32), 2)


def test_in_place_launch_of_a_body_with_star_args_or_defaults():
    """The reading-from-out loop passes one argument per parameter; a body taking *args,
    or called without its defaulted parameters, keeps the general loop in place."""
    from nnvmpy.kernel import elementwise

    @elementwise
    def add_all(*xs):
        return xs[0] + xs[1]

    @elementwise
    def scaled(x, a=2.0):
        return a * x

    x, y = np.arange(4, dtype=np.float32), np.full(4, 10, np.float32)
    add_all.launch(None, x, "inplace", x, y)
    np.testing.assert_array_equal(x, [10, 11, 12, 13])
    scaled.launch(None, y, "inplace", y)
    np.testing.assert_array_equal(y, np.full(4, 20))
    scaled.launch(None, y, "inplace", y, 0.5)  # every parameter given: the aliased loop
    np.testing.assert_array_equal(y, np.full(4, 10))
    assert ("cpu", "write", "in0") in scaled._variants
