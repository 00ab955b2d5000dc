"""GPU Convolution as im2col + GEMM (_im2col_cuda.py) against the CPU and NumPy.

The GPU tests run under numba's CUDA simulator in CI (NUMBA_ENABLE_CUDASIM=1), where the
tiled GEMM costs ~0.15 s per 16x16 block: the shapes are small, and DIRECT_MAX_MACS is set
to 0 so that they take the im2col + GEMM path instead of the direct kernels.
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

import nnvmpy as nv
from nnvmpy import Op
from nnvmpy.base import OpReqType
from nnvmpy.ops.nn import _im2col_cuda
from nnvmpy.ops.nn.convolution import conv_shape

W, A, N = OpReqType.kWriteTo, OpReqType.kAddTo, OpReqType.kNullOp

# (id, data shape, params, forward req, backward reqs (dx, dw, db)); each output sees
# write, add and null somewhere in the table
CASES = [
    ("1d-stride-pad", (2, 3, 9), {"kernel": (3,), "num_filter": 4, "pad": (1,), "stride": (2,)},
     W, (W, A, W)),
    ("2d-stride-pad", (2, 3, 5, 5), {"kernel": (3, 3), "num_filter": 4, "pad": (1, 1),
     "stride": (2, 2)}, A, (A, W, A)),
    ("2d-group-dilate", (2, 4, 6, 6), {"kernel": (3, 3), "num_filter": 4, "num_group": 2,
     "dilate": (2, 2)}, W, (W, W, N)),
    ("2d-groups3-asym", (1, 6, 5, 4), {"kernel": (2, 3), "num_filter": 3, "num_group": 3,
     "stride": (1, 2), "pad": (1, 0), "no_bias": True}, A, (A, A)),
    ("2d-1x1", (2, 6, 3, 3), {"kernel": (1, 1), "num_filter": 5}, A, (A, W, W)),
    ("1d-1x1-stride-nobias", (2, 3, 7), {"kernel": (1,), "num_filter": 2, "stride": (2,),
     "no_bias": True}, W, (N, A)),
    ("3d", (2, 2, 3, 3, 3), {"kernel": (2, 2, 2), "num_filter": 3, "pad": (1, 0, 1),
     "stride": (1, 1, 2)}, W, (W, A, A)),
    ("3d-dilate-group", (1, 4, 4, 3, 3), {"kernel": (2, 2, 2), "num_filter": 2, "num_group": 2,
     "dilate": (2, 1, 1), "pad": (0, 1, 0)}, A, (W, N, W)),
]  # fmt: skip
FLOAT32_CASES = {"2d-stride-pad", "2d-group-dilate", "3d"}


def _cuda() -> Any:
    from numba import cuda

    return cuda


def _run(name: str, params: dict, inputs: list, outputs: list, reqs: list, device: str) -> list:
    """Op `name`'s FCompute<device> called as the executor would."""
    return run_fcompute(name, params, inputs, outputs, reqs, device)


