"""IDE and type-checker stubs (.pyi) for the generated namespaces, from the op registry.

nv.nd, nv.sym and their linalg/contrib sub-namespaces create their op functions on
access (PEP 562), so neither an IDE nor mypy can see `nv.nd.Convolution`. This module
writes a `.pyi` beside each of those modules: the module's own names re-exported from
where they are defined, then one `def` per op with the op's real signature (the one
signature.py gives the runtime function) typed from its Parameter fields, and its
docstring. `nnvmpy stubs` regenerates them; tests/test_stubs.py fails when they are stale.
nv.nd.random / nv.sym.random are hand-written Python and need no stub.
"""

from __future__ import annotations

import importlib
import inspect
import keyword
import math
import pkgutil
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from .attrs import FNumVisibleOutputs
from .param import Field, FloatTuple, IntOrNoneTuple, Shape
from .registry import Op
from .signature import OpNamespace


@dataclass(frozen=True)
class StubTarget:
    """One generated namespace: its module and the array type its ops take and return."""

    module: str
    array: str  # "NDArray" or "Symbol"
    array_module: str  # where `array` is defined

    def path(self) -> Path:
        file = importlib.import_module(self.module).__file__
        assert file is not None
        return Path(file).with_suffix(".pyi")


_ND = ("NDArray", "nnvmpy.ndarray.ndarray")
_SYM = ("Symbol", "nnvmpy.symbol.symbol")


def targets() -> list[StubTarget]:
    """nv.nd, nv.sym and each of their public submodules that serves ops (linalg, contrib,
    image, ...: found by their OpNamespace, so a new sub-namespace gets a stub too)."""
    load_all_ops()
    found = []
    for base, array in (("nnvmpy.ndarray", _ND), ("nnvmpy.symbol", _SYM)):
        package = importlib.import_module(base)
        found.append(StubTarget(base, *array))
        for info in pkgutil.iter_modules(package.__path__):
            if info.name.startswith("_"):
                continue
            module = importlib.import_module(f"{base}.{info.name}")
            if isinstance(getattr(module, "_ops", None), OpNamespace):
                found.append(StubTarget(module.__name__, *array))
    return found


_HEADER = '''"""Type stubs for {module}, generated from the op registry by `nnvmpy stubs`.

Do not edit: `nnvmpy stubs` rewrites this file.
"""

from typing import Any, Literal, TypeAlias

import numpy as np

from {array_module} import {array} as {array}
'''

_ALIASES = """_Shape: TypeAlias = tuple[int, ...] | list[int] | int
_FloatTuple: TypeAlias = tuple[float, ...] | list[float] | float
_IntOrNoneTuple: TypeAlias = tuple[int | None, ...] | list[int | None]
"""

_TYPES: dict[Any, str] = {
    int: "int",
    float: "float",
    bool: "bool | int",
    str: "str",
    Shape: "_Shape",
    tuple[int, ...]: "_Shape",
    FloatTuple: "_FloatTuple",
    tuple[float, ...]: "_FloatTuple",
    IntOrNoneTuple: "_IntOrNoneTuple",
    tuple[int | None, ...]: "_IntOrNoneTuple",
}


def field_annotation(name: str, fld: Field) -> str:
    """The type a caller may pass for a Parameter field ('dtype' fields also take numpy's)."""
    if fld.enum is not None:
        # the choices show in the IDE; any str passes, as a variable holding one is common
        text = "Literal[" + ", ".join(repr(v) for v in sorted(fld.enum)) + "] | str"
        if "dtype" in name:
            text += " | type | np.dtype[Any]"
    else:
        text = _TYPES.get(fld.type, "Any")
    return text + " | None" if fld.optional else text


def _literal(value: Any) -> str:
    """A default as stub source: a short literal, else `...` (the stub convention)."""
    if value is None or isinstance(value, bool | int | str):
        text = repr(value)
    elif isinstance(value, float):
        text = repr(value) if math.isfinite(value) else "..."
    elif isinstance(value, tuple) and all(isinstance(v, int | float | None) for v in value):
        text = repr(tuple(value))
    else:
        text = "..."
    return text if len(text) <= 40 else "..."


