"""Token embeddings: a Vocabulary whose every index also has a vector (MXNet's
`mx.contrib.text.embedding`).

`idx_to_vec` is an NDArray (len(self), vec_len); row 0 is the unknown token's vector, the
one any token outside the indexing gets. An embedding is loaded from a text file of lines
`token<delim>v1<delim>v2...`; a line for the unknown token itself supplies its vector,
otherwise `init_unknown_vec(shape=vec_len)` does. Given a `vocabulary`, the embedding is
re-indexed to it: same tokens and indices, each row the loaded vector of that token (the
unknown vector when the file lacks it, and always for the vocabulary's unknown token).

Embeddings with published pre-trained files (GloVe, FastText, and classes a user adds
with `register`) are created by name with `create`; nnvmpy only reads them from a local
folder (`embedding_root/<namespace>/<file name>`), it downloads nothing unless a class
sets `repo_url`.
"""

from __future__ import annotations

import hashlib
import logging
import os
import warnings
from collections.abc import Callable, Hashable
from typing import Any

import numpy as np

from ... import ndarray as nd
from ...base import NNVMError, data_dir
from . import _pretrained_names
from .errors import (
    EmbeddingFileError,
    EmbeddingNumberError,
    TextArgumentError,
    UnknownEmbeddingError,
    UnknownTokenError,
    UnregisteredEmbeddingError,
)
from .vocab import Vocabulary

_REGISTRY: dict[str, type[_TokenEmbedding]] = {}


def register(embedding_cls: type) -> type:
    """Class decorator: make a `_TokenEmbedding` subclass creatable by its lower-cased
    class name (`create('glove')`) and list its pre-trained files."""
    if not (isinstance(embedding_cls, type) and issubclass(embedding_cls, _TokenEmbedding)):
        raise TextArgumentError(
            f"embedding.register: expected a _TokenEmbedding subclass, got {embedding_cls!r}"
        )
    _REGISTRY[embedding_cls.__name__.lower()] = embedding_cls
    return embedding_cls


def create(embedding_name: str, **kwargs: Any) -> _TokenEmbedding:
    """An instance of the registered embedding `embedding_name` built with `kwargs`."""
    return _registered(embedding_name, UnregisteredEmbeddingError)(**kwargs)


def get_pretrained_file_names(embedding_name: str | None = None) -> list[str] | dict:
    """The pre-trained file names of one registered embedding (a list), or of all of them
    (a dict name -> list) when `embedding_name` is None."""
    if embedding_name is None:
        return {name: list(cls.pretrained_file_name_sha1) for name, cls in _REGISTRY.items()}
    return list(_registered(embedding_name).pretrained_file_name_sha1)


def _registered(
    embedding_name: str, error: type[NNVMError] = UnknownEmbeddingError
) -> type[_TokenEmbedding]:
    cls = _REGISTRY.get(str(embedding_name).lower())
    if cls is None:
        raise error(
            f"embedding {embedding_name!r} is not registered; registered: {sorted(_REGISTRY)}"
        )
    return cls


