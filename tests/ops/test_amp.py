"""amp_cast and amp_multicast: which dtypes they produce, exact rounding, gradients."""

from __future__ import annotations

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy.test_utils import check_numeric_gradient


@pytest.mark.filterwarnings("ignore:overflow encountered in cast:RuntimeWarning")
def test_amp_cast_rounds_like_numpy() -> None:
    x = np.array([1.0, 1 + 2**-11, 1 + 3 * 2**-11, 65519.0, 65520.0, 1e-8, -0.0, np.nan],
                 np.float32)  # fmt: skip
    got = nv.nd.amp_cast(nv.nd.array(x), dtype="float16").asnumpy()
    want = x.astype(np.float16)
    assert got.dtype == np.float16
    np.testing.assert_array_equal(got, want)  # round to nearest even, overflow to inf, nan


@pytest.mark.parametrize("src", [np.int32, np.uint8, np.int64])
def test_amp_cast_leaves_non_float_data_alone(src: type) -> None:
    x = nv.nd.array(np.arange(5), dtype=src)
    y = nv.nd.amp_cast(x, dtype="float16")
    assert y.dtype == src
    np.testing.assert_array_equal(y.asnumpy(), np.arange(5))


def test_amp_cast_gradient_returns_in_the_input_dtype() -> None:
    x = nv.sym.Variable("x")
    y = nv.sym.amp_cast(x, dtype="float32") * 3.0
    args, outs, _ = y.infer_type(x=np.float64)
    assert args == [np.float64]
    assert outs == [np.float32]
    exe = y.simple_bind(nv.cpu(), x=(2, 3), type_dict={"x": np.float64})
    exe.forward(is_train=True, x=np.ones((2, 3)))
    exe.backward(nv.nd.ones((2, 3)))
    assert exe.grad_dict["x"].dtype == np.float64
    np.testing.assert_array_equal(exe.grad_dict["x"].asnumpy(), 3.0)
    x0 = np.random.default_rng(0).uniform(size=(3, 2))
    check_numeric_gradient(nv.sym.amp_cast(x, dtype="float64"), {"x": x0})


@pytest.mark.parametrize(
    ("dtypes", "narrow", "want"),
    [
        ((np.float16, np.float32, np.float16), False, (np.float32,) * 3),
        ((np.float16, np.float32, np.float64), True, (np.float16,) * 3),
        ((np.float16, np.int32, np.float64), False, (np.float64, np.int32, np.float64)),
        ((np.int32, np.uint8), False, (np.int32, np.uint8)),
    ],
)
def test_amp_multicast_picks_the_widest_or_narrowest_float(dtypes, narrow, want) -> None:
    inputs = [nv.nd.array(np.arange(3) + i, dtype=d) for i, d in enumerate(dtypes)]
    outs = nv.nd.amp_multicast(*inputs, num_outputs=len(inputs), cast_narrow=narrow)
    assert [o.dtype for o in outs] == [np.dtype(w) for w in want]
    for i, o in enumerate(outs):
        np.testing.assert_array_equal(o.asnumpy(), np.arange(3) + i)


def test_amp_multicast_in_a_symbol_keeps_shapes_apart() -> None:
    a, b = nv.sym.Variable("a"), nv.sym.Variable("b")
    s = nv.sym.amp_multicast(a, b, num_outputs=2)
    _, shapes, _ = s.infer_shape(a=(2, 3), b=(4,))
    assert shapes == [(2, 3), (4,)]
    _, types, _ = s.infer_type(a=np.float16, b=np.float32)
    assert types == [np.float32, np.float32]


def test_amp_bad_params_are_named_errors() -> None:
    x = nv.nd.ones((2,))
    with pytest.raises(nv.ParamError, match=r"amp_cast.*dtype"):
        nv.nd.amp_cast(x, dtype="float8")
    with pytest.raises(nv.NNVMError, match=r"amp_multicast: expects 3 inputs, got 2"):
        nv.nd.amp_multicast(x, x, num_outputs=3)
    assert nv.nd.amp_cast(x, dtype="float16").dtype == np.float16
