"""The GPU element-wise launch planned once per signature (kernel.cuda.plain_launcher).

An imperative call plan of an element-wise op on a GPU keeps the loop variant, the grid
and the scalars of its one signature, and each call only launches on the worker's stream:
launch()'s per-call checks were most of the worker's host time per op. These tests check
that the planned launch is taken, gives NumPy's values and launch()'s bits, and that every
signature off its plain path keeps launch() (and launch()'s errors).

Runs under NUMBA_ENABLE_CUDASIM=1 or on a GPU; skipped otherwise (tests/conftest.py).
"""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np
import pytest

import nnvmpy as nv
import nnvmpy.kernel as K
from nnvmpy import registry
from nnvmpy.base import gpu
from nnvmpy.engine import RunContext
from nnvmpy.imperative import CallPlan

cuda = pytest.importorskip("numba.cuda")
kcuda = pytest.importorskip("nnvmpy.kernel.cuda")
elementwise = importlib.import_module("nnvmpy.kernel.elementwise")  # the module, not the decorator

pytestmark = pytest.mark.gpu


@K.elementwise
def _affine(x, s, t):
    return x * s + t


@K.elementwise
def _mul(x, y):
    return x * y


def _rng_array(shape: tuple[int, ...], dtype: Any, seed: int = 0) -> np.ndarray:
    values = np.random.default_rng(seed).uniform(-4, 4, shape)
    return values.astype(dtype)


_CALLS = [
    ("relu", [((40,), np.float32)], {}, lambda x: np.maximum(x, 0)),
    ("relu", [((2, 3, 5), np.float64)], {}, lambda x: np.maximum(x, 0)),
    ("elemwise_add", [((7,), np.int32), ((7,), np.int32)], {}, np.add),
    ("elemwise_mul", [((3, 4), np.float32), ((3, 4), np.float32)], {}, np.multiply),
    ("_plus_scalar", [((33,), np.float32)], {"scalar": 2.5}, lambda x: x + np.float32(2.5)),
    ("_rminus_scalar", [((2, 3), np.float64)], {"scalar": 1}, lambda x: 1 - x),
    ("_mul_scalar", [((9,), np.int32)], {"scalar": 3}, lambda x: x * 3),
    ("_mul_scalar", [((4, 4), np.float16)], {"scalar": 0.5}, lambda x: x * np.float16(0.5)),
    ("elemwise_add", [((6,), np.float16), ((6,), np.float16)], {}, np.add),
]


@pytest.mark.parametrize(("name", "sigs", "params", "reference"), _CALLS)
def test_planned_gpu_calls_launch_without_the_checked_path(
    name: str, sigs: list[Any], params: dict[str, Any], reference: Any, monkeypatch: Any
) -> None:
    arrays = [_rng_array(shape, dtype, seed=k) for k, (shape, dtype) in enumerate(sigs)]
    if name in ("elemwise_add", "elemwise_mul") and arrays[0].dtype.kind == "i":
        arrays = [
            np.arange(a.size, dtype=a.dtype).reshape(a.shape) * (k + 2)
            for k, a in enumerate(arrays)
        ]
    inputs = [nv.nd.array(a, ctx=gpu(0), dtype=a.dtype) for a in arrays]
    assert CallPlan(registry.Op.get(name), inputs, dict(params)).fast is not None
    fn = getattr(nv.nd._internal, name, None) or getattr(nv.nd, name)
    fn(*inputs, **params).wait_to_read()  # the plan is made (and the loop compiled) here

    def checked_launch(*args: Any) -> None:
        raise AssertionError("a planned call went through kernel.cuda.launch")

    monkeypatch.setitem(elementwise._launchers, "gpu", checked_launch)
    want = reference(*arrays)
    for _ in range(3):
        got = fn(*inputs, **params)
        assert got.dtype == arrays[0].dtype
        assert got.shape == arrays[0].shape
        if want.dtype.kind == "f":
            tol = 1e-3 if want.dtype == np.float16 else 1e-6
            np.testing.assert_allclose(got.asnumpy(), want, rtol=tol, atol=tol)
        else:
            np.testing.assert_array_equal(got.asnumpy(), want)


