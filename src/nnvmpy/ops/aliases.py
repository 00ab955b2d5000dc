"""MXNet's op aliases that no family file registers itself: `cast` for Cast.

An alias is a separate registry entry (as Reshape/reshape are) holding the same
attributes, so symbols saved with either name load, and `nv.nd.cast` exists. It is
made from the target as registered when this module runs: register an alias after
every attribute of its target.
"""

from __future__ import annotations

from ..registry import Op, register_op
from . import init as _init  # noqa: F401 - registers Cast, which must exist first


def register_alias(alias: str, target: str) -> Op:
    """Register op `alias` with a copy of op `target`'s arity, parser and attributes."""
    src = Op.get(target)
    op = register_op(alias).describe(src.description)
    op.set_num_inputs(src.num_inputs).set_num_outputs(src.num_outputs)
    if src.key_var_num_args is not None:
        op.set_key_var_num_args(src.key_var_num_args)
    if src.param_cls is not None:  # re-made for `alias`, so parse errors name it
        op.set_attr_parser(src.param_cls)
    elif src.attr_parser is not None:
        op.set_attr_parser(src.attr_parser)
    for arg in src.arguments:
        op.add_argument(*tuple(arg)[:3])
    for key, entry in src.attr_entries().items():
        op.set_attr(key, entry.value, entry.plevel)
    return op


register_alias("cast", "Cast")
