"""Symbol: a handle on some outputs of a computation graph, composed op by op.

A Symbol is a list of NodeEntry heads. Composition (`nv.sym.<op>(...)`) creates one Node
whose inputs are the heads of the argument symbols; missing inputs become variables
named `<node>_<input>` as in MXNet. Everything else (inference, JSON, binding) hands
the heads to graph passes.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from ..attrs import (
    FListInputNames,
    FListOutputNames,
    FMutateInputs,
    FNumVisibleOutputs,
    FSetInputVarAttrOnCompose,
)
from ..base import NNVMError, as_dtype
from ..graph.node import Node, NodeEntry, post_order
from ..registry import NodeAttrs, Op

# MXNet's type flags, used in JSON's __dtype__ attribute
DTYPE_FLAGS = {
    np.dtype(np.float32): 0,
    np.dtype(np.float64): 1,
    np.dtype(np.float16): 2,
    np.dtype(np.uint8): 3,
    np.dtype(np.int32): 4,
    np.dtype(np.int8): 5,
    np.dtype(np.int64): 6,
}


class NameManager:
    """Default node names: the op name in lower case plus a per-name counter (`quadratic0`)."""

    _lock = threading.Lock()
    _counters: dict[str, int] = {}

    @classmethod
    def get(cls, name: str | None, hint: str) -> str:
        if name:
            return name
        hint = hint.lower()
        with cls._lock:
            count = cls._counters.get(hint, 0)
            cls._counters[hint] = count + 1
        return f"{hint}{count}"

    @classmethod
    def reset(cls) -> None:
        with cls._lock:
            cls._counters.clear()


class Symbol:
    """Some outputs of a graph; compose with nv.sym ops, bind to run."""

    __slots__ = ("_heads",)

    def __init__(self, heads: Sequence[NodeEntry]) -> None:
        self._heads = list(heads)

    # -- structure ----------------------------------------------------------------------------

    @property
    def name(self) -> str | None:
        """The node's name for a single-output symbol (None for a group)."""
        return self._heads[0].node.name if len(self._heads) == 1 else None

    def _nodes(self) -> list[Node]:
        return post_order(self._heads)

    def _mutable_vars(self, nodes: list[Node]) -> set[int]:
        mutable: set[int] = set()
        for node in nodes:
            op = node.op
            fn = op.get_attr(FMutateInputs) if op is not None else None
            if fn is not None:
                for i in fn(node.attrs):
                    if i < len(node.inputs) and node.inputs[i].node.is_variable():
                        mutable.add(id(node.inputs[i].node))
        return mutable

    def _variables(self) -> tuple[list[Node], list[Node]]:
        """(arguments, auxiliary states), each in graph order."""
        nodes = self._nodes()
        mutable = self._mutable_vars(nodes)
        variables = [n for n in nodes if n.is_variable()]
        return (
            [n for n in variables if id(n) not in mutable],
            [n for n in variables if id(n) in mutable],
        )

    def list_arguments(self) -> list[str]:
        return [n.name for n in self._variables()[0]]

    def list_auxiliary_states(self) -> list[str]:
        return [n.name for n in self._variables()[1]]

    def list_inputs(self) -> list[str]:
        return [n.name for n in self._nodes() if n.is_variable()]

    def list_outputs(self) -> list[str]:
        return [entry_name(e) for e in self._heads]

    def get_internals(self) -> Symbol:
        """Every visible output of every node, in topological order (for feature extraction)."""
        heads = []
        for node in self._nodes():
            n_out = 1 if node.is_variable() else num_visible_outputs(node)
            heads += [NodeEntry(node, i) for i in range(n_out)]
        return Symbol(heads)

    def get_children(self) -> Symbol | None:
        inputs = [e for h in self._heads for e in h.node.inputs]
        return Symbol(inputs) if inputs else None

    def __getitem__(self, index: int | str) -> Symbol:
        if isinstance(index, str):
            names = self.list_outputs()
            matches = [i for i, n in enumerate(names) if n == index]
            if not matches:
                raise NNVMError(f"symbol has no output named {index!r}; outputs are {names}")
            index = matches[0]
        if not -len(self._heads) <= index < len(self._heads):
            raise IndexError(f"output index {index} out of range ({len(self._heads)} outputs)")
        return Symbol([self._heads[index]])

    def __len__(self) -> int:
        return len(self._heads)

    def __iter__(self) -> Iterator[Symbol]:
        return (Symbol([h]) for h in self._heads)

    def __repr__(self) -> str:
        name = self.name
        return f"<Symbol {name}>" if name else f"<Symbol group [{', '.join(self.list_outputs())}]>"

    def attr(self, key: str) -> str | None:
        """An attribute of the single node behind this symbol (None when absent)."""
        if len(self._heads) != 1:
            raise NNVMError("attr() needs a symbol with one output")
        d = self._heads[0].node.attrs.dict
        return d.get(key, d.get(hidden_key(key)))

    def list_attr(self) -> dict[str, str]:
        if len(self._heads) != 1:
            raise NNVMError("list_attr() needs a symbol with one output")
        return dict(self._heads[0].node.attrs.dict)

    def attr_dict(self) -> dict[str, dict[str, str]]:
        return {n.name: dict(n.attrs.dict) for n in self._nodes() if n.attrs.dict}

    # -- inference -------------------------------------------------------------------------

    def infer_shape(self, *args: Any, **kwargs: Any) -> tuple[Any, Any, Any]:
        """(arg_shapes, out_shapes, aux_shapes); all None when some shape stays unknown."""
        from .infer import infer_shape

        return infer_shape(self, args, kwargs, partial=False)

    def infer_shape_partial(self, *args: Any, **kwargs: Any) -> tuple[Any, Any, Any]:
        """Like infer_shape, but returns what is known (None for unknown dims and shapes)."""
        from .infer import infer_shape

        return infer_shape(self, args, kwargs, partial=True)

    def infer_type(self, *args: Any, **kwargs: Any) -> tuple[Any, Any, Any]:
        """(arg_types, out_types, aux_types) as numpy dtypes; all None when incomplete."""
        from .infer import infer_type

        return infer_type(self, args, kwargs)

    def infer_type_partial(self, *args: Any, **kwargs: Any) -> tuple[Any, Any, Any]:
        """Like infer_type, but returns what is known (None for unknown dtypes)."""
        from .infer import infer_type

        return infer_type(self, args, kwargs, partial=True)

    # -- serialisation --------------------------------------------------------------------

    def tojson(self) -> str:
        """MXNet's symbol JSON (readable by MXNet 1.x's mx.sym.load_json)."""
        from ..graph import Graph, apply_passes

        graph = apply_passes(Graph(list(self._heads)), ["SaveJSON"])
        return str(graph.attrs["json"])

    def save(self, fname: str) -> None:
        with open(fname, "w") as f:
            f.write(self.tojson())

    # -- binding ---------------------------------------------------------------------------

    def simple_bind(
        self,
        ctx: Any = None,
        grad_req: Any = "write",
        type_dict: Any = None,
        shared_buffer: Any = None,
        **shapes: Any,
    ) -> Any:
        """Allocate every argument, gradient and auxiliary array from shapes, then bind."""
        from ..executor import simple_bind

        return simple_bind(self, ctx, grad_req, type_dict, shapes)

    def bind(
        self,
        ctx: Any,
        args: Any,
        args_grad: Any = None,
        grad_req: Any = "write",
        aux_states: Any = None,
        group2ctx: Any = None,
        shared_exec: Any = None,
    ) -> Any:
        """An executor over arrays the caller owns (list in list_arguments order, or dict)."""
        from ..executor import Executor

        return Executor(self, ctx, args, args_grad, grad_req, aux_states)

    # -- arithmetic ------------------------------------------------------------------------

    def __add__(self, other: Any) -> Symbol:
        return _arith(self, other, "elemwise_add", "_plus_scalar")

    __radd__ = __add__

    def __sub__(self, other: Any) -> Symbol:
        return _arith(self, other, "elemwise_sub", "_minus_scalar")

    def __rsub__(self, other: Any) -> Symbol:
        return _arith(self, other, None, "_rminus_scalar")

    def __mul__(self, other: Any) -> Symbol:
        return _arith(self, other, "elemwise_mul", "_mul_scalar")

    __rmul__ = __mul__

    def __truediv__(self, other: Any) -> Symbol:
        return _arith(self, other, "elemwise_div", "_div_scalar")

    def __rtruediv__(self, other: Any) -> Symbol:
        return _arith(self, other, None, "_rdiv_scalar")

    def __pow__(self, other: Any) -> Symbol:
        return _arith(self, other, None, "_power_scalar")

    def __rpow__(self, other: Any) -> Symbol:
        return _arith(self, other, None, "_rpower_scalar")

    def __neg__(self) -> Symbol:
        return compose(Op.get("negative"), [self], {}, None)

    def __copy__(self) -> Symbol:
        return Symbol(self._heads)

    def __deepcopy__(self, memo: Any) -> Symbol:
        return load_json(self.tojson())


