"""im2col, col2im and khatri_rao beyond the op table: a convolution as im2col + matmul
against a direct NumPy convolution, col2im(im2col(x)) against the overlap counts, named
errors, and the gradients on every device."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import nnvmpy as nv

nd = nv.nd


def still_works() -> None:
    np.testing.assert_array_equal(nd.im2col(nd.ones((1, 1, 2, 2)), kernel=(1, 1)).shape, (1, 1, 4))


def direct_conv(x: np.ndarray, w: np.ndarray, stride: int, dilate: int, pad: int) -> np.ndarray:
    """A 2-d convolution written as the sum over kernel taps (NumPy only)."""
    n, _, h, wd = x.shape
    f, _, kh, kw = w.shape
    xp = np.pad(x, [(0, 0), (0, 0), (pad, pad), (pad, pad)])
    ho = (h + 2 * pad - dilate * (kh - 1) - 1) // stride + 1
    wo = (wd + 2 * pad - dilate * (kw - 1) - 1) // stride + 1
    out = np.zeros((n, f, ho, wo))
    for i in range(kh):
        for j in range(kw):
            patch = xp[:, :, i * dilate : i * dilate + stride * ho : stride,
                       j * dilate : j * dilate + stride * wo : stride]  # fmt: skip
            out += np.einsum("nchw,fc->nfhw", patch, w[:, :, i, j])
    return out


@pytest.mark.parametrize(("stride", "dilate", "pad"), [(1, 1, 0), (2, 1, 1), (2, 2, 1)])
def test_im2col_times_weights_is_a_convolution(stride: int, dilate: int, pad: int) -> None:
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((2, 3, 9, 8)), rng.standard_normal((4, 3, 3, 3))
    kw = {"kernel": (3, 3), "stride": (stride,) * 2, "dilate": (dilate,) * 2, "pad": (pad,) * 2}
    col = nd.im2col(nd.array(x, dtype=np.float64), **kw).asnumpy()
    want = direct_conv(x, w, stride, dilate, pad)
    got = np.einsum("fk,nkl->nfl", w.reshape(4, -1), col).reshape(want.shape)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)


def test_col2im_of_im2col_counts_overlaps(ctx: nv.Context) -> None:
    x = np.random.default_rng(1).standard_normal((2, 3, 7, 5))
    kw = {"kernel": (3, 2), "stride": (2, 1), "dilate": (1, 2), "pad": (1, 1)}
    xa = nd.array(x, ctx=ctx, dtype=np.float64)
    col = nd.im2col(xa, **kw)
    back = nd.col2im(col, output_size=(7, 5), **kw).asnumpy()
    counts = nd.col2im(nd.ones(col.shape, ctx=ctx, dtype=np.float64), output_size=(7, 5), **kw)
    np.testing.assert_allclose(back, counts.asnumpy() * x, rtol=1e-12)


@pytest.mark.parametrize(
    ("op", "shape", "params", "match"),
    [
        ("im2col", (1, 2, 4, 4), {"kernel": (5, 1)}, "larger than spatial axis 0"),
        ("im2col", (1, 2, 4), {"kernel": (2, 2)}, "must be \\(N, C\\) plus the 2 spatial"),
        ("im2col", (1, 2, 4, 4), {"kernel": (2, 2), "stride": (1,)}, "'stride' \\(1,\\)"),
        ("im2col", (1, 2, 4, 4), {"kernel": (2, 2), "dilate": (0, 1)}, "'dilate'"),
        ("col2im", (1, 8, 10), {"output_size": (4, 4), "kernel": (2, 2)}, "must be 9"),
        ("col2im", (1, 7, 9), {"output_size": (4, 4), "kernel": (2, 2)}, "multiple of the kernel"),
        ("col2im", (1, 8, 9), {"output_size": (4,), "kernel": (2, 2)}, "'output_size'"),
    ],
)
def test_bad_windows_raise_named_errors(op: str, shape: tuple, params: dict, match: str) -> None:
    with pytest.raises(nv.InferError, match=match) as info:
        getattr(nd, op)(nd.zeros(shape), **params)
    assert op in str(info.value)
    still_works()


def test_khatri_rao_matches_the_column_kronecker_products() -> None:
    rng = np.random.default_rng(2)
    mats = [rng.standard_normal((m, 3)) for m in (2, 4, 3)]
    got = nd.khatri_rao(*[nd.array(m, dtype=np.float64) for m in mats]).asnumpy()
    want = np.stack([np.kron(np.kron(mats[0][:, c], mats[1][:, c]), mats[2][:, c])
                     for c in range(3)], axis=1)  # fmt: skip
    np.testing.assert_allclose(got, want, rtol=1e-12)
    # MXNet's documented example
    a, b = nd.array([[1, -1], [2, -3]]), nd.array([[1, 4], [2, 5], [3, 6]])
    np.testing.assert_array_equal(
        nd.khatri_rao(a, b).asnumpy(), [[1, -4], [2, -5], [3, -6], [2, -12], [4, -15], [6, -18]]
    )


@pytest.mark.parametrize(
    ("shapes", "match"),
    [([(2, 3), (4, 2)], "one number of columns"), ([(2, 3), (4,)], "must be a 2-d matrix")],
)
def test_khatri_rao_bad_shapes(shapes: list, match: str) -> None:
    with pytest.raises(nv.InferError, match=match):
        nd.khatri_rao(*[nd.ones(s) for s in shapes])
    still_works()


def test_khatri_rao_infers_a_missing_factor() -> None:
    a, b = nv.sym.Variable("a"), nv.sym.Variable("b")
    y = nv.sym.elemwise_add(nv.sym.khatri_rao(a, b), nv.sym.Variable("like"))
    args, _, _ = y.infer_shape(a=(2, 5), like=(6, 5))
    assert args[:2] == [(2, 5), (3, 5)]


GRADS: list[tuple[Any, dict[str, tuple[int, ...]]]] = [
    (lambda: nv.sym.im2col(nv.sym.Variable("x"), kernel=(2, 3), stride=(1, 2), pad=(1, 1)),
     {"x": (2, 2, 4, 5)}),
    (lambda: nv.sym.col2im(nv.sym.Variable("x"), output_size=(4, 5), kernel=(2, 3),
                           stride=(1, 2), pad=(1, 1)), {"x": (2, 12, 15)}),
    (lambda: nv.sym.khatri_rao(nv.sym.Variable("a"), nv.sym.Variable("b"), nv.sym.Variable("c")),
     {"a": (2, 3), "b": (3, 3), "c": (2, 3)}),
]  # fmt: skip


@pytest.mark.parametrize(("make", "shapes"), GRADS)
def test_gradients_agree_across_devices_and_requests(make: Any, shapes: dict, ctx: Any) -> None:
    """Gradients on ctx with 'write' equal the CPU's; 'add' adds them to what was there."""
    rng = np.random.default_rng(3)
    values = {k: rng.standard_normal(s) for k, s in shapes.items()}
    s = make()
    out_shape = s.infer_shape(**shapes)[1][0]
    dy = rng.standard_normal(out_shape)
    types = dict.fromkeys(shapes, np.float64)

    def grads(dev: nv.Context, req: str) -> dict[str, np.ndarray]:
        exe = s.simple_bind(dev, grad_req=req, type_dict=types, **shapes)
        for k, v in values.items():
            exe.arg_dict[k][:] = v
            exe.grad_dict[k][:] = 1.0
        exe.forward(is_train=True)
        exe.backward([nd.array(dy, ctx=dev, dtype=np.float64)])
        return {k: g.asnumpy() for k, g in exe.grad_dict.items()}

    ref = grads(nv.cpu(), "write")
    nv.test_utils.check_numeric_gradient(s, values, dtype=np.float64, rtol=1e-5, atol=1e-8)
    for k, g in grads(ctx, "add").items():
        np.testing.assert_allclose(g, ref[k] + 1, rtol=1e-12, err_msg=k)
