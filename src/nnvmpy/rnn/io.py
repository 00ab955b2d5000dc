"""mxnet.rnn.io: the module path MXNet's users import the sentence data helpers from.

The code lives in `sentence_io`; this module only gives it MXNet's import path
(`from mxnet.rnn.io import BucketSentenceIter`).
"""

from .sentence_io import BucketSentenceIter, encode_sentences

__all__ = ["BucketSentenceIter", "encode_sentences"]
