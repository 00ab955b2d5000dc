"""FCompute<cpu|gpu> of a fused node: one generated kernel launch for the whole group.

The kernel is chosen by (device, input dtypes, output dtypes, write requests) and built
once (fusion/codegen.py). float16 on the CPU goes through float32 copies, as single
element-wise kernels do. Arrays the generated loop cannot take (a dtype numba has no
arithmetic for, such as bool, or non-contiguous views) run the members one by one
through their own kernels instead, so a fused node computes whatever its members would.
"""

from __future__ import annotations

import functools
import math
import weakref
from typing import Any

import numpy as np

from .. import threads as _threads
from ..base import NNVMError
from ..kernel import half
from ..kernel.elementwise import launch_context, req_mode
from ..registry import NodeAttrs
from . import codegen
from .spec import FusedSpec

#: from this many elements a group runs its parallel CPU kernel (kernel/cpu.py's cutoff)
SERIAL_CUTOFF = _threads.parallel_size()

_HALF = np.dtype(np.float16)


@functools.cache
def _cpu_dtypes() -> frozenset[np.dtype[Any]]:
    """What the generated CPU loops take (kernel.cpu imports numba: not at import)."""
    from nnvmpy.kernel.cpu import NATIVE_DTYPES

    return NATIVE_DTYPES | {_HALF}


