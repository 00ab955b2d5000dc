"""Symbol: a handle on some outputs of a computation graph, composed op by op.

A Symbol is a list of NodeEntry heads; building symbols is compose.py's job, operators
(`+`, `<`, ...) are arith.py's. Everything else — inference, JSON, binding — hands the
heads to graph passes or the executor. Copies (`copy.copy`, `deepcopy`, pickling through
the JSON) are whole new graphs, as in MXNet, so `_set_attr` on a copy leaves the
original alone.
"""

from __future__ import annotations

import ctypes
import os
from collections.abc import Iterator, Sequence
from typing import Any

from ..attrs import FListOutputNames, FMutateInputs, FNumVisibleOutputs
from ..base import NNVMError, NotImplementedForSymbol, current_context
from ..graph.node import Node, NodeEntry, post_order
from .arith import SymbolArithmetic
from .attr_keys import lookup, string_attrs, with_plain_aliases


class Symbol(SymbolArithmetic):
    """Some outputs of a graph; compose with nv.sym ops, bind to run."""

    __slots__ = ("__weakref__", "_heads")

    def __init__(self, heads: Sequence[NodeEntry] | ctypes.c_void_p) -> None:
        if isinstance(heads, ctypes.c_void_p):  # MXNet's Symbol(handle), e.g. from _LIB
            from nnvmpy.capi import take

            source: Symbol = take(heads, Symbol, "Symbol(handle)")
            heads = source._heads
        self._heads: list[NodeEntry] = list(heads)

    @property
    def handle(self) -> ctypes.c_void_p:
        """A SymbolHandle naming this symbol, for MXNet's C-API calls (nnvmpy.capi)."""
        from nnvmpy.capi import handle_for

        return handle_for(self)

    # -- structure ----------------------------------------------------------------------------

    @property
    def name(self) -> str | None:
        """The name of the node behind every output (None for a group of several nodes)."""
        nodes = {id(h.node) for h in self._heads}
        return self._heads[0].node.name if len(nodes) == 1 else None

    def _nodes(self) -> list[Node]:
        return post_order(self._heads)

    def _variables(self) -> tuple[list[Node], list[Node]]:
        """(arguments, auxiliary states), each in graph order."""
        nodes = self._nodes()
        mutable: set[int] = set()
        for node in nodes:
            fn = node.op.get_attr(FMutateInputs) if node.op is not None else None
            for i in fn(node.attrs) if fn is not None else ():
                if i < len(node.inputs) and node.inputs[i].node.is_variable():
                    mutable.add(id(node.inputs[i].node))
        variables = [n for n in nodes if n.is_variable()]
        return (
            [n for n in variables if id(n) not in mutable],
            [n for n in variables if id(n) in mutable],
        )

    def _input_names(self) -> tuple[list[str], list[str]]:
        """(list_arguments(), list_auxiliary_states()) from one walk of the graph: a
        caller that needs both on a large graph (binding) walks it once, not twice."""
        args, aux = self._variables()
        return [n.name for n in args], [n.name for n in aux]

    def list_arguments(self) -> list[str]:
        return [n.name for n in self._variables()[0]]

    def list_auxiliary_states(self) -> list[str]:
        return [n.name for n in self._variables()[1]]

    def list_inputs(self) -> list[str]:
        """Every variable (arguments and auxiliary states) in graph order."""
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
        """The inputs of the nodes behind this symbol (None for a variable)."""
        seen: set[int] = set()
        inputs: list[NodeEntry] = []
        for h in self._heads:
            if id(h.node) not in seen:
                seen.add(id(h.node))
                inputs += h.node.inputs
        return Symbol(inputs) if inputs else None

    def __getitem__(self, index: int | str | slice) -> Symbol:
        if isinstance(index, slice):
            return Symbol([self._heads[i] for i in range(*index.indices(len(self._heads)))])
        if isinstance(index, str):
            matches = [i for i, n in enumerate(self.list_outputs()) if n == index]
            if len(matches) != 1:
                what = "no output" if not matches else "several outputs"
                raise NNVMError(
                    f"Symbol: {what} named {index!r}; outputs are {self.list_outputs()}"
                )
            index = matches[0]
        if not isinstance(index, int) or isinstance(index, bool):
            raise NNVMError(
                f"Symbol: an output is selected by int, name or slice, got {type(index).__name__}"
            )
        if not -len(self._heads) <= index < len(self._heads):
            raise IndexError(f"Symbol: output {index} out of range ({len(self._heads)} outputs)")
        return Symbol([self._heads[index]])

    def __len__(self) -> int:
        return len(self._heads)

    def __iter__(self) -> Iterator[Symbol]:
        return (Symbol([h]) for h in self._heads)

    def __bool__(self) -> bool:
        raise NotImplementedForSymbol(self.__bool__, "bool")

    # MXNet's Symbol refuses the NDArray-only in-place arithmetic (no `s = s + 1` fallback)
    def __iadd__(self, other: Any) -> Symbol:
        raise NotImplementedForSymbol(self.__iadd__, "+=", other, 1)

    def __isub__(self, other: Any) -> Symbol:
        raise NotImplementedForSymbol(self.__isub__, "-=", other)

    def __imul__(self, other: Any) -> Symbol:
        raise NotImplementedForSymbol(self.__imul__, "*=", other)

    def __itruediv__(self, other: Any) -> Symbol:
        raise NotImplementedForSymbol(self.__itruediv__, "/=", other)

    def as_nd_ndarray(self) -> Symbol:
        """This symbol (MXNet's conversion between legacy and numpy symbols)."""
        return self

    __hash__ = object.__hash__  # == builds a comparison symbol, so hashing is by identity

    def __repr__(self) -> str:
        name = self.name
        return f"<Symbol {name}>" if name else f"<Symbol group [{', '.join(self.list_outputs())}]>"

    # -- attributes ---------------------------------------------------------------------------

    def _single_node(self) -> Node | None:
        nodes = {id(h.node): h.node for h in self._heads}
        if len(nodes) != 1:
            return None
        return self._heads[0].node

    def attr(self, key: str) -> str | None:
        """An attribute of the node behind this symbol (`name` and `op_name` too); None if
        absent or if the outputs come from several nodes."""
        node = self._single_node()
        if node is None:
            return None
        if key == "name":
            return node.name
        if key == "op_name":
            return node.op.name if node.op is not None else "null"
        return lookup(node.attrs.dict, key)

    def list_attr(self, recursive: bool = False) -> dict[str, str]:
        """The attributes of the (first) node behind this symbol; hidden keys both ways."""
        if recursive:
            raise NNVMError(
                "Symbol.list_attr(recursive=True) is deprecated in MXNet; use attr_dict()"
            )
        return with_plain_aliases(self._heads[0].node.attrs.dict) if self._heads else {}

    def attr_dict(self) -> dict[str, dict[str, str]]:
        """{node name: its attributes} for every node with attributes in the graph."""
        return {n.name: with_plain_aliases(n.attrs.dict) for n in self._nodes() if n.attrs.dict}

    def _set_attr(self, **kwargs: str) -> None:
        """Set string attributes on the node behind this symbol (re-parsed for op nodes)."""
        node = self._single_node()
        if node is None:
            raise NNVMError("Symbol._set_attr only works on a symbol whose outputs share one node")
        values = string_attrs(kwargs, f"Symbol._set_attr on {node.name!r}")
        if "name" in values:
            node.attrs.name = values.pop("name")
        if node.op is not None:
            parsed = node.op.parse_attrs({**node.attrs.dict, **values}, node.name)
            node.attrs.parsed = parsed.parsed
        node.attrs.dict.update(values)

    # -- copies ---------------------------------------------------------------------------------

    def __copy__(self) -> Symbol:
        from nnvmpy.symbol.compose import copy_heads

        return Symbol(copy_heads(self._heads))

    def __deepcopy__(self, memo: Any) -> Symbol:
        return self.__copy__()

    def __getstate__(self) -> dict[str, Any]:
        return {"handle": self.tojson()}

    def __setstate__(self, state: dict[str, Any]) -> None:
        """Become the symbol in state['handle'] (its JSON): unpickling runs no code."""
        if not isinstance(state, dict):
            raise NNVMError(f"Symbol.__setstate__: expected a dict, got {type(state).__name__}")
        handle = state.get("handle")
        if handle is not None and not isinstance(handle, str):
            raise NNVMError(
                f"Symbol.__setstate__: state['handle'] should be the symbol's JSON string, "
                f"got {type(handle).__name__}"
            )
        self._heads = load_json(handle)._heads if handle else []

    # -- composition by call ----------------------------------------------------------------

    def __call__(self, *args: Symbol, **kwargs: Any) -> Symbol:
        """A copy with variables replaced: `net2(data=net1)` or `net2(net1)`."""
        s = self.__copy__()
        s._compose(*args, **kwargs)
        return s

    def _compose(self, *args: Symbol, **kwargs: Any) -> None:
        """Replace this graph's variables in place (positional: list_inputs() order)."""
        from nnvmpy.symbol.compose import compose_graph

        name = kwargs.pop("name", None)
        compose_graph(self, args, kwargs, name)

    def _gen_atomic_symbol(self) -> Symbol:
        """A new node of this symbol's op and attributes, with fresh input variables."""
        node = self._single_node()
        if node is None or node.op is None:
            raise NNVMError("_gen_atomic_symbol needs a symbol made by one op")
        from nnvmpy.symbol.compose import compose

        return compose(node.op, [], dict(node.attrs.dict), node.name)

    # -- inference ------------------------------------------------------------------------------

    def infer_shape(self, *args: Any, **kwargs: Any) -> tuple[Any, Any, Any]:
        """(arg_shapes, out_shapes, aux_shapes), or (None, None, None) when some shape
        stays unknown. Shapes in and out use MXNet's convention: 0 is an unknown dim."""
        from nnvmpy.symbol.infer import infer_shape

        return infer_shape(self, args, kwargs, partial=False)

    def infer_shape_partial(self, *args: Any, **kwargs: Any) -> tuple[Any, Any, Any]:
        """Like infer_shape, but returns what is known: 0 dims, and () for unknown shapes."""
        from nnvmpy.symbol.infer import infer_shape

        return infer_shape(self, args, kwargs, partial=True)

    def infer_type(self, *args: Any, **kwargs: Any) -> tuple[Any, Any, Any]:
        """(arg_types, out_types, aux_types) as numpy types; all None when incomplete."""
        from nnvmpy.symbol.infer import infer_type

        return infer_type(self, args, kwargs)

    def infer_type_partial(self, *args: Any, **kwargs: Any) -> tuple[Any, Any, Any]:
        """Like infer_type, but returns what is known (None for unknown types)."""
        from nnvmpy.symbol.infer import infer_type

        return infer_type(self, args, kwargs, partial=True)

    # -- serialisation ------------------------------------------------------------------------

    def tojson(self, remove_amp_cast: bool = True) -> str:
        """MXNet's symbol JSON (readable by MXNet 1.x's mx.sym.load_json)."""
        from nnvmpy.graph import Graph, apply_passes
        from nnvmpy.util import is_np_shape

        attrs = {"is_np_shape": 1} if is_np_shape() else {}
        graph = apply_passes(Graph(list(self._heads), attrs), ["SaveJSON"])
        return str(graph.attrs["json"])

    def save(self, fname: str, remove_amp_cast: bool = True) -> None:
        with open(fname, "w") as f:
            f.write(self.tojson())

    def debug_str(self) -> str:
        """The graph as text: outputs, then each variable and op with inputs and attributes."""
        from nnvmpy.symbol.debug import symbol_debug_str

        return symbol_debug_str(self)

    # -- binding ----------------------------------------------------------------------------

    def simple_bind(
        self,
        ctx: Any = None,
        grad_req: Any = "write",
        type_dict: Any = None,
        stype_dict: Any = None,
        group2ctx: Any = None,
        shared_arg_names: Any = None,
        shared_exec: Any = None,
        shared_buffer: Any = None,
        **kwargs: Any,
    ) -> Any:
        """Allocate every argument, gradient and auxiliary array from shapes, then bind."""
        from nnvmpy.executor import simple_bind

        return simple_bind(
            self,
            ctx,
            grad_req,
            type_dict,
            kwargs,
            group2ctx=group2ctx,
            shared_arg_names=shared_arg_names,
            shared_exec=shared_exec,
            shared_buffer=shared_buffer,
        )

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
        from nnvmpy.executor import Executor

        return Executor(self, ctx, args, args_grad, grad_req, aux_states, group2ctx, shared_exec)

    def optimize_for(
        self,
        backend: str,
        args: Any = None,
        aux: Any = None,
        ctx: Any = None,
        shape_dict: Any = None,
        type_dict: Any = None,
        stype_dict: Any = None,
        skip_infer: bool = False,
        **kwargs: Any,
    ) -> Symbol:
        """This symbol rewritten by a graph backend: 'fuse' runs FusePointwise (one
        generated kernel per element-wise group; docs/fusion.md); 'default' and
        'default_v2' group the ops named by MXSetSubgraphPropertyOpNamesV2 into
        `_CachedOp` subgraph nodes (passes/partition.py).

        MXNet 1.9's signature: shapes and dtypes come from the `args` / `aux` arrays and,
        for inputs without one, from `shape_dict` / `type_dict` (`stype_dict` is checked;
        nnvmpy stores every array densely); `skip_infer=True` optimizes the untyped graph.
        Other keyword arguments go to the backend, which ignores what it does not know."""
        from nnvmpy.fusion.api import optimize_for
        from nnvmpy.symbol.optimize import check_dicts, input_specs

        shapes, dtypes = check_dicts(shape_dict, type_dict, stype_dict)
        if skip_infer:
            args = aux = None
        elif shapes or dtypes:
            args, aux = input_specs(self, args, aux, shapes, dtypes)
        return optimize_for(self, backend, args, aux, ctx, **kwargs)

    def get_backend_symbol(self, backend: str) -> Symbol:
        """This symbol partitioned by a subgraph backend (MXNet's MXGenBackendSubgraph):
        'default' / 'default_v2' group the op names registered for them (none registered:
        an unchanged copy); 'fuse' fuses element-wise groups."""
        from nnvmpy.passes.partition import SUBGRAPH_BACKENDS, subgraph_op_names

        if backend in SUBGRAPH_BACKENDS and subgraph_op_names(backend) is None:
            return self.__copy__()
        return self.optimize_for(backend)

    def gradient(self, wrt: Sequence[str]) -> Symbol:
        """A symbol whose outputs are the gradients of this symbol's outputs with respect
        to the arguments named in `wrt`, one each: d(sum of all outputs)/d(arg), every
        head gradient ones (a loss op, e.g. SoftmaxOutput, uses its own). Its arguments
        are those the gradients read. MXNet 1.x declares this and raises "not
        implemented"; nnvmpy builds it with the Gradient pass."""
        from nnvmpy.graph import Graph, apply_passes

        if isinstance(wrt, str) or not all(isinstance(n, str) for n in wrt):
            raise NNVMError(f"Symbol.gradient: wrt must be a list of argument names, got {wrt!r}")
        variables = {n.name: n for n in self._variables()[0]}
        unknown = [n for n in wrt if n not in variables]
        if unknown:
            raise NNVMError(
                f"Symbol.gradient: {unknown} are not arguments of this symbol; "
                f"its arguments are {list(variables)}"
            )
        ones = [NodeEntry(_ones_like(h, k)) for k, h in enumerate(self._heads)]
        graph = apply_passes(
            Graph(list(self._heads)),
            ["Gradient"],
            grad_ys=list(self._heads),
            grad_xs=[NodeEntry(variables[n]) for n in wrt],
            grad_ys_out_grad=ones,
        )
        return Symbol(graph.outputs)

    def eval(self, ctx: Any = None, **kwargs: Any) -> list[Any]:
        """Bind to the given NDArrays (by argument name) and run forward once."""
        exe = self.bind(ctx if ctx is not None else current_context(), kwargs)
        return list(exe.forward())


