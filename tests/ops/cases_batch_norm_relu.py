"""OpCase rows for nn/batch_norm_relu.py at inference: relu of NumPy BatchNorm with the
moving statistics (training and gradients: test_batch_norm_relu.py)."""

from __future__ import annotations

from typing import Any

import numpy as np
from cases_nn import batch_norm_inference_ref, batch_norm_inputs, row

CASES = []


def _ref(*inputs: np.ndarray, **params: Any) -> np.ndarray:
    return np.maximum(batch_norm_inference_ref(*inputs, **params), 0.0)


for _params, _id in (({"fix_gamma": False, "eps": 1e-5}, "infer"), ({"axis": -1}, "axis-1")):
    _c = 5 if _params.get("axis") == -1 else 3
    CASES.append(
        row(
            "_contrib_BatchNormWithReLU",
            [(2, 3, 4, 5)] + [(_c,)] * 4,
            _ref,
            params=_params,
            inputs=batch_norm_inputs,
            low=0.1,  # check_op draws every input from [low, high]: variances must be > 0
            high=1.0,
            grad=False,  # moving_mean/var are auxiliary states: see test_batch_norm_relu.py
            id=_id,
        )
    )


def _add_ref(*inputs: np.ndarray, **params: Any) -> np.ndarray:
    return np.maximum(batch_norm_inference_ref(*inputs[:5], **params) + inputs[5], 0.0)


def _with_residual(rng: np.random.Generator, dtype: Any, shapes: Any) -> list[np.ndarray]:
    return [*batch_norm_inputs(rng, dtype, shapes), rng.normal(size=shapes[0]).astype(dtype)]


# _BatchNormAddReLU (FuseBatchNormReLU makes it from BatchNorm -> elemwise_add -> relu in
# training graphs; its training kernels: test_batch_norm_relu_kernels.py)
CASES.append(
    row(
        "_BatchNormAddReLU",
        [(2, 3, 4, 5), (3,), (3,), (3,), (3,), (2, 3, 4, 5)],
        _add_ref,
        params={"fix_gamma": False, "eps": 1e-5},
        inputs=_with_residual,
        low=0.1,
        high=1.0,
        grad=False,  # moving_mean/var are auxiliary states
        id="add-infer",
    )
)
