"""The quantized ops that left host NumPy in issue 16 (elemwise add / mul, concat, pooling,
embedding, batch_norm) against their NumPy references (quantized_numpy.py), bit for bit:
rounding ties, saturation, zero and NaN ranges, every write request; CPU and GPU.

Each op's FCompute<device> is called as the executor calls it. On the GPU the device
arrays refuse copy_to_host while it runs, so a test fails if a range (or anything else)
is read on the host. GPU sizes are tiny: the simulator runs each thread in Python.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np
import op_db  # noqa: F401  (first: it loads every cases_*.py)
import pytest
import quantized_numpy as ref

import nnvmpy as nv
from nnvmpy import Op
from nnvmpy.attrs import fcompute
from nnvmpy.base import OpReqType
from nnvmpy.engine.base import RunContext
from nnvmpy.resource import OpContext

# the edge cases compute with NaN and infinities on purpose, in NumPy and the simulator
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

DEVICES = ["cpu", pytest.param("gpu", marks=pytest.mark.gpu)]
W, A, N = OpReqType.kWriteTo, OpReqType.kAddTo, OpReqType.kNullOp
#: write requests for the (codes, min, max) outputs: each output sees every kind
REQS = [(W, W, W), (A, A, A), (N, A, W), (W, N, A)]
Reference = Callable[..., list[np.ndarray]]


def _r(v: float) -> np.ndarray:
    return np.array([v], np.float32)


def _cuda() -> Any:
    from numba import cuda

    return cuda


@contextmanager
def _no_host_reads(device_array: Any) -> Iterator[None]:
    """Device arrays of this kind raise on copy_to_host inside the block."""
    kind = type(device_array)
    original = kind.copy_to_host

    def refuse(self: Any, *args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the op copied a device array to the host")

    kind.copy_to_host = refuse
    try:
        yield
    finally:
        kind.copy_to_host = original


def _start(rng: np.random.Generator, like: np.ndarray) -> np.ndarray:
    """What an output holds before the op runs: any value of its dtype."""
    if like.dtype.kind == "f":
        return rng.uniform(-3, 3, like.shape).astype(like.dtype)
    info = np.iinfo(like.dtype)
    return rng.integers(info.min, int(info.max) + 1, like.shape).astype(like.dtype)


def run_op(
    name: str, params: dict, inputs: Sequence[np.ndarray], starts: list[np.ndarray],
    reqs: Sequence[OpReqType], device: str,
) -> list[np.ndarray]:  # fmt: skip
    """Op `name`'s FCompute<device> on the inputs; the outputs start as `starts`."""
    op = Op.get(name)
    attrs = op.parse_attrs(params)
    ctx = OpContext(False, RunContext(nv.cpu() if device == "cpu" else nv.gpu(0), None), [])
    compute = op.get_attr(fcompute(device))
    if device == "cpu":
        outputs = [s.copy() for s in starts]
        compute(attrs, ctx, list(inputs), list(reqs), outputs)
        return outputs
    cuda = _cuda()
    dev_in = [cuda.to_device(np.ascontiguousarray(a)) for a in inputs]
    dev_out = [cuda.to_device(s) for s in starts]
    with _no_host_reads(dev_out[0]):
        compute(attrs, ctx, dev_in, list(reqs), dev_out)
    return [o.copy_to_host() for o in dev_out]


def check(
    name: str, params: dict, inputs: Sequence[np.ndarray], reference: Reference, device: str,
    reqs: Sequence[OpReqType] | None = None, seed: int = 0,
) -> list[np.ndarray]:  # fmt: skip
    """The op's outputs equal the reference's exactly, as each request says: written,
    added (in the output's dtype, wrapping as NumPy's +=) or left alone. Returns the
    reference's outputs."""
    want = reference(Op.get(name).parse_attrs(params).parsed, *inputs)
    reqs = list(reqs or [W] * len(want))
    rng = np.random.default_rng(seed)
    starts = [_start(rng, w) for w in want]
    got = run_op(name, params, inputs, starts, reqs, device)
    for j, (g, w, s, q) in enumerate(zip(got, want, starts, reqs)):
        expected = w
        if q == N:
            expected = s
        elif q == A:
            expected = s.copy()
            expected += w.astype(s.dtype)
        assert g.dtype == w.dtype, f"{name}: output {j} is {g.dtype}, expected {w.dtype}"
        np.testing.assert_array_equal(g, expected, err_msg=f"{name}: output {j} ({q.name})")
    return want


