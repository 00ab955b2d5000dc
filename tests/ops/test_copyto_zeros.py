"""_copyto and _zeros_without_dtype as MXNet 1.9.1 uses them (checked against it): copyto
casts to out's dtype and keeps the gradient flowing; zeros without a dtype take the dtype
of out= or of their consumers in a graph."""

from __future__ import annotations

import numpy as np
import pytest

import nnvmpy as nv


def test_copyto_into_out_casts_like_mxnet() -> None:
    a = nv.nd.array([1.7, 2, 3], dtype=np.float64)
    b = nv.nd.zeros((3,), dtype=np.int32)
    assert nv.nd._internal._copyto(a, out=b) is b
    np.testing.assert_array_equal(b.asnumpy(), [1, 2, 3])
    assert b.dtype == np.int32
    with pytest.raises(nv.NNVMError, match="shape"):
        nv.nd._internal._copyto(a, out=nv.nd.zeros((2,)))


def test_copyto_without_out_and_its_gradient() -> None:
    x = nv.nd.array([1.0, 2.0])
    x.attach_grad()
    with nv.autograd.record():
        y = nv.nd._internal._copyto(x) * 2
    y.backward()
    np.testing.assert_array_equal(y.asnumpy(), [2.0, 4.0])
    np.testing.assert_array_equal(x.grad.asnumpy(), [2.0, 2.0])
    s = nv.sym._internal._copyto(nv.sym.var("x"))
    assert s.infer_shape(x=(2, 3))[1] == [(2, 3)]


def test_zeros_without_dtype_takes_out_or_a_flag() -> None:
    z = nv.nd.ones((2, 2), dtype=np.float64)
    assert nv.nd._internal._zeros_without_dtype(shape=(2, 2), out=z) is z
    np.testing.assert_array_equal(z.asnumpy(), np.zeros((2, 2)))
    assert nv.nd._internal._zeros_without_dtype(shape=(2, 3), dtype=6).dtype == np.int64
    with pytest.raises(nv.NNVMError, match="_zeros_without_dtype: dtype=-1"):
        nv.nd._internal._zeros_without_dtype(shape=(2, 3))
    with pytest.raises(nv.NNVMError, match="dtype"):
        nv.nd._internal._zeros_without_dtype(shape=(2, 3), dtype=9)


def test_zeros_without_dtype_positional_parameters_and_bad_calls() -> None:
    """MXNet's order (shape, ctx, dtype) by position; an array input or a parameter given
    twice is a named error, not a Python TypeError of the wrapper (found by tools/fuzz.py)."""
    z = nv.nd._internal._zeros_without_dtype((2, 3), None, 1)
    assert z.shape == (2, 3)
    assert z.dtype == np.float64
    with pytest.raises(nv.NNVMError, match="_zeros_without_dtype: expects 0 inputs, got 1"):
        nv.nd._internal._zeros_without_dtype(nv.nd.ones((2, 3)), shape=(2,))
    with pytest.raises((nv.NNVMError, TypeError), match="'shape'"):
        nv.nd._internal._zeros_without_dtype((2,), shape=(2,))
    with pytest.raises(nv.NNVMError, match="parameter 'dtype' expects int"):
        nv.nd._internal._zeros_without_dtype(shape=(0,), dtype=1j)


def test_copyto_passes_other_keywords_to_the_op_call() -> None:
    """Unknown keywords reach the `_copyto` op's call (an op without parameters keeps
    them, as MXNet's attribute dict does) instead of failing the wrapper's signature."""
    a = nv.nd.array([1.0, 2.0])
    np.testing.assert_array_equal(nv.nd._internal._copyto(a, note="x").asnumpy(), [1.0, 2.0])
    with pytest.raises(nv.NNVMError, match="_copyto: expects 1 inputs, got 0"):
        nv.nd._internal._copyto(note="x")
    b = nv.nd.zeros((2,), dtype=np.int32)
    assert nv.nd._internal._copyto(a, b) is b  # MXNet's (data, out) positional order
    np.testing.assert_array_equal(b.asnumpy(), [1, 2])


def test_zeros_without_dtype_in_a_graph_takes_the_consumers_dtype_and_shape() -> None:
    x = nv.sym.var("x")
    s = nv.sym._internal._zeros_without_dtype(shape=(0, 3)) + x
    assert s.infer_type(x=np.float64)[1] == [np.float64]
    assert s.infer_shape(x=(2, 3))[1] == [(2, 3)]
    exe = s.simple_bind(nv.cpu(), x=(2, 3), type_dict={"x": np.float64})
    exe.arg_dict["x"][:] = 1.5
    out = exe.forward()[0]
    assert out.dtype == np.float64
    np.testing.assert_array_equal(out.asnumpy(), np.full((2, 3), 1.5))
    js = nv.sym._internal._zeros_without_dtype(shape=(2, 3)).tojson()
    assert '"op": "_zeros_without_dtype"' in js
