"""Deconvolution beyond the op table: MXNet's shapes, the adjoint identity, errors, GPU.

Values per parameter set are checked by the rows of cases_deconv.py (against a scattering
NumPy reference, with finite-difference gradients); this file covers shape inference as
MXNet 1.9.1 does it, the defining property (Deconvolution is the adjoint of Convolution),
req handling through the executor, chunking, float16, bad input and the GPU backward.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

# isort: off
import op_db  # noqa: F401  (first: it loads every cases_*.py)
from cases_conv import conv_reference
from cases_deconv import deconv_reference

# isort: on

import nnvmpy as nv
from nnvmpy.base import InferError, NNVMError, ParamError
from nnvmpy.registry import Op
from nnvmpy.test_utils import check_symbolic_backward, check_symbolic_forward

sym = nv.sym


def still_works() -> None:
    """After an error the registry and engine keep working: a small deconvolution runs."""
    y = nv.nd.Deconvolution(
        nv.nd.ones((1, 1, 2, 2)), nv.nd.ones((1, 1, 2, 2)), kernel=(2, 2), num_filter=1
    )
    np.testing.assert_array_equal(y.asnumpy()[0, 0], [[1, 2, 1], [2, 4, 2], [1, 2, 1]])


def out_shape(data: tuple[int, ...], **params: Any) -> tuple[int, ...]:
    s = sym.Deconvolution(sym.Variable("data"), name="d", **params)
    return tuple(s.infer_shape(data=data)[1][0])


# -- shape inference, as MXNet 1.9.1 answers (probed with .mxenv) ---------------------------------


def test_arguments_and_weight_shape_follow_mxnet() -> None:
    d = sym.Deconvolution(sym.Variable("data"), kernel=(3, 3), num_filter=4, name="d")
    assert d.list_arguments() == ["data", "d_weight"]  # no_bias defaults to True
    args, outs, _ = d.infer_shape(data=(2, 3, 5, 5))
    assert args == [(2, 3, 5, 5), (3, 4, 3, 3)]  # (C_in, num_filter / num_group, *kernel)
    assert outs == [(2, 4, 7, 7)]
    biased = sym.Deconvolution(
        sym.Variable("data"), kernel=(3, 3), num_filter=8, num_group=2, no_bias=False, name="b"
    )
    assert biased.list_arguments() == ["data", "b_weight", "b_bias"]
    args, _, _ = biased.infer_shape(data=(2, 6, 5, 5))
    assert args[1:] == [(6, 4, 3, 3), (8,)]


@pytest.mark.parametrize(
    ("data", "params", "expected"),
    [
        ((2, 3, 5, 5), {"kernel": (4, 4), "stride": (2, 2), "pad": (1, 1)}, (2, 8, 10, 10)),
        ((2, 3, 1, 1), {"kernel": (4, 4)}, (2, 8, 4, 4)),
        ((2, 3, 5, 5), {"kernel": (3, 3), "stride": (2, 2), "adj": (1, 1)}, (2, 8, 12, 12)),
        ((2, 3, 5, 5), {"kernel": (3, 3), "stride": (2, 2), "target_shape": (5, 5)}, (2, 8, 5, 5)),
        # target_shape wins over pad and adj (MXNet's test_deconvolution)
        (
            (2, 3, 4, 4),
            {
                "kernel": (3, 3),
                "stride": (2, 2),
                "target_shape": (8, 8),
                "pad": (99, 99),
                "adj": (101, 101),
            },
            (2, 8, 8, 8),
        ),
        ((2, 3, 5, 5, 5), {"kernel": (3, 3, 3)}, (2, 8, 7, 7, 7)),
        (
            (2, 3, 5, 5, 5),
            {"kernel": (3, 3, 3), "stride": (2, 2, 2), "target_shape": (9, 9, 9)},
            (2, 8, 9, 9, 9),
        ),
        ((2, 3, 5), {"kernel": (3,), "dilate": (2,)}, (2, 8, 9)),
        (
            (2, 3, 4),
            {"kernel": (3,), "stride": (2,), "target_shape": (8,), "pad": (99,)},
            (2, 8, 8),
        ),
    ],
)
def test_output_shapes_match_mxnet(
    data: tuple[int, ...], params: dict[str, Any], expected: tuple[int, ...]
) -> None:
    assert out_shape(data, num_filter=8, **params) == expected


def test_partial_inference_fills_what_mxnet_fills_and_more() -> None:
    d = sym.Deconvolution(sym.Variable("data"), kernel=(3, 3), num_filter=4, name="d")
    args, outs, _ = d.infer_shape_partial(data=(0, 3, 0, 0), d_weight=(3, 4, 3, 3))
    assert args[0] == (0, 3, 0, 0)
    assert outs == [(0, 4, 0, 0)]
    # N from the output, and a stride-1 input size: 7 = 5 + 3 - 1 - 2*0
    args, outs, _ = d.infer_shape_partial(data=(0, 3, 0, 5))
    assert outs == [(0, 4, 0, 7)]
    # the data's channels come from the weight (MXNet leaves them unknown)
    args, _, _ = d.infer_shape_partial(data=(2, 0, 5, 5), d_weight=(6, 4, 3, 3))
    assert args[0] == (2, 6, 5, 5)


def test_backward_inference_from_the_output() -> None:
    data = sym.Variable("data")
    d = sym.Deconvolution(data, kernel=(3, 3), pad=(1, 1), num_filter=4, name="d")
    net = sym.elemwise_add(d, sym.Variable("other"))
    args, _, _ = net.infer_shape_partial(data=(0, 3, 0, 0), other=(2, 4, 6, 7))
    assert args[0] == (2, 3, 6, 7)  # stride 1: H = Ho + 2*pad - k + 1


# -- the defining property -------------------------------------------------------------------------

ADJOINT_CASES = [
    {"kernel": (3, 3), "stride": (2, 2), "pad": (1, 1)},
    {"kernel": (4, 3), "stride": (2, 3), "pad": (1, 0), "adj": (1, 2), "num_group": 2},
    {"kernel": (3,), "stride": (2,), "dilate": (2,)},
    {"kernel": (2, 3, 2), "stride": (2, 1, 2), "pad": (1, 1, 0)},
    {"kernel": (3, 3), "pad": (1, 1), "num_group": 4},  # depthwise
]


@pytest.mark.parametrize("params", ADJOINT_CASES)
def test_deconvolution_is_the_adjoint_of_convolution(params: dict[str, Any]) -> None:
    """<deconv(x, w), y> == <x, conv(y, w)> for the convolution with the same window."""
    rng = np.random.default_rng(0)
    groups = params.get("num_group", 1)
    nd = len(params["kernel"])
    x = rng.standard_normal((2, 4, *[3] * nd))
    w = rng.standard_normal((4, 8 // groups, *params["kernel"]))
    d = nv.nd.Deconvolution(
        nv.nd.array(x, dtype="float64"), nv.nd.array(w, dtype="float64"), num_filter=8, **params
    ).asnumpy()
    y = rng.standard_normal(d.shape)
    conv_params = {k: v for k, v in params.items() if k != "adj"}
    cy = conv_reference(y, w, **conv_params, num_filter=4)
    assert cy.shape == x.shape
    np.testing.assert_allclose(np.vdot(d, y), np.vdot(x, cy), rtol=1e-10)


def test_weight_gradient_equals_convolution_weight_gradient() -> None:
    """MXNet's check: conv(x) then deconv of the output gradient share dW (same stride 1)."""
    rng = np.random.default_rng(1)
    x = rng.uniform(-5, 5, (2, 3, 6, 6))
    w = rng.standard_normal((3, 3, 3, 3))
    params = {"kernel": (3, 3), "pad": (1, 1), "num_filter": 3, "no_bias": True}
    conv = sym.Convolution(sym.Variable("x"), sym.Variable("w"), **params)
    deconv = sym.Deconvolution(sym.Variable("x"), sym.Variable("w"), **params)
    dy = rng.standard_normal(x.shape)
    grads = {}
    for name, s, data, head in (("conv", conv, x, dy), ("deconv", deconv, dy, x)):
        exe = s.simple_bind(nv.cpu(), type_dict={"x": "float64", "w": "float64"}, x=x.shape)
        exe.forward(is_train=True, x=data, w=w)
        exe.backward(nv.nd.array(head, dtype="float64"))
        grads[name] = exe.grad_dict["w"].asnumpy()
    np.testing.assert_allclose(grads["conv"], grads["deconv"], rtol=1e-10, atol=1e-10)