def _arith(lhs: Symbol, rhs: Any, same: str | None, scalar: str) -> Symbol:
    if isinstance(rhs, Symbol):
        if same is None:
            raise NNVMError(f"{scalar}: the operand must be a scalar, got a Symbol")
        return compose(Op.get(same), [lhs, rhs], {}, None)
    if isinstance(rhs, int | float | np.number):
        return compose(Op.get(scalar), [lhs], {"scalar": float(rhs)}, None)
    return NotImplemented


# -- naming helpers --------------------------------------------------------------------------

# attribute names MXNet stores as __name__ (c_api_symbolic.cc kHiddenKeys)
HIDDEN_KEYS = ("ctx_group", "lr_mult", "wd_mult", "force_mirroring", "mirror_stage")


def hidden_key(key: str) -> str:
    """`lr_mult` -> `__lr_mult__` for MXNet's hidden attribute names; others unchanged."""
    return f"__{key}__" if key in HIDDEN_KEYS else key


def num_visible_outputs(node: Node) -> int:
    op = node.op
    fn = op.get_attr(FNumVisibleOutputs) if op is not None else None
    return int(fn(node.attrs)) if fn is not None else node.num_outputs()


def output_names(node: Node) -> list[str]:
    """The output names of a node's op, e.g. ['output'] or ['output0', 'output1']."""
    op = node.op
    if op is None:
        return [node.name]
    fn = op.get_attr(FListOutputNames)
    if fn is not None:
        return list(fn(node.attrs))
    n = node.num_outputs()
    return ["output"] if n == 1 else [f"output{i}" for i in range(n)]


