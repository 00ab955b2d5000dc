"""nv.contrib.amp: MXNet's `mx.contrib.amp` entry points for bfloat16 inference.

    net = nv.contrib.amp.convert_symbol(net, target_dtype="bfloat16",
                                        excluded_sym_names=["fc1"])
    exe = net.simple_bind(nv.cpu(), grad_req="null", data=(1, 3, 224, 224))

MXNet's convert_symbol inserts amp_cast nodes around the ops it converts, because
MXNet has a bfloat16 dtype. nnvmpy has none, so the converted symbol instead carries the
hidden attribute `__amp_dtype__='bfloat16'` on every node whose op declares
FBFloat16Compute (Convolution, FullyConnected), and `'float32'` on the excluded ones; the
attribute is saved with the symbol's JSON. At bind, executors without gradients on the
CPU compute the marked nodes in bfloat16 with float32 accumulation (the AmpBFloat16
pass, ops/amp_bf16.py says how); a training bind ignores the marks and computes in
float32. NNVMPY_INFER_BF16=1 does the same for every unmarked symbol.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..attrs import FBFloat16Compute
from ..base import ParamError
from ..graph.node import Node, NodeEntry, post_order
from ..registry import NodeAttrs
from ..symbol.symbol import Symbol

#: the target dtypes convert_symbol accepts here (MXNet's also takes float16: GPU AMP)
TARGET_DTYPES = ("bfloat16",)


def convert_symbol(
    sym: Symbol,
    target_dtype: str = "bfloat16",
    excluded_sym_names: Iterable[str] | None = None,
) -> Symbol:
    """A copy of `sym` whose Convolution/FullyConnected nodes (every op declaring
    FBFloat16Compute) ask to compute in bfloat16, except those named in
    `excluded_sym_names`, which are marked to stay float32.

    Raises:
        ParamError: `sym` is not a Symbol, `target_dtype` is not 'bfloat16', or an
            excluded name is not a node of `sym`.
    """
    where = "convert_symbol"
    if not isinstance(sym, Symbol):
        raise ParamError(f"{where}: argument 'sym' must be a Symbol, got {type(sym).__name__}")
    if target_dtype not in TARGET_DTYPES:
        raise ParamError(
            f"{where}: argument 'target_dtype' must be 'bfloat16' (nnvmpy's AMP computes "
            f"Convolution and FullyConnected in bfloat16 on the CPU; there is no float16 AMP), "
            f"got {target_dtype!r}"
        )
    excluded = _names(excluded_sym_names, where)
    from nnvmpy.ops.amp_bf16 import AMP_DTYPE

    nodes = post_order(sym._heads)
    unknown = sorted(excluded - {n.name for n in nodes})
    if unknown:
        raise ParamError(
            f"{where}: argument 'excluded_sym_names' names {unknown}, which are not nodes "
            f"of the symbol"
        )
    new_of: dict[int, Node] = {}
    for node in nodes:
        # every node is copied, so that attributes set on the result leave `sym` alone
        spec = None if node.op is None else node.op.get_attr(FBFloat16Compute)
        mark = {}
        if spec is not None and spec(node.attrs) is not None:
            mark = {AMP_DTYPE: "float32" if node.name in excluded else "bfloat16"}
        attrs = NodeAttrs(node.op, node.name, {**node.attrs.dict, **mark}, node.attrs.parsed)
        inputs = [NodeEntry(new_of[id(e.node)], e.index, e.version) for e in node.inputs]
        copy = Node(attrs, inputs, [new_of[id(d)] for d in node.control_deps])
        copy.info = dict(node.info)
        new_of[id(node)] = copy
    return Symbol([NodeEntry(new_of[id(e.node)], e.index, e.version) for e in sym._heads])


def convert_model(
    sym: Symbol,
    arg_params: dict[str, Any],
    aux_params: dict[str, Any],
    target_dtype: str = "bfloat16",
    excluded_sym_names: Iterable[str] | None = None,
) -> tuple[Symbol, dict[str, Any], dict[str, Any]]:
    """MXNet's convert_model: (convert_symbol(sym, ...), arg_params, aux_params). The
    parameters stay float32 (MXNet's cast_optional_params=False): the bfloat16 copy of
    each weight is made at bind and kept up to date by the executor."""
    return convert_symbol(sym, target_dtype, excluded_sym_names), arg_params, aux_params


def _names(names: Iterable[str] | None, where: str) -> set[str]:
    if names is None:
        return set()
    if isinstance(names, str) or not isinstance(names, Iterable):
        raise ParamError(
            f"{where}: argument 'excluded_sym_names' must be a list of node names, got {names!r}"
        )
    out = set()
    for name in names:
        if not isinstance(name, str):
            raise ParamError(
                f"{where}: argument 'excluded_sym_names' must hold strings, got {name!r}"
            )
        out.add(name)
    return out


__all__ = ["TARGET_DTYPES", "convert_model", "convert_symbol"]
