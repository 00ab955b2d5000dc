"""GPU Convolution with one group: the GEMM writes the NCHW output itself (_im2col_cuda.py).

One group lays the column matrix out image-major, colT (m, rows, P), so the forward is one
GEMM batched over the chunk's images straight into out[n0:n0+m] (write or add), then one
bias pass, and the data gradient reads dy[n0:n0+m] as it is (dcolT = W^T @ dy, then
col2im). These tests check that path against the CPU op (float64) and NumPy over several
chunks, every req, with and without bias, 1-D to 3-D, and with launch spies that it is
the one taken: no rows_to_images / images_to_rows, the GEMM's output inside the op's
output, no tmp scratch; while groups > 1 and the weight gradient keep the row layout.

Under the CUDA simulator the tiled GEMM costs ~0.15 s per 16x16 block: the shapes keep
P and F within one tile per image, and DIRECT_MAX_MACS is 0 so they take im2col + GEMM.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

# isort: off
import op_db  # noqa: F401  (first: it loads every cases_*.py, so cases_conv is complete)
from cases_conv import conv_reference

# isort: on

from fcompute_call import run_fcompute

from nnvmpy import Op
from nnvmpy.base import OpReqType
from nnvmpy.ops import matrix
from nnvmpy.ops.nn import _im2col_cuda
from nnvmpy.ops.nn.convolution import conv_shape

pytestmark = pytest.mark.gpu

W, A, N = OpReqType.kWriteTo, OpReqType.kAddTo, OpReqType.kNullOp

# (id, data shape, params): one group, not pointwise; 5 images (chunks of 2, 2 and 1)
CASES = [
    ("2d-stride-pad-dilate", (5, 2, 5, 5), {"kernel": (3, 3), "num_filter": 3,
     "stride": (2, 1), "pad": (1, 2), "dilate": (1, 2)}),
    ("1d-stride-pad-nobias", (5, 3, 9), {"kernel": (3,), "num_filter": 4, "stride": (2,),
     "pad": (1,), "no_bias": True}),
    ("3d", (5, 2, 3, 3, 3), {"kernel": (2, 2, 2), "num_filter": 3, "pad": (1, 0, 1),
     "stride": (1, 1, 2)}),
    ("1x1-strided-nobias", (5, 4, 5, 5), {"kernel": (1, 1), "num_filter": 5,
     "stride": (2, 2), "no_bias": True}),
]  # fmt: skip


def _shape(params: dict, x: tuple) -> Any:
    p = Op.get("Convolution").parse_attrs(params).parsed
    k, st, pad, d = p.kernel, p.stride, p.pad, p.dilate
    out = [(x[2 + a] + 2 * pad[a] - d[a] * (k[a] - 1) - 1) // st[a] + 1 for a in range(len(k))]
    return conv_shape(p, x, params["num_filter"], tuple(out))


def _inputs(xs: tuple, params: dict, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    g, f = params.get("num_group", 1), params["num_filter"]
    arrays = [rng.uniform(-1, 1, xs), rng.uniform(-1, 1, (f, xs[1] // g, *params["kernel"]))]
    if not params.get("no_bias"):
        arrays.append(rng.uniform(-1, 1, f))
    return arrays


def _tolerance(dtype: Any) -> dict:
    return {"rtol": 1e-10, "atol": 1e-12} if dtype == np.float64 else {"rtol": 1e-4, "atol": 1e-5}


@pytest.fixture
def gemm_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_im2col_cuda, "DIRECT_MAX_MACS", 0)


def _chunks_of_two(monkeypatch: pytest.MonkeyPatch, s: Any, dtype: Any) -> None:
    """A workspace for two images' image-major column matrices (5 images: 2, 2, 1)."""
    per_image = s.rows * s.hw * np.dtype(dtype).itemsize
    monkeypatch.setattr(_im2col_cuda, "MAX_WORKSPACE_BYTES", 2 * per_image + per_image // 2)
    assert _im2col_cuda.chunk_images(s, np.dtype(dtype).itemsize, images=True) == 2


def _params(float32: set[str]) -> list:
    out = []
    for case in CASES:
        for req, rid in ((W, "write"), (A, "add")):
            out.append(pytest.param(case, np.float64, req, id=f"{case[0]}-float64-{rid}"))
        if case[0] in float32:
            out.append(pytest.param(case, np.float32, A, id=f"{case[0]}-float32-add"))
    return out


@pytest.mark.usefixtures("gemm_path")
@pytest.mark.parametrize(("case", "dtype", "req"), _params({"2d-stride-pad-dilate", "3d"}))
def test_forward_into_the_output_matches_cpu(
    monkeypatch: pytest.MonkeyPatch, case: tuple, dtype: Any, req: OpReqType
) -> None:
    name, xs, params = case
    s = _shape(params, xs)
    assert s.groups == 1
    assert not s.pointwise
    assert _im2col_cuda.use_gemm(s)
    _chunks_of_two(monkeypatch, s, dtype)
    wide = _inputs(xs, params, seed=len(name))
    y_ref = conv_reference(*wide, **params)
    start = np.random.default_rng(1).uniform(-1, 1, y_ref.shape)
    (y_cpu,) = _run("Convolution", params, wide, [start], [req], "cpu")
    np.testing.assert_allclose(y_cpu, y_ref + (start if req == A else 0), rtol=1e-10)
    narrow = [a.astype(dtype) for a in wide]
    (y_gpu,) = _run("Convolution", params, narrow, [start.astype(dtype)], [req], "gpu")
    assert y_gpu.dtype == dtype
    np.testing.assert_allclose(y_gpu, y_cpu, **_tolerance(dtype), err_msg=f"{name}: forward")


@pytest.mark.usefixtures("gemm_path")
@pytest.mark.parametrize(("case", "dtype", "req"), _params({"3d"}))
def test_data_gradient_from_dy_matches_cpu(
    monkeypatch: pytest.MonkeyPatch, case: tuple, dtype: Any, req: OpReqType
) -> None:
    """The weight gradient not wanted (kNullOp): dx image-major; a bias gradient (written)
    where there is a bias, which does not change the path."""
    name, xs, params = case
    s = _shape(params, xs)
    _chunks_of_two(monkeypatch, s, dtype)
    wide = _inputs(xs, params, seed=len(name) + 1)
    rng = np.random.default_rng(2)
    dy = rng.uniform(-1, 1, (s.n, s.f, *_out_dims(s, len(xs) - 2)))
    args = [dy, wide[0], wide[1]]
    starts = [rng.uniform(-1, 1, a.shape) for a in wide]
    reqs = [req, N] + ([W] if len(wide) > 2 else [])
    cpu = _run("_backward_Convolution", params, args, starts, reqs, "cpu")
    gpu = _run("_backward_Convolution", params, [a.astype(dtype) for a in args],
               [a.astype(dtype) for a in starts], reqs, "gpu")  # fmt: skip
    grad = cpu[0] - (starts[0] if req == A else 0)
    assert np.abs(grad).max() > 1e-2, f"{name}: the data gradient is trivial"
    np.testing.assert_allclose(gpu[0], cpu[0], **_tolerance(dtype), err_msg=f"{name}: dx")
    np.testing.assert_array_equal(gpu[1], starts[1].astype(dtype))  # kNullOp: untouched
    if len(wide) > 2:
        np.testing.assert_allclose(gpu[2], cpu[2], **_tolerance(dtype), err_msg=f"{name}: db")


def _out_dims(s: Any, nd: int) -> tuple[int, ...]:
    dims = (s.depth.do, s.win.ho, s.win.wo)
    return dims[3 - nd :] if nd > 1 else (s.win.wo,)


def _run(name: str, params: dict, inputs: list, starts: list, reqs: list, device: str) -> list:
    return run_fcompute(name, params, inputs, starts, reqs, device)


# -- which path runs: launch spies ------------------------------------------------------------


def _span(a: Any) -> tuple[int, int]:
    """[start, end) of a device array's memory (real, compile-check or simulated array)."""
    try:
        start = a.__cuda_array_interface__["data"][0]
    except AttributeError:  # the simulator's FakeCUDAArray wraps a NumPy array
        start = a.__array_interface__["data"][0]
    return start, start + a.size * a.dtype.itemsize


def _inside(inner: tuple[int, int], outer: tuple[int, int]) -> bool:
    return outer[0] <= inner[0] and inner[1] <= outer[1]


class _Spy:
    """Records the one-body kernels _im2col_cuda launches, each GEMM's output and right
    operand, the scratch it asks for, and the op's output (forward) or dx and dy
    (backward)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.bodies: list[Any] = []
        self.gemms: list[tuple[tuple[int, int], tuple[int, int]]] = []
        self.scratch: list[tuple[int, int]] = []
        self.arrays: dict[str, tuple[int, int]] = {}
        run_rows, gemm, scratch = _im2col_cuda.run_rows, matrix.gemm, _im2col_cuda._scratch
        forward, backward = _im2col_cuda.forward, _im2col_cuda.backward

        def spy_run_rows(ctx: Any, name: str, loop: Any, *args: Any) -> None:
            self.bodies.append(loop)
            run_rows(ctx, name, loop, *args)

        def spy_gemm(
            ctx: Any, out: Any, req: Any, a: Any, ta: bool, b: Any, *rest: Any, **kw: Any
        ) -> None:
            self.gemms.append((_span(out), _span(b)))
            gemm(ctx, out, req, a, ta, b, *rest, **kw)

        def spy_scratch(s: Any, res: Any, dtype: Any, images: bool) -> tuple[int, Any]:
            nb, space = scratch(s, res, dtype, images)
            self.scratch.append((nb, space.size))
            return nb, space

        def spy_forward(ctx: Any, name: str, s: Any, x: Any, w: Any, bias: Any, out: Any,
                        *rest: Any) -> None:  # fmt: skip
            self.arrays["out"] = _span(out)
            forward(ctx, name, s, x, w, bias, out, *rest)

        def spy_backward(ctx: Any, name: str, s: Any, dy: Any, x: Any, w: Any, dx: Any,
                         *rest: Any) -> None:  # fmt: skip
            self.arrays["dy"] = _span(dy)
            if dx is not None:
                self.arrays["dx"] = _span(dx)
            backward(ctx, name, s, dy, x, w, dx, *rest)

        monkeypatch.setattr(_im2col_cuda, "run_rows", spy_run_rows)
        monkeypatch.setattr(matrix, "gemm", spy_gemm)
        monkeypatch.setattr(_im2col_cuda, "_scratch", spy_scratch)
        monkeypatch.setattr(_im2col_cuda, "forward", spy_forward)
        monkeypatch.setattr(_im2col_cuda, "backward", spy_backward)


SPY_PARAMS = {"kernel": (3, 3), "num_filter": 4, "pad": (1, 1), "stride": (2, 2)}
SPY_X = (3, 4, 5, 5)  # 3 images of 3x3 outputs, in chunks of 2 and 1


@pytest.mark.usefixtures("gemm_path")
@pytest.mark.parametrize("groups", [1, 2])
def test_one_group_gemm_writes_the_output_and_more_groups_keep_the_row_layout(
    monkeypatch: pytest.MonkeyPatch, groups: int
) -> None:
    params = {**SPY_PARAMS, "num_group": groups}
    s = _shape(params, SPY_X)
    per_image = s.groups * s.rows * s.hw * 8
    monkeypatch.setattr(_im2col_cuda, "MAX_WORKSPACE_BYTES", 2 * per_image + per_image // 2)
    if groups > 1:  # the row layout's tmp as well: as many images per chunk
        monkeypatch.setattr(_im2col_cuda, "MAX_WORKSPACE_BYTES", 2 * (per_image + s.f * s.hw * 8))
    spy = _Spy(monkeypatch)
    inputs = _inputs(SPY_X, params, seed=5)
    start = np.zeros((s.n, s.f, s.win.ho, s.win.wo))
    (got,) = _run("Convolution", params, inputs, [start], [A], "gpu")
    (want,) = _run("Convolution", params, inputs, [start], [A], "cpu")
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    nb, size = spy.scratch[0]
    assert nb == 2
    bodies = set(spy.bodies)
    assert len(spy.gemms) == 2  # one per chunk
    if groups == 1:
        assert _im2col_cuda.rows_to_images not in bodies
        assert size == s.rows * nb * s.hw  # the column matrix only: no tmp
        assert all(_inside(out, spy.arrays["out"]) for out, _ in spy.gemms)
        assert spy.bodies.count(_im2col_cuda.add_bias) == 1  # once, after every chunk
    else:
        assert spy.bodies.count(_im2col_cuda.rows_to_images) == 2
        assert size == (s.groups * s.rows + s.f) * nb * s.hw
        assert not any(_inside(out, spy.arrays["out"]) for out, _ in spy.gemms)
        assert _im2col_cuda.add_bias not in bodies


@pytest.mark.usefixtures("gemm_path")
@pytest.mark.parametrize(("groups", "want_dw"), [(1, False), (1, True), (2, False)])
def test_data_gradient_reads_dy_directly_for_one_group_without_dw(
    monkeypatch: pytest.MonkeyPatch, groups: int, want_dw: bool
) -> None:
    params = {**SPY_PARAMS, "num_group": groups, "no_bias": True}
    s = _shape(params, SPY_X)
    spy = _Spy(monkeypatch)
    x, w = _inputs(SPY_X, params, seed=6)
    dy = np.random.default_rng(7).uniform(-1, 1, (s.n, s.f, s.win.ho, s.win.wo))
    reqs = [W, W if want_dw else N]
    starts = [np.zeros_like(x), np.zeros_like(w)]
    gpu = _run("_backward_Convolution", params, [dy, x, w], starts, reqs, "gpu")
    cpu = _run("_backward_Convolution", params, [dy, x, w], starts, reqs, "cpu")
    for got, want in zip(gpu, cpu):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    (nb, size), bodies = spy.scratch[0], set(spy.bodies)
    assert _im2col_cuda.col2im in bodies
    if groups == 1 and not want_dw:
        assert _im2col_cuda.images_to_rows not in bodies
        assert _im2col_cuda.im2col not in bodies
        assert size == s.rows * nb * s.hw
        assert all(_inside(b, spy.arrays["dy"]) for _, b in spy.gemms)
    else:
        assert _im2col_cuda.images_to_rows in bodies
        assert size == (s.groups * s.rows + s.f) * nb * s.hw


@pytest.mark.usefixtures("gemm_path")
def test_deconvolution_forward_takes_the_image_major_data_gradient(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Deconvolution's forward is Convolution's data gradient: one group goes image-major."""
    params = {"kernel": (3, 3), "num_filter": 3, "stride": (2, 2), "pad": (1, 1)}
    spy = _Spy(monkeypatch)
    rng = np.random.default_rng(8)
    x, w, b = (
        rng.uniform(-1, 1, (3, 4, 3, 3)),
        rng.uniform(-1, 1, (4, 3, 3, 3)),
        rng.uniform(-1, 1, 3),
    )
    start = rng.uniform(-1, 1, (3, 3, 5, 5))
    (got,) = _run("Deconvolution", params, [x, w, b], [start], [A], "gpu")
    (want,) = _run("Deconvolution", params, [x, w, b], [start], [A], "cpu")
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    assert _im2col_cuda.col2im in spy.bodies
    assert _im2col_cuda.images_to_rows not in spy.bodies
    assert all(_inside(b_span, spy.arrays["dy"]) for _, b_span in spy.gemms)
