"""nv.contrib.text.utils and .vocab: token counts and the Vocabulary's indexing, checked
against counts and orders worked out by hand."""

from __future__ import annotations

from collections import Counter

import pytest

from nnvmpy.base import NNVMError
from nnvmpy.contrib.text import utils, vocab

COUNTER = Counter({"x": 4, "b": 2, "a": 2, "z": 1, "y": 1})


def test_count_tokens_skips_empty_pieces_and_lowers_on_request():
    source = "  The cat|the  dog ||"
    assert utils.count_tokens_from_str(source, " ", "|") == Counter(
        {"The": 1, "the": 1, "cat": 1, "dog": 1}
    )
    assert utils.count_tokens_from_str(source, " ", "|", to_lower=True) == Counter(
        {"the": 2, "cat": 1, "dog": 1}
    )


def test_count_tokens_updates_the_given_counter_in_place():
    counter = Counter({"cat": 3})
    out = utils.count_tokens_from_str("cat dog", counter_to_update=counter)
    assert out is counter
    assert counter == Counter({"cat": 4, "dog": 1})


def test_order_is_unknown_reserved_then_frequency_then_token():
    v = vocab.Vocabulary(COUNTER, unknown_token="<unk>", reserved_tokens=["<pad>"])
    # x(4); a, b tie at 2 -> sorted; y, z tie at 1 -> sorted
    assert v.idx_to_token == ["<unk>", "<pad>", "x", "a", "b", "y", "z"]
    assert v.token_to_idx == {t: i for i, t in enumerate(v.idx_to_token)}
    assert len(v) == 7
    assert v.unknown_token == "<unk>"
    assert v.reserved_tokens == ["<pad>"]


def test_min_freq_and_most_freq_count_ignore_reserved_and_unknown():
    v = vocab.Vocabulary(COUNTER, most_freq_count=2, min_freq=2, reserved_tokens=["x"])
    # x is reserved (not counted): the 2 most frequent others with freq >= 2 are a, b
    assert v.idx_to_token == ["<unk>", "x", "a", "b"]
    v = vocab.Vocabulary(COUNTER, min_freq=2, unknown_token="a")
    assert v.idx_to_token == ["a", "x", "b"]
    assert vocab.Vocabulary(COUNTER, min_freq=5).idx_to_token == ["<unk>"]
    assert vocab.Vocabulary().idx_to_token == ["<unk>"]
    assert vocab.Vocabulary().reserved_tokens is None


def test_tuple_tokens():
    v = vocab.Vocabulary(Counter({("b", 1): 1, ("a", 2): 1}), unknown_token=("<unk>", 0))
    assert v.idx_to_token == [("<unk>", 0), ("a", 2), ("b", 1)]
    assert v.to_indices(("b", 1)) == 2


def test_to_indices_and_to_tokens():
    v = vocab.Vocabulary(COUNTER)
    assert v.to_indices("x") == 1
    assert v.to_indices(["b", "nope", "x"]) == [3, 0, 1]
    assert v.to_tokens(2) == "a"
    assert v.to_tokens([0, 5]) == ["<unk>", "z"]


@pytest.mark.parametrize("bad", [6, -1, "1"])
def test_to_tokens_rejects_an_index_outside_the_vocabulary(bad):
    v = vocab.Vocabulary(COUNTER)
    with pytest.raises(NNVMError, match="token index"):
        v.to_tokens(bad)
    with pytest.raises(ValueError):
        v.to_tokens([0, bad])


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"min_freq": 0}, "min_freq"),
        ({"reserved_tokens": ["p", "p"]}, "distinct"),
        ({"reserved_tokens": ["<unk>"]}, "unknown_token"),
    ],
)
def test_bad_arguments_are_nnvm_errors_and_assertion_errors(kwargs, message):
    with pytest.raises(NNVMError, match=message) as err:
        vocab.Vocabulary(COUNTER, **kwargs)
    assert isinstance(err.value, AssertionError)
