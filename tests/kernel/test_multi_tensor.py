"""kernel.multi_tensor.launch_many: many groups of one parallel_for body in few GPU launches,
each group computing what its own launch would (NumPy reference), shared arguments passed
once, empty groups skipped, the parameter budget respected; the CPU launches group by
group. GPU cases run on the simulator in CI."""

from __future__ import annotations

import math

import numpy as np
import pytest

import nnvmpy.kernel.cuda as gpu_launch
from nnvmpy.base import NNVMError, cpu, gpu
from nnvmpy.kernel import multi_tensor, parallel_for
from nnvmpy.kernel.multi_tensor import MAX_SLOTS, PARAM_BYTES, kernel_source, launch_many, slots_for


@parallel_for
def _axpb(i, out, x, a, b, k):
    out[i] = a * x[i] + b + k


def _reference(x: np.ndarray, a: float, b: float, k: int) -> np.ndarray:
    return (np.float32(a) * x + np.float32(b) + np.float32(k)).astype(np.float32)


def _groups(rng: np.random.Generator, sizes: list[int], vary_a: bool) -> list[tuple]:
    groups = []
    for g, n in enumerate(sizes):
        x = rng.normal(size=n).astype(np.float32)
        a = np.float32(0.5 + g) if vary_a else np.float32(2.0)
        groups.append((np.zeros(n, np.float32), x, a, np.float32(-1.0), g))
    return groups


def test_slots_for_is_a_power_of_two_within_the_budget():
    assert slots_for(62, 256, 64) == 8  # (4000 - 64) // 256 = 15 fit
    assert slots_for(3, 256, 64) == 4  # no more than 3 groups need
    assert slots_for(2, 100, 8) == 2
    assert slots_for(100, 10, 8) == MAX_SLOTS
    assert slots_for(100, PARAM_BYTES, 8) == 1  # one group does not fit twice


def test_kernel_source_routes_work_items_to_their_group():
    source = kernel_source(3, (False, False, True))
    assert source.splitlines()[0] == "def loop(n, e0, e1, s2, v0_0, v0_1, v1_0, v1_1, v2_0, v2_1):"
    assert "if t < e0:\n            body(t, v0_0, v0_1, s2)" in source
    assert "elif t < e1:\n            body(t - e0, v1_0, v1_1, s2)" in source
    assert "else:\n            body(t - e1, v2_0, v2_1, s2)" in source


def test_cpu_runs_every_group():
    rng = np.random.default_rng(0)
    sizes = [5, 0, 130, 1]
    groups = _groups(rng, sizes, vary_a=True)
    launch_many(cpu(), _axpb, sizes, groups)
    for out, x, a, b, k in groups:
        np.testing.assert_array_equal(out, _reference(x, a, b, k))


def test_mismatched_groups_are_refused():
    x = np.zeros(3, np.float32)
    with pytest.raises(NNVMError, match="_axpb: launch_many got 1 sizes for 2 groups"):
        launch_many(cpu(), _axpb, [3], [(x, x, 1.0, 1.0, 0)] * 2)
    with pytest.raises(NNVMError, match="_axpb: launch_many groups differ in length"):
        launch_many(cpu(), _axpb, [3, 3], [(x, x, 1.0, 1.0, 0), (x, x, 1.0, 1.0)])


def _count_launches(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    launched: list[int] = []
    real = gpu_launch.launch_kernel

    def counting(dispatcher, blocks, threads, stream, args):
        launched.append(len(args))
        real(dispatcher, blocks, threads, stream, args)

    monkeypatch.setattr(gpu_launch, "launch_kernel", counting)
    return launched


@pytest.mark.gpu
@pytest.mark.parametrize("vary_a", [False, True], ids=["shared-a", "per-group-a"])
def test_gpu_groups_share_launches(monkeypatch: pytest.MonkeyPatch, vary_a: bool):
    from numba import cuda

    rng = np.random.default_rng(1)
    sizes = [3, 0, 70, 1, 33, 8, 0, 17, 2, 40, 5, 9, 64, 4, 1, 6, 12, 3, 0, 21]
    host = _groups(rng, sizes, vary_a)
    groups = [(cuda.to_device(o), cuda.to_device(x), a, b, k) for o, x, a, b, k in host]
    launched = _count_launches(monkeypatch)
    launch_many(gpu(0), _axpb, sizes, groups)
    # per group: out, x (1-d arrays: 56 bytes each), k, a unless shared, and its end
    per_group = 2 * 56 + 8 + 8 + (8 if vary_a else 0)
    shared = 8 + 8 + (0 if vary_a else 8)
    cap = slots_for(len(sizes), per_group, shared)
    busy = sum(1 for n in sizes if n)
    assert cap == MAX_SLOTS
    assert len(launched) == math.ceil(busy / cap)
    for (out, _, _, _, _), (_, x, a, b, k) in zip(groups, host, strict=True):
        np.testing.assert_array_equal(out.copy_to_host(), _reference(x, a, b, k))


@pytest.mark.gpu
def test_gpu_budget_splits_large_groups_into_more_launches(monkeypatch: pytest.MonkeyPatch):
    from numba import cuda

    monkeypatch.setattr(multi_tensor, "PARAM_BYTES", 300)  # two groups a launch
    rng = np.random.default_rng(2)
    sizes = [4, 5, 6, 7, 8]
    host = _groups(rng, sizes, vary_a=True)
    groups = [(cuda.to_device(o), cuda.to_device(x), a, b, k) for o, x, a, b, k in host]
    launched = _count_launches(monkeypatch)
    launch_many(gpu(0), _axpb, sizes, groups)
    # 2 slots a launch: groups (0, 1), (2, 3), then group 4 on the loop's own launch
    assert len(launched) == 3
    for (out, _, _, _, _), (_, x, a, b, k) in zip(groups, host, strict=True):
        np.testing.assert_array_equal(out.copy_to_host(), _reference(x, a, b, k))
