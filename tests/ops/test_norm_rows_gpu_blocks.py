"""LayerNorm, GroupNorm and InstanceNorm on the GPU against NumPy: a thread block per row
near the last axis (inner < 32, rows of 32 or more), a thread per row elsewhere, and the
per-position dgamma/dbeta by columns (neighbouring threads on neighbouring columns).

The shapes take every path of ops/nn/_norm_rows_cuda.py's GPU kernels: rows shorter than the
block (40 elements, 64 threads), longer and not a multiple of it (300, 128 threads), more
rows than the simulator's 4-block grid (grid-stride), inner 1, 3 and 32, rows under 32;
dgamma/dbeta tiles of several rows with a short last one; write, add and null requests;
the mean and std outputs with their own gradients. A spy checks which kernels ran with
what grid. Runs under NUMBA_ENABLE_CUDASIM=1 or on a GPU (tests/conftest.py); kept tiny,
as every simulated thread is a Python thread.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from launch_spies import spy_block_launches

import nnvmpy as nv
from nnvmpy import sym

pytestmark = [pytest.mark.gpu, pytest.mark.sim_barriers]

SIMULATOR = os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"
F16, F32, F64 = np.float16, np.float32, np.float64
# relative to the largest value compared (float16 data: results rounded to float16, and
# the simulator's thread-per-row sums run in the data's type)
TOL = {F16: 3e-3, F32: 1e-5}
# (dtype, req of every gradient): float16 writes, float32 adds
DTYPE_REQ = [
    pytest.param(F16, "write", id="float16-write"),
    pytest.param(F32, "add", id="float32-add"),
]
V = sym.var

BLOCK_KERNELS = ("_norm_forward_block_cuda", "_norm_backward_block_cuda")
LOOPS = ("_norm_forward_row", "_norm_backward_chunk", "_column_partials", "_sum_columns")


@pytest.fixture
def launches(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int, int]]:
    """(kernel name, blocks, threads) of every launch of _norm_rows(_cuda).py's GPU kernels."""
    from nnvmpy.ops.nn import _norm_rows, _norm_rows_cuda

    def kernel(name: str) -> Any:
        return getattr(_norm_rows_cuda, name, None) or getattr(_norm_rows, name)

    return spy_block_launches(
        monkeypatch, {name: kernel(name) for name in (*BLOCK_KERNELS, *LOOPS)}
    )


def _values(shape: Any, seed: int, low: float = -2, high: float = 2) -> np.ndarray:
    return np.random.default_rng(seed).uniform(low, high, shape)


def _run(
    build: Callable[[], Any],
    data: dict[str, np.ndarray],
    heads: list[np.ndarray],
    reqs: dict[str, str],
) -> tuple[list[np.ndarray], dict[str, np.ndarray]]:
    """(outputs, gradients) on the GPU; every gradient array starts at 0.25."""
    ctx = nv.gpu(0)
    args = {k: nv.nd.array(v, ctx, dtype=v.dtype) for k, v in data.items()}
    grads = {
        k: nv.nd.array(np.full(v.shape, 0.25, v.dtype), ctx, dtype=v.dtype) for k, v in data.items()
    }
    exe = build().bind(ctx, args, args_grad=grads, grad_req=reqs)
    exe.forward(is_train=True)
    exe.backward([nv.nd.array(h, ctx, dtype=h.dtype) for h in heads])
    return [o.asnumpy() for o in exe.outputs], {k: g.asnumpy() for k, g in grads.items()}


def _close(got: np.ndarray, want: np.ndarray, dtype: type, what: str) -> None:
    assert got.dtype == dtype, what
    scale = max(1.0, float(np.abs(want).max()))
    np.testing.assert_allclose(got.astype(F64), want, rtol=0, atol=TOL[dtype] * scale, err_msg=what)


