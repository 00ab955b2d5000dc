"""Imports inside functions are absolute, so a module keeps working when an import system
re-labels it (e.g. `from mxnet.io import NDArrayIter` through an alias that exposes
nnvmpy under MXNet's names and so sets the module's __package__ to 'mxnet'): a relative
`from .. import nd` inside a function then resolves against the new label and fails."""

from __future__ import annotations

import ast
import pathlib

import numpy as np

import nnvmpy as nv

SRC = pathlib.Path(nv.__file__).parent


def _function_level_relative_imports(path: pathlib.Path) -> list[str]:
    tree = ast.parse(path.read_text())
    return [
        f"{path.relative_to(SRC)}:{node.lineno}"
        for fn in ast.walk(tree)
        if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef)
        for node in ast.walk(fn)
        if isinstance(node, ast.ImportFrom) and node.level > 0
    ]


def test_no_function_imports_a_module_relatively() -> None:
    found = [hit for p in sorted(SRC.rglob("*.py")) for hit in _function_level_relative_imports(p)]
    assert found == [], f"use absolute imports inside functions: {found[:10]}"


def test_a_relabelled_module_still_imports_lazily(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """What such an alias does to nnvmpy.io: NDArrayIter's lazy import must still work."""
    monkeypatch.setattr(nv.io, "__package__", "mxnet")
    batch = next(iter(nv.io.NDArrayIter(np.ones((4, 2)), batch_size=2)))
    assert batch.data[0].shape == (2, 2)
