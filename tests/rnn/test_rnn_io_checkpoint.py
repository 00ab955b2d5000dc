"""nv.rnn's language-model data (encode_sentences, BucketSentenceIter) against hand-made
expectations, and the RNN checkpoints: saved unpacked per gate, loaded back packed, by the
fused cell or by its unfused twin."""

from __future__ import annotations

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy import rnn

SENTENCES = [[1, 2, 3], [4, 5], [6, 7, 8, 9], [1, 1], [2, 2, 2], [3] * 7, [5, 5, 5]]


def test_encode_sentences_builds_a_vocabulary_in_order_of_appearance():
    enc, vocab = rnn.encode_sentences([["a", "b", "c"], ["b", "d"], ["e", "a", "f"]])
    assert enc == [[0, 1, 2], [1, 3], [4, 0, 5]]
    assert vocab == {"\n": -1, "a": 0, "b": 1, "c": 2, "d": 3, "e": 4, "f": 5}
    enc, vocab = rnn.encode_sentences(
        [["a", "<eos>", "b"]], invalid_label=0, invalid_key="<eos>", start_label=1
    )
    assert enc == [[1, 0, 2]]
    assert vocab == {"<eos>": 0, "a": 1, "b": 2}


def test_encode_sentences_with_a_given_vocabulary():
    vocab = {"a": 3, "<unk>": 7}
    enc, out = rnn.encode_sentences([["a", "z"], ["q"]], vocab=vocab, unknown_token="<unk>")
    assert enc == [[3, 7], [7]]
    assert out == vocab
    enc, out = rnn.encode_sentences([["z", "a"]], vocab={"a": 3}, unknown_token="<unk>")
    assert enc == [[4, 3]]  # the unknown token joins at the next free index
    assert out == {"a": 3, "<unk>": 4}
    with pytest.raises(nv.NNVMError, match="token 'z' is not in the vocabulary"):
        rnn.encode_sentences([["a", "z"]], vocab={"a": 3})


def _batches(it):
    return [(b.bucket_key, b.data[0].asnumpy(), b.label[0].asnumpy(), b) for b in it]


def test_default_buckets_padding_labels_and_whole_batches():
    with pytest.warns(UserWarning, match="discarded 2 sentences longer than the largest"):
        it = rnn.BucketSentenceIter(SENTENCES, 2)
    # lengths 2 and 3 occur at least batch_size times; 4 and 7 do not
    assert it.buckets == [2, 3]
    assert it.default_bucket_key == 3
    assert it.provide_data == [("data", (2, 3))]
    assert it.provide_label == [("softmax_label", (2, 3))]
    batches = _batches(it)
    assert sorted(key for key, *_ in batches) == [2, 3]  # bucket 3 has 3 rows: 1 batch
    seen = []
    for key, data, label, batch in batches:
        assert data.shape == label.shape == (2, key)
        assert data.dtype == np.float32
        np.testing.assert_array_equal(label[:, :-1], data[:, 1:])
        np.testing.assert_array_equal(label[:, -1], [-1, -1])
        assert batch.pad == 0
        assert batch.provide_data == [("data", (2, key))]
        seen += [tuple(r) for r in data.astype(int)]
    assert set(seen) <= {(1, 2, 3), (4, 5), (1, 1), (2, 2, 2), (5, 5, 5)}
    it.reset()
    assert len(_batches(it)) == 2


def test_explicit_buckets_tn_layout_dtype_and_padding_value():
    with pytest.warns(UserWarning, match="discarded 1 sentences"):
        it = rnn.BucketSentenceIter(
            SENTENCES, 2, buckets=[5, 3], invalid_label=0, dtype="int32", layout="TN"
        )
    assert it.buckets == [3, 5]
    assert it.provide_data == [("data", (5, 2))]
    assert np.dtype(it.provide_data[0].dtype) == np.int32
    rows = []
    for key, data, label, _ in _batches(it):
        assert key == 3  # bucket 5 holds one sentence: no whole batch
        assert data.shape == (3, 2)
        assert data.dtype == np.int32
        np.testing.assert_array_equal(label[:-1], data[1:])
        np.testing.assert_array_equal(label[-1], [0, 0])
        rows += [tuple(c) for c in data.T]
    # 5 sentences of length <= 3 padded with 0, two batches: one sentence left out
    padded = {(1, 2, 3), (4, 5, 0), (1, 1, 0), (2, 2, 2), (5, 5, 5)}
    assert len(rows) == 4
    assert set(rows) <= padded


