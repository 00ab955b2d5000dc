"""OpCase rows of the nn layers (activations, softmax, losses, BatchNorm, Dropout) and sgd.

References are NumPy formulas written from the math, never the kernels. Inputs near a
kink (relu at 0, smooth_l1 at 1/sigma^2) are pushed away from it so finite differences
do not straddle it. Rows that cannot go through the generic gradient check say why;
tests/ops/test_nn.py and test_optimizer.py test those specially.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from op_db import OpCase

erf = np.vectorize(math.erf, otypes=[np.float64])

SELU_ALPHA = 1.6732632423543772848170429916717
SELU_LAMBDA = 1.0507009873554804934193349852946


def away_from(*kinks: float, margin: float = 0.05, low: float = -1.0, high: float = 1.0) -> Any:
    """An `inputs` function: uniform values at least `margin` from every kink."""

    def make(rng: np.random.Generator, dtype: Any, shapes: Any) -> list[np.ndarray]:
        out = []
        for shape in shapes:
            x = rng.uniform(low, high, size=shape)
            for k in kinks:
                near = np.abs(x - k) < margin
                x[near] = k + np.where(x[near] >= k, margin, -margin)
            out.append(x.astype(dtype))
        return out

    return make


def row(name: str, shapes: list[tuple[int, ...]], reference: Any, **kw: Any) -> OpCase:
    """An OpCase whose `inputs` function (if any) gets the row's shapes."""
    make = kw.pop("inputs", None)
    if make is not None:
        kw["inputs"] = lambda rng, dtype: make(rng, dtype, shapes)
    return OpCase(name, shapes, reference, **kw)


# -- references ---------------------------------------------------------------------------------


def softmax_ref(x: np.ndarray, axis: int = -1, temperature: float | None = None, **_: Any):
    z = x / (1.0 if temperature is None else temperature)
    e = np.exp(z - z.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def log_softmax_ref(x: np.ndarray, axis: int = -1, temperature: float | None = None, **_: Any):
    z = x / (1.0 if temperature is None else temperature)
    z = z - z.max(axis=axis, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=axis, keepdims=True))


ACTIVATIONS = {
    "relu": lambda x: np.maximum(x, 0),
    "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
    "tanh": np.tanh,
    "softrelu": lambda x: np.log1p(np.exp(x)),
    "softsign": lambda x: x / (1 + np.abs(x)),
}

LEAKY = {
    "leaky": lambda x, slope: np.where(x > 0, x, slope * x),
    "elu": lambda x, slope: np.where(x > 0, x, slope * (np.exp(x) - 1)),
    "selu": lambda x, slope: SELU_LAMBDA * np.where(x > 0, x, SELU_ALPHA * (np.exp(x) - 1)),
    "gelu": lambda x, slope: 0.5 * x * (1 + erf(x / np.sqrt(2))),
}


def smooth_l1_ref(x: np.ndarray, scalar: float, **_: Any) -> np.ndarray:
    s2 = scalar * scalar
    return np.where(np.abs(x) < 1 / s2, 0.5 * s2 * x * x, np.abs(x) - 0.5 / s2)


def batch_norm_inference_ref(x, gamma, beta, mean, var, eps=1e-3, fix_gamma=True, axis=1, **_):
    shape = [1] * x.ndim
    shape[axis] = -1
    g = np.ones_like(gamma) if fix_gamma else gamma
    scale = (g / np.sqrt(var + eps)).reshape(shape)
    return (x - mean.reshape(shape)) * scale + beta.reshape(shape)


def batch_norm_inputs(rng: np.random.Generator, dtype: Any, shapes: Any) -> list[np.ndarray]:
    data, c = shapes[0], shapes[1]
    return [
        rng.normal(1.0, 2.0, size=data).astype(dtype),
        rng.uniform(0.5, 1.5, size=c).astype(dtype),
        rng.normal(size=c).astype(dtype),
        rng.normal(size=c).astype(dtype),
        rng.uniform(0.5, 2.0, size=c).astype(dtype),  # variances are positive
    ]


def labels_for(classes: int, shape: tuple[int, ...]) -> Any:
    """(data, label) with label holding class ids in [0, classes) as floats."""

    def make(rng: np.random.Generator, dtype: Any, shapes: Any) -> list[np.ndarray]:
        data = rng.uniform(-2, 2, size=shapes[0]).astype(dtype)
        return [data, rng.integers(0, classes, size=shape).astype(dtype)]

    return make


def sgd_ref(weight, grad, lr, wd=0.0, rescale_grad=1.0, clip_gradient=-1.0, **_):
    g = rescale_grad * grad
    if clip_gradient >= 0:
        g = np.clip(g, -clip_gradient, clip_gradient)
    return weight - lr * (g + wd * weight)


def sgd_mom_ref(weight, grad, mom, lr, momentum=0.0, wd=0.0, rescale_grad=1.0, **_):
    return weight + momentum * mom - lr * (rescale_grad * grad + wd * weight)


# -- the rows -----------------------------------------------------------------------------------

CASES: list[OpCase] = []