def entry_name(entry: NodeEntry) -> str:
    if entry.node.is_variable():
        return entry.node.name
    return f"{entry.node.name}_{output_names(entry.node)[entry.index]}"


def input_names(op: Op, attrs: NodeAttrs, n_in: int) -> list[str]:
    fn = op.get_attr(FListInputNames)
    names = list(fn(attrs)) if fn is not None else []
    if len(names) < n_in:
        if n_in == 1 and not names:
            return ["data"]
        names += [f"arg{i}" for i in range(len(names), n_in)]
    return names[:n_in]


# -- composition ---------------------------------------------------------------------------


def compose(
    op: Op,
    args: Sequence[Any],
    kwargs: dict[str, Any],
    name: str | None,
    attr: Mapping[str, str] | None = None,
) -> Symbol:
    """Apply `op` to symbols: positional and keyword inputs, params, missing-input variables."""
    symbol_kwargs = {k: v for k, v in kwargs.items() if isinstance(v, Symbol)}
    params = {k: v for k, v in kwargs.items() if not isinstance(v, Symbol)}
    for i, a in enumerate(args):
        if not isinstance(a, Symbol):
            raise NNVMError(
                f"{op.name}: positional input {i} must be a Symbol, got "
                f"{type(a).__name__}; pass parameters by keyword"
            )
    if op.key_var_num_args and params.get(op.key_var_num_args) is None:
        params[op.key_var_num_args] = len(args)
    node_name = NameManager.get(name, op.name)
    # as MXNet's SetAttrs: attr= joins the node's dict and is parsed with it, so what
    # the op accepts here is what LoadJSON accepts later
    extra = {hidden_key(k): str(v) for k, v in (attr or {}).items()}
    attrs = op.parse_attrs({**params, **extra}, node_name)
    n_in = op.get_num_inputs(attrs)
    names = input_names(op, attrs, n_in)
    inputs: list[NodeEntry | None] = [None] * n_in
    if len(args) > n_in:
        raise NNVMError(f"{op.name}: takes {n_in} inputs ({names}), got {len(args)}")
    for i, a in enumerate(args):
        inputs[i] = _single_head(op, a, names[i])
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
            var = Node.variable(f"{node_name}_{names[i]}")
            if set_var_attr is not None:
                set_var_attr(attrs, var, i)
            inputs[i] = NodeEntry(var, 0)
    node = Node(attrs, [e for e in inputs if e is not None])
    return Symbol([NodeEntry(node, i) for i in range(num_visible_outputs(node))])