def test_a_layout_with_more_axes_batches_as_its_first_two():
    it = rnn.BucketSentenceIter(SENTENCES, 2, buckets=[3], layout="NTC")
    assert it.major_axis == 0
    assert it.provide_data == [("data", (2, 3))]


def test_bad_arguments():
    with pytest.raises(nv.NNVMError, match="layout must start with 'NT' or 'TN'"):
        rnn.BucketSentenceIter(SENTENCES, 2, buckets=[3], layout="NC")
    with pytest.raises(nv.NNVMError, match="no bucket"):
        rnn.BucketSentenceIter([[1, 2], [1, 2, 3]], 2)


def _fused_params(cell, num_input, seed=0):
    rng = np.random.default_rng(seed)
    size = cell._total(num_input)
    return {cell._parameter.name: nv.nd.array(rng.normal(size=size).astype(np.float32))}


def test_rnn_checkpoint_is_unpacked_on_disk_and_packed_on_load(tmp_path):
    fused = rnn.FusedRNNCell(4, num_layers=2, mode="lstm", prefix="lstm_")
    sym, _ = fused.unroll(3, nv.sym.Variable("data"), merge_outputs=True)
    args = _fused_params(fused, num_input=5)
    prefix = str(tmp_path / "model")
    rnn.save_rnn_checkpoint(fused, prefix, 7, sym, args, {})
    on_disk = nv.nd.load(f"{prefix}-0007.params")
    assert "arg:lstm_parameters" not in on_disk
    assert on_disk["arg:lstm_l1_h2h_f_weight"].shape == (4, 4)
    assert on_disk["arg:lstm_l0_i2h_o_bias"].shape == (4,)
    _, loaded, aux = rnn.load_rnn_checkpoint([fused], prefix, 7)
    assert aux == {}
    np.testing.assert_array_equal(
        loaded["lstm_parameters"].asnumpy(), args["lstm_parameters"].asnumpy()
    )
    # the unfused cells read the same file: gate j is rows j*H..(j+1)*H of i2h_weight
    stack = fused.unfuse()
    _, unfused, _ = rnn.load_rnn_checkpoint(stack, prefix, 7)
    i2h = unfused["lstm_l1_i2h_weight"].asnumpy()
    np.testing.assert_array_equal(i2h[4:8], on_disk["arg:lstm_l1_i2h_f_weight"].asnumpy())
    assert unfused["lstm_l0_i2h_weight"].shape == (16, 5)


def test_do_rnn_checkpoint_saves_every_period_epochs(tmp_path):
    cell = rnn.GRUCell(3, prefix="g_")
    sym, _ = cell.unroll(2, nv.sym.Variable("data"), merge_outputs=True)
    rng = np.random.default_rng(1)
    args = {
        "g_i2h_weight": nv.nd.array(rng.normal(size=(9, 2))),
        "g_i2h_bias": nv.nd.array(rng.normal(size=(9,))),
        "g_h2h_weight": nv.nd.array(rng.normal(size=(9, 3))),
        "g_h2h_bias": nv.nd.array(rng.normal(size=(9,))),
    }
    callback = rnn.do_rnn_checkpoint(cell, str(tmp_path / "g"), period=2)
    for epoch in range(4):
        callback(epoch, sym, args, {})
    assert sorted(p.name for p in tmp_path.glob("*.params")) == ["g-0002.params", "g-0004.params"]
    on_disk = nv.nd.load(str(tmp_path / "g-0002.params"))
    np.testing.assert_array_equal(
        on_disk["arg:g_i2h_z_weight"].asnumpy(), args["g_i2h_weight"].asnumpy()[3:6]
    )
    _, loaded, _ = rnn.load_rnn_checkpoint(cell, str(tmp_path / "g"), 4)
    for name, value in args.items():
        np.testing.assert_array_equal(loaded[name].asnumpy(), value.asnumpy())
