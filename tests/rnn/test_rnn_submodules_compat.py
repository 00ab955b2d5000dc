"""MXNet's import paths inside mxnet.rnn (`mxnet.rnn.io`, `mxnet.rnn.rnn`, `mxnet.rnn.rnn_cell`)
reach the same helpers as the flat `mxnet.rnn` namespace; code written against MXNet 1.x
imports them either way."""

from __future__ import annotations

import importlib

import pytest

from nnvmpy import rnn


@pytest.mark.parametrize(
    ("module", "names"),
    [
        ("nnvmpy.rnn.io", ["encode_sentences", "BucketSentenceIter"]),
        (
            "nnvmpy.rnn.rnn",
            ["save_rnn_checkpoint", "load_rnn_checkpoint", "do_rnn_checkpoint", "BaseRNNCell"],
        ),
        ("nnvmpy.rnn.rnn_cell", ["RNNCell", "LSTMCell", "GRUCell", "RNNParams"]),
    ],
)
def test_submodule_path_reaches_the_flat_names(module: str, names: list[str]) -> None:
    mod = importlib.import_module(module)
    for name in names:
        assert getattr(mod, name) is getattr(rnn, name)


def test_rnn_rnn_carries_the_plain_checkpoints_too() -> None:
    from nnvmpy import model

    assert rnn.rnn.save_checkpoint is model.save_checkpoint
    assert rnn.rnn.load_checkpoint is model.load_checkpoint


def test_encode_sentences_through_rnn_io() -> None:
    # real MXNet 1.9.1: mx.rnn.io.encode_sentences([['a','b','c'],['b','c','d']],
    # invalid_label=-1) -> ([[0, 1, 2], [1, 2, 3]], {'\n': -1, 'a': 0, 'b': 1, 'c': 2, 'd': 3})
    enc, vocab = rnn.io.encode_sentences([["a", "b", "c"], ["b", "c", "d"]], invalid_label=-1)
    assert enc == [[0, 1, 2], [1, 2, 3]]
    assert vocab == {"\n": -1, "a": 0, "b": 1, "c": 2, "d": 3}
