"""Building symbols: op application, variables, groups, and composition by call.

`compose` is what every `nv.sym.<op>(...)` does, in MXNet's order: the node's name comes
from the current NameManager, its attributes are the op's parameters plus the current
AttrScope and `attr=` (hidden keys like `lr_mult` stored as `__lr_mult__`), the op's
parser reads them (it ignores `__x__` keys), and every input not given becomes a
variable `<node>_<input>` carrying a copy of the node's attributes, as NNVM's Compose
does (so `lr_mult=` on an op reaches its weight, and JSON matches MXNet's files).

`compose_graph` is `net2(data=net1)`: variables of an existing graph replaced by symbols.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..attribute import AttrScope
from ..attrs import FListInputNames, FSetInputVarAttrOnCompose
from ..base import NNVMError, ParamError
from ..graph.node import Node, NodeEntry, post_order
from ..name import NameManager
from ..registry import NodeAttrs, Op, _attr_str
from ..signature import input_names as op_input_names
from .arith import SymbolTypeError
from .attr_keys import stored_key, string_attrs
from .symbol import Symbol, num_visible_outputs

_STYPES = {"default": 0, "row_sparse": 1, "csr": 2}


def compose(
    op: Op,
    args: Sequence[Any],
    kwargs: Mapping[str, Any],
    name: str | None,
    attr: Mapping[str, Any] | None = None,
    hint: str | None = None,
) -> Symbol:
    """Apply `op` to symbols: positional and keyword inputs, params, missing-input variables.

    `hint` names the node when `name` is None (default: the op name in lower case; the
    arithmetic operators pass MXNet's, e.g. `_plus`).
    """
    for i, a in enumerate(args):
        if not isinstance(a, Symbol) and a is not None:  # None: that input is not given
            raise NNVMError(
                f"{op.name}: positional input {i} must be a Symbol, got "
                f"{type(a).__name__}; pass parameters by keyword"
            )
    symbol_kwargs = {k: v for k, v in kwargs.items() if isinstance(v, Symbol)}
    if op.key_var_num_args and args and symbol_kwargs:
        raise NNVMError(
            f"{op.name}: a variadic op takes its input Symbols either by position or by "
            f"keyword, not both (got {len(args)} positional and {sorted(symbol_kwargs)})"
        )
    params = _node_params(op, kwargs, symbol_kwargs, attr)
    if op.key_var_num_args and op.key_var_num_args not in params:
        given = [a for a in args if a is not None]
        params[op.key_var_num_args] = str(len(given) or len(symbol_kwargs))
    attrs = op.parse_attrs(params, NameManager.current.get(name, hint or op.name.lower()))
    node = Node(attrs, _input_entries(op, attrs, args, symbol_kwargs))
    return Symbol([NodeEntry(node, i) for i in range(num_visible_outputs(node))])


def _node_params(
    op: Op, kwargs: Mapping[str, Any], symbol_kwargs: Mapping[str, Any], attr: Any
) -> dict[str, str]:
    """The node's string attributes: parameters, then the AttrScope and attr= (which win),
    hidden keys stored as `__key__`; an input passed as None is simply not given."""
    if attr is not None and not isinstance(attr, Mapping):
        raise ParamError(f"{op.name}: attr must be a dict, got {type(attr).__name__}")
    params: dict[str, str] = {}
    skipped = set(op_input_names(op) or ())
    skipped |= {a.name for a in op.arguments if a.type_info.startswith("NDArray")}
    for key, value in {**kwargs, **AttrScope.current.get(attr)}.items():
        if key not in symbol_kwargs and not (value is None and key in skipped):
            params[stored_key(key, op.name)] = _attr_str(value)
    return params


def _input_entries(
    op: Op, attrs: NodeAttrs, args: Sequence[Symbol | None], symbol_kwargs: Mapping[str, Symbol]
) -> list[NodeEntry]:
    """Positional inputs, then keyword ones by input name (in the given order for a
    variadic op), then a new variable `<node>_<input>` for each one missing."""
    n_in = op.get_num_inputs(attrs)
    names = input_names(op, attrs, n_in)
    if op.key_var_num_args:
        args = [a for a in args if a is not None]
    while len(args) > n_in and args[-1] is None:  # Convolution(x, w, None, no_bias=True)
        args = args[:-1]
    if len(args) > n_in:
        raise NNVMError(f"{op.name}: takes {n_in} inputs ({names}), got {len(args)}")
    inputs: list[NodeEntry | None] = [None] * n_in
    for i, a in enumerate(args):
        if a is not None:
            inputs[i] = _single_head(op, a, names[i])
    if op.key_var_num_args and symbol_kwargs:
        for i, (key, value) in enumerate(list(symbol_kwargs.items())[:n_in]):
            inputs[i] = _single_head(op, value, key)
    else:
        for key, value in symbol_kwargs.items():
            if key not in names:
                raise NNVMError(f"{op.name}: unknown input {key!r}; inputs are {names}")
            index = names.index(key)
            if inputs[index] is not None:
                raise NNVMError(f"{op.name}: input {key!r} given both by position and keyword")
            inputs[index] = _single_head(op, value, key)
    set_var_attr = op.get_attr(FSetInputVarAttrOnCompose)
    for i, entry in enumerate(inputs):
        if entry is None:
            var = Node.variable(f"{attrs.name}_{names[i]}", attrs.dict)
            if set_var_attr is not None:
                set_var_attr(attrs, var, i)
            inputs[i] = NodeEntry(var, 0)
        elif set_var_attr is not None and entry.node.is_variable():
            set_var_attr(attrs, entry.node, i)  # a given variable too, as MXNet's Compose
    return [e for e in inputs if e is not None]


def _single_head(op: Op, sym: Symbol, input_name: str) -> NodeEntry:
    if len(sym._heads) != 1:
        raise NNVMError(
            f"{op.name}: input {input_name!r} must have one output, but the given "
            f"symbol has {len(sym._heads)} ({sym.list_outputs()}); select one "
            f"with sym[i]"
        )
    return sym._heads[0]


def input_names(op: Op, attrs: NodeAttrs, n_in: int) -> list[str]:
    """The op's input names for these attributes (`data`, or `arg<i>` when unnamed)."""
    fn = op.get_attr(FListInputNames)
    names = list(fn(attrs)) if fn is not None else []
    if len(names) < n_in:
        if n_in == 1 and not names:
            return ["data"]
        names += [f"arg{i}" for i in range(len(names), n_in)]
    return names[:n_in]


# -- variables and groups ---------------------------------------------------------------------


def Variable(
    name: str,
    attr: Mapping[str, str] | None = None,
    shape: Any = None,
    lr_mult: float | None = None,
    wd_mult: float | None = None,
    dtype: Any = None,
    init: Any = None,
    stype: str | None = None,
    profiler_scope: str | None = None,
    **kwargs: Any,
) -> Symbol:
    """A named input of a graph with optional shape, dtype, init and hints (MXNet's var).

    `shape` may leave dimensions unknown with 0 (MXNet's convention); given shapes in
    `infer_shape`/`simple_bind` override it.
    """
    if not isinstance(name, str) or not name:
        raise NNVMError(f"Variable: name must be a non-empty string, got {name!r}")
    where = f"Variable {name!r}"
    attrs = string_attrs(AttrScope.current.get(string_attrs(attr, where)), where)
    if shape is not None:
        attrs["__shape__"] = _shape_attr(shape, where)
    if lr_mult is not None:
        attrs["__lr_mult__"] = str(lr_mult)
    if wd_mult is not None:
        attrs["__wd_mult__"] = str(wd_mult)
    if dtype is not None:
        from nnvmpy.base import as_dtype
        from nnvmpy.passes.infer_type import dtype_to_flag

        attrs["__dtype__"] = str(dtype_to_flag(as_dtype(dtype)))
    if init is not None:
        attrs["__init__"] = _init_attr(init, where)
    if stype is not None:
        if stype not in _STYPES:
            raise ParamError(f"{where}: stype must be one of {sorted(_STYPES)}, got {stype!r}")
        attrs["__storage_type__"] = str(_STYPES[stype])
    if profiler_scope is not None:
        attrs["__profiler_scope__"] = str(profiler_scope)
    for key, value in kwargs.items():
        if not (key.startswith("__") and key.endswith("__")):
            raise ParamError(
                f"{where}: unknown argument {key!r}; extra attributes must look like "
                f"__name__ (e.g. __{key}__)"
            )
        attrs[key] = str(value)
    return Symbol([NodeEntry(Node.variable(name, attrs), 0)])


var = Variable


def _shape_attr(shape: Any, where: str) -> str:
    dims = (shape,) if isinstance(shape, int) else shape
    if not isinstance(dims, tuple | list) or not all(
        isinstance(d, int) and not isinstance(d, bool) for d in dims
    ):
        raise ParamError(f"{where}: shape must be a tuple of ints (0 = unknown), got {shape!r}")
    return _attr_str(tuple(int(d) for d in dims))


def _init_attr(init: Any, where: str) -> str:
    if isinstance(init, str):
        return init
    dumps = getattr(init, "dumps", None)
    if dumps is None:
        raise ParamError(
            f"{where}: init must be an initializer (with .dumps()) or its JSON string, "
            f"got {type(init).__name__}"
        )
    return str(dumps())


def Group(
    symbols: Sequence[Symbol], create_fn: Callable[[list[NodeEntry]], Symbol] = Symbol
) -> Symbol:
    """One symbol whose outputs are the outputs of all the given symbols, in order.

    `create_fn` is the class of the result (MXNet's parameter): `Symbol` or a subclass of it,
    called with the grouped outputs. An empty list or a non-Symbol raises a TypeError, as
    MXNet's Group does.
    """
    if isinstance(symbols, Symbol) or not isinstance(symbols, Sequence):
        raise SymbolTypeError(f"Group expects a list of Symbols, got {type(symbols).__name__}")
    if not symbols:
        raise SymbolTypeError("Group expects a list of Symbols, got an empty list")
    heads: list[NodeEntry] = []
    for s in symbols:
        if not isinstance(s, Symbol):
            raise SymbolTypeError(f"Group expects Symbols, got {type(s).__name__}")
        heads += s._heads
    return create_fn(heads)


# -- copying and composing whole graphs -----------------------------------------------------


def copy_heads(heads: Sequence[NodeEntry]) -> list[NodeEntry]:
    """The heads of a copy of the graph: new nodes (same names and attributes)."""
    copies: dict[int, Node] = {}
    for node in post_order(list(heads)):
        attrs = NodeAttrs(node.op, node.name, None, node.attrs.parsed)
        attrs.dict = dict(node.attrs.dict)
        new = Node(
            attrs,
            [NodeEntry(copies[id(e.node)], e.index, e.version) for e in node.inputs],
            [copies[id(d)] for d in node.control_deps],
        )
        new.info = dict(node.info)
        copies[id(node)] = new
    return [NodeEntry(copies[id(h.node)], h.index, h.version) for h in heads]


def compose_graph(sym: Symbol, args: Sequence[Any], kwargs: Mapping[str, Any], name: Any) -> None:
    """Replace variables of `sym`'s graph, in place: positional ones in list_inputs()
    order, keyword ones by name; then name the head node `name` (MXNet's _compose)."""
    if args and kwargs:
        raise NNVMError(
            "Symbol compose: pass input Symbols either by position or by keyword, not both"
        )
    for key, value in [*enumerate(args), *kwargs.items()]:
        if not isinstance(value, Symbol):
            raise NNVMError(f"Symbol compose: input {key!r} must be a Symbol, got {value!r:.60}")
        if len(value._heads) != 1:
            raise NNVMError(
                f"Symbol compose: input {key!r} must have one output, got {len(value._heads)}"
            )
    nodes = post_order(sym._heads)
    variables = [n for n in nodes if n.is_variable()]
    if len(args) > len(variables):
        raise NNVMError(
            f"Symbol compose: {len(args)} positional inputs for {len(variables)} "
            f"variables {[v.name for v in variables]}"
        )
    replace = {id(v): a._heads[0] for v, a in zip(variables, args)}
    by_name = {v.name: v for v in variables}
    unknown = [k for k in kwargs if k not in by_name]
    if unknown:
        raise NNVMError(
            f"Symbol compose: unknown keyword arguments {unknown}; the symbol's inputs "
            f"are {[v.name for v in variables]}"
        )
    for key, value in kwargs.items():
        for v in variables:  # every variable of that name (NNVM matches by name)
            if v.name == key:
                replace[id(v)] = value._heads[0]
    for node in nodes:
        node.inputs = [replace.get(id(e.node), e) for e in node.inputs]
    sym._heads = [replace.get(id(h.node), h) for h in sym._heads]
    if name:
        if not isinstance(name, str):
            raise NNVMError(f"Symbol compose: name must be a str, got {type(name).__name__}")
        sym._heads[0].node.attrs.name = name


__all__ = [
    "Group",
    "Variable",
    "compose",
    "compose_graph",
    "copy_heads",
    "input_names",
    "num_visible_outputs",
    "var",
]