def test_gradients_match_the_reference_with_req_add() -> None:
    rng = np.random.default_rng(2)
    params = {"kernel": (3, 3), "stride": (2, 2), "pad": (1, 1), "num_filter": 4, "no_bias": False}
    x, w, b = (
        rng.standard_normal((2, 3, 4, 4)),
        rng.standard_normal((3, 4, 3, 3)),
        rng.standard_normal(4),
    )
    s = sym.Deconvolution(sym.Variable("x"), sym.Variable("w"), sym.Variable("b"), **params)
    y = deconv_reference(x, w, b, **params)
    dy = rng.standard_normal(y.shape)
    # d x is the convolution of dy; d w pairs every x[n, c, h, w] with the dy it reached,
    # dy[n, f, h*stride + i - pad, w*stride + j - pad]; d b sums dy
    dx = conv_reference(dy, w, kernel=(3, 3), stride=(2, 2), pad=(1, 1))
    dyp = np.pad(dy, ((0, 0), (0, 0), (1, 1), (1, 1)))
    dw = np.zeros_like(w)
    for i in range(3):
        for j in range(3):
            reached = dyp[:, :, i : i + 2 * 4 : 2, j : j + 2 * 4 : 2]
            dw[:, :, i, j] = np.einsum("nchw,nfhw->cf", x, reached)
    expected = {"x": dx, "w": dw, "b": dy.sum(axis=(0, 2, 3))}
    check_symbolic_forward(
        s, {"x": x, "w": w, "b": b}, [y], rtol=1e-10, atol=1e-10, dtype=np.float64
    )
    for req in ("write", "add"):
        check_symbolic_backward(
            s,
            {"x": x, "w": w, "b": b},
            [dy],
            expected,
            rtol=1e-9,
            atol=1e-10,
            grad_req=req,
            dtype=np.float64,
        )


