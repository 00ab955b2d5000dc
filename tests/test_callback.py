"""nv.callback: MXNet 1.9.1's training callbacks — log formats, metric resets, checkpoints.

The expected log lines are MXNet's formats written out by hand; speeds come from a fake
clock, metric values from NumPy counts of correct predictions.
"""

from __future__ import annotations

import logging
import math

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy import nd
from nnvmpy.model import BatchEndParam


class FakeClock:
    """time.time() for the callback module: advances only when told to."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> FakeClock:
    fake = FakeClock()
    monkeypatch.setattr(nv.callback.time, "time", fake)
    return fake


def _messages(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records]


def _acc_batch(metric: nv.metric.EvalMetric, correct: int, total: int = 4) -> None:
    """Feed `metric` one batch of `total` samples, `correct` of them predicted right."""
    labels = np.zeros(total, dtype=np.float32)
    preds = np.zeros((total, 2), dtype=np.float32)
    preds[:correct, 0] = 1.0  # argmax 0 == label
    preds[correct:, 1] = 1.0
    metric.update([nd.array(labels)], [nd.array(preds)])


def test_batch_end_param_lives_where_mxnet_has_it() -> None:
    assert nv.model.BatchEndParam is nv.mod.BatchEndParam
    assert BatchEndParam._fields == ("epoch", "nbatch", "eval_metric", "locals")


def test_speedometer_logs_speed_and_resets_local_metric(
    caplog: pytest.LogCaptureFixture, clock: FakeClock
) -> None:
    caplog.set_level(logging.INFO)
    metric = nv.metric.Accuracy()
    speedo = nv.callback.Speedometer(batch_size=4, frequent=2)
    correct = [4, 2, 1, 3, 0]  # per batch, out of 4
    for nbatch, c in enumerate(correct):
        clock.now += 0.5  # each batch takes half a second
        _acc_batch(metric, c)
        speedo(BatchEndParam(0, nbatch, metric, None))
    # batch 0 starts the clock; batches 2 and 4 log 2 batches * 4 samples / 1 s
    assert _messages(caplog) == [
        f"Epoch[0] Batch [0-2]\tSpeed: 8.00 samples/sec\taccuracy={7 / 12:f}",
        f"Epoch[0] Batch [2-4]\tSpeed: 8.00 samples/sec\taccuracy={3 / 8:f}",
    ]
    # reset_local cleared the local totals after the last log; the global ones kept counting
    assert math.isnan(metric.get()[1])
    assert metric.get_global()[1] == pytest.approx(sum(correct) / 20)


def test_speedometer_without_auto_reset_reports_from_batch_zero(
    caplog: pytest.LogCaptureFixture, clock: FakeClock
) -> None:
    caplog.set_level(logging.INFO)
    metric = nv.metric.Accuracy()
    speedo = nv.callback.Speedometer(batch_size=10, frequent=3, auto_reset=False)
    for nbatch, c in enumerate([4, 0, 2, 2]):
        clock.now += 2.0
        _acc_batch(metric, c)
        speedo(BatchEndParam(3, nbatch, metric, None))
    assert _messages(caplog) == [
        f"Epoch[3] Batch [0-3]\tSpeed: 5.00 samples/sec\taccuracy={8 / 16:f}"
    ]
    assert metric.get()[1] == pytest.approx(8 / 16)  # nothing was reset


def test_speedometer_restarts_its_clock_each_epoch_and_handles_no_metric(
    caplog: pytest.LogCaptureFixture, clock: FakeClock
) -> None:
    caplog.set_level(logging.INFO)
    speedo = nv.callback.Speedometer(batch_size=2, frequent=1)
    for epoch in range(2):
        for nbatch in range(3):
            clock.now += 0.25
            speedo(BatchEndParam(epoch, nbatch, None, None))
    # nbatch going back to 0 starts a new epoch: batch 0 only restarts the clock
    assert _messages(caplog) == [
        f"Iter[{e}] Batch [{b}]\tSpeed: 8.00 samples/sec" for e in range(2) for b in (1, 2)
    ]
    speedo(BatchEndParam(2, 0, None, None))
    speedo(BatchEndParam(2, 1, None, None))  # no time has passed: infinite speed, no error
    assert _messages(caplog)[-1] == "Iter[2] Batch [1]\tSpeed: inf samples/sec"


def test_speedometer_logs_every_value_of_a_composite_metric(
    caplog: pytest.LogCaptureFixture, clock: FakeClock
) -> None:
    caplog.set_level(logging.INFO)
    metric = nv.metric.create(["acc", "ce"])
    speedo = nv.callback.Speedometer(batch_size=1, frequent=1)
    labels = [nd.array([0.0, 1.0])]
    preds = [nd.array([[0.75, 0.25], [0.5, 0.5]])]
    speedo(BatchEndParam(0, 0, metric, None))
    clock.now += 1.0
    metric.update(labels, preds)
    speedo(BatchEndParam(0, 1, metric, None))
    ce = -(np.log(0.75) + np.log(0.5)) / 2
    assert _messages(caplog) == [
        f"Epoch[0] Batch [0-1]\tSpeed: 1.00 samples/sec\taccuracy={0.5:f}\tcross-entropy={ce:f}"
    ]


def test_log_train_metric_every_period(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    metric = nv.metric.Accuracy()
    cb = nv.callback.log_train_metric(2, auto_reset=True)
    for nbatch, c in enumerate([1, 3, 4]):
        _acc_batch(metric, c)
        cb(BatchEndParam(5, nbatch, metric, None))
    assert _messages(caplog) == [
        f"Iter[5] Batch[0] Train-accuracy={0.25:f}",
        f"Iter[5] Batch[2] Train-accuracy={7 / 8:f}",  # reset after batch 0
    ]
    cb(BatchEndParam(5, 4, None, None))  # no metric: nothing to log
    assert len(caplog.records) == 2


def test_progress_bar_output(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    bar = nv.callback.ProgressBar(total=3, length=10)
    for nbatch in (1, 2, 3):
        bar(BatchEndParam(0, nbatch, None, None))
    assert _messages(caplog) == [
        "[===-------] 34%\r",  # round(10/3) = 3 filled, ceil(33.3) = 34
        "[=======---] 67%\r",
        "[==========] 100%\r",
    ]
    with pytest.raises(nv.NNVMError, match="ProgressBar: total"):
        nv.callback.ProgressBar(total=0)


def test_log_validation_metrics(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    metric = nv.metric.Accuracy()
    _acc_batch(metric, 3)
    nv.callback.LogValidationMetricsCallback()(BatchEndParam(7, 1, metric, None))
    nv.callback.LogValidationMetricsCallback()(BatchEndParam(7, 1, None, None))
    assert _messages(caplog) == [f"Epoch[7] Validation-accuracy={0.75:f}"]


def _net() -> nv.sym.Symbol:
    fc = nv.sym.FullyConnected(nv.sym.Variable("data"), num_hidden=2, name="fc")
    return nv.sym.SoftmaxOutput(fc, name="softmax")


def test_do_checkpoint_round_trips_through_load_checkpoint_and_module_load(
    tmp_path: object, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    prefix = str(tmp_path / "net")  # type: ignore[operator]
    rng = np.random.default_rng(0)
    w = rng.standard_normal((2, 3)).astype(np.float32)
    b = rng.standard_normal(2).astype(np.float32)
    cb = nv.callback.do_checkpoint(prefix, period=2)
    cb(0, _net(), {"fc_weight": nd.array(w), "fc_bias": nd.array(b)}, {})
    assert not (tmp_path / "net-0001.params").exists()  # type: ignore[operator]
    cb(1, _net(), {"fc_weight": nd.array(w), "fc_bias": nd.array(b)}, {})
    assert _messages(caplog) == [f'Saved checkpoint to "{prefix}-0002.params"']

    sym, arg, aux = nv.model.load_checkpoint(prefix, 2)
    assert sym.list_arguments() == _net().list_arguments()
    np.testing.assert_array_equal(arg["fc_weight"].asnumpy(), w)
    np.testing.assert_array_equal(arg["fc_bias"].asnumpy(), b)
    assert aux == {}

    mod = nv.mod.Module.load(prefix, 2)
    mod.bind(data_shapes=[("data", (4, 3))], for_training=False)
    x = rng.standard_normal((4, 3)).astype(np.float32)
    mod.forward(nv.io.DataBatch([nd.array(x)]), is_train=False)
    logits = x @ w.T + b
    expect = np.exp(logits - logits.max(1, keepdims=True))
    expect /= expect.sum(1, keepdims=True)
    np.testing.assert_allclose(mod.get_outputs()[0].asnumpy(), expect, rtol=1e-5)


def test_module_checkpoint_numbers_files_by_finished_epochs() -> None:
    calls = []

    class Recorder:
        def save_checkpoint(self, prefix: str, epoch: int, states: bool) -> None:
            calls.append((prefix, epoch, states))

    cb = nv.callback.module_checkpoint(Recorder(), "p", period=0, save_optimizer_states=True)
    for epoch in range(3):
        cb(epoch)  # period 0 clamps to 1, as MXNet does
    assert calls == [("p", 1, True), ("p", 2, True), ("p", 3, True)]
    with pytest.raises(nv.NNVMError, match="do_checkpoint: period"):
        nv.callback.do_checkpoint("p", period="often")


def test_fit_drives_the_callbacks_as_mxnet_does(
    tmp_path: object, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    rng = np.random.default_rng(1)
    x = rng.random((12, 3)).astype(np.float32)
    y = (x.sum(1) > 1.5).astype(np.float32)
    it = nv.io.NDArrayIter(x, y, batch_size=4)
    prefix = str(tmp_path / "fit")  # type: ignore[operator]
    global_at_last_batch: list[list[tuple[str, float]]] = []
    ends: list[BatchEndParam] = []

    def last_batch(param: BatchEndParam) -> None:
        if param.nbatch == 2:
            global_at_last_batch.append(param.eval_metric.get_global_name_value())

    mod = nv.mod.Module(_net(), context=nv.cpu())
    mod.fit(
        it,
        eval_data=it,
        num_epoch=2,
        batch_end_callback=[last_batch, nv.callback.Speedometer(4, 1)],
        eval_end_callback=ends.append,
        epoch_end_callback=nv.callback.do_checkpoint(prefix),
    )
    train_lines = [m for m in _messages(caplog) if "Train-accuracy" in m]
    # Speedometer's reset_local must not blank the epoch summary: it shows the global value
    assert train_lines == [
        f"Epoch[{e}] Train-accuracy={g[0][1]:f}" for e, g in enumerate(global_at_last_batch)
    ]
    assert [(p.epoch, p.nbatch) for p in ends] == [(0, 3), (1, 3)]  # nbatch: batches scored
    assert isinstance(ends[0], BatchEndParam)
    _, arg, _ = nv.model.load_checkpoint(prefix, 2)
    final, _ = mod.get_params()
    np.testing.assert_array_equal(arg["fc_weight"].asnumpy(), final["fc_weight"].asnumpy())


def test_callbacks_see_the_batch_under_mxnets_local_names() -> None:
    """MXNet's fit names its batch `data_batch` and score `eval_batch`; callbacks written
    for MXNet read them from BatchEndParam.locals."""
    rng = np.random.default_rng(2)
    x = rng.random((8, 3)).astype(np.float32)
    y = (x.sum(1) > 1.5).astype(np.float32)
    it = nv.io.NDArrayIter(x, y, batch_size=4)
    seen: dict[str, list[tuple[int, ...]]] = {"train": [], "eval": []}

    def train_cb(param: BatchEndParam) -> None:
        seen["train"].append(tuple(param.locals["data_batch"].data[0].shape))

    def eval_cb(param: BatchEndParam) -> None:
        seen["eval"].append(tuple(param.locals["eval_batch"].data[0].shape))

    mod = nv.mod.Module(_net(), context=nv.cpu())
    mod.fit(it, eval_data=it, num_epoch=1, batch_end_callback=train_cb,
            eval_batch_end_callback=eval_cb)  # fmt: skip
    assert seen == {"train": [(4, 3), (4, 3)], "eval": [(4, 3), (4, 3)]}
