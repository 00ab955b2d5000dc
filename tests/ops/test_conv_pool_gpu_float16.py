"""float16 Convolution, Deconvolution and Pooling on the GPU, forward and backward.

The GPU kernels read and write float16 and sum in float64 (the direct and pooling bodies,
col2im, the bias and channel reductions) or float32 (the GEMM's accumulator), rounding
once at the store. Each FCompute<gpu> is called on float16 inputs, every req, and
compared with the same op's FCompute<cpu> on those values in float64, within a few
float16 roundings of the largest value compared. `test_*_sums_wider_than_float16` build
sums that a float16 running sum would get visibly wrong (2048 + 1 rounds back to 2048).

The shapes are small (the CUDA simulator runs the tiled GEMM at ~0.15 s per block);
`gemm_path` sets DIRECT_MAX_MACS to 0 so that a small convolution takes im2col + GEMM.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from fcompute_call import run_fcompute

import nnvmpy as nv
from nnvmpy import Op
from nnvmpy.base import InferError, OpReqType
from nnvmpy.ops.nn import _conv_cuda, _im2col_cuda
from nnvmpy.ops.nn.convolution import conv_shape

pytestmark = pytest.mark.gpu

W, A, N = OpReqType.kWriteTo, OpReqType.kAddTo, OpReqType.kNullOp
F16 = np.dtype(np.float16)
#: allowed error per unit of the largest value compared: a few float16 roundings
TOL = 5e-3


def _close(got: np.ndarray, want: np.ndarray, what: str) -> None:
    assert got.dtype == F16, what
    scale = max(1.0, float(np.abs(want).max()))
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=0, atol=TOL * scale,
                               err_msg=what)  # fmt: skip


def _compare(name: str, params: dict, inputs: list, starts: list, reqs: list) -> Callable:
    """Op `name` on the GPU in float16 and the CPU in float64 from the same values; the
    check (called after every launch, so tools/gpu_compile_check.py, where the GPU's
    results read back zeros, compiles them all) that they agree and that outputs under
    kNullOp keep their start."""
    half = [np.asarray(a, F16) if a.dtype.kind == "f" else a for a in inputs]
    half_starts = [np.asarray(s, F16) if s.dtype.kind == "f" else s for s in starts]
    wide = [a.astype(np.float64) if a.dtype.kind == "f" else a for a in half]
    wide_starts = [s.astype(np.float64) if s.dtype.kind == "f" else s for s in half_starts]
    got = run_fcompute(name, params, half, half_starts, reqs, "gpu")
    want = run_fcompute(name, params, wide, wide_starts, reqs, "cpu")

    def check() -> None:
        for k, (g, w, s, r) in enumerate(zip(got, want, half_starts, reqs)):
            if r == N:
                np.testing.assert_array_equal(g, s, err_msg=f"{name} output {k}")
            elif g.dtype.kind == "f":
                _close(g, w, f"{name} output {k} ({OpReqType.parse(r).name})")

    return check


def _shapes(op: str, params: dict, xs: tuple) -> tuple[list, tuple]:
    """(argument shapes, output shape) of op(data of shape xs, **params)."""
    s = getattr(nv.sym, op)(nv.sym.Variable("data"), **params)
    args, outs, _ = s.infer_shape(data=xs)
    return args, outs[0]


def _layer(op: str, case: tuple, seed: int) -> None:
    """Forward, then backward, of Convolution or Deconvolution `case` in float16."""
    _, xs, params, req_f, reqs_b = case
    rng = np.random.default_rng(seed)
    args, ys = _shapes(op, params, xs)
    inputs = [rng.uniform(-1, 1, a) for a in args]
    forward = _compare(op, params, inputs, [rng.uniform(-1, 1, ys)], [req_f])
    back = [rng.uniform(-1, 1, ys), inputs[0], inputs[1]]
    starts = [rng.uniform(-1, 1, a) for a in args]
    _compare(f"_backward_{op}", params, back, starts, list(reqs_b))()
    forward()


def _conv_geometry(params: dict, xs: tuple) -> Any:
    p = Op.get("Convolution").parse_attrs(params).parsed
    args, ys = _shapes("Convolution", params, xs)
    return conv_shape(p, xs, args[1][0], tuple(ys[2:]))


@pytest.fixture
def gemm_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_im2col_cuda, "DIRECT_MAX_MACS", 0)


# (id, data shape, params, forward req, backward reqs (dx, dw[, db]))
GEMM_CASES = [
    ("2d-one-group", (2, 3, 5, 5), {"kernel": (3, 3), "num_filter": 4, "pad": (1, 1),
     "stride": (2, 2)}, W, (W, A, W)),
    ("1d-no-bias", (2, 3, 9), {"kernel": (3,), "num_filter": 4, "pad": (1,),
     "no_bias": True}, A, (A, W)),
    ("2d-groups2", (2, 4, 5, 4), {"kernel": (3, 2), "num_filter": 4, "num_group": 2,
     "pad": (1, 0)}, W, (A, A, A)),
    ("2d-1x1", (2, 6, 3, 3), {"kernel": (1, 1), "num_filter": 5}, A, (W, N, A)),
]  # fmt: skip
DIRECT_CASES = [
    ("2d-depthwise", (2, 4, 5, 5), {"kernel": (3, 3), "num_filter": 4, "num_group": 4,
     "pad": (1, 1)}, W, (W, A, A)),
    ("1d-tiny-no-bias", (1, 2, 7), {"kernel": (3,), "num_filter": 2, "stride": (2,),
     "no_bias": True}, A, (A, W)),
]  # fmt: skip


@pytest.mark.usefixtures("gemm_path")
@pytest.mark.parametrize("case", GEMM_CASES, ids=[c[0] for c in GEMM_CASES])
def test_gpu_float16_convolution_gemm_matches_cpu(case: tuple) -> None:
    assert _im2col_cuda.use_gemm(_conv_geometry(case[2], case[1]))
    _layer("Convolution", case, seed=1)


@pytest.mark.parametrize("case", DIRECT_CASES, ids=[c[0] for c in DIRECT_CASES])
@pytest.mark.parametrize("items", [1, 1 << 16], ids=["one-slice", "row-slices"])
def test_gpu_float16_convolution_direct_matches_cpu(
    monkeypatch: pytest.MonkeyPatch, case: tuple, items: int
) -> None:
    """The direct bodies; the weight gradient whole or as float64 partial sums."""
    monkeypatch.setattr(_conv_cuda, "WEIGHT_GRAD_ITEMS", items)
    assert not _im2col_cuda.use_gemm(_conv_geometry(case[2], case[1]))
    _layer("Convolution", case, seed=2)


DECONV_CASES = [
    ("2d", (2, 3, 3, 4), {"kernel": (3, 3), "num_filter": 2, "stride": (2, 2),
     "pad": (1, 1)}, W, (A, W, A)),
    ("1d-groups2-no-bias", (1, 4, 5), {"kernel": (2,), "num_filter": 4, "num_group": 2,
     "no_bias": True}, A, (W, A)),
    ("2d-depthwise", (1, 3, 3, 3), {"kernel": (3, 3), "num_filter": 3, "num_group": 3,
     "stride": (2, 2)}, W, (W, A, W)),
]  # fmt: skip


@pytest.mark.parametrize("gemm", [True, False], ids=["gemm", "direct"])
@pytest.mark.parametrize("case", DECONV_CASES, ids=[c[0] for c in DECONV_CASES])
def test_gpu_float16_deconvolution_matches_cpu(
    monkeypatch: pytest.MonkeyPatch, case: tuple, gemm: bool
) -> None:
    if gemm:
        monkeypatch.setattr(_im2col_cuda, "DIRECT_MAX_MACS", 0)
    _layer("Deconvolution", case, seed=3)


POOLS = [
    ("max", {"pool_type": "max", "kernel": (3, 3), "stride": (2, 2), "pad": (1, 1)}),
    ("max-1d", {"pool_type": "max", "kernel": (3,), "stride": (2,)}),
    ("avg", {"pool_type": "avg", "kernel": (3, 2), "stride": (2, 1), "pad": (1, 1)}),
    ("avg-valid", {"pool_type": "avg", "kernel": (2, 2), "count_include_pad": False,
     "pad": (1, 1), "pooling_convention": "full"}),
    ("sum", {"pool_type": "sum", "kernel": (2, 3), "stride": (1, 2)}),
    ("lp", {"pool_type": "lp", "p_value": 2, "kernel": (2, 2), "stride": (2, 2)}),
    ("global-avg", {"pool_type": "avg", "global_pool": True, "kernel": (1, 1)}),
    ("global-sum", {"pool_type": "sum", "global_pool": True, "kernel": (1, 1)}),
    ("global-max", {"pool_type": "max", "global_pool": True, "kernel": (1, 1)}),
]  # fmt: skip


@pytest.mark.parametrize("req", [W, A], ids=["write", "add"])
@pytest.mark.parametrize(("pool", "params"), POOLS, ids=[p[0] for p in POOLS])
def test_gpu_float16_pooling_matches_cpu(pool: str, params: dict, req: OpReqType) -> None:
    xs = (2, 2, 7) if pool.endswith("1d") else (2, 2, 5, 6)
    rng = np.random.default_rng(4)
    _, ys = _shapes("Pooling", params, xs)
    # distinct values, so each window's maximum is one position in float16 and in float64
    x = (rng.permutation(np.prod(xs)).reshape(xs) / np.prod(xs) + 0.5).astype(F16)
    starts = [rng.uniform(-1, 1, ys)]
    if params["pool_type"] == "max":
        starts.append(np.zeros(ys, np.int32))
    reqs = [req] * len(starts)
    forward = _compare("Pooling", params, [x], starts, reqs)
    # backward from the output (and argmax mask) the GPU writes under req write
    fresh = [np.zeros(ys, F16), *([np.zeros(ys, np.int32)] if len(starts) > 1 else [])]
    out = run_fcompute("Pooling", params, [x], fresh, [W] * len(fresh), "gpu")
    back = [rng.uniform(-1, 1, ys), x, *out]
    _compare("_backward_Pooling", params, back, [rng.uniform(-1, 1, xs)], [req])()
    forward()


def test_gpu_float16_convolution_sums_wider_than_float16(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """2048 first, then 16 ones: 2064 summed in float32 or wider, 2048 in a float16
    running sum (2048 + 1 rounds to even), on the direct bodies and on im2col + GEMM:
    the forward (taps in order), the weight gradient (positions in order) and the data
    gradient (col2im or the direct body: taps in order, so output positions backwards)."""
    big_first = np.ones((1, 1, 17), F16)
    big_first[0, 0, 0] = 2048
    big_last = big_first[..., ::-1].copy()
    ones = np.ones((1, 1, 17), F16)
    params = {"kernel": (17,), "num_filter": 1, "no_bias": True}
    got = {}
    for path, direct_max in (("direct", 1 << 16), ("gemm", 0)):
        monkeypatch.setattr(_im2col_cuda, "DIRECT_MAX_MACS", direct_max)
        (got[path, "y"],) = run_fcompute("Convolution", params, [big_first, ones],
                                         [np.zeros((1, 1, 1), F16)], [W], "gpu")  # fmt: skip
        xs = np.ones((1, 1, 33), F16)
        starts = [np.zeros((1, 1, 33), F16), np.zeros((1, 1, 17), F16)]
        _, got[path, "dw"] = run_fcompute("_backward_Convolution", params,
                                          [big_first, xs, ones], starts, [N, W], "gpu")  # fmt: skip
        got[path, "dx"], _ = run_fcompute("_backward_Convolution", params,
                                          [big_last, xs, ones], starts, [W, N], "gpu")  # fmt: skip
    sums = {k: float(v[0, 0, 16] if k[1] == "dx" else v.flat[0]) for k, v in got.items()}
    assert sums == dict.fromkeys(got, 2064.0)


def test_gpu_float16_pooling_sums_wider_than_float16() -> None:
    """A sum window of 2048 and 16 ones, and its average, from the window kernel."""
    x = np.ones((1, 1, 1, 17), F16)
    x[..., 0] = 2048
    got = {}
    for pool in ("sum", "avg"):
        params = {"pool_type": pool, "kernel": (1, 17)}
        out = [np.zeros((1, 1, 1, 1), F16)]
        (got[pool],) = run_fcompute("Pooling", params, [x], out, [W], "gpu")
    assert got["sum"].item() == 2064
    assert got["avg"].item() == np.float16(2064 / 17)


def test_gpu_float16_bias_gradient_sums_wider_than_float16() -> None:
    """The bias gradient (a reduction) of 2048 and 16 ones is 2064."""
    dy = np.ones((1, 1, 17), F16)
    dy[0, 0, 0] = 2048
    params = {"kernel": (1,), "num_filter": 1}
    args = [dy, np.zeros((1, 1, 17), F16), np.zeros((1, 1, 1), F16)]
    starts = [np.zeros((1, 1, 17), F16), np.zeros((1, 1, 1), F16), np.zeros(1, F16)]
    *_, db = run_fcompute("_backward_Convolution", params, args, starts, [N, N, W], "gpu")
    assert db.item() == 2064


@pytest.mark.parametrize(
    ("op", "params", "shapes"),
    [
        ("Convolution", {"kernel": (2, 2), "num_filter": 1, "no_bias": True},
         [(1, 1, 3, 3), (1, 1, 2, 2)]),
        ("Deconvolution", {"kernel": (2, 2), "num_filter": 1, "no_bias": True},
         [(1, 1, 3, 3), (1, 1, 2, 2)]),
        ("Pooling", {"kernel": (2, 2), "pool_type": "avg"}, [(1, 1, 3, 3)]),
    ],
    ids=["Convolution", "Deconvolution", "Pooling"],
)  # fmt: skip
def test_gpu_rejects_int_data_by_name(op: str, params: dict, shapes: list) -> None:
    inputs = [np.ones(s, np.int32) for s in shapes]
    out = np.zeros((1, 1, 2, 2) if op != "Deconvolution" else (1, 1, 4, 4), np.int32)
    with pytest.raises(InferError, match=rf"{op}: input 'data' has dtype int32.*float16"):
        run_fcompute(op, params, inputs, [out], [W], "gpu")
