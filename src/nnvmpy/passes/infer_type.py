"""InferType: the numpy dtype of every entry, from variable dtypes and each op's FInferType.

Sources for variables, merged: `dtype_inputs` (ordered like indexed.input_nodes),
`dtype_hints` / `apply_passes(..., dtypes={name: dtype})`, and the variable's
`__dtype__` attribute — MXNet's type flag number in symbol JSON ("0" is float32), or a
dtype name. An op without FInferType gets NNVM's default: all its inputs and outputs
share one dtype.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..attrs import FInferType, FListInputNames, TIsBackward
from ..base import InferError, NNVMError, as_dtype
from ..graph.attrs import DTYPE, DTYPE_HINTS, DTYPE_INPUTS, DTYPE_NUM_UNKNOWN_NODES
from ..graph.graph import Graph
from ..graph.node import Node
from ..graph.pass_registry import register_pass
from ..infer import dtype_str, elemwise_type
from ._fixpoint import InferSpec, run_fixpoint

#: the variable attribute MXNet stores a declared dtype under.
DTYPE_ATTR = "__dtype__"

#: MXNet's type flags (mshadow::TypeFlag), as written in `__dtype__`.
MX_TYPE_FLAGS: dict[int, np.dtype[Any]] = {
    0: np.dtype(np.float32),
    1: np.dtype(np.float64),
    2: np.dtype(np.float16),
    3: np.dtype(np.uint8),
    4: np.dtype(np.int32),
    5: np.dtype(np.int8),
    6: np.dtype(np.int64),
    7: np.dtype(np.bool_),
}
_FLAG_OF = {dtype: flag for flag, dtype in MX_TYPE_FLAGS.items()}


def dtype_from_flag(flag: int | str) -> np.dtype[Any]:
    """MXNet's type flag (an int or its string, as in JSON) -> numpy dtype."""
    try:
        return MX_TYPE_FLAGS[int(flag)]
    except (KeyError, ValueError):
        raise NNVMError(
            f"unknown MXNet type flag {flag!r}; known: "
            f"{ {k: str(v) for k, v in MX_TYPE_FLAGS.items()} }"
        ) from None


def dtype_to_flag(dtype: Any) -> int:
    """numpy dtype -> MXNet's type flag, for writing `__dtype__`."""
    flag = _FLAG_OF.get(np.dtype(dtype))
    if flag is None:
        raise NNVMError(f"dtype {np.dtype(dtype)} has no MXNet type flag")
    return flag


def _normalize(value: Any) -> np.dtype[Any] | None:
    if value is None or isinstance(value, np.dtype):
        return value
    if isinstance(value, int | np.integer) and not isinstance(value, bool):
        return dtype_from_flag(int(value))
    return as_dtype(value)


def _var_dtype(node: Node) -> np.dtype[Any] | None:
    text = node.attrs.dict.get(DTYPE_ATTR)
    if text is None:
        return None
    text, what = text.strip(), f"variable '{node.name}': attribute {DTYPE_ATTR}"
    if not text.lstrip("-").isdigit():
        return as_dtype(text, what)  # a model file's attribute: anything may be there
    try:
        return dtype_from_flag(text)
    except NNVMError as e:
        raise NNVMError(f"{what}: {e}") from None


def _merge(a: np.dtype[Any] | None, b: np.dtype[Any] | None) -> np.dtype[Any] | None:
    if a is None:
        return b
    if b is None or a == b:
        return a
    raise InferError(f"dtypes {a} and {b} disagree")


TYPE_SPEC = InferSpec(
    pass_name="InferType",
    what="dtype",
    result=DTYPE,
    inputs=DTYPE_INPUTS,
    hints=DTYPE_HINTS,
    num_unknown=DTYPE_NUM_UNKNOWN_NODES,
    op_key=FInferType,
    default_rule=elemwise_type(-1, -1),
    normalize=_normalize,
    var_value=_var_dtype,
    merge=_merge,
    is_known=lambda dtype: dtype is not None,
    to_str=dtype_str,
)


@register_pass(
    "InferType",
    provides=(DTYPE, DTYPE_NUM_UNKNOWN_NODES),
    op_attrs=(FInferType, TIsBackward, FListInputNames),
)
def infer_type(graph: Graph) -> Graph:
    """Fill graph.attrs["dtype"] by entry id (numpy dtypes, None where unknown)."""
    return run_fixpoint(graph, TYPE_SPEC)


__all__ = [
    "DTYPE_ATTR",
    "MX_TYPE_FLAGS",
    "TYPE_SPEC",
    "dtype_from_flag",
    "dtype_to_flag",
    "infer_type",
]