def _shape(params: dict, x: tuple, w: tuple) -> Any:
    """The ConvShape of a convolution of data shape x with weight shape w."""
    p = Op.get("Convolution").parse_attrs(params).parsed
    k, st, pad, d = p.kernel, p.stride, p.pad, p.dilate
    out = [(x[2 + a] + 2 * pad[a] - d[a] * (k[a] - 1) - 1) // st[a] + 1 for a in range(len(k))]
    return conv_shape(p, x, w[0], tuple(out))


def _inputs(case: tuple, dtype: Any, seed: int) -> tuple[list, tuple]:
    _, xs, params, _, _ = case
    rng = np.random.default_rng(seed)
    g, f = params.get("num_group", 1), params["num_filter"]
    ws = (f, xs[1] // g, *params["kernel"])
    arrays = [rng.uniform(-1, 1, xs), rng.uniform(-1, 1, ws)]
    if not params.get("no_bias"):
        arrays.append(rng.uniform(-1, 1, f))
    return [a.astype(dtype) for a in arrays], ws


def _tolerance(dtype: Any) -> dict:
    return {"rtol": 1e-10, "atol": 1e-12} if dtype == np.float64 else {"rtol": 1e-4, "atol": 1e-5}


def _check_case(case: tuple, dtype: Any, seed: int = 0, gemm: bool = True) -> None:
    """Forward, then every gradient, GPU against the CPU (float64) and NumPy."""
    name, xs, params, req_f, reqs_b = case
    inputs, ws = _inputs(case, dtype, seed)
    s = _shape(params, xs, ws)
    assert _im2col_cuda.use_gemm(s) == gemm, f"{name}: the test meant the other path"
    wide = [a.astype(np.float64) for a in inputs]
    rng = np.random.default_rng(seed + 1)
    y_ref = conv_reference(*wide, **params)
    start = rng.uniform(-1, 1, y_ref.shape)
    (y_cpu,) = _run("Convolution", params, wide, [start], [req_f], "cpu")
    (y_gpu,) = _run("Convolution", params, inputs, [start.astype(dtype)], [req_f], "gpu")
    np.testing.assert_allclose(y_cpu, y_ref + (start if req_f == A else 0), rtol=1e-10)
    np.testing.assert_allclose(y_gpu, y_cpu, **_tolerance(dtype), err_msg=f"{name}: forward")
    dy = rng.uniform(-1, 1, y_ref.shape)
    starts = [rng.uniform(-1, 1, a.shape) for a in wide]
    args = [dy, wide[0], wide[1]]
    cpu = _run("_backward_Convolution", params, args, starts, list(reqs_b), "cpu")
    gpu_args = [a.astype(dtype) for a in args]
    gpu_starts = [a.astype(dtype) for a in starts]
    gpu = _run("_backward_Convolution", params, gpu_args, gpu_starts, list(reqs_b), "gpu")
    for what, want, got, start_k, req in zip(("data", "weight", "bias"), cpu, gpu, starts, reqs_b):
        if req == N:
            np.testing.assert_array_equal(got, start_k.astype(dtype), err_msg=f"{name}: {what}")
        else:
            grad = want - (start_k if req == A else 0)
            assert np.abs(grad).max() > 1e-3, f"{name}: the {what} gradient is trivial"
            tol = _tolerance(dtype)
            np.testing.assert_allclose(got, want, **tol, err_msg=f"{name}: {what} gradient")


def _case_params() -> list:
    out = []
    for case in CASES:
        out.append(pytest.param(case, np.float64, id=f"{case[0]}-float64"))
        if case[0] in FLOAT32_CASES:
            out.append(pytest.param(case, np.float32, id=f"{case[0]}-float32"))
    return out


@pytest.fixture
def gemm_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every convolution takes im2col + GEMM (the test shapes are below DIRECT_MAX_MACS)."""
    monkeypatch.setattr(_im2col_cuda, "DIRECT_MAX_MACS", 0)


@pytest.mark.gpu
@pytest.mark.usefixtures("gemm_path")
@pytest.mark.parametrize(("case", "dtype"), _case_params())
def test_gpu_im2col_gemm_convolution_matches_cpu(case: tuple, dtype: Any) -> None:
    _check_case(case, dtype)


@pytest.mark.gpu
@pytest.mark.usefixtures("gemm_path")
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_gpu_convolution_over_several_chunks_matches_cpu(
    monkeypatch: pytest.MonkeyPatch, dtype: Any
) -> None:
    """5 images in chunks of 2, 2 and 1: the weight gradient adds up over the chunks."""
    params = {"kernel": (3, 3), "num_filter": 3, "pad": (1, 1), "stride": (2, 1)}
    case = ("chunks", (5, 2, 4, 3), params, A, (A, W, W))
    s = _shape(params, (5, 2, 4, 3), (3, 2, 3, 3))
    per_image = (s.c * 9 + s.f) * s.hw * np.dtype(dtype).itemsize
    monkeypatch.setattr(_im2col_cuda, "MAX_WORKSPACE_BYTES", 2 * per_image + per_image // 2)
    assert _im2col_cuda.chunk_images(s, np.dtype(dtype).itemsize) == 2
    _check_case(case, dtype, seed=3)
    if dtype == np.float64:  # the weight gradient added to from the first chunk on
        _check_case(("chunks-add", (5, 2, 4, 3), params, W, (W, A, N)), dtype, seed=4)


# depthwise and channel-multiplier convolutions: the direct kernels (use_gemm is False)
DIRECT_CASES = [
    ("depthwise", (2, 4, 5, 5), {"kernel": (3, 3), "num_filter": 4, "num_group": 4,
     "pad": (1, 1)}, W, (W, A, A)),
    ("multiplier-stride", (3, 2, 6, 5), {"kernel": (3, 2), "num_filter": 4, "num_group": 2,
     "stride": (2, 1)}, A, (A, W, W)),
    ("depthwise-3d", (2, 2, 3, 4, 3), {"kernel": (2, 3, 2), "num_filter": 2, "num_group": 2,
     "pad": (1, 1, 0), "no_bias": True}, W, (N, A)),
]  # fmt: skip


@pytest.mark.gpu
@pytest.mark.parametrize("case", DIRECT_CASES, ids=[c[0] for c in DIRECT_CASES])
@pytest.mark.parametrize("items", [1, 1 << 16], ids=["one-slice", "row-slices"])
def test_gpu_direct_convolution_gradients_match_cpu(
    monkeypatch: pytest.MonkeyPatch, case: tuple, items: int
) -> None:
    """The weight gradient summed whole per weight element, or as float64 partial sums
    over slices of output rows that a reduction adds (written, added or skipped)."""
    from nnvmpy.ops.nn import _conv_cuda

    monkeypatch.setattr(_conv_cuda, "WEIGHT_GRAD_ITEMS", items)
    _, xs, params, _, _ = case
    s = _shape(params, xs, _inputs(case, np.float64, 0)[1])
    slices, _ = _conv_cuda.weight_grad_slices(s.f * s.rows, s.n * s.hw // s.win.wo)
    assert (slices > 1) == (items > 1)
    _check_case(case, np.float64, gemm=False)


def test_weight_gradient_slices_cover_the_rows_once() -> None:
    from nnvmpy.ops.nn._conv_cuda import WEIGHT_GRAD_ITEMS, weight_grad_slices

    for n_weights, rows in [(288, 7168), (9, 5), (1, 1), (1 << 20, 64), (3000, 1000), (7, 0)]:
        slices, per = weight_grad_slices(n_weights, rows)
        assert slices >= 1
        assert per >= 1
        assert slices * per >= rows
        assert (slices - 1) * per < max(rows, 1)
        if slices > 1:  # about as many work items as asked (whole slices round it down)
            assert n_weights * slices >= min(WEIGHT_GRAD_ITEMS, n_weights * rows) // 2
    # a deconvolution 512 -> 512 channels, 3x3: one slice; 128 -> 64 channels: 4 slices
    # (73728 weights, a quarter of the items); MobileNet's depthwise 3x3 on 32 channels at
    # 112x112, batch 64: 896 slices of 8 rows (288 weights each)
    assert weight_grad_slices(512 * 512 * 9, 64 * 14) == (1, 64 * 14)
    assert weight_grad_slices(128 * 64 * 9, 64 * 56) == (4, 16 * 56)
    assert weight_grad_slices(32 * 9, 64 * 112) == (896, 8)


def test_direct_kernels_for_depthwise_and_tiny_convolutions() -> None:
    """The rule in _im2col_cuda's docstring: depthwise (one input channel per group) and
    at most DIRECT_MAX_MACS multiply-adds go direct; everything else, grouped 1-channel
    input (C = 1, one group) included, goes im2col + GEMM."""
    big = (8, 16, 32, 32)
    depthwise = {"kernel": (3, 3), "num_filter": 32, "num_group": 16, "pad": (1, 1)}
    assert not _im2col_cuda.use_gemm(_shape(depthwise, big, (32, 1, 3, 3)))
    grouped = {"kernel": (3, 3), "num_filter": 32, "num_group": 4, "pad": (1, 1)}
    assert _im2col_cuda.use_gemm(_shape(grouped, big, (32, 4, 3, 3)))
    gray = {"kernel": (5, 5), "num_filter": 20}
    assert _im2col_cuda.use_gemm(_shape(gray, (8, 1, 28, 28), (20, 1, 5, 5)))
    tiny = {"kernel": (3, 3), "num_filter": 2}
    s = _shape(tiny, (1, 2, 5, 5), (2, 2, 3, 3))
    assert s.n * s.f * s.hw * s.rows <= _im2col_cuda.DIRECT_MAX_MACS
    assert not _im2col_cuda.use_gemm(s)
    s = _shape(gray, (0, 1, 28, 28), (20, 1, 5, 5))  # no images: nothing to chunk
    assert not _im2col_cuda.use_gemm(s)


def test_chunks_stay_within_the_workspace() -> None:
    s = _shape({"kernel": (3, 3), "num_filter": 64, "pad": (1, 1)}, (256, 64, 56, 56),
               (64, 64, 3, 3))  # fmt: skip
    nb = _im2col_cuda.chunk_images(s, 4)
    per_image = (64 * 9 + 64) * 56 * 56 * 4
    assert nb * per_image <= _im2col_cuda.MAX_WORKSPACE_BYTES < (nb + 1) * per_image
    small = _shape({"kernel": (3, 3), "num_filter": 64, "pad": (1, 1), "workspace": 16},
                   (256, 64, 56, 56), (64, 64, 3, 3))  # fmt: skip
    assert _im2col_cuda.chunk_images(small, 4) == (16 << 20) // per_image
    tight = _shape({"kernel": (3, 3), "num_filter": 64, "workspace": 0}, (4, 64, 8, 8),
                   (64, 64, 3, 3))  # fmt: skip
    assert _im2col_cuda.chunk_images(tight, 4) == 1  # at least one image
    # image-major (one group, no weight gradient): the column matrix only, no tmp
    per_col = 64 * 9 * 56 * 56 * 4
    nb = _im2col_cuda.chunk_images(s, 4, images=True)
    assert nb * per_col <= _im2col_cuda.MAX_WORKSPACE_BYTES < (nb + 1) * per_col
    assert _im2col_cuda.chunk_images(small, 4, images=True) == (16 << 20) // per_col
    assert _im2col_cuda.chunk_images(tight, 4, images=True) == 1


# -- im2col / col2im against NumPy ----------------------------------------------------------

GEOMETRY = {  # a 3-D window with every feature: stride, pad, dilation, per axis
    "kernel": (2, 3, 2), "stride": (1, 2, 1), "pad": (1, 1, 0), "dilate": (1, 1, 2),
    "num_filter": 2,
}  # fmt: skip


def _numpy_im2col(x: np.ndarray, n0: int, m: int, p: dict, out: tuple) -> np.ndarray:
    """col[(c, a, i, j), (b, v, y, z)] = padded x at the tap's position, by fancy indexing."""
    k, s, d, pad = p["kernel"], p["stride"], p["dilate"], p["pad"]
    xp = np.pad(x[n0 : n0 + m], [(0, 0), (0, 0)] + [(q, q) for q in pad])
    taps = list(np.ndindex(*k))
    blocks = []
    for c in range(x.shape[1]):
        for tap in taps:
            idx = [np.arange(o) * st + t * dd for o, st, t, dd in zip(out, s, tap, d)]
            mesh = np.ix_(*idx)
            blocks.append(xp[:, c][(slice(None), *mesh)].reshape(-1))
    return np.stack(blocks)


def _launch(device: str, body: Any, n: int, *args: Any) -> list:
    """Run a parallel_for body on `device`; array arguments come back as host arrays."""
    if device == "cpu":
        body.launch(nv.cpu(), n, *args)
        return [a for a in args if isinstance(a, np.ndarray)]
    cuda = _cuda()
    dev = [cuda.to_device(a) if isinstance(a, np.ndarray) else a for a in args]
    body.launch(nv.gpu(0), n, *dev)
    return [d.copy_to_host() for d, a in zip(dev, args) if isinstance(a, np.ndarray)]


@pytest.mark.parametrize("images", [False, True], ids=["row-layout", "image-major"])
def test_im2col_and_col2im_match_numpy(ctx: Any, images: bool) -> None:
    """im2col copies the taps NumPy indexes, in the row layout (rows, m*P) or image-major
    (m, rows, P); col2im is its adjoint, written or added."""
    from nnvmpy.ops.nn._conv_cuda import geometry

    device = ctx.device_type
    rng = np.random.default_rng(7)
    x = rng.standard_normal((3, 2, 3, 5, 4))
    out = conv_reference(x, np.zeros((2, 2, 2, 3, 2)), **GEOMETRY).shape[2:]
    s = _shape(GEOMETRY, x.shape, (2, 2, 2, 3, 2))
    geo = geometry(s)
    n0, m = 1, 2  # the chunk: images 1 and 2
    steps = _im2col_cuda.steps(s, m, images)
    want = _numpy_im2col(x, n0, m, GEOMETRY, out)  # (rows, m*P)
    rows = want.shape[0]
    if images:  # (rows, m, P) -> (m, rows, P)
        want = want.reshape(rows, m, -1).transpose(1, 0, 2).copy()
    col = np.full(want.shape, np.nan)
    (_, col) = _launch(device, _im2col_cuda.im2col, s.c * m * s.hw, x.ravel(), col.ravel(),
                       n0, m, *steps, *geo)  # fmt: skip
    np.testing.assert_array_equal(col.reshape(want.shape), want)
    # col2im is im2col's adjoint: <im2col(e_k), C> for every basis vector e_k of x
    c_in = rng.standard_normal(want.shape)
    adjoint = np.zeros(x.size)
    for k in range(x.size):
        e = np.zeros(x.size)
        e[k] = 1.0
        e_col = _numpy_im2col(e.reshape(x.shape), n0, m, GEOMETRY, out)
        if images:
            e_col = e_col.reshape(rows, m, -1).transpose(1, 0, 2)
        adjoint[k] = np.vdot(e_col, c_in)
    adjoint = adjoint.reshape(x.shape)
    start = rng.standard_normal(x.shape)
    for mode, base in ((1, 0.0), (2, start)):  # WRITE, ADD
        (_, dx) = _launch(device, _im2col_cuda.col2im, m * x[0].size, c_in.ravel(),
                          start.copy().ravel(), n0, m, mode, *steps, *geo)  # fmt: skip
        dx = dx.reshape(x.shape)
        np.testing.assert_allclose(dx[n0 : n0 + m], (base + adjoint)[n0 : n0 + m], rtol=1e-12)
        np.testing.assert_array_equal(dx[:n0], start[:n0])  # images outside the chunk
        np.testing.assert_array_equal(dx[n0 + m :], start[n0 + m :])


@pytest.mark.gpu
@pytest.mark.usefixtures("gemm_path")
def test_gpu_convolution_trains_through_the_executor() -> None:
    """Bound on the GPU (engine, temp space, grad_req 'add'), against the CPU executor."""
    rng = np.random.default_rng(11)
    params = {"kernel": (3, 3), "num_filter": 4, "num_group": 2, "pad": (1, 1), "stride": (2, 2)}
    values = {
        "x": rng.uniform(-1, 1, (2, 4, 4, 4)),
        "w": rng.uniform(-1, 1, (4, 2, 3, 3)),
        "b": rng.uniform(-1, 1, 4),
    }
    net = nv.sym.Convolution(*(nv.sym.Variable(k) for k in values), **params)
    dy = rng.uniform(-1, 1, (2, 4, 2, 2))
    results = []
    for ctx in (nv.cpu(), nv.gpu(0)):
        args = {k: nv.nd.array(v, ctx, dtype=np.float64) for k, v in values.items()}
        grads = {k: nv.nd.ones(v.shape, ctx, dtype=np.float64) for k, v in values.items()}
        exe = net.bind(ctx, args, args_grad=grads, grad_req="add")
        y = exe.forward(is_train=True)[0].asnumpy()
        exe.backward([nv.nd.array(dy, ctx, dtype=np.float64)])
        results.append([y, *(g.asnumpy() for g in grads.values())])
    for want, got in zip(*results):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
