"""Helpers the softmax GPU tests share: seeded inputs, and a symbol's output and input
gradient on one device."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

import nnvmpy as nv


def uniform_values(
    shape: tuple[int, ...], seed: int, low: float = -4, high: float = 4
) -> np.ndarray:
    return np.random.default_rng(seed).uniform(low, high, shape)


def run_symbol(
    ctx: Any,
    build: Callable[[], Any],
    data: dict[str, np.ndarray],
    dy: np.ndarray | None,
    grad_req: str = "write",
) -> tuple[np.ndarray, np.ndarray]:
    """(output, gradient of `x`) of the symbol on ctx; an 'add' gradient starts at 0.25."""
    args = {k: nv.nd.array(v, ctx, dtype=v.dtype) for k, v in data.items()}
    x = data["x"]
    grads = {"x": nv.nd.array(np.full(x.shape, 0.25, x.dtype), ctx, dtype=x.dtype)}
    reqs = {k: (grad_req if k == "x" else "null") for k in data}
    exe = build().bind(ctx, args, args_grad=grads, grad_req=reqs)
    exe.forward(is_train=True)
    exe.backward(None if dy is None else nv.nd.array(dy, ctx, dtype=dy.dtype))
    return exe.outputs[0].asnumpy(), grads["x"].asnumpy()
