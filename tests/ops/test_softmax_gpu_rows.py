"""The GPU's softmax row layouts against NumPy: a thread block per row near the last axis
(inner < 32, rows of 32 or more), a thread per row elsewhere; and SoftmaxOutput's
element-wise gradient.

The shapes take every path of ops/nn/softmax.py's block kernels: rows shorter than the
block (40 elements, 64 threads), longer and not a multiple of it (300, 128 threads), longer
than four elements a thread (600: the passes' unrolled loop and its tail), more
rows than the simulator's 4-block grid (grid-stride), inner 1, 3 and 31; and the thread
per row for inner 32 and for rows under 32. Runs under NUMBA_ENABLE_CUDASIM=1 or on a GPU
(tests/conftest.py); kept tiny, as every simulated thread is a Python thread.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import pytest
from launch_spies import spy_block_launches
from numeric_reference import softmax_grad_ref, softmax_output_grad_ref, softmax_ref
from symbol_runs import run_symbol, uniform_values

import nnvmpy as nv
from nnvmpy import sym

pytestmark = [pytest.mark.gpu, pytest.mark.sim_barriers]


def _run_gpu(build: Any, data: dict[str, np.ndarray], dy: Any, grad_req: str = "write") -> Any:
    return run_symbol(nv.gpu(0), build, data, dy, grad_req)


SIMULATOR = os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"
F16, F32, F64 = np.float16, np.float32, np.float64
TOL = {F16: {"rtol": 2e-3, "atol": 2e-3}, F32: {"rtol": 1e-5, "atol": 1e-5}}

# id -> (shape, axis, whether a block takes each row)
SHAPES = {
    "short-rows": ((9, 40), -1, True),
    "long-rows": ((5, 300), -1, True),
    "unrolled-rows": ((2, 600), -1, True),  # > 4 x 128: four elements a thread per pass
    "inner-3": ((2, 150, 3), 1, True),
    "inner-31": ((1, 40, 31), 1, True),
    "inner-32": ((2, 40, 32), 1, False),
    "rows-under-32": ((9, 10), -1, False),
}


def _close(got: np.ndarray, want: np.ndarray, dtype: type) -> None:
    assert got.dtype == dtype
    np.testing.assert_allclose(got.astype(F64), want, **TOL[dtype])


@pytest.fixture
def block_launches(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int, int]]:
    """(kernel, blocks, threads) of every launch of the block-per-row kernels."""
    from nnvmpy.ops.nn import _softmax_block_cuda as k

    kernels = {"forward": k._softmax_block_cuda, "backward": k._softmax_grad_block_cuda}
    return spy_block_launches(monkeypatch, kernels)


@pytest.mark.parametrize("dtype", [F16, F32], ids=["float16", "float32"])
@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
@pytest.mark.parametrize("case", list(SHAPES))
def test_softmax_rows_match_numpy_forward_and_backward(
    case: str, op: str, dtype: type, block_launches: list[tuple[str, int, int]]
) -> None:
    shape, axis, by_block = SHAPES[case]
    x, dy = uniform_values(shape, 1).astype(dtype), uniform_values(shape, 2, -1, 1).astype(dtype)
    y, dx = _run_gpu(lambda: getattr(sym, op)(sym.var("x"), axis=axis), {"x": x}, dy)
    log = op == "log_softmax"
    _close(y, softmax_ref(x, axis, 1.0, log), dtype)
    _close(dx, softmax_grad_ref(dy, y, axis, 1.0, log), dtype)
    n = shape[axis]
    rows = x.size // n
    blocks = min(rows, 4) if SIMULATOR else rows
    threads = 64 if n <= 64 else 128
    want = [("forward", blocks, threads), ("backward", blocks, threads)] if by_block else []
    assert block_launches == want


@pytest.mark.parametrize("dtype", [F16, F32], ids=["float16", "float32"])
def test_softmin_with_temperature_adds_to_the_gradient(dtype: type) -> None:
    x, dy = (
        uniform_values((5, 300), 3).astype(dtype),
        uniform_values((5, 300), 4, -1, 1).astype(dtype),
    )
    y, dx = _run_gpu(
        lambda: sym.softmin(sym.var("x"), axis=-1, temperature=0.7), {"x": x}, dy, "add"
    )
    inv_t = -1 / 0.7  # softmin(x) = softmax(-x)
    _close(y, softmax_ref(x, -1, inv_t, False), dtype)
    _close(dx, 0.25 + softmax_grad_ref(dy, y, -1, inv_t, False), dtype)


@pytest.mark.parametrize("dtype", [F16, F32], ids=["float16", "float32"])
def test_softmax_with_lengths_zeroes_each_row_past_its_length(dtype: type) -> None:
    x, dy = (
        uniform_values((6, 40), 5).astype(dtype),
        uniform_values((6, 40), 6, -1, 1).astype(dtype),
    )
    lengths = np.array([0, 1, 40, 33, 17, 5], np.int32)
    y, dx = _run_gpu(
        lambda: sym.softmax(sym.var("x"), sym.var("l"), axis=-1, use_length=True),
        {"x": x, "l": lengths},
        dy,
    )
    for r, n in enumerate(lengths):
        assert not y[r, n:].any()
        assert not dx[r, n:].any()
        if not n:
            continue
        _close(y[r, :n], softmax_ref(x[r, :n], -1, 1.0, False), dtype)
        _close(dx[r, :n], softmax_grad_ref(dy[r, :n], y[r, :n], -1, 1.0, False), dtype)


SPECIAL = {  # a row of 600 (the unrolled loop) each: where the special value sits matters
    "nan-late": (599, np.nan),
    "nan-first": (0, np.nan),
    "plus-inf": (300, np.inf),
    "minus-inf-first": (0, -np.inf),
    "minus-inf-late": (520, -np.inf),
}


@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
def test_softmax_rows_with_special_values_match_the_cpu(op: str) -> None:
    """NaN anywhere makes the row NaN, +inf gives NaN (inf - inf), -inf among finite values
    counts for nothing and a row of -inf is NaN: as the CPU's row loop (and NumPy) say,
    now that the block's first pass keeps a running max and sum."""
    x = uniform_values((len(SPECIAL) + 1, 600), 12).astype(F32)
    for r, (k, v) in enumerate(SPECIAL.values()):
        x[r, k] = v
    x[-1] = -np.inf
    build = lambda: getattr(sym, op)(sym.var("x"), axis=-1)  # noqa: E731
    dy = uniform_values(x.shape, 13, -1, 1).astype(F32)
    got, _ = _run_gpu(build, {"x": x}, dy)
    want, _ = run_symbol(nv.cpu(), build, {"x": x}, dy, "write")
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)
    assert np.isnan(got[[0, 1, 2, -1]]).all()  # NaN rows, an infinite max, all -inf
    assert not np.isnan(got[3:-1]).any()  # -inf among finite values


