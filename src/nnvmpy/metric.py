"""nv.metric: MXNet 1.x's evaluation metrics (what Module.fit / score report).

Each metric accumulates `sum_metric` over `num_inst` instances from update(labels, preds)
(lists of NDArrays or NumPy arrays, or one array each) and reports get() -> (name, value).
Alongside the local running sum it keeps a global one (`global_sum_metric` over
`global_num_inst`): reset_local() clears only the local part (a Speedometer's window),
get_global() reports everything since the last reset().

Metrics are registered by lower-case class name and aliases (`register`, `alias`); create()
builds one from a name, an EvalMetric, a callable, a list, a config dict or its JSON text
(`json.dumps(metric.get_config())` round-trips).
"""

from __future__ import annotations

import json
import math
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy

from .base import NNVMError, ParamError

T = TypeVar("T", bound=type)


def _numpy(x: Any) -> numpy.ndarray:
    return x.asnumpy() if hasattr(x, "asnumpy") else numpy.asarray(x)


def _is_array(x: Any) -> bool:
    return hasattr(x, "asnumpy") or isinstance(x, numpy.ndarray)


def _as_list(x: Any) -> Any:
    """A single array (NDArray or NumPy) as a list of one; a list as it is."""
    return [x] if _is_array(x) else x


def check_label_shapes(
    labels: Any, preds: Any, wrap: bool = False, shape: bool = False
) -> tuple[Any, Any]:
    """Check that labels and preds agree in length (or in shape, with shape=True).

    With wrap=True a single array (NDArray or NumPy) is wrapped in a list; returns the pair.
    """
    label_shape: Any
    pred_shape: Any
    if shape:
        label_shape, pred_shape = tuple(labels.shape), tuple(preds.shape)
    else:
        label_shape, pred_shape = len(labels), len(preds)
    if label_shape != pred_shape:
        raise ParamError(
            f"Shape of labels {label_shape} does not match shape of predictions {pred_shape}"
        )
    if wrap:
        labels, preds = _as_list(labels), _as_list(preds)
    return labels, preds


def _pairs(what: str, labels: Any, preds: Any) -> list[tuple[Any, Any]]:
    """(label, pred) pairs of update()'s arguments (a single array counts as a list of one)."""
    labels, preds = _as_list(labels), _as_list(preds)
    if len(labels) != len(preds):
        raise ParamError(f"{what}: {len(labels)} label arrays but {len(preds)} prediction arrays")
    return list(zip(labels, preds))


def _check_average(what: str, average: str) -> None:
    if average not in ("macro", "micro"):
        raise ParamError(f"{what}: average must be 'macro' or 'micro', got {average!r}")


def _same_size(what: str, lb: numpy.ndarray, p: numpy.ndarray) -> None:
    if lb.size != p.size:
        raise ParamError(f"{what}: {lb.size} labels but {p.size} predictions")


