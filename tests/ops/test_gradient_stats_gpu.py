"""The GPU's second pass of multi_sum_sq, all_finite, multi_all_finite and LAMB's norms
(ops/optimizer/gradient_stats.py) against NumPy and the CPU path.

On a GPU pass one writes GPU_ITEMS chunk sums at most per array, rounded up to whole rows
of GPU_ROW; pass two sums the rows on the reduction kernels (_reduce_cuda) in one call and a
thread per output adds its array's rows. The tests lower both constants so that arrays of
a few dozen elements give each array a different number of rows (the simulator runs every
thread as Python); FCompute is called directly to cover every req against the CPU's.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from launch_spies import split_reductions_early

import nnvmpy as nv
import optimizer_formulas as F
from nnvmpy import Op
from nnvmpy.attrs import fcompute
from nnvmpy.base import OpReqType
from nnvmpy.engine import engine_type
from nnvmpy.engine.base import RunContext
from nnvmpy.ops.optimizer import gradient_stats as gs
from nnvmpy.resource import OpContext, Resource, ResourceRequest

SIMULATOR = os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"
W, A, N = OpReqType.kWriteTo, OpReqType.kAddTo, OpReqType.kNullOp
# with GPU_ITEMS 64 and GPU_ROW 16: 0 to 4 rows per array, partial last rows, an empty array
SIZES = [37, 0, 1, 3, 16, 17, 64, 65, 200, 1000, 5]
LAMB = nv.nd._internal._multi_lamb_update
MP_LAMB = nv.nd._internal._multi_mp_lamb_update


@pytest.fixture
def gpu() -> Iterator[nv.Context]:
    """The simulator runs one kernel at a time; the naive engine keeps launches in order."""
    with engine_type("NaiveEngine"):
        yield nv.gpu(0)


@pytest.fixture
def small_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pass one's items and rows small enough for SIZES to vary in rows per array."""
    monkeypatch.setattr(gs, "GPU_ITEMS", 64)
    monkeypatch.setattr(gs, "GPU_ROW", 16)


@pytest.fixture
def split_early(monkeypatch: pytest.MonkeyPatch) -> None:
    """The reduction kernels cut short rows into slices too (a second reduce launch)."""
    split_reductions_early(monkeypatch)


