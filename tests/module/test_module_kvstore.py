"""Module.init_optimizer(kvstore=...): MXNet 1.9.1's rules for when a store is made and who
runs the optimizer, checked against NumPy's SGD formulas on the executor's own gradients.

The 2-process 'dist_sync' Module training is in tests/kvstore/test_dist.py (it needs
`nnvmpy launch`).
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy.base import NNVMError, ParamError
from nnvmpy.module import kvstore_util

BATCH, DIM, LR, MOM = 8, 6, 0.3, 0.9


def _mlp() -> nv.sym.Symbol:
    data = nv.sym.Variable("data")
    net = nv.sym.FullyConnected(data, num_hidden=5, name="fc1")
    net = nv.sym.Activation(net, act_type="tanh", name="act1")
    net = nv.sym.FullyConnected(net, num_hidden=3, name="fc2")
    return nv.sym.SoftmaxOutput(net, name="softmax")


def _data(steps: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(3)
    x = rng.normal(size=(steps * BATCH, DIM)).astype(np.float32)
    return x, rng.integers(0, 3, steps * BATCH).astype(np.float32)


def _module(kvstore: object) -> nv.mod.Module:
    mod = nv.mod.Module(_mlp())
    mod.bind(data_shapes=[("data", (BATCH, DIM))], label_shapes=[("softmax_label", (BATCH,))])
    nv.random.seed(7)
    mod.init_params(nv.init.Uniform(0.5))
    mod.init_optimizer(
        kvstore=kvstore,
        optimizer="sgd",
        optimizer_params={"learning_rate": LR, "momentum": MOM},
    )
    return mod


def _train_against_numpy(mod: nv.mod.Module, steps: int = 3) -> dict[str, np.ndarray]:
    """Run `steps` updates; each one is checked against SGD with momentum in NumPy
    (weight decay 0, rescale_grad 1/batch) on the gradient the executor computed."""
    x, y = _data(steps)
    w = {n: v.asnumpy() for n, v in mod.get_params()[0].items()}
    mom = {n: np.zeros_like(v) for n, v in w.items()}
    for s in range(steps):
        sl = slice(s * BATCH, (s + 1) * BATCH)
        batch = nv.io.DataBatch([nv.nd.array(x[sl])], [nv.nd.array(y[sl])])
        mod.forward(batch, is_train=True)
        mod.backward()
        grads = {n: mod._exec_group.execs[0].grad_dict[n].asnumpy() for n in w}
        mod.update()
        for n in w:
            mom[n] = MOM * mom[n] - LR * grads[n] / BATCH
            w[n] = w[n] + mom[n]
        got = {n: v.asnumpy() for n, v in mod.get_params()[0].items()}
        for n in w:
            np.testing.assert_allclose(got[n], w[n], rtol=1e-5, atol=1e-6, err_msg=f"{n} step {s}")
    return w


def test_a_kvstore_object_runs_the_optimizer_in_the_store() -> None:
    kv = nv.kv.create("local")
    mod = _module(kv)
    assert mod._kvstore is kv
    assert mod._update_on_kvstore
    assert sorted(kv._store) == sorted(mod._param_names)  # one str key per parameter
    w = _train_against_numpy(mod)
    out = nv.nd.empty(w["fc1_weight"].shape)
    kv.pull("fc1_weight", out=out)  # the store holds the same weights
    np.testing.assert_allclose(out.asnumpy(), w["fc1_weight"], rtol=1e-5, atol=1e-6)


def test_update_on_kvstore_off_sums_through_the_store_and_updates_in_the_module(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MXNET_UPDATE_ON_KVSTORE", "0")
    kv = nv.kv.create("device")
    mod = _module(kv)
    assert mod._kvstore is kv
    assert not mod._update_on_kvstore
    assert mod._updater is not None
    assert kv._updater is None
    _train_against_numpy(mod)


@pytest.mark.parametrize("name", ["local", "device", None])
def test_one_device_needs_no_store_for_local_types(name: str | None) -> None:
    mod = _module(name)
    assert mod._kvstore is None
    assert not mod._update_on_kvstore
    _train_against_numpy(mod, steps=2)


def test_store_choice_follows_mxnet(monkeypatch: pytest.MonkeyPatch) -> None:
    params = {"w": nv.nd.zeros((2, 2))}
    kv, on_kv = kvstore_util.create_kvstore("local", 2, params)  # two devices: a store
    assert kv.type == "local"
    assert on_kv
    huge = {"w": SimpleNamespace(shape=(4097, 4097))}  # only the size is read
    assert kvstore_util.create_kvstore("local", 2, huge)[1] is False
    monkeypatch.setenv("MXNET_UPDATE_ON_KVSTORE", "0")
    assert kvstore_util.create_kvstore(nv.kv.create("local"), 1, params)[1] is False
    monkeypatch.setenv("MXNET_UPDATE_ON_KVSTORE", "yes")
    with pytest.raises(ParamError, match="MXNET_UPDATE_ON_KVSTORE must be 0 or 1"):
        kvstore_util.create_kvstore("local", 1, params)


def test_bad_kvstore_arguments_raise_named_errors() -> None:
    with pytest.raises(ParamError, match=r"Module\.init_optimizer: kvstore must be"):
        _module(3)
    with pytest.raises(NNVMError, match="dist_async"):
        _module("dist_async")
    kv = nv.kv.create("local")
    kv.init(0, nv.nd.zeros((1,)))  # int keys already: the Module's str keys cannot mix
    with pytest.raises(NNVMError, match="mixed key types"):
        _module(kv)


def test_optimizer_states_go_through_the_store(tmp_path) -> None:  # type: ignore[no-untyped-def]
    kv = nv.kv.create("local")
    mod = _module(kv)
    _train_against_numpy(mod, steps=1)
    fname = str(tmp_path / "opt.states")
    mod.save_optimizer_states(fname)
    other = _module(nv.kv.create("local"))
    other.load_optimizer_states(fname)
    want = kv._updater.states
    got = other._kvstore._updater.states
    assert sorted(got) == sorted(want) == sorted(mod._param_names)
    for k in want:
        np.testing.assert_array_equal(got[k].asnumpy(), want[k].asnumpy())


def test_rescale_grad_of_a_given_optimizer_is_checked() -> None:
    mod = nv.mod.Module(_mlp())
    mod.bind(data_shapes=[("data", (BATCH, DIM))], label_shapes=[("softmax_label", (BATCH,))])
    mod.init_params(nv.init.Uniform(0.5))
    with pytest.warns(UserWarning, match="rescale_grad"):
        mod.init_optimizer(kvstore=None, optimizer=nv.optimizer.SGD(learning_rate=0.1))


def _two_device_module(kvstore: object, **module_kw: object) -> nv.mod.Module:
    mod = nv.mod.Module(_mlp(), context=[nv.cpu(0), nv.cpu(1)], **module_kw)
    mod.bind(data_shapes=[("data", (BATCH, DIM))], label_shapes=[("softmax_label", (BATCH,))])
    nv.random.seed(7)
    mod.init_params(nv.init.Uniform(0.5))
    mod.init_optimizer(kvstore=kvstore, optimizer="sgd", optimizer_params={"learning_rate": LR})
    return mod


def _one_step(mod: nv.mod.Module) -> dict[str, np.ndarray]:
    x, y = _data(1)
    mod.forward(nv.io.DataBatch([nv.nd.array(x)], [nv.nd.array(y)]), is_train=True)
    mod.backward()
    mod.update()
    return {n: v.asnumpy() for n, v in mod.get_params()[0].items()}


def test_compression_params_reach_the_store() -> None:
    """2bit compression sends only +-threshold: with a threshold above every gradient
    nothing is sent, so the weights stay; without compression they move."""
    start = {n: v.asnumpy() for n, v in _two_device_module("device").get_params()[0].items()}
    moved = _one_step(_two_device_module("device"))
    frozen = _one_step(
        _two_device_module("device", compression_params={"type": "2bit", "threshold": 1e3})
    )
    assert any(not np.allclose(moved[n], start[n]) for n in start)
    for n in start:
        np.testing.assert_array_equal(frozen[n], start[n], err_msg=n)


def test_a_registered_custom_store_object_is_accepted() -> None:
    """'teststore' (a KVStoreBase, no optimizer in the store) sums the devices' gradients;
    the Module then updates: the same weights as MXNet's 'device' store."""
    custom = _one_step(_two_device_module(nv.kv.create("teststore")))
    device = _one_step(_two_device_module("device"))
    for n in device:
        np.testing.assert_allclose(custom[n], device[n], rtol=1e-6, atol=1e-7, err_msg=n)
