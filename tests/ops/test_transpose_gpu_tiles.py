"""transpose on the GPU against NumPy: the tiled kernel where the last axis moves, the
gather where it stays last (or a tile side is short), for every request and dtype.

ops/_transpose_cuda.py first drops size-1 axes and merges axes that stay adjacent; the
plan tests check that on the host. The GPU tests take tile edges (sides that are not
multiples of 32), batches of 2-D transposes from 3-D and 4-D permutations (one and two
batch axes), size-1 and empty axes, and a spy checks which kernel ran. They run under
NUMBA_ENABLE_CUDASIM=1 or on a GPU (tests/conftest.py); kept small, as every simulated
thread is a Python thread (most lower TILE_ROWS: fewer threads a block, same tiles).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from launch_spies import spy_block_launches

import nnvmpy as nv
from nnvmpy.attrs import FCompute_gpu
from nnvmpy.base import OpReqType
from nnvmpy.ops import _transpose_cuda as tr
from nnvmpy.registry import Op

GPU = pytest.mark.gpu
# tiled kernels with barriers: a finer switch interval under the simulator (conftest)
pytestmark = pytest.mark.sim_barriers
DTYPES = [np.float16, np.float32, np.float64, np.int8, np.int32, np.int64, np.uint8, np.bool_]

# id -> (shape, axes, kernel): sides not multiples of 32, one or more batch axes
CASES: dict[str, tuple[tuple[int, ...], tuple[int, ...], str]] = {
    "2d": ((40, 70), (1, 0), "tiled"),
    "nchw-to-nhwc": ((2, 9, 5, 7), (0, 2, 3, 1), "tiled"),
    "nhwc-to-nchw": ((2, 5, 7, 9), (0, 3, 1, 2), "tiled"),
    "3d-reversed": ((9, 3, 33), (2, 1, 0), "tiled"),
    "4d-two-batch-axes": ((3, 8, 2, 10), (3, 0, 2, 1), "tiled"),
    "size-1-axes": ((1, 40, 1, 33), (3, 2, 1, 0), "tiled"),
    "last-stays-last": ((2, 3, 4, 5), (0, 2, 1, 3), "gather"),
    "short-side": ((50, 3), (1, 0), "gather"),
    "identity": ((4, 5), (0, 1), "gather"),
    "all-size-1": ((1, 1, 1), (2, 0, 1), "gather"),
    "empty": ((0, 40), (1, 0), "none"),
}


def values(shape: tuple[int, ...], dtype: Any, seed: int) -> np.ndarray:
    """Distinct-ish values of dtype (small integers: sums with 'add' stay in range)."""
    rng = np.random.default_rng(seed)
    if np.dtype(dtype) == np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    if np.dtype(dtype).kind in "iu":
        return rng.integers(0, 50, shape).astype(dtype)
    return rng.uniform(-4, 4, shape).astype(dtype)


@pytest.fixture
def launched(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int, int]]:
    """(kernel, blocks, threads) of every transpose kernel launch; 2 warps a tile block."""
    monkeypatch.setattr(tr, "TILE_ROWS", 2)
    kernels = {"gather": tr._transpose_gather_cuda, "tiled": tr._transpose_tiled_cuda}
    return spy_block_launches(monkeypatch, kernels)


def run_gpu(x: np.ndarray, axes: tuple[int, ...], req: str, start: np.ndarray) -> np.ndarray:
    """transpose's FCompute<gpu> on device copies of x and start, with request req."""
    from numba import cuda

    op = Op.get("transpose")
    attrs = op.parse_attrs({"axes": str(axes)})
    out = cuda.to_device(start)
    compute = op.get_attr(FCompute_gpu)
    compute(attrs, None, [cuda.to_device(x)], [OpReqType.parse(req)], [out])
    return out.copy_to_host()


def want(x: np.ndarray, axes: tuple[int, ...], req: str, start: np.ndarray) -> np.ndarray:
    y = np.transpose(x, axes)
    return {"write": y, "add": start + y, "null": start}[req]


