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
