"""The graph pass registry: named functions Graph -> Graph with declared attribute contracts.

NNVM's pass.h/pass.cc in Python. A pass declares the graph attributes it `requires` and
`provides` and the op attributes it reads (`op_attrs`, for docs and `list_passes`);
`apply_passes` checks the contract before each pass, so a pipeline in the wrong order fails
with the fix in the message instead of a KeyError deep inside the pass.

Keyword inputs of `apply_passes` become graph attributes before the first pass runs, under
their own names (`shape_inputs=[...]`, `grad_xs=[...]`, `external_entry_ids=[...]`, see
graph/attrs.py). Two spellings are conveniences: `shapes={"x": (2, 3)}` is `shape_hints`
and `dtypes={"x": "float32"}` is `dtype_hints` — shapes and dtypes by variable name.
"""

from __future__ import annotations

import difflib
import importlib
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from ..attrs import AttrKey
from ..base import NNVMError
from .attrs import DTYPE_HINTS, SHAPE_HINTS
from .graph import Graph

PassFn = Callable[[Graph], Graph]

#: apply_passes keywords that are spelled differently from their graph attribute.
INPUT_ALIASES = {"shapes": SHAPE_HINTS, "dtypes": DTYPE_HINTS}


@dataclass(frozen=True)
class PassInfo:
    """A registered pass and its contract."""

    name: str
    fn: PassFn
    requires: tuple[str, ...]
    provides: tuple[str, ...]
    op_attrs: tuple[str, ...]
    source: str

    @property
    def doc(self) -> str:
        return (self.fn.__doc__ or "").strip()


_PASSES: dict[str, PassInfo] = {}


def register_pass(
    name: str,
    *,
    requires: Sequence[str] = (),
    provides: Sequence[str] = (),
    op_attrs: Sequence[AttrKey[Any] | str] = (),
) -> Callable[[PassFn], PassFn]:
    """Decorator registering `fn(graph) -> graph` as the pass `name` (NNVM_REGISTER_PASS)."""

    def decorate(fn: PassFn) -> PassFn:
        source = f"{fn.__module__}.{fn.__qualname__}"
        old = _PASSES.get(name)
        if old is not None and old.source != source:  # same source: a module reload
            raise NNVMError(
                f"graph pass {name!r} is already registered by {old.source}; "
                f"{source} cannot register it again"
            )
        keys = tuple(k.name if isinstance(k, AttrKey) else k for k in op_attrs)
        _PASSES[name] = PassInfo(name, fn, tuple(requires), tuple(provides), keys, source)
        return fn

    return decorate


def get_pass(name: str) -> PassInfo:
    """The pass registered under `name`; NNVMError with close matches when there is none."""
    _load_builtin_passes()
    info = _PASSES.get(name)
    if info is None:
        close = difflib.get_close_matches(name, list(_PASSES), n=3, cutoff=0.5)
        hint = f"did you mean {', '.join(map(repr, close))}? " if close else ""
        raise NNVMError(
            f"unknown graph pass {name!r}; {hint}registered passes: {', '.join(sorted(_PASSES))}"
        )
    return info


def list_passes() -> list[str]:
    """Names of every registered pass, sorted."""
    _load_builtin_passes()
    return sorted(_PASSES)


def apply_passes(graph: Graph, passes: str | Sequence[str], **inputs: Any) -> Graph:
    """Run passes in order on a copy of `graph`; keyword inputs become graph attributes.

    Raises:
        NNVMError: an unknown pass name, or a pass whose required attribute neither the
            inputs nor an earlier pass provides (the message names the pass providing it).
    """
    infos = [get_pass(n) for n in ([passes] if isinstance(passes, str) else passes)]
    graph = graph.copy()
    graph.attrs.update(_input_attrs(inputs))
    for info in infos:
        _check_requires(info, graph)
        result = info.fn(graph)
        if not isinstance(result, Graph):
            raise NNVMError(f"graph pass {info.name} returned {type(result).__name__}, not a Graph")
        missing = [key for key in info.provides if key not in result.attrs]
        if missing:
            raise NNVMError(
                f"graph pass {info.name} did not provide the graph attributes {missing} it declares"
            )
        graph = result
    return graph


def _input_attrs(inputs: dict[str, Any]) -> dict[str, Any]:
    attrs = {}
    for key, value in inputs.items():
        name = INPUT_ALIASES.get(key, key)
        if name in attrs:
            raise NNVMError(
                f"apply_passes: {key}= and {name}= name the same graph attribute "
                f"'{name}'; pass only one"
            )
        attrs[name] = value
    return attrs


def _check_requires(info: PassInfo, graph: Graph) -> None:
    for key in info.requires:
        if key in graph.attrs:
            continue
        providers = [p.name for p in _PASSES.values() if key in p.provides]
        if providers:
            raise NNVMError(
                f"{info.name} needs graph attribute '{key}', which no earlier pass "
                f"provided; it is provided by {' or '.join(providers)}."
            )
        raise NNVMError(
            f"{info.name} needs graph attribute '{key}', which no earlier pass "
            f"provided; the caller provides it: apply_passes(..., {key}=...)."
        )


def _load_builtin_passes() -> None:
    # imported here, not at module level: nnvmpy.passes imports nnvmpy.graph
    if "nnvmpy.passes" not in sys.modules:
        importlib.import_module("nnvmpy.passes")


@contextmanager
def scoped_passes() -> Iterator[None]:
    """Passes registered inside the block are forgotten afterwards (for tests)."""
    _load_builtin_passes()
    saved = dict(_PASSES)
    try:
        yield
    finally:
        _PASSES.clear()
        _PASSES.update(saved)


__all__ = [
    "INPUT_ALIASES",
    "PassFn",
    "PassInfo",
    "apply_passes",
    "get_pass",
    "list_passes",
    "register_pass",
    "scoped_passes",
]