for _act, _f in ACTIVATIONS.items():
    CASES.append(
        row(
            "Activation",
            [(3, 4)],
            lambda x, _f=_f, **_: _f(x),
            params={"act_type": _act},
            inputs=away_from(0.0),  # relu's kink
            id=_act,
        )
    )

for _act, _f in LEAKY.items():
    _slope = {"leaky": 0.3, "elu": 0.7}.get(_act, 0.25)
    _params = (
        {"act_type": _act} if _act in ("selu", "gelu") else {"act_type": _act, "slope": _slope}
    )
    CASES.append(
        row(
            "LeakyReLU",
            [(3, 4)],
            lambda x, _f=_f, _s=_slope, **_: _f(x, _s),
            params=_params,
            inputs=away_from(0.0, low=-2.0, high=2.0),
            id=_act,
        )
    )

for _op, _ref in (("softmax", softmax_ref), ("log_softmax", log_softmax_ref)):
    for _params, _id in (
        ({}, "last"),
        ({"axis": 0}, "axis0"),
        ({"axis": 1}, "axis1"),
        ({"axis": -2, "temperature": 2.0}, "axis-2-T2"),
        ({"temperature": 0.5}, "T0.5"),
    ):
        CASES.append(row(_op, [(2, 3, 4)], _ref, params=_params, low=-3.0, high=3.0, id=_id))

CASES.extend(
    row(
        "smooth_l1",
        [(3, 5)],
        smooth_l1_ref,
        params={"scalar": sigma},
        inputs=away_from(-1 / sigma**2, 1 / sigma**2, low=-2.0, high=2.0),
        id=f"sigma{sigma:g}",
    )
    for sigma in (1.0, 2.0)
)

# BatchNorm at inference (nd runs with is_train=False), with given moving statistics.
# moving_mean/var are auxiliary states, which the generic gradient check cannot feed:
# test_nn.py checks gradients (training and use_global_stats) itself.
for _params, _id in (
    ({"fix_gamma": False, "eps": 1e-5}, "infer"),
    ({}, "infer-fix_gamma"),
    ({"fix_gamma": False, "axis": -1}, "infer-axis-1"),
):
    _axis = _params.get("axis", 1)
    CASES.append(
        row(
            "BatchNorm",
            [(2, 3, 4, 5), (5 if _axis == -1 else 3,)] + [(5 if _axis == -1 else 3,)] * 3,
            batch_norm_inference_ref,
            params=_params,
            inputs=batch_norm_inputs,
            low=0.1,  # check_op draws every input from [low, high]: variances must be > 0
            high=1.0,
            grad=False,
            id=_id,
        )
    )

# SyncBatchNorm on one device is BatchNorm over axis 1 (test_nn.py: its training outputs).
CASES.append(
    row(
        "_contrib_SyncBatchNorm",
        [(2, 3, 4, 5), (3,), (3,), (3,), (3,)],
        batch_norm_inference_ref,
        params={"fix_gamma": False, "eps": 1e-5, "ndev": 1, "key": "bn0"},
        inputs=batch_norm_inputs,
        low=0.1,
        high=1.0,
        grad=False,
        id="infer",
    )
)

# Dropout at inference is the identity (training is random: test_nn.py tests it).
CASES.append(row("Dropout", [(4, 5)], lambda x, **_: x, params={"p": 0.5}, grad=False, id="infer"))
# p = 0 keeps everything even in training, so its gradient can be checked
CASES.append(row("Dropout", [(4, 5)], lambda x, **_: x, params={"p": 0.0}, id="p0"))

# SoftmaxOutput's gradient is the loss gradient, not that of its output: test_nn.py.
CASES.extend(
    row(
        name,
        [(4, 5), (4,)],
        lambda x, label, **_: softmax_ref(x.reshape(x.shape[0], -1)).reshape(x.shape),
        inputs=labels_for(5, (4,)),
        grad=False,
        id="" if name == "Softmax" else "2d",
    )
    for name in ("SoftmaxOutput", "Softmax")
)
CASES.append(
    row(
        "SoftmaxOutput",
        [(2, 3, 4), (2, 4)],
        lambda x, label, **_: softmax_ref(x, axis=1),
        params={"multi_output": True},
        inputs=labels_for(3, (2, 4)),
        grad=False,
        id="multi_output",
    )
)
CASES.append(
    row(
        "SoftmaxOutput",
        [(2, 3, 4), (2, 3)],
        lambda x, label, **_: softmax_ref(x, axis=-1),
        params={"preserve_shape": True},
        inputs=labels_for(4, (2, 3)),
        grad=False,
        id="preserve_shape",
    )
)

# Optimizer updates have no gradient; sgd_mom_update changes `mom` in place, so check_op's
# repeated runs on the same inputs would see a different mom each time.
CASES.append(
    row(
        "sgd_update",
        [(3, 4), (3, 4)],
        sgd_ref,
        params={"lr": 0.1, "wd": 0.01, "rescale_grad": 0.5, "clip_gradient": 0.2},
        grad=False,
    )
)
CASES.append(
    row(
        "sgd_mom_update",
        [(3, 4), (3, 4), (3, 4)],
        sgd_mom_ref,
        params={"lr": 0.1, "momentum": 0.9, "wd": 0.01, "rescale_grad": 0.5},
        grad=False,
        check_op=False,
    )
)