@pytest.mark.parametrize("workspace", [0, 512])
def test_chunking_does_not_change_the_result(workspace: int) -> None:
    rng = np.random.default_rng(3)
    x, w = rng.standard_normal((5, 6, 7, 7)), rng.standard_normal((6, 4, 4, 4))
    params = {"kernel": (4, 4), "stride": (2, 2), "pad": (1, 1), "num_filter": 4}
    y = nv.nd.Deconvolution(
        nv.nd.array(x, dtype="float64"),
        nv.nd.array(w, dtype="float64"),
        workspace=workspace,
        **params,
    )
    np.testing.assert_allclose(
        y.asnumpy(), deconv_reference(x, w, **params), rtol=1e-10, atol=1e-10
    )


def test_float16_runs_through_float32_on_cpu() -> None:
    rng = np.random.default_rng(4)
    x, w = rng.uniform(-1, 1, (2, 2, 3, 3)), rng.uniform(-1, 1, (2, 3, 2, 2))
    y = nv.nd.Deconvolution(
        nv.nd.array(x, dtype="float16"),
        nv.nd.array(w, dtype="float16"),
        kernel=(2, 2),
        stride=(2, 2),
        num_filter=3,
    )
    assert y.dtype == np.float16
    want = deconv_reference(
        x.astype(np.float16).astype(np.float64),
        w.astype(np.float16).astype(np.float64),
        kernel=(2, 2),
        stride=(2, 2),
    )
    np.testing.assert_allclose(y.asnumpy(), want, rtol=1e-2, atol=1e-2)