def _ones_like(head: NodeEntry, k: int) -> Node:
    from nnvmpy.graph.grad import make_node

    return make_node("ones_like", f"{head.node.name}_head_grad{k}", [head])


def _ndarray_only(name: str) -> Any:
    def method(self: Symbol, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedForSymbol(getattr(self, name), None)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = "NDArray only: raises NotImplementedForSymbol, as MXNet's Symbol does."
    return method


for _name in ("as_in_context", "asnumpy", "asscalar", "backward", "copy", "detach", "wait_to_read"):
    setattr(Symbol, _name, _ndarray_only(_name))


# -- names of nodes and outputs -----------------------------------------------------------------


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


def load_json(json_str: str) -> Symbol:
    """A symbol from MXNet's JSON format (files saved by MXNet 1.x load too)."""
    from nnvmpy.graph import Graph, apply_passes

    if not isinstance(json_str, str):
        raise NNVMError(f"load_json: expected a JSON string, got {type(json_str).__name__}")
    graph = apply_passes(Graph([]), ["LoadJSON"], json=json_str)
    return Symbol(graph.outputs)


def load(fname: str) -> Symbol:
    """A symbol from a JSON file written by `save` (or by MXNet).

    Any problem with the file (missing, unreadable, not UTF-8, malformed) raises
    NNVMError naming it.
    """
    if not isinstance(fname, str | os.PathLike):
        raise NNVMError(f"sym.load: fname must be a path, got {type(fname).__name__}")
    path = os.fspath(fname)
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError) as e:
        raise NNVMError(f"sym.load: cannot read {path!r}: {e}") from None
    try:
        return load_json(text)
    except NNVMError as e:
        raise _with_source(e, f"sym.load({path!r})") from e


def _with_source(e: NNVMError, source: str) -> NNVMError:
    """The same kind of error, its message prefixed with the file it came from."""
    msg = f"{source}: {e}"
    try:
        return type(e)(msg)
    except Exception:  # a subclass with another constructor signature
        return NNVMError(msg)


def __getattr__(name: str) -> Any:
    """Names that moved to compose.py, still importable from here."""
    if name in ("compose", "Variable", "var", "Group"):
        from nnvmpy.symbol import compose

        return getattr(compose, name)
    if name == "NameManager":
        from nnvmpy.name import NameManager

        return NameManager
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "Symbol",
    "entry_name",
    "load",
    "load_json",
    "num_visible_outputs",
    "output_names",
]
