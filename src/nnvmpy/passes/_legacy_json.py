"""Upgrades for symbol files older than MXNet 1.9.1 (MXNet's legacy_json_util.cc).

Old files spell node attributes "param" (op parameters) and "attr" (everything else),
store optimizer hints without the dunder ("lr_mult", or "weight_lr_mult" on the op that
reads the weight), and before 0.9 left auxiliary-state variables out of the node inputs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..attrs import FListInputNames, FSetInputVarAttrOnCompose
from ..graph.node import Node, NodeEntry

#: MXNet's kHiddenKeys: attributes that are hints to the framework, never op parameters.
HIDDEN_KEYS = (
    "ctx_group",
    "lr_mult",
    "wd_mult",
    "force_mirroring",
    "mirror_stage",
    "profiler_scope",
)

CURRENT_VERSION = 10901  # MXNet 1.9.1, what these passes read and write natively
_V0_9_0 = 900
_V0_9_4 = 904


def node_dict(node_json: Mapping[str, Any]) -> dict[str, str]:
    """The attributes of a JSON node, merged from "param", "attr" and "attrs"."""
    merged: dict[str, str] = {}
    for key in ("param", "attr", "attrs"):
        merged.update({k: str(v) for k, v in (node_json.get(key) or {}).items()})
    return merged


def split_hidden(attrs: dict[str, str]) -> tuple[dict[str, str], dict[str, str]]:
    """(attrs a parser accepts, hidden hint keys) — MXNet's UpgradeJSON_FixParsing, part 1."""
    clean: dict[str, str] = {}
    hidden: dict[str, str] = {}
    for key, value in attrs.items():
        is_hint = any(key.startswith(h) or key.endswith(h) for h in HIDDEN_KEYS)
        (hidden if is_hint and not key.startswith("__") else clean)[key] = value
    return clean, hidden


def restore_hidden(node: Node, hidden: dict[str, str]) -> None:
    """Put hint keys back as "__key__", on the input variable they name if they name one."""
    for key, value in hidden.items():
        target, new_key = node, key
        for h in HIDDEN_KEYS:
            if key == h:
                new_key = f"__{h}__"
            elif key.endswith("_" + h) and not node.is_variable():
                var = _input_variable(node, key[: -len(h) - 1])
                if var is not None:
                    target, new_key = var, f"__{h}__"
        target.attrs.dict[new_key] = value


def _input_variable(node: Node, arg_name: str) -> Node | None:
    names_fn = node.op.get_attr(FListInputNames) if node.op is not None else None
    if names_fn is None:
        return None
    names = list(names_fn(node.attrs))
    if arg_name not in names or names.index(arg_name) >= len(node.inputs):
        return None
    src = node.inputs[names.index(arg_name)].node
    return src if src.is_variable() else None


def upgrade_node(node: Node, version: int) -> None:
    """Version upgrades that need the node built: missing aux inputs, input var attrs."""
    if node.op is None:
        return
    if version < _V0_9_0:
        _add_missing_inputs(node)
    if version < _V0_9_4:
        set_var_attrs = node.op.get_attr(FSetInputVarAttrOnCompose)
        if set_var_attrs is not None:
            for i, e in enumerate(node.inputs):
                if e.node.is_variable():
                    set_var_attrs(node.attrs, e.node, i)


def _add_missing_inputs(node: Node) -> None:
    """Before 0.9 auxiliary states were not stored; add '<node>_<input>' variables."""
    names_fn = node.op.get_attr(FListInputNames) if node.op is not None else None
    if names_fn is None:
        return
    names = list(names_fn(node.attrs))
    for i in range(len(node.inputs), node.num_inputs()):
        var = Node.variable(f"{node.name}_{names[i]}", dict(node.attrs.dict))
        node.inputs.append(NodeEntry(var, 0))


__all__ = [
    "CURRENT_VERSION",
    "HIDDEN_KEYS",
    "node_dict",
    "restore_hidden",
    "split_hidden",
    "upgrade_node",
]
