"""Checkpoints of networks built from RNN cells (mxnet.rnn.save_rnn_checkpoint, ...).

The files hold the weights unpacked (one array per gate: `<prefix>i2h_f_weight`, ...),
so they read the same whichever cells (fused or unrolled step cells) trained them; the
cells pack them back into their own layout on loading.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .rnn_cell import BaseRNNCell

Cells = BaseRNNCell | list[BaseRNNCell] | tuple[BaseRNNCell, ...]


def _as_list(cells: Cells) -> list[BaseRNNCell]:
    return [cells] if isinstance(cells, BaseRNNCell) else list(cells)


def save_rnn_checkpoint(
    cells: Cells,
    prefix: str,
    epoch: int,
    symbol: Any,
    arg_params: dict[str, Any],
    aux_params: dict[str, Any],
) -> None:
    """save_checkpoint (prefix-symbol.json, prefix-%04d.params) with the cells' weights
    unpacked per gate."""
    from nnvmpy.model import save_checkpoint

    for cell in _as_list(cells):
        arg_params = cell.unpack_weights(arg_params)
    save_checkpoint(prefix, epoch, symbol, arg_params, aux_params)


def load_rnn_checkpoint(
    cells: Cells, prefix: str, epoch: int
) -> tuple[Any, dict[str, Any], dict[str, Any]]:
    """(symbol, arg_params, aux_params) of load_checkpoint, the weights packed by the cells."""
    from nnvmpy.model import load_checkpoint

    sym, arg, aux = load_checkpoint(prefix, epoch)
    for cell in _as_list(cells):
        arg = cell.pack_weights(arg)
    return sym, arg, aux


def do_rnn_checkpoint(
    cells: Cells, prefix: str, period: int = 1
) -> Callable[[int, Any, Any, Any], None]:
    """An epoch-end callback for fit(): save_rnn_checkpoint every `period` epochs (the
    file's epoch number is the count of epochs done)."""
    period = int(max(1, period))

    def _callback(iter_no: int, sym: Any = None, arg: Any = None, aux: Any = None) -> None:
        if (iter_no + 1) % period == 0:
            save_rnn_checkpoint(cells, prefix, iter_no + 1, sym, arg, aux)

    return _callback