class EvalMetric:
    """Base class: a running (local and global) sum of the metric over instances.

    name: shown by get(); output_names / label_names: which entries update_dict uses (all
    when None); further keyword arguments are kept for get_config(). `has_global_stats`
    (keyword) says the subclass maintains the global sums; otherwise get_global() is get().
    """

    num_inst: float
    sum_metric: float
    global_num_inst: float
    global_sum_metric: float

    def __init__(
        self, name: str, output_names: Any = None, label_names: Any = None, **kwargs: Any
    ) -> None:
        self.name = str(name)
        self.output_names = output_names
        self.label_names = label_names
        self._has_global_stats = bool(kwargs.pop("has_global_stats", False))
        self._kwargs = kwargs
        self.reset()

    def __str__(self) -> str:
        return f"EvalMetric: {dict(self.get_name_value())}"

    def get_config(self) -> dict[str, Any]:
        """The arguments that recreate this metric: `create(**config)` or `create(json)`."""
        config = dict(self._kwargs)
        config.update(
            metric=type(self).__name__,
            name=self.name,
            output_names=self.output_names,
            label_names=self.label_names,
        )
        return config

    def update_dict(self, label: Mapping[str, Any], pred: Mapping[str, Any]) -> None:
        """update() with the arrays named by label_names / output_names (all when None)."""
        preds = [pred[n] for n in self.output_names] if self.output_names else list(pred.values())
        labels = [label[n] for n in self.label_names] if self.label_names else list(label.values())
        self.update(labels, preds)

    def update(self, labels: Any, preds: Any) -> None:
        raise NotImplementedError

    def _add(self, value: float, count: float) -> None:
        """Add one batch's sum and instance count to the local and global totals."""
        self.sum_metric += value
        self.global_sum_metric += value
        self.num_inst += count
        self.global_num_inst += count

    def reset(self) -> None:
        self.num_inst = 0
        self.sum_metric = 0.0
        self.global_num_inst = 0
        self.global_sum_metric = 0.0

    def reset_local(self) -> None:
        """Clear the local totals; the global ones keep accumulating."""
        self.num_inst = 0
        self.sum_metric = 0.0

    def get(self) -> tuple[Any, Any]:
        if self.num_inst == 0:
            return self.name, float("nan")
        return self.name, self.sum_metric / self.num_inst

    def get_global(self) -> tuple[Any, Any]:
        if not self._has_global_stats:
            return self.get()
        if self.global_num_inst == 0:
            return self.name, float("nan")
        return self.name, self.global_sum_metric / self.global_num_inst

    def get_name_value(self) -> list[tuple[str, float]]:
        return _zip_name_value(*self.get())

    def get_global_name_value(self) -> list[tuple[str, float]]:
        return _zip_name_value(*self.get_global())


def _zip_name_value(name: Any, value: Any) -> list[tuple[str, float]]:
    names = name if isinstance(name, list) else [name]
    values = value if isinstance(value, list) else [value]
    return list(zip(names, values))


# -- registry ----------------------------------------------------------------------------------

_METRICS: dict[str, type[EvalMetric]] = {}


def register(klass: T) -> T:
    """Register an EvalMetric subclass under its lower-case class name (for `create`)."""
    if not (isinstance(klass, type) and issubclass(klass, EvalMetric)):
        raise NNVMError(f"metric.register: expects an EvalMetric subclass, got {klass!r}")
    _METRICS[klass.__name__.lower()] = klass
    return klass


def alias(*aliases: str) -> Callable[[T], T]:
    """Class decorator: also register the metric under these (lower-cased) names."""

    def decorate(klass: T) -> T:
        for name in aliases:
            _METRICS[name.lower()] = klass
        return klass

    return decorate


def create(metric: Any = None, *args: Any, **kwargs: Any) -> EvalMetric:
    """A metric from a name ('acc', 'mse', ...), an EvalMetric, a callable (CustomMetric),
    a list (CompositeEvalMetric), a config dict, or JSON text of get_config()'s dict.

    Extra arguments go to the metric's constructor (to each one, for a list).
    """
    if metric is None:
        if "metric" not in kwargs:
            raise ParamError("metric.create: expects a metric (name, instance, callable or list)")
        metric = kwargs.pop("metric")
    if isinstance(metric, EvalMetric):
        if args or kwargs:
            raise ParamError(
                f"metric.create: {type(metric).__name__} is already an instance; "
                "extra arguments are invalid"
            )
        return metric
    if callable(metric):
        return CustomMetric(metric, *args, **kwargs)
    if isinstance(metric, list | tuple):
        composite = CompositeEvalMetric()
        for child in metric:
            composite.add(create(child, *args, **kwargs))
        return composite
    if isinstance(metric, Mapping):
        return create(*args, **{**metric, **kwargs})
    if not isinstance(metric, str):
        raise ParamError(
            f"metric.create: expects a name, callable, list or EvalMetric, got {metric!r}"
        )
    text = metric.strip()
    if text.startswith(("{", "[")):
        if args or kwargs:
            raise ParamError("metric.create: a JSON config takes no further arguments")
        try:
            spec = json.loads(text)
        except json.JSONDecodeError as e:
            raise ParamError(f"metric.create: invalid JSON config {metric!r}: {e}") from None
        if isinstance(spec, dict):
            return create(**spec)
        if isinstance(spec, list) and len(spec) == 2 and isinstance(spec[1], dict):
            return create(spec[0], **spec[1])
        raise ParamError(f"metric.create: a JSON config must be a dict or [name, kwargs]: {text}")
    klass = _METRICS.get(text.lower())
    if klass is None:
        raise ParamError(
            f"metric.create: unknown metric {metric!r}; known: {', '.join(sorted(_METRICS))}"
        )
    return klass(*args, **kwargs)


