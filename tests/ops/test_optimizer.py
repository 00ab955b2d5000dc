"""sgd_update and sgd_mom_update against NumPy formulas, updating the weight in place."""

from __future__ import annotations

import os
from collections.abc import Iterator

import numpy as np
import pytest

import nnvmpy as nv

SIMULATOR = os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"


@pytest.fixture
def dev(ctx: nv.Context) -> Iterator[nv.Context]:
    """The device; the CUDA simulator runs one kernel at a time, so it gets NaiveEngine."""
    if ctx.device_type == "gpu" and SIMULATOR:
        with nv.engine.engine_type("NaiveEngine"):
            yield ctx
    else:
        yield ctx


def clip(g: np.ndarray, c: float) -> np.ndarray:
    return g if c < 0 else np.clip(g, -c, c)


def arrays(seed: int, n: int, dtype: type = np.float32) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.normal(size=(4, 5)).astype(dtype) for _ in range(n)]


@pytest.mark.parametrize(
    "params",
    [
        {"lr": 0.1},
        {"lr": 0.05, "wd": 0.01, "rescale_grad": 0.5},
        {"lr": 0.1, "wd": 0.001, "rescale_grad": 2.0, "clip_gradient": 0.3},
    ],
    ids=["plain", "wd-rescale", "clip"],
)
def test_sgd_update_in_place(dev: nv.Context, params: dict[str, float]) -> None:
    w, g = arrays(0, 2)
    weight, grad = nv.nd.array(w, ctx=dev), nv.nd.array(g, ctx=dev)
    result = nv.nd.sgd_update(weight, grad, out=weight, **params)
    assert result is weight
    lr, wd = params["lr"], params.get("wd", 0.0)
    step = clip(params.get("rescale_grad", 1.0) * g, params.get("clip_gradient", -1.0))
    want = w - lr * (step + wd * w)  # weight = weight - lr * (clip(rescale * grad) + wd * weight)
    np.testing.assert_allclose(weight.asnumpy(), want, rtol=1e-6, atol=1e-7)
    np.testing.assert_array_equal(grad.asnumpy(), g)  # the gradient is read only


def test_sgd_update_clips_the_rescaled_gradient(dev: nv.Context) -> None:
    w = np.zeros(6, dtype=np.float64)
    g = np.array([-10.0, -1.0, -0.1, 0.1, 1.0, 10.0])
    weight = nv.nd.array(w, ctx=dev, dtype=np.float64)
    nv.nd.sgd_update(
        weight,
        nv.nd.array(g, ctx=dev, dtype=np.float64),
        lr=1.0,
        rescale_grad=2.0,
        clip_gradient=1.0,
        out=weight,
    )
    np.testing.assert_array_equal(weight.asnumpy(), [1.0, 1.0, 0.2, -0.2, -1.0, -1.0])


def test_sgd_mom_update_several_steps(dev: nv.Context) -> None:
    w, m = arrays(1, 2)
    grads = arrays(2, 3)
    params = {"lr": 0.1, "momentum": 0.9, "wd": 0.01, "rescale_grad": 0.5, "clip_gradient": 0.4}
    weight, mom = nv.nd.array(w, ctx=dev), nv.nd.array(m, ctx=dev)
    want_w, want_m = w.astype(np.float64), m.astype(np.float64)
    for g in grads:
        nv.nd.sgd_mom_update(weight, nv.nd.array(g, ctx=dev), mom, out=weight, **params)
        # mom = momentum * mom - lr * (clip(rescale * grad) + wd * weight); weight += mom
        step = clip(0.5 * g.astype(np.float64), 0.4)
        want_m = 0.9 * want_m - 0.1 * (step + 0.01 * want_w)
        want_w = want_w + want_m
    np.testing.assert_allclose(mom.asnumpy(), want_m, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(weight.asnumpy(), want_w, rtol=1e-5, atol=1e-6)


def test_sgd_mom_update_returns_a_new_weight_without_out(dev: nv.Context) -> None:
    w, g, m = arrays(3, 3, np.float64)
    weight = nv.nd.array(w, ctx=dev, dtype=np.float64)
    mom = nv.nd.array(m, ctx=dev, dtype=np.float64)
    new = nv.nd.sgd_mom_update(
        weight, nv.nd.array(g, ctx=dev, dtype=np.float64), mom, lr=0.2, momentum=0.5
    )
    np.testing.assert_array_equal(weight.asnumpy(), w)  # untouched without out=
    np.testing.assert_allclose(mom.asnumpy(), 0.5 * m - 0.2 * g, rtol=1e-12)
    np.testing.assert_allclose(new.asnumpy(), w + 0.5 * m - 0.2 * g, rtol=1e-12)


def test_optimizer_ops_in_a_symbol_mom_is_auxiliary() -> None:
    s = nv.sym.sgd_mom_update(
        nv.sym.Variable("w"), nv.sym.Variable("g"), nv.sym.Variable("m"), lr=0.1
    )
    assert s.list_arguments() == ["w", "g"]
    assert s.list_auxiliary_states() == ["m"]
    assert not nv.Op.get("sgd_update").has_attr("FGradient")


def test_bad_calls_are_named_errors_and_leave_things_usable() -> None:
    w, g = arrays(4, 2)
    weight, grad = nv.nd.array(w), nv.nd.array(g)
    with pytest.raises(nv.ParamError, match=r"sgd_update.*missing.*'lr'"):
        nv.nd.sgd_update(weight, grad)
    with pytest.raises(nv.NNVMError, match=r"sgd_update.*out\[0\].*input 1.*in-place"):
        nv.nd.sgd_update(weight, grad, lr=0.1, out=grad)  # only the weight may be out=
    with pytest.raises(nv.InferError, match=r"sgd_update.*'grad'"):
        nv.nd.sgd_update(weight, nv.nd.zeros((2, 2)), lr=0.1)
    nv.nd.sgd_update(weight, grad, lr=0.1, out=weight)
    np.testing.assert_allclose(weight.asnumpy(), w - 0.1 * g, rtol=1e-6)