# -- bad input -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("params", "pattern"),
    [
        ({"kernel": (3, 3)}, r"Deconvolution.*missing.*'num_filter'"),
        ({"kernel": (3, 3), "num_filter": 3, "num_group": 2}, r"'num_filter' \(3\).*'num_group'"),
        ({"kernel": (3, 3, 3, 3), "num_filter": 2}, r"Deconvolution.*'kernel'.*1, 2 or 3"),
        ({"kernel": (3, 3), "num_filter": 2, "stride": (2,)}, r"'stride'.*2 entries"),
        ({"kernel": (3, 3), "num_filter": 2, "stride": (0, 1)}, r"'stride' must be >= 1"),
        ({"kernel": (3, 3), "num_filter": 2, "adj": (1, 1, 1)}, r"'adj'.*2 entries"),
        (
            {"kernel": (3, 3), "num_filter": 2, "stride": (2, 2), "adj": (2, 1)},
            r"'adj'.*smaller than 'stride'",
        ),
        ({"kernel": (3, 3), "num_filter": 2, "target_shape": (0, 10)}, r"'target_shape'.*positive"),
        ({"kernel": (3, 3), "num_filter": 2, "target_shape": (5,)}, r"'target_shape'.*2 entries"),
        ({"kernel": (3, 3), "num_filter": 2, "layout": "NHWC"}, r"'layout'.*NCHW"),
    ],
)
def test_bad_parameters_raise_param_error(params: dict[str, Any], pattern: str) -> None:
    with pytest.raises(ParamError, match=pattern):
        Op.get("Deconvolution").parse_attrs(params)
    still_works()


def test_bad_shapes_raise_infer_error_and_the_engine_survives() -> None:
    with pytest.raises(InferError, match=r"Deconvolution.*target_shape \(12, 12\) is too big"):
        out_shape((2, 3, 5, 5), kernel=(3, 3), stride=(2, 2), target_shape=(12, 12), num_filter=2)
    with pytest.raises(InferError, match=r"Deconvolution.*size -3 < 1"):
        out_shape((2, 3, 5, 5), kernel=(3, 3), pad=(5, 5), num_filter=2)
    with pytest.raises(InferError, match=r"Deconvolution.*5 channels.*num_group=3"):
        out_shape((2, 5, 5, 5), kernel=(3, 3), num_filter=3, num_group=3)
    with pytest.raises(InferError, match=r"Deconvolution.*'data' must be 4-D"):
        out_shape((2, 3, 5), kernel=(3, 3), num_filter=2)
    # stride 1 with a target that needs an odd total padding would need adj 1 >= stride
    with pytest.raises(InferError, match=r"adj 1.*smaller than stride"):
        out_shape((2, 3, 5, 5), kernel=(3, 3), target_shape=(6, 6), num_filter=2)
    with pytest.raises(NNVMError, match=r"Deconvolution"):
        nv.nd.Deconvolution(
            nv.nd.ones((1, 2, 3, 3)), nv.nd.ones((3, 1, 2, 2)), kernel=(2, 2), num_filter=1
        )
    still_works()


# -- the one-body kernels the GPU runs, on the CPU and on the GPU --------------------------------


def test_gpu_kernel_bodies_match_the_reference_on_the_cpu() -> None:
    """_conv_cuda's bodies run on the CPU too (kernel.parallel_for): check them there."""
    from nnvmpy.ops.nn import _conv_cuda, deconvolution

    rng = np.random.default_rng(5)
    p = (
        Op.get("Deconvolution")
        .parse_attrs(
            {
                "kernel": (3, 2),
                "stride": (2, 1),
                "pad": (1, 0),
                "num_filter": 4,
                "num_group": 2,
                "no_bias": False,
            }
        )
        .parsed
    )
    x, w, b = (
        rng.standard_normal((2, 4, 3, 4)),
        rng.standard_normal((4, 2, 3, 2)),
        rng.standard_normal(4),
    )
    want = deconv_reference(x, w, b, **p.values())
    out = np.full(want.shape, np.nan)
    geo = _conv_cuda.geometry(deconvolution.adjoint_shape(p, x.shape, out.shape))
    _conv_cuda.conv_data_grad.launch(
        None, out.size, x.ravel(), w.ravel(), b, out.reshape(-1), True, 1, *geo
    )
    np.testing.assert_allclose(out, want, rtol=1e-12, atol=1e-12)
    dy = rng.standard_normal(want.shape)
    dx = np.full(x.shape, np.nan)
    _conv_cuda.conv_forward.launch(
        None, dx.size, dy.ravel(), w.ravel(), w.ravel(), dx.reshape(-1), False, 1, *geo
    )
    np.testing.assert_allclose(
        np.vdot(dx, x), np.vdot(dy, want - b.reshape(1, -1, 1, 1)), rtol=1e-10
    )