# -- metrics -----------------------------------------------------------------------------------


@register
@alias("composite")
class CompositeEvalMetric(EvalMetric):
    """Several metrics updated together; get() lists their names and values."""

    def __init__(
        self,
        metrics: Sequence[Any] | None = None,
        name: str = "composite",
        output_names: Any = None,
        label_names: Any = None,
    ) -> None:
        self.metrics = [create(m) for m in metrics or []]
        super().__init__(
            name, output_names=output_names, label_names=label_names, has_global_stats=True
        )

    def add(self, metric: Any) -> None:
        self.metrics.append(create(metric))

    def get_metric(self, index: int) -> EvalMetric:
        if not -len(self.metrics) <= index < len(self.metrics):
            raise ParamError(
                f"CompositeEvalMetric.get_metric: index {index} is out of range for "
                f"{len(self.metrics)} metrics"
            )
        return self.metrics[index]

    def update_dict(self, labels: Mapping[str, Any], preds: Mapping[str, Any]) -> None:
        if self.label_names is not None:
            labels = OrderedDict((k, v) for k, v in labels.items() if k in self.label_names)
        if self.output_names is not None:
            preds = OrderedDict((k, v) for k, v in preds.items() if k in self.output_names)
        for m in self.metrics:
            m.update_dict(labels, preds)

    def update(self, labels: Any, preds: Any) -> None:
        for m in self.metrics:
            m.update(labels, preds)

    def reset(self) -> None:
        for m in getattr(self, "metrics", []):
            m.reset()

    def reset_local(self) -> None:
        for m in self.metrics:
            m.reset_local()

    def _gather(self, results: Sequence[tuple[Any, Any]]) -> tuple[list[Any], list[Any]]:
        names: list[Any] = []
        values: list[Any] = []
        for name, value in results:
            names.extend(name if isinstance(name, list) else [name])
            values.extend(value if isinstance(value, list) else [value])
        return names, values

    def get(self) -> tuple[list[Any], list[Any]]:
        return self._gather([m.get() for m in self.metrics])

    def get_global(self) -> tuple[list[Any], list[Any]]:
        return self._gather([m.get_global() for m in self.metrics])

    def get_config(self) -> dict[str, Any]:
        config = super().get_config()
        config["metrics"] = [m.get_config() for m in self.metrics]
        return config


@register
@alias("acc")
class Accuracy(EvalMetric):
    """Fraction of predictions (argmax over `axis`, or the labels themselves) that match."""

    def __init__(
        self,
        axis: int = 1,
        name: str = "accuracy",
        output_names: Any = None,
        label_names: Any = None,
    ) -> None:
        self.axis = axis
        super().__init__(
            name,
            axis=axis,
            output_names=output_names,
            label_names=label_names,
            has_global_stats=True,
        )

    def update(self, labels: Any, preds: Any) -> None:
        for label, pred in _pairs(type(self).__name__, labels, preds):
            p, lb = _numpy(pred), _numpy(label)
            if p.shape != lb.shape:
                p = p.argmax(axis=self.axis)
            p, lb = p.astype(numpy.int64).ravel(), lb.astype(numpy.int64).ravel()
            _same_size(type(self).__name__, lb, p)
            self._add(int((p == lb).sum()), lb.size)