def _docstring(doc: str, indent: str) -> str:
    # the file without the line: a stub goes stale when the op changes, not its neighbours
    doc = re.sub(r"Defined at (\S+?):\d+\.", r"Defined in \1.", doc)
    body = doc.replace("\\", "\\\\").replace('"""', '\\"\\"\\"').strip()
    lines = [indent + line if line else "" for line in body.splitlines()]
    return f'{indent}"""{lines[0].lstrip()}\n' + "\n".join(lines[1:]) + f'\n{indent}"""'


def _returns(op: Op, array: str) -> str:
    """One array for an op with one visible output; Any where the count depends on params."""
    if array == "Symbol":
        return "Symbol"
    fixed = not callable(op.num_outputs) and op.num_outputs == 1
    return array if fixed and op.get_attr(FNumVisibleOutputs) is None else "Any"


def _stub_parameters(op: Op, fn: Any) -> list[inspect.Parameter]:
    """The runtime signature, with every input the op declares (MXNet's NDArray-or-Symbol
    arguments) as a positional-or-keyword parameter: nd.RNN(data=..., parameters=...) and
    softmax's optional `length` are accepted at run time though the signature shows
    `*data` or only `data`. Truly variadic ops (Concat's NDArray-or-Symbol[]) keep *data."""
    params = list(inspect.signature(fn).parameters.values())
    declared = [a for a in op.arguments if a.type_info.startswith("NDArray-or-Symbol")]
    if not declared or op.key_var_num_args or any(a.type_info.endswith("[]") for a in declared):
        return params
    names = [a.name for a in declared]
    rest = [
        p
        for p in params
        if p.kind not in (p.VAR_POSITIONAL, p.POSITIONAL_OR_KEYWORD) and p.name not in names
    ]
    P = inspect.Parameter
    return [P(n, P.POSITIONAL_OR_KEYWORD, default=None) for n in names] + rest


def op_stub(name: str, fn: Any, op: Op, array: str) -> str:
    """`def name(...) -> ...:` with the docstring, for the runtime op function `fn`."""
    fields = op.param_cls.field_specs() if op.param_cls is not None else {}
    parts: list[str] = []
    star = False
    for p in _stub_parameters(op, fn):
        if not p.name.isidentifier() or keyword.iskeyword(p.name):
            return ""
        if p.kind is p.VAR_POSITIONAL:
            parts.append(f"*{p.name}: {array}")
            star = True
            continue
        if p.kind is p.VAR_KEYWORD:
            parts.append(f"**{p.name}: Any")
            continue
        if p.kind is p.KEYWORD_ONLY and not star:
            parts.append("*")
            star = True
        if p.name in fields:
            ann = field_annotation(p.name, fields[p.name])
        elif p.kind is p.POSITIONAL_OR_KEYWORD:
            ann = f"{array} | None"  # an input
        elif p.name == "out":
            ann = f"{array} | list[{array}] | None"
        elif p.name == "attr":
            ann = "dict[str, str] | None"
        else:
            ann = "str | None" if p.name == "name" else "Any"
        default = "" if p.default is p.empty else " = " + _literal(p.default)
        if default == " = None" and not ann.endswith("None") and "Any" not in ann:
            ann += " | None"  # a key_var_num_args count, counted from the inputs
        parts.append(f"{p.name}: {ann}{default}")
    head = f"def {name}(\n" + "".join(f"    {part},\n" for part in parts)
    return head + f") -> {_returns(op, array)}:\n" + _docstring(fn.__doc__ or "", "    ")