def _codes(rng: np.random.Generator, dtype: Any, shape: Any) -> np.ndarray:
    info = np.iinfo(dtype)
    return rng.integers(info.min, int(info.max) + 1, shape).astype(dtype)


# -- quantized_elemwise_add -------------------------------------------------------------------

ADD = "_contrib_quantized_elemwise_add"
# (id, lhs dtype, rhs dtype, the four ranges, params)
ADD_CASES = [
    ("int32", np.int8, np.uint8, (-0.5, 0.5, 0.0, 1.5), {}),
    ("int32-wide", np.int8, np.int8, (-3e4, 2e4, -1e-3, 5e-4), {}),
    # steps of 1.0 and a calibrated MaxAbs of 254: code = rint((x + y) / 2), ties to even
    ("calib-ties", np.int8, np.int8, (-127.0, 127.0, -127.0, 50.0),
     {"min_calib_range": -254.0, "max_calib_range": 100.0}),
    ("calib-saturates", np.int8, np.uint8, (-2.0, 1.0, 0.0, 3.0),
     {"min_calib_range": -0.75, "max_calib_range": 0.5}),
    ("calib-uint8", np.uint8, np.int8, (0.0, 2.0, -1.0, 1.0),
     {"min_calib_range": 0.0, "max_calib_range": 1.5}),
    ("zero-ranges", np.int8, np.int8, (0.0, 0.0, -0.0, 0.0), {}),
    ("calib-zero", np.int8, np.int8, (-1.0, 1.0, -1.0, 1.0),
     {"min_calib_range": 0.0, "max_calib_range": 0.0}),
    # MaxAbs(NaN, hi) is NaN (every int32 code INT32_MIN, int8 code 0), MaxAbs(lo, NaN)
    # is |lo| (Python's max)
    ("nan-min", np.int8, np.int8, (np.nan, 1.0, -1.0, 1.0), {}),
    ("nan-max", np.int8, np.int8, (-1.0, np.nan, -1.0, 1.0), {}),
    ("nan-calib", np.int8, np.int8, (-1.0, 1.0, np.nan, 1.0),
     {"min_calib_range": -1.0, "max_calib_range": 1.0}),
]  # fmt: skip


def _add_inputs(case: tuple, n: int, seed: int = 1) -> list[np.ndarray]:
    _, lt, rt, ranges, _ = case
    rng = np.random.default_rng(seed)
    return [_codes(rng, lt, n), _codes(rng, rt, n), *(_r(v) for v in ranges)]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", ADD_CASES, ids=[c[0] for c in ADD_CASES])
def test_elemwise_add_matches_numpy(device: str, case: tuple) -> None:
    n = 5000 if device == "cpu" else 48
    check(ADD, case[4], _add_inputs(case, n), ref.add_np, device)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("reqs", REQS, ids=["write", "add", "null-add-write", "write-null-add"])
def test_elemwise_add_honours_requests(device: str, reqs: tuple) -> None:
    for case in (ADD_CASES[0], ADD_CASES[3]):
        check(ADD, case[4], _add_inputs(case, 40, seed=2), ref.add_np, device, reqs)


def test_elemwise_add_runs_the_parallel_loop() -> None:
    """Past the serial cutoff (200k elements) the CPU runs the prange build."""
    check(ADD, ADD_CASES[3][4], _add_inputs(ADD_CASES[3], 300_001), ref.add_np, "cpu")


# -- quantized_elemwise_mul -------------------------------------------------------------------