@register
@alias("top_k_accuracy", "top_k_acc")
class TopKAccuracy(EvalMetric):
    """Fraction of labels among the top_k scores (the name gets a `_<top_k>` suffix)."""

    def __init__(
        self,
        top_k: int = 1,
        name: str = "top_k_accuracy",
        output_names: Any = None,
        label_names: Any = None,
    ) -> None:
        if top_k < 1:
            raise ParamError(f"TopKAccuracy: top_k must be >= 1, got {top_k}")
        self.top_k = top_k
        super().__init__(
            name,
            top_k=top_k,
            output_names=output_names,
            label_names=label_names,
            has_global_stats=True,
        )
        if not self.name.endswith(f"_{top_k}"):  # a name from get_config() has it already
            self.name += f"_{top_k}"

    def update(self, labels: Any, preds: Any) -> None:
        for label, pred in _pairs(type(self).__name__, labels, preds):
            p, lb = _numpy(pred), _numpy(label).astype(numpy.int64).ravel()
            if p.ndim > 2:
                raise ParamError(f"TopKAccuracy: predictions must be 1-D or 2-D, got {p.shape}")
            if p.shape[0] != lb.size:
                raise ParamError(f"TopKAccuracy: {lb.size} labels but {p.shape[0]} predictions")
            if p.ndim == 1:  # class indices
                hits = p.astype(numpy.int64) == lb
            else:
                top = numpy.argsort(p, axis=1, kind="stable")[:, -self.top_k :]
                hits = (top == lb[:, None]).any(axis=1)
            self._add(int(hits.sum()), lb.size)


@dataclass
class _BinaryCounts:
    """Confusion counts of a binary classifier (positive class 1)."""

    tp: int = 0
    fp: int = 0
    fn: int = 0
    tn: int = 0

    def __iadd__(self, other: _BinaryCounts) -> _BinaryCounts:
        self.tp, self.fp = self.tp + other.tp, self.fp + other.fp
        self.fn, self.tn = self.fn + other.fn, self.tn + other.tn
        return self

    @property
    def total(self) -> int:
        return self.tp + self.fp + self.fn + self.tn

    def fscore(self) -> float:
        """2PR/(P+R), with precision / recall 0 where undefined, and F1 0 when both are."""
        precision = self.tp / (self.tp + self.fp) if self.tp + self.fp else 0.0
        recall = self.tp / (self.tp + self.fn) if self.tp + self.fn else 0.0
        if precision + recall == 0:
            return 0.0
        return 2 * precision * recall / (precision + recall)

    def mcc(self) -> float:
        """Matthews correlation; a zero marginal counts as 1 in the denominator (0 if empty)."""
        if not self.total:
            return 0.0
        tp, fp, fn, tn = (float(c) for c in (self.tp, self.fp, self.fn, self.tn))
        denom = 1.0
        for term in (tp + fp, tp + fn, tn + fp, tn + fn):
            denom *= term or 1.0
        return (tp * tn - fp * fn) / math.sqrt(denom)

    @classmethod
    def of(cls, label: Any, pred: Any, what: str) -> _BinaryCounts:
        lb, p = _numpy(label).astype(numpy.int64).ravel(), _numpy(pred)
        p = p.argmax(axis=1) if p.ndim > 1 else p.astype(numpy.int64).ravel()
        _same_size(what, lb, p)
        if not numpy.isin(lb, (0, 1)).all():
            raise ParamError(
                f"{what}: labels must be 0 or 1 (binary classification only), "
                f"got {numpy.unique(lb)}"
            )
        pos, lpos = p == 1, lb == 1
        return cls(
            tp=int((pos & lpos).sum()),
            fp=int((pos & ~lpos).sum()),
            fn=int((~pos & lpos).sum()),
            tn=int((~pos & ~lpos).sum()),
        )


class _BinaryMetric(EvalMetric):
    """F1 / MCC: average='macro' averages the score of each update() call; 'micro' pools
    the counts of all calls (num_inst then counts examples)."""

    def __init__(
        self,
        name: str,
        output_names: Any = None,
        label_names: Any = None,
        average: str = "macro",
    ) -> None:
        _check_average(type(self).__name__, average)
        self.average = average
        self._local, self._global = _BinaryCounts(), _BinaryCounts()
        super().__init__(
            name,
            output_names=output_names,
            label_names=label_names,
            average=average,
            has_global_stats=True,
        )

    def _score(self, counts: _BinaryCounts) -> float:
        raise NotImplementedError

    def update(self, labels: Any, preds: Any) -> None:
        batch = _BinaryCounts()
        for label, pred in _pairs(type(self).__name__, labels, preds):
            batch += _BinaryCounts.of(label, pred, type(self).__name__)
        if self.average == "macro":
            self._add(self._score(batch), 1)
            return
        self._local += batch
        self._global += batch
        self.sum_metric = self._score(self._local) * self._local.total
        self.num_inst = self._local.total
        self.global_sum_metric = self._score(self._global) * self._global.total
        self.global_num_inst = self._global.total

    def reset(self) -> None:
        super().reset()
        self._local, self._global = _BinaryCounts(), _BinaryCounts()

    def reset_local(self) -> None:
        super().reset_local()
        self._local = _BinaryCounts()


