"""Every op of the op table, differentiated imperatively (autograd) in float64:

- against the symbolic executor's gradient of the same op (same inputs, same head
  gradients): the two paths share FGradient and the kernels, so they agree to rounding;
- against central finite differences of sum(head_grads * op(x)) computed with nd, which
  involves no gradient code at all.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy.attrs import FResourceRequest
from nnvmpy.registry import Op
from nnvmpy.resource import ResourceRequest

sys.path.insert(0, str(Path(__file__).parents[1] / "ops"))
from op_db import OP_DB, OpCase

nd, ag = nv.nd, nv.autograd
GRAD_CASES = [c for c in OP_DB if c.grad]


def _fn(namespace: Any, name: str) -> Any:
    return getattr(namespace._internal if name.startswith("_") else namespace, name)


def _as_list(x: Any) -> list[Any]:
    return list(x) if isinstance(x, list | tuple) else [x]


def _random(case: OpCase) -> bool:
    requests = Op.get(case.name).get_attr(FResourceRequest)
    params = Op.get(case.name).parse_attrs(case.params)
    return requests is not None and ResourceRequest.kRandom in requests(params)


def _setup(case: OpCase) -> tuple[list[np.ndarray], list[int], list[np.ndarray]]:
    seed = sum(map(ord, case.test_id))
    rng = np.random.default_rng(seed)
    inputs = [np.asarray(x, dtype=np.float64) for x in case.make_inputs(rng, np.float64)]
    which = list(range(len(inputs)) if case.grad_inputs is None else case.grad_inputs)
    outs = _as_list(
        _fn(nd, case.name)(*[nd.array(x, dtype=x.dtype) for x in inputs], **case.params)
    )
    heads = [rng.uniform(0.5, 1.5, size=o.shape) for o in outs]
    return inputs, which, heads


def _autograd(case: OpCase, inputs: list[np.ndarray], which: list[int], heads: list[Any]) -> list:
    arrays = [nd.array(x, dtype=x.dtype) for x in inputs]
    for i in which:
        arrays[i].attach_grad()
    with ag.record():
        outs = _as_list(_fn(nd, case.name)(*arrays, **case.params))
    ag.backward(outs, [nd.array(h, dtype=np.float64) for h in heads])
    return [arrays[i].grad.asnumpy() for i in which]


@pytest.mark.parametrize("case", GRAD_CASES, ids=[c.test_id for c in GRAD_CASES])
def test_autograd_matches_executor(case: OpCase) -> None:
    if _random(case):
        pytest.skip("random op: two runs draw different numbers")
    inputs, which, heads = _setup(case)
    got = _autograd(case, inputs, which, heads)
    names = [f"x{i}" for i in range(len(inputs))]
    s = _fn(nv.sym, case.name)(*[nv.sym.Variable(n) for n in names], **case.params)
    reqs = {n: ("write" if i in which else "null") for i, n in enumerate(names)}
    exe = s.simple_bind(
        nv.cpu(),
        grad_req=reqs,
        type_dict=dict.fromkeys(names, np.float64),
        **{n: x.shape for n, x in zip(names, inputs)},
    )
    exe.forward(is_train=True, **dict(zip(names, inputs)))
    exe.backward([nd.array(h, dtype=np.float64) for h in heads])
    for i, g in zip(which, got):
        want = exe.grad_dict[names[i]].asnumpy()
        np.testing.assert_allclose(g, want, rtol=1e-9, atol=1e-12, err_msg=f"input {i}")


@pytest.mark.parametrize("case", GRAD_CASES, ids=[c.test_id for c in GRAD_CASES])
def test_autograd_matches_finite_differences(case: OpCase) -> None:
    if _random(case):
        pytest.skip("random op: finite differences need the same draw twice")
    inputs, which, heads = _setup(case)
    got = _autograd(case, inputs, which, heads)

    def objective(xs: list[np.ndarray]) -> float:
        outs = _as_list(
            _fn(nd, case.name)(*[nd.array(x, dtype=x.dtype) for x in xs], **case.params)
        )
        return float(sum(np.sum(o.asnumpy() * h) for o, h in zip(outs, heads)))

    outs = _as_list(
        _fn(nd, case.name)(*[nd.array(x, dtype=x.dtype) for x in inputs], **case.params)
    )
    # an output rounded to float32 (Cast) needs a step its rounding does not swamp
    eps = 1e-6 if all(o.dtype == np.float64 for o in outs) else 1e-3
    for i, g in zip(which, got):
        want = np.zeros_like(inputs[i])
        for j in np.ndindex(inputs[i].shape):
            plus = [x.copy() for x in inputs]
            minus = [x.copy() for x in inputs]
            plus[i][j] += eps
            minus[i][j] -= eps
            want[j] = (objective(plus) - objective(minus)) / (2 * eps)
        np.testing.assert_allclose(
            g, want, rtol=case.grad_rtol, atol=case.grad_atol, err_msg=f"input {i}"
        )
