"""FScalarFunction: every op declaring a scalar body computes what that body says.

Fusion replaces an op's FCompute by its declared scalar functions, so the declaration
must match the compute: FCompute<cpu> on random inputs against the scalar functions
applied element by element in plain Python (the kernels' py_func, no numba).
"""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy.attrs import FCompute_cpu, FScalarFunction
from nnvmpy.base import Context, NNVMError
from nnvmpy.engine.base import RunContext
from nnvmpy.registry import Op
from nnvmpy.resource import OpContext

sys.path.insert(0, str(Path(__file__).parents[1] / "ops"))
from op_db import OP_DB

# ops that always decline (their FScalarFunction returns None: the integer mod backward
# ops, whose zero-for-integers rule lives in FCompute) are not fusable
_NEVER = {
    "_backward_mod",
    "_backward_broadcast_mod",
    "_backward_mod_scalar",
    "_backward_rmod_scalar",
}
FUSABLE = sorted(
    n
    for n in Op.list_op_names()
    if Op.get(n).get_attr(FScalarFunction) is not None and n not in _NEVER
)
CASES = {c.name: c for c in OP_DB}
# params for ops whose row (or whose forward op's row) does not name them
EXTRA = {
    "Activation": {"act_type": "tanh"},
    "_backward_Activation": {"act_type": "sigmoid"},
    "LeakyReLU": {"act_type": "elu", "slope": 0.3},
    "_backward_LeakyReLU": {"act_type": "gelu"},
}


def _forward_case(name: str) -> Any:
    while name not in CASES and name.startswith("_backward_"):
        name = name.removeprefix("_backward_")
    return CASES.get(name)


def _node(name: str) -> tuple[Any, float, float]:
    op = Op.get(name)
    case = _forward_case(name)
    params = dict(case.params) if case is not None else {}
    params.update(EXTRA.get(name, {}))
    low, high = (case.low, case.high) if case is not None and case.inputs is None else (0.2, 0.9)
    return op.parse_attrs(params, name), low, high


def _loop(body: Any, inputs: list[np.ndarray], dtype: Any) -> list[np.ndarray]:
    """The scalar functions applied element by element in Python."""
    outs = []
    for k in body.kernels:
        flat = [x.reshape(-1) for x in inputs]
        vals = [k.py_func(*[x[i].item() for x in flat], *body.params) for i in range(flat[0].size)]
        outs.append(np.array(vals, dtype=np.float64).astype(dtype).reshape(inputs[0].shape))
    return outs


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", FUSABLE)
def test_scalar_body_matches_fcompute(name: str, dtype: Any) -> None:
    attrs, low, high = _node(name)
    body = attrs.op.get_attr(FScalarFunction)(attrs)
    assert body is not None
    rng = np.random.default_rng(abs(hash(name)) % 2**32)
    n_in = attrs.op.get_num_inputs(attrs)
    inputs = [rng.uniform(low, high, (3, 5)).astype(dtype) for _ in range(n_in)]
    outs = [np.full((3, 5), np.nan, dtype) for _ in body.kernels]
    assert len(outs) == attrs.op.get_num_outputs(attrs)
    ctx = OpContext(False, RunContext(Context("cpu")))
    attrs.op.get_attr(FCompute_cpu)(attrs, ctx, inputs, ["write"] * len(outs), outs)
    tol = 1e-12 if dtype == np.float64 else 2e-6
    for got, want in zip(outs, _loop(body, inputs, dtype)):
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol, equal_nan=True)


def test_modes_without_a_scalar_body_say_none() -> None:
    """prelu broadcasts gamma and rrelu draws random slopes: not fusable."""
    op = Op.get("LeakyReLU")
    for mode in ("prelu", "rrelu"):
        assert op.get_attr(FScalarFunction)(op.parse_attrs({"act_type": mode}, "l")) is None


def test_scalar_function_maps_params_in_order() -> None:
    @nv.kernel.elementwise
    def _affine(x, a, b):
        return a * x + b

    attrs = Op.get("quadratic").parse_attrs({"a": 2.0, "b": 3.0, "c": 4.0}, "q")
    body = nv.kernel.scalar_function(_affine, params=("b", "a"))(attrs)
    assert body.params == (3.0, 2.0)
    assert body.kernels == (_affine,)
    assert math.isclose(body.kernels[0](1.0, *body.params), 5.0)


def test_scalar_function_refuses_non_kernels() -> None:
    with pytest.raises(NNVMError, match=r"scalar_function: expected nv\.kernel\.elementwise"):
        nv.kernel.scalar_function(lambda x: x)  # type: ignore[arg-type]
    with pytest.raises(NNVMError, match="at least one kernel"):
        nv.kernel.scalar_function()
