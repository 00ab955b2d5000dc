"""The roi ops' per-roi tables made on the GPU (_roi_table_cuda.py: a thread per roi)
against the host's NumPy tables, and the ops' GPU forward and backward against the CPU's.

ROIAlign, RROIAlign and PSROIPooling once copied the rois to the host on every GPU call to
build the table. The device tables must equal the host ones in float64 (cos and sin to an
ulp or two; every other column exactly, NaN where NaN) for rois of every float type
with the awkward cases in (roi_cases.AWKWARD_ROIS, and rotated ones here). A roi whose
batch index is out of range pools zeros and gets no gradient on either device (the
kernels skip it; no error, as on the CPU). Spies check that the GPU path copies nothing
to or from the host and launches the table kernels over the rois, and not at all for
no rois.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from fcompute_call import run_fcompute
from launch_spies import spy_item_launches
from roi_cases import HUGE, corner_rois, on_device, refuse_host_copies, typed

from nnvmpy.ops import (
    _roi_sampling,
    _roi_table_cuda,
    contrib_psroi_pooling,
    contrib_roi_align,
    contrib_rroi_align,
)
from nnvmpy.registry import Op

pytestmark = pytest.mark.gpu

DTYPES = (np.float64, np.float32, np.float16)
ALIGN = "_contrib_ROIAlign"
RALIGN = "_contrib_RROIAlign"
PSROI = "_contrib_PSROIPooling"
_COS_SIN = [7, 8]  # GEOMETRY's cos and sin columns


def _parsed(op: str, params: dict) -> Any:
    return Op.get(op).parse_attrs(params).parsed


def _rotated_rois(rng: np.random.Generator, n: int) -> np.ndarray:
    """n (batch, cx, cy, w, h, degrees) rois: random ones, then the awkward cases."""
    centre = rng.uniform(-5, 30, (n, 2))
    size = rng.uniform(-1, 20, (n, 2))
    angle = rng.uniform(-400, 400, (n, 1))
    rois = np.concatenate([rng.integers(0, 2, (n, 1)), centre, size, angle], 1)
    awkward = [
        [0, 3, 3, 0, 0, 0],  # zero-size
        [1, -4, -4, 2, 3, 90],
        [0, 50, 60, 8, 8, 180],  # off the map
        [1, 5, 5, HUGE, 4, 30],  # a capped grid
        [0, 5, 5, 14, 21, -45],  # integral bin sizes
        [1, 5, 5, np.nan, 4, 10],
        [0, 5, np.inf, 4, 4, 10],
        [0, 5, 5, 4, 4, np.nan],
        [-1, 5, 5, 4, 4, 10],  # batch indices
        [2, 5, 5, 4, 4, 10],
        [np.nan, 5, 5, 4, 4, 10],
        [-(2.0**40), 5, 5, 4, 4, 10],
    ]
    return np.concatenate([rois, np.array(awkward)])


def _assert_same_table(got: np.ndarray, want: np.ndarray, rotated: bool = False) -> None:
    want = np.asarray(want, np.float64).reshape(-1)
    assert got.dtype == np.float64
    assert got.shape == want.shape
    if not rotated:
        np.testing.assert_array_equal(got, want)
        return
    got, want = got.reshape(-1, 11), want.reshape(-1, 11)
    exact = [c for c in range(11) if c not in _COS_SIN]
    np.testing.assert_array_equal(got[:, exact], want[:, exact])
    np.testing.assert_allclose(got[:, _COS_SIN], want[:, _COS_SIN], rtol=0, atol=2.0**-50)


# ---------------------------------------------------------------- the tables


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("ratio", [-1, 0, 2])
@pytest.mark.parametrize("aligned", [False, True])
@pytest.mark.parametrize("scale", [0.0625, 0.7, 1 / 3])
def test_roi_align_table(dtype: Any, ratio: int, aligned: bool, scale: float) -> None:
    rois = typed(corner_rois(np.random.default_rng(1), 24), dtype)
    p = _parsed(ALIGN, {"pooled_size": (7, 3), "spatial_scale": scale,
                        "sample_ratio": ratio, "aligned": aligned})  # fmt: skip
    got = on_device(contrib_roi_align.device_geometry, p, rois)
    _assert_same_table(got, contrib_roi_align.roi_geometry_rows(p, rois))


def test_roi_align_table_keeps_the_hosts_sample_counts() -> None:
    """Corners where x2 s - 0.5 rounded once (an FMA, which NVVM makes of a product and a
    sum by default) gives another ceil(bin size) than NumPy's twice-rounded value: at
    s = 0.1, (x1, x2) = (1, 41) is 4.000000000000001 wide on the host (3 samples per
    half) and 4.0 with FMAs (2). The device must count as the host does."""
    p = _parsed(ALIGN, {"pooled_size": (2, 2), "spatial_scale": 0.1, "aligned": True})
    pairs = [(1, 41), (4, 24), (6, 46), (21, 41), (23, 63), (41, 61), (42, 82), (43, 83)]
    rois = np.array([[0, a, b, b, a] for a, b in pairs], np.float64)
    got = on_device(contrib_roi_align.device_geometry, p, rois).reshape(-1, 11)
    want = contrib_roi_align.roi_geometry_rows(p, rois)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(want[:2, 5], [3, 2])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("ratio", [-1, 3])
@pytest.mark.parametrize("scale", [0.25, 0.6])
def test_rroi_align_table(dtype: Any, ratio: int, scale: float) -> None:
    rois = typed(_rotated_rois(np.random.default_rng(2), 24), dtype)
    p = _parsed(RALIGN, {"pooled_size": (3, 5), "spatial_scale": scale, "sampling_ratio": ratio})
    got = on_device(contrib_rroi_align.device_geometry, p, rois)
    _assert_same_table(got, contrib_rroi_align.rroi_geometry(p, rois), rotated=True)


@pytest.mark.parametrize("dtype", DTYPES)
def test_psroi_pooling_table(dtype: Any) -> None:
    rois = typed(corner_rois(np.random.default_rng(3), 24), dtype)
    p = _parsed(PSROI, {"spatial_scale": 0.5, "output_dim": 2, "pooled_size": 3})
    got = on_device(contrib_psroi_pooling._device_table, p, rois)
    _assert_same_table(got, _roi_sampling.rounded_rois(rois))


def test_device_table_of_no_rois() -> None:
    p = _parsed(PSROI, {"spatial_scale": 0.5, "output_dim": 2, "pooled_size": 3})
    got = on_device(contrib_psroi_pooling._device_table, p, np.zeros((0, 5)))
    assert got.size == 1  # a scratch of at least one element, never read


# ---------------------------------------------------------------- the ops


@pytest.fixture
def no_host_copies(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """On a GPU, to_host and the table upload raise (roi_cases.refuse_host_copies); the
    item counts of the table kernels' launches are recorded."""
    refuse_host_copies(monkeypatch)
    return spy_item_launches(
        monkeypatch,
        contrib_roi_align._geometry_rows,
        contrib_rroi_align._geometry_rows,
        _roi_table_cuda.rounded_rows,
    )