MUL = "_contrib_quantized_elemwise_mul"
CALIB = {"min_calib_range": -4.0, "max_calib_range": 5.0}
# (id, the four ranges, params)
MUL_CASES = [
    ("int32", (-2.0, 1.5, -0.5, 3.0), {}),
    ("int32-zero-ranges", (0.0, 0.0, -0.0, 0.0), {}),
    ("float", (-2.0, 1.5, -0.5, 3.0), {"enable_float_output": True}),
    # in_scale overflows to inf (scale 0) / underflows to 0 (scale inf, NaN for 0 * inf)
    ("float-tiny-range", (-1e-37, 1e-37, -3e-9, 1.0), {"enable_float_output": True}),
    ("float-huge-range", (-3e38, 1.0, -1.0, 3e38), {"enable_float_output": True}),
    ("calib-huge-range", (-3e38, 1.0, -1.0, 3e38), CALIB),
    ("calib", (-2.0, 1.5, -0.5, 3.0), CALIB),
    ("calib-saturates", (-2.0, 1.5, -0.5, 3.0),
     {"min_calib_range": -0.02, "max_calib_range": 0.01}),
    ("calib-empty", (-2.0, 1.5, -0.5, 3.0), {"min_calib_range": 0.0, "max_calib_range": 0.0}),
    ("nan-int32", (np.nan, 1.0, -1.0, 1.0), {}),
    ("nan-float", (-1.0, 1.0, np.nan, 1.0), {"enable_float_output": True}),
    ("nan-calib", (np.nan, 1.0, -1.0, 1.0), CALIB),
]  # fmt: skip


def _mul_inputs(ranges: tuple, n: int, seed: int = 3) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    lhs, rhs = _codes(rng, np.int8, n), _codes(rng, np.int8, n)
    lhs[:2], rhs[:2] = -128, [-128, 127]  # the largest products
    return [lhs, rhs, *(_r(v) for v in ranges)]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", MUL_CASES, ids=[c[0] for c in MUL_CASES])
def test_elemwise_mul_matches_numpy(device: str, case: tuple) -> None:
    n = 5000 if device == "cpu" else 48
    check(MUL, case[2], _mul_inputs(case[1], n), ref.mul_np, device)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("reqs", REQS, ids=["write", "add", "null-add-write", "write-null-add"])
@pytest.mark.parametrize("params", [{}, CALIB], ids=["int32", "calib"])
def test_elemwise_mul_honours_requests(device: str, reqs: tuple, params: dict) -> None:
    check(MUL, params, _mul_inputs(MUL_CASES[0][1], 40), ref.mul_np, device, reqs)


@pytest.mark.parametrize("device", DEVICES)
def test_elemwise_mul_float_output_honours_requests(device: str) -> None:
    inputs = _mul_inputs(MUL_CASES[0][1], 40)
    for req in (W, A, N):
        check(MUL, {"enable_float_output": True}, inputs, ref.mul_np, device, [req])


@pytest.mark.parametrize("device", DEVICES)
def test_elemwise_mul_of_a_zero_range_is_zero(device: str) -> None:
    """in_scale = 127.5 / 0 is inf (the reference's Python division raises instead): real
    values and calibrated codes are 0."""
    inputs = _mul_inputs((0.0, 0.0, -1.0, 1.0), 16)
    out = run_op(MUL, {"enable_float_output": True}, inputs, [np.ones(16, np.float32)], [W],
                 device)  # fmt: skip
    np.testing.assert_array_equal(out[0], 0.0)
    starts = [np.ones(16, np.int8), _r(7.0), _r(7.0)]
    out = run_op(MUL, CALIB, inputs, starts, [W] * 3, device)
    np.testing.assert_array_equal(out[0], 0)
    np.testing.assert_array_equal(np.r_[out[1], out[2]], [-4.0, 5.0])


# -- quantized_concat -------------------------------------------------------------------------

CONCAT = "_contrib_quantized_concat"
# (id, dim, [(dtype, shape, (min, max)), ...])
CONCAT_CASES = [
    ("mixed", 1, [(np.int8, (2, 3, 4), (-1.0, 1.0)), (np.uint8, (2, 2, 4), (0.0, 3.0)),
                  (np.int8, (2, 1, 4), (-0.5, 0.25))]),
    # output step 2/127: the first input's codes halve (ties to even), the second is copied
    ("ties-and-copy", 0, [(np.int8, (3, 5), (-1.0, 1.0)), (np.int8, (2, 5), (-2.0, 2.0))]),
    ("uint8-last-axis", -1, [(np.uint8, (2, 3, 2), (0.0, 1.0)), (np.uint8, (2, 3, 5), (0.0, 4.0))]),
    ("one-dim", 0, [(np.uint8, (7,), (0.0, 2.0)), (np.int8, (4,), (-1.0, 0.5))]),
    # the output's step is 0: copied, uint8 codes saturating at 127 (also the inverted
    # range's, whose own step is not 0)
    ("zero-ranges", 1, [(np.int8, (2, 3), (0.0, 0.0)), (np.uint8, (2, 4), (0.0, -0.0))]),
    ("zero-output-range", 1, [(np.int8, (2, 3), (0.0, 0.0)), (np.uint8, (2, 4), (0.5, -0.5))]),
    # a NaN min met first is the output's min (Python's min); met later it is not
    ("nan-first", 1, [(np.int8, (2, 3), (np.nan, 1.0)), (np.int8, (2, 2), (-2.0, 2.0))]),
    ("nan-later", 1, [(np.int8, (2, 3), (-1.0, 1.0)), (np.int8, (2, 2), (np.nan, 2.0))]),
]  # fmt: skip