def _check_grads(
    got: dict[str, np.ndarray], want: dict[str, np.ndarray], reqs: dict[str, str], dtype: type
) -> None:
    for k, w in want.items():
        start = np.full(w.shape, 0.25)
        expected = {"write": w, "add": start + w, "null": start}[reqs[k]]
        _close(got[k], expected, dtype, f"d{k} ({reqs[k]})")


# -- NumPy references -------------------------------------------------------------------------


def _norm_ref(
    x: np.ndarray, axes: tuple[int, ...], gshape: list[int], g: np.ndarray, b: np.ndarray,
    eps: float, dy: np.ndarray, dstats: tuple[np.ndarray, np.ndarray] | None = None,
) -> dict[str, np.ndarray]:  # fmt: skip
    """y, mean, std, dx, dgamma, dbeta of (x - mean) / std * gamma + beta over `axes`, gamma
    broadcast as gshape; the mean and std outputs' gradients (dstats) add to dx:
    d mean / dx = 1/n, d std / dx = xhat / n."""
    x, dy, g, b = (a.astype(F64) for a in (x, dy, g, b))
    n = np.prod([x.shape[a] for a in axes])
    mean = x.mean(axes, keepdims=True)
    std = np.sqrt(x.var(axes, keepdims=True) + eps)
    xhat = (x - mean) / std
    gb = g.reshape(gshape)
    w = dy * gb
    dx = (w - w.mean(axes, keepdims=True) - xhat * (w * xhat).mean(axes, keepdims=True)) / std
    if dstats is not None:
        dx += (dstats[0] + dstats[1] * xhat) / n
    # dgamma/dbeta: summed over everything but gamma's axes
    others = tuple(a for a in range(x.ndim) if gshape[a] == 1)
    dg = (dy * xhat).sum(others).reshape(g.shape)
    return {"y": xhat * gb + b.reshape(gshape), "mean": mean, "std": std, "x": dx,
            "g": dg, "b": dy.sum(others).reshape(g.shape)}  # fmt: skip


def _grouped_ref(
    x: np.ndarray, g: np.ndarray, b: np.ndarray, groups: int, eps: float, dy: np.ndarray
) -> dict[str, np.ndarray]:
    """GroupNorm (InstanceNorm: groups = channels) through _norm_ref on (N, groups, rest)."""
    shape = (x.shape[0], groups, -1)
    ref = _norm_ref(x.reshape(shape), (2,), [1, groups, 1], g, b, eps, dy.reshape(shape))
    ref["x"], ref["y"] = ref["x"].reshape(x.shape), ref["y"].reshape(x.shape)
    return ref


def _expected_kernels(rows: int, n: int, by_block: bool, columns: bool) -> list[Any]:
    """What the spy should see for one forward and backward."""
    if not by_block:
        return ["_norm_forward_row", *(["_column_partials"] if columns else []),
                "_norm_backward_chunk"]  # fmt: skip
    grid = (min(rows, 4) if SIMULATOR else rows, min(128, 1 << (n - 1).bit_length()))
    return [("_norm_forward_block_cuda", *grid), *(["_column_partials"] if columns else []),
            ("_norm_backward_block_cuda", *grid)]  # fmt: skip


def _seen(launches: list[tuple[str, int, int]]) -> list[Any]:
    """The spy's record: block kernels with their grid, loops by name, _sum_columns left out."""
    return [
        (name, blocks, threads) if name in BLOCK_KERNELS else name
        for name, blocks, threads in launches
        if name != "_sum_columns"
    ]


# -- LayerNorm --------------------------------------------------------------------------------

# id -> (shape, axis, whether a block takes each row, output_mean_var)
LAYER_NORM = {
    "short-rows": ((9, 40), -1, True, False),
    "long-rows-stats": ((5, 300), -1, True, True),
    "inner-3-stats": ((2, 40, 3), 1, True, True),
    "inner-32": ((2, 33, 32), 1, False, False),
    "rows-under-32": ((9, 10), -1, False, True),
}