def _op_cases() -> list[Any]:
    """(op, params, data shape, rois, output shape); the rois scaled to lie mostly on the
    6 x 7 map, without the huge ones (a 1024 x 1024 grid is slow in the simulator)."""
    rng = np.random.default_rng(4)
    boxes, turned = corner_rois(rng, 4), _rotated_rois(rng, 4)
    boxes = boxes[~(np.abs(boxes[:, 1:]) == HUGE).any(1)]
    turned = turned[~(np.abs(turned[:, 1:]) == HUGE).any(1)]
    boxes[:, 1:] *= 0.4
    turned[:, 1:5] *= 0.4
    r, t = len(boxes), len(turned)
    finite = boxes[(np.abs(boxes[:, 1:]) < 6e4).all(1)]  # (float16) PSROIPooling: int(inf)
    align = {"pooled_size": (2, 3), "spatial_scale": 0.9}
    return [
        pytest.param(ALIGN, {**align, "sample_ratio": 0}, (2, 3, 6, 7), boxes, (r, 3, 2, 3),
                     id="roi_align"),
        pytest.param(ALIGN, {**align, "aligned": True}, (2, 3, 6, 7), boxes, (r, 3, 2, 3),
                     id="roi_align_aligned"),
        pytest.param(ALIGN, {**align, "sample_ratio": 2, "aligned": True,
                             "position_sensitive": True}, (2, 12, 6, 7), boxes, (r, 2, 2, 3),
                     id="roi_align_aligned_ps"),
        pytest.param(RALIGN, {**align, "sampling_ratio": 0}, (2, 3, 6, 7), turned,
                     (t, 3, 2, 3), id="rroi_align"),
        pytest.param(PSROI, {"spatial_scale": 0.7, "output_dim": 2, "pooled_size": 2,
                             "group_size": 3}, (2, 18, 6, 7), finite, (len(finite), 2, 2, 2),
                     id="psroi_pooling"),
    ]  # fmt: skip


