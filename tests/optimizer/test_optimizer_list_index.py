"""A list of indices (a group of weights) given to an optimizer that updates one weight
at a time: MXNet 1.9.1 fails with a bare AssertionError, nnvmpy names the optimizer and
the index. Optimizers with aggregate_num > 0 take the list; their result equals one
update per weight (reference: plain SGD formula w - lr * g in NumPy)."""

from __future__ import annotations

import numpy as np
import pytest

import nnvmpy as nv


def _group(n: int = 3) -> tuple[list[nv.NDArray], list[nv.NDArray], list[np.ndarray]]:
    rs = np.random.RandomState(0)
    raw = [rs.uniform(-1, 1, (4, 3)).astype(np.float32) for _ in range(n)]
    grads = [rs.uniform(-1, 1, (4, 3)).astype(np.float32) for _ in range(n)]
    return [nv.nd.array(w) for w in raw], [nv.nd.array(g) for g in grads], raw


@pytest.mark.parametrize("name", ["adam", "rmsprop", "adagrad", "nag", "signum", "ftrl"])
def test_one_weight_rules_reject_a_list_of_indices(name: str) -> None:
    opt = nv.optimizer.create(name)
    weights, grads, _ = _group()
    states = [opt.create_state_multi_precision(i, w) for i, w in enumerate(weights)]
    cls = type(opt).__name__
    with pytest.raises(nv.NNVMError, match=rf"{cls}: index must be one parameter index"):
        opt.update_multi_precision([0, 1, 2], weights, grads, states)


def test_sgd_takes_a_list_of_indices() -> None:
    opt = nv.optimizer.create("sgd", learning_rate=0.1)
    weights, grads, raw = _group()
    states = [opt.create_state_multi_precision(i, w) for i, w in enumerate(weights)]
    opt.update_multi_precision([0, 1, 2], weights, grads, states)
    for w, w0, g in zip(weights, raw, grads, strict=True):
        np.testing.assert_allclose(w.asnumpy(), w0 - 0.1 * g.asnumpy(), rtol=1e-6)
