"""OpCase rows of the loss heads (regression outputs, SVMOutput, MakeLoss, make_loss,
softmax_cross_entropy, CTCLoss and its aliases) and the sequence ops.

References are NumPy formulas. A head's gradient comes from its label, not from the head
gradient, so those rows skip the generic finite-difference check (grad=False);
tests/ops/test_losses.py checks their gradients against the formulas. The sequence ops
are differentiated with respect to data only (their lengths are integers).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from ctc_reference import ctc_brute_force
from op_db import OpCase


def _ctc_inputs(blank: str) -> Any:
    def make(rng: np.random.Generator, dtype: Any) -> list[np.ndarray]:
        acts = rng.normal(size=(4, 2, 3)).astype(dtype)
        if blank == "first":  # classes 1, 2; padding 0
            labels = np.array([[1, 2], [2, 0]], dtype=dtype)
        else:  # classes 0, 1; blank 2; padding -1
            labels = np.array([[0, 1], [1, -1]], dtype=dtype)
        return [acts, labels]

    return make


def _labels(classes: int, rows: int) -> Any:
    def make(rng: np.random.Generator, dtype: Any) -> list[np.ndarray]:
        return [
            rng.normal(size=(rows, classes)).astype(dtype),
            rng.integers(0, classes, size=rows).astype(dtype),
        ]

    return make


def _with_lengths(shape: tuple[int, ...], axis: int) -> Any:
    def make(rng: np.random.Generator, dtype: Any) -> list[np.ndarray]:
        batch = shape[1 - axis]
        lengths = rng.integers(1, shape[axis] + 1, size=batch).astype(dtype)
        return [rng.uniform(-1, 1, size=shape).astype(dtype), lengths]

    return make


def _seq_view(x: np.ndarray, axis: int) -> np.ndarray:
    return x if axis == 0 else np.swapaxes(x, 0, 1)  # (T, N, ...)


def seq_last_ref(x, lengths=None, use_sequence_length=False, axis=0, **_):
    t = _seq_view(x, axis)
    if not use_sequence_length:
        return t[-1]
    return np.stack([t[int(n) - 1, i] for i, n in enumerate(lengths)])


def seq_mask_ref(x, lengths=None, use_sequence_length=False, axis=0, value=0.0, **_):
    out = _seq_view(x.copy(), axis)
    if use_sequence_length:
        for i, n in enumerate(lengths):
            out[int(n) :, i] = value
    return _seq_view(out, axis)


def seq_reverse_ref(x, lengths=None, use_sequence_length=False, axis=0, **_):
    t = _seq_view(x, axis)
    out = t.copy()
    for i in range(t.shape[1]):
        n = int(lengths[i]) if use_sequence_length else t.shape[0]
        out[:n, i] = t[:n, i][::-1]
    return _seq_view(out, axis)


def softmax_ce_ref(x, label, **_):
    z = x - x.max(axis=1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    return np.array([-logp[np.arange(len(label)), label.astype(int)].sum()])


CASES: list[OpCase] = []

for _name, _ref in (
    ("LinearRegressionOutput", lambda x, label, **_: x),
    ("MAERegressionOutput", lambda x, label, **_: x),
    ("LogisticRegressionOutput", lambda x, label, **_: 1 / (1 + np.exp(-x))),
):
    CASES.append(OpCase(_name, [(4, 3), (4, 3)], _ref, grad=False))
CASES.append(OpCase("LinearRegressionOutput", [(5,), (5,)], lambda x, label, **_: x,
                    params={"grad_scale": 2.0}, grad=False, id="1d"))  # fmt: skip

CASES.append(OpCase("SVMOutput", [(4, 3), (4,)], lambda x, label, **_: x, inputs=_labels(3, 4),
                    grad=False))  # fmt: skip
CASES.append(OpCase("SVMOutput", [(4, 3), (4,)], lambda x, label, **_: x, inputs=_labels(3, 4),
                    params={"use_linear": True, "margin": 0.5}, grad=False,
                    id="linear"))  # fmt: skip

CASES.extend(OpCase(n, [(3, 4)], lambda x, **_: x, grad=False) for n in ("MakeLoss", "make_loss"))
CASES.append(OpCase("MakeLoss", [(3, 4)], lambda x, **_: x,
                    params={"grad_scale": 0.5, "normalization": "batch"}, grad=False,
                    id="batch"))  # fmt: skip

CASES.append(
    OpCase(
        "softmax_cross_entropy",
        [(4, 3), (4,)],
        softmax_ce_ref,
        inputs=_labels(3, 4),
        grad_inputs=[0],
        check_op=False,  # check_op draws uniform labels; class ids must be integers in [0, 3)
    )
)

CASES.extend(
    OpCase(
        name,
        [(4, 2, 3), (2, 2)],
        lambda acts, labels, **_: ctc_brute_force(acts, labels, 0),
        inputs=_ctc_inputs("first"),
        grad_inputs=[0],
        check_op=False,  # its hidden gradient output is not an op output to compare
    )
    for name in ("CTCLoss", "ctc_loss", "_contrib_CTCLoss", "_contrib_ctc_loss")
)
CASES.append(
    OpCase(
        "CTCLoss",
        [(4, 2, 3), (2, 2)],
        lambda acts, labels, **_: ctc_brute_force(acts, labels, 2),
        params={"blank_label": "last"},
        inputs=_ctc_inputs("last"),
        grad_inputs=[0],
        check_op=False,
        id="blank_last",
    )
)

for _name, _ref in (
    ("SequenceLast", seq_last_ref),
    ("SequenceMask", seq_mask_ref),
    ("SequenceReverse", seq_reverse_ref),
):
    CASES.append(OpCase(_name, [(5, 3, 2)], _ref))
    for _axis in (0, 1):
        shape = (5, 3, 2) if _axis == 0 else (3, 5, 2)
        CASES.append(
            OpCase(
                _name,
                [shape, (3,)],
                _ref,
                params={"use_sequence_length": True, "axis": _axis},
                inputs=_with_lengths(shape, _axis),
                grad_inputs=[0],
                check_op=False,  # check_op draws uniform lengths; they must be integers
                id=f"lengths-axis{_axis}",
            )
        )
CASES.append(OpCase("SequenceMask", [(5, 3, 2), (3,)], seq_mask_ref,
                    params={"use_sequence_length": True, "value": -2.0},
                    inputs=_with_lengths((5, 3, 2), 0), grad_inputs=[0], check_op=False,
                    id="value"))  # fmt: skip
