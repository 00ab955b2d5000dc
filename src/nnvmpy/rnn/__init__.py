"""MXNet's symbolic recurrent cells (mxnet.rnn): step cells, the fused cell, containers,
convolutional cells; checkpoints with unpacked weights; the bucketing sentence iterator."""

# MXNet's submodule paths (mxnet.rnn.io, mxnet.rnn.rnn, mxnet.rnn.rnn_cell)
from . import io as io
from . import rnn as rnn
from . import rnn_cell as rnn_cell
from .checkpoint import do_rnn_checkpoint, load_rnn_checkpoint, save_rnn_checkpoint
from .composite_cell import (
    BidirectionalCell,
    DropoutCell,
    ModifierCell,
    ResidualCell,
    SequentialRNNCell,
    ZoneoutCell,
)
from .conv_cell import BaseConvRNNCell, ConvGRUCell, ConvLSTMCell, ConvRNNCell
from .fused_cell import FusedRNNCell
from .fused_init import FusedRNN
from .rnn_cell import BaseRNNCell, GRUCell, LSTMCell, RNNCell, RNNParams
from .sentence_io import BucketSentenceIter, encode_sentences

__all__ = [
    "BaseConvRNNCell",
    "BaseRNNCell",
    "BidirectionalCell",
    "BucketSentenceIter",
    "ConvGRUCell",
    "ConvLSTMCell",
    "ConvRNNCell",
    "DropoutCell",
    "FusedRNN",
    "FusedRNNCell",
    "GRUCell",
    "LSTMCell",
    "ModifierCell",
    "RNNCell",
    "RNNParams",
    "ResidualCell",
    "SequentialRNNCell",
    "ZoneoutCell",
    "do_rnn_checkpoint",
    "encode_sentences",
    "load_rnn_checkpoint",
    "save_rnn_checkpoint",
]
