"""nv.metric: MXNet 1.x's evaluation metrics (what Module.fit / score report).

Each metric accumulates `sum_metric` over `num_inst` instances from update(labels, preds)
(lists of NDArrays or NumPy arrays) and reports get() -> (name, value); create() builds one
from a name, a callable or a list.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy

from .base import NNVMError, ParamError


def _numpy(x: Any) -> numpy.ndarray:
    return x.asnumpy() if hasattr(x, "asnumpy") else numpy.asarray(x)


def check_label_shapes(labels: Sequence[Any], preds: Sequence[Any], what: str) -> None:
    if len(labels) != len(preds):
        raise NNVMError(f"{what}: {len(labels)} label arrays but {len(preds)} prediction arrays")


class EvalMetric:
    """Base class: a running sum of the metric over instances."""

    def __init__(
        self, name: str, output_names: Any = None, label_names: Any = None, **kwargs: Any
    ) -> None:
        self.name = str(name)
        self.output_names = output_names
        self.label_names = label_names
        self._kwargs = kwargs
        self.reset()

    def __str__(self) -> str:
        return f"EvalMetric: {dict(self.get_name_value())}"

    def update_dict(self, label: dict[str, Any], pred: dict[str, Any]) -> None:
        preds = [pred[n] for n in self.output_names] if self.output_names else list(pred.values())
        labels = [label[n] for n in self.label_names] if self.label_names else list(label.values())
        self.update(labels, preds)

    def update(self, labels: Sequence[Any], preds: Sequence[Any]) -> None:
        raise NotImplementedError

    def reset(self) -> None:
        self.num_inst = 0
        self.sum_metric = 0.0

    def get(self) -> tuple[str, float]:
        if self.num_inst == 0:
            return self.name, float("nan")
        return self.name, self.sum_metric / self.num_inst

    def get_name_value(self) -> list[tuple[str, float]]:
        name, value = self.get()
        if not isinstance(name, list):
            name, value = [name], [value]
        return list(zip(name, value))


class CompositeEvalMetric(EvalMetric):
    """Several metrics updated together."""

    def __init__(self, metrics: Sequence[Any] | None = None, name: str = "composite") -> None:
        self.metrics = [create(m) for m in metrics or []]
        super().__init__(name)

    def add(self, metric: Any) -> None:
        self.metrics.append(create(metric))

    def get_metric(self, index: int) -> EvalMetric:
        return self.metrics[index]

    def update(self, labels: Sequence[Any], preds: Sequence[Any]) -> None:
        for m in self.metrics:
            m.update(labels, preds)

    def reset(self) -> None:
        for m in getattr(self, "metrics", []):
            m.reset()

    def get(self) -> tuple[Any, Any]:
        names, values = [], []
        for m in self.metrics:
            name, value = m.get()
            names.extend(name if isinstance(name, list) else [name])
            values.extend(value if isinstance(value, list) else [value])
        return names, values


class Accuracy(EvalMetric):
    """Fraction of predictions (argmax over `axis`, or the labels themselves) that match."""

    def __init__(self, axis: int = 1, name: str = "accuracy", **kwargs: Any) -> None:
        self.axis = axis
        super().__init__(name, **kwargs)

    def update(self, labels: Sequence[Any], preds: Sequence[Any]) -> None:
        check_label_shapes(labels, preds, "Accuracy")
        for label, pred in zip(labels, preds):
            p, lb = _numpy(pred), _numpy(label)
            if p.shape != lb.shape:
                p = p.argmax(axis=self.axis)
            p, lb = p.astype(numpy.int64).ravel(), lb.astype(numpy.int64).ravel()
            if p.size != lb.size:
                raise NNVMError(f"Accuracy: {lb.size} labels but {p.size} predictions")
            self.sum_metric += float((p == lb).sum())
            self.num_inst += lb.size


class TopKAccuracy(EvalMetric):
    """Fraction of labels among the top_k scores."""

    def __init__(self, top_k: int = 1, name: str = "top_k_accuracy", **kwargs: Any) -> None:
        if top_k < 1:
            raise ParamError(f"TopKAccuracy: top_k must be >= 1, got {top_k}")
        self.top_k = top_k
        super().__init__(f"{name}_{top_k}", **kwargs)

    def update(self, labels: Sequence[Any], preds: Sequence[Any]) -> None:
        check_label_shapes(labels, preds, "TopKAccuracy")
        for label, pred in zip(labels, preds):
            p, lb = _numpy(pred), _numpy(label).astype(numpy.int64).ravel()
            top = numpy.argsort(p, axis=1)[:, -self.top_k :]
            self.sum_metric += float((top == lb[:, None]).any(axis=1).sum())
            self.num_inst += lb.size


class F1(EvalMetric):
    """Binary F1 of argmax predictions against 0/1 labels (positive class 1).

    average='macro' averages each update's F1; 'micro' pools the counts of all updates.
    """

    def __init__(self, name: str = "f1", average: str = "macro", **kwargs: Any) -> None:
        if average not in ("macro", "micro"):
            raise ParamError(f"F1: average must be 'macro' or 'micro', got {average!r}")
        self.average = average
        self._tp = self._fp = self._fn = 0
        super().__init__(name, **kwargs)

    def reset(self) -> None:
        super().reset()
        self._tp = self._fp = self._fn = 0

    def update(self, labels: Sequence[Any], preds: Sequence[Any]) -> None:
        check_label_shapes(labels, preds, "F1")
        for label, pred in zip(labels, preds):
            p, lb = _numpy(pred), _numpy(label).astype(numpy.int64).ravel()
            p = p.argmax(axis=1) if p.ndim > 1 else p.astype(numpy.int64)
            if not numpy.isin(lb, (0, 1)).all():
                raise NNVMError(f"F1: labels must be 0 or 1, got {numpy.unique(lb)}")
            if p.size != lb.size:
                raise NNVMError(f"F1: {lb.size} labels but {p.size} predictions")
            tp = int(((p == 1) & (lb == 1)).sum())
            fp = int(((p == 1) & (lb == 0)).sum())
            fn = int(((p == 0) & (lb == 1)).sum())
            if self.average == "macro":
                self.sum_metric += _f1(tp, fp, fn)
                self.num_inst += 1
            else:
                self._tp, self._fp, self._fn = self._tp + tp, self._fp + fp, self._fn + fn
                self.num_inst += lb.size
                self.sum_metric = _f1(self._tp, self._fp, self._fn) * self.num_inst


def _f1(tp: int, fp: int, fn: int) -> float:
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    return 2 * precision * recall / (precision + recall) if precision + recall else 0.0


class _Regression(EvalMetric):
    def _value(self, lb: numpy.ndarray, p: numpy.ndarray) -> float:
        raise NotImplementedError

    def update(self, labels: Sequence[Any], preds: Sequence[Any]) -> None:
        check_label_shapes(labels, preds, type(self).__name__)
        for label, pred in zip(labels, preds):
            lb, p = _numpy(label), _numpy(pred)
            if lb.ndim == 1:
                lb = lb.reshape(lb.shape[0], 1)
            if p.ndim == 1:
                p = p.reshape(p.shape[0], 1)
            self.sum_metric += self._value(lb.astype(numpy.float64), p.astype(numpy.float64))
            self.num_inst += 1


class MAE(_Regression):
    def __init__(self, name: str = "mae", **kwargs: Any) -> None:
        super().__init__(name, **kwargs)

    def _value(self, lb: numpy.ndarray, p: numpy.ndarray) -> float:
        return float(numpy.abs(lb - p).mean())


class MSE(_Regression):
    def __init__(self, name: str = "mse", **kwargs: Any) -> None:
        super().__init__(name, **kwargs)

    def _value(self, lb: numpy.ndarray, p: numpy.ndarray) -> float:
        return float(((lb - p) ** 2).mean())


class RMSE(_Regression):
    def __init__(self, name: str = "rmse", **kwargs: Any) -> None:
        super().__init__(name, **kwargs)

    def _value(self, lb: numpy.ndarray, p: numpy.ndarray) -> float:
        return float(numpy.sqrt(((lb - p) ** 2).mean()))


class CrossEntropy(EvalMetric):
    """Mean of -log(p[label]) (eps keeps it finite)."""

    def __init__(self, eps: float = 1e-12, name: str = "cross-entropy", **kwargs: Any) -> None:
        self.eps = eps
        super().__init__(name, **kwargs)

    def _nll(self, label: Any, pred: Any) -> tuple[float, int]:
        lb, p = _numpy(label).astype(numpy.int64).ravel(), _numpy(pred)
        if p.shape[0] != lb.size:
            raise NNVMError(f"{self.name}: {lb.size} labels but {p.shape[0]} prediction rows")
        prob = p[numpy.arange(lb.size), lb]
        return float(-numpy.log(prob + self.eps).sum()), lb.size

    def update(self, labels: Sequence[Any], preds: Sequence[Any]) -> None:
        check_label_shapes(labels, preds, "CrossEntropy")
        for label, pred in zip(labels, preds):
            total, n = self._nll(label, pred)
            self.sum_metric += total
            self.num_inst += n


class Perplexity(CrossEntropy):
    """exp of the mean cross-entropy (ignore_label rows left out)."""

    def __init__(self, ignore_label: int | None = None, name: str = "perplexity", **kw: Any):
        self.ignore_label = ignore_label
        super().__init__(name=name, **kw)

    def update(self, labels: Sequence[Any], preds: Sequence[Any]) -> None:
        check_label_shapes(labels, preds, "Perplexity")
        for label, pred in zip(labels, preds):
            lb, p = _numpy(label).astype(numpy.int64).ravel(), _numpy(pred)
            p = p.reshape(lb.size, -1)
            keep = lb != self.ignore_label if self.ignore_label is not None else slice(None)
            total, n = self._nll(lb[keep], p[keep])
            self.sum_metric += total
            self.num_inst += n

    def get(self) -> tuple[str, float]:
        if self.num_inst == 0:
            return self.name, float("nan")
        return self.name, math.exp(self.sum_metric / self.num_inst)


class Loss(EvalMetric):
    """Mean of the outputs themselves (a loss the network computes)."""

    def __init__(self, name: str = "loss", **kwargs: Any) -> None:
        super().__init__(name, **kwargs)

    def update(self, labels: Sequence[Any], preds: Sequence[Any]) -> None:
        for pred in preds:
            p = _numpy(pred)
            self.sum_metric += float(p.sum())
            self.num_inst += p.size


class CustomMetric(EvalMetric):
    """feval(label, pred) -> value (or (sum, count)) per array pair."""

    def __init__(
        self,
        feval: Callable[..., Any],
        name: str | None = None,
        allow_extra_outputs: bool = False,
        **kwargs: Any,
    ) -> None:
        self._feval = feval
        self._allow_extra_outputs = allow_extra_outputs
        super().__init__(name or f"custom({getattr(feval, '__name__', 'feval')})", **kwargs)

    def update(self, labels: Sequence[Any], preds: Sequence[Any]) -> None:
        if not self._allow_extra_outputs:
            check_label_shapes(labels, preds, self.name)
        for label, pred in zip(labels, preds):
            value = self._feval(_numpy(label), _numpy(pred))
            if isinstance(value, tuple):
                self.sum_metric += value[0]
                self.num_inst += value[1]
            else:
                self.sum_metric += value
                self.num_inst += 1


def np(numpy_feval: Callable[..., Any], name: str | None = None, allow_extra_outputs: bool = False):
    """A CustomMetric from a function of NumPy arrays (MXNet's mx.metric.np)."""

    def feval(label: Any, pred: Any) -> Any:
        return numpy_feval(label, pred)

    feval.__name__ = numpy_feval.__name__
    return CustomMetric(feval, name, allow_extra_outputs)


_METRICS: dict[str, type[EvalMetric]] = {
    "acc": Accuracy,
    "accuracy": Accuracy,
    "top_k_accuracy": TopKAccuracy,
    "top_k_acc": TopKAccuracy,
    "f1": F1,
    "mae": MAE,
    "mse": MSE,
    "rmse": RMSE,
    "ce": CrossEntropy,
    "cross-entropy": CrossEntropy,
    "perplexity": Perplexity,
    "loss": Loss,
}


def create(metric: Any, *args: Any, **kwargs: Any) -> EvalMetric:
    """A metric from an EvalMetric, a name ('acc', 'mse', ...), a callable or a list."""
    if isinstance(metric, EvalMetric):
        return metric
    if callable(metric):
        return CustomMetric(metric, *args, **kwargs)
    if isinstance(metric, list | tuple):
        return CompositeEvalMetric([create(m, *args, **kwargs) for m in metric])
    if isinstance(metric, str):
        klass = _METRICS.get(metric.lower())
        if klass is None:
            raise ParamError(
                f"metric.create: unknown metric {metric!r}; known: {', '.join(sorted(_METRICS))}"
            )
        return klass(*args, **kwargs)
    raise ParamError(f"metric.create: expected a name, callable, list or EvalMetric: {metric!r}")


__all__ = [
    "F1",
    "MAE",
    "MSE",
    "RMSE",
    "Accuracy",
    "CompositeEvalMetric",
    "CrossEntropy",
    "CustomMetric",
    "EvalMetric",
    "Loss",
    "Perplexity",
    "TopKAccuracy",
    "create",
    "np",
]
