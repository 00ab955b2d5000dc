"""nv.contrib.text: MXNet's `mx.contrib.text` for text data: `utils` counts tokens,
`vocab.Vocabulary` indexes them, `embedding` attaches vectors (custom files, composites,
GloVe/FastText files read locally)."""

from __future__ import annotations

from . import embedding, utils, vocab

__all__ = ["embedding", "utils", "vocab"]