@register
class F1(_BinaryMetric):
    """Binary F1 score 2PR/(P+R) of argmax predictions against 0/1 labels (positive: 1)."""

    def __init__(
        self,
        name: str = "f1",
        output_names: Any = None,
        label_names: Any = None,
        average: str = "macro",
    ) -> None:
        super().__init__(name, output_names, label_names, average)

    def _score(self, counts: _BinaryCounts) -> float:
        return counts.fscore()


@register
class MCC(_BinaryMetric):
    """Binary Matthews correlation coefficient (tp*tn - fp*fn) / sqrt(product of marginals)."""

    def __init__(
        self,
        name: str = "mcc",
        output_names: Any = None,
        label_names: Any = None,
        average: str = "macro",
    ) -> None:
        super().__init__(name, output_names, label_names, average)

    def _score(self, counts: _BinaryCounts) -> float:
        return counts.mcc()


@register
class Perplexity(EvalMetric):
    """exp of the mean of -log p[label] along `axis` (labels equal to ignore_label left out;
    probabilities below 1e-10 clipped)."""

    def __init__(
        self,
        ignore_label: int | None,
        axis: int = -1,
        name: str = "perplexity",
        output_names: Any = None,
        label_names: Any = None,
    ) -> None:
        self.ignore_label = ignore_label
        self.axis = axis
        super().__init__(
            name,
            ignore_label=ignore_label,
            output_names=output_names,
            label_names=label_names,
            has_global_stats=True,
        )

    def update(self, labels: Any, preds: Any) -> None:
        loss, num = 0.0, 0
        for label, pred in _pairs("Perplexity", labels, preds):
            lb, p = _numpy(label).ravel(), _numpy(pred)
            if p.ndim == 0 or lb.size * p.shape[self.axis] != p.size:
                raise ParamError(
                    f"Perplexity: shape mismatch: labels {_numpy(label).shape} vs. "
                    f"predictions {p.shape} (one label per row along axis {self.axis})"
                )
            p = numpy.moveaxis(p, self.axis, -1).reshape(lb.size, -1)
            keep = numpy.ones(lb.size, dtype=bool)
            if self.ignore_label is not None:
                keep = lb != self.ignore_label
            prob = p[numpy.arange(lb.size)[keep], lb[keep].astype(numpy.int64)]
            loss -= float(numpy.log(numpy.maximum(prob, prob.dtype.type(1e-10))).sum())
            num += int(keep.sum())
        self._add(loss, num)

    def get(self) -> tuple[str, float]:
        if self.num_inst == 0:
            return self.name, float("nan")
        return self.name, math.exp(self.sum_metric / self.num_inst)

    def get_global(self) -> tuple[str, float]:
        if self.global_num_inst == 0:
            return self.name, float("nan")
        return self.name, math.exp(self.global_sum_metric / self.global_num_inst)


class _Regression(EvalMetric):
    """The mean over update arrays of a per-array error (1-D arrays read as columns)."""

    def __init__(self, name: str, output_names: Any = None, label_names: Any = None) -> None:
        super().__init__(
            name, output_names=output_names, label_names=label_names, has_global_stats=True
        )

    def _value(self, lb: numpy.ndarray, p: numpy.ndarray) -> float:
        raise NotImplementedError

    def update(self, labels: Any, preds: Any) -> None:
        for label, pred in _pairs(type(self).__name__, labels, preds):
            lb, p = _numpy(label), _numpy(pred)
            if lb.ndim == 1:
                lb = lb.reshape(lb.shape[0], 1)
            if p.ndim == 1:
                p = p.reshape(p.shape[0], 1)
            self._add(float(self._value(lb, p)), 1)


