"""nv.metric against NumPy formulas."""

from __future__ import annotations

import math

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy.base import NNVMError, ParamError


def test_accuracy_topk_and_cross_entropy() -> None:
    prob = np.array([[0.1, 0.7, 0.2], [0.5, 0.3, 0.2], [0.2, 0.3, 0.5], [0.6, 0.3, 0.1]])
    label = np.array([1, 1, 2, 2])
    acc = nv.metric.create("acc")
    acc.update([nv.nd.array(label)], [nv.nd.array(prob)])
    assert acc.get() == ("accuracy", pytest.approx(0.5))
    top2 = nv.metric.TopKAccuracy(top_k=2)
    top2.update([label], [prob])
    assert top2.get()[1] == pytest.approx(0.75)
    ce = nv.metric.create("ce")
    ce.update([label], [prob])
    want = -np.mean(np.log(prob[np.arange(4), label] + 1e-12))
    assert ce.get()[1] == pytest.approx(want)
    ppl = nv.metric.Perplexity(ignore_label=None)
    ppl.update([label], [prob])
    assert ppl.get()[1] == pytest.approx(math.exp(want))


def test_regression_metrics_and_composites() -> None:
    label, pred = np.array([1.0, 2.0, 3.0]), np.array([1.5, 2.0, 2.0])
    comp = nv.metric.create(["mae", "mse", "rmse"])
    comp.update([label], [pred])
    names, values = comp.get()
    assert names == ["mae", "mse", "rmse"]
    err = label - pred
    np.testing.assert_allclose(
        values, [np.abs(err).mean(), (err**2).mean(), np.sqrt((err**2).mean())]
    )
    custom = nv.metric.np(lambda lb, p: float(np.max(np.abs(lb - p))), name="maxerr")
    custom.update([label], [pred])
    assert custom.get() == ("maxerr", 1.0)


def test_bad_input_is_named() -> None:
    with pytest.raises(ParamError, match=r"metric.create: unknown metric 'accu'"):
        nv.metric.create("accu")
    acc = nv.metric.Accuracy()
    with pytest.raises(NNVMError, match=r"Accuracy: 2 label arrays but 1 prediction"):
        acc.update([np.zeros(2), np.zeros(2)], [np.zeros((2, 2))])
    assert math.isnan(acc.get()[1])


def _f1_by_formula(label: np.ndarray, pred_class: np.ndarray) -> float:
    tp = np.sum((pred_class == 1) & (label == 1))
    precision = tp / max(np.sum(pred_class == 1), 1)
    recall = tp / max(np.sum(label == 1), 1)
    return 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)


def test_f1_macro_averages_batches_and_micro_pools_them() -> None:
    rng = np.random.default_rng(0)
    batches = [(rng.integers(0, 2, 8), rng.random((8, 2))) for _ in range(3)]
    macro, micro = nv.metric.create("f1"), nv.metric.F1(average="micro")
    for label, prob in batches:
        macro.update([nv.nd.array(label)], [nv.nd.array(prob)])
        micro.update([label], [prob])
    per_batch = [_f1_by_formula(lb, p.argmax(1)) for lb, p in batches]
    assert macro.get() == ("f1", pytest.approx(np.mean(per_batch)))
    all_label = np.concatenate([lb for lb, _ in batches])
    all_pred = np.concatenate([p.argmax(1) for _, p in batches])
    assert micro.get()[1] == pytest.approx(_f1_by_formula(all_label, all_pred))
    micro.reset()
    assert math.isnan(micro.get()[1])
    with pytest.raises(NNVMError, match=r"F1: labels must be 0 or 1"):
        macro.update([np.array([0, 2])], [np.zeros((2, 2))])
    with pytest.raises(ParamError, match=r"F1: average must be"):
        nv.metric.F1(average="weighted")


def test_loss_custom_metric_and_name_values() -> None:
    out = np.array([[0.5, 1.5], [2.0, 4.0]])
    loss = nv.metric.create("loss")
    loss.update(None, [nv.nd.array(out)])
    assert loss.get_name_value() == [("loss", pytest.approx(out.mean()))]

    def summed_abs(label: np.ndarray, pred: np.ndarray) -> tuple[float, int]:
        return float(np.abs(label - pred).sum()), label.size

    custom = nv.metric.create(summed_abs)
    label, pred = np.array([1.0, 2.0, 4.0]), np.array([0.0, 2.0, 2.0])
    custom.update([label], [pred])
    assert custom.get() == ("summed_abs", pytest.approx(np.abs(label - pred).mean()))
