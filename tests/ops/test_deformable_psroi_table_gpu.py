"""DeformablePSROIPooling's per-roi table made on the GPU (_deformable_psroi_cuda
.table_rows: a thread per roi) against the host's NumPy table, and the op's GPU forward
and backward against the CPU's with no host round trip of the rois.

The table (batch index, x0, y0, width, height) once came from the host on every GPU
call: the rois copied down, waiting on the stream, the table uploaded back. The device
table must equal the host one entry for entry in float64 (NaN where NaN) for rois of
every float type with the awkward cases in (roi_cases.AWKWARD_ROIS), and products
x s - 0.5 that an FMA would round differently. A roi on no image pools zeros and gets no
gradient on either device. Spies check that the GPU path copies nothing to or from the
host and launches the table kernel over the rois once per call, and not at all for a
backward asked for neither d data nor d trans, nor for no rois.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from fcompute_call import run_fcompute
from launch_spies import spy_item_launches
from roi_cases import corner_rois, on_device, refuse_host_copies, typed

from nnvmpy.ops import _deformable_psroi_cuda as gpu
from nnvmpy.ops import contrib_deformable_psroi_pooling as dpsroi
from nnvmpy.registry import Op

pytestmark = pytest.mark.gpu

OP = "_contrib_DeformablePSROIPooling"
BACKWARD = "_backward_contrib_DeformablePSROIPooling"
DTYPES = (np.float64, np.float32, np.float16)


def _on_device(p: Any, rois: np.ndarray) -> np.ndarray:
    """The device table (roi_table_gpu) of rois on the GPU, read back."""
    return on_device(gpu.roi_table_gpu, p, rois)


def _parsed(params: dict) -> Any:
    return Op.get(OP).parse_attrs(params).parsed


# ---------------------------------------------------------------- the table


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # the host's inf - inf
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda t: np.dtype(t).name)
@pytest.mark.parametrize("scale", [0.0625, 0.7, 1 / 3, 0.1, 1.0])
def test_device_table_is_the_host_table(dtype: Any, scale: float) -> None:
    rois = typed(corner_rois(np.random.default_rng(1), 40), dtype)
    p = _parsed({"spatial_scale": scale, "output_dim": 2, "group_size": 1, "pooled_size": 3})
    got = _on_device(p, rois)
    want = dpsroi._roi_table(p, rois)
    assert got.dtype == np.float64
    assert want.shape == (len(rois), 5)
    np.testing.assert_array_equal(got, want.reshape(-1))


def test_device_table_rounds_each_product_as_the_host() -> None:
    """Corners where x s - 0.5 rounded once (the FMA NVVM makes of a product and a sum)
    differs from NumPy's twice-rounded value; the device table must hold NumPy's. A
    rounded corner times a float32 scale is exact below 2^29, and below 2^52 the - 0.5
    is exact too, so such corners lie past 2^53: the cases are checked to include them
    (this test tells only on a real GPU; the simulator never fuses)."""
    from fractions import Fraction

    rng = np.random.default_rng(7)
    for scale in (0.1, 0.7, 0.3):
        p = _parsed({"spatial_scale": scale, "output_dim": 1, "group_size": 1, "pooled_size": 1})
        s = float(np.float32(scale))
        v = rng.uniform(2.0**53, 2.0**62, 2000)
        fused = np.array(
            [float(Fraction(x) * Fraction(s) - Fraction(1, 2)) != x * s - 0.5 for x in v]
        )
        assert fused.sum() >= 5, "corners where one rounding differs from two"
        v = np.concatenate([v[fused], v[:32]])
        rois = np.stack([np.zeros_like(v), v, v[::-1], v + 2.0**12, v[::-1] + 2.0**13], 1)
        np.testing.assert_array_equal(_on_device(p, rois), dpsroi._roi_table(p, rois).reshape(-1))


def test_device_table_of_no_rois() -> None:
    p = _parsed({"spatial_scale": 0.5, "output_dim": 2, "group_size": 1, "pooled_size": 3})
    assert _on_device(p, np.zeros((0, 5))).size == 1  # a scratch of one element, never read


# ---------------------------------------------------------------- the op


@pytest.fixture
def no_host_copies(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """On a GPU, to_host and the table upload raise (roi_cases.refuse_host_copies); the
    item counts of the table kernel's launches are recorded."""
    refuse_host_copies(monkeypatch)
    return spy_item_launches(monkeypatch, gpu.table_rows)


