"""Bounding-box and multibox contrib ops against MXNet's documented examples and values.

Expected values come from MXNet's docs and its unit tests (test_contrib_operator.py), and
from hand-worked formulas; the generic checks (forward against loop references, req,
check_op, GPU) are the rows in cases_contrib_bbox.py.
"""

from __future__ import annotations

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy.base import InferError, NNVMError, ParamError

nd = nv.nd

BOXES = [
    [0, 0.5, 0.1, 0.1, 0.2, 0.2],
    [1, 0.4, 0.1, 0.1, 0.2, 0.2],
    [0, 0.3, 0.1, 0.1, 0.14, 0.14],
    [2, 0.6, 0.5, 0.5, 0.7, 0.8],
]
PAD = [-1.0] * 6


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_box_nms_suppresses_overlaps_and_pads_with_minus_one(dtype: str) -> None:
    x = nd.array(BOXES, dtype=dtype)
    # force_suppress: box 1 (IoU 1 with box 0) goes whatever its class
    out = nd.contrib.box_nms(x, overlap_thresh=0.5, id_index=0, force_suppress=True)
    want = [BOXES[3], BOXES[0], BOXES[2], PAD]
    np.testing.assert_allclose(out.asnumpy(), np.array(want, dtype), rtol=1e-3, atol=1e-3)
    # per class: box 1 (class 1) survives box 0 (class 0); box 2 overlaps box 0 by 0.16
    out = nd.contrib.box_nms(x, overlap_thresh=0.1, id_index=0)
    want = [BOXES[3], BOXES[0], BOXES[1], PAD]
    np.testing.assert_allclose(out.asnumpy(), np.array(want, dtype), rtol=1e-3, atol=1e-3)
    assert out.dtype == np.dtype(dtype)


def test_box_nms_drops_background_invalid_scores_and_beyond_topk() -> None:
    boxes = [
        [0, 0.5, 0.1, 0.1, 0.2, 0.2],
        [0, 0.4, 0.1, 0.1, 0.2, 0.2],
        [1, 0.3, 0.1, 0.1, 0.14, 0.14],
        [-1, 0.6, 0.5, 0.5, 0.7, 0.8],
    ]
    x = nd.array(boxes)
    got = nd.contrib.box_nms(x, id_index=0, force_suppress=True).asnumpy()  # background -1
    np.testing.assert_allclose(got, [boxes[0], boxes[2], PAD, PAD], rtol=1e-6)
    got = nd.contrib.box_nms(x, id_index=0, background_id=0, force_suppress=True).asnumpy()
    np.testing.assert_allclose(got, [boxes[3], boxes[2], PAD, PAD], rtol=1e-6)
    got = nd.contrib.box_nms(x, valid_thresh=0.45, topk=1).asnumpy()
    np.testing.assert_allclose(got, [boxes[3], PAD, PAD, PAD], rtol=1e-6)
    np.testing.assert_array_equal(nd.contrib.box_nms(x, topk=0).asnumpy(), x.asnumpy())


def test_box_nms_converts_the_output_encoding() -> None:
    x = nd.array([[0, 0.9, 0.1, 0.2, 0.5, 0.8]])
    got = nd.contrib.box_nms(x, out_format="center").asnumpy()
    np.testing.assert_allclose(got, [[0, 0.9, 0.3, 0.5, 0.4, 0.6]], rtol=1e-6)
    centre = nd.array([[0, 0.9, 0.3, 0.5, 0.4, 0.6]])
    got = nd.contrib.box_non_maximum_suppression(centre, in_format="center").asnumpy()
    np.testing.assert_allclose(got, [[0, 0.9, 0.1, 0.2, 0.5, 0.8]], rtol=1e-6)


