"""Deformable convolution's GPU data gradient (one work item per column entry, atomic
adds; ops/_deformable.py) against the NumPy reference (deformable_numpy.py).

DCNv1 and DCNv2, groups and deformable groups > 1, three images in chunks of two (the
scratch cap shrunk), so that items of one launch add into several images and a second
launch adds to what the first left; offsets that send many taps onto the same pixels
(their items add into one element), samples partly and wholly off the map. d data
under every request, float16/32/64; the other gradients written alongside. FCompute<gpu>
is called directly (as the executor would) so that each output's request can be
chosen. Atomics add in no fixed order, so float64 agrees to rounding; float16 keeps its
columns in float16, so it agrees to a few of its ulps. Its offset gradient is not
compared: a position computed in float16 (the simulator's NumPy arithmetic) can round
across a pixel edge, where that gradient jumps (d data and d mask are continuous there).
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from deformable_numpy import deformable_grads_np
from fcompute_call import run_fcompute
from launch_spies import spy_item_launches

from nnvmpy.ops import _deformable

pytestmark = pytest.mark.gpu

DTYPES = (np.float64, np.float32, np.float16)
TOL = {np.float64: 1e-10, np.float32: 1e-4, np.float16: 2e-2}
GEOMETRY = {
    "kernel": (2, 3), "stride": (1, 1), "dilate": (1, 2), "pad": (1, 1), "num_filter": 4,
    "num_group": 2, "num_deformable_group": 2,
}  # fmt: skip
DATA_SHAPE = (3, 4, 5, 6)


def _out_hw(p: dict[str, Any], hw: tuple[int, int]) -> tuple[int, int]:
    return tuple(  # type: ignore[return-value]
        (size + 2 * pad - d * (k - 1) - 1) // s + 1
        for size, k, s, d, pad in zip(hw, p["kernel"], p["stride"], p["dilate"], p["pad"])
    )


def _offsets(p: dict[str, Any], rng: np.random.Generator) -> np.ndarray:
    """Offsets up to 3 pixels (many samples leave the map, every third a whole number);
    at every other position of image 1 every tap sent to (1.5, 2.25) (their items add
    into the same four pixels); a few far off the map."""
    n, _, h, w = DATA_SHAPE
    kh, kw = p["kernel"]
    oh, ow = _out_hw(p, (h, w))
    dg = p["num_deformable_group"]
    offset = rng.uniform(-3, 3, (n, dg, kh * kw, 2, oh, ow))
    offset[..., ::3] = np.round(offset[..., ::3])
    i, j = np.divmod(np.arange(kh * kw), kw)
    y = np.arange(oh)[:, None] * p["stride"][0] - p["pad"][0] + (i * p["dilate"][0])[:, None, None]
    x = np.arange(ow)[None] * p["stride"][1] - p["pad"][1] + (j * p["dilate"][1])[:, None, None]
    offset[1, :, :, 0, :, ::2] = (1.5 - y)[..., ::2]
    offset[1, :, :, 1, :, ::2] = (2.25 - x)[..., ::2]
    offset[2, 0, 1, :, 0, 0] = 1e3
    return offset.reshape(n, dg * kh * kw * 2, oh, ow)


def _inputs(p: dict[str, Any], modulated: bool, dtype: Any) -> list[np.ndarray]:
    """(dy, data, offset[, mask], weight, bias), rounded to dtype."""
    rng = np.random.default_rng(5)
    n, c, h, w = DATA_SHAPE
    oh, ow = _out_hw(p, (h, w))
    taps = p["num_deformable_group"] * p["kernel"][0] * p["kernel"][1]
    f = p["num_filter"]
    arrays = [
        rng.standard_normal((n, f, oh, ow)),
        rng.standard_normal(DATA_SHAPE),
        _offsets(p, rng),
        *([rng.uniform(-0.5, 1.5, (n, taps, oh, ow))] if modulated else []),
        rng.standard_normal((f, c // p["num_group"], *p["kernel"])),
        rng.standard_normal(f),
    ]
    return [a.astype(dtype) for a in arrays]


def _backward_gpu(p: dict[str, Any], modulated: bool, inputs: list, starts: list, reqs: list):
    """FCompute<gpu> of the op's backward with request reqs[i] for output i; host results."""
    name = "ModulatedDeformableConvolution" if modulated else "DeformableConvolution"
    return run_fcompute(f"_backward_contrib_{name}", p, inputs, starts, reqs, "gpu")


