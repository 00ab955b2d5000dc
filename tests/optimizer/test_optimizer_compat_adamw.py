"""AdamW update ops (_adamw_update, _mp_adamw_update, _multi_(mp_)adamw_update) and their
nd.contrib front-ends, against AdamW's rule written in NumPy (MXNet's contrib adamw docs):

    g = clip(rescale_grad * grad, clip_gradient)
    mean = beta1 * mean + (1 - beta1) * g;  var = beta2 * var + (1 - beta2) * g^2
    weight -= eta * (lr * mean / (sqrt(var) + epsilon) + wd * weight)

and the update is skipped when rescale_grad is NaN, Inf or 0."""

from __future__ import annotations

import numpy as np
import pytest

import nnvmpy as nv

RNG = np.random.default_rng(11)


def reference(w, g, m, v, rescale, lr, eta, wd, beta1=0.9, beta2=0.999, eps=1e-8, clip=-1.0):
    g = rescale * g.astype(np.float64)
    if clip >= 0:
        g = np.clip(g, -clip, clip)
    m = beta1 * m + (1 - beta1) * g
    v = beta2 * v + (1 - beta2) * g * g
    w = w - eta * (lr * m / (np.sqrt(v) + eps) + wd * w)
    return w, m, v


def arrays(shape, dtype=np.float32):
    w = RNG.uniform(-1, 1, shape)
    g = RNG.uniform(-1, 1, shape)
    m = RNG.uniform(0, 1, shape)
    v = RNG.uniform(0, 1, shape)
    return [x.astype(dtype) for x in (w, g, m, v)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("clip", [-1.0, 0.5])
def test_adamw_update_matches_the_rule(dtype, clip) -> None:
    w, g, m, v = arrays((4, 5), dtype)
    kw = {"lr": 0.7, "eta": 0.9, "wd": 0.05, "beta1": 0.8, "beta2": 0.99, "epsilon": 1e-6}
    want_w, want_m, want_v = reference(w, g, m, v, 3.0, 0.7, 0.9, 0.05, 0.8, 0.99, 1e-6, clip)
    nw, nm, nvv = (
        nv.nd.array(w, dtype=dtype),
        nv.nd.array(m, dtype=dtype),
        nv.nd.array(v, dtype=dtype),
    )
    out = nv.nd.contrib.adamw_update(
        nw,
        nv.nd.array(g, dtype=dtype),
        nm,
        nvv,
        nv.nd.array([3.0]),
        out=nw,
        clip_gradient=clip,
        **kw,
    )
    assert out is nw
    assert nw.dtype == dtype
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(nw.asnumpy(), want_w, rtol=tol, atol=tol)
    np.testing.assert_allclose(nm.asnumpy(), want_m, rtol=tol, atol=tol)
    np.testing.assert_allclose(nvv.asnumpy(), want_v, rtol=tol, atol=tol)


def test_a_float_rescale_grad_is_accepted() -> None:
    w, g, m, v = arrays((6,))
    nw = nv.nd.array(w)
    nv.nd.contrib.adamw_update(nw, nv.nd.array(g), nv.nd.array(m), nv.nd.array(v), 0.5,
                               lr=0.1, eta=1.0, out=nw)  # fmt: skip
    np.testing.assert_allclose(nw.asnumpy(), reference(w, g, m, v, 0.5, 0.1, 1.0, 0.0)[0],
                               rtol=1e-5, atol=1e-6)  # fmt: skip


@pytest.mark.parametrize("rescale", [np.nan, np.inf, -np.inf, 0.0])
def test_update_is_skipped_for_nan_inf_or_zero_rescale(rescale) -> None:
    w, g, m, v = arrays((3, 4))
    nw, nm, nvv = nv.nd.array(w), nv.nd.array(m), nv.nd.array(v)
    other = nv.nd.full((3, 4), 7.0)
    nv.nd.contrib.adamw_update(nw, nv.nd.array(g), nm, nvv, nv.nd.array([rescale]), lr=1.0,
                               eta=1.0, wd=0.1, out=other)  # fmt: skip
    np.testing.assert_array_equal(nw.asnumpy(), w)
    np.testing.assert_array_equal(nm.asnumpy(), m)
    np.testing.assert_array_equal(nvv.asnumpy(), v)
    np.testing.assert_array_equal(other.asnumpy(), np.full((3, 4), 7.0))  # not written


def test_mp_adamw_update_runs_on_the_master_copy() -> None:
    w, g, m, v = arrays((5, 3))
    w16, g16 = nv.nd.array(w, dtype=np.float16), nv.nd.array(g, dtype=np.float16)
    master = w16.astype(np.float32)
    nm, nvv = nv.nd.array(m), nv.nd.array(v)
    w0 = master.asnumpy().astype(np.float64)
    want_w, want_m, want_v = reference(w0, g16.asnumpy(), m, v, 2.0, 0.3, 0.5, 0.02)
    nv.nd.contrib.mp_adamw_update(w16, g16, nm, nvv, master, 2.0, lr=0.3, eta=0.5, wd=0.02,
                                  out=w16)  # fmt: skip
    assert w16.dtype == np.float16
    assert master.dtype == np.float32
    np.testing.assert_allclose(master.asnumpy(), want_w, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(nm.asnumpy(), want_m, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(nvv.asnumpy(), want_v, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(w16.asnumpy(), master.asnumpy().astype(np.float16))


@pytest.mark.parametrize("mp", [False, True])
def test_multi_adamw_update_matches_one_update_per_weight(mp) -> None:
    shapes = [(3, 4), (7,), (2, 2, 2)]
    lrs, wds, etas = [0.1, 0.2, 0.3], [0.01, 0.0, 0.03], [1.0, 0.5, 0.25]
    groups = [arrays(s) for s in shapes]
    low = np.float16 if mp else np.float32
    ws = [nv.nd.array(w, dtype=low) for w, _, _, _ in groups]
    gs = [nv.nd.array(g, dtype=low) for _, g, _, _ in groups]
    ms = [nv.nd.array(m) for _, _, m, _ in groups]
    vs = [nv.nd.array(v) for _, _, _, v in groups]
    masters = [w.astype(np.float32) for w in ws]
    starts = [(x.asnumpy() if mp else w.asnumpy()).astype(np.float64) for x, w in zip(masters, ws)]
    if mp:
        nv.nd.contrib.multi_mp_adamw_update(ws, gs, ms, vs, masters, 1.5, lrs=lrs, wds=wds,
                                            etas=etas, out=ws, clip_gradient=1.0)  # fmt: skip
    else:
        nv.nd.contrib.multi_adamw_update(ws, gs, ms, vs, nv.nd.array([1.5]), lrs=lrs, wds=wds,
                                         etas=etas, out=ws, clip_gradient=1.0)  # fmt: skip
    for i, (_, _g, m, v) in enumerate(groups):
        want_w, want_m, want_v = reference(starts[i], gs[i].asnumpy(), m, v, 1.5, lrs[i],
                                           etas[i], wds[i], clip=1.0)  # fmt: skip
        got = masters[i] if mp else ws[i]
        np.testing.assert_allclose(got.asnumpy(), want_w, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(ms[i].asnumpy(), want_m, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(vs[i].asnumpy(), want_v, rtol=1e-5, atol=1e-6)
        if mp:
            np.testing.assert_array_equal(ws[i].asnumpy(), got.asnumpy().astype(np.float16))


def test_bad_input_is_a_named_error() -> None:
    w = nv.nd.ones((3,))
    with pytest.raises(nv.NNVMError, match="lrs has 1 values but num_weights is 2"):
        nv.nd.contrib.multi_adamw_update([w, w], [w, w], [w, w], [w, w], 1.0, lrs=[0.1],
                                         wds=[0, 0], etas=[1, 1])  # fmt: skip
    with pytest.raises(nv.NNVMError, match="lists of equal length"):
        nv.nd.contrib.multi_adamw_update([w, w], [w], [w, w], [w, w], 1.0, lrs=[0.1, 0.1],
                                         wds=[0, 0], etas=[1, 1])  # fmt: skip
    with pytest.raises(nv.NNVMError, match="mp_adamw_update"):
        nv.nd.contrib.mp_adamw_update(w, w, w.astype(np.float64), w, w, 1.0, lr=0.1, eta=1.0)


def test_symbol_states_are_auxiliary() -> None:
    """mean and var (and weight32) are updated in place: a symbol's auxiliary states."""
    s = nv.sym._internal._adamw_update(
        nv.sym.var("w"), nv.sym.var("g"), nv.sym.var("m"), nv.sym.var("v"), nv.sym.var("r"),
        lr=0.1, eta=1.0,
    )  # fmt: skip
    assert s.list_arguments() == ["w", "g", "r"]
    assert s.list_auxiliary_states() == ["m", "v"]
    _, out_shapes, _ = s.infer_shape(w=(2, 3))
    assert out_shapes == [(2, 3)]
