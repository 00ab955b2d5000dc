"""Inference passes at bind, and the unsimplified graph kept for forward(is_train=True).

An executor bound without gradients runs SimplifyInference (BatchNorm folded into the
layer before it, Dropout removed) and FuseEpilogue (a convolution's residual add and
relu in its output loop) on its typed graph; NNVMPY_SIMPLIFY_INFERENCE=0 and
NNVMPY_FUSE_EPILOGUE=0 turn them off. Folding BatchNorm and removing Dropout are exact
at is_train=False only, so such an executor answers forward(is_train=True) with the
graph as written: a second executor over the same arguments and auxiliary states, made
on the first such call (a training-mode forward without gradients is rare: refreshing
BatchNorm statistics), whose outputs are copied into the first one's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .. import config
from ..graph import Graph, apply_passes
from ..ndarray.ndarray import push_copy

if TYPE_CHECKING:
    from .executor import Executor

#: (pass, knob, graph attribute with its notes)
_PASSES = (
    ("SimplifyInference", config.SIMPLIFY_INFERENCE, "simplified"),
    ("FuseEpilogue", config.FUSE_EPILOGUE, "epilogues"),
)


def simplify(graph: Graph, shapes: Any, dtypes: Any) -> tuple[Graph, dict[str, str], bool]:
    """(graph, {node name: what happened}, right at is_train=True too) after the passes
    whose knobs are on; shapes and types are inferred again after each that changed it."""
    notes: dict[str, str] = {}
    train_safe = True
    for name, knob, key in _PASSES:
        if knob.get() == "0":
            continue
        out = apply_passes(graph, [name])
        changed: dict[str, Any] = out.attrs.get(key) or {}
        if not changed:
            continue
        notes.update({k: str(v) for k, v in changed.items()})
        train_safe = train_safe and bool(out.attrs.get("simplified_train_safe", True))
        graph = apply_passes(
            Graph(out.outputs), ["InferShape", "InferType"], shapes=shapes, dtypes=dtypes
        )
    return graph, notes, train_safe


def forward_plain(exe: Executor) -> None:
    """exe's forward at is_train=True through the unsimplified graph (made once)."""
    from .executor import Executor

    plain = exe._plain
    if plain is None:
        plain = exe._plain = Executor(
            exe._symbol,
            exe._ctx,
            exe.arg_arrays,
            None,
            "null",
            exe.aux_arrays,
            exe._group2ctx,
            _simplify=False,
        )
    plain._monitor = exe._monitor
    plain._push(plain._fwd_runs, plain._fwd_copies, True)
    for src, dst in zip(plain.outputs, exe.outputs):
        push_copy(src, dst)


__all__ = ["forward_plain", "simplify"]
