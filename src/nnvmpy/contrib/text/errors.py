"""Errors of nv.contrib.text. MXNet raises AssertionError for malformed arguments and
embedding files and ValueError for unknown tokens/indices; ours are NNVMErrors that are
also those built-in classes, so code written for MXNet catches them unchanged."""

from __future__ import annotations

from ...base import NNVMError


class TextArgumentError(NNVMError, AssertionError):
    """A vocabulary/embedding argument breaks a documented precondition."""


class EmbeddingFileError(NNVMError, AssertionError):
    """A pre-trained embedding file does not have the `token v1 v2 ...` line format."""


class EmbeddingNumberError(NNVMError, ValueError):
    """A vector element of a pre-trained embedding file is not a number."""


class UnknownTokenError(NNVMError, ValueError):
    """A token or index that the vocabulary does not hold."""


class UnknownEmbeddingError(NNVMError, KeyError):
    """No registered embedding, or no pre-trained file, of that name."""

    def __str__(self) -> str:  # KeyError's str() would quote the message
        return str(self.args[0]) if self.args else ""


class UnregisteredEmbeddingError(UnknownEmbeddingError, AssertionError):
    """`create` of a name never registered (MXNet asserts there)."""


__all__ = [
    "EmbeddingFileError",
    "EmbeddingNumberError",
    "TextArgumentError",
    "UnknownEmbeddingError",
    "UnknownTokenError",
    "UnregisteredEmbeddingError",
]
