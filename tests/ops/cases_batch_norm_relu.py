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
