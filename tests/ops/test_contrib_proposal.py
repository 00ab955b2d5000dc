"""RPN proposal ops (contrib.Proposal / contrib.MultiProposal) on hand-worked cases.

Each case is small enough to work out on paper from the documented behaviour: Faster
R-CNN's anchors, box decoding with the +1 pixel convention, clipping to the image, -1
scores for cells outside the image and for boxes below the minimum size, greedy NMS and
cyclic padding. The generic checks (forward against a loop reference, req, check_op) are
the rows in cases_contrib_proposal.py.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy.base import InferError, NNVMError

nd = nv.nd

# one anchor per cell: stride 16, scale 1, ratio 1 -> [0, 0, 15, 15] at cell (0, 0)
ONE = {"feature_stride": 16, "scales": (1.0,), "ratios": (1.0,), "rpn_min_size": 0}


def run(
    fg: Any, deltas: Any, info: Any, op: str = "MultiProposal", **params: Any
) -> tuple[np.ndarray, np.ndarray]:
    """rois and scores for foreground scores fg (N, A, H, W) and deltas (N, 4A, H, W)."""
    fg = np.asarray(fg, np.float32)
    cls = np.concatenate([1 - fg, fg], axis=1)  # the background half is never read
    rois, scores = getattr(nd.contrib, op)(
        nd.array(cls),
        nd.array(np.asarray(deltas, np.float32)),
        nd.array(np.asarray(info, np.float32)),
        output_score=True,
        **params,
    )
    return rois.asnumpy(), scores.asnumpy()[:, 0]


def test_anchors_are_faster_rcnn_anchors() -> None:
    """The classic 9 anchors of stride 16, scales (8, 16, 32), ratios (0.5, 1, 2)."""
    from nnvmpy.ops.contrib_proposal import base_anchors

    want = [
        [-84, -40, 99, 55], [-176, -88, 191, 103], [-360, -184, 375, 199],
        [-56, -56, 71, 71], [-120, -120, 135, 135], [-248, -248, 263, 263],
        [-36, -80, 51, 95], [-80, -168, 95, 183], [-168, -344, 183, 359],
    ]  # fmt: skip
    np.testing.assert_array_equal(base_anchors(16, (8, 16, 32), (0.5, 1, 2)), want)


def test_zero_deltas_give_the_anchor_and_rows_pad_cyclically() -> None:
    rois, scores = run([[[[0.8]]]], np.zeros((1, 4, 1, 1)), [[16, 16, 1]], **ONE,
                       rpn_post_nms_top_n=3)  # fmt: skip
    np.testing.assert_array_equal(rois, [[0, 0, 0, 15, 15]] * 3)
    np.testing.assert_allclose(scores, [0.8] * 3)


def test_decoding_moves_the_centre_scales_the_size_and_clips() -> None:
    # anchor width 16, centre 7.5: centre x 7.5 + 0.25 * 16 = 11.5, width 16 * 0.5 = 8
    # -> x in [8, 15]; centre y 7.5 - 0.125 * 16 = 5.5, height 16 -> y in [-2, 13] -> [0, 13]
    deltas = [0.25, -0.125, math.log(0.5), 0.0]
    rois, _ = run([[[[0.5]]]], np.reshape(deltas, (1, 4, 1, 1)), [[16, 16, 1]], **ONE,
                  rpn_post_nms_top_n=1)  # fmt: skip
    np.testing.assert_allclose(rois, [[0, 8, 0, 15, 13]], rtol=1e-6)


def test_iou_loss_adds_the_deltas_to_the_corners() -> None:
    deltas = np.reshape([1, 2, -3, -4], (1, 4, 1, 1))
    rois, _ = run([[[[0.5]]]], deltas, [[16, 16, 1]], **ONE, iou_loss=True, rpn_post_nms_top_n=1)
    np.testing.assert_array_equal(rois, [[0, 1, 2, 12, 11]])


def test_small_boxes_grow_by_half_the_minimum_size_and_score_minus_one() -> None:
    # width and height 16 * 0.25 = 4 around 7.5 -> [6, 9]; min size 4 * im_scale 2 = 8 > 4:
    # grown by 4 on every side -> [2, 13]
    deltas = np.reshape([0, 0, math.log(0.25), math.log(0.25)], (1, 4, 1, 1))
    params = {**ONE, "rpn_min_size": 4, "rpn_post_nms_top_n": 1}
    rois, scores = run([[[[0.9]]]], deltas, [[16, 16, 2]], **params)
    np.testing.assert_allclose(rois, [[0, 2, 2, 13, 13]], rtol=1e-6)
    np.testing.assert_array_equal(scores, [-1])


def test_cells_outside_the_image_score_minus_one_and_rank_last() -> None:
    # two cells; the image is 16 wide, so cell x = 1 lies outside it: its box [16, 31] is
    # clipped to [15, 15] and scored -1 although its score 0.9 is the larger
    rois, scores = run([[[[0.2, 0.9]]]], np.zeros((1, 4, 1, 2)), [[16, 16, 1]], **ONE,
                       rpn_post_nms_top_n=2)  # fmt: skip
    np.testing.assert_array_equal(rois, [[0, 0, 0, 15, 15], [0, 15, 0, 15, 15]])
    np.testing.assert_allclose(scores, [0.2, -1])


@pytest.mark.parametrize(("shift", "threshold", "kept"), [(-1.0, 0.7, 1), (-0.5, 0.7, 2),
                                                           (-0.5, 0.3, 1)])  # fmt: skip
def test_nms_suppresses_lower_scored_overlaps(shift: float, threshold: float, kept: int) -> None:
    # cell 1's anchor [16, 0, 31, 15] moved left by shift * 16: -1 -> [0, 15] (IoU 1 with
    # cell 0's box), -0.5 -> [8, 23] (IoU 8 * 16 / (256 + 256 - 128) = 1 / 3)
    deltas = np.zeros((1, 4, 1, 2))
    deltas[0, 0, 0, 1] = shift
    rois, scores = run([[[[0.6, 0.9]]]], deltas, [[16, 32, 1]], **ONE, threshold=threshold,
                       rpn_post_nms_top_n=2)  # fmt: skip
    x1 = 16 + shift * 16
    first = [0, x1, 0, x1 + 15, 15]
    if kept == 1:
        np.testing.assert_array_equal(rois, [first, first])  # padded with the one survivor
        np.testing.assert_allclose(scores, [0.9, 0.9])
    else:
        np.testing.assert_array_equal(rois, [first, [0, 0, 0, 15, 15]])
        np.testing.assert_allclose(scores, [0.9, 0.6])


def test_pre_nms_top_n_keeps_only_the_best_boxes() -> None:
    fg = [[[[0.3, 0.7, 0.5]]]]
    rois, scores = run(fg, np.zeros((1, 4, 1, 3)), [[16, 48, 1]], **ONE, rpn_pre_nms_top_n=2,
                       rpn_post_nms_top_n=3)  # fmt: skip
    np.testing.assert_allclose(scores, [0.7, 0.5, 0.7])
    np.testing.assert_array_equal(rois[:, 1], [16, 32, 16])


def test_multi_proposal_is_proposal_per_image_with_batch_indices() -> None:
    rng = np.random.default_rng(0)
    params = {"scales": (1.0, 2.0), "ratios": (0.5, 1.0, 2.0), "feature_stride": 8,
              "rpn_min_size": 4, "rpn_post_nms_top_n": 12}  # fmt: skip
    fg = rng.uniform(0, 1, (3, 6, 4, 5))
    deltas = rng.normal(0, 0.3, (3, 24, 4, 5))
    info = [[32, 40, 1.0], [20, 30, 0.7], [25, 17, 1.3]]
    rois, scores = run(fg, deltas, info, **params)
    for b in range(3):
        one_rois, one_scores = run(fg[b : b + 1], deltas[b : b + 1], info[b : b + 1],
                                   op="Proposal", **params)  # fmt: skip
        np.testing.assert_array_equal(rois[12 * b : 12 * (b + 1), 0], b)
        np.testing.assert_array_equal(rois[12 * b : 12 * (b + 1), 1:], one_rois[:, 1:])
        np.testing.assert_array_equal(scores[12 * b : 12 * (b + 1)], one_scores)


def test_symbol_shapes_outputs_and_zero_gradient() -> None:
    c, b, i = (nv.sym.Variable(n) for n in ("cls", "bbox", "info"))
    s = nv.sym.contrib.MultiProposal(c, b, i, scales=(1.0, 2.0), rpn_post_nms_top_n=7)
    assert len(s.list_outputs()) == 1
    assert s.list_outputs()[0].endswith("_output")
    arg, out, _ = s.infer_shape(cls=(2, 12, 3, 4))
    assert arg == [(2, 12, 3, 4), (2, 24, 3, 4), (2, 3)]
    assert out == [(14, 5)]
    scored = nv.sym.contrib.Proposal(c, b, i, scales=(1.0, 2.0), output_score=True)
    assert scored.infer_shape(cls=(1, 12, 3, 4))[1] == [(300, 5), (300, 1)]

    x = nd.array(np.random.default_rng(1).uniform(0, 1, (1, 12, 3, 4)))
    d = nd.zeros((1, 24, 3, 4))
    im = nd.array([[48, 64, 1]])
    for a in (x, d, im):
        a.attach_grad()
    with nv.autograd.record():
        y = nd.contrib.Proposal(x, d, im, scales=(1.0, 2.0), rpn_post_nms_top_n=5)
    y.backward(nd.ones(y.shape))
    for a in (x, d, im):
        np.testing.assert_array_equal(a.grad.asnumpy(), 0)


def test_bad_inputs_name_the_op_and_the_problem() -> None:
    cls = nd.zeros((2, 12, 3, 4))
    bbox = nd.zeros((2, 24, 3, 4))
    info = nd.array([[48, 64, 1], [48, 64, 1]])
    kw = {"scales": (1.0, 2.0)}
    with pytest.raises(InferError, match="Proposal takes one image"):
        nd.contrib.Proposal(cls, bbox, info, **kw)
    with pytest.raises(InferError, match="float32"):
        nd.contrib.MultiProposal(cls.astype("float64"), bbox.astype("float64"),
                                 info.astype("float64"), **kw)  # fmt: skip
    with pytest.raises(InferError, match="2 \\* num_anchors = 24"):
        nd.contrib.MultiProposal(cls, bbox, info)  # default scales: 4 * 3 anchors ... 24
    with pytest.raises(InferError, match="bbox_pred"):
        nd.contrib.MultiProposal(cls, nd.zeros((2, 8, 3, 4)), info, **kw)
    big = nd.array([[48, 64, 1], [80, 64, 1]])  # image 2: 80 / 16 = 5 rows > 3
    with pytest.raises(NNVMError, match="feature map has only 3 x 4"):
        nd.contrib.MultiProposal(cls, bbox, big, **kw).wait_to_read()
