"""Proposal / MultiProposal's device path (ops/_proposal_device.py: parallel suppression
over overlap words) against the CPU's (contrib_proposal.multi_proposal_np: the same
decode kernel, then the host's ranking and greedy NMS; the op table checks both against
a plain float64 reference): images through the device kernels on the CPU (results
bitwise equal), and the ops on the GPU, with images smaller than the feature map, tiny
boxes, few survivors (cyclic padding), write / add requests and the error for an image
too large."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy.engine.base import RunContext
from nnvmpy.kernel.launch import ADD, WRITE
from nnvmpy.ops import _proposal_device
from nnvmpy.ops.contrib_proposal import ProposalParam, base_anchors, multi_proposal_np
from nnvmpy.resource import OpContext

OP = "_contrib_MultiProposal"


def _inputs(rng: np.random.Generator, n: int, h: int, w: int, num: int) -> list[np.ndarray]:
    cls = rng.uniform(0, 1, (n, 2 * num, h, w)).astype(np.float32)
    cls[:, num:] = np.round(cls[:, num:], 2)  # equal scores: ranked by anchor order
    deltas = rng.normal(0, 0.3, (n, 4 * num, h, w)).astype(np.float32)
    info = np.array([[h * 16 - 20, w * 16, 1.0], [h * 16, w * 16 - 40, 0.5]][:n], np.float32)
    return [cls, deltas, info]


def _params(**kw: Any) -> ProposalParam:
    base = {"scales": "(2, 4)", "ratios": "(0.5, 1, 2)", "feature_stride": 16,
            "rpn_min_size": 8, "rpn_pre_nms_top_n": 40, "rpn_post_nms_top_n": 12,
            "threshold": 0.5}  # fmt: skip
    return ProposalParam.parse({**base, **kw})


def _run_kernels(p: ProposalParam, inputs: list[np.ndarray], modes: list[int],
                 start: float) -> list[np.ndarray]:  # fmt: skip
    n, post = inputs[0].shape[0], p.rpn_post_nms_top_n
    outs = [np.full((n * post, 5), start, np.float32), np.full((n * post, 1), start, np.float32)]
    ctx = OpContext(False, RunContext(nv.cpu()), [])
    anchors = base_anchors(p.feature_stride, p.scales, p.ratios)
    _proposal_device.multi_proposal(ctx, OP, p, anchors, inputs, outs, modes)
    return outs


@pytest.mark.parametrize(
    "kw",
    [
        {},
        {"iou_loss": True},
        {"rpn_pre_nms_top_n": -1, "threshold": 0.3},
        {"rpn_post_nms_top_n": 200},  # fewer survivors: the kept boxes repeat cyclically
        {"rpn_min_size": 60},  # most boxes too small: grown and scored -1
    ],
)
def test_kernels_match_the_host(kw: dict[str, Any]) -> None:
    rng = np.random.default_rng(0)
    p = _params(**kw)
    inputs = _inputs(rng, 2, 4, 5, 6)
    want_rois, want_scores = multi_proposal_np(OP, p, *inputs)
    rois, scores = _run_kernels(p, inputs, [WRITE, ADD], 0.5)
    np.testing.assert_array_equal(rois, want_rois)
    np.testing.assert_array_equal(scores, np.float32(0.5) + want_scores)


def test_image_larger_than_the_feature_map_is_an_error() -> None:
    rng = np.random.default_rng(1)
    inputs = _inputs(rng, 1, 3, 3, 6)
    inputs[2][0, 0] = 16 * 5
    with pytest.raises(nv.NNVMError, match=r"covers 5 x 3 cells; the feature map has only 3 x 3"):
        _run_kernels(_params(), inputs, [WRITE, WRITE], 0.0)


@pytest.mark.gpu
@pytest.mark.parametrize("kw", [{}, {"iou_loss": True, "rpn_post_nms_top_n": 50}])
def test_op_on_the_gpu_matches_the_host(kw: dict[str, Any]) -> None:
    """Decisions (rank, IoU > threshold) match the host; coordinates to float32 rounding
    (a GPU's expf may differ from the C library's in the last bit)."""
    rng = np.random.default_rng(2)
    p = _params(**kw)
    inputs = _inputs(rng, 2, 3, 4, 6)
    want_rois, want_scores = multi_proposal_np(OP, p, *inputs)
    ctx = nv.gpu(0)
    rois, scores = nv.nd.contrib.MultiProposal(
        *(nv.nd.array(a, ctx=ctx) for a in inputs), output_score=True,
        scales=(2, 4), ratios=(0.5, 1, 2), rpn_min_size=8, rpn_pre_nms_top_n=40,
        **{"rpn_post_nms_top_n": 12, "threshold": 0.5, **kw},
    )  # fmt: skip
    np.testing.assert_allclose(rois.asnumpy(), want_rois, rtol=1e-5, atol=1e-3)
    np.testing.assert_array_equal(scores.asnumpy(), want_scores)