@pytest.fixture
def launched(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the loops gradient_stats launches, in order."""
    seen: list[str] = []
    real = gs.launch

    def spy(ctx: Any, loop: Any, n: int, args: Any, *rest: Any, **kw: Any) -> None:
        seen.append(loop.__name__)
        real(ctx, loop, n, args, *rest, **kw)

    monkeypatch.setattr(gs, "launch", spy)
    return seen


def _arrays(sizes: list[int], dtype: Any, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.uniform(-2, 2, n).astype(dtype) for n in sizes]


def _compute(name: str, params: dict, inputs: list, start: np.ndarray, req: Any, device: str):
    """Op `name`'s FCompute<device> called as the executor would, with `start` in out."""
    from numba import cuda

    op = Op.get(name)
    attrs = op.parse_attrs(params)
    dev = nv.gpu(0) if device == "gpu" else nv.cpu()
    opctx = OpContext(False, RunContext(dev, None), [Resource(ResourceRequest.kTempSpace, dev)])
    out = start.copy()
    if device == "gpu":
        inputs, out = [cuda.to_device(a) for a in inputs], cuda.to_device(out)
    op.get_attr(fcompute(device))(attrs, opctx, inputs, [req], [out])
    return out if device == "cpu" else out.copy_to_host()


def test_work_items_round_up_to_whole_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    gpu_ctx = SimpleNamespace(ctx=nv.gpu(0))
    monkeypatch.setattr(gs, "GPU_ITEMS", 64)
    monkeypatch.setattr(gs, "GPU_ROW", 16)
    assert gs.work_items(gpu_ctx, SIZES) == ([48, 0, 16, 16, 16, 32, 64, 64, 64, 64, 16], 16)
    # all arrays short: one row each, as wide as the longest
    assert gs.work_items(gpu_ctx, [3, 1, 7, 0]) == ([7, 7, 7, 0], 7)
    assert gs.work_items(gpu_ctx, [0, 0]) == ([0, 0], 1)
    assert gs.partial_count(gpu_ctx, [0, 0]) == 1
    monkeypatch.undo()
    # the real sizes: 32 rows of 1024 for a long array, one row for a bias
    assert gs.work_items(gpu_ctx, [1 << 22, 1024, 100]) == ([1 << 15, 1024, 1024], 1024)
    cpu_ctx = SimpleNamespace(ctx=nv.cpu())
    assert gs.work_items(cpu_ctx, [0, 1, 1 << 14, (1 << 14) + 1]) == ([0, 1, 1, 2], 0)


@pytest.mark.gpu
@pytest.mark.usefixtures("small_rows")
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_multi_sum_sq_of_arrays_with_different_row_counts(
    gpu: nv.Context, dtype: Any, launched: list[str]
) -> None:
    xs = _arrays(SIZES, dtype)
    got = nv.nd.multi_sum_sq(*[nv.nd.array(x, ctx=gpu, dtype=dtype) for x in xs],
                             num_arrays=len(xs))  # fmt: skip
    want = [np.sum(x.astype(np.float64) ** 2) for x in xs]
    np.testing.assert_allclose(got.asnumpy(), np.float32(want), rtol=1e-6)
    # pass one per non-empty array, then one thread per output: no loop per array
    assert launched == ["chunk_loop"] * (len(SIZES) - 1) + ["segment_loop"]


@pytest.mark.gpu
@pytest.mark.parametrize("sizes", [[1, 1, 1], [5, 2, 3], [0, 0], [0, 4]], ids=str)
def test_multi_sum_sq_of_short_arrays(gpu: nv.Context, sizes: list[int]) -> None:
    """Every array shorter than a row: one row each, the width of the longest (1 included)."""
    xs = _arrays(sizes, np.float32, seed=1)
    got = nv.nd.multi_sum_sq(*[nv.nd.array(x, ctx=gpu) for x in xs], num_arrays=len(xs))
    want = [np.sum(x.astype(np.float64) ** 2) for x in xs]
    np.testing.assert_allclose(got.asnumpy(), np.float32(want), rtol=1e-6)


@pytest.mark.gpu
def test_multi_sum_sq_at_the_real_row_width(gpu: nv.Context) -> None:
    """GPU_ROW and GPU_ITEMS as shipped: a long array over several rows (past GPU_ITEMS on
    a GPU), a short one padded to a row."""
    long = 5000 if SIMULATOR else 300_000
    xs = _arrays([long, 3, 1500], np.float32, seed=2)
    got = nv.nd.multi_sum_sq(*[nv.nd.array(x, ctx=gpu) for x in xs], num_arrays=3)
    want = [np.sum(x.astype(np.float64) ** 2) for x in xs]
    np.testing.assert_allclose(got.asnumpy(), np.float32(want), rtol=1e-6)


@pytest.mark.gpu
@pytest.mark.usefixtures("small_rows")
@pytest.mark.parametrize("split", [False, True], ids=["one-launch", "split"])
@pytest.mark.parametrize("bad", [np.inf, -np.inf, np.nan])
def test_multi_all_finite_finds_the_last_element_of_a_long_array(
    gpu: nv.Context, bad: float, split: bool, request: pytest.FixtureRequest
) -> None:
    if split:
        request.getfixturevalue("split_early")
    xs = _arrays(SIZES, np.float32)
    arrays = [nv.nd.array(x, ctx=gpu) for x in xs]
    flag = nv.nd.multi_all_finite(*arrays, num_arrays=len(xs))
    assert flag.asnumpy().tolist() == [1.0]
    for k in (9, 0, len(xs) - 1):  # the longest (1000 elements), the first, the last
        ys = [x.copy() for x in xs]
        ys[k][-1] = bad
        arrays = [nv.nd.array(y, ctx=gpu) for y in ys]
        flag = nv.nd.multi_all_finite(*arrays, num_arrays=len(ys))
        assert flag.asnumpy().tolist() == [0.0], f"array {k}"
    assert nv.nd.all_finite(arrays[-1]).asnumpy().tolist() == [0.0]
    assert nv.nd.all_finite(arrays[9]).asnumpy().tolist() == [1.0]


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.float16, np.float64])
def test_all_finite_in_float16_and_float64(gpu: nv.Context, dtype: Any) -> None:
    # float16: x * x overflows float16 (pass one squares in float64)
    x = np.full(3000, 60000.0 if dtype == np.float16 else 1e150, dtype)
    assert nv.nd.all_finite(nv.nd.array(x, ctx=gpu, dtype=dtype)).asnumpy().tolist() == [1.0]
    x[-1] = np.inf
    assert nv.nd.all_finite(nv.nd.array(x, ctx=gpu, dtype=dtype)).asnumpy().tolist() == [0.0]


