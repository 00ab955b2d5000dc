"""BucketingModule.save_checkpoint / load / load_dict / save_params / load_params.

The files are MXNet 1.9.1's layout (checked by hand against MXNet in both directions):
prefix-%04d.params, prefix-<key>-symbol.json per bound bucket, prefix.buckets (int32
keys). References: nd.load / sym.load of the files, and the saving module's outputs.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy.base import NNVMError, ParamError

nd = nv.nd


def _sym_gen(key: int) -> tuple[nv.sym.Symbol, tuple[str], tuple[str]]:
    """Sequences of length `key`: a per-step FC, averaged over the steps, then softmax."""
    net = nv.sym.FullyConnected(nv.sym.Variable("data"), num_hidden=3, flatten=False, name="fc")
    net = nv.sym.mean(net, axis=1)
    return nv.sym.SoftmaxOutput(net, name="softmax"), ("data",), ("softmax_label",)


def _batch(key: int) -> nv.io.DataBatch:
    x = np.arange(2 * key * 4, dtype=np.float32).reshape(2, key, 4) / 10
    return nv.io.DataBatch(
        [nd.array(x)],
        [nd.array([0, 2])],
        bucket_key=key,
        provide_data=[("data", (2, key, 4))],
        provide_label=[("softmax_label", (2,))],
    )


def _bound(keys: tuple[int, ...] = (3,)) -> nv.mod.BucketingModule:
    mod = nv.mod.BucketingModule(_sym_gen, default_bucket_key=4)
    mod.bind([("data", (2, 4, 4))], [("softmax_label", (2,))])
    mod.init_params(nv.init.Uniform(0.5))
    for key in keys:
        mod.forward(_batch(key), is_train=False)
    return mod


def _outputs(mod: nv.mod.BucketingModule, key: int) -> np.ndarray:
    mod.forward(_batch(key), is_train=False)
    return mod.get_outputs()[0].asnumpy()


def test_save_checkpoint_writes_mxnets_files(tmp_path) -> None:
    mod = _bound(keys=(3, 5))
    prefix = str(tmp_path / "bk")
    mod.save_checkpoint(prefix, 7)
    assert sorted(os.listdir(tmp_path)) == [
        "bk-0007.params",
        "bk-3-symbol.json",
        "bk-4-symbol.json",
        "bk-5-symbol.json",
        "bk.buckets",
    ]
    (keys,) = nd.load(f"{prefix}.buckets")
    assert keys.dtype == np.int32
    assert sorted(keys.asnumpy().tolist()) == [3, 4, 5]
    saved = nd.load(f"{prefix}-0007.params")
    arg, _ = mod.get_params()
    assert sorted(saved) == sorted(f"arg:{n}" for n in arg)
    for n, v in arg.items():
        np.testing.assert_array_equal(saved[f"arg:{n}"].asnumpy(), v.asnumpy())
    symbol = nv.sym.load(f"{prefix}-5-symbol.json")
    assert symbol.list_arguments() == _sym_gen(5)[0].list_arguments()


def test_load_binds_with_the_saved_parameters_for_every_bucket(tmp_path) -> None:
    mod = _bound(keys=(3,))
    prefix = str(tmp_path / "bk")
    mod.save_checkpoint(prefix, 1)
    loaded = nv.mod.BucketingModule.load(prefix, 1, sym_gen=_sym_gen, default_bucket_key=4)
    assert loaded.params_initialized
    assert not loaded.binded
    loaded.bind([("data", (2, 4, 4))], [("softmax_label", (2,))], for_training=False)
    want, _ = mod.get_params()
    got, _ = loaded.get_params()
    for n in want:
        np.testing.assert_array_equal(got[n].asnumpy(), want[n].asnumpy())
    for key in (4, 3, 6):  # saved buckets and a new one share the loaded weights
        np.testing.assert_allclose(_outputs(loaded, key), _outputs(mod, key), rtol=1e-6)


def test_load_dict_builds_buckets_from_symbols_and_shared_params() -> None:
    mod = _bound()
    arg, aux = mod.get_params()
    loaded = nv.mod.BucketingModule.load_dict(
        {3: _sym_gen(3)[0], 4: _sym_gen(4)[0]},
        sym_gen=_sym_gen,
        default_bucket_key=4,
        arg_params=arg,
        aux_params=aux,
    )
    loaded.bind([("data", (2, 4, 4))], [("softmax_label", (2,))], for_training=False)
    for key in (3, 4):
        np.testing.assert_allclose(_outputs(loaded, key), _outputs(mod, key), rtol=1e-6)


def test_save_and_load_params_share_the_weights_of_all_buckets(tmp_path) -> None:
    mod = _bound(keys=(3,))
    fname = str(tmp_path / "bk.params")
    mod.save_params(fname)
    other = nv.mod.BucketingModule(_sym_gen, default_bucket_key=4)
    other.bind([("data", (2, 4, 4))], [("softmax_label", (2,))], for_training=False)
    other.init_params(nv.init.Zero())
    other.load_params(fname)
    for key in (3, 4):
        np.testing.assert_allclose(_outputs(other, key), _outputs(mod, key), rtol=1e-6)


def test_bad_checkpoint_use_gives_named_errors(tmp_path) -> None:
    prefix = str(tmp_path / "bk")
    with pytest.raises(NNVMError, match=r"BucketingModule.save_checkpoint: nothing is bound"):
        nv.mod.BucketingModule(_sym_gen, default_bucket_key=4).save_checkpoint(prefix, 0)
    named = nv.mod.BucketingModule(lambda key: _sym_gen(4), default_bucket_key="long")
    named.bind([("data", (2, 4, 4))], [("softmax_label", (2,))])
    named.init_params()
    with pytest.raises(ParamError, match=r"bucket keys \['long'\] are not integers"):
        named.save_checkpoint(prefix, 0)
    assert not os.listdir(tmp_path)  # nothing half-written
    _bound().save_checkpoint(prefix, 0)
    with pytest.raises(ParamError, match=r"BucketingModule.load: sym_gen is required"):
        nv.mod.BucketingModule.load(prefix, 0, default_bucket_key=4)
    with pytest.raises(ParamError, match=r"BucketingModule.load: default_bucket_key is required"):
        nv.mod.BucketingModule.load(prefix, 0, sym_gen=_sym_gen)
    with pytest.raises(ParamError, match=r"BucketingModule.load_dict: arg_params is required"):
        nv.mod.BucketingModule.load_dict({4: _sym_gen(4)[0]}, _sym_gen, 4, aux_params={})