# (path, case): every case on the direct kernels; the simulated GEMMs are slow, so each
# case once on them (groups and 3-D in one chunk, 2-D and 1-D over chunks)
GPU_PATHS = [("direct", k) for k in range(4)] + [
    ("gemm", 1), ("gemm", 3), ("gemm-chunks", 0), ("gemm-chunks", 2)
]  # fmt: skip


@pytest.mark.gpu
@pytest.mark.parametrize(
    ("path", "params"),
    [(path, ADJOINT_CASES[k]) for path, k in GPU_PATHS],
    ids=[f"{path}-params{k}" for path, k in GPU_PATHS],
)
def test_gpu_deconvolution_forward_and_backward_match_cpu(
    monkeypatch: pytest.MonkeyPatch, params: dict[str, Any], path: str
) -> None:
    """On the direct kernels (these shapes are tiny), or on im2col/col2im around GEMMs as
    larger ones run, with the images in one chunk or one per chunk (the weight gradient
    added up over chunks)."""
    from nnvmpy.ops.nn import _im2col_cuda

    if path != "direct":
        monkeypatch.setattr(_im2col_cuda, "DIRECT_MAX_MACS", 0)
    if path == "gemm-chunks":
        monkeypatch.setattr(_im2col_cuda, "MAX_WORKSPACE_BYTES", 1)  # one image a chunk
    col2im_calls = []
    real = _im2col_cuda.backward
    monkeypatch.setattr(
        _im2col_cuda, "backward", lambda *a: col2im_calls.append(1) or real(*a)
    )  # fmt: skip
    rng = np.random.default_rng(6)
    groups = params.get("num_group", 1)
    nd = len(params["kernel"])
    x = rng.uniform(-1, 1, (2, 4, *[3] * nd))
    w = rng.uniform(-1, 1, (4, 6 // groups, *params["kernel"]))
    b = rng.uniform(-1, 1, 6)
    s = sym.Deconvolution(
        sym.Variable("x"),
        sym.Variable("w"),
        sym.Variable("b"),
        num_filter=6,
        no_bias=False,
        **params,
    )
    inputs = {"x": x, "w": w, "b": b}
    y = deconv_reference(x, w, b, num_filter=6, no_bias=False, **params)
    check_symbolic_forward(s, inputs, [y], rtol=1e-10, atol=1e-10, ctx=nv.gpu(0), dtype=np.float64)
    dy = rng.uniform(-1, 1, y.shape)
    on_cpu = _gradients(s, inputs, dy, nv.cpu())
    for req in ("write", "add"):
        check_symbolic_backward(
            s,
            inputs,
            [dy],
            on_cpu,
            rtol=1e-9,
            atol=1e-10,
            grad_req=req,
            ctx=nv.gpu(0),
            dtype=np.float64,
        )
    assert bool(col2im_calls) == (path != "direct")


def _gradients(s: Any, inputs: dict[str, np.ndarray], dy: np.ndarray, ctx: Any) -> dict:
    args = {k: nv.nd.array(v, ctx, dtype=v.dtype) for k, v in inputs.items()}
    grads = {k: nv.nd.zeros(v.shape, ctx, dtype=v.dtype) for k, v in inputs.items()}
    exe = s.bind(ctx, args, args_grad=grads)
    exe.forward(is_train=True)
    exe.backward([nv.nd.array(dy, ctx, dtype=dy.dtype)])
    return {k: g.asnumpy() for k, g in grads.items()}