@register
class MAE(_Regression):
    """Mean absolute error."""

    def __init__(self, name: str = "mae", output_names: Any = None, label_names: Any = None):
        super().__init__(name, output_names, label_names)

    def _value(self, lb: numpy.ndarray, p: numpy.ndarray) -> float:
        return numpy.abs(lb - p).mean()


@register
class MSE(_Regression):
    """Mean squared error."""

    def __init__(self, name: str = "mse", output_names: Any = None, label_names: Any = None):
        super().__init__(name, output_names, label_names)

    def _value(self, lb: numpy.ndarray, p: numpy.ndarray) -> float:
        return ((lb - p) ** 2).mean()


@register
class RMSE(_Regression):
    """Root mean squared error (per update array, then averaged)."""

    def __init__(self, name: str = "rmse", output_names: Any = None, label_names: Any = None):
        super().__init__(name, output_names, label_names)

    def _value(self, lb: numpy.ndarray, p: numpy.ndarray) -> float:
        return numpy.sqrt(((lb - p) ** 2).mean())


class _LogLoss(EvalMetric):
    """Mean of -log(p[label] + eps) over the rows of the predictions."""

    def __init__(
        self, eps: float, name: str, output_names: Any = None, label_names: Any = None
    ) -> None:
        self.eps = eps
        super().__init__(
            name, eps=eps, output_names=output_names, label_names=label_names, has_global_stats=True
        )

    def update(self, labels: Any, preds: Any) -> None:
        for label, pred in _pairs(type(self).__name__, labels, preds):
            lb, p = _numpy(label).ravel(), _numpy(pred)
            if p.ndim != 2 or p.shape[0] != lb.size:
                raise ParamError(
                    f"{type(self).__name__}: {lb.size} labels but predictions of shape "
                    f"{p.shape} (expected ({lb.size}, num_classes))"
                )
            prob = p[numpy.arange(lb.size), lb.astype(numpy.int64)]
            self._add(float((-numpy.log(prob + self.eps)).sum()), lb.size)


@register
@alias("ce")
class CrossEntropy(_LogLoss):
    """Cross-entropy -mean(log p[label]) of class probabilities (eps keeps it finite)."""

    def __init__(
        self,
        eps: float = 1e-12,
        name: str = "cross-entropy",
        output_names: Any = None,
        label_names: Any = None,
    ) -> None:
        super().__init__(eps, name, output_names, label_names)


@register
@alias("nll_loss")
class NegativeLogLikelihood(_LogLoss):
    """Negative log-likelihood -mean(log p[label]) of class probabilities."""

    def __init__(
        self,
        eps: float = 1e-12,
        name: str = "nll-loss",
        output_names: Any = None,
        label_names: Any = None,
    ) -> None:
        super().__init__(eps, name, output_names, label_names)


