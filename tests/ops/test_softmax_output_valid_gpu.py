"""SoftmaxOutput's normalization='valid' on the GPU against NumPy: the labels that are not
ignore_label are counted on the device, a 0/1 per label summed by the reduction kernels
(ops/_reduce_cuda.py), and the gradient divides by that count (at least 1).

The label counts are long enough that the sum splits into slices at the simulator's
sizes (64-thread blocks: a block per output splits past 2048 elements; on a GPU the
tests shorten the block's slices, BLOCK_SLICE_MIN, so that the same counts split), with
some, none or every label ignored, float and int32 labels, use_ignore on and off, each
layout (rows, multi_output, preserve_shape) and each request of the data gradient. Runs
under NUMBA_ENABLE_CUDASIM=1 or on a GPU (tests/conftest.py); kept to a few thousand
elements, as every simulated thread is a Python thread.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import pytest
from launch_spies import spy_reductions
from numeric_reference import softmax_output_grad_ref, softmax_ref

import nnvmpy as nv
from nnvmpy import Op
from nnvmpy.attrs import fcompute
from nnvmpy.base import OpReqType
from nnvmpy.engine.base import RunContext
from nnvmpy.resource import OpContext

pytestmark = pytest.mark.gpu

SIMULATOR = os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"
W, A, N = OpReqType.kWriteTo, OpReqType.kAddTo, OpReqType.kNullOp
F16, F32, F64 = np.float16, np.float32, np.float64
TOL = {F16: 2e-3, F32: 1e-5, F64: 1e-11}

# id -> (data shape, softmax axis, parameters, share of labels ignored, label dtype or
# None (data's), dx req, whether the count splits (simulator))
CASES: dict[str, tuple[Any, ...]] = {
    "multi-output-some-ignored": (
        (2, 3, 1100), 1, {"multi_output": True, "use_ignore": True}, 0.3, None, W, True,
    ),
    "rows-not-use-ignore-add": ((2100, 2), -1, {"grad_scale": 0.5}, 0.4, None, A, True),
    "rows-every-label-ignored": ((2100, 2), -1, {}, 1.0, None, W, True),
    "int-labels-255-smooth": (
        (1, 3, 2200), 1,
        {"multi_output": True, "use_ignore": True, "ignore_label": 255.0, "smooth_alpha": 0.1},
        0.5, np.int32, A, True,
    ),
    "preserve-shape-none-ignored": (
        (3, 4, 5), -1, {"preserve_shape": True, "use_ignore": True}, 0.0, None, W, False,
    ),
    "rows-null": ((2100, 2), -1, {"use_ignore": True}, 0.3, None, N, False),
}  # fmt: skip


@pytest.fixture
def reductions(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[Any]]:
    """The reductions launched and the slices of their sums (launch_spies.py)."""
    return spy_reductions(monkeypatch, short_slices=not SIMULATOR)


def _inputs(case: str, dtype: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(softmax output, labels with the case's share set to ignore_label, dx's start)."""
    shape, axis, kw, ignored, label_dtype, _, _ = CASES[case]
    rng = np.random.default_rng(len(case))
    p = softmax_ref(rng.uniform(-3, 3, shape), axis, 1.0, False).astype(dtype)
    label_shape = shape[:1] + shape[2:] if kw.get("multi_output") else shape[:-1]
    label = rng.integers(0, shape[axis], label_shape).astype(F64)
    label[rng.uniform(0, 1, label_shape) < ignored] = kw.get("ignore_label", -1.0)
    return p, label.astype(label_dtype or dtype), rng.uniform(-1, 1, shape).astype(dtype)


def _backward_gpu(
    kw: dict[str, Any], p: np.ndarray, label: np.ndarray, start: np.ndarray, req: Any
) -> tuple[np.ndarray, np.ndarray]:
    """_backward_SoftmaxOutput's FCompute<gpu> as the executor calls it: (dx, dlabel)."""
    from numba import cuda

    op = Op.get("_backward_SoftmaxOutput")
    attrs = op.parse_attrs({**kw, "normalization": "valid"})
    ctx = OpContext(True, RunContext(nv.gpu(0), None), [])
    dx, dlabel = cuda.to_device(start), cuda.to_device(np.ones(label.shape, label.dtype))
    inputs = [cuda.to_device(p), cuda.to_device(label)]
    op.get_attr(fcompute("gpu"))(attrs, ctx, inputs, [req, W], [dx, dlabel])
    return dx.copy_to_host(), dlabel.copy_to_host()


@pytest.mark.parametrize("dtype", [F16, F32, F64], ids=["float16", "float32", "float64"])
@pytest.mark.parametrize("case", list(CASES))
def test_valid_normalization_matches_numpy(
    case: str, dtype: Any, reductions: dict[str, list[Any]]
) -> None:
    _, axis, kw, ignored, _, req, split = CASES[case]
    p, label, start = _inputs(case, dtype)
    dx, dlabel = _backward_gpu(kw, p, label, start, req)
    np.testing.assert_array_equal(dlabel, np.zeros_like(label))
    assert dx.dtype == dtype
    if req == N:
        np.testing.assert_array_equal(dx, start)
        assert reductions["calls"] == []
        return
    valid = label != kw.get("ignore_label", -1.0)
    assert valid.any() == (ignored < 1.0)
    want = softmax_output_grad_ref(p, label, axis, {**kw, "normalization": "valid"}, p)
    assert np.abs(want).max() > 1e-4, f"{case}: the gradient is trivial"
    want = want + (start.astype(F64) if req == A else 0.0)
    tol = TOL[dtype] * max(np.abs(want).max(), 1.0)
    np.testing.assert_allclose(dx.astype(F64), want, rtol=TOL[dtype], atol=tol)
    assert reductions["calls"] == [(1,)], f"{case}: the labels were not counted by a reduction"
    slices = reductions["slices"]
    assert (max(slices, default=1) > 1) == split, f"{case}: slices {slices}"
