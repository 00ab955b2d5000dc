"""Special cases of tile, repeat, reverse/flip, SwapAxis, Pad, depth_to_space,
space_to_depth and diag beyond the op table: bad parameters raise named errors and leave
the engine working, inference in both directions, empty arrays, gradients accumulated
with grad_req='add', and the backward kernels on the GPU (or its simulator)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import nnvmpy as nv

nd = nv.nd


def still_works() -> None:
    np.testing.assert_array_equal(nd.tile(nd.ones(2), reps=(2,)).asnumpy(), [1, 1, 1, 1])


BAD = [
    ("tile", (2, 3), {"reps": (1, 0)}, nv.InferError, "'reps' .* positive"),
    ("tile", (2, 3), {"reps": (2, -3)}, nv.InferError, "'reps' .* positive"),
    ("repeat", (2, 3), {"repeats": -1}, nv.ParamError, "repeats"),
    ("repeat", (2, 3), {"repeats": 2, "axis": 2}, nv.InferError, "'axis' is 2"),
    ("reverse", (2, 3), {"axis": (2,)}, nv.InferError, "'axis' is 2"),
    ("flip", (2, 3), {"axis": (1, -1)}, nv.InferError, "names an axis twice"),
    ("SwapAxis", (2, 3), {"dim1": 0, "dim2": -3}, nv.InferError, "'dim2' is -3"),
    ("Pad", (1, 2, 3, 4), {"mode": "edge", "pad_width": (0, 0, 1, 1)}, nv.InferError, "2\\*4"),
    ("Pad", (2, 3), {"mode": "constant", "pad_width": (0, 0, 1, -1)}, nv.InferError, "negative"),
    ("Pad", (2, 3), {"mode": "reflect", "pad_width": (0, 0, 3, 0)}, nv.InferError, "smaller"),
    ("pad", (2, 3), {"mode": "wrap", "pad_width": (0, 0, 1, 1)}, nv.ParamError, "'mode'"),
    ("depth_to_space", (1, 4, 2), {"block_size": 2}, nv.InferError, "4-d"),
    ("depth_to_space", (1, 3, 2, 2), {"block_size": 2}, nv.InferError, "multiple of 4"),
    ("depth_to_space", (1, 4, 2, 2), {"block_size": 0}, nv.ParamError, "block_size"),
    ("space_to_depth", (1, 1, 3, 4), {"block_size": 2}, nv.InferError, "multiple of 2"),
    ("diag", (3, 4), {"k": 5}, nv.InferError, "k=5"),
    ("diag", (3, 4, 2), {"axis1": 1, "axis2": -2}, nv.InferError, "same axis"),
]


@pytest.mark.parametrize(("op", "shape", "params", "error", "match"), BAD)
def test_bad_parameters_raise_named_errors(
    op: str, shape: tuple, params: dict, error: type, match: str
) -> None:
    with pytest.raises(error, match=match) as info:
        getattr(nd, op)(nd.zeros(shape), **params)
    assert nv.registry.Op.get(op).name in str(info.value)  # an alias's error names its op
    still_works()


def test_empty_space_axis_raises() -> None:
    # MXNet's test_depthtospace: a zero-size spatial axis is an error, not an empty result
    with pytest.raises(nv.InferError, match="empty axis 2"):
        nd.depth_to_space(nd.array(np.zeros((1, 4, 0, 3))), block_size=2)
    still_works()


def test_tile_and_repeat_of_empty_arrays() -> None:
    with nv.np_shape():
        x = nd.array(np.zeros((2, 0, 3)))
        assert nd.tile(x, reps=(2, 1, 2)).shape == (4, 0, 6)
    y = nd.repeat(nd.ones((2, 3)), repeats=0, axis=1)
    assert y.shape == (0,)


def test_mutual_inference() -> None:
    x = nv.sym.Variable("x")
    cases = [
        (nv.sym.depth_to_space(x, block_size=2), (2, 3, 4, 6), (2, 12, 2, 3)),
        (nv.sym.space_to_depth(x, block_size=2), (2, 12, 2, 3), (2, 3, 4, 6)),
        (nv.sym.repeat(x, repeats=3, axis=1), (2, 6), (2, 2)),
        (nv.sym.SwapAxis(x, dim1=0, dim2=2), (4, 3, 2), (2, 3, 4)),
        (nv.sym.Pad(x, mode="edge", pad_width=(0, 0, 1, 2)), (3, 7), (3, 4)),
        (nv.sym.flip(x, axis=(0,)), (3, 7), (3, 7)),
    ]
    for y, out_shape, in_shape in cases:
        # infer the input from the output: y feeds an op that fixes its shape
        z = nv.sym.elemwise_add(y, nv.sym.Variable("like"))
        args, _, _ = z.infer_shape(like=out_shape)
        assert args[0] == in_shape, (y, args)


GRADS = [  # (symbol maker, input shape, NumPy gradient of sum(w * y) with respect to x)
    (lambda x: nv.sym.tile(x, reps=(2, 3)), (2, 2),
     lambda x, w: w.reshape(2, 2, 3, 2).sum(axis=(0, 2))),
    (lambda x: nv.sym.repeat(x, repeats=3, axis=0), (2, 4),
     lambda x, w: w.reshape(2, 3, 4).sum(axis=1)),
    (lambda x: nv.sym.Pad(x, mode="reflect", pad_width=(0, 0, 0, 0, 2, 1, 1, 2)), (1, 2, 3, 4),
     None),
    (lambda x: nv.sym.Pad(x, mode="edge", pad_width=(0, 0, 0, 0, 2, 1, 1, 2)), (1, 2, 3, 4),
     None),
    (lambda x: nv.sym.diag(x, k=-1), (4,), lambda x, w: np.diagonal(w, -1)),
    (lambda x: nv.sym.diag(x, k=1, axis1=2, axis2=0), (3, 2, 4), None),
    (lambda x: nv.sym.depth_to_space(x, block_size=2), (1, 8, 2, 3), None),
    (lambda x: nv.sym.swapaxes(x, dim1=0, dim2=1), (3, 2), lambda x, w: w.T),
]  # fmt: skip


def _grad(make: Any, shape: tuple, ctx: nv.Context, req: str, x: np.ndarray, w: np.ndarray):
    s = make(nv.sym.Variable("x"))
    exe = s.simple_bind(ctx, grad_req=req, type_dict={"x": np.float64}, x=shape)
    exe.arg_dict["x"][:] = x
    exe.grad_dict["x"][:] = np.ones(shape)
    exe.forward(is_train=True)
    exe.backward([nd.array(w, ctx=ctx, dtype=np.float64)])
    return exe.grad_dict["x"].asnumpy()


def _dot_gradient(make: Any, x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """d sum(w * f(x)) / dx for a linear f, column by column from unit inputs."""
    out = np.zeros(x.size)
    for i in range(x.size):
        e = np.zeros(x.size)
        e[i] = 1
        y = make(nv.sym.Variable("x")).eval(x=nd.array(e.reshape(x.shape), dtype=np.float64))[0]
        out[i] = np.vdot(w, y.asnumpy())
    return out.reshape(x.shape)


@pytest.mark.parametrize(("make", "shape", "reference"), GRADS)
def test_gradients_write_and_add(make: Any, shape: tuple, reference: Any, ctx: nv.Context) -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape)
    y_shape = make(nv.sym.Variable("x")).infer_shape(x=shape)[1][0]
    w = rng.standard_normal(y_shape)
    want = reference(x, w) if reference is not None else _dot_gradient(make, x, w)
    np.testing.assert_allclose(_grad(make, shape, ctx, "write", x, w), want, atol=1e-12)
    np.testing.assert_allclose(_grad(make, shape, ctx, "add", x, w), want + 1, atol=1e-12)


def test_pad_float16_gradient_on_every_device(ctx: nv.Context) -> None:
    x = nd.array(np.arange(12).reshape(1, 1, 3, 4), ctx=ctx, dtype=np.float16)
    x.attach_grad()
    with nv.autograd.record():
        y = nd.pad(x, mode="edge", pad_width=(0, 0, 0, 0, 1, 0, 0, 2))
    y.backward(nd.ones(y.shape, ctx=ctx, dtype=np.float16))
    # each element is copied (copies along axis 2) x (copies along axis 3) times: the
    # first row once more above, the last column twice more to the right
    want = np.outer([2, 1, 1], [1, 1, 1, 3])
    np.testing.assert_array_equal(x.grad.asnumpy()[0, 0], want)
    assert x.grad.dtype == np.float16


def _d2s(x: np.ndarray, b: int) -> np.ndarray:
    n, c, h, w = x.shape
    y = x.reshape(n, b, b, c // (b * b), h, w).transpose(0, 3, 4, 1, 5, 2)
    return y.reshape(n, c // (b * b), h * b, w * b)


def _s2d(x: np.ndarray, b: int) -> np.ndarray:
    n, c, h, w = x.shape
    y = x.reshape(n, c, h // b, b, w // b, b).transpose(0, 3, 5, 1, 2, 4)
    return y.reshape(n, c * b * b, h // b, w // b)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int32", "uint8"])
@pytest.mark.parametrize(("b", "shape"), [(2, (2, 8, 3, 5)), (3, (1, 18, 4, 2)), (1, (2, 3, 2, 1))])
def test_depth_space_row_loops_against_numpy(b: int, shape: tuple, dtype: str) -> None:
    """The CPU's row loops (float16 and uint8 written as same-sized integers): both ops,
    both backward ops (each the other's permutation) and gradients added with req 'add'."""
    rng = np.random.default_rng(b)
    x = (rng.standard_normal(shape) * 10).astype(dtype)
    y = nd.depth_to_space(nd.array(x, dtype=dtype), block_size=b).asnumpy()
    np.testing.assert_array_equal(y, _d2s(x, b))
    back = nd.space_to_depth(nd.array(y, dtype=dtype), block_size=b).asnumpy()
    np.testing.assert_array_equal(back, x)
    if dtype not in ("float32", "float64"):
        return
    for op, ref, src in ((nd.depth_to_space, _s2d, x), (nd.space_to_depth, _d2s, y)):
        data = nd.array(src, dtype=dtype)
        data.attach_grad(grad_req="add")
        start = rng.standard_normal(src.shape).astype(dtype)
        data.grad[:] = start
        with nv.autograd.record():
            out = op(data, block_size=b)
        dy = rng.standard_normal(out.shape).astype(dtype)
        out.backward(nd.array(dy, dtype=dtype))
        np.testing.assert_array_equal(data.grad.asnumpy(), start + ref(dy, b))