def test_box_nms_gradient_follows_each_box_back_to_its_input_row() -> None:
    """MXNet's test case 1, through bind/backward and through autograd."""
    rng = np.random.default_rng(0)
    dy = rng.random((2, 4, 6))
    want = dy[:, (1, 3, 2, 0), :].copy()  # output row j came from input row (3, 0, 2, -)[j]
    want[:, 1] = 0  # input row 1 was suppressed
    data = nv.sym.Variable("data")
    op = nv.sym.contrib.box_nms(data, overlap_thresh=0.5, id_index=0, force_suppress=True)
    assert len(op.list_outputs()) == 1  # the record output is hidden
    grad = nd.empty((2, 4, 6))
    exe = op.bind(nv.cpu(), args=[nd.array([BOXES, BOXES])], args_grad=[grad])
    exe.forward(is_train=True)
    exe.backward(nd.array(dy))
    np.testing.assert_allclose(grad.asnumpy(), want, rtol=1e-6)

    x = nd.array([BOXES, BOXES])
    x.attach_grad()
    with nv.autograd.record():
        y = nd.contrib.box_nms(x, overlap_thresh=0.5, id_index=0, force_suppress=True)
    y.backward(nd.array(dy))
    np.testing.assert_allclose(x.grad.asnumpy(), want, rtol=1e-6)


def test_box_nms_checks_its_columns() -> None:
    with pytest.raises(InferError, match="score_index=3 overlaps the coordinates"):
        nd.contrib.box_nms(nd.array(BOXES), score_index=3)
    with pytest.raises(InferError, match="expected at least 5"):
        nd.contrib.box_nms(nd.zeros((3, 4)))
    with pytest.raises(InferError, match="float16, float32 or float64"):
        nd.contrib.box_nms(nd.array(BOXES, dtype="int32"))


def test_box_iou_matches_the_documented_example_and_formats() -> None:
    x = nd.array([[0.5, 0.5, 1.0, 1.0], [0.0, 0.0, 0.5, 0.5]])
    y = nd.array([[0.25, 0.25, 0.75, 0.75]])
    got = nd.contrib.box_iou(x, y, format="corner")
    np.testing.assert_allclose(got.asnumpy(), [[1 / 7], [1 / 7]], rtol=1e-6)
    xc = nd.array([[0.75, 0.75, 0.5, 0.5], [0.25, 0.25, 0.5, 0.5]])
    yc = nd.array([[0.5, 0.5, 0.5, 0.5]])
    np.testing.assert_allclose(nd.contrib.box_iou(xc, yc, format="center").asnumpy(), got.asnumpy())
    far = nd.contrib.box_iou(x, nd.array([[5.0, 5.0, 6.0, 6.0]]))
    np.testing.assert_array_equal(far.asnumpy(), [[0.0], [0.0]])
    assert nd.contrib.box_iou(nd.zeros((2, 3, 4)), nd.zeros((5, 1, 4))).shape == (2, 3, 5, 1)
    with pytest.raises(InferError, match="last dimension must be 4"):
        nd.contrib.box_iou(nd.zeros((2, 3)), nd.zeros((2, 4)))


def test_bipartite_matching_examples_from_mxnet() -> None:
    s = [[0.5, 0.6], [0.1, 0.2], [0.3, 0.4]]
    for dtype in ["float16", "float32", "float64"]:
        rows, cols = nd.contrib.bipartite_matching(nd.array(s, dtype=dtype), threshold=1e-12)
        np.testing.assert_array_equal(rows.asnumpy(), [1, -1, 0])
        np.testing.assert_array_equal(cols.asnumpy(), [2, 0])
        assert rows.dtype == np.dtype(dtype)
        rows, cols = nd.contrib.bipartite_matching(
            nd.array(s, dtype=dtype), threshold=100, is_ascend=True
        )
        np.testing.assert_array_equal(rows.asnumpy(), [-1, 0, 1])
        np.testing.assert_array_equal(cols.asnumpy(), [1, 2])