@register
@alias("pearsonr")
class PearsonCorrelation(EvalMetric):
    """Pearson correlation of the flattened predictions and labels.

    average='macro' averages the coefficient of each label/prediction pair; 'micro'
    computes one coefficient over everything seen (streaming moments, Chan et al.).
    """

    def __init__(
        self,
        name: str = "pearsonr",
        output_names: Any = None,
        label_names: Any = None,
        average: str = "macro",
    ) -> None:
        _check_average("PearsonCorrelation", average)
        self.average = average
        super().__init__(
            name,
            output_names=output_names,
            label_names=label_names,
            average=average,
            has_global_stats=True,
        )

    def reset(self) -> None:
        super().reset()
        # count, means and centred second moments of preds (p) and labels (l), co-moment
        self._n = 0
        self._mean_p = self._mean_l = 0.0
        self._m2_p = self._m2_l = self._c = 0.0

    def _merge(self, p: numpy.ndarray, lb: numpy.ndarray) -> None:
        nb = p.size
        if nb == 0:
            return
        mp, ml = p.mean(), lb.mean()
        dp, dl = p - mp, lb - ml
        n = self._n + nb
        ep, el = mp - self._mean_p, ml - self._mean_l
        w = self._n * nb / n
        self._m2_p += float((dp * dp).sum() + ep * ep * w)
        self._m2_l += float((dl * dl).sum() + el * el * w)
        self._c += float((dp * dl).sum() + ep * el * w)
        self._mean_p += float(ep * nb / n)
        self._mean_l += float(el * nb / n)
        self._n = n

    def update(self, labels: Any, preds: Any) -> None:
        for label, pred in _pairs(type(self).__name__, labels, preds):
            lb, p = _numpy(label), _numpy(pred)
            if lb.shape != p.shape:
                raise ParamError(
                    f"PearsonCorrelation: labels of shape {lb.shape} but predictions of "
                    f"shape {p.shape}"
                )
            lb, p = lb.ravel().astype(numpy.float64), p.ravel().astype(numpy.float64)
            if self.average == "macro":
                self._add(float(numpy.corrcoef(p, lb)[0, 1]), 1)
            else:
                self._merge(p, lb)
                self.num_inst += 1
                self.global_num_inst += 1

    def _micro(self) -> float:
        denom = math.sqrt(self._m2_p * self._m2_l)
        return self._c / denom if denom else float("nan")

    def get(self) -> tuple[str, float]:
        if self.num_inst == 0:
            return self.name, float("nan")
        if self.average == "macro":
            return self.name, self.sum_metric / self.num_inst
        return self.name, self._micro()

    def get_global(self) -> tuple[str, float]:
        if self.average == "macro" or self.global_num_inst == 0:
            return super().get_global()
        return self.name, self._micro()


@register
class PCC(EvalMetric):
    """Multiclass Matthews correlation (Gorodkin's R_K) from the pooled confusion matrix.

    Predictions are class scores (argmax over axis 1) or class indices shaped like the
    labels; the matrix grows with the largest class seen. num_inst counts update() calls.
    """

    def __init__(
        self,
        name: str = "pcc",
        output_names: Any = None,
        label_names: Any = None,
        has_global_stats: bool = True,
    ) -> None:
        self.k = 2
        self.lcm = numpy.zeros((2, 2))
        self.gcm = numpy.zeros((2, 2))
        super().__init__(
            name=name,
            output_names=output_names,
            label_names=label_names,
            has_global_stats=has_global_stats,
        )

    def _grow(self, k: int) -> None:
        pad = ((0, k - self.k), (0, k - self.k))
        self.lcm = numpy.pad(self.lcm, pad)
        self.gcm = numpy.pad(self.gcm, pad)
        self.k = k

    @staticmethod
    def _calc_mcc(cm: numpy.ndarray) -> float:
        n = cm.sum()
        rows, cols = cm.sum(axis=1), cm.sum(axis=0)
        cov_xx = float((rows * (n - rows)).sum())
        cov_yy = float((cols * (n - cols)).sum())
        if cov_xx == 0 or cov_yy == 0:
            return float("nan")
        cov_xy = float((cm.diagonal() * n - rows * cols).sum())
        return cov_xy / math.sqrt(cov_xx * cov_yy)

    def update(self, labels: Any, preds: Any) -> None:
        for label, pred in _pairs(type(self).__name__, labels, preds):
            lb, p = _numpy(label).astype(numpy.int64), _numpy(pred)
            p = p.argmax(axis=1) if p.shape != lb.shape else p.astype(numpy.int64)
            p, lb = p.ravel(), lb.ravel()
            _same_size(type(self).__name__, lb, p)
            if lb.size and (lb.min() < 0 or p.min() < 0):
                raise ParamError("PCC: class indices must be non-negative")
            top = int(max(p.max(initial=0), lb.max(initial=0)))
            if top >= self.k:
                self._grow(top + 1)
            batch = numpy.zeros((self.k, self.k))
            numpy.add.at(batch, (p, lb), 1)
            self.lcm += batch
            self.gcm += batch
        self.num_inst += 1
        self.global_num_inst += 1

    # the matrices are the state; the sums are views of them (value * count)
    @property
    def sum_metric(self) -> float:
        return self._calc_mcc(self.lcm) * self.num_inst

    @sum_metric.setter
    def sum_metric(self, _value: float) -> None:
        pass

    @property
    def global_sum_metric(self) -> float:
        return self._calc_mcc(self.gcm) * self.global_num_inst

    @global_sum_metric.setter
    def global_sum_metric(self, _value: float) -> None:
        pass

    def reset(self) -> None:
        super().reset()
        self.lcm = numpy.zeros((self.k, self.k))
        self.gcm = numpy.zeros((self.k, self.k))

    def reset_local(self) -> None:
        super().reset_local()
        self.lcm = numpy.zeros((self.k, self.k))


