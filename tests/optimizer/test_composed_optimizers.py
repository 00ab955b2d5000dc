"""AdaGrad, AdaDelta, Adamax, Nadam, SGLD, DCASGD and Test against their papers' rules
(as MXNet 1.9.1 documents them), over several steps, in NumPy."""

from __future__ import annotations

import math

import numpy as np
import pytest

import nnvmpy as nv

SHAPE = (3, 4)
W0 = np.random.default_rng(5).normal(size=SHAPE)
GRADS = [np.random.default_rng(6 + k).normal(size=SHAPE) for k in range(4)]


def run(opt: nv.optimizer.Optimizer) -> np.ndarray:
    updater = nv.optimizer.get_updater(opt)
    weight = nv.nd.array(W0, dtype=np.float64)
    for g in GRADS:
        updater(0, nv.nd.array(g, dtype=np.float64), weight)
    return weight.asnumpy()


def test_adagrad() -> None:
    got = run(nv.optimizer.AdaGrad(learning_rate=0.1, wd=0.01, rescale_grad=0.5, eps=1e-6))
    w, hist = W0, np.zeros(SHAPE)
    for g in GRADS:
        g = 0.5 * g
        hist = hist + g * g
        w = w - 0.1 * (g / np.sqrt(hist + 1e-6) + 0.01 * w)
    np.testing.assert_allclose(got, w, rtol=1e-12)


def test_adadelta() -> None:
    got = run(nv.optimizer.AdaDelta(rho=0.8, epsilon=1e-4, wd=0.01))
    w, acc_g, acc_d = W0, np.zeros(SHAPE), np.zeros(SHAPE)
    for g in GRADS:
        acc_g = 0.8 * acc_g + 0.2 * g * g
        delta = np.sqrt(acc_d + 1e-4) / np.sqrt(acc_g + 1e-4) * g
        acc_d = 0.8 * acc_d + 0.2 * delta * delta
        w = w - (delta + 0.01 * w)
    np.testing.assert_allclose(got, w, rtol=1e-12)


def test_adamax() -> None:
    got = run(nv.optimizer.Adamax(learning_rate=0.05, beta1=0.8, beta2=0.9, wd=0.01))
    w, m, u = W0, np.zeros(SHAPE), np.zeros(SHAPE)
    for t, g in enumerate(GRADS, start=1):
        g = g + 0.01 * w
        m = 0.8 * m + 0.2 * g
        u = np.maximum(0.9 * u, np.abs(g))
        w = w - 0.05 / (1 - 0.8**t) * m / u
    np.testing.assert_allclose(got, w, rtol=1e-12)


def test_nadam() -> None:
    got = run(nv.optimizer.Nadam(learning_rate=0.05, wd=0.01))
    w, m, v, schedule = W0, np.zeros(SHAPE), np.zeros(SHAPE), 1.0
    b1, b2, decay = 0.9, 0.999, 0.004
    for t, g in enumerate(GRADS, start=1):
        g = g + 0.01 * w
        mom_t = b1 * (1 - 0.5 * 0.96 ** (t * decay))
        mom_next = b1 * (1 - 0.5 * 0.96 ** ((t + 1) * decay))
        schedule *= mom_t
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        m_bar = (1 - mom_t) * g / (1 - schedule) + mom_next * m / (1 - schedule * mom_next)
        w = w - 0.05 * m_bar / (np.sqrt(v / (1 - b2**t)) + 1e-8)
    np.testing.assert_allclose(got, w, rtol=1e-12)


@pytest.mark.parametrize("momentum", [0.0, 0.5])
def test_dcasgd(momentum: float) -> None:
    got = run(nv.optimizer.DCASGD(learning_rate=0.1, momentum=momentum, lamda=0.1, wd=0.01))
    w, prev, mom = W0, W0.copy(), np.zeros(SHAPE)
    for g in GRADS:
        step = -0.1 * (g + 0.01 * w + 0.1 * g * g * (w - prev))
        if momentum:
            mom = momentum * mom + step
            step = mom
        prev = w
        w = w + step
    np.testing.assert_allclose(got, w, rtol=1e-12)


def test_sgld_is_a_half_step_plus_gaussian_noise() -> None:
    lr, n = 0.04, 200_000
    opt = nv.optimizer.SGLD(learning_rate=lr)
    weight = nv.nd.zeros((n,), dtype=np.float64)
    opt.update(0, weight, nv.nd.ones((n,), dtype=np.float64), None)
    noise = weight.asnumpy() + lr / 2  # the deterministic part is -lr/2 * grad
    assert abs(noise.mean()) < 5 * math.sqrt(lr / n)
    assert noise.std() == pytest.approx(math.sqrt(lr), rel=0.01)


def test_test_optimizer_and_clipping() -> None:
    got = run(nv.optimizer.Test(rescale_grad=2.0))
    np.testing.assert_allclose(got, W0 + 2.0 * sum(GRADS), rtol=1e-12)
    if "clip" in nv.Op.list_op_names():
        clipped = run(nv.optimizer.AdaGrad(learning_rate=0.1, clip_gradient=0.1))
        w, hist = W0, np.zeros(SHAPE)
        for g in GRADS:
            g = np.clip(g, -0.1, 0.1)
            hist = hist + g * g
            w = w - 0.1 * g / np.sqrt(hist + 1e-7)
        np.testing.assert_allclose(clipped, w, rtol=1e-12)
