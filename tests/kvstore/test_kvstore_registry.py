"""KVStoreBase.register, create() of registered stores, and the stateless 'teststore',
checked against NumPy sums (MXNet 1.9.1's python/mxnet/kvstore/base.py semantics)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy import NNVMError

nd = nv.nd
SHAPE = (2, 3)


@pytest.fixture
def clean_registry():
    """Registrations made by a test are undone after it."""
    saved = dict(nv.kv.KVStoreBase.kv_registry)
    yield
    nv.kv.KVStoreBase.kv_registry.clear()
    nv.kv.KVStoreBase.kv_registry.update(saved)


def test_registered_class_is_created_by_its_lower_case_name(clean_registry) -> None:
    @nv.kv.KVStoreBase.register
    class EchoStore(nv.kv.KVStoreBase):
        def broadcast(self, key, value, out, priority=0):
            value.copyto(out)

    kv = nv.kv.create("echostore")
    assert type(kv) is EchoStore
    assert type(nv.kv.create("EchoStore")) is EchoStore  # names are case-insensitive
    out = nd.zeros(SHAPE)
    kv.broadcast(0, nd.ones(SHAPE) * 3, out)
    np.testing.assert_array_equal(out.asnumpy(), np.full(SHAPE, 3, np.float32))
    with pytest.raises(NotImplementedError):  # what it does not implement says so
        kv.pushpull(0, out)


def test_registering_the_same_name_again_warns_and_replaces(clean_registry) -> None:
    @nv.kv.KVStoreBase.register
    class Twice(nv.kv.KVStoreBase):
        pass

    first = Twice
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")

        @nv.kv.KVStoreBase.register
        class Twice(nv.kv.KVStoreBase):  # the same name again: the point of the test
            pass

    assert any("replaces" in str(w.message) for w in caught)
    assert type(nv.kv.create("twice")) is Twice is not first


def test_register_rejects_what_is_not_a_store_class() -> None:
    with pytest.raises(NNVMError, match="subclass of KVStoreBase"):
        nv.kv.KVStoreBase.register(object)
    with pytest.raises(NNVMError, match="subclass of KVStoreBase"):
        nv.kv.KVStoreBase.register(lambda: None)


def test_builtin_stores_implement_the_interface() -> None:
    for name in ("local", "device", "teststore"):
        assert isinstance(nv.kv.create(name), nv.kv.KVStoreBase)
    assert nv.kv.KVStore.is_capable("optimizer")  # a static method, callable on the class
    assert nv.kv.create("LOCAL").type == "local"


def test_unknown_name_lists_registered_stores() -> None:
    with pytest.raises(NNVMError, match="teststore"):
        nv.kv.create("no_such_store")


def test_teststore_type_rank_and_capabilities() -> None:
    kv = nv.kv.create("teststore")
    assert (kv.type, kv.rank, kv.num_workers) == ("teststore", 0, 1)
    assert type(kv).is_capable("optimizer") is False
    with pytest.raises(NNVMError, match="unknown capability"):
        type(kv).is_capable("telepathy")
    with pytest.raises(NotImplementedError):
        kv.set_optimizer(nv.optimizer.SGD())


def test_teststore_broadcast_copies_into_every_out() -> None:
    kv = nv.kv.create("teststore")
    value = np.arange(6, dtype=np.float32).reshape(SHAPE)
    outs = [nd.zeros(SHAPE, nv.cpu(i)) for i in range(3)]
    kv.broadcast("w", nd.array(value), outs)
    for o in outs:
        np.testing.assert_array_equal(o.asnumpy(), value)
    # a list of keys: one value and one out (or list of outs) per key
    a, b = nd.zeros(SHAPE), [nd.zeros(SHAPE), nd.zeros(SHAPE)]
    kv.broadcast(["x", "y"], [nd.array(value), nd.array(-value)], [a, b])
    np.testing.assert_array_equal(a.asnumpy(), value)
    for o in b:
        np.testing.assert_array_equal(o.asnumpy(), -value)


def test_teststore_pushpull_sums_over_devices() -> None:
    rng = np.random.default_rng(0)
    kv = nv.kv.create("teststore")
    grads = [rng.standard_normal(SHAPE).astype(np.float32) for _ in range(4)]
    vals = [nd.array(g, ctx=nv.cpu(i)) for i, g in enumerate(grads)]
    outs = [nd.zeros(SHAPE, nv.cpu(i)) for i in range(4)]
    kv.pushpull(3, vals, out=outs)
    want = grads[0] + grads[1] + grads[2] + grads[3]
    for o in outs:
        np.testing.assert_allclose(o.asnumpy(), want, rtol=1e-6, atol=1e-6)
    kv.pushpull(3, vals)  # without out: in place, every value becomes the sum
    for v in vals:
        np.testing.assert_allclose(v.asnumpy(), want, rtol=1e-6, atol=1e-6)
    # the same array twice: the sum reads both before either is overwritten
    same = nd.ones((1,))
    kv.pushpull(1, [same, same])
    np.testing.assert_array_equal(same.asnumpy(), [2.0])


def test_teststore_list_of_keys_needs_a_value_per_key() -> None:
    kv = nv.kv.create("teststore")
    with pytest.raises(NNVMError, match="2 keys need a list of 2 values"):
        kv.pushpull(["a", "b"], [nd.ones(SHAPE)])
    with pytest.raises(NNVMError, match="key must be an int or a str"):
        kv.broadcast(1.5, nd.ones(SHAPE), nd.zeros(SHAPE))