def _single_head(op: Op, sym: Symbol, input_name: str) -> NodeEntry:
    if len(sym._heads) != 1:
        raise NNVMError(
            f"{op.name}: input {input_name!r} must have one output, but the given "
            f"symbol has {len(sym._heads)} ({sym.list_outputs()}); select one "
            f"with sym[i]"
        )
    return sym._heads[0]


def Variable(
    name: str,
    attr: Mapping[str, str] | None = None,
    shape: Any = None,
    lr_mult: float | None = None,
    wd_mult: float | None = None,
    dtype: Any = None,
    init: Any = None,
    stype: Any = None,
    **kwargs: Any,
) -> Symbol:
    """A named input of a graph, optionally with its shape and dtype (MXNet's sym.Variable)."""
    if not isinstance(name, str) or not name:
        raise NNVMError(f"Variable needs a non-empty string name, got {name!r}")
    attrs: dict[str, str] = {hidden_key(k): str(v) for k, v in (attr or {}).items()}
    if shape is not None:
        from ..registry import _attr_str

        attrs["__shape__"] = _attr_str(tuple(shape))
    if dtype is not None:
        attrs["__dtype__"] = str(DTYPE_FLAGS[as_dtype(dtype)])
    if lr_mult is not None:
        attrs["__lr_mult__"] = str(lr_mult)
    if wd_mult is not None:
        attrs["__wd_mult__"] = str(wd_mult)
    if init is not None:
        attrs["__init__"] = init if isinstance(init, str) else json.dumps(init)
    for k, v in kwargs.items():
        if not (k.startswith("__") and k.endswith("__")):
            raise NNVMError(
                f"Variable {name!r}: unknown attribute {k!r}; extra attributes "
                f"must look like __name__"
            )
        attrs[k] = str(v)
    return Symbol([NodeEntry(Node.variable(name, attrs), 0)])


var = Variable


def Group(symbols: Sequence[Symbol]) -> Symbol:
    """One symbol whose outputs are the outputs of all the given symbols, in order."""
    heads: list[NodeEntry] = []
    for s in symbols:
        if not isinstance(s, Symbol):
            raise NNVMError(f"Group expects Symbols, got {type(s).__name__}")
        heads += s._heads
    return Symbol(heads)


def load_json(json_str: str) -> Symbol:
    """A symbol from MXNet's JSON format (files saved by MXNet 1.x load too)."""
    from ..graph import Graph, apply_passes

    graph = apply_passes(Graph([]), ["LoadJSON"], json=json_str)
    return Symbol(graph.outputs)


def load(fname: str) -> Symbol:
    with open(fname) as f:
        return load_json(f.read())
