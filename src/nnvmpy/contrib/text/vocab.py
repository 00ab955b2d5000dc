"""Vocabulary: a token <-> index mapping built from token counts (MXNet's
`mx.contrib.text.vocab.Vocabulary`).

Index 0 is the unknown token (every token not held maps to it), then the reserved
tokens in the order given, then the counted tokens by decreasing frequency, ties by
increasing token order. Tokens may be any hashable, orderable values (strings, tuples).
"""

from __future__ import annotations

import operator
from collections import Counter
from collections.abc import Hashable, Sequence
from typing import Any

from .errors import TextArgumentError, UnknownTokenError


class Vocabulary:
    """Index the tokens of `counter` (a Counter of token -> frequency).

    most_freq_count: keep at most this many counted tokens (reserved tokens and the
    unknown token are not counted); None keeps all. min_freq: a counted token needs at
    least this frequency (>= 1). reserved_tokens: tokens indexed right after the unknown
    token whatever their count, e.g. padding; they must be distinct and differ from
    `unknown_token`.
    """

    def __init__(
        self,
        counter: Counter | None = None,
        most_freq_count: int | None = None,
        min_freq: int = 1,
        unknown_token: Hashable = "<unk>",
        reserved_tokens: Sequence[Hashable] | None = None,
    ) -> None:
        if min_freq < 1:
            raise TextArgumentError(f"Vocabulary: min_freq must be >= 1, got {min_freq}")
        if reserved_tokens is not None:
            reserved = list(reserved_tokens)
            if unknown_token in reserved:
                raise TextArgumentError(
                    f"Vocabulary: reserved_tokens must not contain unknown_token {unknown_token!r}"
                )
            if len(set(reserved)) != len(reserved):
                raise TextArgumentError(
                    f"Vocabulary: reserved_tokens must be distinct, got {reserved!r}"
                )
        self._unknown_token = unknown_token
        self._reserved_tokens = None if reserved_tokens is None else list(reserved_tokens)
        self._idx_to_token: list[Any] = [unknown_token, *(self._reserved_tokens or [])]
        self._token_to_idx = {token: idx for idx, token in enumerate(self._idx_to_token)}
        if counter is not None:
            self._index_counted(counter, most_freq_count, min_freq)

    def _index_counted(self, counter: Counter, most_freq_count: int | None, min_freq: int) -> None:
        by_freq = sorted(sorted(counter.items(), key=lambda kv: kv[0]), key=lambda kv: -kv[1])
        limit = len(by_freq) if most_freq_count is None else most_freq_count
        added = 0
        for token, freq in by_freq:
            if freq < min_freq or added >= limit:
                break
            if token in self._token_to_idx:
                continue
            self._token_to_idx[token] = len(self._idx_to_token)
            self._idx_to_token.append(token)
            added += 1

    def __len__(self) -> int:
        return len(self._idx_to_token)

    @property
    def token_to_idx(self) -> dict:
        """dict token -> index."""
        return self._token_to_idx

    @property
    def idx_to_token(self) -> list:
        """list index -> token."""
        return self._idx_to_token

    @property
    def unknown_token(self) -> Hashable:
        return self._unknown_token

    @property
    def reserved_tokens(self) -> list | None:
        return self._reserved_tokens

    def to_indices(self, tokens: Hashable | list) -> int | list[int]:
        """Index of a token, or list of indices of a list of tokens; unknown -> 0."""
        if isinstance(tokens, list):
            return [self._token_to_idx.get(token, 0) for token in tokens]
        return self._token_to_idx.get(tokens, 0)

    def to_tokens(self, indices: int | list[int]) -> Hashable | list:
        """Token at an index, or list of tokens at a list of indices."""
        if isinstance(indices, list):
            return [self._token_at(idx) for idx in indices]
        return self._token_at(indices)

    def _token_at(self, idx: int) -> Hashable:
        try:
            idx = operator.index(idx)  # ints and NumPy integers, not strings or floats
        except TypeError:
            pass
        if not isinstance(idx, int) or not 0 <= idx < len(self._idx_to_token):
            raise UnknownTokenError(
                f"Vocabulary: token index {idx!r} is not in [0, {len(self._idx_to_token)})"
            )
        return self._idx_to_token[idx]


__all__ = ["Vocabulary"]