# --- the plan (host only) -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("shape", "axes", "simple"),
    [
        ((2, 9, 5, 7), (0, 2, 3, 1), ((2, 9, 35), (0, 2, 1))),
        ((2, 5, 7, 9), (0, 3, 1, 2), ((2, 35, 9), (0, 2, 1))),
        ((1, 40, 1, 33), (3, 2, 1, 0), ((40, 33), (1, 0))),
        ((2, 3, 4, 5), (0, 1, 2, 3), ((120,), (0,))),
        ((1, 1), (1, 0), ((1,), (0,))),
        ((4, 1, 6), (2, 1, 0), ((4, 6), (1, 0))),
        ((2, 3, 4, 5), (2, 3, 0, 1), ((6, 20), (1, 0))),
    ],
)
def test_simplify_drops_size_1_axes_and_merges_neighbours(
    shape: tuple[int, ...], axes: tuple[int, ...], simple: tuple[Any, Any]
) -> None:
    assert tr.simplify(shape, axes) == simple
    got_shape, got_axes = simple
    x = np.arange(int(np.prod(shape))).reshape(shape)
    merged = np.transpose(x.reshape(got_shape), got_axes)
    np.testing.assert_array_equal(merged.reshape(-1), np.transpose(x, axes).reshape(-1))


def test_tile_plan_strides_and_batch_axes() -> None:
    # x (3, 8, 2, 10) -> out (10, 3, 2, 8): rows from x's axis 1, x's last axis to out's 0
    dims, sizes, bi, bo = tr.tile_plan((3, 8, 2, 10), (3, 0, 2, 1))
    assert dims == (8, 10, 20, 48)
    assert (sizes, bi, bo) == ((3, 2), (160, 10), (16, 8))
    assert tr.tile_plan((40, 70), (1, 0)) == ((40, 70, 70, 40), (1,), (0,), (0,))
    assert tr.tile_plan((2, 3, 4), (1, 0, 2)) is None  # the last axis stays last
    assert tr.tile_plan((50, 7), (1, 0)) is None  # a side under MIN_TILE_SIDE


# --- the kernels ----------------------------------------------------------------------------


@GPU
@pytest.mark.parametrize("req", ["write", "add", "null"])
@pytest.mark.parametrize("case", list(CASES))
def test_transpose_matches_numpy_for_every_request(
    case: str, req: str, launched: list[tuple[str, int, int]]
) -> None:
    shape, axes, kernel = CASES[case]
    x = values(shape, np.float32, 1)
    start = values(np.transpose(x, axes).shape, np.float32, 2)
    got = run_gpu(x, axes, req, start)
    np.testing.assert_array_equal(got, want(x, axes, req, start))
    kernels = [k for k, _, _ in launched]
    assert kernels == ([] if req == "null" or kernel == "none" else [kernel])


@GPU
@pytest.mark.parametrize("req", ["write", "add"])
@pytest.mark.parametrize("dtype", DTYPES, ids=[np.dtype(d).name for d in DTYPES])
@pytest.mark.parametrize("case", ["nchw-to-nhwc", "short-side"])
def test_every_dtype_copies_exactly(
    case: str, dtype: Any, req: str, launched: list[tuple[str, int, int]]
) -> None:
    shape, axes, _ = CASES[case]
    x = values(shape, dtype, 3)
    start = values(np.transpose(x, axes).shape, dtype, 4)
    got = run_gpu(x, axes, req, start)
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(got, want(x, axes, req, start))


@GPU
def test_full_blocks_stride_over_more_tiles_than_blocks(
    monkeypatch: pytest.MonkeyPatch, launched: list[tuple[str, int, int]]
) -> None:
    """TILE_ROWS warps a block (8: the default), a grid-stride loop over 3 x 2 x 3 tiles."""
    monkeypatch.setattr(tr, "TILE_ROWS", 8)
    x = values((3, 40, 65), np.float64, 5)
    got = run_gpu(x, (0, 2, 1), "write", np.zeros((3, 65, 40)))
    np.testing.assert_array_equal(got, np.transpose(x, (0, 2, 1)))
    assert [(k, t) for k, _, t in launched] == [("tiled", 256)]


@GPU
def test_transpose_and_its_gradient_through_nd() -> None:
    """nd.transpose on a GPU, and the gradient (the inverse transpose) added to a buffer."""
    x = values((2, 33, 40), np.float32, 6)
    dy = values((40, 2, 33), np.float32, 7)
    xg = nv.nd.array(x, ctx=nv.gpu(0))
    xg.attach_grad(grad_req="add")
    xg.grad[:] = 1.0
    with nv.autograd.record():
        y = nv.nd.transpose(xg, axes=(2, 0, 1))
    y.backward(nv.nd.array(dy, ctx=nv.gpu(0)))
    np.testing.assert_array_equal(y.asnumpy(), np.transpose(x, (2, 0, 1)))
    np.testing.assert_array_equal(xg.grad.asnumpy(), 1.0 + np.transpose(dy, (1, 2, 0)))
