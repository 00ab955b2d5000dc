"""UpSampling and Crop beyond the op table: MXNet's shapes and names, gradients, errors, GPU.

Values per parameter set are checked by the rows of cases_deconv.py; this file covers
what a row cannot express. Expected shapes and names are what MXNet 1.9.1 answered for
the same calls (probed with .mxenv).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

# isort: off
import op_db  # noqa: F401  (first: it loads every cases_*.py)
from cases_deconv import bilinear_filter, upsampling_reference

# isort: on

import nnvmpy as nv
from nnvmpy.base import InferError, NNVMError, ParamError
from nnvmpy.registry import Op
from nnvmpy.test_utils import check_symbolic_backward, check_symbolic_forward

sym = nv.sym


def still_works() -> None:
    y = nv.nd.UpSampling(nv.nd.ones((1, 1, 2, 2)), scale=2, sample_type="nearest")
    np.testing.assert_array_equal(y.asnumpy(), np.ones((1, 1, 4, 4)))
    z = nv.nd.Crop(nv.nd.ones((1, 1, 3, 3)), h_w=(2, 2))
    np.testing.assert_array_equal(z.asnumpy(), np.ones((1, 1, 2, 2)))


# -- UpSampling -------------------------------------------------------------------------------


def test_nearest_names_and_shapes_follow_mxnet() -> None:
    up = sym.UpSampling(scale=2, sample_type="nearest", num_args=2, name="up")
    assert up.list_arguments() == ["up_arg0", "up_arg1"]
    a, b = sym.Variable("data"), sym.Variable("b")
    concat = sym.UpSampling(a, b, scale=2, sample_type="nearest", name="up")
    assert concat.infer_shape(data=(2, 3, 4, 4), b=(2, 5, 2, 2))[1] == [(2, 8, 8, 8)]
    assert concat.infer_shape(data=(2, 3, 4, 4), b=(2, 5, 8, 8))[1] == [(2, 8, 8, 8)]
    summed = sym.UpSampling(a, b, scale=2, sample_type="nearest", multi_input_mode="sum")
    assert summed.infer_shape(data=(2, 3, 4, 4), b=(2, 3, 2, 2))[1] == [(2, 3, 8, 8)]
    one = sym.UpSampling(a, scale=3, sample_type="nearest")
    assert one.infer_shape(data=(2, 3, 4, 5))[1] == [(2, 3, 12, 15)]


def test_bilinear_names_weight_shape_and_initializer_follow_mxnet() -> None:
    up = sym.UpSampling(
        sym.Variable("data"), scale=3, sample_type="bilinear", num_filter=3, name="up"
    )
    assert up.list_arguments() == ["data", "up_weight"]
    args, outs, _ = up.infer_shape(data=(2, 3, 4, 5))
    assert args[1] == (3, 1, 5, 5)  # kernel 2*scale - scale % 2
    assert outs == [(2, 3, 12, 15)]
    assert up.attr_dict()["up_weight"]["__init__"] == '["bilinear", {}]'
    for scale, k in ((1, 1), (2, 4), (4, 8), (5, 9)):
        s = sym.UpSampling(sym.Variable("d"), scale=scale, sample_type="bilinear", num_filter=2)
        args, outs, _ = s.infer_shape(d=(1, 2, 4, 4))
        assert args[1] == (2, 1, k, k)
        assert outs == [(1, 2, 4 * scale, 4 * scale)]


def test_bilinear_filter_interpolates_linearly() -> None:
    """With the bilinear filter, a linear ramp stays a ramp (away from the borders)."""
    x = np.tile(np.arange(6.0), (6, 1))[None, None]  # value = column
    w = nv.nd.zeros((1, 1, 4, 4))
    nv.init.Bilinear()(nv.init.InitDesc("up_weight"), w)
    np.testing.assert_allclose(w.asnumpy(), bilinear_filter(1, 2))
    y = nv.nd.UpSampling(nv.nd.array(x), w, scale=2, sample_type="bilinear", num_filter=1).asnumpy()
    inner = y[0, 0, 2:-2, 2:-2]
    steps = np.diff(inner, axis=1)
    np.testing.assert_allclose(steps, 0.5, atol=1e-6)  # half a column per output column
    np.testing.assert_allclose(np.diff(inner, axis=0), 0.0, atol=1e-6)


@pytest.mark.parametrize(("root", "scale", "count"), [(1, 2, 3), (2, 3, 2), (3, 1, 2)])
def test_nearest_gradient_counts_the_copies(root: int, scale: int, count: int) -> None:
    """MXNet's check: with dy = y, input k's gradient is x_k * (root * scale**k)**2."""
    rng = np.random.default_rng(0)
    shapes = [
        (1, 3, root * scale ** (count - 1 - k), root * scale ** (count - 1 - k))
        for k in range(count)
    ]
    xs = {f"arg_{k}": rng.uniform(-10, 10, s) for k, s in enumerate(shapes)}
    up = sym.UpSampling(*(sym.Variable(n) for n in xs), sample_type="nearest", scale=root)
    y = upsampling_reference(*xs.values(), scale=root, sample_type="nearest")
    expected = {n: x * (root * scale**k) ** 2 for k, (n, x) in enumerate(xs.items())}
    check_symbolic_backward(up, xs, [y], expected, rtol=1e-10, atol=1e-10, dtype=np.float64)


def test_nearest_sum_with_req_add() -> None:
    rng = np.random.default_rng(1)
    xs = {"a": rng.standard_normal((2, 2, 4, 4)), "b": rng.standard_normal((2, 2, 2, 2))}
    up = sym.UpSampling(
        sym.Variable("a"), sym.Variable("b"), scale=1, sample_type="nearest", multi_input_mode="sum"
    )
    y = xs["a"] + xs["b"].repeat(2, 2).repeat(2, 3)
    check_symbolic_forward(up, xs, [y], rtol=1e-12, atol=0, dtype=np.float64)
    dy = rng.standard_normal(y.shape)
    block_sums = dy.reshape(2, 2, 2, 2, 2, 2).sum(axis=(3, 5))
    expected = {"a": dy, "b": block_sums}
    check_symbolic_backward(
        up, xs, [dy], expected, rtol=1e-12, atol=1e-12, grad_req="add", dtype=np.float64
    )


@pytest.mark.parametrize(
    ("shapes", "params", "pattern"),
    [
        ([(2, 3, 4, 4), (2, 5, 3, 3)], {}, r"UpSampling.*'arg1' has height 3.*output height 8"),
        (
            [(2, 3, 4, 4), (2, 5, 2, 2)],
            {"multi_input_mode": "sum"},
            r"UpSampling.*'sum'.*same number of channels",
        ),
        ([(2, 3, 4)], {}, r"UpSampling.*must be 4-D"),
        ([(2, 3, 4, 4)], {"sample_type": "bilinear", "num_filter": 4}, r"UpSampling: input 'data'"),
    ],
)
def test_bad_upsampling_shapes_raise_infer_error(
    shapes: list, params: dict[str, Any], pattern: str
) -> None:
    params = {"scale": 2, "sample_type": "nearest", **params}
    names = [f"x{i}" for i in range(len(shapes))]
    up = sym.UpSampling(*(sym.Variable(n) for n in names), **params)
    with pytest.raises(InferError, match=pattern):
        up.infer_shape(**dict(zip(names, shapes)))
    still_works()


def test_nearest_upsampling_of_zero_size_planes() -> None:
    """A fuzz finding: a zero-size input plane divided the output size by 0."""
    empty, plane = np.zeros((2, 3, 0, 0), np.float32), np.ones((2, 1, 2, 2), np.float32)
    with nv.util.np_shape(True):  # zero-size gradients: NumPy shape semantics
        a, b = nv.nd.array(empty), nv.nd.array(empty)
        a.attach_grad()
        with nv.autograd.record():
            out = nv.nd.UpSampling(a, b, scale=2, sample_type="nearest", num_args=2)
        out.backward()
        assert out.asnumpy().shape == (2, 6, 0, 0)  # computed (and waited for), no error
        assert a.grad.asnumpy().shape == (2, 3, 0, 0)
    with pytest.raises(InferError, match=r"'arg1' has height 0 .* output height 4"):
        nv.nd.UpSampling(
            nv.nd.array(plane), nv.nd.array(empty), scale=2, sample_type="nearest", num_args=2
        )
    still_works()


def test_bad_upsampling_parameters_raise_param_error() -> None:
    op = Op.get("UpSampling")
    with pytest.raises(ParamError, match=r"UpSampling.*'bilinear' takes 2 inputs.*3"):
        op.parse_attrs({"scale": 2, "sample_type": "bilinear", "num_args": 3})
    with pytest.raises(ParamError, match=r"UpSampling.*'sample_type'"):
        op.parse_attrs({"scale": 2, "sample_type": "cubic", "num_args": 1})
    with pytest.raises(ParamError, match=r"UpSampling.*'scale'"):
        op.parse_attrs({"scale": 0, "sample_type": "nearest", "num_args": 1})
    with pytest.raises(NNVMError, match=r"UpSampling"):
        nv.nd.UpSampling(nv.nd.ones((1, 1, 3, 3), dtype="int32"), scale=2, sample_type="nearest")
    still_works()


# -- Crop ---------------------------------------------------------------------------------------


def test_crop_names_and_shapes_follow_mxnet() -> None:
    assert sym.Crop(num_args=2, name="c").list_arguments() == ["c_arg0", "c_arg1"]
    d, like = sym.Variable("data"), sym.Variable("like")
    by_size = sym.Crop(d, h_w=(3, 3), offset=(1, 2))
    assert by_size.infer_shape(data=(2, 3, 5, 5))[1] == [(2, 3, 3, 3)]
    by_like = sym.Crop(d, like, name="c")
    assert by_like.infer_shape(data=(2, 3, 5, 5), like=(1, 1, 2, 3))[1] == [(2, 3, 2, 3)]
    # the second input's size wins over h_w
    assert sym.Crop(d, like, h_w=(1, 1)).infer_shape(data=(2, 3, 5, 5), like=(1, 1, 2, 3))[1] == [
        (2, 3, 2, 3)
    ]


def test_crop_gradient_fills_the_window_and_zero_for_crop_like() -> None:
    rng = np.random.default_rng(2)
    x, like = rng.standard_normal((2, 2, 5, 6)), rng.standard_normal((1, 1, 3, 2))
    c = sym.Crop(sym.Variable("x"), sym.Variable("like"), center_crop=True)
    check_symbolic_forward(c, {"x": x, "like": like}, [x[:, :, 1:4, 2:4]], dtype=np.float64)
    dy = rng.standard_normal((2, 2, 3, 2))
    dx = np.zeros_like(x)
    dx[:, :, 1:4, 2:4] = dy
    expected = {"x": dx, "like": np.zeros_like(like)}
    for req in ("write", "add"):
        check_symbolic_backward(
            c, {"x": x, "like": like}, [dy], expected, grad_req=req, dtype=np.float64
        )


def test_bad_crops_raise_named_errors() -> None:
    x = nv.nd.ones((2, 2, 5, 6))
    with pytest.raises(InferError, match=r"Crop: a crop of height 2 at offset 4 does not fit"):
        nv.nd.Crop(x, h_w=(2, 3), offset=(4, 2))
    with pytest.raises(InferError, match=r"Crop: a crop of height 0"):
        nv.nd.Crop(x)  # h_w defaults to (0, 0), as MXNet's
    with pytest.raises(InferError, match=r"Crop: input 'data' must be 4-D"):
        nv.nd.Crop(nv.nd.ones((2, 5, 6)), h_w=(2, 2))
    with pytest.raises(InferError, match=r"Crop: input 'crop_like' must be 4-D"):
        nv.nd.Crop(x, nv.nd.ones((2, 3)))
    with pytest.raises(ParamError, match=r"Crop: parameter 'num_args' must be 1 or 2"):
        Op.get("Crop").parse_attrs({"num_args": 3})
    with pytest.raises(ParamError, match=r"Crop: parameter 'offset'"):
        Op.get("Crop").parse_attrs({"num_args": 1, "offset": (1, 2, 3)})
    still_works()


# -- GPU ----------------------------------------------------------------------------------------


@pytest.mark.gpu
@pytest.mark.parametrize(
    ("shapes", "params"),
    [
        ([(2, 2, 4, 4), (2, 3, 2, 2)], {"scale": 2, "sample_type": "nearest"}),
        (
            [(2, 2, 4, 4), (2, 2, 2, 2)],
            {"scale": 1, "sample_type": "nearest", "multi_input_mode": "sum"},
        ),
        ([(2, 2, 3, 4), (2, 1, 4, 4)], {"scale": 2, "sample_type": "bilinear", "num_filter": 2}),
    ],
    ids=["nearest", "sum", "bilinear"],
)
def test_gpu_upsampling_backward_matches_cpu(shapes: list, params: dict[str, Any]) -> None:
    rng = np.random.default_rng(3)
    inputs = {f"x{i}": rng.uniform(-1, 1, s) for i, s in enumerate(shapes)}
    up = sym.UpSampling(*(sym.Variable(n) for n in inputs), **params)
    y = upsampling_reference(*inputs.values(), **params)
    check_symbolic_forward(up, inputs, [y], rtol=1e-10, atol=1e-10, ctx=nv.gpu(0), dtype=np.float64)
    dy = rng.uniform(-1, 1, y.shape)
    on_cpu = _gradients(up, inputs, dy, nv.cpu())
    check_symbolic_backward(
        up,
        inputs,
        [dy],
        on_cpu,
        rtol=1e-10,
        atol=1e-10,
        grad_req="add",
        ctx=nv.gpu(0),
        dtype=np.float64,
    )


@pytest.mark.gpu
def test_gpu_crop_backward_matches_cpu() -> None:
    rng = np.random.default_rng(4)
    inputs = {"x": rng.uniform(-1, 1, (2, 2, 5, 6)), "like": rng.uniform(-1, 1, (2, 2, 3, 2))}
    c = sym.Crop(sym.Variable("x"), sym.Variable("like"), offset=(1, 3))
    check_symbolic_forward(
        c, inputs, [inputs["x"][:, :, 1:4, 3:5]], ctx=nv.gpu(0), dtype=np.float64
    )
    dy = rng.uniform(-1, 1, (2, 2, 3, 2))
    on_cpu = _gradients(c, inputs, dy, nv.cpu())
    for req in ("write", "add"):
        check_symbolic_backward(
            c, inputs, [dy], on_cpu, grad_req=req, ctx=nv.gpu(0), dtype=np.float64
        )


def _gradients(s: Any, inputs: dict[str, np.ndarray], dy: np.ndarray, ctx: Any) -> dict:
    args = {k: nv.nd.array(v, ctx, dtype=v.dtype) for k, v in inputs.items()}
    grads = {k: nv.nd.zeros(v.shape, ctx, dtype=v.dtype) for k, v in inputs.items()}
    exe = s.bind(ctx, args, args_grad=grads)
    exe.forward(is_train=True)
    exe.backward([nv.nd.array(dy, ctx, dtype=dy.dtype)])
    return {k: g.asnumpy() for k, g in grads.items()}


@pytest.mark.gpu
def test_gpu_float16_nearest_gradient_sums_wide() -> None:
    """float16 UpSampling on the GPU sums each block of dy in float64 and rounds once: 2048
    then sixteen ones is 2064 (a float16 running sum stays at 2048)."""
    dy = np.zeros((1, 1, 5, 5), np.float16)
    dy.flat[0] = 2048
    dy.flat[1:17] = 1
    x = nv.nd.zeros((1, 1, 1, 1), nv.gpu(0), dtype=np.float16)
    x.attach_grad()
    with nv.autograd.record():
        y = nv.nd.UpSampling(x, scale=5, sample_type="nearest", num_args=1)
    y.backward(nv.nd.array(dy, nv.gpu(0), dtype=np.float16))
    assert y.dtype == np.float16
    assert x.grad.dtype == np.float16
    assert x.grad.asnumpy().item() == 2064.0