TOL = {np.float64: (1e-12, 1e-12), np.float32: (1e-5, 1e-6), np.float16: (2e-3, 2e-3)}


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # the simulator's inf - inf, x / 0
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("op", "params", "dshape", "rois", "oshape"), _op_cases())
def test_forward_and_backward_match_the_cpu_without_host_copies(
    op: str, params: dict, dshape: tuple, rois: np.ndarray, oshape: tuple, dtype: Any,
    no_host_copies: list[int],
) -> None:  # fmt: skip
    """Every request of the forward, and the backward, on the GPU equal the CPU's in
    float64 on the same (rounded) values; no host copy; one table kernel item per roi per
    call. Rois on no image (batch -1, 2 of 2 images, NaN, ...) pool zeros on both."""
    rng = np.random.default_rng(5)
    data = rng.standard_normal(dshape).astype(dtype)
    cast = typed(rois, dtype)
    exact = [data.astype(np.float64), cast.astype(np.float64)]
    start = rng.standard_normal(oshape).astype(dtype)
    (want,) = run_fcompute(op, params, exact, [np.zeros(oshape)], ["write"], "cpu")
    rtol, atol = TOL[dtype]
    for req in ("write", "add", "null"):
        no_host_copies.clear()
        (got,) = run_fcompute(op, params, [data, cast], [start], [req], "gpu")
        assert got.dtype == dtype
        if req == "null":
            assert no_host_copies == []
            np.testing.assert_array_equal(got, start)
            continue
        assert no_host_copies == [len(rois)], "one table kernel over the rois"
        base = start.astype(np.float64) if req == "add" else 0.0
        np.testing.assert_allclose(got.astype(np.float64), base + want, rtol=rtol, atol=atol)
    batch = cast[:, 0].astype(np.float64)
    assert not want[~((batch > -1) & (batch < 2))].any(), "rois on no image pool zeros"

    dy = rng.standard_normal(oshape).astype(dtype)
    zeros = [np.zeros(dshape), np.zeros(rois.shape)]
    dx_want, _ = run_fcompute(f"_backward{op}", params, [dy.astype(np.float64), *exact], zeros,
                              ["write", "write"], "cpu")  # fmt: skip
    no_host_copies.clear()
    starts = [np.ones(dshape, dtype), np.ones(rois.shape, dtype)]
    dx, drois = run_fcompute(f"_backward{op}", params, [dy, data, cast], starts,
                             ["write", "write"], "gpu")  # fmt: skip
    assert no_host_copies == [len(rois)]
    scale = max(1.0, float(np.abs(dx_want).max()))
    np.testing.assert_allclose(dx.astype(np.float64), dx_want, rtol=rtol, atol=atol * scale)
    np.testing.assert_array_equal(drois, 0.0)


@pytest.mark.parametrize(("op", "params", "dshape", "rois", "oshape"), _op_cases())
def test_no_rois_launch_no_table_kernel(
    op: str, params: dict, dshape: tuple, rois: np.ndarray, oshape: tuple,
    no_host_copies: list[int],
) -> None:  # fmt: skip
    """No rois: no table kernel is launched (the backward launched one of 0 items), the
    forward's output is empty, and a write backward zeroes d data while an add leaves it,
    the same on both devices."""
    rng = np.random.default_rng(7)
    data = rng.standard_normal(dshape)
    rois = np.zeros((0, rois.shape[1]))
    oshape = (0, *oshape[1:])
    starts = [rng.standard_normal(dshape), rois]
    for device in ("gpu", "cpu"):
        (got,) = run_fcompute(op, params, [data, rois], [np.zeros(oshape)], ["write"], device)
        assert got.shape == oshape
        for req in ("write", "add"):
            dx, drois = run_fcompute(f"_backward{op}", params, [np.zeros(oshape), data, rois],
                                     starts, [req, req], device)  # fmt: skip
            np.testing.assert_array_equal(dx, 0.0 if req == "write" else starts[0])
            assert drois.shape == rois.shape
    assert no_host_copies == [], "no table kernel for no rois"
