"""Executor.debug_str: the bound plan as text (nodes, storage ids, bytes allocated)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..graph.attrs import (
    DTYPE,
    EXTERNAL_STORAGE_ID,
    SHAPE,
    STORAGE_ID,
    STORAGE_INPLACE_INDEX,
    STORAGE_OFFSETS,
    STORAGE_SIZES,
)
from ..infer import shape_str

if TYPE_CHECKING:
    from nnvmpy.executor.executor import Executor


def executor_debug_str(exe: Executor) -> str:
    """Every node with its inputs and outputs (shape, dtype, storage id, in-place source)
    and, for a fused node, the nodes it runs; then MXNet's total line
    `Total <n> MB allocated` with the exact bytes after it."""
    g = exe._graph
    idx = g.indexed
    sid, inplace = g.attrs[STORAGE_ID], g.attrs[STORAGE_INPLACE_INDEX]

    offsets, sizes = g.attrs.get(STORAGE_OFFSETS), g.attrs[STORAGE_SIZES]

    def storage(eid: int) -> str:
        b = sid[eid]
        if b == EXTERNAL_STORAGE_ID:
            return "external"
        where = f" bytes[{offsets[b]}:{offsets[b] + sizes[b]}]" if offsets is not None else ""
        return f"{b}{where} kept" if eid in exe._retained else f"{b}{where}"  # kept: for backward

    lines = ["Symbol outputs:"]
    lines += [f"\toutput[{i}]={n}" for i, n in enumerate(exe._out_names)]
    for nid, node in enumerate(idx.nodes):
        if node.is_variable():
            lines.append(f"Variable:{node.name}")
            continue
        lines.append("-" * 20)
        lines.append(f"Op:{node.op.name if node.op else '?'}, Name={node.name}")
        lines.append("Inputs:")
        for i, e in enumerate(idx[nid].input_eids):
            lines.append(f"\targ[{i}]={idx.entry_name(e)} storage={storage(e)}")
        lines.append("Outputs:")
        for i, e in enumerate(idx.output_eids_of(nid)):
            how = f" inplace(input {inplace[e]})" if inplace[e] >= 0 else ""
            lines.append(
                f"\tout[{i}] shape={shape_str(g.attrs[SHAPE][e])} "
                f"dtype={g.attrs[DTYPE][e]} storage={storage(e)}{how}"
            )
        spec = node.attrs.parsed if node.name in getattr(exe, "_fused_groups", {}) else None
        if spec is not None:  # a fused group: one generated kernel runs these nodes
            lines.append(f"Fused:{len(spec.members)} nodes")
            lines += [f"\tOp:{m.attrs.op.name}, Name={m.name}" for m in spec.members]
        elif node.attrs.dict:
            lines.append("Attrs:")
            lines += [f"\t{k}={v}" for k, v in node.attrs.dict.items()]
    simplified = getattr(exe, "_simplified", {})
    if simplified:  # SimplifyInference / FuseEpilogue at bind (executor/inference.py)
        lines.append("-" * 20)
        lines.append(f"Simplified for inference: {len(simplified)} nodes")
        lines += [f"\t{name}: {what}" for name, what in simplified.items()]
    with_relu = getattr(exe, "_with_relu", {})
    if with_relu:  # FuseBatchNormReLU before the gradient (passes/fuse_bn_relu.py)
        lines.append("-" * 20)
        lines.append(f"Fused with relu for training: {len(with_relu)} nodes")
        lines += [f"\t{name}: {what}" for name, what in with_relu.items()]
    bulk = getattr(exe, "_bulk", None)
    if bulk is not None:  # segments pushed as one engine operation each (executor/bulk.py)
        lines.append("-" * 20)
        for phase, steps, runs in (
            ("forward", bulk.fwd, bulk.fwd_runs),
            ("backward", bulk.bwd, bulk.bwd_runs),
        ):
            if runs:
                lines.append(f"Bulk {phase}: {len(runs)} nodes in {len(steps)} engine push(es)")
                lines += [f"\t{s.label}" for s in steps if hasattr(s, "runs")]
    total = exe.storage_bytes
    layout = "blocks" if offsets is None else "blocks of one arena"
    lines.append(
        f"Total {total >> 20} MB allocated ({total} bytes in "
        f"{len(sizes)} {layout}, {len(exe._retained)} entries kept for "
        f"backward; one buffer per entry would take {exe.storage_naive_bytes} bytes)"
    )
    return "\n".join(lines)


__all__ = ["executor_debug_str"]
