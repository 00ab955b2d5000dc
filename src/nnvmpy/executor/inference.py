"""Inference passes at bind, and the unsimplified graph kept for forward(is_train=True).

An executor bound without gradients runs SimplifyInference (BatchNorm folded into the
layer before it, Dropout removed), AmpBFloat16 (Convolution/FullyConnected in bfloat16,
on the CPU, for the nodes convert_symbol marked or all with NNVMPY_INFER_BF16=1) and
FuseEpilogue (a convolution's residual add and relu in its output loop) on its typed
graph; NNVMPY_SIMPLIFY_INFERENCE=0 and NNVMPY_FUSE_EPILOGUE=0 turn those two off.
Folding BatchNorm and removing Dropout are exact at is_train=False only, so such an
executor answers forward(is_train=True) with the graph as written: a second executor
over the same arguments and auxiliary states, made on the first such call (a
training-mode forward without gradients is rare: refreshing BatchNorm statistics), whose
outputs are copied into the first one's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .. import config
from ..graph import Graph, apply_passes
from ..graph.attrs import DTYPE, SHAPE
from ..ndarray.ndarray import push_copy

if TYPE_CHECKING:
    from nnvmpy.executor.executor import Executor

#: (pass, knob, graph attribute with its notes, graph attribute with its copies or None,
#: whether it reads shapes and dtypes)
_PASSES = (
    ("SimplifyInference", config.SIMPLIFY_INFERENCE, "simplified", "simplified_copied_from", True),
    ("AmpBFloat16", config.INFER_BF16, "amp_bf16", None, True),
    ("ChannelsLast", config.CHANNELS_LAST, "channels_last", "channels_last_copied_from", True),
    ("FuseEpilogue", config.FUSE_EPILOGUE, "epilogues", "epilogue_copied_from", False),
)


def _inputs(name: str, knob: Any, graph: Graph, device: str) -> dict[str, Any] | None:
    """The pass's inputs, or None to skip it: AmpBFloat16 is off by default and runs on
    the CPU where the knob is on or some node carries `__amp_dtype__`; the others are on."""
    if name == "ChannelsLast":  # its twins run on the CPU only
        return None if knob.get() == "0" or device != "cpu" else {}
    if name != "AmpBFloat16":
        return None if knob.get() == "0" else {}
    if device != "cpu":
        return None
    if knob.get() == "1":
        return {"amp_bf16_everywhere": True}
    from nnvmpy.ops.amp_bf16 import AMP_DTYPE

    # any value: the pass also refuses the ones it does not know
    asked = any(AMP_DTYPE in n.attrs.dict for n in graph.indexed.nodes if n.op is not None)
    return {"amp_bf16_everywhere": False} if asked else None


def simplify(
    graph: Graph, shapes: Any, dtypes: Any, device: str = "cpu"
) -> tuple[Graph, dict[str, str], bool]:
    """(graph, {node name: what happened}, right at is_train=True too) after the passes
    whose knobs are on. Shapes and types are inferred again after a pass that changed
    the graph, before the next pass that reads them and at the end, for the nodes the
    passes made only where they say which nodes they copied (the others' values carry
    over, Graph.seed_entry_values). `device`: where every node runs ('cpu', 'gpu', or
    'mixed' with group2ctx)."""
    notes: dict[str, str] = {}
    train_safe = True
    typed = True  # graph has every shape and dtype (else only what its seeding gave)

    def infer(g: Graph) -> Graph:
        return apply_passes(g, ["InferShape", "InferType"], shapes=shapes, dtypes=dtypes)

    for name, knob, key, copies_key, reads_values in _PASSES:
        inputs = _inputs(name, knob, graph, device)
        if inputs is None:
            continue
        if reads_values and not typed:
            graph, typed = infer(graph), True
        out = apply_passes(graph, [name], **inputs)
        changed: dict[str, Any] = out.attrs.get(key) or {}
        if not changed:
            continue
        for k, v in changed.items():  # a node two passes changed keeps both notes
            notes[k] = f"{notes[k]}; {v}" if k in notes else str(v)
        train_safe = train_safe and bool(out.attrs.get("simplified_train_safe", True))
        new = Graph(out.outputs)
        copies = out.attrs.get(copies_key) if copies_key else None
        if copies is not None:
            new.seed_entry_values(graph, (SHAPE, DTYPE), copies)
        graph, typed = new, False
    return (graph if typed else infer(graph)), notes, train_safe


def forward_plain(exe: Executor) -> None:
    """exe's forward at is_train=True through the unsimplified graph (made once)."""
    from nnvmpy.executor.executor import Executor

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
