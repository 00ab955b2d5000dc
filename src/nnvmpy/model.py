"""nv.model: MXNet's checkpoint files — prefix-symbol.json and prefix-%04d.params.

The .params file is nd.save's format with MXNet's key prefixes ("arg:name", "aux:name"),
so checkpoints move between nnvmpy and MXNet 1.x in both directions.
"""

from __future__ import annotations

import logging
from typing import Any

from .base import ParamError
from .module.base_module import BatchEndParam  # what batch-end callbacks get, as mx.model has it


def save_checkpoint(
    prefix: str,
    epoch: int,
    symbol: Any,
    arg_params: dict[str, Any],
    aux_params: dict[str, Any],
    remove_amp_cast: bool = True,
) -> None:
    """Write `prefix-symbol.json` (when a symbol is given) and `prefix-%04d.params`."""
    from nnvmpy import nd

    if symbol is not None:
        symbol.save(f"{prefix}-symbol.json")
    param_name = f"{prefix}-{int(epoch):04d}.params"
    nd.save(param_name, params_file_dict(arg_params, aux_params))
    logging.info('Saved checkpoint to "%s"', param_name)


def load_params(prefix: str, epoch: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """(arg_params, aux_params) from `prefix-%04d.params`."""
    from nnvmpy import nd

    fname = f"{prefix}-{int(epoch):04d}.params"
    return split_params_file(nd.load(fname), fname)


def params_file_dict(arg_params: dict[str, Any], aux_params: dict[str, Any]) -> dict[str, Any]:
    """The dict a .params file holds: 'arg:<name>' and 'aux:<name>' keys."""
    data = {f"arg:{k}": v for k, v in arg_params.items()}
    data.update({f"aux:{k}": v for k, v in aux_params.items()})
    return data


def split_params_file(loaded: Any, fname: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """(arg_params, aux_params) from what nd.load read from a .params file; any other
    content raises ParamError (a ValueError, as MXNet's "Invalid param file")."""
    if not isinstance(loaded, dict):
        raise ParamError(f"load_params: {fname} holds a list, not named 'arg:'/'aux:' arrays")
    arg, aux = {}, {}
    for key, value in loaded.items():
        kind, _, name = key.partition(":")
        if kind == "arg" and name:
            arg[name] = value
        elif kind == "aux" and name:
            aux[name] = value
        else:
            raise ParamError(
                f"load_params: {fname}: key {key!r} is not 'arg:<name>' or 'aux:<name>'"
            )
    return arg, aux


def load_checkpoint(prefix: str, epoch: int) -> tuple[Any, dict[str, Any], dict[str, Any]]:
    """(symbol, arg_params, aux_params) from save_checkpoint's files."""
    from nnvmpy import sym

    symbol = sym.load(f"{prefix}-symbol.json")
    arg, aux = load_params(prefix, epoch)
    return symbol, arg, aux


__all__ = ["BatchEndParam", "load_checkpoint", "load_params", "save_checkpoint"]
