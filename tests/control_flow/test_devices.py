"""The control-flow ops on every device: forward and gradients on the GPU (host-staged)
equal NumPy's, with write and add requests."""

from __future__ import annotations

import numpy as np

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


def test_foreach_on_every_device(ctx: nv.Context) -> None:
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
