"""A second op with the attributes of another, for a name MXNet knows as its own op.

Where MXNet has one op under two names (`concat` for Concat) the op declares the other
name itself with `Op.add_alias`: both names are then one op, saved under its own name as
MXNet saves it. A copy is for the other case: `quadratic` is the tutorial's op and
`_contrib_quadratic` is what MXNet registers, so a symbol made through `nd.contrib`
must be saved as `_contrib_quadratic` for MXNet to load it. Made from the source as
registered when this runs: copy an op after every attribute of it is set.
"""

from __future__ import annotations

from ..registry import Op, register_op


def register_copy(name: str, source: str) -> Op:
    """Register op `name` with a copy of op `source`'s arity, parser and attributes."""
    src = Op.get(source)
    op = register_op(name).describe(src.description)
    op.set_num_inputs(src.num_inputs).set_num_outputs(src.num_outputs)
    if src.key_var_num_args is not None:
        op.set_key_var_num_args(src.key_var_num_args)
    if src.param_cls is not None:  # re-made for `name`, so parse errors name it
        op.set_attr_parser(src.param_cls)
    elif src.attr_parser is not None:
        op.set_attr_parser(src.attr_parser)
    for arg in src.arguments:
        op.add_argument(*tuple(arg)[:3])
    for key, entry in src.attr_entries().items():
        op.set_attr(key, entry.value, entry.plevel)
    return op
