"""Updater: states made on first use, aggregated multi-weight updates, pickled states."""

from __future__ import annotations

import pickle

import numpy as np

import nnvmpy as nv
import optimizer_formulas as F

SHAPES = [(3, 4), (5,), (2, 3), (7,), (1,), (4, 4)]


def test_aggregated_sgd_matches_one_weight_at_a_time() -> None:
    rng = np.random.default_rng(0)
    w0 = [rng.normal(size=s) for s in SHAPES]
    steps = [[rng.normal(size=s) for s in SHAPES] for _ in range(3)]
    opt = nv.optimizer.SGD(learning_rate=0.1, momentum=0.9, wd=0.01, rescale_grad=0.5)
    assert opt.aggregate_num == 4
    opt.set_lr_mult({2: 3.0})
    updater = nv.optimizer.get_updater(opt)
    weights = [nv.nd.array(w, dtype=np.float64) for w in w0]
    want_w, want_m = list(w0), [np.zeros(s) for s in SHAPES]
    for grads in steps:
        updater(list(range(6)), [nv.nd.array(g, dtype=np.float64) for g in grads], weights)
        for i, g in enumerate(grads):
            lr = 0.3 if i == 2 else 0.1
            want_w[i], want_m[i] = F.sgd_mom(want_w[i], g, want_m[i], lr=lr, momentum=0.9,
                                             wd=0.01, rescale_grad=0.5)  # fmt: skip
    for w, want in zip(weights, want_w, strict=True):
        np.testing.assert_allclose(w.asnumpy(), want, rtol=1e-12)
    assert opt._index_update_count == dict.fromkeys(range(6), 3)


def test_mixed_dtypes_are_updated_in_separate_groups() -> None:
    opt = nv.optimizer.SGD(learning_rate=1.0)
    updater = nv.optimizer.get_updater(opt)
    a, b = nv.nd.ones((2,)), nv.nd.ones((2,), dtype=np.float64)
    updater([0, 1], [nv.nd.ones((2,)), nv.nd.ones((2,), dtype=np.float64)], [a, b])
    np.testing.assert_array_equal(a.asnumpy(), 0.0)
    np.testing.assert_array_equal(b.asnumpy(), 0.0)


def test_states_pickle_round_trip_and_continue_identically() -> None:
    rng = np.random.default_rng(1)
    w0, grads = rng.normal(size=(3, 4)), [rng.normal(size=(3, 4)) for _ in range(4)]

    def fresh() -> nv.optimizer.Updater:
        return nv.optimizer.get_updater(nv.optimizer.Adam(learning_rate=0.05, wd=0.01))

    ref, weight = fresh(), nv.nd.array(w0, dtype=np.float64)
    for g in grads:
        ref(0, nv.nd.array(g, dtype=np.float64), weight)

    first, w2 = fresh(), nv.nd.array(w0, dtype=np.float64)
    for g in grads[:2]:
        first(0, nv.nd.array(g, dtype=np.float64), w2)
    blob = first.get_states(dump_optimizer=True)
    resumed = fresh()
    resumed.set_states(blob)
    assert resumed.states_synced == {0: False}
    assert resumed.optimizer._index_update_count == {0: 2}  # t carries on, as does lr
    for g in grads[2:]:
        resumed(0, nv.nd.array(g, dtype=np.float64), w2)
    np.testing.assert_allclose(w2.asnumpy(), weight.asnumpy(), rtol=1e-12)

    states_only = pickle.loads(first.get_states())
    mean, var = states_only[0]
    np.testing.assert_array_equal(mean.asnumpy(), first.states[0][0].asnumpy())
    np.testing.assert_array_equal(var.asnumpy(), first.states[0][1].asnumpy())


def test_bytes_indices_become_strings() -> None:
    updater = nv.optimizer.get_updater(nv.optimizer.SGD(learning_rate=1.0, momentum=0.5))
    w = nv.nd.ones((2,))
    updater(b"fc_weight", nv.nd.ones((2,)), w)
    assert list(updater.states) == ["fc_weight"]
    np.testing.assert_array_equal(w.asnumpy(), 0.0)
