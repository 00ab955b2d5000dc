"""_set_value(src, out=x) and imperative inference seeded by out= (MXNet's SetShapeType).

Measured on MXNet 1.9.1: `nd._internal._set_value(2.5, out=x)` fills x and returns it, for
any shape and dtype (2.7 into int32 gives 2); without out= it fails ("Set value target
must not be empty"). An op whose inputs and params leave an output shape unknown takes the
out= array's; errors that do not depend on out= keep their words.
"""

from __future__ import annotations

import numpy as np
import pytest

import nnvmpy as nv


@pytest.mark.parametrize(
    ("shape", "dtype", "src", "want"),
    [
        ((2, 3), np.float32, 2.5, 2.5),
        ((4,), np.float64, -1.25, -1.25),
        ((2, 2, 2), np.int32, 2.7, 2),
        ((3,), np.uint8, 7.0, 7),
    ],
)
def test_set_value_fills_out_in_its_shape_and_dtype(shape, dtype, src, want) -> None:
    x = nv.nd.array(np.arange(np.prod(shape)).reshape(shape), dtype=dtype)
    got = nv.nd._internal._set_value(src, out=x)
    assert got is x
    assert x.shape == shape
    assert x.dtype == dtype
    np.testing.assert_array_equal(x.asnumpy(), np.full(shape, want, dtype=dtype))


def test_set_value_takes_each_calls_out_shape() -> None:
    """A plan built from one out= array's shape must not serve a call with another."""
    a, b = nv.nd.zeros((2, 3)), nv.nd.zeros((5,))
    for value in (1.0, 2.0):
        nv.nd._internal._set_value(src=value, out=a)
        nv.nd._internal._set_value(src=value + 10, out=b)
        np.testing.assert_array_equal(a.asnumpy(), np.full((2, 3), value))
        np.testing.assert_array_equal(b.asnumpy(), np.full((5,), value + 10))


def test_set_value_without_out_names_the_op_and_out() -> None:
    with pytest.raises(nv.NNVMError, match=r"_set_value: cannot infer the shape .* pass out="):
        nv.nd._internal._set_value(2.0)
    x = nv.nd.ones((2,))  # the registry and engine still work
    nv.nd._internal._set_value(3.0, out=x)
    np.testing.assert_array_equal(x.asnumpy(), [3.0, 3.0])


def test_out_does_not_hide_an_error_from_the_inputs() -> None:
    a, b = nv.nd.ones((2, 3)), nv.nd.ones((4, 5))
    with pytest.raises(nv.NNVMError, match="dot"):
        nv.nd.dot(a, b, out=nv.nd.zeros((2, 5)))


def test_set_value_symbol_round_trips() -> None:
    s = nv.sym._internal._set_value(src=1.5)
    again = nv.sym.load_json(s.tojson())
    assert again.tojson() == s.tojson()


@pytest.mark.gpu
def test_set_value_on_the_gpu() -> None:
    x = nv.nd.zeros((3, 4), ctx=nv.gpu(0))
    nv.nd._internal._set_value(-0.5, out=x)
    np.testing.assert_array_equal(x.asnumpy(), np.full((3, 4), -0.5, np.float32))


@pytest.mark.parametrize(
    ("op", "params", "want"),
    [("_zeros", {}, 0.0), ("_ones", {}, 1.0), ("_full", {"value": 4.5}, 4.5)],
)
def test_init_ops_without_a_shape_take_outs(op, params, want) -> None:
    """MXNet's legacy shape () is unknown: `_zeros(out=x)` fills x in x's shape."""
    x = nv.nd.array(np.arange(6.0).reshape(2, 3))
    getattr(nv.nd._internal, op)(out=x, **params)
    np.testing.assert_array_equal(x.asnumpy(), np.full((2, 3), want, np.float32))
    with pytest.raises(nv.NNVMError, match=f"{op}: cannot infer the shape .* pass out="):
        getattr(nv.nd._internal, op)(**params)


def test_init_ops_shape_empty_is_a_scalar_under_np_shape() -> None:
    with nv.util.np_shape():
        assert nv.nd._internal._ones().shape == ()
    s = nv.sym._internal._zeros() + nv.sym.var("a")  # legacy: the graph infers it
    assert s.infer_shape(a=(2, 2))[1] == [(2, 2)]
