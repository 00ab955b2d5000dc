"""nv.metric's MXNet 1.x surface: registry/config round trips, global vs local statistics,
and the metrics MCC, PCC, PearsonCorrelation, NegativeLogLikelihood, against formulas."""

from __future__ import annotations

import copy
import json
import math

import numpy as np
import pytest
from scipy import stats

import nnvmpy as nv
from nnvmpy.base import ParamError


def _cls_batch(rng: np.random.Generator, n: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    return rng.integers(0, k, n), rng.random((n, k))


@pytest.mark.parametrize(
    ("spec", "args", "kwargs"),
    [
        ("acc", (), {"axis": 0}),
        ("f1", (), {"average": "micro"}),
        ("mcc", (), {}),
        ("perplexity", (-1,), {}),
        ("pearsonr", (), {}),
        ("pcc", (), {}),
        ("nll_loss", (), {}),
        ("loss", (), {}),
        ("top_k_acc", (), {"top_k": 3}),
        (["acc", "f1"], (), {}),
    ],
)
def test_get_config_json_round_trip(spec: object, args: tuple, kwargs: dict) -> None:
    metric = nv.metric.create(spec, *args, **kwargs)
    config = metric.get_config()
    again = nv.metric.create(json.dumps(config))
    assert type(again) is type(metric)
    assert again.get_config() == config
    assert nv.metric.create(config).get_config() == config
    assert nv.metric.create(**config).get_config() == config


def test_registry_names_and_user_registration() -> None:
    expect = {
        "composite": "CompositeEvalMetric",
        "acc": "Accuracy",
        "top_k_accuracy": "TopKAccuracy",
        "mcc": "MCC",
        "nll_loss": "NegativeLogLikelihood",
        "negativeloglikelihood": "NegativeLogLikelihood",
        "pearsonr": "PearsonCorrelation",
        "pcc": "PCC",
        "ce": "CrossEntropy",
        "torch": "Torch",
        "caffe": "Caffe",
    }
    for name, cls in expect.items():
        assert type(nv.metric.create(name)).__name__ == cls
    assert nv.metric.create("Torch").name == "torch"

    @nv.metric.register
    @nv.metric.alias("maxerr_test_alias")
    class MaxErrTest(nv.metric.EvalMetric):
        def __init__(self, name: str = "maxerr") -> None:
            super().__init__(name, has_global_stats=True)

        def update(self, labels: object, preds: object) -> None:
            for lb, p in zip(labels, preds):
                self._add(float(np.max(np.abs(np.asarray(lb) - np.asarray(p)))), 1)

    m = nv.metric.create("maxerr_test_alias")
    assert isinstance(nv.metric.create("maxerrtest"), MaxErrTest)
    m.update([np.array([1.0, 2.0])], [np.array([1.5, 4.0])])
    assert m.get() == ("maxerr", 2.0)
    inst = nv.metric.Accuracy()
    assert nv.metric.create(inst) is inst
    with pytest.raises(ParamError, match="already an instance"):
        nv.metric.create(inst, axis=0)
    with pytest.raises(NotImplementedError, match="cannot be serialized"):
        nv.metric.create(lambda lb, p: 0.0).get_config()


@pytest.mark.parametrize(
    ("spec", "kwargs", "regression"),
    [
        ("acc", {}, False),
        ("top_k_accuracy", {"top_k": 2}, False),
        ("f1", {}, False),
        ("f1", {"average": "micro"}, False),
        ("mcc", {"average": "micro"}, False),
        ("perplexity", {"ignore_label": None}, False),
        ("ce", {}, False),
        ("nll_loss", {}, False),
        ("pcc", {}, False),
        ("mse", {}, True),
        ("pearsonr", {}, True),
        ("loss", {}, True),
    ],
)
def test_reset_local_keeps_global_statistics(spec: str, kwargs: dict, regression: bool) -> None:
    rng = np.random.default_rng(1)
    k = 2 if spec in ("f1", "mcc") else 4
    local = nv.metric.create(spec, **kwargs)
    whole = copy.deepcopy(local)
    for _ in range(4):
        if regression:
            label, pred = rng.random((5, 3)), rng.random((5, 3))
        else:
            label, pred = _cls_batch(rng, 12, k)
        local.update([nv.nd.array(label)], [nv.nd.array(pred)])
        whole.update([nv.nd.array(label)], [nv.nd.array(pred)])
        last = copy.deepcopy(local)
        local.reset_local()
    assert local.get_global() == pytest.approx(whole.get(), nan_ok=True)
    assert local.get_global_name_value() == [whole.get()]
    assert math.isnan(local.get()[1])
    fresh = nv.metric.create(spec, **kwargs)
    fresh.update([nv.nd.array(label)], [nv.nd.array(pred)])
    assert last.get() == pytest.approx(fresh.get(), nan_ok=True)
    local.reset()
    assert math.isnan(local.get_global()[1])


def test_nll_loss_and_single_array_inputs() -> None:
    prob = np.array([[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]], dtype=np.float32)
    label = np.array([2, 1])
    nll = nv.metric.create("nll_loss")
    nll.update([nv.nd.array(label)], [nv.nd.array(prob)])
    assert nll.get() == ("nll-loss", pytest.approx(-np.mean(np.log([0.5, 0.1]))))
    pred = np.array([[1.0, 2.0, 3.0, 4.0]])
    mse = nv.metric.create("mse")
    mse.update(nv.nd.array(pred + 0.5), nv.nd.array(pred))  # one array, not a list
    assert mse.get()[1] == pytest.approx(0.25)
    assert mse.num_inst == 1
    loss = nv.metric.Loss()
    loss.update(None, nv.nd.array(pred))
    assert loss.get()[1] == pytest.approx(2.5)
    assert loss.num_inst == 4
    with pytest.raises(ParamError, match=r"MSE: 2 label arrays but 1 prediction arrays"):
        mse.update([pred, pred], [pred])


def _binary_counts(label: np.ndarray, pred_class: np.ndarray) -> tuple[int, int, int, int]:
    tp = int(np.sum((pred_class == 1) & (label == 1)))
    fp = int(np.sum((pred_class == 1) & (label == 0)))
    fn = int(np.sum((pred_class == 0) & (label == 1)))
    tn = int(np.sum((pred_class == 0) & (label == 0)))
    return tp, fp, fn, tn


def _mcc_formula(tp: int, fp: int, fn: int, tn: int) -> float:
    denom = (tp + fp) * (tp + fn) * (tn + fp) * (tn + fn)
    return (tp * tn - fp * fn) / math.sqrt(denom)


def test_mcc_macro_and_micro_against_formula() -> None:
    rng = np.random.default_rng(2)
    calls = [[_cls_batch(rng, 9, 2), _cls_batch(rng, 7, 2)] for _ in range(3)]
    macro, micro = nv.metric.create("mcc"), nv.metric.MCC(average="micro")
    assert math.isnan(macro.get()[1])
    per_call = []
    for pairs in calls:
        labels = [nv.nd.array(lb) for lb, _ in pairs]
        preds = [nv.nd.array(p) for _, p in pairs]
        macro.update(labels, preds)
        micro.update(labels, preds)
        lb = np.concatenate([lb for lb, _ in pairs])
        pc = np.concatenate([p.argmax(1) for _, p in pairs])
        per_call.append(_mcc_formula(*_binary_counts(lb, pc)))
    assert macro.num_inst == 3  # one instance per update() call
    assert macro.get() == ("mcc", pytest.approx(np.mean(per_call)))
    all_lb = np.concatenate([lb for pairs in calls for lb, _ in pairs])
    all_pc = np.concatenate([p.argmax(1) for pairs in calls for _, p in pairs])
    assert micro.num_inst == all_lb.size
    assert micro.get()[1] == pytest.approx(_mcc_formula(*_binary_counts(all_lb, all_pc)))
    # a degenerate batch (all predicted and labelled negative): 0, not a division by zero
    degenerate = nv.metric.MCC()
    degenerate.update([np.zeros(2)], [np.array([[0.9, 0.1], [0.8, 0.2]])])
    assert degenerate.get()[1] == 0.0
    with pytest.raises(ParamError, match="MCC: average must be"):
        nv.metric.MCC(average="weighted")


def test_pearsonr_macro_and_micro_against_corrcoef() -> None:
    rng = np.random.default_rng(3)
    pairs = [(rng.random((3, 2)), rng.random((3, 2)) * 5) for _ in range(4)]
    macro = nv.metric.create("pearsonr")
    micro = nv.metric.PearsonCorrelation(average="micro")
    for lb, p in pairs:
        macro.update([nv.nd.array(lb)], [nv.nd.array(p)])
        micro.update([lb], [p])
    per = [np.corrcoef(p.ravel(), lb.ravel())[0, 1] for lb, p in pairs]
    assert macro.get()[1] == pytest.approx(np.mean(per), rel=1e-6)
    all_lb = np.concatenate([lb.ravel() for lb, _ in pairs])
    all_p = np.concatenate([p.ravel() for _, p in pairs])
    assert micro.get()[1] == pytest.approx(stats.pearsonr(all_p, all_lb)[0], rel=1e-12)
    with pytest.raises(ParamError, match="PearsonCorrelation: labels of shape"):
        micro.update([np.zeros(3)], [np.zeros(4)])


def _gorodkin(cm: np.ndarray) -> float:
    """R_K of a KxK confusion matrix, summed term by term (Gorodkin 2004)."""
    k = cm.shape[0]
    num = sum(
        cm[a, a] * cm[b, c] - cm[a, b] * cm[c, a]
        for a in range(k)
        for b in range(k)
        for c in range(k)
    )
    rows = sum(cm[a, :].sum() * (cm.sum() - cm[a, :].sum()) for a in range(k))
    cols = sum(cm[:, a].sum() * (cm.sum() - cm[:, a].sum()) for a in range(k))
    return num / math.sqrt(rows * cols)


def test_pcc_multiclass_grows_and_matches_reference() -> None:
    rng = np.random.default_rng(4)
    label = rng.integers(0, 5, 60)
    pred = np.where(rng.random(60) < 0.6, label, rng.integers(0, 5, 60))
    cm = np.zeros((5, 5))
    np.add.at(cm, (label, pred), 1)
    pcc = nv.metric.create("pcc")
    for i in range(0, 60, 7):  # order / batch size / update frequency do not matter
        pcc.update([nv.nd.array(label[i : i + 7])], [nv.nd.array(np.eye(5)[pred[i : i + 7]])])
    assert pcc.k == 5
    assert pcc.get()[1] == pytest.approx(_gorodkin(cm))
    once = nv.metric.PCC()
    once.update([label], [pred])  # class indices shaped like the labels
    assert once.get()[1] == pytest.approx(_gorodkin(cm))
    # binary: PCC is the MCC
    lb2, p2 = _cls_batch(rng, 30, 2)
    pcc2, mcc2 = nv.metric.PCC(), nv.metric.MCC()
    pcc2.update([lb2], [p2])
    mcc2.update([lb2], [p2])
    assert pcc2.get()[1] == pytest.approx(mcc2.get()[1])


def test_f1_counts_update_calls_for_macro_and_examples_for_micro() -> None:
    pred = np.array([[0.1, 0.9], [0.5, 0.5]])
    macro, micro = nv.metric.F1(average="macro"), nv.metric.F1(average="micro")
    for m in (macro, micro):
        m.update([np.array([1, 0]), np.array([1, 0])], [pred, pred[::-1]])
    assert macro.num_inst == 1
    assert micro.num_inst == 4


def test_custom_metric_names_follow_the_function() -> None:
    def summed(label: np.ndarray, pred: np.ndarray) -> float:
        return float(np.sum(label - pred))

    assert nv.metric.create(summed).name == "summed"
    assert nv.metric.create(lambda lb, p: 0.0).name == "custom(<lambda>)"
    assert nv.metric.CustomMetric(summed, name="s").name == "s"
    extra = nv.metric.CustomMetric(summed, allow_extra_outputs=True)
    extra.update([np.ones(2)], [np.zeros(2), np.zeros(3)])  # the extra output is skipped
    assert extra.get()[1] == 2.0
