"""DeformablePSROIPooling: hand-computed values, gradients against a NumPy reference of
the documented definition (also where samples are clamped or skipped), the hidden
top_count output, no_trans, and the errors."""

from __future__ import annotations

import math

import numpy as np
import op_db  # noqa: F401  (first: it loads every cases_*.py)
import pytest
from cases_contrib_deformable_psroi_pooling import deformable_psroi_pooling_ref

import nnvmpy as nv
from nnvmpy.base import OpReqType
from nnvmpy.registry import Op
from nnvmpy.test_utils import _run_compute

OP = "_contrib_DeformablePSROIPooling"
PARAMS = {"spatial_scale": 0.5, "output_dim": 2, "group_size": 2, "pooled_size": 2}


def _f32(v: float) -> float:
    """MXNet keeps spatial_scale and trans_std as float32 parameters."""
    return float(np.float32(v))


def _samples(p: dict, shape: tuple, roi: np.ndarray, trans, r: int, c: int, ph: int, pw: int):
    """(x, y, channel) of each sample bin (ph, pw) of output channel c averages, the
    trans cell that shifts it, and the roi's (width, height)."""
    n_p, g, s = p["pooled_size"], p["group_size"], p.get("sample_per_part", 1)
    q = p.get("part_size", 0) or n_p
    std, no_trans = _f32(p.get("trans_std", 0.0)), p.get("no_trans", False)
    scale = _f32(p["spatial_scale"])
    _, _, h, w = shape
    x1, y1, x2, y2 = (math.floor(v + 0.5) if v >= 0 else math.ceil(v - 0.5) for v in roi[1:])
    left, top = x1 * scale - 0.5, y1 * scale - 0.5
    width = max((x2 + 1) * scale - 0.5 - left, 0.1)
    height = max((y2 + 1) * scale - 0.5 - top, 0.1)
    k = 0 if no_trans else c // (p["output_dim"] // (trans.shape[1] // 2))
    cell = (k, math.floor(ph / n_p * q), math.floor(pw / n_p * q))
    dx = 0.0 if no_trans else trans[r, 2 * k, cell[1], cell[2]] * std
    dy = 0.0 if no_trans else trans[r, 2 * k + 1, cell[1], cell[2]] * std
    channel = (c * g + ph * g // n_p) * g + pw * g // n_p
    found = []
    for ih in range(s):
        for iw in range(s):
            x = left + pw * width / n_p + dx * width + iw * width / n_p / s
            y = top + ph * height / n_p + dy * height + ih * height / n_p / s
            if -0.5 <= x <= w - 0.5 and -0.5 <= y <= h - 0.5:
                found.append((min(max(x, 0.0), w - 1.0), min(max(y, 0.0), h - 1.0), channel))
    return found, cell, (width, height)


def _grad_ref(p: dict, dy: np.ndarray, data: np.ndarray, rois: np.ndarray, trans):
    """MXNet's gradients: data gets dy / count with the bilinear weights; trans gets the
    blend's slope at each (clamped) sample times trans_std, roi extent and dy / count."""
    d_data = np.zeros(data.shape)
    d_trans = None if trans is None else np.zeros(trans.shape)
    for r, roi in enumerate(rois):
        b = int(roi[0])
        for c, ph, pw in np.ndindex(dy.shape[1:]):
            found, (k, qh, qw), (width, height) = _samples(p, data.shape, roi, trans, r, c, ph, pw)
            for x, y, ch in found:
                g = dy[r, c, ph, pw] / len(found)
                x0, x1, y0, y1 = math.floor(x), math.ceil(x), math.floor(y), math.ceil(y)
                ax, ay = x - x0, y - y0
                for yy, xx, wt in ((y0, x0, (1 - ax) * (1 - ay)), (y1, x0, (1 - ax) * ay),
                                   (y0, x1, ax * (1 - ay)), (y1, x1, ax * ay)):  # fmt: skip
                    d_data[b, ch, yy, xx] += wt * g
                if d_trans is None:
                    continue
                m = data[b, ch]
                slope_x = (1 - ay) * (m[y0, x1] - m[y0, x0]) + ay * (m[y1, x1] - m[y1, x0])
                slope_y = (1 - ax) * (m[y1, x0] - m[y0, x0]) + ax * (m[y1, x1] - m[y0, x1])
                d_trans[r, 2 * k, qh, qw] += slope_x * _f32(p["trans_std"]) * width * g
                d_trans[r, 2 * k + 1, qh, qw] += slope_y * _f32(p["trans_std"]) * height * g
    return d_data, d_trans


def _run(ctx, params: dict, data, rois, trans=None, dy=None):
    arrays = [
        nv.nd.array(a, ctx=ctx, dtype="float64") for a in (data, rois, trans) if a is not None
    ]
    for a in arrays:
        a.attach_grad()
    with nv.autograd.record():
        out = nv.nd.contrib.DeformablePSROIPooling(*arrays, **params)
    if dy is not None:
        out.backward(nv.nd.array(dy, ctx=ctx, dtype="float64"))
    return out.asnumpy(), [a.grad.asnumpy() for a in arrays]


def test_a_ramp_pools_to_the_mean_sample_position_and_trans_shifts_it() -> None:
    """data = x: a bin averages its samples' x. roi (2, 2)-(5, 5) at scale 1 starts at
    1.5 and is 4 wide: 2 bins of 2, samples at 1.5, 2.5 and 3.5, 4.5 -> 2 and 4. A trans
    of 0.5 with trans_std 0.1 shifts by 0.05 x 4 = 0.2; d out / d trans_x = 0.1 x 4."""
    data = np.broadcast_to(np.arange(8.0), (1, 4, 8, 8)).copy()
    rois = np.array([[0, 2, 2, 5, 5]])
    params = {**PARAMS, "spatial_scale": 1.0, "output_dim": 1, "sample_per_part": 2}
    out, _ = _run(nv.cpu(), {**params, "no_trans": True}, data, rois)
    np.testing.assert_allclose(out, [[[[2.0, 4.0], [2.0, 4.0]]]])
    trans = np.zeros((1, 2, 2, 2))
    trans[0, 0] = 0.5
    out, grads = _run(nv.cpu(), {**params, "trans_std": 0.1}, data, rois, trans, np.ones(out.shape))
    np.testing.assert_allclose(out, [[[[2.2, 4.2], [2.2, 4.2]]]])
    np.testing.assert_allclose(grads[2][0, 0], np.full((2, 2), 0.4))
    np.testing.assert_allclose(grads[2][0, 1], np.zeros((2, 2)), atol=1e-12)
    np.testing.assert_array_equal(grads[1], np.zeros(rois.shape))


@pytest.mark.parametrize(
    ("params", "pairs"),
    [
        ({**PARAMS, "sample_per_part": 2, "trans_std": 0.3}, 4),
        ({**PARAMS, "output_dim": 4, "pooled_size": 4, "part_size": 3, "trans_std": 0.5}, 4),
        ({**PARAMS, "pooled_size": 3, "sample_per_part": 3, "no_trans": True}, 0),
    ],
)
def test_forward_and_gradients_match_the_reference(ctx, params: dict, pairs: int) -> None:
    """Rois that reach past the map, so samples are clamped or skipped too."""
    rng = np.random.default_rng(7)
    channels = params["output_dim"] * params["group_size"] ** 2
    data = rng.uniform(-1, 1, (2, channels, 6, 7))
    rois = np.array(
        [[0, 1, 1, 8, 9], [1, 0, 2, 5, 11], [0, -3, -2, 14, 7], [1, 2.5, 3.5, 2.5, 3.5]]
    )
    q = params.get("part_size", 0) or params["pooled_size"]
    trans = rng.uniform(-1, 1, (4, pairs, q, q)) if pairs else None
    want = deformable_psroi_pooling_ref(data, rois, trans, **params)
    dy = rng.uniform(-1, 1, want.shape)
    out, grads = _run(ctx, params, data, rois, trans, dy)
    np.testing.assert_allclose(out, want, rtol=1e-12, atol=1e-12)
    d_data, d_trans = _grad_ref(params, dy, data, rois, trans)
    np.testing.assert_allclose(grads[0], d_data, rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(grads[1], np.zeros(rois.shape))
    if trans is not None:
        np.testing.assert_allclose(grads[2], d_trans, rtol=1e-10, atol=1e-12)


def test_top_count_is_a_hidden_output_counting_the_samples() -> None:
    params = {**PARAMS, "sample_per_part": 2, "no_trans": True}
    s = nv.sym.contrib.DeformablePSROIPooling(
        nv.sym.Variable("data"), nv.sym.Variable("rois"), name="pool", **params
    )
    assert s.list_arguments() == ["data", "rois"]
    assert s.list_outputs() == ["pool_output"]
    _, out_shapes, _ = s.infer_shape(data=(1, 8, 6, 7), rois=(3, 5))
    assert out_shapes == [(3, 2, 2, 2)]
    # roi 0 lies on the map; roi 1 left of it (x < -0.5); roi 2 starts at y = -2.5 with
    # bins 2 high: the top bins' rows y = -2.5, -1.5 are skipped, the bottom bins' rows
    # y = -0.5 (the bound is inclusive) and 0.5 are kept
    rois = np.array([[0, 2, 2, 9, 9], [0, -40, 2, -20, 9], [0, 2, -4, 9, 3]], dtype=np.float64)
    op = Op.get(OP)
    attrs = op.parse_attrs(params)
    shapes = [(3, 2, 2, 2)] * 2
    data = np.ones((1, 8, 6, 7))
    out, count = _run_compute(op, attrs, [data, rois], shapes, [np.float64] * 2, OpReqType.kWriteTo)
    np.testing.assert_array_equal(count[0], np.full((2, 2, 2), 4.0))
    np.testing.assert_array_equal(count[1], np.zeros((2, 2, 2)))
    np.testing.assert_array_equal(out[1], np.zeros((2, 2, 2)))
    np.testing.assert_array_equal(count[2], [[[0, 0], [4, 4]]] * 2)
    np.testing.assert_array_equal(out[2], [[[0, 0], [1, 1]]] * 2)


def test_zero_trans_equals_no_trans() -> None:
    rng = np.random.default_rng(3)
    data = rng.uniform(-1, 1, (1, 8, 6, 7))
    rois = np.array([[0, 1, 1, 8, 9], [0, 3, 0, 12, 6]])
    params = {**PARAMS, "sample_per_part": 3, "trans_std": 0.7}
    with_zeros, _ = _run(nv.cpu(), params, data, rois, np.zeros((2, 2, 2, 2)))
    without, _ = _run(nv.cpu(), {**params, "no_trans": True}, data, rois)
    np.testing.assert_array_equal(with_zeros, without)


@pytest.mark.parametrize(
    ("shapes", "params", "match"),
    [
        ([(1, 8, 6, 6), (2, 4), (2, 2, 2, 2)], {}, "input 'rois' has shape .*expected \\(R, 5\\)"),
        ([(8, 6, 6), (2, 5), (2, 2, 2, 2)], {}, "input 'data' has shape .*expected NCHW"),
        ([(1, 7, 6, 6), (2, 5), (2, 2, 2, 2)], {}, "7 channels; expected at least output_dim"),
        ([(1, 8, 6, 6), (2, 5), (2, 2, 3, 3)], {}, "'trans'.*part_size = 2"),
        ([(1, 8, 6, 6), (2, 5), (2, 3, 2, 2)], {}, "'trans'.*even count"),
        ([(1, 8, 6, 6), (2, 5), (1, 2, 2, 2)], {}, "'trans'.*each of the 2 rois"),
        ([(1, 8, 6, 6), (2, 5), (2, 2, 2)], {}, "'trans'.*expected 4-D"),
    ],
)
def test_bad_shapes_name_the_op_and_input(shapes: list, params: dict, match: str) -> None:
    arrays = [nv.nd.ones(s) for s in shapes]
    with pytest.raises(nv.NNVMError, match=f"{OP}: .*{match}"):
        nv.nd.contrib.DeformablePSROIPooling(*arrays, **{**PARAMS, **params})


def test_out_of_range_parameters_are_rejected() -> None:
    with pytest.raises(nv.NNVMError, match="spatial_scale"):
        nv.nd.contrib.DeformablePSROIPooling(
            nv.nd.ones((1, 8, 6, 6)),
            nv.nd.ones((1, 5)),
            **{**PARAMS, "spatial_scale": 2.0},
            no_trans=True,
        )


def test_channels_and_trans_rows_nothing_reads_get_zero_gradients(ctx) -> None:
    """data's channels past output_dim x group_size^2 and trans rows past the rois are
    read by no bin: their gradients are written 0 (the others match the reference)."""
    rng = np.random.default_rng(11)
    params = {**PARAMS, "sample_per_part": 2, "trans_std": 0.4}
    data = rng.uniform(-1, 1, (1, 8 + 3, 6, 7))
    rois = np.array([[0, 1, 1, 8, 9], [0, 3, 0, 12, 6]])
    trans = rng.uniform(-1, 1, (3, 2, 2, 2))
    dy = rng.uniform(-1, 1, (2, 2, 2, 2))
    _, grads = _run(ctx, params, data, rois, trans, dy)
    d_data, d_trans = _grad_ref(params, dy, data, rois, trans)
    np.testing.assert_allclose(grads[0], d_data, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(grads[2], d_trans, rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(grads[0][:, 8:], 0.0)
    np.testing.assert_array_equal(grads[2][2], 0.0)


def test_nan_shifts_and_rois_sample_nothing(ctx) -> None:
    """A NaN in trans or a roi leaves its samples off the map (skipped: the bin averages
    none and is 0), as a shift far outside does; no index is made from it."""
    rng = np.random.default_rng(12)
    params = {**PARAMS, "sample_per_part": 2, "trans_std": 0.5}
    data = rng.uniform(-1, 1, (1, 8, 6, 7))
    rois = np.array([[0, 1, 1, 8, 9], [0, 3, 0, 12, 6], [0, 2, 2, 5, 5]], np.float64)
    trans = rng.uniform(-1, 1, (3, 2, 2, 2))
    far_trans, far_rois = trans.copy(), rois.copy()
    far_trans[0, 0, 1, 0], far_rois[2, 1:] = 1e6, 1e6
    nan_trans, nan_rois = trans.copy(), rois.copy()
    nan_trans[0, 0, 1, 0], nan_rois[2, 1:] = np.nan, np.nan
    dy = rng.uniform(-1, 1, (3, 2, 2, 2))
    far = _run(ctx, params, data, far_rois, far_trans, dy)
    nan = _run(ctx, params, data, nan_rois, nan_trans, dy)
    np.testing.assert_array_equal(nan[0], far[0])
    for got, want in zip(nan[1], far[1]):
        np.testing.assert_array_equal(got, want)