def _concat_inputs(parts: list, seed: int = 4) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    data = [_codes(rng, dtype, shape) for dtype, shape, _ in parts]
    return data + [_r(v) for _, _, bounds in parts for v in bounds]


def _concat_params(dim: int, parts: list) -> dict:
    return {"num_args": len(parts), "dim": dim}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", CONCAT_CASES, ids=[c[0] for c in CONCAT_CASES])
def test_concat_matches_numpy(device: str, case: tuple) -> None:
    _, dim, parts = case
    want = check(CONCAT, _concat_params(dim, parts), _concat_inputs(parts), ref.concat_np, device)
    if case[0].startswith("zero"):
        assert want[0].max() == 127  # the case meant saturated copies


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("reqs", REQS, ids=["write", "add", "null-add-write", "write-null-add"])
def test_concat_honours_requests(device: str, reqs: tuple) -> None:
    _, dim, parts = CONCAT_CASES[0]
    check(CONCAT, _concat_params(dim, parts), _concat_inputs(parts), ref.concat_np, device, reqs)


@pytest.mark.parametrize(
    ("dim", "parts"),
    [
        (1, [(np.int8, (3, 5000), (-1.0, 1.0)), (np.uint8, (3, 3000), (0.0, 3.0))]),
        (0, [(np.uint8, (1, 9000), (0.0, 1.0)), (np.uint8, (2, 9000), (0.0, 2.0))]),
    ],
    ids=["axis-1", "axis-0"],
)
def test_concat_rows_of_several_chunks(dim: int, parts: list) -> None:
    """CPU items are chunks of CHUNK (4096) codes of a row: rows of 3000 to 18000 codes."""
    check(CONCAT, _concat_params(dim, parts), _concat_inputs(parts), ref.concat_np, "cpu")


# -- quantized_pooling ------------------------------------------------------------------------

POOL = "_contrib_quantized_pooling"
# (id, params, spatial shape on the CPU, on the GPU)
POOL_CASES = [
    ("max-3x3-s2", {"kernel": (3, 3), "stride": (2, 2), "pool_type": "max"}, (9, 8), (5, 4)),
    ("max-pad-full", {"kernel": (3, 3), "stride": (2, 2), "pad": (1, 1), "pool_type": "max",
                      "pooling_convention": "full"}, (9, 8), (4, 5)),
    ("avg-pad", {"kernel": (3, 3), "stride": (2, 2), "pad": (1, 1), "pool_type": "avg"},
     (9, 8), (5, 4)),
    # 2x2 windows: sums over 4, ties to even half the time; the edges divide by 2 or 1
    ("avg-2x2-pad-exclude", {"kernel": (2, 2), "pad": (1, 1), "pool_type": "avg",
                             "count_include_pad": False}, (6, 7), (3, 4)),
    ("avg-same", {"kernel": (3, 2), "stride": (2, 3), "pool_type": "avg",
                  "pooling_convention": "same"}, (9, 8), (5, 4)),
    ("avg-global", {"kernel": (1, 1), "pool_type": "avg", "global_pool": True}, (9, 8), (3, 4)),
    # stride past the kernel under 'full': the last window of each axis is empty
    ("full-empty-max", {"kernel": (1, 2), "stride": (3, 3), "pool_type": "max",
                        "pooling_convention": "full"}, (5, 7), (5, 4)),
    ("full-empty-avg", {"kernel": (1, 2), "stride": (3, 3), "pool_type": "avg",
                        "pooling_convention": "full"}, (5, 7), (5, 4)),
    ("1d-avg", {"kernel": (3,), "stride": (2,), "pad": (1,), "pool_type": "avg"}, (11,), (5,)),
    ("3d-max", {"kernel": (2, 3, 2), "pad": (1, 0, 1), "pool_type": "max"}, (4, 5, 3), (3, 3, 2)),
    ("3d-avg", {"kernel": (2, 2, 2), "stride": (2, 1, 2), "pool_type": "avg",
                "count_include_pad": False, "pad": (1, 1, 0)}, (4, 5, 3), (3, 3, 2)),
]  # fmt: skip


