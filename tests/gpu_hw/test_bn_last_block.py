"""BatchNorm's statistics on a real GPU with many blocks a channel (_batch_norm_cuda.py):
each channel's last block to finish combines the others' partial sums, found by an atomic
count after a fence. The simulator runs blocks one after another, so only hardware can
show a block reading partials another SM has not made visible, or a counter left non-zero.
Here 512 blocks (16 channels x 32) run training forward and backward passes back to back
on one stream and on two engine workers' streams, each result against float64 NumPy."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy.ops.nn import _batch_norm_cuda

pytestmark = [pytest.mark.gpu]

SHAPE = (32, 16, 56, 56)  # S = 32 blocks a channel on a 132-SM GPU: 512 blocks


def _reference(x: np.ndarray, dy: np.ndarray) -> tuple[np.ndarray, ...]:
    x64, dy64 = x.astype(np.float64), dy.astype(np.float64)
    axes = (0, 2, 3)
    mean = x64.mean(axis=axes)
    var = x64.var(axis=axes)
    invstd = 1 / np.sqrt(var + 1e-3)
    xhat = (x64 - mean[None, :, None, None]) * invstd[None, :, None, None]
    dgamma = (dy64 * xhat).sum(axis=axes)
    dbeta = dy64.sum(axis=axes)
    return mean, invstd, dgamma, dbeta


def _passes(seeds: tuple[int, ...], rounds: int) -> list[tuple[Any, ...]]:
    """`rounds` training steps of one BatchNorm per seed on the GPU, the BatchNorms pushed
    in turn (independent: the engine's GPU workers may take them on their own streams);
    each step's outputs beside NumPy's."""
    gpu = nv.gpu(0)
    nets = []
    for seed in seeds:
        gamma, beta = nv.nd.ones((SHAPE[1],), ctx=gpu), nv.nd.zeros((SHAPE[1],), ctx=gpu)
        gamma.attach_grad()
        beta.attach_grad()
        moving = (nv.nd.zeros((SHAPE[1],), ctx=gpu), nv.nd.ones((SHAPE[1],), ctx=gpu))
        nets.append((np.random.default_rng(seed), gamma, beta, moving))
    results = []
    for _ in range(rounds):
        pending = []
        for rng, gamma, beta, (mm, mv) in nets:
            x_host = (rng.normal(size=SHAPE) * 3 + 1).astype(np.float32)
            dy_host = rng.normal(size=SHAPE).astype(np.float32)
            x = nv.nd.array(x_host, ctx=gpu)
            with nv.autograd.record():
                y, mean, invstd = nv.nd.BatchNorm(
                    x, gamma, beta, mm, mv, eps=1e-3, fix_gamma=False, output_mean_var=True
                )
            y.backward(nv.nd.array(dy_host, ctx=gpu))
            pending.append(((mean, invstd, gamma.grad, beta.grad), (x_host, dy_host)))
        for arrays, (x_host, dy_host) in pending:
            got = tuple(a.asnumpy() for a in arrays)
            results.append((got, _reference(x_host, dy_host)))
    return results


def _check(results: list[tuple[Any, ...]]) -> None:
    for step, (got, want) in enumerate(results):
        for name, g, w in zip(("mean", "invstd", "dgamma", "dbeta"), got, want, strict=True):
            scale = max(1.0, float(np.abs(w).max()))
            np.testing.assert_allclose(g, w, rtol=0, atol=2e-5 * scale, err_msg=f"{name} {step}")


def test_last_block_finishes_every_channel(cupy_ready: Any) -> None:
    _check(_passes((0,), 8))
    nv.nd.waitall()
    for _, counters in _batch_norm_cuda._counters.values():
        assert not counters.copy_to_host().any()  # every last block reset its channel's


def test_last_block_with_two_batch_norms_in_flight(cupy_ready: Any) -> None:
    """Two independent BatchNorms pushed in turn: the engine's two GPU workers (two
    streams, each with its own counters: a shared array would let one launch's count end
    the other's) may run them at once."""
    _check(_passes((1, 2), 4))
