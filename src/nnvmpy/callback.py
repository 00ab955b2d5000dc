"""nv.callback: MXNet 1.x's training callbacks for Module.fit / Module.score.

Two calling conventions, as in MXNet:

- batch-end callbacks (`batch_end_callback=`, `eval_batch_end_callback=`,
  `eval_end_callback=`) get one `nv.model.BatchEndParam(epoch, nbatch, eval_metric, locals)`;
- epoch-end callbacks (`epoch_end_callback=`) get `(epoch, symbol, arg_params, aux_params)`.

Everything is reported through the `logging` module's root logger, with MXNet's message
formats, so logs that tools scrape from MXNet runs read the same here.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable
from typing import Any

from .base import ParamError

_EpochEndCallback = Callable[..., None]


def _period(name: str, period: Any) -> int:
    """MXNet clamps the checkpoint period to at least 1; anything non-numeric is an error."""
    try:
        return int(max(1, period))
    except (TypeError, ValueError):
        raise ParamError(f"callback.{name}: period must be an integer, got {period!r}") from None


def module_checkpoint(
    mod: Any, prefix: str, period: int = 1, save_optimizer_states: bool = False
) -> _EpochEndCallback:
    """Epoch-end callback: `mod.save_checkpoint(prefix, epoch + 1, ...)` every `period` epochs.

    The file number is the count of finished epochs (epoch 0 ends -> `prefix-0001.params`).
    """
    every = _period("module_checkpoint", period)

    def _callback(iter_no: int, sym: Any = None, arg: Any = None, aux: Any = None) -> None:
        if (iter_no + 1) % every == 0:
            mod.save_checkpoint(prefix, iter_no + 1, save_optimizer_states)

    return _callback


def do_checkpoint(prefix: str, period: int = 1) -> _EpochEndCallback:
    """Epoch-end callback: `nv.model.save_checkpoint` every `period` epochs.

    Writes `prefix-symbol.json` and `prefix-%04d.params` numbered by finished epochs, the
    files `nv.model.load_checkpoint` and `Module.load` read back.
    """
    from nnvmpy.model import save_checkpoint

    every = _period("do_checkpoint", period)

    def _callback(iter_no: int, sym: Any, arg: Any, aux: Any) -> None:
        if (iter_no + 1) % every == 0:
            save_checkpoint(prefix, iter_no + 1, sym, arg, aux)

    return _callback


def log_train_metric(period: int, auto_reset: bool = False) -> Callable[[Any], None]:
    """Batch-end callback: log `Iter[e] Batch[n] Train-<name>=<value>` every `period` batches.

    With `auto_reset` the metric's local totals are cleared after each log
    (`eval_metric.reset_local()`); the global totals keep counting for the epoch summary.
    """

    def _callback(param: Any) -> None:
        metric = param.eval_metric
        if param.nbatch % period != 0 or metric is None:
            return
        for name, value in metric.get_name_value():
            logging.info("Iter[%d] Batch[%d] Train-%s=%f", param.epoch, param.nbatch, name, value)
        if auto_reset:
            metric.reset_local()

    return _callback


class Speedometer:
    """Batch-end callback: log samples/sec and the metric every `frequent` batches.

    The first call of an epoch (nbatch going back to a smaller value restarts it) only starts
    the clock; from then on, every batch whose `nbatch` is a multiple of `frequent` logs

        Epoch[e] Batch [a-b]\\tSpeed: <s> samples/sec\\t<name>=<value>...

    where the speed is `frequent * batch_size` over the seconds since the previous log. With
    `auto_reset` (the default) the metric's local totals are cleared after each log, so each
    line shows the batches `a..b` only; without it the line reads `Batch [0-b]` and the values
    run from the start of the epoch. Without a metric the line is
    `Iter[e] Batch [b]\\tSpeed: <s> samples/sec`.
    """

    def __init__(self, batch_size: int, frequent: int = 50, auto_reset: bool = True) -> None:
        self.batch_size = batch_size
        self.frequent = frequent
        self.auto_reset = auto_reset
        self.init = False  # has the clock been started for this epoch?
        self.tic = 0.0
        self.last_count = 0

    def __call__(self, param: Any) -> None:
        count = param.nbatch
        if count < self.last_count:  # a new epoch (or a new score pass) began
            self.init = False
        self.last_count = count
        if not self.init:
            self.init = True
            self.tic = time.time()
            return
        if count % self.frequent != 0:
            return
        elapsed = time.time() - self.tic
        speed = self.frequent * self.batch_size / elapsed if elapsed else float("inf")
        metric = param.eval_metric
        if metric is None:
            logging.info("Iter[%d] Batch [%d]\tSpeed: %.2f samples/sec", param.epoch, count, speed)
        else:
            name_value = metric.get_name_value()
            pairs = [item for pair in name_value for item in pair]
            fields = "\t%s=%f" * len(name_value)
            if self.auto_reset:
                metric.reset_local()
                logging.info(
                    "Epoch[%d] Batch [%d-%d]\tSpeed: %.2f samples/sec" + fields,
                    param.epoch,
                    count - self.frequent,
                    count,
                    speed,
                    *pairs,
                )
            else:
                logging.info(
                    "Epoch[%d] Batch [0-%d]\tSpeed: %.2f samples/sec" + fields,
                    param.epoch,
                    count,
                    speed,
                    *pairs,
                )
        self.tic = time.time()


class ProgressBar:
    """Batch-end callback: log a `length`-character bar of the batches done out of `total`.

    `[=====-----] 50%` — `round(length * nbatch / total)` '=' characters, the percentage
    rounded up, logged with a trailing carriage return as MXNet does.
    """

    def __init__(self, total: int, length: int = 80) -> None:
        if not total:
            raise ParamError(f"callback.ProgressBar: total must be a positive count, got {total!r}")
        self.bar_len = length
        self.total = total

    def __call__(self, param: Any) -> None:
        fraction = param.nbatch / float(self.total)
        filled = round(self.bar_len * fraction)
        percents = math.ceil(100.0 * fraction)
        bar = "=" * filled + "-" * (self.bar_len - filled)
        logging.info("[%s] %s%s\r", bar, percents, "%")


class LogValidationMetricsCallback:
    """Eval-end callback: log `Epoch[e] Validation-<name>=<value>` for each metric value."""

    def __call__(self, param: Any) -> None:
        if not param.eval_metric:
            return
        for name, value in param.eval_metric.get_name_value():
            logging.info("Epoch[%d] Validation-%s=%f", param.epoch, name, value)


__all__ = [
    "LogValidationMetricsCallback",
    "ProgressBar",
    "Speedometer",
    "do_checkpoint",
    "log_train_metric",
    "module_checkpoint",
]
