"""mxnet.rnn.rnn: the module path MXNet's users import the RNN checkpoint helpers from.

The code lives in `checkpoint` (and `nnvmpy.model` for the plain checkpoints); this
module only gives it MXNet's import path (`from mxnet.rnn.rnn import save_rnn_checkpoint`).
"""

from ..model import load_checkpoint, save_checkpoint
from .checkpoint import do_rnn_checkpoint, load_rnn_checkpoint, save_rnn_checkpoint
from .rnn_cell import BaseRNNCell

__all__ = [
    "BaseRNNCell",
    "do_rnn_checkpoint",
    "load_checkpoint",
    "load_rnn_checkpoint",
    "save_checkpoint",
    "save_rnn_checkpoint",
]
