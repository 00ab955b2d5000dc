"""cast_storage beyond its op-table row: sparse storage types are named errors, and
the op, the registry and the engine keep working after one."""

from __future__ import annotations

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy.base import ParamError


@pytest.mark.parametrize("stype", ["row_sparse", "csr"])
def test_sparse_stype_is_a_named_param_error(stype: str) -> None:
    x = nv.nd.array([[1.0, 0.0], [0.0, 2.0]])
    with pytest.raises(ParamError, match=rf"cast_storage: parameter 'stype' is '{stype}'.*sparse"):
        nv.nd.cast_storage(x, stype=stype)
    with pytest.raises(ParamError, match="cast_storage"):
        nv.sym.cast_storage(nv.sym.Variable("x"), stype=stype)
    y = nv.nd.cast_storage(x, stype="default")  # still usable
    np.testing.assert_array_equal(y.asnumpy(), x.asnumpy())


def test_unknown_and_missing_stype() -> None:
    x = nv.nd.ones((2,))
    with pytest.raises(ParamError, match=r"cast_storage.*'stype'"):
        nv.nd.cast_storage(x, stype="dense")
    with pytest.raises(ParamError, match=r"cast_storage.*'stype'"):
        nv.nd.cast_storage(x)


def test_default_is_a_copy_consistent_with_tostype() -> None:
    x = nv.nd.array(np.arange(6.0).reshape(2, 3), dtype="float64")
    y = nv.nd.cast_storage(x, stype="default")
    y[:] = 0
    np.testing.assert_array_equal(x.asnumpy(), np.arange(6.0).reshape(2, 3))  # not a view
    np.testing.assert_array_equal(x.tostype("default").asnumpy(), x.asnumpy())
    assert y.dtype == x.dtype
    assert y.shape == x.shape
    with pytest.raises(nv.NNVMError):
        x.tostype("csr")


def test_gradient_is_the_output_gradient() -> None:
    x = nv.nd.array([[1.0, -2.0, 3.0]])
    x.attach_grad()
    with nv.autograd.record():
        y = nv.nd.cast_storage(x, stype="default") * nv.nd.array([[2.0, 3.0, 4.0]])
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [[2.0, 3.0, 4.0]])
