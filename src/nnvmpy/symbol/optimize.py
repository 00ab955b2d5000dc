"""Symbol.optimize_for's input hints: MXNet 1.9's shape_dict / type_dict / stype_dict.

MXNet infers shapes and types from `args` / `aux` arrays and, for inputs without an array,
from the three dicts, then hands the typed graph to the backend; `skip_infer=True` hands it
over untyped. Here the dicts are checked as MXNet checks them (a ValueError naming the
entry), inference runs on this symbol, and the backend (fusion/api.py) receives one
(shape, dtype) stand-in per input whose shape is known, as it receives arrays.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

import numpy as np

from ..base import ParamError
from ..passes.infer_type import MX_TYPE_FLAGS
from .arith import SymbolTypeError

#: MXNet's storage type names (nnvmpy stores every array densely)
STYPES = ("default", "row_sparse", "csr")


class InputSpec(NamedTuple):
    """What the backend reads of an input array: its shape and dtype."""

    shape: tuple[int, ...]
    dtype: np.dtype[Any]


def check_dicts(shape_dict: Any, type_dict: Any, stype_dict: Any) -> tuple[dict, dict]:
    """The shape and dtype hints, normalized; a ParamError (a ValueError) for a bad entry."""
    where = "Symbol.optimize_for"
    shapes: dict[str, tuple[int, ...]] = {}
    for name, shape in _items(shape_dict, "shape_dict"):
        if not isinstance(shape, tuple | list):
            raise ParamError(f"{where}: shape_dict[{name!r}] = {shape!r} has to be a tuple or list")
        shapes[name] = tuple(int(d) for d in shape)
    dtypes: dict[str, np.dtype[Any]] = {}
    for name, dtype in _items(type_dict, "type_dict"):
        try:
            dt = np.dtype(dtype)
        except TypeError as e:  # a TypeError, as NumPy's in MXNet
            raise SymbolTypeError(f"{where}: type_dict[{name!r}] = {dtype!r}: {e}") from None
        if dt not in MX_TYPE_FLAGS.values():
            raise ParamError(f"{where}: type_dict[{name!r}] = {dt} is not a MXNet type")
        dtypes[name] = dt
    for name, stype in _items(stype_dict, "stype_dict"):
        if stype not in STYPES:
            raise ParamError(
                f"{where}: stype_dict[{name!r}] = {stype!r} is not a MXNet storage type "
                f"(one of {list(STYPES)})"
            )
    return shapes, dtypes


def input_specs(
    sym: Any, args: Any, aux: Any, shapes: dict, dtypes: dict
) -> tuple[dict[str, InputSpec], dict[str, InputSpec]]:
    """(args, aux) for the backend: arrays' shapes and dtypes first, the hints for inputs
    without an array, then what inference adds; an input whose dtype stays unknown is
    float32 (what bind allocates), one whose shape stays unknown is left out."""
    arg_names, aux_names = sym.list_arguments(), sym.list_auxiliary_states()
    shapes, dtypes = dict(shapes), dict(dtypes)
    for names, given in ((arg_names, args), (aux_names, aux)):
        if given is None:
            continue
        pairs = given.items() if isinstance(given, Mapping) else zip(names, given)
        for name, arr in pairs:
            shapes[name], dtypes[name] = tuple(arr.shape), np.dtype(arr.dtype)
    known = set(arg_names) | set(aux_names)
    arg_shapes, _, aux_shapes = sym.infer_shape_partial(
        **{k: v for k, v in shapes.items() if k in known}
    )
    arg_types, _, aux_types = sym.infer_type_partial(
        **{k: v for k, v in dtypes.items() if k in known}
    )
    return (
        _specs(arg_names, arg_shapes, arg_types),
        _specs(aux_names, aux_shapes, aux_types),
    )


def _specs(names: list[str], shapes: list[Any], dtypes: list[Any]) -> dict[str, InputSpec]:
    out = {}
    for name, shape, dtype in zip(names, shapes, dtypes):
        if shape and all(shape):  # () and 0 dims are unknown at this API
            out[name] = InputSpec(tuple(shape), np.dtype(np.float32 if dtype is None else dtype))
    return out


def _items(value: Any, what: str) -> list[tuple[str, Any]]:
    if value is None:
        return []
    if not isinstance(value, Mapping):
        raise ParamError(
            f"Symbol.optimize_for: {what} must be a dict of input name to value, "
            f"got {type(value).__name__}"
        )
    return list(value.items())


__all__ = ["STYPES", "InputSpec", "check_dicts", "input_specs"]
