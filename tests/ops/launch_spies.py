"""Spies on GPU launches, for the tests that check which kernel a shape runs and how
it is split: the work items of `parallel_for` loops, the (blocks, threads) of hand-written
kernels, and the reductions `ops/_reduce_cuda.reduce_gpu` and `reduce_dot_gpu` are asked
for. Each records and then launches for real, so the same test also checks the results."""

from __future__ import annotations

from collections.abc import Mapping
from types import ModuleType
from typing import Any

import pytest


def spy_item_launches(monkeypatch: pytest.MonkeyPatch, *loops: Any) -> list[int]:
    """The item counts of every `.launch(ctx, n, ...)` of `loops`, in order."""
    seen: list[int] = []
    for loop in loops:

        def spy(ctx: Any, n: int, *args: Any, _real: Any = loop.launch, **kw: Any) -> None:
            seen.append(n)
            _real(ctx, n, *args, **kw)

        monkeypatch.setattr(loop, "launch", spy)
    return seen


def _launched_by(dispatcher: Any, kernel: Any) -> bool:
    """A hand-written kernel's dispatcher, or one of a parallel_for's built loops; neither
    is built here (a kernel never launched has none)."""
    if getattr(kernel, "_dispatcher", None) is not None and dispatcher is kernel._dispatcher:
        return True
    return any(dispatcher is d for d in getattr(kernel, "_loops", {}).values())


def spy_block_launches(
    monkeypatch: pytest.MonkeyPatch,
    kernels: Mapping[str, Any],
    *importers: ModuleType,
    other: str | None = None,
) -> list[tuple[str, int, int]]:
    """(name, blocks, threads) of every GPU launch of the named kernels, in order, and of
    every other launch too under the name `other` when one is given.

    Every launch goes through `nnvmpy.kernel.cuda.launch_kernel`; `importers` are modules
    that imported that function by name, patched as well."""
    from nnvmpy.kernel import cuda as gpu_launch

    real = gpu_launch.launch_kernel
    seen: list[tuple[str, int, int]] = []

    def spy(dispatcher: Any, blocks: int, threads: int, stream: Any, args: Any) -> None:
        names = [name for name, kernel in kernels.items() if _launched_by(dispatcher, kernel)]
        if not names and other is not None:
            names = [other]
        seen.extend((name, blocks, threads) for name in names)
        real(dispatcher, blocks, threads, stream, args)

    for module in (gpu_launch, *importers):
        monkeypatch.setattr(module, "launch_kernel", spy)
    return seen


def spy_reductions(monkeypatch: pytest.MonkeyPatch, short_slices: bool) -> dict[str, list[Any]]:
    """The reductions launched ('calls': their target shapes, reduce_gpu's and
    reduce_dot_gpu's alike; 'reducers': each one's reducer, 'dot' for reduce_dot_gpu) and
    the number of slices each block or thread kernel cut its sums into ('slices').
    `short_slices` splits the same shapes with shorter slices, for 256-thread blocks on a
    real GPU."""
    from nnvmpy.ops import _reduce_cuda

    seen: dict[str, list[Any]] = {"calls": [], "reducers": [], "slices": []}
    real_reduce, real_slices = _reduce_cuda.reduce_gpu, _reduce_cuda._slices
    real_dot = _reduce_cuda.reduce_dot_gpu

    def reduce_gpu(ctx: Any, out: Any, add: bool, x: Any, small: Any, red: str, *rest: Any,
                   **kw: Any) -> None:  # fmt: skip
        seen["calls"].append(tuple(small))
        seen["reducers"].append(red)
        real_reduce(ctx, out, add, x, small, red, *rest, **kw)

    def reduce_dot_gpu(ctx: Any, out: Any, add: bool, x: Any, y: Any, small: Any, *rest: Any,
                       **kw: Any) -> None:  # fmt: skip
        seen["calls"].append(tuple(small))
        seen["reducers"].append("dot")
        real_dot(ctx, out, add, x, y, small, *rest, **kw)

    def slices(*args: Any) -> int:
        seen["slices"].append(real_slices(*args))
        return seen["slices"][-1]

    monkeypatch.setattr(_reduce_cuda, "reduce_gpu", reduce_gpu)
    monkeypatch.setattr(_reduce_cuda, "reduce_dot_gpu", reduce_dot_gpu)
    monkeypatch.setattr(_reduce_cuda, "_slices", slices)
    if short_slices:
        monkeypatch.setattr(_reduce_cuda, "BLOCK_SLICE_MIN", 4)
    return seen


def spy_reduce_kernels(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int, int]]:
    """(kernel, blocks, threads) of ops/_reduce_cuda.py's kernels launched, in order; the
    kernel is 'thread', 'warp' or 'block'."""
    from nnvmpy.ops import _reduce_cuda as red

    kernels = {
        "thread": red._reduce_thread_cuda,
        "warp": red._reduce_warp_cuda,
        "block": red._reduce_block_cuda,
    }
    return spy_block_launches(monkeypatch, kernels)


def split_reductions_early(monkeypatch: pytest.MonkeyPatch, block_slices: bool = True) -> None:
    """_reduce_cuda's split thresholds low enough that test-sized sums are cut into slices
    (a second, combining launch), with the simulator's block size on a GPU too;
    `block_slices`: block-per-output sums are sliced from one element."""
    from nnvmpy.ops import _reduce_cuda as red

    monkeypatch.setattr(red, "BLOCK", red.SIM_BLOCK)
    monkeypatch.setattr(red, "SPLIT_MIN", 16)
    monkeypatch.setattr(red, "SPLIT_THREADS", 512)
    if block_slices:
        monkeypatch.setattr(red, "BLOCK_SLICE_MIN", 1)


def spy_scratch(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, Any]]:
    """(elements, dtype) of every kernel.scratch.empty array allocated, in order."""
    import numpy as np

    from nnvmpy.kernel import scratch

    seen: list[tuple[int, Any]] = []
    real_empty = scratch.empty

    def empty(ctx: Any, size: Any, dtype: Any) -> Any:
        seen.append((int(np.prod(size)), np.dtype(dtype)))
        return real_empty(ctx, size, dtype)

    monkeypatch.setattr(scratch, "empty", empty)
    return seen


def forbid_loop(monkeypatch: pytest.MonkeyPatch, module: ModuleType, name: str, why: str) -> None:
    """module.name (a parallel_for loop) fails the test if it is launched: `why` says
    what running it would mean."""

    class Forbidden:
        def launch(self, *args: Any, **kwargs: Any) -> None:
            raise AssertionError(why)

    monkeypatch.setattr(module, name, Forbidden())
