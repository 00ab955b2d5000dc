"""Module.save_params / load_params / prepare (MXNet's BaseModule API).

References are independent: the .params file is read back with nd.load and compared key by
key with get_params(); a loaded module's outputs are compared with the module that saved.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy.base import NNVMError, ParamError
from nnvmpy.module.module import MissingParamError

nd = nv.nd


def _net() -> nv.sym.Symbol:
    """FC -> BatchNorm (aux states moving_mean/var) -> FC -> softmax."""
    net = nv.sym.FullyConnected(nv.sym.Variable("data"), num_hidden=6, name="fc1")
    net = nv.sym.BatchNorm(net, name="bn")
    net = nv.sym.FullyConnected(net, num_hidden=3, name="fc2")
    return nv.sym.SoftmaxOutput(net, name="softmax")


def _bound(init: float = 0.5, for_training: bool = True) -> nv.mod.Module:
    mod = nv.mod.Module(_net())
    mod.bind([("data", (4, 5))], [("softmax_label", (4,))], for_training=for_training)
    mod.init_params(nv.init.Uniform(init))
    return mod


def _batch(seed: int = 0) -> nv.io.DataBatch:
    x = np.random.default_rng(seed).normal(size=(4, 5)).astype(np.float32)
    return nv.io.DataBatch([nd.array(x)], [nd.array([0, 1, 2, 1])])


def _trained() -> nv.mod.Module:
    """A module whose aux states moved away from their initial values."""
    mod = _bound()
    mod.init_optimizer(optimizer_params={"learning_rate": 0.1})
    for seed in range(3):
        mod.forward_backward(_batch(seed))
        mod.update()
    return mod


def test_save_params_writes_arg_and_aux_keys_that_nd_load_reads(tmp_path) -> None:
    mod = _trained()
    fname = str(tmp_path / "net.params")
    mod.save_params(fname)
    saved = nd.load(fname)
    arg, aux = mod.get_params()
    assert sorted(saved) == sorted([f"arg:{n}" for n in arg] + [f"aux:{n}" for n in aux])
    assert {"aux:bn_moving_mean", "aux:bn_moving_var"} <= set(saved)
    for name, value in {**arg, **aux}.items():
        key = ("arg:" if name in arg else "aux:") + name
        np.testing.assert_array_equal(saved[key].asnumpy(), value.asnumpy())
    assert not np.allclose(aux["bn_moving_mean"].asnumpy(), 0.0)  # trained: a real round trip


def test_load_params_round_trips_into_a_fresh_module(tmp_path) -> None:
    trained = _trained()
    fname = str(tmp_path / "net.params")
    trained.save_params(fname)
    fresh = _bound(init=0.01, for_training=False)
    fresh.load_params(fname)
    want_arg, want_aux = trained.get_params()
    got_arg, got_aux = fresh.get_params()
    for want, got in ((want_arg, got_arg), (want_aux, got_aux)):
        assert sorted(got) == sorted(want)
        for n in want:
            np.testing.assert_array_equal(got[n].asnumpy(), want[n].asnumpy())
    batch = _batch(7)
    trained.forward(batch, is_train=False)
    fresh.forward(batch, is_train=False)
    np.testing.assert_allclose(
        fresh.get_outputs()[0].asnumpy(), trained.get_outputs()[0].asnumpy(), rtol=1e-5
    )


def test_load_params_reads_a_checkpoints_params_file(tmp_path) -> None:
    trained = _trained()
    prefix = str(tmp_path / "ck")
    trained.save_checkpoint(prefix, 2)  # the same 'arg:'/'aux:' format as save_params
    fresh = _bound(init=0.01)
    fresh.load_params(f"{prefix}-0002.params")
    np.testing.assert_array_equal(
        fresh.get_params()[1]["bn_moving_var"].asnumpy(),
        trained.get_params()[1]["bn_moving_var"].asnumpy(),
    )


def test_load_params_rejects_bad_files_and_missing_params(tmp_path) -> None:
    mod = _bound()
    bad = str(tmp_path / "bad.params")
    nd.save(bad, {"weights:fc1_weight": nd.ones((6, 5))})
    with pytest.raises(ParamError, match=r"'weights:fc1_weight' is not 'arg:<name>'") as err:
        mod.load_params(bad)
    assert isinstance(err.value, ValueError)  # MXNet raises ValueError("Invalid param file")
    nd.save(bad, [nd.ones((2,))])
    with pytest.raises(ParamError, match=r"holds a list"):
        mod.load_params(bad)
    partial = str(tmp_path / "partial.params")
    nd.save(partial, {"arg:fc1_weight": nd.ones((6, 5))})
    with pytest.raises(MissingParamError, match=r"is missing from the given params"):
        mod.load_params(partial)
    mod.forward(_batch(), is_train=False)  # still usable
    assert mod.get_outputs()[0].shape == (4, 3)


def test_save_and_load_params_need_a_bound_initialized_module(tmp_path) -> None:
    fname = str(tmp_path / "net.params")
    _bound().save_params(fname)
    with pytest.raises(NNVMError, match=r"Module.init_params: call bind\(\) first"):
        nv.mod.Module(_net()).load_params(fname)
    with pytest.raises(NNVMError, match=r"Module.get_params: call bind\(\) first"):
        nv.mod.Module(_net()).save_params(fname)


def test_prepare_is_a_checked_no_op_for_dense_parameters() -> None:
    mod = nv.mod.Module(_net())
    with pytest.raises(NNVMError, match=r"Module.prepare: call bind\(\) first"):
        mod.prepare(_batch())
    mod = _bound()
    before = {n: v.asnumpy().copy() for n, v in mod.get_params()[0].items()}
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning without sparse_row_id_fn
        mod.prepare(_batch())
    after = mod.get_params()[0]
    for n, v in before.items():
        np.testing.assert_array_equal(after[n].asnumpy(), v)
    calls: list[object] = []
    with pytest.warns(UserWarning, match=r"not updated in the KVStore"):
        mod.prepare(_batch(), sparse_row_id_fn=calls.append)
    assert calls == []  # as MXNet: not called without a KVStore that runs the optimizer


def test_prepare_calls_sparse_row_id_fn_when_the_kvstore_updates() -> None:
    mod = _bound()
    mod.init_optimizer(kvstore=nv.kv.create("local"))
    if not mod._update_on_kvstore:
        pytest.skip("this configuration does not update on the KVStore")
    batch = _batch()
    seen: list[object] = []

    def row_ids(b: object) -> dict[str, object]:
        seen.append(b)
        return {"fc1_weight": nd.array([0, 1])}

    with pytest.warns(UserWarning, match=r"'fc1_weight' is dense, not row_sparse"):
        mod.prepare(batch, sparse_row_id_fn=row_ids)
    assert seen == [batch]
    with pytest.raises(ParamError, match=r"names 'nope', which is not a parameter"):
        mod.prepare(batch, sparse_row_id_fn=lambda b: {"nope": nd.array([0])})
    with pytest.raises(ParamError, match=r"must return a dict"):
        mod.prepare(batch, sparse_row_id_fn=lambda b: [0])