@pytest.mark.gpu
@pytest.mark.usefixtures("gpu", "small_rows")
@pytest.mark.parametrize("req", [W, A, N], ids=["write", "add", "null"])
def test_multi_sum_sq_req_matches_the_cpu(req: Any) -> None:
    xs = _arrays(SIZES, np.float64, seed=3)
    start = np.linspace(1.0, 2.0, len(xs)).astype(np.float32)
    params = {"num_arrays": len(xs)}
    cpu = _compute("multi_sum_sq", params, xs, start, req, "cpu")
    gpu = _compute("multi_sum_sq", params, xs, start, req, "gpu")
    np.testing.assert_allclose(gpu, cpu, rtol=1e-6)


@pytest.mark.gpu
@pytest.mark.usefixtures("gpu", "small_rows")
@pytest.mark.parametrize("req", [W, A, N], ids=["write", "add", "null"])
@pytest.mark.parametrize("init", [True, False])
@pytest.mark.parametrize("finite", [True, False])
@pytest.mark.parametrize("name", ["all_finite", "multi_all_finite"])
def test_all_finite_req_and_init_output_match_the_cpu(
    name: str, finite: bool, init: bool, req: Any
) -> None:
    """init_output=False only ever clears the flag; add adds the flag (as the CPU does)."""
    xs = _arrays([1000] if name == "all_finite" else SIZES, np.float32, seed=4)
    if not finite:
        xs[0][-1] = np.nan
    params = {"init_output": init}
    if name == "multi_all_finite":
        params["num_arrays"] = len(xs)
    for start in (np.array([1.0], np.float32), np.array([0.0], np.float32)):
        cpu = _compute(name, params, xs, start, req, "cpu")
        gpu = _compute(name, params, xs, start, req, "gpu")
        np.testing.assert_array_equal(gpu, cpu, f"start {start[0]}")


def _lamb_groups(sizes: list[int], mp: bool) -> list[list[np.ndarray]]:
    rng = np.random.default_rng(5)
    groups = []
    for n in sizes:
        w, g = rng.uniform(-1, 1, n), rng.uniform(-1, 1, n)
        m, v = rng.uniform(-0.1, 0.1, n), rng.uniform(0.0, 0.1, n)
        if mp:
            w16 = w.astype(np.float16)
            groups.append([w16, g.astype(np.float16), m, v, w16.astype(np.float64)])
        else:
            groups.append([w, g, m, v])
    return groups


@pytest.mark.gpu
@pytest.mark.usefixtures("small_rows")
@pytest.mark.parametrize("mp", [False, True], ids=["lamb", "mp_lamb"])
def test_multi_lamb_norms_of_tensors_with_different_row_counts(gpu: nv.Context, mp: bool) -> None:
    sizes = [200, 3, 64, 17, 1000, 1]
    groups = _lamb_groups(sizes, mp)
    n = len(sizes)
    kw = {"learning_rates": tuple(0.1 * (i + 1) for i in range(n)), "wds": (0.01,) * n,
          "step_count": tuple(range(1, n + 1)), "num_tensors": n}  # fmt: skip
    low = np.float16 if mp else np.float32
    args = []
    for group in groups:
        dtypes = [low, low, np.float32, np.float32, np.float32][: len(group)]
        args += [nv.nd.array(a, ctx=gpu, dtype=d) for a, d in zip(group, dtypes, strict=True)]
    outs = (MP_LAMB if mp else LAMB)(*args, **kw)
    stride = 5 if mp else 4
    for i, (w, g, m, v, *master) in enumerate(groups):
        w64 = (master[0] if mp else w.astype(np.float32)).astype(np.float64)
        g64 = g.astype(low).astype(np.float64)
        m32, v32 = m.astype(np.float32).astype(np.float64), v.astype(np.float32).astype(np.float64)
        d, mean, var = F.lamb_phase1(w64, g64, m32, v32, t=kw["step_count"][i], wd=0.01)
        new = F.lamb_phase2(w64, d, np.linalg.norm(w64), np.linalg.norm(d),
                            lr=kw["learning_rates"][i])[0]  # fmt: skip
        np.testing.assert_allclose(args[stride * i + 2].asnumpy(), mean, rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(args[stride * i + 3].asnumpy(), var, rtol=1e-5, atol=1e-7)
        if mp:
            np.testing.assert_allclose(args[stride * i + 4].asnumpy(), new, rtol=1e-5, atol=1e-6)
        tol = {"rtol": 1e-3, "atol": 1e-3} if mp else {"rtol": 1e-5, "atol": 1e-6}
        np.testing.assert_allclose(outs[i].asnumpy(), new, **tol)
