"""'local' and 'device' KVStores: MXNet 1.9.1's semantics, checked against NumPy sums."""

from __future__ import annotations

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy import NNVMError

SHAPE = (4, 5)
KEYS = [5, 7, 11]
STR_KEYS = ["b", "c", "d"]


def rand(rng: np.random.Generator, shape: tuple[int, ...] = SHAPE) -> np.ndarray:
    return rng.standard_normal(shape).astype(np.float32)


@pytest.fixture(params=["local", "device"])
def kv_type(request: pytest.FixtureRequest) -> str:
    return request.param


def test_create_default_is_local_with_one_worker() -> None:
    kv = nv.kv.create()
    assert kv.type == "local"
    assert (kv.rank, kv.num_workers) == (0, 1)
    assert nv.kvstore.create("device").type == "device"
    assert kv.is_capable(nv.kv.KVStore.OPTIMIZER)
    kv.barrier()


@pytest.mark.parametrize("name", ["nope", "dist_async"])
def test_create_unknown_type_raises(name: str) -> None:
    with pytest.raises(NNVMError, match=r"kvstore\.create"):
        nv.kv.create(name)


def test_push_replaces_with_sum_and_pull_broadcasts(kv_type: str) -> None:
    rng = np.random.default_rng(0)
    kv = nv.kv.create(kv_type)
    kv.init(3, nv.nd.zeros(SHAPE))
    grads = [rand(rng) for _ in range(3)]
    ctxs = [nv.cpu(0), nv.cpu(1), nv.cpu(2)]
    for _ in range(2):  # pushing again replaces, it does not accumulate
        kv.push(3, [nv.nd.array(g, ctx=c) for g, c in zip(grads, ctxs, strict=True)])
    outs = [nv.nd.empty(SHAPE, ctx=c) for c in ctxs]
    kv.pull(3, out=outs)
    want = grads[0] + grads[1] + grads[2]
    for o, c in zip(outs, ctxs, strict=True):
        assert o.context == c
        np.testing.assert_allclose(o.asnumpy(), want, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("keys", [KEYS, STR_KEYS])
def test_list_of_keys_with_lists_of_values(keys: list, kv_type: str) -> None:
    rng = np.random.default_rng(1)
    kv = nv.kv.create(kv_type)
    inits = [rand(rng) for _ in keys]
    kv.init(keys, [nv.nd.array(v) for v in inits])
    outs = [nv.nd.empty(SHAPE) for _ in keys]
    kv.pull(keys, out=outs)
    for o, v in zip(outs, inits, strict=True):
        np.testing.assert_array_equal(o.asnumpy(), v)
    grads = [[rand(rng) for _ in range(2)] for _ in keys]
    kv.push(keys, [[nv.nd.array(g, ctx=nv.cpu(i)) for i, g in enumerate(gs)] for gs in grads])
    outs2 = [[nv.nd.empty(SHAPE, ctx=nv.cpu(i)) for i in range(2)] for _ in keys]
    kv.pull(keys, out=outs2)
    for os_, gs in zip(outs2, grads, strict=True):
        for o in os_:
            np.testing.assert_allclose(o.asnumpy(), gs[0] + gs[1], rtol=1e-6)


def test_same_key_twice_in_one_push_sums() -> None:
    kv = nv.kv.create()
    kv.init(1, nv.nd.zeros(SHAPE))
    kv.push([1, 1], [nv.nd.ones(SHAPE), nv.nd.ones(SHAPE) * 2])
    out = nv.nd.empty(SHAPE)
    kv.pull(1, out=out)
    np.testing.assert_array_equal(out.asnumpy(), np.full(SHAPE, 3, np.float32))


def test_updater_gets_key_grad_weight(kv_type: str) -> None:
    calls: list[tuple] = []

    def updater(key, recv, local):  # MXNet's test: accumulate in the store
        calls.append((key, recv.shape, local.shape))
        local += recv

    kv = nv.kv.create(kv_type)
    kv.init("w", nv.nd.zeros(SHAPE))
    kv.set_updater(updater)
    n_dev, n_push = 3, 4
    for _ in range(n_push):
        kv.push("w", [nv.nd.ones(SHAPE, ctx=nv.cpu(i)) for i in range(n_dev)])
    out = nv.nd.empty(SHAPE)
    kv.pull("w", out=out)
    np.testing.assert_array_equal(out.asnumpy(), np.full(SHAPE, n_dev * n_push, np.float32))
    assert calls == [("w", SHAPE, SHAPE)] * n_push


def test_set_optimizer_updates_on_push(kv_type: str) -> None:
    rng = np.random.default_rng(2)
    w0, g0, g1 = rand(rng), rand(rng), rand(rng)
    kv = nv.kv.create(kv_type)
    kv.init(0, nv.nd.array(w0))
    lr, mom = 0.1, 0.9
    kv.set_optimizer(nv.optimizer.SGD(learning_rate=lr, momentum=mom, wd=0.0))
    out = nv.nd.empty(SHAPE)
    kv.pushpull(0, [nv.nd.array(g0), nv.nd.array(g1, ctx=nv.cpu(1))], out=out)
    g = g0 + g1
    m = -lr * g  # MXNet's SGD momentum: m = mom * m - lr * g; w += m
    np.testing.assert_allclose(out.asnumpy(), w0 + m, rtol=1e-5, atol=1e-6)
    kv.pushpull(0, nv.nd.array(g0), out=out)
    m2 = mom * m - lr * g0
    np.testing.assert_allclose(out.asnumpy(), w0 + m + m2, rtol=1e-5, atol=1e-6)


def test_optimizer_states_round_trip(tmp_path) -> None:
    rng = np.random.default_rng(3)
    w0, grads = rand(rng), [rand(rng) for _ in range(3)]

    def store(w: np.ndarray) -> nv.kv.KVStore:
        kv = nv.kv.create()
        kv.init(0, nv.nd.array(w))
        kv.set_optimizer(nv.optimizer.SGD(learning_rate=0.1, momentum=0.9))
        return kv

    a = store(w0)
    a.push(0, nv.nd.array(grads[0]))
    w1 = nv.nd.empty(SHAPE)
    a.pull(0, out=w1)
    fname = str(tmp_path / "states")
    a.save_optimizer_states(fname)
    b, fresh = store(w1.asnumpy()), store(w1.asnumpy())
    b.load_optimizer_states(fname)  # b continues with a's momentum, fresh starts at zero
    for g in grads[1:]:
        for kv in (a, b, fresh):
            kv.push(0, nv.nd.array(g))
    out = {}
    for name, kv in (("a", a), ("b", b), ("fresh", fresh)):
        out[name] = nv.nd.empty(SHAPE)
        kv.pull(0, out=out[name])
    np.testing.assert_array_equal(out["a"].asnumpy(), out["b"].asnumpy())
    assert not np.allclose(out["a"].asnumpy(), out["fresh"].asnumpy())
    with pytest.raises(NNVMError, match="set_optimizer"):
        nv.kv.create().save_optimizer_states(fname)
    (tmp_path / "junk").write_bytes(b"not a pickle")
    with pytest.raises(NNVMError, match="not a file of optimizer states"):
        a.load_optimizer_states(str(tmp_path / "junk"))


def test_pushpull_in_place_and_broadcast() -> None:
    kv = nv.kv.create()
    kv.init(9, nv.nd.zeros(SHAPE))
    vals = [nv.nd.ones(SHAPE, ctx=nv.cpu(i)) for i in range(2)]
    kv.pushpull(9, vals)
    for v in vals:
        np.testing.assert_array_equal(v.asnumpy(), np.full(SHAPE, 2, np.float32))
    outs = [nv.nd.empty(SHAPE, ctx=nv.cpu(i)) for i in range(2)]
    kv.broadcast(10, nv.nd.full(SHAPE, 7.0), out=outs)
    for o in outs:
        np.testing.assert_array_equal(o.asnumpy(), np.full(SHAPE, 7, np.float32))


def test_device_store_keeps_key_on_its_device() -> None:
    kv = nv.kv.create("device")
    kv.init(0, nv.nd.zeros(SHAPE, ctx=nv.cpu(1)))
    assert kv._store[0].context == nv.cpu(1)
    local = nv.kv.create("local")
    local.init(0, nv.nd.zeros(SHAPE, ctx=nv.cpu(1)))
    assert local._store[0].context == nv.cpu(0)


def test_errors_are_named_and_store_keeps_working() -> None:
    kv = nv.kv.create()
    kv.init(3, nv.nd.zeros(SHAPE))
    with pytest.raises(NNVMError, match="duplicate init of key 3"):
        kv.init(3, nv.nd.zeros(SHAPE))
    with pytest.raises(NNVMError, match="key 4 has not been initialized"):
        kv.pull(4, out=nv.nd.empty(SHAPE))
    with pytest.raises(NNVMError, match="key 4 has not been initialized"):
        kv.push(4, nv.nd.ones(SHAPE))
    with pytest.raises(NNVMError, match="mixed key types"):
        kv.init("a", nv.nd.zeros(SHAPE))
    with pytest.raises(NNVMError, match="inconsistent types of keys"):
        kv.push([3, "a"], [nv.nd.ones(SHAPE)] * 2)
    with pytest.raises(NNVMError, match=r"shape \(4, 5\), got an array of shape \(2, 2\)"):
        kv.push(3, nv.nd.ones((2, 2)))
    with pytest.raises(NNVMError, match="2 keys need a list of 2 values"):
        kv.push([3, 3], nv.nd.ones(SHAPE))
    with pytest.raises(NNVMError, match="must be an NDArray"):
        kv.push(3, np.ones(SHAPE))
    kv.push(3, nv.nd.ones(SHAPE) * 5)
    out = nv.nd.empty(SHAPE)
    kv.pull(3, out=out)
    np.testing.assert_array_equal(out.asnumpy(), np.full(SHAPE, 5, np.float32))


@pytest.mark.gpu
def test_device_store_sums_gpu_and_cpu_values() -> None:
    if nv.num_gpus() == 0:
        pytest.skip("no GPU (run with NUMBA_ENABLE_CUDASIM=1)")
    rng = np.random.default_rng(4)
    a, b = rand(rng), rand(rng)
    kv = nv.kv.create("device")
    kv.init(0, nv.nd.zeros(SHAPE, ctx=nv.gpu(0)))
    kv.push(0, [nv.nd.array(a, ctx=nv.gpu(0)), nv.nd.array(b, ctx=nv.cpu())])
    outs = [nv.nd.empty(SHAPE, ctx=nv.gpu(0)), nv.nd.empty(SHAPE)]
    kv.pull(0, out=outs)
    for o in outs:
        np.testing.assert_allclose(o.asnumpy(), a + b, rtol=1e-6)
