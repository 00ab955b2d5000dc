"""The control-flow ops on every device: forward and gradients equal NumPy's, with write
and add requests; on a GPU the subgraphs run there, and only the loop conditions are
read back to the host."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy.test_utils import assert_almost_equal

XS = np.array([[0.1, -0.4], [0.7, 0.2], [-0.3, 0.5]], np.float32)
S0 = np.array([0.25, -0.5], np.float32)
W = np.array([1.5, -0.75], np.float32)


def _reference() -> tuple[np.ndarray, ...]:
    """Forward and gradients (all head gradients 1) of the loop below, in NumPy."""
    s, outs, pre = S0.astype(np.float64), [], []
    for x in XS:
        pre.append(x * W + s)
        outs.append(np.tanh(pre[-1]))
        s = x + s
    gx, gw, gs = np.zeros_like(XS, np.float64), np.zeros_like(W, np.float64), np.ones(2)
    for t in reversed(range(len(XS))):
        d = 1 - np.tanh(pre[t]) ** 2  # d out_t / d pre_t, head gradient 1
        gx[t] = d * W + gs  # through out_t and through the next state
        gw += d * XS[t]
        gs = gs + d
    return np.stack(outs), s, gx, gs, gw


@pytest.fixture
def host_reads(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The arrays the control-flow ops copy to the host (the conditions they test); a
    host-staged copy back to a device fails the test."""
    import nnvmpy.ops._host_staged as staged
    import nnvmpy.ops.control_flow.arrays as arrays

    reads: list[Any] = []

    def to_host(ctx: Any, a: Any) -> np.ndarray:
        reads.append(tuple(int(d) for d in a.shape))
        return staged.to_host(ctx, a)

    def to_device(ctx: Any, out: Any, host: np.ndarray) -> None:
        raise AssertionError("a control-flow op staged its arrays through the host")

    monkeypatch.setattr(arrays, "to_host", to_host)
    monkeypatch.setattr(staged, "to_device", to_device)
    return reads


def test_foreach_on_every_device(ctx: nv.Context, host_reads: list[Any]) -> None:
    x, s, w = nv.sym.var("x"), nv.sym.var("s"), nv.sym.var("w")
    out, st = nv.sym.contrib.foreach(
        lambda d, st: (nv.sym.tanh(d * w + st[0]), [d + st[0]]), x, [s]
    )
    args = {k: nv.nd.array(v, ctx=ctx) for k, v in {"x": XS, "s": S0, "w": W}.items()}
    grads = {k: nv.nd.ones(v.shape, ctx=ctx) for k, v in args.items()}
    ex = nv.sym.Group([out, st[0]]).bind(ctx, args, args_grad=grads, grad_req="add")
    got_out, got_s = (o.asnumpy() for o in ex.forward(is_train=True))
    ex.backward([nv.nd.ones((3, 2), ctx=ctx), nv.nd.ones(2, ctx=ctx)])
    want_out, want_s, gx, gs, gw = _reference()
    assert_almost_equal(got_out, want_out, rtol=1e-5, atol=1e-6)
    assert_almost_equal(got_s, want_s, rtol=1e-5, atol=1e-6)
    for name, want in (("x", gx), ("s", gs), ("w", gw)):  # grad_req='add' onto ones
        assert_almost_equal(grads[name].asnumpy(), 1 + want, rtol=1e-5, atol=1e-6)
    assert host_reads == []  # foreach tests nothing: no array left the device


def test_while_loop_and_cond_gradients_on_every_device(
    ctx: nv.Context, host_reads: list[Any]
) -> None:
    """Two steps of a = a * w (sin(a) * w out per step), then cond(sum(a) > 0, a * w,
    a - w); gradients against the closed form, added onto ones (grad_req='add')."""
    i, a, w = nv.sym.var("i"), nv.sym.var("a"), nv.sym.var("w")
    outs, (_, a_f) = nv.sym.contrib.while_loop(
        lambda i, a: i < 2,
        lambda i, a: ([nv.sym.sin(a) * w], [i + 1, a * w]),
        [i, a],
        max_iterations=3,
    )
    picked = nv.sym.contrib.cond(a_f.sum() > 0, lambda: a_f * w, lambda: a_f - w)
    a0, w0 = np.array([1.0, 2.0], np.float32), np.array([1.5, -0.5], np.float32)
    args = {"i": nv.nd.zeros(1, ctx=ctx), "a": nv.nd.array(a0, ctx=ctx),
            "w": nv.nd.array(w0, ctx=ctx)}  # fmt: skip
    grads = {k: nv.nd.ones(v.shape, ctx=ctx) for k, v in args.items()}
    ex = nv.sym.Group([outs[0], picked]).bind(ctx, args, args_grad=grads, grad_req="add")
    got_outs, got_picked = (o.asnumpy() for o in ex.forward(is_train=True))
    ex.backward([nv.nd.ones((3, 2), ctx=ctx), nv.nd.ones(2, ctx=ctx)])

    a, w = a0.astype(np.float64), w0.astype(np.float64)
    a1 = a * w
    want_outs = np.stack([np.sin(a) * w, np.sin(a1) * w, np.zeros(2)])
    assert_almost_equal(got_outs, want_outs, rtol=1e-5, atol=1e-6)
    assert_almost_equal(got_picked, a1 * w * w, rtol=1e-5, atol=1e-6)  # sum(a * w^2) > 0
    want_ga = np.cos(a) * w + np.cos(a1) * w * w + w**3
    want_gw = np.sin(a) + np.sin(a1) + np.cos(a1) * w * a + 3 * a * w * w
    assert_almost_equal(grads["a"].asnumpy(), 1 + want_ga, rtol=1e-5, atol=1e-5)
    assert_almost_equal(grads["w"].asnumpy(), 1 + want_gw, rtol=1e-5, atol=1e-5)
    assert grads["i"].asnumpy().tolist() == [1.0]
    if ctx.device_type == "gpu":  # three loop tests (the third fails) and one predicate
        assert host_reads == [(1,)] * 4


def test_while_loop_and_cond_on_every_device(ctx: nv.Context) -> None:
    i, a = nv.sym.var("i"), nv.sym.var("a")
    outs, (_, a_f) = nv.sym.contrib.while_loop(
        lambda i, a: i < 2, lambda i, a: ([a * 2], [i + 1, a * 2]), [i, a], max_iterations=3
    )
    picked = nv.sym.contrib.cond(a.sum() > 0, lambda: a_f + 1, lambda: a_f - 1)
    ex = nv.sym.Group([outs[0], picked]).bind(
        ctx, {"i": nv.nd.zeros(1, ctx=ctx), "a": nv.nd.array([1.0, 2.0], ctx=ctx)}
    )
    got_outs, got_picked = (o.asnumpy() for o in ex.forward())
    assert got_outs.tolist() == [[2.0, 4.0], [4.0, 8.0], [0.0, 0.0]]
    assert got_picked.tolist() == [5.0, 9.0]
