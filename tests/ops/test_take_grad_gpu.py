"""take's and Embedding's weight gradient on the GPU: a scatter-add of dy's rows into the
rows the indices chose, duplicates adding up. float32/float64 add atomically from many
row chunks; float16 (no float16 atomics in numba-cuda) adds into a float32 copy the same
way, where it once took one item per column looping over every index.

Checked against np.add.at in float64 for write and add requests, clip and wrap, and a spy
on the kernel checks the atomic split ran. Runs under NUMBA_ENABLE_CUDASIM=1 or on a GPU.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from fcompute_call import run_fcompute

from nnvmpy.ops import _index_kernels

pytestmark = pytest.mark.gpu

F16, F32, F64 = np.float16, np.float32, np.float64
TOL = {F16: 2e-2, F32: 1e-5, F64: 1e-12}


@pytest.fixture
def splits(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, bool]]:
    """(items, atomic) of every take_grad launch."""
    seen: list[tuple[int, bool]] = []
    real = _index_kernels.take_grad.launch

    def spy(ctx: Any, n: int, *args: Any, **kw: Any) -> None:
        seen.append((n, bool(args[-1])))
        real(ctx, n, *args, **kw)

    monkeypatch.setattr(_index_kernels.take_grad, "launch", spy)
    return seen


def _reference(shape, axis, dy, idx, wrap, start, req):
    """np.add.at of dy into a zero (write) or `start` (add) array, in float64."""
    n = shape[axis]
    rows = np.mod(idx, n) if wrap else np.clip(idx, 0, n - 1)
    want = np.zeros(shape) if req == "write" else start.astype(F64)
    moved = np.moveaxis(want, axis, 0)
    np.add.at(moved, rows.reshape(-1), np.moveaxis(dy.astype(F64), axis, 0).reshape(
        (rows.size, *moved.shape[1:])))  # fmt: skip
    return want


@pytest.mark.parametrize("dtype", [F16, F32, F64], ids=["float16", "float32", "float64"])
@pytest.mark.parametrize("req", ["write", "add"])
@pytest.mark.parametrize(
    ("shape", "axis", "mode"),
    [((7, 5), 0, "clip"), ((3, 6, 4), 1, "wrap"), ((4, 9), 1, "clip")],
    ids=["rows", "middle-wrap", "columns"],
)
def test_take_gradient_adds_duplicates(shape, axis, mode, req, dtype, splits) -> None:
    rng = np.random.default_rng(len(shape) + axis)
    n, m = shape[axis], 70  # more indices than one row chunk (32): several chunks collide
    idx = rng.integers(-3, n + 3, m).astype(F32)  # out of range: clipped or wrapped
    dy_shape = (*shape[:axis], m, *shape[axis + 1 :])
    dy = rng.uniform(-1, 1, dy_shape).astype(dtype)
    start = rng.uniform(-1, 1, shape).astype(dtype)
    got = run_fcompute("_backward_take", {"axis": axis, "mode": mode}, [dy, idx],
                       [start, np.zeros(m, F32)], [req, "null"], "gpu")[0]  # fmt: skip
    want = _reference(shape, axis, dy, idx.astype(np.int64), mode == "wrap", start, req)
    assert got.dtype == dtype
    np.testing.assert_allclose(got.astype(F64), want, rtol=TOL[dtype], atol=TOL[dtype])
    outer, inner = int(np.prod(shape[:axis])), int(np.prod(shape[axis + 1 :]))
    assert splits == [(outer * -(-m // 32) * inner, True)]


def test_float16_embedding_gradient_of_a_repeated_token(splits) -> None:
    """Every token the same row: 300 float16 adds into one row, summed in float32."""
    vocab, dim, tokens = 5, 8, 300
    dy = np.full((tokens, dim), 0.1, F16)
    idx = np.full(tokens, 2, F32)
    params = {"input_dim": vocab, "output_dim": dim, "dtype": "float16"}
    starts = [np.zeros(tokens, F32), np.zeros((vocab, dim), F16)]
    dweight = run_fcompute("_backward_Embedding", params, [dy, idx], starts, ["write", "write"],
                           "gpu")[1]  # fmt: skip
    want = np.zeros((vocab, dim))
    want[2] = tokens * float(F16(0.1))
    np.testing.assert_allclose(dweight.astype(F64), want, rtol=1e-3)
    assert splits == [(-(-tokens // 32) * dim, True)]
