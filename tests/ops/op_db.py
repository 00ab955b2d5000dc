"""The op table: one OpCase per op (or per interesting parameter set).

Generic checks in test_op_db.py run every case: forward against the NumPy reference
on each listed dtype and device, req='add' accumulation, check_op (shape/type inference
both ways, in-place safety) and gradients against finite differences. Each op family
keeps its rows in its own `cases_<family>.py` (a list named CASES); this module
gathers them, so adding an op to every generic check is one line in one file.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

Inputs = list[np.ndarray]


@dataclass
class OpCase:
    """One op with one parameter set, its NumPy reference and how to test it."""

    name: str
    shapes: Sequence[tuple[int, ...]]
    reference: Callable[..., Any]  # (*inputs as float64 numpy, **params) -> output or list
    params: dict[str, Any] = field(default_factory=dict)
    low: float = -1.0  # inputs are uniform in [low, high] ...
    high: float = 1.0
    inputs: Callable[[np.random.Generator, Any], Inputs] | None = None  # ... unless given
    # the dtypes of the inputs; a case with no inputs (an initialiser) lists the output dtype
    dtypes: Sequence[Any] = (np.float32, np.float64)
    rtol: float = 1e-4  # forward tolerances for float32; test_op_db derives the other
    atol: float = 1e-5  # dtypes' from these (float64: 1e-6 times tighter) ...
    tols: dict[Any, tuple[float, float]] = field(default_factory=dict)  # ... unless given here
    grad: bool = True  # check gradients against finite differences
    grad_inputs: Sequence[int] | None = None  # which inputs to differentiate (None: all)
    grad_rtol: float = 1e-2
    grad_atol: float = 1e-4
    check_op: bool = True  # run test_utils.check_op (needs FCompute<cpu> and fixed arity)
    gpu: bool = True  # has an FCompute<gpu>
    id: str = ""  # test id suffix when one op has several cases

    @property
    def test_id(self) -> str:
        return f"{self.name}-{self.id}" if self.id else self.name

    def make_inputs(self, rng: np.random.Generator, dtype: Any) -> Inputs:
        if self.inputs is not None:
            return [np.asarray(x) for x in self.inputs(rng, dtype)]
        return [rng.uniform(self.low, self.high, size=s).astype(dtype) for s in self.shapes]


def _gather() -> list[OpCase]:
    cases: list[OpCase] = []
    here = Path(__file__).parent
    for info in sorted(pkgutil.iter_modules([str(here)]), key=lambda m: m.name):
        if info.name.startswith("cases_"):
            module = importlib.import_module(info.name)
            cases.extend(module.CASES)
    return cases


OP_DB: list[OpCase] = _gather()
