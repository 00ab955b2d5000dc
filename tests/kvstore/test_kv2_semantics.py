"""Independent checks of MXNet 1.9.1's single-process KVStore semantics against NumPy.

Written separately from test_local.py: the engine ordering of push/pull against later
writes, lists of lists of values, NumPy integer keys, and an optimizer in the store
checked step by step against SGD-with-momentum written in NumPy, including a resume from
saved optimizer states in a fresh store.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import nnvmpy as nv

nd = nv.nd


@pytest.fixture(params=["local", "device"])
def kv(request: pytest.FixtureRequest) -> nv.kvstore.KVStore:
    return nv.kv.create(request.param)


def test_push_reads_the_value_before_a_later_write(kv: nv.kvstore.KVStore) -> None:
    grad = np.arange(6, dtype=np.float32).reshape(2, 3)
    kv.init("w", nd.zeros((2, 3)))
    g = nd.array(grad)
    kv.push("w", g)
    g[:] = 100.0  # ordered after the push's read by the engine
    out = nd.zeros((2, 3))
    kv.pull("w", out=out)
    np.testing.assert_array_equal(out.asnumpy(), grad)


def test_init_stores_a_copy_and_pull_writes_before_later_reads(kv: nv.kvstore.KVStore) -> None:
    value = nd.ones((4,))
    kv.init(1, value)
    value[:] = 7.0
    out = nd.zeros((4,))
    kv.pull(1, out=out)
    out += 1.0
    np.testing.assert_array_equal(out.asnumpy(), np.full(4, 2.0, np.float32))


def test_lists_of_lists_sum_per_key_and_broadcast_per_out(kv: nv.kvstore.KVStore) -> None:
    rng = np.random.default_rng(1)
    a = [rng.standard_normal((2,)).astype(np.float32) for _ in range(3)]
    b = rng.standard_normal((3, 2)).astype(np.float32)
    kv.init(["a", "b"], [nd.zeros((2,)), nd.zeros((3, 2))])
    kv.push(["a", "b"], [[nd.array(x, ctx=nv.cpu(i)) for i, x in enumerate(a)], nd.array(b)])
    outs = [[nd.zeros((2,)), nd.zeros((2,), ctx=nv.cpu(1))], nd.zeros((3, 2))]
    kv.pull(["a", "b"], out=outs)
    for o in outs[0]:
        np.testing.assert_allclose(o.asnumpy(), a[0] + a[1] + a[2], rtol=1e-6)
    np.testing.assert_array_equal(outs[1].asnumpy(), b)


def test_pushpull_without_out_writes_the_sum_into_every_value(kv: nv.kvstore.KVStore) -> None:
    kv.init(2, nd.zeros((3,)))
    values = [nd.full((3,), float(i)) for i in range(1, 4)]
    kv.pushpull(2, values)
    for v in values:
        np.testing.assert_array_equal(v.asnumpy(), np.full(3, 6.0, np.float32))


def test_numpy_integer_keys_are_int_keys_for_the_updater() -> None:
    kv = nv.kv.create("local")
    seen: list[object] = []

    def updater(key: object, grad: nv.nd.NDArray, weight: nv.nd.NDArray) -> None:
        seen.append(key)
        weight[:] = weight - 0.5 * grad

    kv.set_updater(updater)
    kv.init(np.int64(4), nd.ones((2,)))
    kv.push(4, [nd.ones((2,)), nd.full((2,), 3.0)])
    out = nd.zeros((2,))
    kv.pull(np.int32(4), out=out)
    np.testing.assert_array_equal(out.asnumpy(), np.full(2, 1.0 - 0.5 * 4.0, np.float32))
    assert seen == [4]
    assert type(seen[0]) is int


def _sgd_momentum(w0: np.ndarray, grads: list[np.ndarray], **hp: float) -> np.ndarray:
    w, mom = w0.copy(), np.zeros_like(w0)
    for g in grads:
        mom = hp["momentum"] * mom - hp["lr"] * (hp["rescale"] * g + hp["wd"] * w)
        w = w + mom
    return w


@pytest.mark.parametrize("kv_type", ["local", "device"])
def test_optimizer_in_store_and_resume_from_saved_states(kv_type: str, tmp_path: Path) -> None:
    hp = {"lr": 0.1, "momentum": 0.9, "wd": 0.01, "rescale": 0.5}
    rng = np.random.default_rng(2)
    w0 = rng.standard_normal((3, 4)).astype(np.float32)
    grads = [rng.standard_normal((3, 4)).astype(np.float32) for _ in range(6)]

    def store(weight: np.ndarray) -> nv.kvstore.KVStore:
        kv = nv.kv.create(kv_type)
        kv.set_optimizer(
            nv.optimizer.SGD(
                learning_rate=hp["lr"],
                momentum=hp["momentum"],
                wd=hp["wd"],
                rescale_grad=hp["rescale"],
            )
        )
        kv.init("w", nd.array(weight))
        return kv

    first = store(w0)
    for g in grads[:3]:  # the halves on two devices sum to g
        first.push("w", [nd.array(g / 2), nd.array(g / 2, ctx=nv.cpu(1))])
    mid = nd.zeros((3, 4))
    first.pull("w", out=mid)
    np.testing.assert_allclose(mid.asnumpy(), _sgd_momentum(w0, grads[:3], **hp), rtol=1e-5)
    states = tmp_path / "states"
    first.save_optimizer_states(str(states))

    resumed = store(mid.asnumpy())
    resumed.load_optimizer_states(str(states))
    for g in grads[3:]:
        resumed.push("w", nd.array(g))
    end = nd.zeros((3, 4))
    resumed.pull("w", out=end)
    np.testing.assert_allclose(end.asnumpy(), _sgd_momentum(w0, grads, **hp), rtol=1e-5)


def test_errors_name_the_call_and_leave_the_store_usable() -> None:
    kv = nv.kv.create("local")
    kv.init("w", nd.ones((2,)))
    with pytest.raises(nv.NNVMError, match=r"init.*'w'"):
        kv.init("w", nd.ones((2,)))
    with pytest.raises(nv.NNVMError, match=r"pull.*'nope'"):
        kv.pull("nope", out=nd.zeros((2,)))
    with pytest.raises(nv.NNVMError, match=r"push.*\(2,\).*\(3,\)"):
        kv.push("w", nd.ones((3,)))
    with pytest.raises(nv.NNVMError, match=r"save_optimizer_states"):
        kv.save_optimizer_states("unused")
    kv.push("w", nd.full((2,), 5.0))
    out = nd.zeros((2,))
    kv.pull("w", out=out)
    np.testing.assert_array_equal(out.asnumpy(), np.full(2, 5.0, np.float32))