def _run(fast: Any, out: np.ndarray, *ins: np.ndarray) -> np.ndarray:
    d_out = cuda.to_device(out)
    fast([cuda.to_device(a) for a in ins], [d_out], RunContext(gpu(0), None))
    cuda.synchronize()
    return d_out.copy_to_host()


def _checked(kernel: Any, out: np.ndarray, req: str, *args: Any) -> np.ndarray:
    d_out = cuda.to_device(out)
    kernel.launch(
        gpu(0), d_out, req, *[cuda.to_device(a) if isinstance(a, np.ndarray) else a for a in args]
    )
    cuda.synchronize()
    return d_out.copy_to_host()


@pytest.mark.parametrize("req", ["write", "add"])
@pytest.mark.parametrize(
    ("dtype", "s", "t"),
    [
        (np.float32, 0.1, -2.5),
        (np.float64, 0.1, 3),
        (np.int32, 3, -7),
        (np.int32, 2.7, 1),
        (np.float16, 0.3, 1.5),
    ],
)
@pytest.mark.parametrize("shape", [(50,), (3, 2, 7)])
def test_planned_launch_gives_the_checked_launch_bits(
    req: str, dtype: Any, s: Any, t: Any, shape: tuple[int, ...]
) -> None:
    """Scalars in the output's precision, float16 through float32, an int32 out adding
    a float product cast first (MXNet's KERNEL_ASSIGN), multi-dimensional arrays: the
    planned launch gives launch()'s bits, and those are NumPy's values."""
    x = _rng_array(shape, dtype, seed=1)
    out = _rng_array(shape, dtype, seed=2)
    sig = (shape, np.dtype(dtype))
    fast = _affine.gpu_launcher(req, 0, sig, [sig], (s, t))
    assert fast is not None
    got = _run(fast, out, x)
    np.testing.assert_array_equal(got, _checked(_affine, out, req, x, s, t))
    if np.dtype(dtype).kind == "i":
        value = (x * s + t).astype(dtype)  # to the output's type, then added
    else:
        low = np.float32 if dtype == np.float16 else dtype
        value = x.astype(low) * low(s) + low(t)
    want = (out + value if req == "add" else value).astype(dtype)
    # float64 to the last bits: a GPU may contract x * s + t into one fused multiply-add
    tol = {np.float16: 2e-3, np.float32: 1e-5, np.float64: 1e-15}.get(dtype, 0)
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=tol, atol=tol)


def test_signatures_off_the_plain_path_keep_the_checked_launch() -> None:
    sig = ((8,), np.dtype(np.float32))
    assert _mul.gpu_launcher("null", 0, sig, [sig, sig]) is None  # nothing to run
    assert _mul.gpu_launcher("write", 0, ((0,), sig[1]), [((0,), sig[1])] * 2) is None
    assert _mul.gpu_launcher("write", 0, sig, [sig, ((4, 2), sig[1])]) is None  # broadcast
    assert _mul.gpu_launcher("write", 0, sig, [sig, ((8,), np.dtype(np.uint16))]) is None
    assert _affine.gpu_launcher("write", 0, sig, [sig], (np.float32(2), 1.0)) is None


def test_a_planned_call_with_a_failing_launch_leaves_the_engine_usable(monkeypatch: Any) -> None:
    x = nv.nd.array(np.arange(5, dtype=np.float32), ctx=gpu(0))
    (x + 1).wait_to_read()  # planned and compiled

    def failing(*args: Any) -> None:
        raise RuntimeError("launch failed")

    with monkeypatch.context() as m:
        m.setattr(kcuda, "launch_kernel", failing)
        y = x + 1
        with pytest.raises(nv.NNVMError, match="launch failed"):
            y.wait_to_read()
    np.testing.assert_array_equal((x + 1).asnumpy(), np.arange(5) + 1)


