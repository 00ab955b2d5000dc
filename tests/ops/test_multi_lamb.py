"""_multi_lamb_update / _multi_mp_lamb_update: LAMB on several tensors in one op."""

from __future__ import annotations

import numpy as np
import pytest

import nnvmpy as nv
import optimizer_formulas as F

LAMB = nv.nd._internal._multi_lamb_update
MP_LAMB = nv.nd._internal._multi_mp_lamb_update


def test_a_unit_gradient_steps_by_the_learning_rate() -> None:
    """mean = 0.1, var = 0.001 after one step; bias-corrected both are 1, so g ~= 1 and
    the trust ratio ||w|| / ||g|| ~= 1: w = 1 - 0.1 (MXNet 1.9.1 gives 0.9 too)."""
    w, g, m, v = nv.nd.ones((3,)), nv.nd.ones((3,)), nv.nd.zeros((3,)), nv.nd.zeros((3,))
    LAMB(w, g, m, v, learning_rates=(0.1,), wds=(0.0,), step_count=(1,), out=w)
    np.testing.assert_allclose(w.asnumpy(), 0.9, rtol=1e-6)
    np.testing.assert_allclose(m.asnumpy(), 0.1, rtol=1e-6)
    np.testing.assert_allclose(v.asnumpy(), 0.001, rtol=1e-5)


def test_states_and_master_copies_update_in_place() -> None:
    rng = np.random.default_rng(0)
    shapes = [(2, 3), (4,)]
    host = [[rng.uniform(-1, 1, s), rng.uniform(-1, 1, s), rng.uniform(-0.1, 0.1, s),
             rng.uniform(0.0, 0.1, s)] for s in shapes]  # fmt: skip
    args, weights = [], []
    for w, g, m, v in host:
        w16 = nv.nd.array(w, dtype=np.float16)
        weights.append(w16)
        args += [w16, nv.nd.array(g, dtype=np.float16), nv.nd.array(m), nv.nd.array(v),
                 nv.nd.array(w.astype(np.float16).astype(np.float32))]  # fmt: skip
    kw = {"learning_rates": (0.1, 0.2), "wds": (0.01, 0.1), "step_count": (3, 1)}
    MP_LAMB(*args, num_tensors=2, out=weights, **kw)
    for i, (w, g, m, v) in enumerate(host):
        w32 = w.astype(np.float16).astype(np.float64)
        g16 = g.astype(np.float16).astype(np.float64)
        d, mean, var = F.lamb_phase1(w32, g16, m, v, t=kw["step_count"][i], wd=kw["wds"][i])
        new = F.lamb_phase2(w32, d, np.linalg.norm(w32), np.linalg.norm(d),
                            lr=kw["learning_rates"][i])[0]  # fmt: skip
        np.testing.assert_allclose(args[5 * i + 2].asnumpy(), mean, rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(args[5 * i + 3].asnumpy(), var, rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(args[5 * i + 4].asnumpy(), new, rtol=1e-5, atol=1e-6)
        assert weights[i].dtype == np.float16
        np.testing.assert_allclose(weights[i].asnumpy(), new.astype(np.float16), rtol=1e-3)


def test_a_zero_weight_keeps_the_plain_learning_rate() -> None:
    """||w|| = 0: the trust ratio is 1, so w = -lr * g."""
    w, g = nv.nd.zeros((4,)), nv.nd.array([1.0, -1.0, 2.0, 0.5])
    m, v = nv.nd.zeros((4,)), nv.nd.zeros((4,))
    out = LAMB(w, g, m, v, learning_rates=(0.5,), wds=(0.0,), step_count=(1,))
    np.testing.assert_allclose(out.asnumpy(), -0.5 * np.sign(g.asnumpy()), rtol=1e-5)


def test_symbol_states_are_auxiliary_as_in_mxnet() -> None:
    names = ["w0", "g0", "m0", "v0", "w1", "g1", "m1", "v1"]
    s = nv.sym._internal._multi_lamb_update(
        *[nv.sym.var(n) for n in names],
        learning_rates=(0.1, 0.2), wds=(0.0, 0.0), step_count=(1, 1), num_tensors=2,
    )  # fmt: skip
    assert s.list_arguments() == ["w0", "g0", "w1", "g1"]
    assert s.list_auxiliary_states() == ["m0", "v0", "m1", "v1"]
    _, outs, _ = s.infer_shape(w0=(2, 3), w1=(5,))
    assert outs == [(2, 3), (5,)]


@pytest.mark.parametrize("what", ["learning_rates", "wds", "step_count"])
def test_one_value_per_tensor(what: str) -> None:
    kw = {"learning_rates": (0.1, 0.1), "wds": (0.0, 0.0), "step_count": (1, 1)}
    kw[what] = kw[what][:1]
    arrays = [nv.nd.ones((2,)) for _ in range(8)]
    with pytest.raises(nv.NNVMError, match=f"_multi_lamb_update: {what} has 1 values"):
        LAMB(*arrays, num_tensors=2, **kw)


def test_mp_states_must_be_float32() -> None:
    w, g = nv.nd.ones((2,), dtype=np.float16), nv.nd.ones((2,), dtype=np.float16)
    m, v, w32 = (nv.nd.zeros((2,), dtype=np.float16) for _ in range(3))
    with pytest.raises(nv.NNVMError, match=r"_multi_mp_lamb_update.*float32"):
        MP_LAMB(w, g, m, v, w32, learning_rates=(0.1,), wds=(0.0,), step_count=(1,))


def test_contrib_list_front_end_matches_the_op() -> None:
    rng = np.random.default_rng(3)
    host = [[rng.uniform(-1, 1, s) for _ in range(3)] + [rng.uniform(0, 0.1, s)]
            for s in ((2, 3), (4,))]  # fmt: skip
    kw = {"wds": (0.01, 0.0), "step_count": (2, 5)}

    def arrays() -> list[list[nv.nd.NDArray]]:
        return [[nv.nd.array(x) for x in group] for group in host]

    flat = [a for group in arrays() for a in group]
    want = LAMB(*flat, num_tensors=2, learning_rates=(0.1, 0.2), **kw)
    w, g, m, v = zip(*arrays(), strict=True)
    got = nv.nd.contrib.multi_lamb_update(w, g, m, v, lrs=[0.1, 0.2], out=list(w), **kw)
    for a, b in zip(got, want, strict=True):
        np.testing.assert_array_equal(a.asnumpy(), b.asnumpy())
    with pytest.raises(nv.NNVMError, match="multi_lamb_update: expects lists of equal length"):
        nv.nd.contrib.multi_lamb_update(w, g[:1], m, v, lrs=[0.1, 0.2], **kw)
