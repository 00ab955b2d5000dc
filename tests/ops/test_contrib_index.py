"""arange_like, index_array and index_copy: the cases the op table does not cover."""

from __future__ import annotations

import numpy as np
import pytest

import nnvmpy as nv


def test_arange_like_truncates_start_and_step_for_integers() -> None:
    x = nv.nd.zeros((5,), dtype=np.int32)
    out = nv.nd.contrib.arange_like(x, start=1.5, step=2.5)
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out.asnumpy(), [1, 3, 5, 7, 9])


def test_arange_like_has_a_zero_gradient_and_checks_its_axis() -> None:
    x = nv.nd.array(np.ones((2, 3)))
    x.attach_grad()
    with nv.autograd.record():
        y = nv.nd.contrib.arange_like(x, axis=1) * 2
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), np.zeros((2, 3)))
    with pytest.raises(nv.NNVMError, match="axis 2"):
        nv.nd.contrib.arange_like(x, axis=2)


def test_index_array_zero_dim_and_zero_size() -> None:
    out = nv.nd.contrib.index_array(nv.nd.array(np.float32(3)))
    assert out.shape == (0,)
    assert out.dtype == np.int64
    out = nv.nd.contrib.index_array(nv.nd.array(np.zeros((2, 0, 3))), axes=(2, 0))
    assert out.shape == (2, 0, 3, 2)


def test_index_array_gradient_is_zero_and_axes_are_checked() -> None:
    x = nv.nd.array(np.ones((2, 3)))
    x.attach_grad()
    with nv.autograd.record():
        y = nv.nd.contrib.index_array(x)
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), np.zeros((2, 3)))
    with pytest.raises(nv.NNVMError, match="axis -3"):
        nv.nd.contrib.index_array(x, axes=(-3,))


def test_index_copy_documented_example_and_gradients(ctx) -> None:
    old = nv.nd.zeros((5, 3), ctx=ctx)
    new = nv.nd.array([[1, 2, 3], [4, 5, 6], [7, 8, 9]], ctx=ctx)
    index = nv.nd.array([0, 4, 2], ctx=ctx, dtype=np.int64)
    old.attach_grad()
    new.attach_grad()
    dy = np.arange(15.0).reshape(5, 3)
    with nv.autograd.record():
        out = nv.nd.contrib.index_copy(old, index, new)
    out.backward(nv.nd.array(dy, ctx=ctx))
    want = [[1, 2, 3], [0, 0, 0], [7, 8, 9], [0, 0, 0], [4, 5, 6]]
    np.testing.assert_array_equal(out.asnumpy(), want)
    np.testing.assert_array_equal(old.grad.asnumpy(), dy * np.array([0, 1, 0, 1, 0])[:, None])
    np.testing.assert_array_equal(new.grad.asnumpy(), dy[[0, 4, 2]])


def test_index_copy_last_duplicate_wins_and_gets_the_gradient(ctx) -> None:
    old = nv.nd.zeros((3, 2), ctx=ctx)
    new = nv.nd.array([[1, 1], [2, 2], [3, 3]], ctx=ctx)
    new.attach_grad()
    with nv.autograd.record():
        out = nv.nd.contrib.index_copy(old, nv.nd.array([1, 1, 0], ctx=ctx), new)
    out.backward(nv.nd.ones((3, 2), ctx=ctx))
    np.testing.assert_array_equal(out.asnumpy(), [[3, 3], [2, 2], [0, 0]])
    np.testing.assert_array_equal(new.grad.asnumpy(), [[0, 0], [1, 1], [1, 1]])


def test_index_copy_reports_bad_indices_and_shapes() -> None:
    old, new = nv.nd.zeros((5, 3)), nv.nd.ones((2, 3))
    with pytest.raises(nv.NNVMError, match=r"index_vector\[1\] = 7"):
        nv.nd.contrib.index_copy(old, nv.nd.array([0, 7]), new).asnumpy()
    with pytest.raises(nv.NNVMError, match="index_vector"):
        nv.nd.contrib.index_copy(old, nv.nd.array([0, 1, 2]), new)
    with pytest.raises(nv.NNVMError, match="only 2"):
        nv.nd.contrib.index_copy(nv.nd.zeros((2, 3)), nv.nd.array([0, 1, 1]), nv.nd.ones((3, 3)))
    with pytest.raises(nv.NNVMError, match="new_tensor"):
        nv.nd.contrib.index_copy(old, nv.nd.array([0, 1]), nv.nd.ones((2, 4)))
    scalar = nv.nd.array(np.float32(1))  # fuzz finding: a 0-d tensor raised IndexError
    with pytest.raises(nv.NNVMError, match="'new_tensor' must have at least one dimension"):
        nv.nd.contrib.index_copy(nv.nd.ones((3,)), nv.nd.array([0]), scalar)
    with pytest.raises(nv.NNVMError, match="'old_tensor' must have at least one dimension"):
        nv.nd.contrib.index_copy(scalar, nv.nd.array([0]), nv.nd.ones((1,)))


def test_index_copy_infers_shapes_from_either_side() -> None:
    s = nv.sym.contrib.index_copy(*[nv.sym.Variable(n) for n in ("old", "idx", "new")])
    args, outs, _ = s.infer_shape(old=(6, 2), new=(4, 2))
    assert args == [(6, 2), (4,), (4, 2)]
    assert outs == [(6, 2)]
    arg_types, out_types, _ = s.infer_type(new=np.float64, idx=np.int32)
    assert arg_types == [np.float64, np.int32, np.float64]
    assert out_types == [np.float64]


@pytest.mark.parametrize(
    ("shape", "axes"),
    [((5, 1), None), ((1, 1), None), ((2, 1, 4), None), ((3, 4, 5), (2, 0)), ((3, 4, 5), (-2,)),
     ((7,), None), ((2, 3), ())],
)  # fmt: skip
def test_index_array_matches_np_indices(ctx, shape: tuple, axes) -> None:
    """Unit axes before the last (their stride is 1, like the last axis's), chosen and
    reordered axes, 1-D data and no axes at all."""
    got = nv.nd.contrib.index_array(nv.nd.zeros(shape, ctx=ctx), axes=axes).asnumpy()
    grid = np.indices(shape)
    chosen = range(len(shape)) if axes is None else [a % len(shape) for a in axes]
    want = np.stack([grid[a] for a in chosen], -1) if chosen else np.zeros((*shape, 0))
    np.testing.assert_array_equal(got, want)
