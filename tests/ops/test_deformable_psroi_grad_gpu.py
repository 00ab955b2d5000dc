"""DeformablePSROIPooling's GPU data gradient (one work item per dy element, atomic adds)
against the CPU's (one item per input channel, no atomics).

Several images; overlapping and duplicated rois (their items add into the same pixels),
rois partly off the map, one with batch index -1; trans shifts of two classes (some
samples skipped off the map, some clamped onto it), part_size and group_size other than
pooled_size, and no_trans; every request, float16/32/64. FCompute<gpu> is called
directly (as the executor would) so that each request can be chosen; the reference is
the CPU's FCompute in float64 on the same (rounded) values. Atomics add in no fixed
order, so the GPU agrees to rounding. float16's trans gradient is not compared: a
position computed in float16 (the simulator's NumPy arithmetic) can round across a pixel
edge, where that gradient jumps (d data is continuous there).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from fcompute_call import run_fcompute
from launch_spies import spy_item_launches
from roi_cases import overlapping_rois

from nnvmpy.ops import _deformable_psroi_cuda as gpu

pytestmark = pytest.mark.gpu

BACKWARD = "_backward_contrib_DeformablePSROIPooling"
DTYPES = (np.float64, np.float32, np.float16)
TOL = {np.float64: 1e-12, np.float32: 1e-5, np.float16: 2e-3}


def _compute(params: dict, device: str, inputs: list, outputs: list, req: str) -> list:
    """FCompute<device> of the backward with request `req` for every output; host results."""
    return run_fcompute(BACKWARD, params, inputs, outputs, [req] * len(outputs), device)


@pytest.fixture
def launches(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The item counts of the GPU data-gradient kernel's launches."""
    return spy_item_launches(monkeypatch, gpu.data_grad_bins)


def _check(params: dict, classes: int, dtype: Any, req: str, launches: list[int]) -> None:
    """The GPU backward under `req` equals the CPU's in float64, added to or leaving alone
    the start values."""
    rng = np.random.default_rng(21)
    d, g, pooled = params["output_dim"], params["group_size"], params["pooled_size"]
    q = params.get("part_size", 0) or pooled
    data = rng.standard_normal((3, d * g * g + 1, 6, 7))
    rois = overlapping_rois(rng, 7, 3, 12.0)
    dy = rng.standard_normal((7, d, pooled, pooled))
    trans = [rng.uniform(-1.5, 1.5, (7, 2 * classes, q, q))] if classes else []
    inputs = [dy, data, rois, *trans]
    typed = [a.astype(dtype) for a in inputs]
    exact = [a.astype(np.float64) for a in typed]
    shapes = [data.shape, rois.shape, *(t.shape for t in trans)]
    want = _compute(params, "cpu", exact, [np.zeros(s) for s in shapes], "write")
    starts = [rng.standard_normal(s).astype(dtype) for s in shapes]
    got = _compute(params, "gpu", typed, starts, req)
    assert all(a.dtype == dtype for a in got)
    if req == "null":
        assert launches == []
        for a, s in zip(got, starts):
            np.testing.assert_array_equal(a, s)
        return
    assert launches == [dy.size], "one work item per dy element"
    checked = [0, 1] if dtype == np.float16 else range(len(got))
    for i in checked:
        base = starts[i].astype(np.float64) if req == "add" else 0.0
        tol = TOL[dtype]
        atol = tol * max(1.0, float(np.abs(want[i]).max()), float(np.abs(base).max()))
        np.testing.assert_allclose(got[i].astype(np.float64), base + want[i], rtol=tol, atol=atol)
    if req == "write":
        np.testing.assert_array_equal(got[1], 0.0)


PARAMS = {"spatial_scale": 0.7, "output_dim": 2, "group_size": 2, "pooled_size": 3}
CASES = {
    "trans": (PARAMS | {"sample_per_part": 2, "trans_std": 0.3, "part_size": 2}, 2),
    "no-trans": (PARAMS | {"group_size": 3, "sample_per_part": 3, "no_trans": True}, 0),
}


@pytest.mark.parametrize("req", ["write", "add", "null"])
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda t: np.dtype(t).name)
@pytest.mark.parametrize("case", CASES)
def test_data_gradient(case: str, dtype: Any, req: str, launches) -> None:
    params, classes = CASES[case]
    _check(params, classes, dtype, req, launches)
