"""Many tensors, few GPU launches: one parallel_for body over a list of groups.

    launch_many(ctx, loop, sizes, groups)
        # = for g in range(len(sizes)): loop.launch(ctx, sizes[g], *groups[g])

Why. An optimizer step applies one element rule to every weight: ResNet-18 has 62, so
62 launches a step, each costing the host tens of microseconds and the device a few.
MXNet's multi_sgd_* ops launch one kernel for a group of weights (a parameter struct of
pointers); PyTorch's foreach optimizers do the same (multi_tensor_apply). numba.cuda
kernels take no pointer tables, so the table is the parameter list itself.

How. On the GPU, up to `slots` groups share one grid-stride kernel generated for them:

    def loop(n, e0, e1, e2, s3, v0_0, v0_1, v0_2, v1_0, ...):   # ends, shared, per group
        for t in range(cuda.grid(1), n, cuda.gridsize(1)):
            if t < e0:
                body(t, v0_0, v0_1, v0_2, s3)
            elif t < e1:
                body(t - e0, v1_0, v1_1, v1_2, s3)
            ...

Work item t of the launch is item t - e(k-1) of group k, where the e's are the running
sizes. An argument equal in every group (the same array object, or equal scalars of one
type: momentum, the write mode) is passed once. A kernel exists per (body, slots, which
arguments are shared, argument count), compiled on first use and cached on disk as
parallel_for loops are; slots are a power of two, at most MAX_SLOTS, and the groups of a
launch fit CUDA's 4 KB of kernel parameters (PARAM_BYTES; an array argument is 5 + 2*ndim
words), so a chunk that is not full repeats its last group's arguments with no items.

Groups run concurrently: none may write memory another group of the same call reads or
writes (one optimizer update per weight never does). The CPU launches group by group:
there a launch costs little and each group gets the CPU loop's own parallel split.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from ..base import NNVMError
from .device import _SCALARS, ParallelFor

#: most groups one generated kernel takes
MAX_SLOTS = 16
#: kernel parameter bytes a launch may use (CUDA's limit is 4096 before sm_70 / CUDA 12.1)
PARAM_BYTES = 4000
_VERSION = "1"

_built: dict[tuple[Any, ...], Any] = {}  # (loop, slots, shared mask, arity) -> dispatcher
_lock = threading.Lock()


def launch_many(
    ctx: Any, loop: ParallelFor, sizes: Sequence[int], groups: Sequence[Sequence[Any]]
) -> None:
    """Run loop's body(i, *groups[g]) for i in range(sizes[g]), for every group g.

    Args:
        ctx: an OpContext or Context, as ParallelFor.launch takes.
        loop: the parallel_for whose body runs.
        sizes: work items per group (>= 0).
        groups: each group's arguments (arrays and scalars), the same count and kinds in
            every group, as one loop.launch would take them.

    Raises:
        NNVMError: sizes and groups of different lengths, groups of different lengths,
            or anything loop.launch refuses.
    """
    if len(sizes) != len(groups):
        raise NNVMError(
            f"{loop.__name__}: launch_many got {len(sizes)} sizes for {len(groups)} groups"
        )
    work = [(int(n), tuple(args)) for n, args in zip(sizes, groups, strict=True) if n != 0]
    if not work:
        return
    arity = len(work[0][1])
    if any(len(args) != arity for _, args in work):
        raise NNVMError(
            f"{loop.__name__}: launch_many groups differ in length; every group takes the "
            f"body's {arity} arguments"
        )
    if len(work) == 1 or loop._device(ctx, work[0][1]) != "gpu":
        for n, args in work:
            loop.launch(ctx, n, *args)
        return
    _launch_gpu(ctx, loop, work, arity)


def _shared_mask(work: list[tuple[int, tuple[Any, ...]]], arity: int) -> tuple[bool, ...]:
    """Per argument: the same in every group (one array object, or equal scalars)."""
    first = work[0][1]
    mask = []
    for j in range(arity):
        a = first[j]
        if isinstance(a, _SCALARS):
            kind = type(a)
            same = all(type(args[j]) is kind and args[j] == a for _, args in work)
        else:
            same = all(args[j] is a for _, args in work)
        mask.append(same)
    return tuple(mask)


def _param_bytes(a: Any) -> int:
    """Kernel parameter bytes of one argument (numba's array struct, or a scalar)."""
    if isinstance(a, _SCALARS):
        return 8
    return 8 * (5 + 2 * len(a.shape))


def slots_for(groups: int, per_group: int, shared: int) -> int:
    """Groups per launch: a power of two <= MAX_SLOTS whose parameters fit PARAM_BYTES
    (per_group bytes each, plus shared bytes), no more than `groups` needs; 1: launch
    one by one."""
    fit = (PARAM_BYTES - shared) // max(1, per_group)
    slots = 1
    while slots * 2 <= min(fit, MAX_SLOTS) and slots < groups:
        slots *= 2
    return slots


def _launch_gpu(ctx: Any, loop: ParallelFor, work: list[Any], arity: int) -> None:
    from nnvmpy.kernel import cuda as gpu

    name = loop.__name__
    gpu.get_cuda(name)

    def device_arrays(args: tuple[Any, ...]) -> tuple[Any, ...]:
        return tuple(
            a if isinstance(a, _SCALARS) else gpu.as_device_array(name, f"arg {k}", a)
            for k, a in enumerate(args)
        )

    work = [(n, device_arrays(args)) for n, args in work]
    mask = _shared_mask(work, arity)
    first = work[0][1]
    shared_bytes = 8 + sum(_param_bytes(first[j]) for j in range(arity) if mask[j])
    per_group = 8 + max(
        sum(_param_bytes(args[j]) for j in range(arity) if not mask[j]) for _, args in work
    )
    cap = slots_for(len(work), per_group, shared_bytes)
    if cap == 1:
        for n, args in work:
            loop.launch(ctx, n, *args)
        return
    shared = [first[j] for j in range(arity) if mask[j]]
    for start in range(0, len(work), cap):
        chunk = work[start : start + cap]
        if len(chunk) == 1:
            loop.launch(ctx, chunk[0][0], *chunk[0][1])
            continue
        slots = slots_for(len(chunk), per_group, shared_bytes)
        chunk = chunk + [(0, chunk[-1][1])] * (slots - len(chunk))  # no items: never taken
        ends, total = [], 0
        for n, _ in chunk[:-1]:
            total += n
            ends.append(total)
        total += chunk[-1][0]
        varying = [args[j] for _, args in chunk for j in range(arity) if not mask[j]]
        kernel = _kernel(loop, slots, mask)
        blocks, threads, stream, device = gpu.launch_config(name, ctx, total)
        with device:
            gpu.launch_kernel(kernel, blocks, threads, stream, (total, *ends, *shared, *varying))


def _kernel(loop: ParallelFor, slots: int, mask: tuple[bool, ...]) -> Any:
    key = (loop, slots, mask)
    kernel = _built.get(key)
    if kernel is None:
        with _lock:
            kernel = _built.get(key)
            if kernel is None:
                kernel = _built[key] = _build(loop, slots, mask)
    return kernel


def kernel_source(slots: int, mask: tuple[bool, ...]) -> str:
    """The generated loop (module docstring) for `slots` (>= 2) groups and this mask."""

    def call(k: int) -> str:
        args = ", ".join(f"s{j}" if shared else f"v{k}_{j}" for j, shared in enumerate(mask))
        index = "t" if k == 0 else f"t - e{k - 1}"
        return f"body({index}{', ' if args else ''}{args})"

    ends = "".join(f", e{k}" for k in range(slots - 1))
    shared = "".join(f", s{j}" for j, s in enumerate(mask) if s)
    varying = "".join(f", v{k}_{j}" for k in range(slots) for j, s in enumerate(mask) if not s)
    lines = [
        f"def loop(n{ends}{shared}{varying}):",
        "    for t in range(cuda.grid(1), n, cuda.gridsize(1)):",
    ]
    for k in range(slots):
        if k == slots - 1:
            lines.append("        else:")
        else:
            lines.append(f"        {'if' if k == 0 else 'elif'} t < e{k}:")
        lines.append(f"            {call(k)}")
    return "\n".join(lines) + "\n"


def _build(loop: ParallelFor, slots: int, mask: tuple[bool, ...]) -> Any:
    from nnvmpy.kernel.cuda import get_cuda
    from nnvmpy.kernel.disk_cache import enable_cuda_cache

    cuda = get_cuda(loop.__name__)
    body_fn, body = loop.gpu_body()
    # a real module name: numba's cache rebuilds a loaded function's environment from it
    namespace: dict[str, Any] = {"__name__": __name__, "cuda": cuda, "body": body}
    source = kernel_source(slots, mask)
    exec(compile(source, f"<nnvmpy multi-tensor {loop.__name__}/{slots}>", "exec"), namespace)
    generated = namespace["loop"]
    dispatcher = cuda.jit(generated)
    shared = "".join("s" if s else "v" for s in mask)
    enable_cuda_cache(dispatcher, body_fn, f"gmulti{_VERSION}-{slots}-{shared}", generated)
    return dispatcher


__all__ = ["MAX_SLOTS", "PARAM_BYTES", "kernel_source", "launch_many", "slots_for"]
