"""OpCase rows of the optimizer update ops, the gradient statistics ops and the AMP casts.

References are tests/optimizer_formulas.py, MXNet's documented rules in NumPy. Update ops
have no gradient (as in MXNet); those that update a state in place skip check_op, whose
repeated runs on the same inputs would each see a different state. tests/ops/
test_optimizer.py checks the states, several steps, mutation and the errors.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from op_db import OpCase

import optimizer_formulas as F

S = (3, 4)  # the shape of every weight in the single-weight rows


def bf16_bits(x: np.ndarray) -> np.ndarray:
    """The bfloat16 nearest to each (float32-exact) value, ties to even, as uint16 bits:
    of the two bfloat16 values around x, found by truncating its bits, the closer."""
    lo = (x.astype(np.float32).view(np.uint32) >> 16).astype(np.uint32)
    lo_val = (lo << 16).view(np.float32).astype(np.float64)
    hi_val = ((lo + 1) << 16).view(np.float32).astype(np.float64)
    d_lo, d_hi = np.abs(x - lo_val), np.abs(hi_val - x)
    up = (d_hi < d_lo) | ((d_hi == d_lo) & (lo % 2 == 1))
    return (lo + up).astype(np.uint16)


def make(
    shapes: Sequence[tuple[int, ...]],
    float32: Sequence[int] = (),
    positive: Sequence[int] = (),
    extra: Callable[[list[np.ndarray]], None] | None = None,
) -> Callable[[np.random.Generator, Any], list[np.ndarray]]:
    """Inputs uniform in [-1, 1] in the case's dtype; slots in `float32` are float32 (mp
    states and master copies), slots in `positive` in [0.1, 1] (second moments, norms)."""

    def inputs(rng: np.random.Generator, dtype: Any) -> list[np.ndarray]:
        out = []
        for k, shape in enumerate(shapes):
            low = 0.1 if k in positive else -1.0
            x = rng.uniform(low, 1.0, size=shape)
            out.append(x.astype(np.float32 if k in float32 else dtype))
        if extra is not None:
            extra(out)
        return out

    return inputs


def first(formula: Callable[..., tuple[Any, ...]], master: int | None = None) -> Callable[..., Any]:
    """The op's output from a formula returning (weight, *states); `master`: the input slot
    of the float32 master copy the update runs on (mp_* ops), which replaces the weight."""

    def reference(*inputs: np.ndarray, **params: Any) -> np.ndarray:
        args = list(inputs)
        if master is not None:
            args = [args[master], *args[1:master], *args[master + 1 :]]
        return formula(*args, **params)[0]

    return reference


def update(name: str, formula: Any, n_in: int, params: dict[str, Any], **kw: Any) -> OpCase:
    shapes = [S] * n_in
    mutates = n_in > 2 or kw.pop("mutates", False)
    inputs = make(shapes, kw.pop("float32", ()), kw.pop("positive", ()), kw.pop("extra", None))
    return OpCase(
        name,
        shapes,
        first(formula, kw.pop("master", None)),
        params=params,
        inputs=inputs,
        grad=False,
        check_op=not mutates,
        **kw,
    )


CLIP = {"rescale_grad": 0.5, "clip_gradient": 0.2}
MP = {"dtypes": (np.float16,)}

CASES: list[OpCase] = [
    update("nag_mom_update", F.nag_mom, 3, {"lr": 0.1, "momentum": 0.9, "wd": 0.01, **CLIP}),
    update("signsgd_update", F.signsgd, 2, {"lr": 0.1, "wd": 0.01}),
    update(
        "signum_update",
        F.signum,
        3,
        {"lr": 0.1, "momentum": 0.9, "wd": 0.01, "wd_lh": 0.02, **CLIP},
    ),
    update("adam_update", F.adam, 4, {"lr": 0.1, "wd": 0.01, **CLIP}, positive=[3]),
    update(
        "rmsprop_update",
        F.rmsprop,
        3,
        {"lr": 0.1, "gamma1": 0.9, "wd": 0.01, "clip_weights": 0.9, **CLIP},
        positive=[2],
    ),
    update(
        "rmspropalex_update",
        F.rmspropalex,
        5,
        {"lr": 0.05, "gamma1": 0.9, "gamma2": 0.8, "wd": 0.01, **CLIP},
        positive=[2],
        extra=lambda x: x.__setitem__(2, x[2] + x[3] ** 2),
    ),  # n > g^2
    update(
        "ftrl_update",
        F.ftrl,
        4,
        {"lr": 0.1, "lamda1": 0.05, "beta": 1.0, "wd": 0.01, **CLIP},
        positive=[3],
    ),
    update(
        "ftml_update",
        F.ftml,
        5,
        {"lr": 0.1, "t": 3, "wd": 0.01, "rescale_grad": 0.5, "clip_grad": 0.2},
        positive=[3],
    ),
    update("lamb_update_phase1", F.lamb_phase1, 4, {"t": 2, "wd": 0.01, **CLIP}, positive=[3]),
    update(
        "lamb_update_phase1",
        F.lamb_phase1,
        4,
        {"t": 2, "wd": 0.01, "bias_correction": False},
        positive=[3],
        id="no_bias_correction",
    ),
    OpCase(
        "lamb_update_phase2",
        [S, S, (1,), (1,)],
        first(F.lamb_phase2),
        params={"lr": 0.1, "lower_bound": 0.2, "upper_bound": 5.0},
        inputs=make([S, S, (1,), (1,)], positive=[2, 3]),
        grad=False,
    ),
    # mixed precision: float16 weight and grad, float32 states and master copy
    update("mp_sgd_update", F.sgd, 3, {"lr": 0.1, "wd": 0.01, **CLIP}, float32=[2], master=2, **MP),
    update(
        "mp_sgd_mom_update",
        F.sgd_mom,
        4,
        {"lr": 0.1, "momentum": 0.9, "wd": 0.01, **CLIP},
        float32=[2, 3],
        master=3,
        **MP,
    ),
    update(
        "mp_nag_mom_update",
        F.nag_mom,
        4,
        {"lr": 0.1, "momentum": 0.9, "wd": 0.01, **CLIP},
        float32=[2, 3],
        master=3,
        **MP,
    ),
    update(
        "mp_lamb_update_phase1",
        F.lamb_phase1,
        5,
        {"t": 2, "wd": 0.01, **CLIP},
        float32=[2, 3, 4],
        positive=[3],
        master=4,
        **MP,
    ),
    OpCase(
        "mp_lamb_update_phase2",
        [S, S, (1,), (1,), S],
        first(F.lamb_phase2, master=4),
        params={"lr": 0.1},
        inputs=make([S, S, (1,), (1,), S], float32=[1, 2, 3, 4], positive=[2, 3]),
        grad=False,
        check_op=False,
        **MP,
    ),
]


# -- AdamW (MXNet's contrib ops): rescale_grad is an input; states mutate in place ----------

ADAMW = {"lr": 0.1, "eta": 0.5, "wd": 0.01}


def adamw(name: str, mp: bool, multi: bool) -> OpCase:
    slots = 4 + mp  # weight, grad, mean, var (+ weight32)
    n = 2 if multi else 1
    shapes = [S] * (slots * n) + [(1,)]
    positive = [slots * i + 3 for i in range(n)] + [slots * n]  # var, rescale_grad
    f32 = [slots * i + k for i in range(n) for k in range(2, slots)] if mp else []
    params: dict[str, Any] = {"clip_gradient": 0.2}
    if multi:
        params.update(num_weights=n, lrs=(0.1, 0.2), wds=(0.01, 0.0), etas=(0.5, 1.0))
    else:
        params.update(ADAMW)

    def reference(*inputs: np.ndarray, **p: Any) -> Any:
        outs = []
        for i in range(n):
            w, g, mean, var, *master = inputs[slots * i : slots * (i + 1)]
            rates = {"lr": p["lrs"][i], "wd": p["wds"][i], "eta": p["etas"][i]} if multi else ADAMW
            start = master[0] if mp else w
            outs.append(F.adamw(start, g, mean, var, inputs[-1], clip_gradient=0.2, **rates)[0])
        return outs if multi else outs[0]

    return OpCase(
        name,
        shapes,
        reference,
        params=params,
        inputs=make(shapes, float32=[*f32, slots * n], positive=positive),
        dtypes=(np.float16,) if mp else (np.float32, np.float64),
        grad=False,
        check_op=False,  # the states change in place at every run
    )


CASES += [
    adamw("_adamw_update", mp=False, multi=False),
    adamw("_mp_adamw_update", mp=True, multi=False),
    adamw("_multi_adamw_update", mp=False, multi=True),
    adamw("_multi_mp_adamw_update", mp=True, multi=True),
]


# -- several weights in one op ---------------------------------------------------------------

SHAPES = [(3, 4), (5,)]


def multi(name: str, momentum: bool, mp: bool, preloaded: bool) -> OpCase:
    slots = 2 + momentum + mp
    shapes = [s for s in SHAPES for _ in range(slots)]
    lrs, wds = (0.1, 0.2), (0.01, 0.0)
    params: dict[str, Any] = {"num_weights": 2, **CLIP}
    if momentum:
        params["momentum"] = 0.9
    if not preloaded:
        params.update(lrs=lrs, wds=wds)
    f32 = [g * slots + k for g in range(2) for k in range(2, slots)] if mp else []
    if preloaded:
        shapes += [(2,), (2,)]

    def extra(x: list[np.ndarray]) -> None:
        if preloaded:
            x[-2:] = [np.array(lrs, np.float32), np.array(wds, np.float32)]

    def reference(*inputs: np.ndarray, **p: Any) -> list[np.ndarray]:
        rates = (inputs[-2], inputs[-1]) if preloaded else (p["lrs"], p["wds"])
        outs = []
        for i in range(2):
            w, g, *state = inputs[slots * i : slots * (i + 1)]
            if mp:
                w = state.pop()  # the master copy
            rule = F.sgd_mom if momentum else F.sgd
            outs.append(rule(w, g, *state, lr=rates[0][i], wd=rates[1][i],
                             momentum=p.get("momentum", 0.0), rescale_grad=0.5,
                             clip_gradient=0.2)[0])  # fmt: skip
        return outs

    return OpCase(
        name,
        shapes,
        reference,
        params=params,
        inputs=make(shapes, float32=f32, extra=extra),
        dtypes=(np.float16,) if mp else (np.float32, np.float64),
        grad=False,
        check_op=not (momentum or mp),
    )


for _mom in (False, True):
    for _mp in (False, True):
        for _pre in (False, True):
            _name = ("preloaded_" if _pre else "") + "multi_" + ("mp_" if _mp else "")
            CASES.append(
                multi(_name + ("sgd_mom_update" if _mom else "sgd_update"), _mom, _mp, _pre)
            )


# -- gradient statistics ------------------------------------------------------------------------


def with_nonfinite(x: list[np.ndarray]) -> None:
    x[-1].flat[3] = np.inf


CASES += [
    OpCase("multi_sum_sq", [(3, 4), (40000,), (1,)],
           lambda *xs, **_: np.array([np.sum(x * x) for x in xs]),
           params={"num_arrays": 3}, grad=False,
           tols={np.float32: (1e-5, 1e-5)}),
    OpCase("multi_lars", [(4,)] * 4, F.lars, params={"eta": 0.5, "eps": 1e-3, "rescale_grad": 0.5},
           inputs=make([(4,)] * 4, positive=[0, 1, 2, 3],
                       extra=lambda x: x[1].__setitem__(0, 0.0)),  # one layer without weights
           grad=False, dtypes=(np.float32,)),
    OpCase("all_finite", [(2, 3)], lambda x, **_: np.array([1.0]), grad=False),
    OpCase("all_finite", [(2, 3)], lambda x, **_: np.array([0.0]), grad=False,
           inputs=make([(2, 3)], extra=with_nonfinite), id="inf"),
    OpCase("multi_all_finite", [(2, 3), (5,)], lambda *x, **_: np.array([0.0]),
           params={"num_arrays": 2}, inputs=make([(2, 3), (5,)], extra=with_nonfinite),
           grad=False),
    OpCase("reset_arrays", [(2, 3), (4,)], lambda *x, **_: [], params={"num_arrays": 2},
           grad=False, check_op=False),
    # AMP casts
    OpCase("amp_cast", [(3, 4)], lambda x, **_: x, params={"dtype": "float16"}, grad=False),
    OpCase("amp_cast", [(3, 4)], lambda x, **_: x, params={"dtype": "float32"}, id="to_float32"),
    OpCase("amp_cast", [(3, 4)], lambda x, **_: x, params={"dtype": "float16"}, grad=False,
           inputs=lambda rng, dtype: [rng.integers(-5, 5, size=(3, 4)).astype(np.int32)],
           dtypes=(np.int32,), id="int_passes"),
    # bfloat16 bits of a weight (the AmpBFloat16 pass inserts this node; numerics and the
    # rounding's special cases: tests/ops/test_amp_bf16.py). Bits do not add: no check_op
    OpCase("_PackBFloat16", [(3, 4)], lambda x, **_: bf16_bits(x), dtypes=(np.float32,),
           grad=False, check_op=False, gpu=False, rtol=0, atol=0),
    OpCase("_PackBFloat16", [(4, 3, 2, 2)], dtypes=(np.float32,), grad=False,
           check_op=False, gpu=False, rtol=0, atol=0, params={"channels_last": True},
           reference=lambda x, **_: bf16_bits(x.transpose(0, 2, 3, 1)).reshape(x.shape),
           id="channels_last"),
    OpCase("amp_multicast", [(3, 4), (2,)], lambda *x, **_: list(x), params={"num_outputs": 2},
           inputs=lambda rng, dtype: [rng.uniform(-1, 1, (3, 4)).astype(np.float16),
                                      rng.uniform(-1, 1, (2,)).astype(dtype)],
           grad=False),
    OpCase("amp_multicast", [(3,), (2,)], lambda *x, **_: list(x), id="grad",
           params={"num_outputs": 2, "cast_narrow": True}),
]  # fmt: skip
