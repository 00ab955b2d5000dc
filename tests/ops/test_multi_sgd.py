"""multi_(mp_)sgd(_mom)_update and preloaded_multi_*: several weights per op, each its own
lr and wd, against the single-weight SGD formulas; the inputs they mutate; their errors."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import nnvmpy as nv
import optimizer_formulas as F

SIMULATOR = os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"
SHAPES = [(3, 4), (7,), (2, 2, 2)]
LRS, WDS = (0.1, 0.05, 0.2), (0.01, 0.0, 0.001)


@pytest.fixture
def dev(ctx: nv.Context) -> Iterator[nv.Context]:
    if ctx.device_type == "gpu" and SIMULATOR:
        with nv.engine.engine_type("NaiveEngine"):
            yield ctx
    else:
        yield ctx


def name_of(mom: bool, mp: bool, preloaded: bool) -> str:
    base = "sgd_mom_update" if mom else "sgd_update"
    return ("preloaded_" if preloaded else "") + "multi_" + ("mp_" if mp else "") + base


VARIANTS = [(m, p, pre) for m in (False, True) for p in (False, True) for pre in (False, True)]


@pytest.mark.parametrize("variant", VARIANTS, ids=[name_of(*v) for v in VARIANTS])
def test_multi_sgd_several_steps(dev: nv.Context, variant: tuple[bool, bool, bool]) -> None:
    mom, mp, preloaded = variant
    rng = np.random.default_rng(0)
    wdtype = np.float16 if mp else np.float32
    w32 = [rng.normal(size=s).astype(np.float32) for s in SHAPES]
    moms = [rng.normal(size=s).astype(np.float32) for s in SHAPES]
    weights = [nv.nd.array(w, ctx=dev, dtype=wdtype) for w in w32]
    masters = [nv.nd.array(w, ctx=dev) for w in w32]
    mom_arrs = [nv.nd.array(m, ctx=dev, dtype=np.float32 if mp else wdtype) for m in moms]
    want_w = [w.astype(np.float64) for w in w32]
    want_m = [m.astype(np.float64) for m in moms]
    params: dict[str, Any] = {"num_weights": 3, "rescale_grad": 0.5, "clip_gradient": 0.6}
    if mom:
        params["momentum"] = 0.9
    if not preloaded:
        params.update(lrs=LRS, wds=WDS)
    for _step in range(3):
        grads = [rng.normal(size=s).astype(wdtype) for s in SHAPES]
        g_arrs = [nv.nd.array(g, ctx=dev, dtype=wdtype) for g in grads]
        inputs: list[Any] = []
        for i in range(3):
            inputs += [weights[i], g_arrs[i]] + [mom_arrs[i]] * mom + [masters[i]] * mp
        if preloaded:
            inputs += [nv.nd.array(LRS, ctx=dev), nv.nd.array(WDS, ctx=dev)]
        result = getattr(nv.nd, name_of(*variant))(*inputs, out=weights, **params)
        assert all(r is w for r, w in zip(result, weights, strict=True))
        for i in range(3):
            rule = F.sgd_mom if mom else F.sgd
            states = [want_m[i]] if mom else []
            new = rule(want_w[i], grads[i].astype(np.float64), *states, lr=LRS[i], wd=WDS[i],
                       momentum=0.9, rescale_grad=0.5, clip_gradient=0.6)  # fmt: skip
            want_w[i] = new[0]
            if mom:
                want_m[i] = new[1]
    tol = {"rtol": 1e-5, "atol": 1e-6}
    for i in range(3):
        if mp:
            np.testing.assert_allclose(masters[i].asnumpy(), want_w[i], **tol)
            np.testing.assert_array_equal(
                weights[i].asnumpy(), masters[i].asnumpy().astype(np.float16)
            )
        else:
            np.testing.assert_allclose(weights[i].asnumpy(), want_w[i], **tol)
        if mom:
            np.testing.assert_allclose(mom_arrs[i].asnumpy(), want_m[i], **tol)


def test_multi_ops_mutate_exactly_their_states() -> None:
    for mom, mp, pre in VARIANTS:
        op = nv.Op.get(name_of(mom, mp, pre))
        attrs = op.parse_attrs(
            {"num_weights": 2, **({} if pre else {"lrs": (1, 1), "wds": (0, 0)})}
        )
        stride = 2 + mom + mp
        assert op.get_num_inputs(attrs) == 2 * stride + 2 * pre
        assert op.get_num_outputs(attrs) == 2
        mutated = op.get_attr("FMutateInputs", lambda a: [])(attrs)
        assert mutated == [i * stride + k for i in range(2) for k in range(2, stride)]


def test_multi_sgd_symbol_lists_its_states_as_auxiliary() -> None:
    v = [nv.sym.Variable(n) for n in ("w0", "g0", "m0", "w1", "g1", "m1")]
    s = nv.sym.multi_sgd_mom_update(*v, lrs=(0.1, 0.2), wds=(0, 0), num_weights=2)
    assert s.list_arguments() == ["w0", "g0", "w1", "g1"]
    assert s.list_auxiliary_states() == ["m0", "m1"]
    assert len(s.list_outputs()) == 2


def test_multi_sgd_errors_name_the_op_and_leave_the_engine_usable() -> None:
    w = [nv.nd.ones((2, 3)), nv.nd.ones((2, 3))]
    with pytest.raises(
        nv.InferError, match=r"multi_sgd_update: lrs has 1 values but num_weights is 2"
    ):
        nv.nd.multi_sgd_update(w[0], w[0], w[1], w[1], lrs=(0.1,), wds=(0, 0), num_weights=2)
    with pytest.raises(nv.NNVMError, match=r"multi_sgd_update: expects 4 inputs, got 2"):
        nv.nd.multi_sgd_update(w[0], w[0], lrs=(0.1, 0.1), wds=(0, 0), num_weights=2)
    with pytest.raises(nv.InferError, match=r"preloaded_multi_sgd_update.*'lrs'"):
        nv.nd.preloaded_multi_sgd_update(w[0], w[0], nv.nd.ones((3,)), nv.nd.ones((1,)))
    with pytest.raises(nv.ParamError, match=r"multi_sgd_update.*missing.*'lrs'"):
        nv.nd.multi_sgd_update(w[0], w[0])
    out = nv.nd.multi_sgd_update(w[0], nv.nd.ones((2, 3)), lrs=(0.5,), wds=(0,), num_weights=1)
    np.testing.assert_allclose(out.asnumpy(), 0.5)
