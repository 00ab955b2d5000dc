"""Optimizer update ops against MXNet's documented formulas (tests/optimizer_formulas.py).

Several steps each, updating the weight in place (out=weight) and the states in place, on
every device; mixed precision; the multi_* ops; which inputs each op mutates; kNullOp;
the gradient statistics ops; the AMP casts; and the errors.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import nnvmpy as nv
import optimizer_formulas as F
from nnvmpy.base import OpReqType
from nnvmpy.registry import Op
from nnvmpy.test_utils import _run_compute

SIMULATOR = os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"
SHAPE = (4, 5)


@pytest.fixture
def dev(ctx: nv.Context) -> Iterator[nv.Context]:
    """The device; the CUDA simulator runs one kernel at a time, so it gets NaiveEngine."""
    if ctx.device_type == "gpu" and SIMULATOR:
        with nv.engine.engine_type("NaiveEngine"):
            yield ctx
    else:
        yield ctx


def rand(seed: int, n: int, shape: tuple[int, ...] = SHAPE, positive: tuple[int, ...] = ()):
    rng = np.random.default_rng(seed)
    return [
        rng.uniform(0.1, 1.0, shape) if k in positive else rng.normal(size=shape) for k in range(n)
    ]


# op, formula, number of inputs, params, state slots that must stay positive
UPDATES: list[tuple[str, Any, int, dict[str, Any], tuple[int, ...]]] = [
    ("sgd_update", F.sgd, 2, {"lr": 0.1, "wd": 0.01}, ()),
    ("sgd_mom_update", F.sgd_mom, 3, {"lr": 0.1, "momentum": 0.9, "wd": 0.01}, ()),
    ("nag_mom_update", F.nag_mom, 3, {"lr": 0.1, "momentum": 0.9, "wd": 0.01}, ()),
    ("signsgd_update", F.signsgd, 2, {"lr": 0.1, "wd": 0.01}, ()),
    ("signum_update", F.signum, 3, {"lr": 0.1, "momentum": 0.9, "wd": 0.01, "wd_lh": 0.01}, ()),
    ("adam_update", F.adam, 4, {"lr": 0.1, "beta1": 0.8, "beta2": 0.9, "wd": 0.01}, (3,)),
    ("rmsprop_update", F.rmsprop, 3, {"lr": 0.05, "gamma1": 0.9, "wd": 0.01}, (2,)),
    ("rmspropalex_update", F.rmspropalex, 5, {"lr": 0.01, "gamma1": 0.9, "gamma2": 0.9}, (2,)),
    ("ftrl_update", F.ftrl, 4, {"lr": 0.1, "lamda1": 0.05, "beta": 1.0, "wd": 0.01}, (3,)),
    ("ftml_update", F.ftml, 5, {"lr": 0.1, "beta1": 0.6, "beta2": 0.99, "t": 1, "wd": 0.01}, (3,)),
]
GRAD_PREP = [
    {},
    {"rescale_grad": 0.5},
    {"rescale_grad": 2.0, "clip_gradient": 0.3},
]


def _prep(name: str, prep: dict[str, Any]) -> dict[str, Any]:
    if name == "ftml_update" and "clip_gradient" in prep:  # FTML spells it clip_grad
        prep = {**prep, "clip_grad": prep["clip_gradient"]}
        del prep["clip_gradient"]
    return prep


@pytest.mark.parametrize("prep", GRAD_PREP, ids=["plain", "rescale", "clip"])
@pytest.mark.parametrize("case", UPDATES, ids=[u[0] for u in UPDATES])
def test_update_several_steps_in_place(dev: nv.Context, case: Any, prep: dict[str, Any]) -> None:
    name, formula, n_in, params, positive = case
    params = {**params, **_prep(name, prep)}
    weight, *states = rand(1, n_in - 1, positive=tuple(p - 1 for p in positive))
    if name == "rmspropalex_update":  # keep n - g^2 > 0 from the start
        states[0] = states[0] + states[1] ** 2
    arrs = [nv.nd.array(x, ctx=dev, dtype=np.float64) for x in [weight, *states]]
    want = [weight, *states]
    for step in range(3):
        grad = rand(10 + step, 1)[0]
        if name == "ftml_update":
            params["t"] = step + 1
        result = getattr(nv.nd, name)(
            arrs[0], nv.nd.array(grad, ctx=dev, dtype=np.float64), *arrs[1:], out=arrs[0], **params
        )
        assert result is arrs[0]
        want = list(formula(want[0], grad, *want[1:], **params))
    for k, (got, w) in enumerate(zip(arrs, want, strict=True)):
        np.testing.assert_allclose(got.asnumpy(), w, rtol=1e-10, atol=1e-12, err_msg=f"slot {k}")


def test_lazy_update_is_accepted_and_has_no_effect_on_dense_arrays() -> None:
    w, g, m, v = rand(2, 4, positive=(3,))
    outs = []
    for lazy in (True, False):
        weight = nv.nd.array(w)
        nv.nd.adam_update(weight, nv.nd.array(g), nv.nd.array(m), nv.nd.array(v), out=weight,
                          lr=0.1, lazy_update=lazy)  # fmt: skip
        outs.append(weight.asnumpy())
    np.testing.assert_array_equal(outs[0], outs[1])


# -- which inputs change (MXNet's test_update_ops_mutation) ---------------------------------------


MUTATED = {
    "sgd_update": [0], "sgd_mom_update": [0, 2], "nag_mom_update": [0, 2],
    "signsgd_update": [0], "signum_update": [0, 2], "adam_update": [0, 2, 3],
    "rmsprop_update": [0, 2], "rmspropalex_update": [0, 2, 3, 4], "ftrl_update": [0, 2, 3],
    "ftml_update": [0, 2, 3, 4],
}  # fmt: skip


@pytest.mark.parametrize("case", UPDATES, ids=[u[0] for u in UPDATES])
def test_only_weight_and_states_change(case: Any) -> None:
    name, _, n_in, params, positive = case
    values = rand(3, n_in, positive=positive)
    if name == "rmspropalex_update":
        values[2] = values[2] + values[3] ** 2
    arrs = [nv.nd.array(x) for x in values]
    before = [a.asnumpy() for a in arrs]
    getattr(nv.nd, name)(*arrs, out=arrs[0], **params)
    for k, (a, b) in enumerate(zip(arrs, before, strict=True)):
        changed = not np.array_equal(a.asnumpy(), b)
        assert changed == (k in MUTATED[name]), f"{name}: input {k} changed={changed}"
    assert Op.get(name).get_attr("FMutateInputs", lambda a: [])(None) == MUTATED[name][1:]


def test_states_update_even_when_the_output_is_not_requested() -> None:
    """kNullOp skips the output only (MXNet runs the kernel and skips KERNEL_ASSIGN)."""
    w, g, m, v = rand(4, 4, positive=(3,))
    op = Op.get("adam_update")
    attrs = op.parse_attrs({"lr": 0.1})
    inputs = [x.astype(np.float32) for x in (w, g, m, v)]
    out = np.full(SHAPE, 7.0, np.float32)
    _run_compute(op, attrs, inputs, [SHAPE], [np.float32], OpReqType.kNullOp, [out])
    _, want_m, want_v = F.adam(w, g, m, v, lr=0.1)
    np.testing.assert_array_equal(out, 7.0)
    np.testing.assert_allclose(inputs[2], want_m, rtol=1e-6)
    np.testing.assert_allclose(inputs[3], want_v, rtol=1e-6)


def test_update_without_out_returns_a_new_weight() -> None:
    w, g, m = rand(5, 3)
    weight, mom = nv.nd.array(w, dtype=np.float64), nv.nd.array(m, dtype=np.float64)
    new = nv.nd.nag_mom_update(weight, nv.nd.array(g, dtype=np.float64), mom, lr=0.2, momentum=0.5)
    want_w, want_m = F.nag_mom(w, g, m, lr=0.2, momentum=0.5)
    np.testing.assert_array_equal(weight.asnumpy(), w)
    np.testing.assert_allclose(new.asnumpy(), want_w, rtol=1e-12)
    np.testing.assert_allclose(mom.asnumpy(), want_m, rtol=1e-12)


# -- float16 and mixed precision --------------------------------------------------------------


def test_float16_sgd_mom_runs_in_float16_storage(dev: nv.Context) -> None:
    w, g, m = (x.astype(np.float16) for x in rand(6, 3))
    weight, mom, grad = (nv.nd.array(x, ctx=dev, dtype=np.float16) for x in (w, m, g))
    nv.nd.sgd_mom_update(weight, grad, mom, out=weight, lr=0.1, momentum=0.9)
    want_w, want_m = F.sgd_mom(*(x.astype(np.float64) for x in (w, g, m)), lr=0.1, momentum=0.9)
    assert weight.dtype == np.float16
    np.testing.assert_allclose(weight.asnumpy(), want_w, rtol=2e-3, atol=2e-3)
    np.testing.assert_allclose(mom.asnumpy(), want_m, rtol=2e-3, atol=2e-3)


MP = [
    ("mp_sgd_update", F.sgd, 0, {"lr": 0.1, "wd": 0.01, "clip_gradient": 0.5}),
    ("mp_sgd_mom_update", F.sgd_mom, 1, {"lr": 0.1, "momentum": 0.9, "wd": 0.01}),
    ("mp_nag_mom_update", F.nag_mom, 1, {"lr": 0.1, "momentum": 0.9, "wd": 0.01}),
]


@pytest.mark.parametrize("case", MP, ids=[m[0] for m in MP])
def test_mp_updates_keep_a_float32_master_copy(dev: nv.Context, case: Any) -> None:
    name, formula, n_states, params = case
    w32, *states = (x.astype(np.float32) for x in rand(7, 1 + n_states))
    weight = nv.nd.array(w32, ctx=dev, dtype=np.float16)
    master = nv.nd.array(w32, ctx=dev)
    st = [nv.nd.array(s, ctx=dev) for s in states]
    want = [w32.astype(np.float64), *(s.astype(np.float64) for s in states)]
    for step in range(3):
        g16 = (rand(20 + step, 1)[0] * 0.5).astype(np.float16)
        grad = nv.nd.array(g16, ctx=dev, dtype=np.float16)
        getattr(nv.nd, name)(weight, grad, *st, master, out=weight, **params)
        want = list(formula(want[0], g16.astype(np.float64), *want[1:], **params))
    np.testing.assert_allclose(master.asnumpy(), want[0], rtol=1e-5, atol=1e-6)
    for s, w in zip(st, want[1:], strict=True):
        np.testing.assert_allclose(s.asnumpy(), w, rtol=1e-5, atol=1e-6)
    # the float16 weight is the master copy rounded, not a float16 accumulation
    np.testing.assert_array_equal(weight.asnumpy(), master.asnumpy().astype(np.float16))


def test_mp_types_are_inferred_and_checked() -> None:
    s = nv.sym.mp_sgd_mom_update(*(nv.sym.Variable(n) for n in "wgmc"), lr=0.1)
    args, outs, aux = s.infer_type(w=np.float16)
    assert args == [np.float16, np.float16]
    assert outs == [np.float16]
    assert aux == [np.float32, np.float32]  # mom and weight32 are states (mutated inputs)
    w = nv.nd.zeros(SHAPE, dtype=np.float16)
    with pytest.raises(nv.InferError, match=r"mp_sgd_update.*weight32.*float32"):
        nv.nd.mp_sgd_update(w, w, nv.nd.zeros(SHAPE, dtype=np.float16), lr=0.1)


# -- lamb ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("bias_correction", [True, False])
def test_lamb_two_phases_several_steps(dev: nv.Context, bias_correction: bool) -> None:
    w, m, v = rand(8, 3, positive=(2,))
    weight, mean, var = (nv.nd.array(x, ctx=dev, dtype=np.float64) for x in (w, m, v))
    kw = {"beta1": 0.8, "beta2": 0.9, "epsilon": 1e-6, "wd": 0.01, "rescale_grad": 0.5,
          "clip_gradient": 0.4, "bias_correction": bias_correction}  # fmt: skip
    for t in (1, 2, 3):
        grad = rand(30 + t, 1)[0]
        g = nv.nd.lamb_update_phase1(weight, nv.nd.array(grad, ctx=dev, dtype=np.float64),
                                     mean, var, t=t, **kw)  # fmt: skip
        want_g, m, v = F.lamb_phase1(w, grad, m, v, t=t, **kw)
        np.testing.assert_allclose(g.asnumpy(), want_g, rtol=1e-10)
        r1, r2 = nv.nd.norm(weight), nv.nd.norm(g)
        nv.nd.lamb_update_phase2(weight, g, r1, r2, lr=0.1, lower_bound=0.5, upper_bound=3.0,
                                 out=weight)  # fmt: skip
        (w,) = F.lamb_phase2(w, want_g, np.linalg.norm(w), np.linalg.norm(want_g), lr=0.1,
                             lower_bound=0.5, upper_bound=3.0)  # fmt: skip
    np.testing.assert_allclose(weight.asnumpy(), w, rtol=1e-10)
    np.testing.assert_allclose(mean.asnumpy(), m, rtol=1e-10)
    np.testing.assert_allclose(var.asnumpy(), v, rtol=1e-10)


def test_lamb_phase2_ratio_is_one_when_a_norm_is_zero() -> None:
    w, g = rand(9, 2)
    zero, two = nv.nd.array([0.0]), nv.nd.array([2.0])
    for r1, r2 in ((zero, two), (two, zero)):
        out = nv.nd.lamb_update_phase2(nv.nd.array(w), nv.nd.array(g), r1, r2, lr=0.1)
        np.testing.assert_allclose(out.asnumpy(), w - 0.1 * g, rtol=1e-6)


def test_mp_lamb_updates_the_master_copy() -> None:
    w32, m, v = (x.astype(np.float32) for x in rand(10, 3, positive=(2,)))
    grad = rand(11, 1)[0].astype(np.float16)
    weight, master = nv.nd.array(w32, dtype=np.float16), nv.nd.array(w32)
    mean, var = nv.nd.array(m), nv.nd.array(v)
    grad16 = nv.nd.array(grad, dtype=np.float16)
    g = nv.nd.mp_lamb_update_phase1(weight, grad16, mean, var, master, t=1, wd=0.01)
    assert g.dtype == np.float32
    want_g, _, _ = F.lamb_phase1(
        w32.astype(np.float64), grad.astype(np.float64), m, v, t=1, wd=0.01
    )
    np.testing.assert_allclose(g.asnumpy(), want_g, rtol=1e-5)
    r1, r2 = nv.nd.norm(master), nv.nd.norm(g)
    nv.nd.mp_lamb_update_phase2(weight, g, r1, r2, master, lr=0.1, out=weight)
    (want_w,) = F.lamb_phase2(w32, want_g, np.linalg.norm(w32), np.linalg.norm(want_g), lr=0.1)
    np.testing.assert_allclose(master.asnumpy(), want_w, rtol=1e-5)
    np.testing.assert_array_equal(weight.asnumpy(), master.asnumpy().astype(np.float16))


def test_lamb_phase2_checks_the_norm_shapes() -> None:
    w = nv.nd.ones(SHAPE)
    with pytest.raises(nv.InferError, match=r"lamb_update_phase2.*'r1'.*\(2,\).*expected \(1,\)"):
        nv.nd.lamb_update_phase2(w, w, nv.nd.ones((2,)), nv.nd.ones((1,)), lr=0.1)


# -- symbols and errors ---------------------------------------------------------------------------


def test_states_are_auxiliary_in_a_symbol_and_updates_have_no_gradient() -> None:
    v = [nv.sym.Variable(n) for n in ("w", "g", "mean", "var")]
    s = nv.sym.adam_update(*v, lr=0.1)
    assert s.list_arguments() == ["w", "g"]
    assert s.list_auxiliary_states() == ["mean", "var"]
    for name, *_ in UPDATES:
        assert not Op.get(name).has_attr("FGradient"), name


def test_bad_calls_are_named_errors_and_leave_things_usable() -> None:
    w, g = (x.astype(np.float32) for x in rand(12, 2))
    weight, grad = nv.nd.array(w), nv.nd.array(g)
    with pytest.raises(nv.ParamError, match=r"sgd_update.*missing.*'lr'"):
        nv.nd.sgd_update(weight, grad)
    with pytest.raises(nv.ParamError, match=r"ftml_update.*beta1"):
        nv.nd.ftml_update(weight, grad, grad, grad, grad, lr=0.1, t=1, beta1=1.5)
    with pytest.raises(nv.NNVMError, match=r"sgd_update.*out\[0\].*input 1.*in-place"):
        nv.nd.sgd_update(weight, grad, lr=0.1, out=grad)  # only the weight may be out=
    with pytest.raises(nv.InferError, match=r"adam_update.*'mean'"):
        nv.nd.adam_update(weight, grad, nv.nd.zeros((2, 2)), grad, lr=0.1)
    with pytest.raises(nv.InferError, match=r"adam_update.*'var'.*float64"):
        nv.nd.adam_update(weight, grad, grad, nv.nd.zeros(SHAPE, dtype=np.float64), lr=0.1)
    nv.nd.sgd_update(weight, grad, lr=0.1, out=weight)
    np.testing.assert_allclose(weight.asnumpy(), w - 0.1 * g, rtol=1e-6)