@register
class Loss(EvalMetric):
    """Mean of the outputs themselves (a loss the network computes); labels are ignored."""

    def __init__(self, name: str = "loss", output_names: Any = None, label_names: Any = None):
        super().__init__(
            name, output_names=output_names, label_names=label_names, has_global_stats=True
        )

    def update(self, _labels: Any, preds: Any) -> None:
        for pred in _as_list(preds):
            p = _numpy(pred)
            self._add(float(p.sum()), p.size)


@register
class Torch(Loss):
    """Loss under the name 'torch' (MXNet's torch plugin outputs)."""

    def __init__(self, name: str = "torch", output_names: Any = None, label_names: Any = None):
        super().__init__(name, output_names, label_names)


@register
class Caffe(Loss):
    """Loss under the name 'caffe' (MXNet's caffe plugin outputs)."""

    def __init__(self, name: str = "caffe", output_names: Any = None, label_names: Any = None):
        super().__init__(name, output_names, label_names)


@register
class CustomMetric(EvalMetric):
    """feval(label, pred) -> value (or (sum, count)) per array pair, on NumPy arrays.

    Named after feval (`custom(<lambda>)` for a lambda) unless `name` is given.
    """

    def __init__(
        self,
        feval: Callable[..., Any],
        name: str | None = None,
        allow_extra_outputs: bool = False,
        output_names: Any = None,
        label_names: Any = None,
    ) -> None:
        if name is None:
            name = getattr(feval, "__name__", "feval")
            if "<" in name:
                name = f"custom({name})"
        self._feval = feval
        self._allow_extra_outputs = allow_extra_outputs
        super().__init__(
            name,
            feval=feval,
            allow_extra_outputs=allow_extra_outputs,
            output_names=output_names,
            label_names=label_names,
            has_global_stats=True,
        )

    def update(self, labels: Any, preds: Any) -> None:
        if self._allow_extra_outputs:  # more outputs than labels: pair up the first ones
            pairs = list(zip(_as_list(labels), _as_list(preds)))
        else:
            pairs = _pairs(self.name, labels, preds)
        for label, pred in pairs:
            value = self._feval(_numpy(label), _numpy(pred))
            if isinstance(value, tuple):
                self._add(value[0], value[1])
            else:
                self._add(value, 1)

    def get_config(self) -> dict[str, Any]:
        raise NotImplementedError(
            f"CustomMetric {self.name!r} cannot be serialized (it wraps a function)"
        )


def np(numpy_feval: Callable[..., Any], name: str | None = None, allow_extra_outputs: bool = False):
    """A CustomMetric from a function of NumPy arrays (MXNet's mx.metric.np)."""

    def feval(label: Any, pred: Any) -> Any:
        return numpy_feval(label, pred)

    feval.__name__ = numpy_feval.__name__
    return CustomMetric(feval, name, allow_extra_outputs)


_METRICS["cross-entropy"] = CrossEntropy  # the metric's display name, accepted as well

__all__ = [
    "F1",
    "MAE",
    "MCC",
    "MSE",
    "PCC",
    "RMSE",
    "Accuracy",
    "Caffe",
    "CompositeEvalMetric",
    "CrossEntropy",
    "CustomMetric",
    "EvalMetric",
    "Loss",
    "NegativeLogLikelihood",
    "PearsonCorrelation",
    "Perplexity",
    "TopKAccuracy",
    "Torch",
    "alias",
    "check_label_shapes",
    "create",
    "np",
    "register",
]
