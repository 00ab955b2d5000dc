"""MXNet's symbolic recurrent cells (mxnet.rnn): step cells, the fused cell, containers."""

from .composite_cell import (
    BidirectionalCell,
    DropoutCell,
    ModifierCell,
    ResidualCell,
    SequentialRNNCell,
    ZoneoutCell,
)
from .fused_cell import FusedRNNCell
from .fused_init import FusedRNN
from .rnn_cell import BaseRNNCell, GRUCell, LSTMCell, RNNCell, RNNParams

__all__ = [
    "BaseRNNCell",
    "BidirectionalCell",
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
]