class _TokenEmbedding(Vocabulary):
    """Base of the token embeddings: indexing (from Vocabulary) plus `idx_to_vec`.

    Subclasses with pre-trained files set `pretrained_file_name_sha1` (file name -> SHA-1
    hex digest, or None not to check) and `namespace` (their folder under the root)."""

    pretrained_file_name_sha1: dict[str, str | None] = {}
    namespace: str = ""
    #: base URL to fetch `<repo_url>/<namespace>/<file name>` from when not found locally
    repo_url: str | None = None

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._idx_to_vec: nd.NDArray | None = None

    @property
    def idx_to_vec(self) -> nd.NDArray | None:
        """NDArray (len(self), vec_len): row i is the vector of `idx_to_token[i]`."""
        return self._idx_to_vec

    @property
    def vec_len(self) -> int | None:
        return None if self._idx_to_vec is None else int(self._idx_to_vec.shape[1])

    # -- loading ----------------------------------------------------------------------
    def _load_embedding(
        self,
        pretrained_file_path: str,
        elem_delim: str,
        init_unknown_vec: Callable[..., Any] = nd.zeros,
        encoding: str = "utf8",
    ) -> None:
        """Index the tokens of a `token v1 v2 ...` file and set `idx_to_vec`.

        Lines whose vector has a single element (e.g. fastText's `count dim` header) and
        repeated tokens are skipped with a warning; a line without any value or with a
        vector length different from the first one is an EmbeddingFileError."""
        path = os.path.expanduser(pretrained_file_path)
        if not os.path.isfile(path):
            raise EmbeddingFileError(f"embedding: pre-trained file {path!r} does not exist")
        vectors: dict[str, list[float]] = {}
        unknown_vec: list[float] | None = None
        vec_len: int | None = None
        with open(path, encoding=encoding) as fin:
            for line_num, line in enumerate(fin, start=1):
                line = line.rstrip()
                if not line:
                    continue
                elems = line.split(elem_delim)
                where = f"embedding file {path!r}, line {line_num}"
                if len(elems) < 2:
                    raise EmbeddingFileError(
                        f"{where}: expected a token and its vector separated by "
                        f"{elem_delim!r}, got {line[:80]!r}"
                    )
                token, values = elems[0], _parse_floats(elems[1:], where)
                if len(values) == 1:
                    warnings.warn(
                        f"{where}: token {token!r} has a 1-element vector; "
                        "taken for a header line and skipped",
                        stacklevel=2,
                    )
                    continue
                if vec_len is None:
                    vec_len = len(values)
                elif len(values) != vec_len:
                    raise EmbeddingFileError(
                        f"{where}: vector of token {token!r} has {len(values)} elements, "
                        f"expected {vec_len} like the lines before"
                    )
                if token == self.unknown_token and unknown_vec is None:
                    unknown_vec = values
                elif token in vectors or token == self.unknown_token:
                    warnings.warn(
                        f"{where}: token {token!r} repeated; the first vector is kept", stacklevel=2
                    )
                else:
                    vectors[token] = values
        if vec_len is None:
            raise EmbeddingFileError(f"embedding file {path!r} holds no vector")
        for token in vectors:
            if token not in self._token_to_idx:
                self._token_to_idx[token] = len(self._idx_to_token)
                self._idx_to_token.append(token)
        unk = (
            np.asarray(unknown_vec, dtype=np.float32)
            if unknown_vec is not None
            else _as_numpy(init_unknown_vec(shape=vec_len)).reshape(vec_len)
        )
        table = np.empty((len(self._idx_to_token), vec_len), dtype=np.float32)
        for idx, token in enumerate(self._idx_to_token):
            table[idx] = vectors[token] if idx and token in vectors else unk
        self._idx_to_vec = nd.array(table)

    def _set_idx_to_vec_by_embeddings(
        self, token_embeddings: list[_TokenEmbedding], vocab_len: int, vocab_idx_to_token: list
    ) -> None:
        """Rows = the concatenation, per embedding, of each vocabulary token's vector; the
        vocabulary's unknown token (index 0) takes each embedding's unknown vector."""
        parts = []
        for embed in token_embeddings:
            if embed.idx_to_vec is None:
                raise TextArgumentError(f"embedding: {type(embed).__name__} has no vectors")
            vecs = embed.idx_to_vec.asnumpy()
            rows = [0] + [embed.token_to_idx.get(t, 0) for t in vocab_idx_to_token[1:vocab_len]]
            parts.append(vecs[np.asarray(rows, dtype=np.int64)])
        self._idx_to_vec = nd.array(np.concatenate(parts, axis=1).astype(np.float32))

    def _index_like(self, vocabulary: Vocabulary) -> None:
        """Take `vocabulary`'s tokens, indices, unknown and reserved tokens."""
        self._idx_to_token = list(vocabulary.idx_to_token)
        self._token_to_idx = dict(vocabulary.token_to_idx)
        self._unknown_token = vocabulary.unknown_token
        reserved = vocabulary.reserved_tokens
        self._reserved_tokens = None if reserved is None else list(reserved)

    def _build_embedding_for_vocabulary(self, vocabulary: Vocabulary | None) -> None:
        if vocabulary is None:
            return
        if not isinstance(vocabulary, Vocabulary):
            raise TextArgumentError(
                f"embedding: vocabulary must be a Vocabulary, got {type(vocabulary).__name__}"
            )
        self._set_idx_to_vec_by_embeddings([self], len(vocabulary), vocabulary.idx_to_token)
        self._index_like(vocabulary)

    # -- lookup and update ------------------------------------------------------------
    def get_vecs_by_tokens(
        self, tokens: Hashable | list, lower_case_backup: bool = False
    ) -> nd.NDArray:
        """Vector of a token (1-D) or vectors of a list of tokens (2-D). A token not held
        gets the unknown vector, unless `lower_case_backup` and its lower case is held."""
        single = not isinstance(tokens, list)
        batch = tokens if isinstance(tokens, list) else [tokens]
        indices = [self._index_of(t, lower_case_backup) for t in batch]
        vecs = nd.take(self._vectors(), nd.array(indices, dtype="int64"))
        return vecs[0] if single else vecs

    def _index_of(self, token: Hashable, lower_case_backup: bool) -> int:
        if token in self._token_to_idx:
            return self._token_to_idx[token]
        if lower_case_backup and isinstance(token, str):
            return self._token_to_idx.get(token.lower(), 0)
        return 0

    def update_token_vectors(self, tokens: Hashable | list, new_vectors: nd.NDArray) -> None:
        """Overwrite the vectors of held tokens (the unknown token included, by name).

        `new_vectors` is (len(tokens), vec_len), or (vec_len,) for a single token."""
        table = self._vectors()
        token_list = tokens if isinstance(tokens, list) else [tokens]
        shape = tuple(new_vectors.shape)
        vec_len = int(table.shape[1])
        if len(token_list) == 1 and shape == (vec_len,):
            new_vectors = new_vectors.reshape((1, vec_len))
        elif shape != (len(token_list), vec_len):
            raise TextArgumentError(
                f"update_token_vectors: new_vectors of shape {shape} for {len(token_list)} "
                f"token(s), expected ({len(token_list)}, {vec_len})"
                + (f" or ({vec_len},)" if len(token_list) == 1 else "")
            )
        indices = []
        for token in token_list:
            if token not in self._token_to_idx:
                raise UnknownTokenError(
                    f"update_token_vectors: token {token!r} is unknown; to update the "
                    f"unknown vector name the unknown token {self.unknown_token!r}"
                )
            indices.append(self._token_to_idx[token])
        table[np.asarray(indices, dtype=np.int64)] = new_vectors

    def _vectors(self) -> nd.NDArray:
        if self._idx_to_vec is None:
            raise TextArgumentError(f"{type(self).__name__}: no vectors loaded yet")
        return self._idx_to_vec

    # -- pre-trained files ------------------------------------------------------------
    @classmethod
    def _check_pretrained_file_names(cls, pretrained_file_name: str) -> None:
        if pretrained_file_name not in cls.pretrained_file_name_sha1:
            raise UnknownEmbeddingError(
                f"{cls.__name__}: no pre-trained file {pretrained_file_name!r}; see "
                f"get_pretrained_file_names({cls.__name__.lower()!r})"
            )

    @classmethod
    def _get_pretrained_file(cls, embedding_root: str, pretrained_file_name: str) -> str:
        """Path of the pre-trained file under `embedding_root/<namespace>/`, fetched from
        `repo_url` when a class sets one; its SHA-1 is checked when the class knows it."""
        folder = os.path.join(os.path.expanduser(embedding_root), cls.namespace)
        path = os.path.join(folder, pretrained_file_name)
        expected = cls.pretrained_file_name_sha1.get(pretrained_file_name)
        if not os.path.isfile(path) or not _sha1_matches(path, expected):
            if cls.repo_url is None:
                raise EmbeddingFileError(
                    f"{cls.__name__}: pre-trained file {pretrained_file_name!r} not found at "
                    f"{path!r} (nnvmpy does not download embeddings: place the file there)"
                )
            from nnvmpy.test_utils.download import download

            url = f"{cls.repo_url.rstrip('/')}/{cls.namespace}/{pretrained_file_name}"
            logging.info("embedding: fetching %s", url)
            download(url, fname=path, overwrite=True)
            if not _sha1_matches(path, expected):
                raise EmbeddingFileError(f"{cls.__name__}: {url} does not have SHA-1 {expected}")
        return path

    @classmethod
    def _load_pretrained(
        cls,
        instance: _TokenEmbedding,
        pretrained_file_name: str,
        embedding_root: str,
        init_unknown_vec: Callable[..., Any],
        vocabulary: Vocabulary | None,
        elem_delim: str,
        encoding: str = "utf8",
    ) -> None:
        cls._check_pretrained_file_names(pretrained_file_name)
        path = cls._get_pretrained_file(embedding_root, pretrained_file_name)
        instance._load_embedding(path, elem_delim, init_unknown_vec, encoding)
        instance._build_embedding_for_vocabulary(vocabulary)


