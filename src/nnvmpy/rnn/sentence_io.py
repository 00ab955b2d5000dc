"""Data for language models (mxnet.rnn.encode_sentences, mxnet.rnn.BucketSentenceIter).

`encode_sentences` turns token lists into integer lists with a vocabulary.
`BucketSentenceIter` groups the encoded sentences by length into buckets (each padded
with `invalid_label` to its bucket's length), so a BucketingModule can bind one unrolled
network per bucket; the label of each step is the next token, the last step's is
`invalid_label`. Batches are whole: a bucket's remainder smaller than a batch is left
out, as are sentences longer than the largest bucket.
"""

from __future__ import annotations

import random
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..base import ParamError
from ..io import DataBatch, DataDesc, DataIter


def encode_sentences(
    sentences: Sequence[Sequence[str]],
    vocab: dict[str, int] | None = None,
    invalid_label: int = -1,
    invalid_key: str = "\n",
    start_label: int = 0,
    unknown_token: str | None = None,
) -> tuple[list[list[int]], dict[str, int]]:
    """(encoded sentences, vocabulary). Without `vocab` one is built: `invalid_key` ->
    `invalid_label`, then each new token the next index from `start_label`. With `vocab`,
    a token it lacks maps to `unknown_token` (added to the vocabulary at the next free
    index if absent); without an unknown_token such a token is an error."""
    new_vocab = vocab is None
    vocab = {invalid_key: invalid_label} if vocab is None else dict(vocab)
    used = [v for v in vocab.values() if v != invalid_label]
    next_idx = max([start_label - 1, *used]) + 1
    encoded = []
    for sent in sentences:
        codes = []
        for word in sent:
            if word not in vocab:
                if not new_vocab:
                    if unknown_token is None:
                        raise ParamError(
                            f"encode_sentences: token {word!r} is not in the vocabulary "
                            "(pass unknown_token= to map such tokens to one index)"
                        )
                    word = unknown_token
                if word not in vocab:
                    vocab[word] = next_idx
                    next_idx += 1
            codes.append(vocab[word])
        encoded.append(codes)
    return encoded, vocab


class BucketSentenceIter(DataIter):
    """Batches of equal-length (bucketed, padded) sentences; label = the next token.

    Args:
        sentences: encoded sentences (lists of ints).
        batch_size: sentences per batch.
        buckets: the bucket lengths; by default every length that at least batch_size
            sentences have.
        invalid_label: the padding value, and the label after a sentence's last token.
        data_name, label_name: the names in provide_data / provide_label.
        dtype: the arrays' dtype.
        layout: 'NT' (batch, time) or 'TN' (time, batch); further letters name the
            axes a model adds later (MXNet's examples pass 'NTC'): the batches are 2-D.
    """

    def __init__(
        self,
        sentences: Sequence[Sequence[int]],
        batch_size: int,
        buckets: Sequence[int] | None = None,
        invalid_label: int = -1,
        data_name: str = "data",
        label_name: str = "softmax_label",
        dtype: Any = "float32",
        layout: str = "NT",
    ) -> None:
        super().__init__(batch_size)
        if batch_size < 1:
            raise ParamError(f"BucketSentenceIter: batch_size must be >= 1, got {batch_size}")
        if not isinstance(layout, str) or layout[:2] not in ("NT", "TN"):
            raise ParamError(
                f"BucketSentenceIter: layout must start with 'NT' or 'TN', got {layout!r}"
            )
        if buckets is None:
            counts = np.bincount([len(s) for s in sentences], minlength=1)
            buckets = [n for n, count in enumerate(counts) if count >= batch_size]
        buckets = sorted(int(b) for b in buckets)
        if not buckets:
            raise ParamError(
                "BucketSentenceIter: no bucket: no sentence length occurs batch_size "
                f"({batch_size}) times; pass buckets="
            )
        rows: list[list[np.ndarray]] = [[] for _ in buckets]
        discarded = 0
        for sent in sentences:
            i = int(np.searchsorted(buckets, len(sent)))
            if i == len(buckets):
                discarded += 1
                continue
            row = np.full((buckets[i],), invalid_label, dtype=dtype)
            row[: len(sent)] = sent
            rows[i].append(row)
        if discarded:
            warnings.warn(
                f"BucketSentenceIter: discarded {discarded} sentences longer than the "
                f"largest bucket ({buckets[-1]})",
                stacklevel=2,
            )
        self.data = [np.asarray(r, dtype=dtype).reshape(len(r), b) for r, b in zip(rows, buckets)]
        self.buckets = buckets
        self.data_name, self.label_name = data_name, label_name
        self.dtype = dtype
        self.invalid_label = invalid_label
        self.layout = layout
        self.major_axis = layout.find("N")
        self.default_bucket_key = max(buckets)
        self.provide_data = [self._desc(data_name, self.default_bucket_key)]
        self.provide_label = [self._desc(label_name, self.default_bucket_key)]
        self.idx = [
            (i, j)
            for i, arr in enumerate(self.data)
            for j in range(0, len(arr) - batch_size + 1, batch_size)
        ]
        self.curr_idx = 0
        self.nddata: list[Any] = []
        self.ndlabel: list[Any] = []
        self.reset()

    def _desc(self, name: str, length: int) -> DataDesc:
        shape = (self.batch_size, length) if self.major_axis == 0 else (length, self.batch_size)
        return DataDesc(name, shape, np.dtype(self.dtype), self.layout)

    def reset(self) -> None:
        """Shuffle the batch order and the sentences within each bucket."""
        from nnvmpy import nd

        self.curr_idx = 0
        random.shuffle(self.idx)  # Python's and NumPy's global RNGs, as MXNet (seeded by tests)
        for arr in self.data:
            np.random.shuffle(arr)  # noqa: NPY002
        self.nddata, self.ndlabel = [], []
        for arr in self.data:
            label = np.full_like(arr, self.invalid_label)
            label[:, :-1] = arr[:, 1:]
            self.nddata.append(nd.array(arr, dtype=self.dtype))
            self.ndlabel.append(nd.array(label, dtype=self.dtype))

    def next(self) -> DataBatch:
        if self.curr_idx == len(self.idx):
            raise StopIteration
        i, j = self.idx[self.curr_idx]
        self.curr_idx += 1
        data = self.nddata[i][j : j + self.batch_size]
        label = self.ndlabel[i][j : j + self.batch_size]
        if self.major_axis == 1:
            data, label = data.T, label.T
        return DataBatch(
            [data],
            [label],
            pad=0,
            bucket_key=self.buckets[i],
            provide_data=[self._desc(self.data_name, self.buckets[i])],
            provide_label=[self._desc(self.label_name, self.buckets[i])],
        )