def _pool_inputs(dtype: Any, spatial: tuple, seed: int = 5) -> list[np.ndarray]:
    x = _codes(np.random.default_rng(seed), dtype, (2, 3, *spatial))
    return [x, _r(-2.5), _r(3.0)]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
@pytest.mark.parametrize("case", POOL_CASES, ids=[c[0] for c in POOL_CASES])
def test_pooling_matches_numpy(device: str, dtype: Any, case: tuple) -> None:
    _, params, cpu_shape, gpu_shape = case
    inputs = _pool_inputs(dtype, cpu_shape if device == "cpu" else gpu_shape)
    want = check(POOL, params, inputs, ref.pooling_np, device)
    if case[0].startswith("full-empty"):
        assert np.all(want[0][..., -1, :] == 0)  # the case meant empty windows (last row)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("reqs", REQS, ids=["write", "add", "null-add-write", "write-null-add"])
def test_pooling_honours_requests(device: str, reqs: tuple) -> None:
    _, params, _, shape = POOL_CASES[2]
    check(POOL, params, _pool_inputs(np.int8, shape), ref.pooling_np, device, reqs)


# -- quantized_embedding ----------------------------------------------------------------------

EMBED = "_contrib_quantized_embedding"
#: ties round to even (0.5 -> 0, 2.5 -> 2, 3.5 -> 4), the ends clip, -0.6 rounds to row 0
INDICES = [0.5, 1.5, 2.5, 3.5, -0.5, -0.6, -7.0, 4.49, 4.5, 99.0, 1e30, -np.inf, np.inf, 3.0]


def _embed_inputs(dtype: Any, input_dim: int, dim: int, seed: int = 6) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    idx = np.array(INDICES if np.dtype(dtype).kind == "f" else [0, 4, -3, 2, 9, 1])
    data = idx.astype(dtype)[: 14 if np.dtype(dtype).kind == "f" else 6]
    weight = _codes(rng, np.int8, (input_dim, dim))
    return [data.reshape(2, -1), weight, _r(-0.5), _r(0.25)]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int32, np.int64])
def test_embedding_matches_numpy(device: str, dtype: Any) -> None:
    params = {"input_dim": 5, "output_dim": 3}
    check(EMBED, params, _embed_inputs(dtype, 5, 3), ref.embedding_np, device)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("reqs", REQS, ids=["write", "add", "null-add-write", "write-null-add"])
def test_embedding_honours_requests(device: str, reqs: tuple) -> None:
    params = {"input_dim": 5, "output_dim": 3}
    check(EMBED, params, _embed_inputs(np.float32, 5, 3), ref.embedding_np, device, reqs)


def test_embedding_rows_of_several_chunks() -> None:
    """CPU items are chunks of CHUNK (4096) codes of a row."""
    params = {"input_dim": 7, "output_dim": 9000}
    check(EMBED, params, _embed_inputs(np.float32, 7, 9000), ref.embedding_np, "cpu", [A, W, W])


@pytest.mark.parametrize("device", DEVICES)
def test_embedding_reads_row_0_for_nan(device: str) -> None:
    """NumPy's reference raises IndexError (a NaN cast to int64); the kernel clips NaN to 0."""
    _, weight, lo, hi = _embed_inputs(np.float32, 5, 3)
    data = np.array([np.nan, 4.0, np.nan], np.float32)
    starts = [np.zeros((3, 3), np.int8), _r(0.0), _r(0.0)]
    out = run_op(EMBED, {"input_dim": 5, "output_dim": 3}, [data, weight, lo, hi], starts,
                 [W] * 3, device)  # fmt: skip
    np.testing.assert_array_equal(out[0], weight[[0, 4, 0]])


# -- quantized_batch_norm ---------------------------------------------------------------------

BN = "_contrib_quantized_batch_norm"
BN_CALIB = {"min_calib_range": -3.0, "max_calib_range": 4.0}


