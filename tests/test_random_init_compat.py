"""MXNet 1.9.1 behaviours found by running its test_random/test_init/test_optimizer files.

References are independent of nnvmpy: the name rules of MXNet 1.9.1's
`Initializer.__call__` (observed there: a name ending in `weight_quantize` gets integers
in [-127, 127), one ending in `bias_quantize` gets zeros, whatever the initializer), and
NumPy statistics for randn.
"""

from __future__ import annotations

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy.initializer import InitDesc


@pytest.mark.parametrize("dtype", ["int8", "int32", "float32"])
def test_quantized_weight_gets_random_int8_range(dtype: str) -> None:
    arr = nv.nd.zeros((40, 50), dtype=dtype)
    nv.init.Uniform(0.01)(InitDesc("qfc_weight_quantize"), arr)
    values = arr.asnumpy()
    assert values.dtype == np.dtype(dtype)
    assert np.all(values == np.round(values))  # integers, whatever the storage dtype
    assert values.min() >= -127
    assert values.max() < 127
    # 2000 draws from 254 values: far from constant (MXNet 1.9.1 fills one value)
    assert len(np.unique(values)) > 100


@pytest.mark.parametrize("initializer", [nv.init.One(), nv.init.Xavier(), nv.init.Constant(3)])
def test_quantized_bias_is_zero(initializer: nv.init.Initializer) -> None:
    arr = nv.nd.ones((3, 4), dtype="int8")
    initializer(InitDesc("qfc_bias_quantize"), arr)
    assert np.array_equal(arr.asnumpy(), np.zeros((3, 4), dtype=np.int8))


def test_unknown_pattern_error_lists_quantize() -> None:
    with pytest.raises(nv.NNVMError, match="weight_quantize"):
        nv.init.One()(InitDesc("fc_state"), nv.nd.zeros((2,)))


def test_randn_takes_shape_keyword() -> None:
    nv.random.seed(11)
    x = nv.nd.random.randn(shape=(300, 200), loc=2.0, scale=0.5).asnumpy()
    assert x.shape == (300, 200)
    assert abs(x.mean() - 2.0) < 0.01
    assert abs(x.std() - 0.5) < 0.01
    assert nv.nd.random.randn(shape=4).shape == (4,)
    # the positional form, MXNet's, is unchanged and gives the same numbers
    nv.random.seed(11)
    y = nv.nd.random.randn(300, 200, loc=2.0, scale=0.5).asnumpy()
    assert np.array_equal(x, y)


def test_randn_shape_given_twice_is_an_error() -> None:
    with pytest.raises(nv.NNVMError, match="randn: shape given twice"):
        nv.nd.random.randn(2, 3, shape=(2, 3))