def test_float16_softmax_to_float32_output_reads_and_writes_both_widths() -> None:
    x, dy = uniform_values((5, 300), 7).astype(F16), uniform_values((5, 300), 8, -1, 1).astype(F32)
    y, dx = _run_gpu(lambda: sym.log_softmax(sym.var("x"), axis=-1, dtype="float32"), {"x": x}, dy)
    _close(y, softmax_ref(x, -1, 1.0, True), F32)
    _close(dx, softmax_grad_ref(dy, y, -1, 1.0, True), F16)


# -- SoftmaxOutput: forward by the row kernels, backward one thread per element -------------


# id -> (data shape, label shape, the softmax axis, parameters)
SOFTMAX_OUTPUT = {
    "plain": ((9, 40), (9,), -1, {"grad_scale": 0.5}),
    "ignore-valid-smooth": (
        (9, 40),
        (9,),
        -1,
        {"use_ignore": True, "normalization": "valid", "smooth_alpha": 0.1},
    ),
    "multi-output": ((3, 40, 5), (3, 5), 1, {"multi_output": True, "use_ignore": True}),
    "multi-output-batch": (
        (2, 6, 33),
        (2, 33),
        1,
        {"multi_output": True, "normalization": "batch"},
    ),
    "preserve-shape-out-grad": (
        (2, 3, 40),
        (2, 3),
        -1,
        {"preserve_shape": True, "out_grad": True, "grad_scale": 0.7},
    ),
}


@pytest.mark.parametrize("dtype", [F16, F32], ids=["float16", "float32"])
@pytest.mark.parametrize("case", list(SOFTMAX_OUTPUT))
def test_softmax_output_matches_numpy(case: str, dtype: type) -> None:
    shape, label_shape, axis, kw = SOFTMAX_OUTPUT[case]
    x = uniform_values(shape, 9).astype(dtype)
    label = np.random.default_rng(10).integers(0, shape[axis], label_shape).astype(dtype)
    label.reshape(-1)[1] = -1  # ignored with use_ignore
    dy = uniform_values(shape, 11, -1, 1).astype(dtype)
    y, dx = _run_gpu(
        lambda: sym.SoftmaxOutput(sym.var("x"), sym.var("l"), **kw), {"x": x, "l": label}, dy
    )
    _close(y, softmax_ref(x, axis, 1.0, False), dtype)
    _close(dx, softmax_output_grad_ref(y, label, axis, kw, dy), dtype)


@pytest.mark.parametrize("labels", [(3, 5, -1, 0, -1, 7, 2), (-1,) * 7], ids=["some", "none"])
def test_softmax_output_counts_valid_labels_on_the_device(
    monkeypatch: pytest.MonkeyPatch, labels: tuple[int, ...]
) -> None:
    """normalization='valid' divides by the labels that are not ignore_label (at least 1),
    counted on the GPU: the backward copies nothing to the host (it used to copy the labels
    and wait for the device every step)."""
    kw = {"use_ignore": True, "normalization": "valid", "grad_scale": 2.0}
    x, label = uniform_values((7, 40), 3).astype(F32), np.array(labels, F32)
    ctx = nv.gpu(0)
    args = {"x": nv.nd.array(x, ctx), "l": nv.nd.array(label, ctx)}
    grad = nv.nd.zeros(x.shape, ctx)
    exe = sym.SoftmaxOutput(sym.var("x"), sym.var("l"), **kw).bind(
        ctx, args, args_grad={"x": grad}, grad_req={"x": "write", "l": "null"}
    )
    exe.forward(is_train=True)
    y = exe.outputs[0].asnumpy()
    copies: list[Any] = []
    array_type = type(args["l"]._data)
    real = array_type.copy_to_host

    def counted(self: Any, *a: Any, **k: Any) -> Any:
        copies.append(self.shape)
        return real(self, *a, **k)

    monkeypatch.setattr(array_type, "copy_to_host", counted)
    exe.backward()
    nv.nd.waitall()
    monkeypatch.setattr(array_type, "copy_to_host", real)
    assert copies == []
    want = softmax_output_grad_ref(y, label, -1, kw, y)
    _close(grad.asnumpy(), want, F32)