def fused_compute(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    """Run the fused group: outputs[k] (+)= the k-th exposed member output."""
    spec: FusedSpec = attrs.parsed
    modes = tuple(req_mode(attrs.name, r) for r in req)
    if all(m is None for m in modes):
        return
    run_ctx = getattr(ctx, "run_ctx", None)
    dev = run_ctx.ctx if run_ctx is not None else launch_context(attrs.name, ctx, outputs[0])
    if dev.device_type == "gpu":
        _run_gpu(attrs, spec, ctx, inputs, modes, outputs)
    else:
        _run_cpu(attrs, spec, inputs, modes, outputs)


def _launcher(
    spec: FusedSpec,
    device: str,
    in_types: tuple[np.dtype[Any], ...],
    out_types: tuple[np.dtype[Any], ...],
    modes: tuple[str | None, ...],
    in_place: tuple[tuple[int, int], ...] = (),
    parallel: bool = False,
) -> Any:
    key = (device, in_types, out_types, modes, in_place, parallel)
    fn = spec.launchers.get(key)
    if fn is None:
        types = spec.member_types(list(in_types))
        cpu_dtypes = _cpu_dtypes()
        if device == "cpu" and any(t is None or t not in cpu_dtypes for ts in types for t in ts):
            fn = False  # run the members one by one
        else:
            ins = list(in_types)
            outs = list(out_types)
            fn = codegen.build(spec, types, outs, modes, device, ins, in_place, parallel)
        spec.launchers[key] = fn
    return fn


def _plain(a: Any, shape: tuple[int, ...], dtypes: frozenset[np.dtype[Any]]) -> bool:
    return (
        isinstance(a, np.ndarray)
        and a.shape == shape
        and a.dtype in dtypes
        and a.flags.c_contiguous
    )


def _run_cpu(
    attrs: NodeAttrs,
    spec: FusedSpec,
    inputs: list[Any],
    modes: tuple[str | None, ...],
    outputs: list[Any],
) -> None:
    shape = outputs[0].shape
    dtypes = _cpu_dtypes()
    if not all(_plain(a, shape, dtypes) for a in [*inputs, *outputs]) or not all(
        o.flags.writeable for o in outputs
    ):
        return run_members(attrs, spec, inputs, modes, outputs)
    n = outputs[0].size
    if n == 0:
        return None
    ins = [a.reshape(-1) for a in inputs]
    outs = [o.reshape(-1) for o in outputs]
    halves = [k for k, o in enumerate(outs) if o.dtype == _HALF]
    if halves or any(a.dtype == _HALF for a in ins):
        ins = [half.to_float32(a) if a.dtype == _HALF else a for a in ins]
        for k in halves:
            outs[k] = half.to_float32(outs[k])  # a copy: add mode starts from the values
        pairs = _in_place(ins, outs)
    else:
        pairs = _in_place_of(spec, inputs, outputs, ins, outs)
    in_types = tuple(a.dtype for a in inputs)
    out_types = tuple(o.dtype for o in outputs)
    parallel = n >= SERIAL_CUTOFF
    fn = _launcher(spec, "cpu", in_types, out_types, modes, pairs, parallel)
    if fn is False:
        return run_members(attrs, spec, inputs, modes, outputs)
    if parallel:
        with _threads.region():  # a team out of the process's thread budget
            fn(n, *outs, *ins, *_params_for(spec, ins, outs))
    else:
        fn(n, *outs, *ins, *_params_for(spec, ins, outs))
    for k in halves:
        half.store(outputs[k].reshape(-1), outs[k])
    return None


def _in_place(ins: list[np.ndarray], outs: list[np.ndarray]) -> tuple[tuple[int, int], ...]:
    """(input j, output o) pairs that are one array (the planner's FInplaceOption): the
    kernel reads such an input from the output (codegen.body_lines), as kernel/cpu.py's
    element-wise launch does, since the overlap sends LLVM's loop down its scalar path:
    a fused sigmoid-tanh chain on 32000 float32 in place took 1116 us against 55."""
    from nnvmpy.kernel.cpu import same_array

    pairs = []
    for j, a in enumerate(ins):
        o = next((o for o, out in enumerate(outs) if same_array(a, out)), None)
        if o is not None:
            pairs.append((j, o))
    return tuple(pairs)


def _in_place_of(
    spec: FusedSpec,
    inputs: list[np.ndarray],
    outputs: list[np.ndarray],
    ins: list[np.ndarray],
    outs: list[np.ndarray],
) -> tuple[tuple[int, int], ...]:
    """_in_place(ins, outs), where ins and outs are 1-D views of inputs and outputs: kept
    for the last arrays the node ran on. A bound executor passes the same array objects on
    every run, and a NumPy array's memory never moves; comparing every input with every
    output was ~8 us per call (~7 ms a step of an unrolled LSTM's 800 fused nodes). The
    arrays are held by weak reference, so a dead array's successor at its id misses."""
    arrays = (*inputs, *outputs)
    last = spec.last_in_place
    if last is not None and len(last[0]) == len(arrays):
        for ref, a in zip(last[0], arrays):
            if ref() is not a:
                break
        else:
            return last[1]
    pairs = _in_place(ins, outs)
    spec.last_in_place = (tuple(weakref.ref(a) for a in arrays), pairs)
    return pairs


def _params_for(spec: FusedSpec, ins: list[np.ndarray], outs: list[np.ndarray]) -> tuple[Any, ...]:
    """The members' scalar parameters; float ones as float32 when every array is float32.

    MXNet computes `x * 2.5` on float32 as float32(x * DType(2.5)); a Python float would
    promote the whole chain to float64 inside the loop (twice the vector width, and
    kernel.vmath's float32 bodies would not apply).
    """
    key = (*(a.dtype for a in ins), None, *(o.dtype for o in outs))
    params = spec.cpu_params.get(key)
    if params is None:  # once per dtypes: member_types runs every member's FInferType
        params = tuple(spec.scalar_params([a.dtype for a in ins]))
        if all(a.dtype == np.float32 for a in (*ins, *outs)):
            params = tuple(np.float32(p) if type(p) is float else p for p in params)
        spec.cpu_params[key] = params
    return params


def _run_gpu(
    attrs: NodeAttrs,
    spec: FusedSpec,
    ctx: Any,
    inputs: list[Any],
    modes: tuple[str | None, ...],
    outputs: list[Any],
) -> None:
    from nnvmpy.kernel import cuda as gpu

    gpu.get_cuda(attrs.name)
    shape = tuple(outputs[0].shape)
    outs = [gpu._check(attrs.name, f"output {k}", o, shape) for k, o in enumerate(outputs)]
    ins = [gpu._check(attrs.name, f"input {j}", a, shape) for j, a in enumerate(inputs)]
    n = int(np.prod(shape))
    if n == 0:
        return
    fn = _launcher(spec, "gpu", tuple(a.dtype for a in ins), tuple(o.dtype for o in outs), modes)
    blocks, threads, stream, device = gpu.launch_config(attrs.name, ctx, n)
    params = spec.scalar_params([a.dtype for a in ins])
    with device:
        gpu.launch_kernel(fn, blocks, threads, stream, (n, *outs, *ins, *params))


def specialize(
    attrs: NodeAttrs, ctx: Any, in_sigs: list[Any], out_sigs: list[Any], req: list[Any]
) -> Any:
    """fused_compute for one signature on a GPU: the generated kernel, its grid and its
    parameters fixed once, a call `(inputs, outputs, run_ctx)` (see elemwise_compute's
    specialize); None on a CPU and off the plain path (_run_gpu then checks per call)."""
    if ctx.device_type != "gpu" or not out_sigs:
        return None
    from nnvmpy.kernel import cuda as gpu

    spec: FusedSpec = attrs.parsed
    modes = tuple(req_mode(attrs.name, r) for r in req)
    shape = tuple(out_sigs[0][0])
    n = math.prod(shape)
    sigs = [*in_sigs, *out_sigs]
    if (
        all(m is None for m in modes)
        or not n
        or any(tuple(s) != shape or d not in gpu.GPU_DTYPES for s, d in sigs)
    ):
        return None
    grid = gpu.planned_grid(attrs.name, ctx, n, [d for _, d in sigs])
    if grid is None:
        return None
    in_types = tuple(np.dtype(d) for _, d in in_sigs)
    out_types = tuple(np.dtype(d) for _, d in out_sigs)
    fn = _launcher(spec, "gpu", in_types, out_types, modes)
    params = tuple(spec.scalar_params(list(in_types)))
    return gpu.planned_launch(fn, grid, shape, head=(n,), tail=params)


fused_compute.specialize = specialize  # type: ignore[attr-defined]


def member_values(name: str, spec: FusedSpec, inputs: list[np.ndarray]) -> list[list[Any]]:
    """Every member's outputs, computed member by member through the members' own kernels
    on NumPy arrays (the unfused values: for the monitor and odd arrays)."""
    shape = np.shape(inputs[0])
    in_types = [np.asarray(a).dtype for a in inputs]
    types = spec.member_types(in_types)
    params = spec.scalar_params(in_types)
    values: list[list[Any]] = []
    for m, member in enumerate(spec.members):
        mine = params[: len(member.body.params)]
        params = params[len(member.body.params) :]
        args = [inputs[i] if s < 0 else values[s][i] for s, i in member.args]
        outs = []
        for k, kern in enumerate(member.body.kernels):
            dtype = types[m][k]
            if dtype is None:
                raise NNVMError(f"{name} (_FusedOp): cannot type member {member.name}")
            out = np.empty(shape, dtype)
            kern.launch(None, out, "write", *args, *mine)
            outs.append(out)
        values.append(outs)
    return values


def run_members(
    attrs: NodeAttrs,
    spec: FusedSpec,
    inputs: list[Any],
    modes: tuple[str | None, ...],
    outputs: list[Any],
) -> None:
    """The group member by member (CPU arrays the generated loop cannot take)."""
    values = member_values(attrs.name, spec, [np.ascontiguousarray(a) for a in inputs])
    for (src, idx), mode, out in zip(spec.outputs, modes, outputs):
        if mode == "write":
            np.copyto(out, values[src][idx], casting="unsafe")
        elif mode == "add":
            out += values[src][idx].astype(out.dtype)


__all__ = ["fused_compute", "member_values", "run_members"]
