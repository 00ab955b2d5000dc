"""Token counting for building a vocabulary (MXNet's `mx.contrib.text.utils`).

A corpus is a string of sequences (split on `seq_delim`) of tokens (split on
`token_delim`); empty pieces between repeated delimiters are not tokens."""

from __future__ import annotations

from collections import Counter


def count_tokens_from_str(
    source_str: str,
    token_delim: str = " ",
    seq_delim: str = "\n",
    to_lower: bool = False,
    counter_to_update: Counter | None = None,
) -> Counter:
    """Count the tokens of `source_str`, adding to `counter_to_update` when given.

    Returns the updated counter (the same object when one is given), so that a
    corpus read in pieces can be counted incrementally."""
    tokens = [
        token for seq in source_str.split(seq_delim) for token in seq.split(token_delim) if token
    ]
    if to_lower:
        tokens = [token.lower() for token in tokens]
    counter = Counter() if counter_to_update is None else counter_to_update
    counter.update(tokens)
    return counter


__all__ = ["count_tokens_from_str"]