def _parse_floats(texts: list[str], where: str) -> list[float]:
    try:
        return [float(text) for text in texts]
    except ValueError as err:
        raise EmbeddingNumberError(f"{where}: vector element is not a number ({err})") from None


def _as_numpy(value: Any) -> np.ndarray:
    array = value.asnumpy() if hasattr(value, "asnumpy") else np.asarray(value)
    return array.astype(np.float32)


def _sha1_matches(path: str, expected: str | None) -> bool:
    if expected is None:
        return True
    sha1 = hashlib.sha1()
    with open(path, "rb") as fin:
        for chunk in iter(lambda: fin.read(1 << 20), b""):
            sha1.update(chunk)
    return sha1.hexdigest() == expected


def _default_root() -> str:
    return os.path.join(data_dir(), "embeddings")


class CustomEmbedding(_TokenEmbedding):
    """An embedding read from a user's file of `token<elem_delim>v1<elem_delim>v2...` lines,
    optionally re-indexed to `vocabulary`. kwargs: unknown_token, reserved_tokens."""

    def __init__(
        self,
        pretrained_file_path: str,
        elem_delim: str = " ",
        encoding: str = "utf8",
        init_unknown_vec: Callable[..., Any] = nd.zeros,
        vocabulary: Vocabulary | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self._load_embedding(pretrained_file_path, elem_delim, init_unknown_vec, encoding)
        self._build_embedding_for_vocabulary(vocabulary)


class CompositeEmbedding(_TokenEmbedding):
    """`vocabulary`'s indexing with, per token, the concatenated vectors of one or more
    token embeddings (in the order given)."""

    def __init__(
        self, vocabulary: Vocabulary, token_embeddings: _TokenEmbedding | list[_TokenEmbedding]
    ) -> None:
        if not isinstance(vocabulary, Vocabulary):
            raise TextArgumentError(
                "CompositeEmbedding: vocabulary must be a Vocabulary, got "
                f"{type(vocabulary).__name__}"
            )
        embeds = token_embeddings if isinstance(token_embeddings, list) else [token_embeddings]
        for embed in embeds:
            if not isinstance(embed, _TokenEmbedding):
                raise TextArgumentError(
                    "CompositeEmbedding: token_embeddings must be token embeddings, got "
                    f"{type(embed).__name__}"
                )
        super().__init__(unknown_token=vocabulary.unknown_token)
        self._index_like(vocabulary)
        self._set_idx_to_vec_by_embeddings(embeds, len(vocabulary), vocabulary.idx_to_token)


@register
class GloVe(_TokenEmbedding):
    """Stanford's GloVe vectors (space-separated text files), read from
    `embedding_root/glove/<pretrained_file_name>`."""

    pretrained_file_name_sha1 = dict.fromkeys(_pretrained_names.GLOVE_FILE_NAMES)
    namespace = "glove"

    def __init__(
        self,
        pretrained_file_name: str = "glove.840B.300d.txt",
        embedding_root: str | None = None,
        init_unknown_vec: Callable[..., Any] = nd.zeros,
        vocabulary: Vocabulary | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        root = _default_root() if embedding_root is None else embedding_root
        GloVe._load_pretrained(self, pretrained_file_name, root, init_unknown_vec, vocabulary, " ")


@register
class FastText(_TokenEmbedding):
    """Facebook Research's fastText `.vec` files, read from
    `embedding_root/fasttext/<pretrained_file_name>` (the `count dim` header is skipped)."""

    pretrained_file_name_sha1 = dict.fromkeys(_pretrained_names.FASTTEXT_FILE_NAMES)
    namespace = "fasttext"

    def __init__(
        self,
        pretrained_file_name: str = "wiki.simple.vec",
        embedding_root: str | None = None,
        init_unknown_vec: Callable[..., Any] = nd.zeros,
        vocabulary: Vocabulary | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        root = _default_root() if embedding_root is None else embedding_root
        FastText._load_pretrained(
            self, pretrained_file_name, root, init_unknown_vec, vocabulary, " "
        )


__all__ = [
    "CompositeEmbedding",
    "CustomEmbedding",
    "FastText",
    "GloVe",
    "create",
    "get_pretrained_file_names",
    "register",
]
