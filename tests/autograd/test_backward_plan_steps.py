"""What a cached backward plan skips, and that skipping changes no gradient.

A training loop differentiates the same tape every step, so backward's compiled plan
(autograd/plan.py) decides once per structure: which default head gradients no step
reads (SoftmaxOutput's backward ignores its head gradient, so no ones are made), which
outputs need new arrays (not the gradients written straight into attach_grad buffers),
and which steps call their kernel pre-checked (element-wise backward ops, as imperative
call plans do). The gradients are checked against NumPy formulas on every path.
"""

from __future__ import annotations

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy.autograd import backprop
from nnvmpy.ndarray import ndarray as nd_module

nd, ag = nv.nd, nv.autograd


@pytest.fixture
def ones_calls(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, ...]]:
    """The shapes backward asks `ones` for (its default head gradients)."""
    calls: list[tuple[int, ...]] = []
    real = nd_module.ones

    def counting(shape, *args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(tuple(shape))
        return real(shape, *args, **kwargs)

    monkeypatch.setattr(nd_module, "ones", counting)
    return calls


def _softmax_output_grads(x: np.ndarray, w: np.ndarray, label: np.ndarray) -> np.ndarray:
    """d/dW of SoftmaxOutput(x W^T): (softmax - onehot)^T x (MXNet's default scale 1)."""
    z = x @ w.T
    p = np.exp(z - z.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    p[np.arange(len(label)), label.astype(int)] -= 1.0
    return p.T @ x


def test_softmax_output_backward_makes_no_head_ones_once_its_plan_is_cached(
    ones_calls: list[tuple[int, ...]],
) -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((8, 5)).astype(np.float32)
    label = rng.integers(0, 3, 8).astype(np.float32)
    w = nd.array(rng.standard_normal((3, 5)).astype(np.float32))
    w.attach_grad()
    for _ in range(3):
        with ag.record():
            out = nd.SoftmaxOutput(
                nd.FullyConnected(nd.array(x), w, num_hidden=3, no_bias=True), nd.array(label)
            )
        out.backward()
        want = _softmax_output_grads(x, w.asnumpy(), label)
        np.testing.assert_allclose(w.grad.asnumpy(), want, rtol=1e-5, atol=1e-5)
        w[:] = w - 0.1 * w.grad  # the next step sees other weights
    # the first backward compiles the plan (with the ones); the cached ones skip them
    assert ones_calls == [(8, 3)]


def test_a_head_gradient_the_steps_read_is_still_made(ones_calls: list[tuple[int, ...]]) -> None:
    x = nd.array([0.5, -1.0, 2.0])
    x.attach_grad()
    for _ in range(2):
        with ag.record():
            y = nd.exp(x) * 3.0
        y.backward()  # dy/dx = 3 exp(x), times ones
        np.testing.assert_allclose(x.grad.asnumpy(), 3.0 * np.exp([0.5, -1.0, 2.0]), rtol=1e-6)
    assert ones_calls == [(3,), (3,)]


def test_a_given_head_gradient_is_used_on_a_cached_plan() -> None:
    rng = np.random.default_rng(1)
    x_np = rng.standard_normal((4, 6)).astype(np.float32)
    x = nd.array(x_np)
    x.attach_grad()
    for scale in (1.0, 2.0, -0.5):
        with ag.record():
            y = nd.tanh(x)
        y.backward(nd.full((4, 6), scale))
        np.testing.assert_allclose(
            x.grad.asnumpy(), scale * (1 - np.tanh(x_np) ** 2), rtol=1e-5, atol=1e-6
        )


def _relu_tanh_chain_grad(x: np.ndarray, n: int) -> np.ndarray:
    """d/dx of n rounds of y = tanh(relu(y)), by the chain rule in NumPy."""
    g = np.ones_like(x)
    ys = [x]
    for _ in range(n):
        ys.append(np.tanh(np.maximum(ys[-1], 0)))
    for k in range(n, 0, -1):
        prev = ys[k - 1]
        g = g * (1 - ys[k] ** 2) * (prev > 0)
    return g


@pytest.mark.parametrize("grad_req", ["write", "add"])
def test_pre_checked_element_wise_steps_give_the_chain_rule(grad_req: str) -> None:
    rng = np.random.default_rng(2)
    x_np = rng.uniform(-1, 1.5, (257,)).astype(np.float32)
    x = nd.array(x_np)
    x.attach_grad(grad_req=grad_req)
    want = _relu_tanh_chain_grad(x_np.astype(np.float64), 4)
    for rounds in (1, 2, 3):
        with ag.record():
            y = x
            for _ in range(4):
                y = nd.tanh(nd.relu(y))
        y.backward()
        expect = want * (rounds if grad_req == "add" else 1)
        np.testing.assert_allclose(x.grad.asnumpy(), expect, rtol=1e-5, atol=1e-6)
    plans = [
        p
        for p in backprop._plans.values()
        if any(s.attrs.op is not None and s.attrs.op.name == "_backward_relu" for s in p.steps)
    ]
    assert plans, "the chain's plan is cached"
    fast = [s.pusher.fast for p in plans for s in p.steps if s.pusher is not None]
    assert any(f is not None for f in fast), "element-wise steps are called pre-checked"


def test_create_graph_takes_the_checked_path_and_stays_right() -> None:
    # under create_graph the steps' requests change (kNullOp -> kWriteTo): no
    # pre-checked call may be used for them, and second derivatives stay right
    x_np = np.array([0.3, -0.7, 1.1], np.float32)
    x = nd.array(x_np)
    x.attach_grad()
    for _ in range(2):
        with ag.record():
            y = nd.sin(x)
            (dy,) = ag.grad(y, [x], create_graph=True)
        dy.backward()  # d/dx cos(x) = -sin(x)
        np.testing.assert_allclose(x.grad.asnumpy(), -np.sin(x_np), rtol=1e-5, atol=1e-6)


def test_a_freed_recorded_chain_returns_its_storage() -> None:
    # more dead arrays of one size than there are spares: the rest go back to the pool
    from nnvmpy.kernel import storage

    nd.waitall()
    x = nd.array(np.arange(4, dtype=np.float32))
    x.attach_grad()
    before = storage.stats(nv.cpu()).bytes_in_use
    with ag.record():
        y = x
        for _ in range(50):
            y = nd.relu(y)
    nd.waitall()
    assert storage.stats(nv.cpu()).bytes_in_use > before
    del y
    nd.waitall()
    after = storage.stats(nv.cpu()).bytes_in_use
    spare_bytes = nd_module.SPARES_PER_SIZE * storage.round_size(16)
    assert after <= before + spare_bytes


@pytest.mark.gpu
def test_pre_checked_steps_on_the_gpu_match_the_cpu() -> None:
    x_np = np.random.default_rng(3).uniform(-1, 1.5, (300,)).astype(np.float32)
    grads = []
    for ctx in (nv.cpu(), nv.gpu()):
        x = nd.array(x_np, ctx=ctx)
        x.attach_grad()
        for _ in range(2):  # the second backward runs the cached plan
            with ag.record():
                y = nd.tanh(nd.relu(x)) * 2.0
            y.backward()
        grads.append(x.grad.asnumpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(
        grads[0], 2.0 * _relu_tanh_chain_grad(x_np.astype(np.float64), 1), rtol=1e-5, atol=1e-6
    )
