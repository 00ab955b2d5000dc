"""nv.lr_scheduler against the schedules' closed forms."""

from __future__ import annotations

import math

import pytest

import nnvmpy as nv

S = nv.lr_scheduler


def test_factor_scheduler_steps_and_floor() -> None:
    sched = S.FactorScheduler(step=3, factor=0.5, stop_factor_lr=0.1, base_lr=1.0)
    got = [sched(t) for t in range(1, 14)]
    # lr = base * factor ** floor((t - 1) / step), never below stop_factor_lr
    want = [max(1.0 * 0.5 ** ((t - 1) // 3), 0.1) for t in range(1, 14)]
    assert got == pytest.approx(want)


def test_factor_scheduler_jumps_several_steps_at_once() -> None:
    sched = S.FactorScheduler(step=2, factor=0.1, base_lr=1.0)
    assert sched(7) == pytest.approx(1e-3)  # resumed at update 7: three decays


def test_multi_factor_scheduler() -> None:
    sched = S.MultiFactorScheduler(step=[2, 5], factor=0.1, base_lr=1.0)
    got = [sched(t) for t in range(1, 9)]
    assert got == pytest.approx([1.0, 1.0, 0.1, 0.1, 0.1, 0.01, 0.01, 0.01])


@pytest.mark.parametrize("pwr", [1, 2])
def test_poly_scheduler(pwr: int) -> None:
    sched = S.PolyScheduler(max_update=10, base_lr=0.5, pwr=pwr, final_lr=0.1)
    for t in (0, 3, 10, 12):
        frac = min(t, 10) / 10
        assert sched(t) == pytest.approx(0.1 + 0.4 * (1 - frac) ** pwr)


def test_cosine_scheduler_with_linear_warmup() -> None:
    sched = S.CosineScheduler(max_update=12, base_lr=1.0, final_lr=0.0, warmup_steps=2,
                              warmup_begin_lr=0.2)  # fmt: skip
    assert sched(0) == pytest.approx(0.2)
    assert sched(1) == pytest.approx(0.6)  # linear from 0.2 towards 1.0 over 2 steps
    for t in (2, 7, 12):
        assert sched(t) == pytest.approx((1 + math.cos(math.pi * (t - 2) / 10)) / 2)
    assert sched(20) == pytest.approx(0.0)


def test_constant_warmup() -> None:
    sched = S.FactorScheduler(step=5, base_lr=1.0, warmup_steps=3, warmup_begin_lr=0.1,
                              warmup_mode="constant")  # fmt: skip
    assert [sched(t) for t in range(4)] == pytest.approx([0.1, 0.1, 0.1, 1.0])


def test_bad_arguments_are_named() -> None:
    with pytest.raises(nv.ParamError, match=r"FactorScheduler: step must be >= 1"):
        S.FactorScheduler(step=0)
    with pytest.raises(nv.ParamError, match=r"FactorScheduler: factor must be <= 1"):
        S.FactorScheduler(step=2, factor=2.0)
    with pytest.raises(nv.ParamError, match=r"MultiFactorScheduler: step must increase"):
        S.MultiFactorScheduler(step=[3, 3])
    with pytest.raises(nv.ParamError, match=r"warmup_mode must be one of"):
        S.PolyScheduler(max_update=5, warmup_mode="cubic")
    with pytest.raises(nv.ParamError, match=r"base_lr .* must be at least warmup_begin_lr"):
        S.CosineScheduler(max_update=5, base_lr=0.1, warmup_begin_lr=0.5)
    with pytest.raises(nv.ParamError, match=r"CosineScheduler: max_update must be an int >= 1"):
        S.CosineScheduler(max_update=0)
    with pytest.raises(NotImplementedError):
        S.LRScheduler()(1)