def _bn_inputs(dtype: Any, shape: tuple, axis: int, data_range: tuple = (-1.5, 2.5),
               seed: int = 7) -> list[np.ndarray]:  # fmt: skip
    rng = np.random.default_rng(seed)
    c = shape[axis]
    gamma, beta = rng.uniform(0.5, 1.5, c), rng.normal(size=c)
    mean, var = rng.normal(size=c) * 0.3, rng.uniform(0.5, 2.0, c)
    stats = [v.astype(np.float32) for v in (gamma, beta, mean, var)]
    return [_codes(rng, dtype, shape), *stats, *(_r(v) for v in data_range)]


# (id, data dtype, shape on the CPU, on the GPU, params)
BN_CASES = [
    ("int8", np.int8, (2, 3, 4, 5), (2, 3, 2, 2), {**BN_CALIB, "fix_gamma": False}),
    ("uint8-eps", np.uint8, (2, 3, 4, 5), (2, 3, 2, 2), {"min_calib_range": -1.0,
                                                         "max_calib_range": 2.0, "eps": 1e-2}),
    ("channels-last", np.int8, (2, 5, 3), (2, 2, 3), {**BN_CALIB, "axis": -1}),
    ("2d", np.int8, (7, 4), (3, 4), {**BN_CALIB, "axis": 1}),
    ("saturates", np.int8, (2, 3, 4, 5), (2, 3, 2, 2), {"min_calib_range": -0.1,
                                                        "max_calib_range": 0.05}),
    ("empty-calib", np.int8, (2, 3, 4), (2, 3, 2), {"min_calib_range": 0.0,
                                                    "max_calib_range": -0.0}),
]  # fmt: skip


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", BN_CASES, ids=[c[0] for c in BN_CASES])
def test_batch_norm_matches_numpy(device: str, case: tuple) -> None:
    _, dtype, cpu_shape, gpu_shape, params = case
    shape = cpu_shape if device == "cpu" else gpu_shape
    axis = params.get("axis", 1)
    check(BN, params, _bn_inputs(dtype, shape, axis), ref.batch_norm_np, device)


@pytest.mark.parametrize("device", DEVICES)
def test_batch_norm_ties_round_to_even(device: str) -> None:
    """step 1, invstd 1 (var + eps = 1), beta 0.5, scale 1: code = rint(x + 0.5)."""
    x = np.arange(-128, 128, 3 if device == "cpu" else 37).astype(np.int8).reshape(1, 1, -1)
    ones = np.ones(1, np.float32)
    inputs = [x, ones, ones * 0.5, ones * 0, ones * 0.5, _r(-127.5), _r(127.5)]
    params = {"min_calib_range": -127.5, "max_calib_range": 1.0, "eps": 0.5}
    want = check(BN, params, inputs, ref.batch_norm_np, device)
    np.testing.assert_array_equal(want[0], np.clip(np.rint(x + 0.5), -128, 127))  # as meant


@pytest.mark.parametrize("device", DEVICES)
def test_batch_norm_of_degenerate_statistics(device: str) -> None:
    """var + eps < 0 in channel 1 (NaN invstd: codes 0), = 0 in channel 2 (infinite
    invstd: saturated codes, 0 where x = mean), then a NaN data range (every code 0)."""
    params = {**BN_CALIB, "eps": 0.5}
    inputs = _bn_inputs(np.int8, (2, 4, 3), 1)
    inputs[4][1:3] = [-1.0, -0.5]
    inputs[3][2] = 0.0  # mean 0: code 0 is x = mean, (0 - 0) * inf = NaN
    inputs[0][0, 2, 0] = 0
    want = check(BN, params, inputs, ref.batch_norm_np, device)
    assert np.all(want[0][:, 1] == 0)
    assert set(want[0][:, 2].ravel()) <= {-128, 0, 127}
    assert np.any(want[0][:, 0] != 0)
    inputs[5] = _r(np.nan)
    want = check(BN, params, inputs, ref.batch_norm_np, device)
    assert np.all(want[0] == 0)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("reqs", REQS, ids=["write", "add", "null-add-write", "write-null-add"])
def test_batch_norm_honours_requests(device: str, reqs: tuple) -> None:
    check(BN, BN_CALIB, _bn_inputs(np.uint8, (2, 3, 2), 1), ref.batch_norm_np, device, reqs)


def test_batch_norm_rows_of_several_chunks() -> None:
    """CPU items are chunks of CHUNK (4096) elements of a channel row."""
    check(BN, BN_CALIB, _bn_inputs(np.int8, (2, 3, 9000), 1), ref.batch_norm_np, "cpu")
