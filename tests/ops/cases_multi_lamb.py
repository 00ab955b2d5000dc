"""OpCase rows for optimizer/multi_lamb.py: each tensor's new weight is LAMB's phase 1 then
phase 2 from tests/optimizer_formulas.py, with the norms taken by NumPy."""

from __future__ import annotations

from typing import Any

import numpy as np
from cases_optimizer import make
from op_db import OpCase

import optimizer_formulas as F

SHAPES = [(3, 4), (5,)]
PARAMS = {
    "num_tensors": 2,
    "learning_rates": (0.1, 0.05),
    "wds": (0.01, 0.0),
    "step_count": (1, 4),
    "rescale_grad": 0.5,
    "clip_gradient": 0.2,
    "lower_bound": 0.1,
    "upper_bound": 3.0,
}


def multi_lamb_ref(mp: bool) -> Any:
    slots = 5 if mp else 4

    def reference(*inputs: np.ndarray, **p: Any) -> list[np.ndarray]:
        outs = []
        for i in range(p["num_tensors"]):
            weight, grad, mean, var, *master = inputs[slots * i : slots * (i + 1)]
            w = master[0] if mp else weight
            g, _, _ = F.lamb_phase1(w, grad, mean, var, t=p["step_count"][i], wd=p["wds"][i],
                                    rescale_grad=p["rescale_grad"],
                                    clip_gradient=p["clip_gradient"])  # fmt: skip
            r1, r2 = np.linalg.norm(w), np.linalg.norm(g)
            outs.append(F.lamb_phase2(w, g, r1, r2, lr=p["learning_rates"][i],
                                      lower_bound=p["lower_bound"],
                                      upper_bound=p["upper_bound"])[0])  # fmt: skip
        return outs

    return reference


def _case(mp: bool) -> OpCase:
    slots = 5 if mp else 4
    shapes = [s for s in SHAPES for _ in range(slots)]
    f32 = [g * slots + k for g in range(2) for k in range(2, slots)] if mp else []
    positive = [g * slots + 3 for g in range(2)]  # the second moments
    return OpCase(
        "_multi_mp_lamb_update" if mp else "_multi_lamb_update",
        shapes,
        multi_lamb_ref(mp),
        params=PARAMS,
        inputs=make(shapes, float32=f32, positive=positive),
        dtypes=(np.float16,) if mp else (np.float32, np.float64),
        grad=False,
        check_op=False,  # mutates its states
    )


CASES = [_case(False), _case(True)]
