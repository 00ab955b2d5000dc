"""LayerNorm off the last axis on the GPU with few long rows cut into column blocks
(ops/nn/_norm_columns_cuda.py), against the CPU kernels in float64 and NumPy formulas.

Rows of the (outer, n, inner) view with inner >= 32 take a thread each; when they are
too few to fill the device each is cut into S slices and a block takes a run of inner
positions times a slice: a sums kernel, a thread per row merging the slices, an apply
kernel (out or dx). The cases cut n into slices with a short last one, inner into runs
with idle threads past inner, S capped by COLUMN_SLICE_MIN; every output and gradient
is taken with write, add and null requests in float16, float32 and float64, with and
without the mean/std outputs (and their gradients), in place (out on x, dx on dy). A spy
checks the column kernels ran with the grid column_grid gives, and that shapes whose
rows fill the device, or lie elsewhere, keep their kernels. The device is taken to have
few SMs wanting few threads, and slices and blocks are short, so that tiny rows split.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from fcompute_call import SCALED_TOL
from fcompute_call import close_to as _close
from fcompute_call import run_fcompute_f64_cpu as _call
from launch_spies import spy_block_launches

import nnvmpy as nv
from nnvmpy import Op
from nnvmpy.attrs import FResourceRequest, fcompute
from nnvmpy.base import OpReqType
from nnvmpy.engine.base import RunContext
from nnvmpy.kernel import cuda as kcuda
from nnvmpy.ops.nn import _norm_columns_cuda as cols
from nnvmpy.ops.nn import _norm_rows_cuda as norm_cuda
from nnvmpy.resource import OpContext, get_resource

pytestmark = [pytest.mark.gpu, pytest.mark.sim_barriers]

W, A, N = OpReqType.kWriteTo, OpReqType.kAddTo, OpReqType.kNullOp
F16, F32, F64 = np.float16, np.float32, np.float64
COLUMN = ("_norm_sums_columns_cuda", "_norm_forward_apply_columns_cuda",
          "_norm_dsums_columns_cuda", "_norm_backward_apply_columns_cuda")  # fmt: skip
ROW_LOOPS = ("_norm_forward_row", "_norm_backward_chunk")

# id -> (data shape, axis, (SMs, threads wanted per SM, COLUMN_SLICE_MIN, block limit),
#        the expected (S, chunk, runs, threads))
CASES = {
    # 40 rows, 128 threads wanted: 4 slices of 25 (the last 23); inner 40 in 2 runs of 20
    "outer-1-inner-40": ((1, 98, 40), 1, (2, 64, 16, 32), (4, 25, 2, 20)),
    # 66 rows: 8 slices wanted, 6 by COLUMN_SLICE_MIN (5 of 17, the last 12); inner 33 in
    # runs of 17 and 16 (a thread idle)
    "inner-33-uneven": ((2, 97, 33), 1, (2, 256, 16, 32), (6, 17, 2, 17)),
    # 192 rows: S capped at 2 by COLUMN_SLICE_MIN; inner 64 a block of 64
    "inner-64-slice-min": ((3, 120, 64), 1, (2, 512, 50, 64), (2, 60, 1, 64)),
    # axis 1 of 4-D: inner 4 * 10 = 40 in 3 runs of 14 (the last 12); 80 rows, 4 slices
    # wanted, 3 by COLUMN_SLICE_MIN (17, 17, 16)
    "4d-runs-of-14": ((2, 50, 4, 10), 1, (2, 128, 16, 16), (3, 17, 3, 14)),
}
# (dtype, forward reqs: out, mean, std, backward reqs: dx, dgamma, dbeta): each output
# and gradient takes every req, each in another dtype; every dtype writes out and dx
REQS = {
    "float16-w-a-n": (F16, (W, A, N), (W, A, N)),
    "float32-a-n-w": (F32, (A, N, W), (A, N, W)),
    "float64-n-w-a": (F64, (N, W, A), (N, W, A)),
    "float64-a-w-w": (F64, (A, W, W), (W, W, W)),
}
BIG = "inner-64-slice-min"  # 23040 elements, ~20 s a dtype on the simulator: one dtype
MATRIX = [
    pytest.param(case, *REQS[reqs], id=f"{case}-{reqs}")
    for case in CASES
    for reqs in REQS
    if case != BIG or reqs == "float32-a-n-w"
]


@pytest.fixture
def launches(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int, int]]:
    """(kernel name, blocks, threads) of every GPU launch, "other" for kernels not named."""
    from nnvmpy.ops.nn import _norm_rows

    kernels = {name: getattr(cols, name) for name in COLUMN}
    kernels.update({name: getattr(_norm_rows, name) for name in ROW_LOOPS})
    kernels.update({name: getattr(norm_cuda, name) for name in norm_cuda.__dict__
                    if name.endswith("_cuda") and name.startswith("_norm")})  # fmt: skip
    return spy_block_launches(monkeypatch, kernels, norm_cuda, cols, other="other")


def _split(monkeypatch: pytest.MonkeyPatch, sms: int, per_sm: int, slice_min: int, block: int):
    """The GPU taken to have `sms` SMs wanting `per_sm` threads each, slices of at least
    `slice_min` positions, column blocks of at most `block` threads (on a GPU too)."""
    monkeypatch.setattr(kcuda, "context_sm_count", lambda ctx, name: sms)
    monkeypatch.setattr(cols, "COLUMN_ITEMS_PER_SM", per_sm)
    monkeypatch.setattr(cols, "COLUMN_SLICE_MIN", slice_min)
    monkeypatch.setattr(cols, "COLUMN_BLOCK", block)
    monkeypatch.setattr(cols, "SIM_COLUMN_BLOCK", block)


def _layout(shape: tuple, axis: int) -> tuple[int, int, int]:
    """(rows, n, inner) of LayerNorm over `axis`."""
    n, inner = shape[axis], int(np.prod(shape[axis + 1 :]))
    return int(np.prod(shape)) // n, n, inner


def _arrays(shape: tuple, axis: int, dtype: Any) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(sum(shape))
    sshape = tuple(1 if a == axis else d for a, d in enumerate(shape))
    arrays = {
        "x": rng.uniform(-2, 2, shape) + 3,  # off zero: the shifted sums' shift matters
        "g": rng.uniform(0.5, 1.5, shape[axis]),
        "b": rng.uniform(-1, 1, shape[axis]),
        "dy": rng.uniform(-1, 1, shape),
        "dmean": rng.uniform(-1, 1, sshape),
        "dstd": rng.uniform(-1, 1, sshape),
    }
    return {k: v.astype(dtype) for k, v in arrays.items()}


def _starts(shapes: list[tuple], dtype: Any, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.uniform(-1, 1, s).astype(dtype) for s in shapes]


def _numpy(a: dict[str, np.ndarray], axis: int, eps: float, stats: bool) -> dict[str, np.ndarray]:
    """y, mean, std, dx, dgamma, dbeta by the formulas (float64), the mean/std outputs'
    gradients adding dmean / n + dstd * xhat / n to dx when `stats`."""
    x, g, b, dy = (a[k].astype(F64) for k in ("x", "g", "b", "dy"))
    gshape = [-1 if k == axis else 1 for k in range(x.ndim)]
    n, others = x.shape[axis], tuple(k for k in range(x.ndim) if k != axis)
    mean = x.mean(axis, keepdims=True)
    std = np.sqrt(x.var(axis, keepdims=True) + eps)
    xhat = (x - mean) / std
    w = dy * g.reshape(gshape)
    dx = (w - w.mean(axis, keepdims=True) - xhat * (w * xhat).mean(axis, keepdims=True)) / std
    if stats:
        dx += (a["dmean"].astype(F64) + a["dstd"].astype(F64) * xhat) / n
    y = xhat * g.reshape(gshape) + b.reshape(gshape)
    return {"out": y, "mean": mean, "std": std, "dx": dx,
            "dgamma": (dy * xhat).sum(others), "dbeta": dy.sum(others)}  # fmt: skip


def _with_req(result: np.ndarray, start: np.ndarray, req: OpReqType) -> np.ndarray:
    return {W: result, A: start.astype(F64) + result, N: start.astype(F64)}[req]


def _expected(layout: tuple, grid: tuple, out: bool, dx: bool) -> list[tuple[str, int, int]]:
    """The column kernels one forward and backward launch: (blocks, threads) from grid."""
    rows, _, inner = layout
    S, _, runs, threads = grid
    blocks = rows // inner * runs * S
    asked = [True, out, dx, dx]
    return [(name, blocks, threads) for name, on in zip(COLUMN, asked, strict=True) if on]


def _column_launches(launches: list[tuple[str, int, int]]) -> list[tuple[str, int, int]]:
    return [launch for launch in launches if launch[0] in COLUMN]


@pytest.mark.parametrize(("case", "dtype", "freqs", "breqs"), MATRIX)
def test_column_split_matches_the_cpu_and_numpy(
    case: str, freqs: tuple, breqs: tuple, dtype: Any, monkeypatch: pytest.MonkeyPatch,
    launches: list[tuple[str, int, int]],
) -> None:  # fmt: skip
    shape, axis, knobs, grid = CASES[case]
    _split(monkeypatch, *knobs)
    layout = _layout(shape, axis)
    assert cols.column_grid(*layout, knobs[0]) == grid
    params = {"axis": axis, "eps": 1e-3, "output_mean_var": True}
    a = _arrays(shape, axis, dtype)
    sshape, gshape = a["dmean"].shape, a["g"].shape
    ref = _numpy(a, axis, 1e-3, stats=True)

    fstarts = _starts([shape, sshape, sshape], dtype, 1)
    fin = [a["x"], a["g"], a["b"]]
    got = _call("LayerNorm", params, fin, fstarts, freqs, "gpu")
    want = _call("LayerNorm", params, fin, fstarts, freqs, "cpu")
    for i, what in enumerate(("out", "mean", "std")):
        _close(got[i], want[i], dtype, f"{what} ({freqs}) against the CPU")
        _close(got[i], _with_req(ref[what], fstarts[i], freqs[i]), dtype, f"{what} (NumPy)")

    # the backward from the exact statistics (in dtype) on both devices
    bin_ = [a["dy"], a["x"], a["g"], ref["mean"].astype(dtype), ref["std"].astype(dtype)]
    bin_ += [a["dmean"], a["dstd"]]
    bstarts = _starts([shape, gshape, gshape], dtype, 2)
    got = _call("_backward_LayerNorm", params, bin_, bstarts, breqs, "gpu")
    want = _call("_backward_LayerNorm", params, bin_, bstarts, breqs, "cpu")
    for i, what in enumerate(("dx", "dgamma", "dbeta")):
        _close(got[i], want[i], dtype, f"{what} ({breqs}) against the CPU")
        tol = SCALED_TOL[np.dtype(dtype)] * (3 if dtype == F16 else 1)  # statistics rounded
        scale = max(1.0, float(np.abs(ref[what]).max()))
        expected = _with_req(ref[what], bstarts[i], breqs[i])
        np.testing.assert_allclose(got[i], expected, rtol=0, atol=tol * scale, err_msg=what)

    assert _column_launches(launches) == _expected(layout, grid, freqs[0] != N, breqs[0] != N)
    assert not any(name in ROW_LOOPS for name, _, _ in launches), "a thread per row ran"


@pytest.mark.parametrize("eps", [1e-5, 0.5])
def test_without_mean_var_outputs(
    eps: float, monkeypatch: pytest.MonkeyPatch, launches: list[tuple[str, int, int]]
) -> None:
    """output_mean_var off (no dmean/dstd inputs); a large eps shows in every output."""
    shape, axis, knobs, grid = CASES["4d-runs-of-14"]
    _split(monkeypatch, *knobs)
    params = {"axis": axis, "eps": eps}
    a = _arrays(shape, axis, F32)
    ref = _numpy(a, axis, eps, stats=False)
    sshape = a["dmean"].shape
    out, mean, std = _call("LayerNorm", params, [a["x"], a["g"], a["b"]],
                           _starts([shape, sshape, sshape], F32, 3), (W, W, W), "gpu")  # fmt: skip
    for what, got in (("out", out), ("mean", mean), ("std", std)):
        _close(got, ref[what], F32, what)
    bin_ = [a["dy"], a["x"], a["g"], mean, std]
    starts = _starts([shape, (shape[axis],), (shape[axis],)], F32, 4)
    grads = _call("_backward_LayerNorm", params, bin_, starts, (W, A, W), "gpu")
    _close(grads[0], ref["dx"], F32, "dx")
    _close(grads[1], starts[1] + ref["dgamma"], F32, "dgamma")
    _close(grads[2], ref["dbeta"], F32, "dbeta")
    assert _column_launches(launches) == _expected(_layout(shape, axis), grid, True, True)


def _run_in_place(name: str, params: dict, inputs: list, outputs: list, reqs: tuple) -> None:
    """FCompute<gpu> of op `name` on device arrays as given (an output may be an input)."""
    op = Op.get(name)
    attrs = op.parse_attrs(params)
    ctx = nv.gpu(0)
    requests = op.get_attr(FResourceRequest)
    resources = [get_resource(kind, ctx)[0] for kind in requests(attrs)] if requests else []
    opctx = OpContext(True, RunContext(ctx, None), resources)
    op.get_attr(fcompute("gpu"))(attrs, opctx, inputs, list(reqs), outputs)


def test_in_place_out_on_x_and_dx_on_dy(
    monkeypatch: pytest.MonkeyPatch, launches: list[tuple[str, int, int]]
) -> None:
    """FInplaceOption lets out take x's memory and dx dy's: each element is read before
    it is written, and the sums are taken by earlier kernels."""
    from numba import cuda

    shape, axis, knobs, grid = CASES["inner-33-uneven"]
    _split(monkeypatch, *knobs)
    params = {"axis": axis, "eps": 1e-3}
    a = _arrays(shape, axis, F32)
    ref = _numpy(a, axis, 1e-3, stats=False)
    x = cuda.to_device(a["x"])
    g, b = cuda.to_device(a["g"]), cuda.to_device(a["b"])
    mean, std = (cuda.device_array(a["dmean"].shape, F32) for _ in range(2))
    _run_in_place("LayerNorm", params, [x, g, b], [x, mean, std], (W, W, W))
    _close(x.copy_to_host(), ref["out"], F32, "out on x")
    dy, x = cuda.to_device(a["dy"]), cuda.to_device(a["x"])
    dg, db = (cuda.device_array(a["g"].shape, F32) for _ in range(2))
    _run_in_place("_backward_LayerNorm", params, [dy, x, g, mean, std], [dy, dg, db], (W, W, W))
    _close(dy.copy_to_host(), ref["dx"], F32, "dx on dy")
    _close(dg.copy_to_host(), ref["dgamma"], F32, "dgamma")
    _close(db.copy_to_host(), ref["dbeta"], F32, "dbeta")
    assert _column_launches(launches) == _expected(_layout(shape, axis), grid, True, True)


# id -> (shape, axis, knobs as CASES', the path taken instead)
KEPT = {
    # 66 rows give the 64 threads wanted: a thread per row
    "rows-fill-the-device": ((2, 41, 33), 1, (2, 32, 16, 32), "row"),
    # 41 // 25 = 1 slice of COLUMN_SLICE_MIN: a thread per row
    "rows-under-two-slices": ((2, 41, 33), 1, (2, 256, 25, 32), "row"),
    # inner 16: a block per row (_block_rows), the column rule not asked
    "inner-16": ((2, 41, 16), 1, (2, 256, 16, 32), "block"),
    # the last axis: rows contiguous, a block per row
    "last-axis": ((3, 41), 1, (2, 256, 16, 32), "block"),
}


@pytest.mark.parametrize("case", list(KEPT))
def test_other_layouts_keep_their_kernels(
    case: str, monkeypatch: pytest.MonkeyPatch, launches: list[tuple[str, int, int]]
) -> None:
    shape, axis, knobs, path = KEPT[case]
    _split(monkeypatch, *knobs)
    params = {"axis": axis, "eps": 1e-3}
    a = _arrays(shape, axis, F32)
    ref = _numpy(a, axis, 1e-3, stats=False)
    sshape, gshape = a["dmean"].shape, a["g"].shape
    out = _call("LayerNorm", params, [a["x"], a["g"], a["b"]],
                _starts([shape, sshape, sshape], F32, 5), (W, W, W), "gpu")  # fmt: skip
    _close(out[0], ref["out"], F32, "out")
    bin_ = [a["dy"], a["x"], a["g"], out[1], out[2]]
    grads = _call("_backward_LayerNorm", params, bin_,
                  _starts([shape, gshape, gshape], F32, 6), (W, W, W), "gpu")  # fmt: skip
    for what, got in zip(("dx", "dgamma", "dbeta"), grads, strict=True):
        _close(got, ref[what], F32, what)
    names = [name for name, _, _ in launches]
    assert not _column_launches(launches), case
    if path == "row":
        assert [x for x in names if x in ROW_LOOPS] == list(ROW_LOOPS)
    else:
        assert "_norm_forward_block_cuda" in names
        assert "_norm_backward_block_cuda" in names


def test_empty_input_launches_nothing(
    monkeypatch: pytest.MonkeyPatch, launches: list[tuple[str, int, int]]
) -> None:
    _split(monkeypatch, 2, 256, 16, 32)
    shape = (0, 97, 33)
    x = np.zeros(shape, F32)
    g, b = np.ones(97, F32), np.zeros(97, F32)
    stats = np.zeros((0, 1, 33), F32)
    out = _call("LayerNorm", {"axis": 1}, [x, g, b], [x, stats, stats], (W, W, W), "gpu")
    assert out[0].shape == shape
    assert launches == []


def test_bad_gamma_shape_raises_as_on_the_cpu() -> None:
    """The column split changes no error: gamma's length must be the axis's."""
    x = np.ones((2, 97, 33), F32)
    for ctx in (nv.cpu(), nv.gpu(0)):
        with pytest.raises(nv.NNVMError, match="gamma"):
            nv.nd.LayerNorm(
                nv.nd.array(x, ctx), nv.nd.ones((96,), ctx), nv.nd.zeros((96,), ctx), axis=1
            )


def test_the_column_rule_on_hardware_sizes(monkeypatch: pytest.MonkeyPatch) -> None:
    """S and the blocks on a 132-SM GPU with the shipped constants."""
    monkeypatch.setattr(cols, "SIM_COLUMN_BLOCK", cols.COLUMN_BLOCK)
    assert (cols.COLUMN_ITEMS_PER_SM, cols.COLUMN_SLICE_MIN, cols.COLUMN_BLOCK) == (512, 256, 256)
    # (2, 65536, 32) over axis 1: 64 rows in 256 slices of 256, 512 blocks of 32 threads
    assert cols.column_grid(64, 65536, 32, 132) == (256, 256, 1, 32)
    # (8, 4096, 64): 512 rows, 16 slices (COLUMN_SLICE_MIN), 128 blocks of 64
    assert cols.column_grid(512, 4096, 64, 132) == (16, 256, 1, 64)
    # inner 300: runs of 150
    assert cols.column_grid(300, 10000, 300, 132) == (39, 257, 2, 150)
    assert cols.column_slices(512 * 132, 10**6, 132) == 1  # the rows fill the device
    assert cols.column_slices(64, 511, 132) == 1  # under two slices of COLUMN_SLICE_MIN