@pytest.fixture
def launches(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The item counts of the atomic data-gradient kernel's launches."""
    return spy_item_launches(monkeypatch, _deformable.deform_col2im_atomic)


def _check(p: dict[str, Any], modulated: bool, dtype: Any, req: str, chunk: int,
           launches: list[int], monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    """The GPU gradients with d data under `req` (the others written) equal the reference,
    images in chunks of `chunk`; d data's kernel had an item per column entry."""
    n, c, h, w = DATA_SHAPE
    oh, ow = _out_hw(p, (h, w))
    k = p["kernel"][0] * p["kernel"][1]
    per_image = (c * k + p["num_filter"]) * oh * ow * np.dtype(dtype).itemsize
    monkeypatch.setattr(_deformable, "MAX_WORKSPACE_BYTES", chunk * per_image)
    inputs = _inputs(p, modulated, dtype)
    exact = [a.astype(np.float64) for a in inputs]
    dy, data, offset, *rest = exact
    mask = rest.pop(0) if modulated else None
    want = deformable_grads_np(SimpleNamespace(**p), dy, data, offset, mask, *rest)
    starts = [np.random.default_rng(9).standard_normal(a.shape).astype(dtype) for a in inputs[1:]]
    got = _backward_gpu(p, modulated, inputs, starts, [req] + ["write"] * (len(starts) - 1))
    assert all(g.dtype == dtype for g in got)
    if req == "null":
        assert launches == []
        np.testing.assert_array_equal(got[0], starts[0])
    else:
        sizes = [min(chunk, n - n0) * c * k * oh * ow for n0 in range(0, n, chunk)]
        assert launches == sizes, "one item per column entry, a launch per chunk"
        base = starts[0].astype(np.float64) if req == "add" else 0.0
        _close(got[0], base + want[0], dtype)
    skip = {1} if dtype == np.float16 else set()  # d offset (the module docstring says why)
    for i, (g, wt) in enumerate(zip(got[1:], want[1:]), 1):
        if i not in skip:
            _close(g, wt, dtype)


def _close(got: np.ndarray, want: np.ndarray, dtype: Any) -> None:
    tol = TOL[dtype]
    atol = tol * max(1.0, float(np.abs(want).max()))
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=tol, atol=atol)


@pytest.mark.parametrize("req", ["write", "add", "null"])
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda t: np.dtype(t).name)
@pytest.mark.parametrize("modulated", [False, True], ids=["v1", "v2"])
def test_data_gradient_in_chunks(modulated: bool, dtype: Any, req: str, launches, monkeypatch):
    """Three images in chunks of two and one: the write request's zeroing happens once,
    before the first chunk, and the second chunk's adds keep the first's."""
    _check(GEOMETRY, modulated, dtype, req, 2, launches, monkeypatch)


@pytest.mark.parametrize("chunk", [1, 3], ids=["chunks-of-one", "one-chunk"])
def test_data_gradient_one_deformable_group(chunk: int, launches, monkeypatch) -> None:
    """One deformable group, a strided 3 x 3 kernel; a chunk per image or one for all."""
    p = GEOMETRY | {"kernel": (3, 3), "stride": (2, 1), "dilate": (1, 1),
                    "num_deformable_group": 1}  # fmt: skip
    _check(p, True, np.float32, "write", chunk, launches, monkeypatch)
