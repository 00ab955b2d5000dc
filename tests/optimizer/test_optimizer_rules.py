"""Each nv.optimizer optimizer against MXNet's documented rule, over several steps.

The rules are tests/optimizer_formulas.py (the update ops' formulas) plus what the
optimizer adds on top: per-parameter lr/wd, Adam's bias correction, the update count t,
LAMB's norms, float32 master copies.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

import nnvmpy as nv
import optimizer_formulas as F

SHAPE = (3, 4)
STEPS = 4


def grads(seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.normal(size=SHAPE) for _ in range(STEPS)]


def run(opt: nv.optimizer.Optimizer, w0: np.ndarray, dtype: Any = np.float64) -> np.ndarray:
    """Apply the optimizer for STEPS steps through an Updater; the final weight."""
    updater = nv.optimizer.get_updater(opt)
    weight = nv.nd.array(w0, dtype=dtype)
    for g in grads():
        updater(0, nv.nd.array(g, dtype=dtype), weight)
    return weight.asnumpy()


W0 = np.random.default_rng(42).normal(size=SHAPE)
COMMON = {"learning_rate": 0.1, "wd": 0.01, "rescale_grad": 0.5, "clip_gradient": 0.8}
OP_CLIP = {"rescale_grad": 0.5, "clip_gradient": 0.8}


def test_sgd_plain_and_momentum() -> None:
    for momentum in (0.0, 0.9):
        got = run(nv.optimizer.SGD(momentum=momentum, **COMMON), W0)
        w, mom = W0, np.zeros(SHAPE)
        for g in grads():
            w, mom = F.sgd_mom(w, g, mom, lr=0.1, momentum=momentum, wd=0.01, **OP_CLIP)
        np.testing.assert_allclose(got, w, rtol=1e-12)


def test_nag() -> None:
    got = run(nv.optimizer.NAG(momentum=0.8, **COMMON), W0)
    w, mom = W0, np.zeros(SHAPE)
    for g in grads():
        w, mom = F.nag_mom(w, g, mom, lr=0.1, momentum=0.8, wd=0.01, **OP_CLIP)
    np.testing.assert_allclose(got, w, rtol=1e-12)


def test_signum_and_signsgd() -> None:
    got = run(nv.optimizer.Signum(momentum=0.7, wd_lh=0.02, **COMMON), W0)
    w, mom = W0, np.zeros(SHAPE)
    for g in grads():
        w, mom = F.signum(w, g, mom, lr=0.1, momentum=0.7, wd=0.01, wd_lh=0.02, **OP_CLIP)
    np.testing.assert_allclose(got, w, rtol=1e-12)
    got = run(nv.optimizer.Signum(momentum=0.0, **COMMON), W0)
    w = W0
    for g in grads():
        (w,) = F.signsgd(w, g, lr=0.1, wd=0.01)
    np.testing.assert_allclose(got, w, rtol=1e-12)


def test_adam_bias_correction() -> None:
    got = run(nv.optimizer.Adam(beta1=0.8, beta2=0.95, epsilon=1e-6, **COMMON), W0)
    w, m, v = W0, np.zeros(SHAPE), np.zeros(SHAPE)
    for t, g in enumerate(grads(), start=1):
        lr = 0.1 * math.sqrt(1 - 0.95**t) / (1 - 0.8**t)
        w, m, v = F.adam(w, g, m, v, lr=lr, beta1=0.8, beta2=0.95, epsilon=1e-6, wd=0.01,
                         **OP_CLIP)  # fmt: skip
    np.testing.assert_allclose(got, w, rtol=1e-12)


@pytest.mark.parametrize("centered", [False, True])
def test_rmsprop(centered: bool) -> None:
    opt = nv.optimizer.RMSProp(gamma1=0.9, gamma2=0.8, centered=centered, clip_weights=1.5,
                               **COMMON)  # fmt: skip
    got = run(opt, W0)
    w, n, g_avg, delta = W0, np.zeros(SHAPE), np.zeros(SHAPE), np.zeros(SHAPE)
    kw = {"lr": 0.1, "gamma1": 0.9, "wd": 0.01, "clip_weights": 1.5, "epsilon": 1e-8, **OP_CLIP}
    for g in grads():
        if centered:
            w, n, g_avg, delta = F.rmspropalex(w, g, n, g_avg, delta, gamma2=0.8, **kw)
        else:
            w, n = F.rmsprop(w, g, n, **kw)
    np.testing.assert_allclose(got, w, rtol=1e-12)


def test_ftrl() -> None:
    got = run(nv.optimizer.Ftrl(lamda1=0.02, beta=0.5, **COMMON), W0)
    w, z, n = W0, np.zeros(SHAPE), np.zeros(SHAPE)
    for g in grads():
        w, z, n = F.ftrl(w, g, z, n, lr=0.1, lamda1=0.02, beta=0.5, wd=0.01, **OP_CLIP)
    np.testing.assert_allclose(got, w, rtol=1e-12)
    assert nv.optimizer.FTRL is nv.optimizer.Ftrl


def test_ftml_counts_updates() -> None:
    got = run(nv.optimizer.FTML(beta1=0.5, beta2=0.9, **COMMON), W0)
    w, d, v, z = W0, np.zeros(SHAPE), np.zeros(SHAPE), np.zeros(SHAPE)
    for t, g in enumerate(grads(), start=1):
        w, d, v, z = F.ftml(w, g, d, v, z, lr=0.1, t=t, beta1=0.5, beta2=0.9, wd=0.01,
                            rescale_grad=0.5, clip_grad=0.8)  # fmt: skip
    np.testing.assert_allclose(got, w, rtol=1e-12)


@pytest.mark.parametrize("bounds", [(None, None), (0.5, 2.0)])
def test_lamb(bounds: tuple[float | None, float | None]) -> None:
    lower, upper = bounds
    opt = nv.optimizer.LAMB(beta1=0.8, beta2=0.9, lower_bound=lower, upper_bound=upper, **COMMON)
    got = run(opt, W0)
    w, m, v = W0, np.zeros(SHAPE), np.zeros(SHAPE)
    for t, g in enumerate(grads(), start=1):
        d, m, v = F.lamb_phase1(w, g, m, v, t=t, wd=0.01, beta1=0.8, beta2=0.9, **OP_CLIP)
        (w,) = F.lamb_phase2(w, d, np.linalg.norm(w), np.linalg.norm(d), lr=0.1,
                             lower_bound=lower or -1.0, upper_bound=upper or -1.0)  # fmt: skip
    np.testing.assert_allclose(got, w, rtol=1e-10)


MP_CASES = [
    ("sgd", {"momentum": 0.9}),
    ("sgd", {}),
    ("nag", {"momentum": 0.9}),
    ("adam", {}),
    ("lamb", {}),
]


@pytest.mark.parametrize(("name", "kw"), MP_CASES, ids=[f"{n}-{k}" for n, k in MP_CASES])
def test_multi_precision_follows_the_float32_run(name: str, kw: dict[str, Any]) -> None:
    """float16 weights with multi_precision: the master copy evolves as a float32 run does,
    and the float16 weight is always the master copy rounded."""
    w0 = W0.astype(np.float16).astype(np.float32)
    opt16 = nv.optimizer.create(name, multi_precision=True, learning_rate=0.05, **kw)
    opt32 = nv.optimizer.create(name, learning_rate=0.05, **kw)
    up16, up32 = nv.optimizer.get_updater(opt16), nv.optimizer.get_updater(opt32)
    w16, w32 = nv.nd.array(w0, dtype=np.float16), nv.nd.array(w0)
    for g in grads():
        g16 = g.astype(np.float16)
        up16(0, nv.nd.array(g16, dtype=np.float16), w16)
        up32(0, nv.nd.array(g16.astype(np.float32)), w32)
    master = up16.states[0][0] if name == "lamb" or name == "adam" else up16.states[0][1]
    np.testing.assert_allclose(master.asnumpy(), w32.asnumpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(w16.asnumpy(), master.asnumpy().astype(np.float16))


def test_float16_without_multi_precision_warns() -> None:
    opt = nv.optimizer.SGD(momentum=0.9)
    with pytest.warns(UserWarning, match="multi_precision=True"):
        opt.create_state_multi_precision(0, nv.nd.zeros(SHAPE, dtype=np.float16))