def _reexport(name: str, value: Any, target: StubTarget) -> str | None:
    """An import line re-exporting a hand-written global, or None to leave it out."""
    if isinstance(value, ModuleType):
        parent, _, last = value.__name__.rpartition(".")
        if not value.__name__.startswith("nnvmpy."):
            return None
        return f"from {parent} import {last} as {name}"
    home = getattr(value, "__module__", None)
    own = getattr(value, "__name__", None)
    if home and own and home != target.module and home.startswith("nnvmpy"):
        module = sys.modules.get(home)
        if module is not None and getattr(module, name, None) is value:
            # `import X as X`: a stub re-exports a name only when imported as itself, so
            # an alias (sym.var, compose's own `var = Variable`) keeps its own name
            return f"from {home} import {name} as {name}"
        if module is not None and getattr(module, own, None) is value:
            return f"from {home} import {own} as {name}"
    if callable(value):
        try:
            params = inspect.signature(value).parameters.values()
        except (TypeError, ValueError):
            return f"{name}: Any"
        return f"def {name}({_any_params(params)}) -> Any: ..."
    return f"{name}: Any"


def _any_params(params: Any) -> str:
    """A hand-written function's parameters, kinds and names kept, every type Any."""
    out, star = [], False
    for p in params:
        if p.kind is p.VAR_POSITIONAL:
            out.append(f"*{p.name}: Any")
            star = True
        elif p.kind is p.VAR_KEYWORD:
            out.append(f"**{p.name}: Any")
        else:
            if p.kind is p.KEYWORD_ONLY and not star:
                out.append("*")
                star = True
            out.append(f"{p.name}: Any" + ("" if p.default is p.empty else " = ..."))
    return ", ".join(out)


def _own_names(module: ModuleType, array: str) -> list[str]:
    """The hand-written names a stub keeps: __all__, the submodules, the module's own
    functions and its _private names (internal code imports some of them)."""
    public = set(getattr(module, "__all__", ()))
    ops = getattr(module, "_ops", None)
    published = ops.published if ops is not None else set()
    keep = []
    for name, value in vars(module).items():
        if name.startswith("__") or name in published or name == "_ops" or name == array:
            continue
        defined_here = getattr(value, "__module__", None) == module.__name__
        if name in public or defined_here or name.startswith("_") or isinstance(value, ModuleType):
            keep.append(name)
    return sorted(keep)


def render(target: StubTarget) -> str:
    """The full text of the target's .pyi."""
    module = importlib.import_module(target.module)
    header = _HEADER.format(
        module=target.module, array=target.array, array_module=target.array_module
    )
    own = _own_names(module, target.array)
    lines = []
    for name in own:
        line = _reexport(name, vars(module)[name], target)
        if line is not None:
            lines.append(line)
    defs = []
    namespace = module._ops
    for name in sorted(set(namespace.names()) - set(own)):
        if not name.isidentifier() or keyword.iskeyword(name):
            continue
        fn = namespace.get(name)
        text = op_stub(name, fn, fn._op, target.array)
        if text:
            defs.append(text)
    own_lines = "\n".join(lines)
    return f"{header}{own_lines}\n\n{_ALIASES}\n" + "\n\n".join(defs) + "\n"


def load_all_ops() -> None:
    """Import every part of nnvmpy that registers ops (nv.operator's Custom, rnn, ...)."""
    import nnvmpy
    from nnvmpy.fusion.fused_op import fused_op

    for name in nnvmpy._LAZY:
        getattr(nnvmpy, name)
    fused_op()  # _FusedOp is registered by the first bind that fuses: document it always


def write_stubs(only: list[StubTarget] | None = None) -> list[Path]:
    """Regenerate every stub; returns the paths written."""
    written = []
    for target in only or targets():
        path = target.path()
        path.write_text(render(target))
        written.append(path)
    return written


def stale_stubs(only: list[StubTarget] | None = None) -> list[Path]:
    """The stubs whose file differs from what the registry gives now."""
    stale = []
    for target in only or targets():
        path = target.path()
        if not path.exists() or path.read_text() != render(target):
            stale.append(path)
    return stale