@pytest.mark.parametrize(("dtype", "req"), DTYPE_REQ)
@pytest.mark.parametrize("case", list(LAYER_NORM))
def test_layer_norm_matches_numpy(
    case: str, dtype: type, req: str, launches: list[tuple[str, int, int]]
) -> None:
    shape, axis, by_block, stats = LAYER_NORM[case]
    n = shape[axis]
    x, dy = _values(shape, 1).astype(dtype), _values(shape, 2, -1, 1).astype(dtype)
    g, b = _values(n, 3, 0.5, 1.5).astype(dtype), _values(n, 4).astype(dtype)
    stat_shape = tuple(1 if a == axis % len(shape) else d for a, d in enumerate(shape))
    heads = [dy]
    if stats:
        heads += [_values(stat_shape, 5).astype(dtype), _values(stat_shape, 6).astype(dtype)]
    reqs = dict.fromkeys("xgb", req)
    outs, got = _run(
        lambda: sym.LayerNorm(V("x"), V("g"), V("b"), axis=axis, eps=1e-3, output_mean_var=stats),
        {"x": x, "g": g, "b": b},
        heads,
        reqs,
    )
    gshape = [n if a == axis % len(shape) else 1 for a in range(len(shape))]
    dstats = (heads[1].astype(F64), heads[2].astype(F64)) if stats else None
    want = _norm_ref(x, (axis % len(shape),), gshape, g, b, 1e-3, dy, dstats)
    _close(outs[0], want["y"], dtype, "y")
    if stats:
        _close(outs[1], want["mean"], dtype, "mean")
        _close(outs[2], want["std"], dtype, "std")
    _check_grads(got, {k: want[k] for k in "xgb"}, reqs, dtype)
    rows = x.size // n
    assert _seen(launches) == _expected_kernels(rows, n, by_block, columns=True)


# id -> (shape, axis, _COLUMN_ITEMS): dgamma/dbeta tiles of rpt outer slices, the last short
TILES = {
    "inner-1-tiles-5-4": ((9, 40), -1, 64),  # m 40: 2 tiles of 5 and 4 rows
    "inner-3-tiles-2-2-1": ((5, 40, 3), 1, 300),  # m 120: 3 tiles of 2, 2 and 1 slices
}


