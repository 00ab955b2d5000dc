"""3-D Convolution and Pooling (NCDHW) beyond the op table, and Pooling's MXNet pad rules.

Forward values and finite-difference gradients per parameter set are the 3-D rows of
cases_conv.py; here: shapes (as MXNet 1.9.1 gives them), chunking, the max mask's
index, the GPU kernels (on the CPU through kernel.parallel_for, and on the GPU).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

# isort: off
import op_db  # noqa: F401  (first: it loads every cases_*.py)
from cases_conv import conv_reference, pool_reference

# isort: on

import nnvmpy as nv
from nnvmpy.base import InferError, OpReqType, ParamError
from nnvmpy.imperative import infer_outputs
from nnvmpy.registry import Op
from nnvmpy.test_utils import _run_compute, check_symbolic_backward, check_symbolic_forward

sym = nv.sym


def _direct(name: str, params: dict[str, Any], inputs: list[np.ndarray]) -> list[np.ndarray]:
    """FCompute<cpu> called directly with every output (hidden ones included)."""
    op = Op.get(name)
    attrs = op.parse_attrs(params)
    shapes, dtypes = infer_outputs(
        attrs, [x.shape for x in inputs], [x.dtype for x in inputs], op.get_num_outputs(attrs)
    )
    return _run_compute(op, attrs, inputs, shapes, dtypes, OpReqType.kWriteTo)


def test_3d_shapes() -> None:
    data = sym.Variable("data")
    conv = sym.Convolution(
        data, kernel=(2, 3, 3), stride=(1, 2, 2), pad=(1, 1, 0), num_filter=4, name="c"
    )
    args, outs, _ = conv.infer_shape(data=(2, 3, 5, 7, 8))
    assert args[1:] == [(4, 3, 2, 3, 3), (4,)]
    assert outs == [(2, 4, 6, 4, 3)]
    assert conv.infer_shape_partial(data=(0, 3, 0, 7, 8))[1] == [(0, 4, 0, 4, 3)]
    pool = sym.Pooling(data, kernel=(2, 2, 2), stride=(2, 2, 2), pooling_convention="full")
    assert pool.infer_shape(data=(1, 2, 5, 4, 3))[1] == [(1, 2, 3, 2, 2)]
    same = sym.Pooling(data, kernel=(3, 3, 3), stride=(2, 2, 2), pooling_convention="same")
    assert same.infer_shape(data=(1, 2, 5, 4, 3))[1] == [(1, 2, 3, 2, 2)]
    glob = sym.Pooling(data, kernel=(1, 1, 1), global_pool=True, pool_type="avg")
    assert glob.infer_shape(data=(1, 2, 5, 4, 3))[1] == [(1, 2, 1, 1, 1)]


def test_pooling_pad_rules_follow_mxnet() -> None:
    """A pad longer than the kernel is cut to it; 'same' takes no padding (MXNet's tests)."""
    x = nv.nd.array(np.random.default_rng(0).random((1, 1, 10)))
    y = nv.nd.Pooling(x, kernel=2, stride=2, pad=(0, 0, 0), pooling_convention="same")
    assert y.shape == (1, 1, 5)
    assert nv.nd.Pooling(x, kernel=2, stride=2, pad=(1, 1, 1)).shape == (1, 1, 6)
    with pytest.raises(ParamError, match=r"Pooling: pooling_convention='same'.*'pad' must be zero"):
        nv.nd.Pooling(x, kernel=2, stride=2, pad=2, pooling_convention="same")
    with pytest.raises(InferError, match=r"Pooling: input 'data' must be 5-D"):
        nv.nd.Pooling(x, kernel=(2, 2, 2))


@pytest.mark.parametrize("workspace", [0, 1024])
def test_3d_convolution_chunks_match_the_reference(workspace: int) -> None:
    rng = np.random.default_rng(1)
    params = {
        "kernel": (3, 2, 3),
        "stride": (2, 1, 2),
        "pad": (1, 0, 1),
        "dilate": (1, 2, 1),
        "num_filter": 4,
    }
    x, w, b = (
        rng.standard_normal((5, 2, 5, 6, 7)),
        rng.standard_normal((4, 2, 3, 2, 3)),
        rng.standard_normal(4),
    )
    (y,) = _direct("Convolution", {**params, "workspace": workspace}, [x, w, b])
    np.testing.assert_allclose(y, conv_reference(x, w, b, **params), rtol=1e-10, atol=1e-10)


def test_3d_max_mask_holds_the_flat_index_of_the_first_maximum() -> None:
    rng = np.random.default_rng(2)
    x = rng.integers(0, 3, (1, 2, 3, 4, 4)).astype(np.float64)  # many ties
    y, mask = _direct("Pooling", {"kernel": (2, 2, 2), "stride": (1, 2, 2)}, [x])
    for n, c, v, r, z in np.ndindex(*y.shape):
        window = x[n, c, v : v + 2, 2 * r : 2 * r + 2, 2 * z : 2 * z + 2]
        a, i, j = np.unravel_index(np.argmax(window), window.shape)  # argmax: the first
        assert mask[n, c, v, r, z] == ((v + a) * 4 + 2 * r + i) * 4 + 2 * z + j
        assert y[n, c, v, r, z] == window.max()
    dy = rng.standard_normal(y.shape)
    pool = sym.Pooling(sym.Variable("x"), kernel=(2, 2, 2), stride=(1, 2, 2))
    dx = np.zeros_like(x)
    flat = dx.reshape(1, 2, -1)
    for (n, c, v, r, z), g in np.ndenumerate(dy):
        flat[n, c, mask[n, c, v, r, z]] += g
    check_symbolic_backward(
        pool, {"x": x}, [dy], {"x": dx}, rtol=1e-12, atol=1e-12, dtype=np.float64
    )


def test_gpu_kernel_bodies_match_the_reference_on_the_cpu() -> None:
    """_conv_cuda's bodies for a 3-D grouped convolution, run on the CPU."""
    from nnvmpy.ops.nn import _conv_cuda
    from nnvmpy.ops.nn.convolution import conv_shape

    rng = np.random.default_rng(3)
    p = (
        Op.get("Convolution")
        .parse_attrs(
            {
                "kernel": (2, 2, 3),
                "stride": (1, 2, 1),
                "pad": (1, 0, 1),
                "num_filter": 4,
                "num_group": 2,
            }
        )
        .parsed
    )
    x, w, b = (
        rng.standard_normal((2, 4, 3, 5, 4)),
        rng.standard_normal((4, 2, 2, 2, 3)),
        rng.standard_normal(4),
    )
    want = conv_reference(x, w, b, **p.values())
    geo = _conv_cuda.geometry(conv_shape(p, x.shape, 4, want.shape[2:]))
    out = np.full(want.shape, np.nan)
    _conv_cuda.conv_forward.launch(
        None, out.size, x.ravel(), w.ravel(), b, out.reshape(-1), True, 1, *geo
    )
    np.testing.assert_allclose(out, want, rtol=1e-12, atol=1e-12)
    dy = rng.standard_normal(want.shape)
    rows = dy.shape[0] * dy.shape[2] * dy.shape[3]  # output rows (n, v, y)
    dw = np.ones_like(w)  # mode 2 (ADD): accumulates onto the ones
    _conv_cuda.conv_weight_grad.launch(
        None, w.size, dy.ravel(), x.ravel(), dw.reshape(-1), 2, 2, rows, *geo
    )
    # <conv(x, w + e), dy> - <conv(x, w), dy> is linear in e: check dW against it
    e = rng.standard_normal(w.shape)
    linear = np.vdot(conv_reference(x, e, **p.values()), dy)
    np.testing.assert_allclose(np.vdot(dw - 1.0, e), linear, rtol=1e-10)
    # sliced (weight_grad_gpu's first pass): slices of 5 of the 16 rows, the last one short
    assert rows == 16
    slices = -(-rows // 5)
    part = np.full(slices * w.size, np.nan)
    _conv_cuda.conv_weight_grad.launch(None, part.size, dy.ravel(), x.ravel(), part, 2, 1, 5, *geo)
    np.testing.assert_allclose(part.reshape(slices, -1).sum(0), (dw - 1.0).ravel(), rtol=1e-12)
    db = np.full(4, np.nan)
    _conv_cuda.channel_sum.launch(None, 4, dy.ravel(), db, 2, 4, int(np.prod(dy.shape[2:])), 1)
    np.testing.assert_allclose(db, dy.sum(axis=(0, 2, 3, 4)), rtol=1e-12)


@pytest.mark.gpu
def test_gpu_3d_convolution_backward_matches_cpu() -> None:
    rng = np.random.default_rng(4)
    params = {
        "kernel": (2, 3, 2),
        "stride": (2, 1, 1),
        "pad": (1, 1, 0),
        "num_filter": 4,
        "num_group": 2,
    }
    inputs = {
        "x": rng.uniform(-1, 1, (2, 4, 3, 4, 4)),
        "w": rng.uniform(-1, 1, (4, 2, 2, 3, 2)),
        "b": rng.uniform(-1, 1, 4),
    }
    conv = sym.Convolution(*(sym.Variable(n) for n in inputs), **params)
    y = conv_reference(*inputs.values(), **params)
    check_symbolic_forward(
        conv, inputs, [y], rtol=1e-10, atol=1e-10, ctx=nv.gpu(0), dtype=np.float64
    )
    dy = rng.uniform(-1, 1, y.shape)
    on_cpu = _gradients(conv, inputs, dy, nv.cpu())
    check_symbolic_backward(
        conv,
        inputs,
        [dy],
        on_cpu,
        rtol=1e-9,
        atol=1e-10,
        grad_req="add",
        ctx=nv.gpu(0),
        dtype=np.float64,
    )


@pytest.mark.gpu
@pytest.mark.parametrize("pool_type", ["max", "avg", "sum", "lp"])
def test_gpu_3d_pooling_matches_cpu(pool_type: str) -> None:
    rng = np.random.default_rng(5)
    x = (rng.permutation(2 * 2 * 4 * 5 * 5).reshape(2, 2, 4, 5, 5) + 1) * 0.1
    params = {
        "kernel": (2, 3, 3),
        "stride": (2, 2, 2),
        "pad": (1, 1, 1),
        "pool_type": pool_type,
        "p_value": 2,
    }
    pool = sym.Pooling(sym.Variable("x"), **params)
    y = pool_reference(x, **params)
    check_symbolic_forward(
        pool, {"x": x}, [y], rtol=1e-10, atol=1e-10, ctx=nv.gpu(0), dtype=np.float64
    )
    dy = rng.uniform(-1, 1, y.shape)
    on_cpu = _gradients(pool, {"x": x}, dy, nv.cpu())
    check_symbolic_backward(
        pool, {"x": x}, [dy], on_cpu, rtol=1e-10, atol=1e-12, ctx=nv.gpu(0), dtype=np.float64
    )


def _gradients(s: Any, inputs: dict[str, np.ndarray], dy: np.ndarray, ctx: Any) -> dict:
    args = {k: nv.nd.array(v, ctx, dtype=v.dtype) for k, v in inputs.items()}
    grads = {k: nv.nd.zeros(v.shape, ctx, dtype=v.dtype) for k, v in inputs.items()}
    exe = s.bind(ctx, args, args_grad=grads)
    exe.forward(is_train=True)
    exe.backward([nv.nd.array(dy, ctx, dtype=dy.dtype)])
    return {k: g.asnumpy() for k, g in grads.items()}