@pytest.fixture
def host_tables(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The roi counts of every NumPy table made (_roi_table: the CPU's way)."""
    made: list[int] = []
    real = dpsroi._roi_table

    def spy(p: Any, rois: np.ndarray) -> np.ndarray:
        made.append(len(rois))
        return real(p, rois)

    monkeypatch.setattr(dpsroi, "_roi_table", spy)
    return made


def _op_rois() -> np.ndarray:
    """The awkward rois scaled onto a 6 x 7 map, without the huge and infinite ones (an
    infinite corner gives an infinite bin: NaN samples, skipped, on both devices, but
    slow to show; they are in the table tests)."""
    rois = corner_rois(np.random.default_rng(4), 6)
    rois = rois[(np.abs(rois[:, 1:]) < 1e4).all(1) | np.isnan(rois[:, 1:]).any(1)]
    rois[:, 1:] *= 0.4
    return rois


CASES = {
    "trans": ({"spatial_scale": 0.7, "output_dim": 2, "group_size": 2, "pooled_size": 3,
               "part_size": 2, "sample_per_part": 2, "trans_std": 0.3}, 2),
    "no-trans": ({"spatial_scale": 0.6, "output_dim": 2, "group_size": 3, "pooled_size": 3,
                  "sample_per_part": 2, "no_trans": True}, 0),
}  # fmt: skip
TOL = {np.float64: 1e-12, np.float32: 1e-5, np.float16: 2e-3}


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # the simulator's NaN arithmetic
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda t: np.dtype(t).name)
@pytest.mark.parametrize("case", CASES)
def test_forward_and_backward_match_the_cpu_without_host_copies(
    case: str, dtype: Any, no_host_copies: list[int]
) -> None:
    """Every request of the forward and of the backward on the GPU equals the CPU's in
    float64 on the same (rounded) values; no host copy; one table item per roi per call
    (none for a request of nothing). Rois on no image pool zeros on both devices."""
    params, classes = CASES[case]
    rng = np.random.default_rng(5)
    rois = typed(_op_rois(), dtype)
    n, d, pooled = len(rois), params["output_dim"], params["pooled_size"]
    q = params.get("part_size", 0) or pooled
    data = rng.standard_normal((2, d * params["group_size"] ** 2 + 1, 6, 7)).astype(dtype)
    trans = [rng.uniform(-1, 1, (n, 2 * classes, q, q)).astype(dtype)] if classes else []
    inputs = [data, rois, *trans]
    exact = [a.astype(np.float64) for a in inputs]
    oshape = (n, d, pooled, pooled)
    want = run_fcompute(OP, params, exact, [np.zeros(oshape)] * 2, ["write"] * 2, "cpu")
    starts = [rng.standard_normal(oshape).astype(dtype) for _ in range(2)]
    for req in ("write", "add", "null"):
        no_host_copies.clear()
        got = run_fcompute(OP, params, inputs, starts, [req] * 2, "gpu")
        assert all(g.dtype == dtype for g in got)
        if req == "null":
            assert no_host_copies == []
            for g, s in zip(got, starts):
                np.testing.assert_array_equal(g, s)
            continue
        assert no_host_copies == [n], "one table kernel over the rois"
        for g, w, s in zip(got, want, starts):
            base = s.astype(np.float64) if req == "add" else 0.0
            tol = TOL[dtype]
            np.testing.assert_allclose(g.astype(np.float64), base + w, rtol=tol, atol=tol * 4)
    batch = exact[1][:, 0]
    assert not want[0][~((batch > -1) & (batch < 2))].any(), "rois on no image pool zeros"

    dy = rng.standard_normal(oshape).astype(dtype)
    shapes = [data.shape, rois.shape, *(t.shape for t in trans)]
    writes = ["write"] * len(shapes)
    zeros = [np.zeros(s) for s in shapes]
    grads_want = run_fcompute(BACKWARD, params, [dy.astype(np.float64), *exact], zeros, writes,
                              "cpu")  # fmt: skip
    no_host_copies.clear()
    ones = [np.ones(s, dtype) for s in shapes]
    grads = run_fcompute(BACKWARD, params, [dy, *inputs], ones, writes, "gpu")
    assert no_host_copies == [n]
    checked = [0] if dtype == np.float16 else [0, *range(2, len(grads))]  # see below
    for i in checked:
        tol = TOL[dtype]
        atol = tol * max(1.0, float(np.abs(grads_want[i]).max()))
        np.testing.assert_allclose(grads[i].astype(np.float64), grads_want[i], rtol=tol, atol=atol)
    np.testing.assert_array_equal(grads[1], 0.0)


# float16's trans gradient is not compared (as in test_deformable_psroi_grad_gpu.py): a
# position computed in float16 can round across a pixel edge, where that gradient jumps.


@pytest.mark.parametrize("device", ["gpu", "cpu"])
@pytest.mark.parametrize("case", CASES)
def test_backward_of_no_gradient_makes_no_table(
    case: str, device: str, no_host_copies: list[int], host_tables: list[int]
) -> None:
    """A backward asked for neither d data nor d trans makes no table (no kernel launch on
    the GPU, no NumPy table on the CPU): d rois is still zeroed for a write, the other
    gradients are left alone. Asked for d trans alone, it makes one and d trans is the
    CPU's."""
    params, classes = CASES[case]
    tables = no_host_copies if device == "gpu" else host_tables
    rng = np.random.default_rng(6)
    rois = _op_rois()
    n, d, pooled = len(rois), params["output_dim"], params["pooled_size"]
    q = params.get("part_size", 0) or pooled
    data = rng.standard_normal((2, d * params["group_size"] ** 2 + 1, 6, 7))
    trans = [rng.uniform(-1, 1, (n, 2 * classes, q, q))] if classes else []
    dy = rng.standard_normal((n, d, pooled, pooled))
    inputs = [dy, data, rois, *trans]
    shapes = [data.shape, rois.shape, *(t.shape for t in trans)]
    starts = [rng.standard_normal(s) for s in shapes]
    reqs = ["null", "write", "null"][: len(shapes)]
    got = run_fcompute(BACKWARD, params, inputs, starts, reqs, device)
    assert tables == [], "no table for no gradient"
    np.testing.assert_array_equal(got[1], 0.0)
    for i in (0, *range(2, len(got))):
        np.testing.assert_array_equal(got[i], starts[i])
    if not classes:
        return
    want = run_fcompute(BACKWARD, params, inputs, [np.zeros(s) for s in shapes],
                        ["write"] * 3, "cpu")  # fmt: skip
    host_tables.clear()
    got = run_fcompute(BACKWARD, params, inputs, starts, ["null", "null", "write"], device)
    assert tables == [n], "one table for d trans alone"
    np.testing.assert_array_equal(got[0], starts[0])
    np.testing.assert_array_equal(got[1], starts[1])
    np.testing.assert_allclose(got[2], want[2], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("device", ["gpu", "cpu"])
@pytest.mark.parametrize("case", CASES)
def test_no_rois_make_no_table(
    case: str, device: str, no_host_copies: list[int], host_tables: list[int]
) -> None:
    """No rois: no table kernel is launched (GPU) and no NumPy table made (CPU), for the
    forward and for a write or add backward; the outputs are empty, d data is zeroed
    for a write and left alone for an add, and d trans rows past the rois (trans may have
    more rows than there are rois) are zeroed for a write."""
    params, classes = CASES[case]
    rng = np.random.default_rng(8)
    d, pooled = params["output_dim"], params["pooled_size"]
    q = params.get("part_size", 0) or pooled
    data = rng.standard_normal((2, d * params["group_size"] ** 2 + 1, 6, 7))
    rois = np.zeros((0, 5))
    trans = [rng.uniform(-1, 1, (2, 2 * classes, q, q))] if classes else []
    oshape = (0, d, pooled, pooled)
    got = run_fcompute(OP, params, [data, rois, *trans], [np.zeros(oshape)] * 2, ["write"] * 2,
                       device)  # fmt: skip
    assert [g.shape for g in got] == [oshape, oshape]
    shapes = [data.shape, rois.shape, *(t.shape for t in trans)]
    starts = [rng.standard_normal(s) for s in shapes]
    inputs = [np.zeros(oshape), data, rois, *trans]
    for req in ("write", "add"):
        got = run_fcompute(BACKWARD, params, inputs, starts, [req] * len(shapes), device)
        for g, s in zip(got, starts):
            np.testing.assert_array_equal(g, 0.0 if req == "write" else s)
    assert no_host_copies == [], "no table kernel for no rois"
    assert host_tables == [], "no NumPy table for no rois"