def test_bipartite_matching_topk_stops_after_exceeding_it_as_mxnet() -> None:
    s = nd.array([[0.9, 0.1, 0.2], [0.3, 0.8, 0.4], [0.5, 0.6, 0.7]])
    rows, cols = nd.contrib.bipartite_matching(s, threshold=0.05, topk=1)
    np.testing.assert_array_equal(rows.asnumpy(), [0, 1, -1])
    np.testing.assert_array_equal(cols.asnumpy(), [0, 1, -1])
    rows, _ = nd.contrib.bipartite_matching(nd.array([[0.5, 0.5], [0.5, 0.5]]), threshold=0.1)
    np.testing.assert_array_equal(rows.asnumpy(), [0, 1])  # ties: input order


def test_multibox_target_matches_mxnet_values() -> None:
    anchors = nd.array([[0.1, 0.2, 0.3, 0.4], [0.5, 0.6, 0.7, 0.8]]).reshape((1, -1, 4))
    cls_pred = nd.array(list(range(10))).reshape((1, -1, 2))
    label = nd.array([1, 0.1, 0.1, 0.5, 0.6]).reshape((1, -1, 5))
    loc, mask, cls = nd.contrib.MultiBoxTarget(
        anchors,
        label,
        cls_pred,
        overlap_threshold=0.5,
        negative_mining_ratio=3,
        negative_mining_thresh=0.4,
    )
    # anchor 0: centre (0.2, 0.3), size 0.2; label: centre (0.3, 0.35), size (0.4, 0.5)
    want = [0.1 / 0.2 / 0.1, 0.05 / 0.2 / 0.1, np.log(2) / 0.2, np.log(2.5) / 0.2]
    np.testing.assert_allclose(loc.asnumpy(), [[*want, 0, 0, 0, 0]], rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(mask.asnumpy(), [[1, 1, 1, 1, 0, 0, 0, 0]])
    np.testing.assert_array_equal(cls.asnumpy(), [[2, 0]])


def test_multibox_target_ignores_and_mining_shortfall() -> None:
    anchors = nd.array([[[0, 0, 1, 1], [0, 0, 1, 0.9], [0, 0, 0.9, 1]]])
    label = nd.array([[[0, 0, 0, 1, 1]]])
    pred = nd.array(np.random.default_rng(0).random((1, 2, 3)))
    _, _, cls = nd.contrib.MultiBoxTarget(
        anchors, label, pred, overlap_threshold=0.95, ignore_label=-3, negative_mining_ratio=-1
    )
    np.testing.assert_array_equal(cls.asnumpy(), [[1, 0, 0]])
    none = nd.array([[[-1, -1, -1, -1, -1]]])
    _, mask, cls = nd.contrib.MultiBoxTarget(anchors, none, pred, ignore_label=-3)
    np.testing.assert_array_equal(cls.asnumpy(), [[-3, -3, -3]])
    assert not mask.asnumpy().any()
    with pytest.raises(NNVMError, match="wants 2 negatives but only 0"):
        nd.contrib.MultiBoxTarget(
            anchors,
            label,
            pred,
            overlap_threshold=0.95,
            negative_mining_ratio=3,
            negative_mining_thresh=0.1,
        )[0].asnumpy()
    with pytest.raises(InferError, match="'anchor' has shape"):
        nd.contrib.MultiBoxTarget(nd.zeros((2, 3, 4)), label, pred)


def test_multibox_prior_matches_mxnet_values() -> None:
    h, w = 561, 728
    x = nd.zeros((1, 3, h, w))
    y = nd.contrib.MultiBoxPrior(x, sizes=[0.75, 0.5, 0.25], ratios=[1, 2, 0.5])
    assert y.shape == (1, 2042040, 4)
    boxes = y.reshape((h, w, 5, 4)).asnumpy()
    np.testing.assert_allclose(
        boxes[250, 250, 0], [0.055117, 0.071524, 0.63307, 0.821524], atol=1e-5, rtol=1e-5
    )
    y = nd.contrib.MultiBoxPrior(x, sizes=[0.75, 0.5, 0.25], ratios=[20, 2, 0.5])
    boxes = y.reshape((h, w, 5, 4)).asnumpy()
    np.testing.assert_allclose(
        boxes[250, 250, 0], [-0.948249, 0.362671, 1.636436, 0.530377], atol=1e-5, rtol=1e-5
    )


def test_multibox_prior_steps_offsets_clip_and_errors() -> None:
    y = nd.contrib.MultiBoxPrior(
        nd.zeros((1, 1, 2, 3)), sizes=(0.5,), steps=(0.2, 0.3), offsets=(0.1, 0.4)
    )
    # cell (0, 0): centre (0.4 * 0.3, 0.1 * 0.2); half sizes (0.5 * 2 / 3 / 2, 0.25)
    np.testing.assert_allclose(
        y.asnumpy()[0, 0], [0.12 - 1 / 6, 0.02 - 0.25, 0.12 + 1 / 6, 0.27], rtol=1e-5, atol=1e-6
    )
    y = nd.contrib.MultiBoxPrior(nd.zeros((1, 1, 2, 3)), sizes=(0.9,), clip=True)
    assert y.asnumpy().min() >= 0
    assert y.asnumpy().max() <= 1
    with pytest.raises(InferError, match="expected 4-D"):
        nd.contrib.MultiBoxPrior(nd.zeros((2, 3, 4)))
    with pytest.raises(ParamError, match="'sizes' must hold at least one value, all > 0"):
        nd.contrib.MultiBoxPrior(nd.zeros((1, 1, 2, 2)), sizes=(0.5, -1.0))


def test_box_encode_and_decode_invert_each_other() -> None:
    anchors = nd.array([[[0.1, 0.1, 0.5, 0.7], [0.2, 0.3, 0.4, 0.9]]])
    refs = nd.array([[[0.15, 0.05, 0.55, 0.75]]])
    samples, matches = nd.array([[1, 0]]), nd.array([[0, 0]])
    means, stds = nd.array([0.0, 0.0, 0.0, 0.0]), nd.array([0.1, 0.1, 0.2, 0.2])
    targets, masks = nd.contrib.box_encode(samples, matches, anchors, refs, means, stds)
    np.testing.assert_array_equal(masks.asnumpy(), [[[1, 1, 1, 1], [0, 0, 0, 0]]])
    # anchor 0: centre (0.3, 0.4), size (0.4, 0.6); ref: centre (0.35, 0.4), size (0.4, 0.7)
    want = [0.05 / 0.4 / 0.1, 0.0, 0.0, np.log(0.7 / 0.6) / 0.2]
    np.testing.assert_allclose(targets.asnumpy()[0, 0], want, rtol=1e-5, atol=1e-6)
    assert not targets.asnumpy()[0, 1].any()
    back = nd.contrib.box_decode(
        targets[:, :1], anchors[:, :1], 0.1, 0.1, 0.2, 0.2, format="corner"
    )
    np.testing.assert_allclose(back.asnumpy()[0, 0], refs.asnumpy()[0, 0], rtol=1e-5, atol=1e-6)
    clipped = nd.contrib.box_decode(
        nd.array([[[0, 0, 5, 5]]]), nd.array([[[0, 0, 2, 2]]]), clip=np.log(2.0)
    )
    np.testing.assert_allclose(clipped.asnumpy(), [[[-2, -2, 2, 2]]], rtol=1e-6)


def test_multibox_detection_matches_mxnet_cpu_results() -> None:
    cls = nd.array([[[0.1, 0.7, 0.2, 0.05], [0.6, 0.2, 0.3, 0.05], [0.3, 0.1, 0.5, 0.9]]])
    anc = nd.array(
        [
            [
                [0.1, 0.1, 0.3, 0.3],
                [0.12, 0.1, 0.32, 0.3],
                [0.5, 0.5, 0.9, 0.9],
                [0.11, 0.1, 0.3, 0.3],
            ]
        ]
    )
    loc = nd.zeros((1, 16))
    a0, a1, a2, a3 = (
        [0.1, 0.1, 0.3, 0.3],
        [0.12, 0.1, 0.32, 0.3],
        [0.5, 0.5, 0.9, 0.9],
        [0.11, 0.1, 0.3, 0.3],
    )
    got = nd.contrib.MultiBoxDetection(cls, loc, anc).asnumpy()[0]
    want = [[1, 0.9, *a3], [0, 0.6, *a0], [1, 0.5, *a2], [-1, 0.2, *a1]]
    np.testing.assert_allclose(got, want, rtol=1e-6)
    # nms_topk: the rows after the first keep their unsorted contents, class -1
    got = nd.contrib.MultiBoxDetection(cls, loc, anc, nms_topk=1).asnumpy()[0]
    want = [[1, 0.9, *a3], [-1, 0.2, *a1], [-1, 0.5, *a2], [-1, 0.9, *a3]]
    np.testing.assert_allclose(got, want, rtol=1e-6)
    got = nd.contrib.MultiBoxDetection(cls, loc, anc, threshold=0.55).asnumpy()[0]
    np.testing.assert_allclose(got, [[1, 0.9, *a3], [0, 0.6, *a0], [-1] * 6, [-1] * 6], rtol=1e-6)
    got = nd.contrib.MultiBoxDetection(cls, loc, anc, nms_threshold=0).asnumpy()[0]
    want = [[0, 0.6, *a0], [0, 0.2, *a1], [1, 0.5, *a2], [1, 0.9, *a3]]  # anchor order
    np.testing.assert_allclose(got, want, rtol=1e-6)
    with pytest.raises(InferError, match="'cls_prob' has shape"):
        nd.contrib.MultiBoxDetection(nd.zeros((2, 3)), loc, anc)


@pytest.mark.parametrize(
    "make",
    [
        lambda x: nd.contrib.box_iou(x, x),
        lambda x: nd.contrib.bipartite_matching(x, threshold=0.1)[0],
        lambda x: nd.contrib.box_decode(x.reshape((1, 2, 4)), x.reshape((1, 2, 4))),
        lambda x: nd.contrib.MultiBoxPrior(x.reshape((1, 1, 2, 4))),
        lambda x: nd.contrib.MultiBoxDetection(
            x.reshape((1, 2, 4)), nd.zeros((1, 16)), nd.ones((1, 4, 4))
        ),
    ],
)
def test_contrib_box_ops_pass_zero_gradients(make: object) -> None:
    x = nd.array(np.random.default_rng(1).random((2, 4)) + np.array([0, 0, 1, 1]))
    x.attach_grad()
    with nv.autograd.record():
        y = make(x)  # type: ignore[operator]
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), np.zeros((2, 4)))


def test_contrib_quadratic_with_gradientmultiplier() -> None:
    """MXNet's test_gradient_multiplier_op: d/dx of m-scaled a x^2 + b x + c."""
    a, b, c, m = 0.3, 0.7, 0.2, -0.4
    x = np.random.default_rng(2).standard_normal((3, 4))
    s = nv.sym.contrib.gradientmultiplier(
        nv.sym.contrib.quadratic(nv.sym.Variable("data"), a=a, b=b, c=c), scalar=m
    )
    grad = nd.zeros((3, 4))
    exe = s.bind(nv.cpu(), args=[nd.array(x)], args_grad=[grad])
    out = exe.forward(is_train=True)[0]
    exe.backward(nd.ones((3, 4)))
    np.testing.assert_allclose(out.asnumpy(), a * x**2 + b * x + c, rtol=1e-5)
    np.testing.assert_allclose(grad.asnumpy(), (2 * a * x + b) * m, rtol=1e-5)