def test_bound_gpu_graphs_launch_their_element_wise_nodes_planned(monkeypatch: Any) -> None:
    """An executor's element-wise nodes on a GPU launch through their planned launch;
    forward and backward give NumPy's values."""
    monkeypatch.setenv("NNVMPY_FUSION", "0")  # one node per op
    x, y = nv.sym.Variable("x"), nv.sym.Variable("y")
    z = nv.sym.relu(x * y + 1.5)
    exe = z.simple_bind(ctx=gpu(0), x=(4, 5), y=(4, 5))
    xv, yv = _rng_array((4, 5), np.float32, 1), _rng_array((4, 5), np.float32, 2)
    exe.arg_dict["x"][:] = xv
    exe.arg_dict["y"][:] = yv
    nv.nd.waitall()  # the bind's own fills and copies launch through launch()
    checked: list[str] = []
    real = elementwise._launchers.get("gpu") or kcuda.launch

    def spy(kernel: Any, *args: Any) -> None:
        checked.append(kernel.name)
        real(kernel, *args)

    monkeypatch.setitem(elementwise._launchers, "gpu", spy)
    out = exe.forward(is_train=True)[0].asnumpy()
    pre = xv * yv + np.float32(1.5)
    np.testing.assert_allclose(out, np.maximum(pre, 0), rtol=1e-6)
    assert checked == [], checked
    head = _rng_array((4, 5), np.float32, 3)
    exe.backward(nv.nd.array(head, ctx=gpu(0)))
    np.testing.assert_allclose(exe.grad_dict["x"].asnumpy(), head * (pre > 0) * yv, rtol=1e-6)
    np.testing.assert_allclose(exe.grad_dict["y"].asnumpy(), head * (pre > 0) * xv, rtol=1e-6)


def test_bound_gpu_graphs_launch_fused_nodes_planned(monkeypatch: Any) -> None:
    """A fused element-wise group on a GPU (one node, two outputs in the backward) runs
    its generated kernel through a planned launch; values are NumPy's."""
    from nnvmpy.fusion import compute as fused

    monkeypatch.setenv("NNVMPY_FUSION", "1")
    x, y = nv.sym.Variable("x"), nv.sym.Variable("y")
    z = nv.sym.tanh(x * y + 1.5) * 2.0
    exe = z.simple_bind(ctx=gpu(0), x=(3, 2, 5), y=(3, 2, 5))
    assert exe.debug_str().count("Op:_FusedOp") == 2  # the forward and the backward group
    xv, yv = _rng_array((3, 2, 5), np.float32, 4), _rng_array((3, 2, 5), np.float32, 5)
    exe.arg_dict["x"][:] = xv
    exe.arg_dict["y"][:] = yv
    nv.nd.waitall()
    checked: list[str] = []
    real = fused._run_gpu

    def spy(attrs: Any, *args: Any) -> None:
        checked.append(attrs.name)
        real(attrs, *args)

    monkeypatch.setattr(fused, "_run_gpu", spy)
    t = np.tanh(xv * yv + np.float32(1.5))
    np.testing.assert_allclose(exe.forward(is_train=True)[0].asnumpy(), 2 * t, rtol=1e-5)
    head = _rng_array((3, 2, 5), np.float32, 6)
    exe.backward(nv.nd.array(head, ctx=gpu(0)))
    dpre = head * 2 * (1 - t * t)
    np.testing.assert_allclose(exe.grad_dict["x"].asnumpy(), dpre * yv, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(exe.grad_dict["y"].asnumpy(), dpre * xv, rtol=1e-4, atol=1e-5)
    assert checked == [], checked


def test_planned_launches_view_each_array_in_its_own_dtype(monkeypatch: Any) -> None:
    """On hardware a multi-dimensional array is flattened by a view on its memory
    (storage.device_view): an int32 input of a float64 output keeps int32."""
    views: list[tuple[Any, tuple[int, ...], Any]] = []
    monkeypatch.setitem(kcuda._state, "simulator", False)
    monkeypatch.setattr(
        kcuda, "device_view", lambda a, shape, dtype: views.append((a, shape, dtype))
    )
    flat = kcuda.flattener((2, 3))
    ints, floats = np.zeros((2, 3), np.int32), np.zeros((2, 3), np.float64)
    flat(ints)
    flat(floats)
    assert views == [(ints, (6,), np.dtype(np.int32)), (floats, (6,), np.dtype(np.float64))]
    assert kcuda.flattener((6,)) is None  # 1-D arrays go as they are