@pytest.mark.parametrize("case", list(TILES))
def test_layer_norm_column_tiles_of_several_rows(
    case: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from nnvmpy.ops.nn import _norm_columns_cuda

    shape, axis, items = TILES[case]
    monkeypatch.setattr(_norm_columns_cuda, "_COLUMN_ITEMS", items)
    n = shape[axis]
    x, dy = _values(shape, 7).astype(F32), _values(shape, 8, -1, 1).astype(F32)
    g, b = _values(n, 9, 0.5, 1.5).astype(F32), _values(n, 10).astype(F32)
    reqs = {"x": "null", "g": "add", "b": "write"}
    _, got = _run(
        lambda: sym.LayerNorm(V("x"), V("g"), V("b"), axis=axis),
        {"x": x, "g": g, "b": b},
        [dy],
        reqs,
    )
    gshape = [n if a == axis % len(shape) else 1 for a in range(len(shape))]
    want = _norm_ref(x, (axis % len(shape),), gshape, g, b, 1e-5, dy)
    _check_grads(got, {k: want[k] for k in "xgb"}, reqs, F32)


# -- GroupNorm, InstanceNorm ------------------------------------------------------------------

# id -> (shape, groups, whether a block takes each row)
GROUP_NORM = {
    "rows-of-32-grid-stride": ((3, 6, 4, 4), 3, True),  # 9 rows of 32
    "long-rows": ((2, 2, 10, 20), 1, True),  # 2 rows of 400
    "rows-under-32": ((5, 4, 3, 4), 2, False),
}


@pytest.mark.parametrize(("dtype", "req"), DTYPE_REQ)
@pytest.mark.parametrize("case", list(GROUP_NORM))
def test_group_norm_matches_numpy(
    case: str, dtype: type, req: str, launches: list[tuple[str, int, int]]
) -> None:
    shape, groups, by_block = GROUP_NORM[case]
    x, dy = _values(shape, 11).astype(dtype), _values(shape, 12, -1, 1).astype(dtype)
    g, b = _values(groups, 13, 0.5, 1.5).astype(dtype), _values(groups, 14).astype(dtype)
    reqs = dict.fromkeys("xgb", req)
    outs, got = _run(
        lambda: sym.GroupNorm(V("x"), V("g"), V("b"), num_groups=groups, eps=1e-3),
        {"x": x, "g": g, "b": b},
        [dy],
        reqs,
    )
    want = _grouped_ref(x, g, b, groups, 1e-3, dy)
    _close(outs[0], want["y"], dtype, "y")
    _check_grads(got, {k: want[k] for k in "xgb"}, reqs, dtype)
    rows, n = shape[0] * groups, x.size // (shape[0] * groups)
    assert _seen(launches) == _expected_kernels(rows, n, by_block, columns=False)


# id -> (shape, whether a block takes each row)
INSTANCE_NORM = {
    "rows-of-42-grid-stride": ((2, 3, 6, 7), True),  # 6 rows of 42
    "long-rows": ((1, 2, 300), True),
    "rows-under-32": ((3, 2, 5, 5), False),
}


@pytest.mark.parametrize(("dtype", "req"), DTYPE_REQ)
@pytest.mark.parametrize("case", list(INSTANCE_NORM))
def test_instance_norm_matches_numpy(
    case: str, dtype: type, req: str, launches: list[tuple[str, int, int]]
) -> None:
    shape, by_block = INSTANCE_NORM[case]
    c = shape[1]
    x, dy = _values(shape, 15).astype(dtype), _values(shape, 16, -1, 1).astype(dtype)
    g, b = _values(c, 17, 0.5, 1.5).astype(dtype), _values(c, 18).astype(dtype)
    reqs = dict.fromkeys("xgb", req)
    outs, got = _run(
        lambda: sym.InstanceNorm(V("x"), V("g"), V("b"), eps=1e-3),
        {"x": x, "g": g, "b": b},
        [dy],
        reqs,
    )
    want = _grouped_ref(x, g, b, c, 1e-3, dy)
    _close(outs[0], want["y"], dtype, "y")
    _check_grads(got, {k: want[k] for k in "xgb"}, reqs, dtype)
    rows = shape[0] * c
    assert _seen(launches) == _expected_kernels(rows, x.size // rows, by_block, columns=False)


# -- null requests ----------------------------------------------------------------------------

NULL_REQS = {
    "dx-only": {"x": "add", "g": "null", "b": "null"},
    "dgamma-dbeta-only": {"x": "null", "g": "write", "b": "add"},
}


@pytest.mark.parametrize("reqs", list(NULL_REQS))
@pytest.mark.parametrize("op", ["LayerNorm", "GroupNorm"])
def test_null_requests_leave_their_gradients_alone(op: str, reqs: str) -> None:
    shape = (4, 2, 40)
    x, dy = _values(shape, 19).astype(F32), _values(shape, 20, -1, 1).astype(F32)
    c = 40 if op == "LayerNorm" else 2
    g, b = _values(c, 21, 0.5, 1.5).astype(F32), _values(c, 22).astype(F32)
    kw = {"axis": -1} if op == "LayerNorm" else {"num_groups": 2}
    _, got = _run(
        lambda: getattr(sym, op)(V("x"), V("g"), V("b"), **kw),
        {"x": x, "g": g, "b": b},
        [dy],
        NULL_REQS[reqs],
    )
    if op == "LayerNorm":
        want = _norm_ref(x, (2,), [1, 1, 40], g, b, 1e-5, dy)
    else:
        want = _grouped_ref(x, g, b, 2, 1e-5, dy)
    _check_grads(got, {k: want[k] for k in "xgb"}, NULL_REQS[reqs], F32)
