"""nd.contrib / sym.contrib / nd.linalg / sym.linalg: ops named `_contrib_X` / `_linalg_X`
served as `X`, generated on access like nd and sym (signature.OpNamespace with a prefix)."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy.graph.grad import make_zero_grad_nodes
from nnvmpy.ops._family import register_unary
from nnvmpy.ops.elemwise_unary import _negative

nd, sym = nv.nd, nv.sym


def test_contrib_ops_appear_under_their_short_names() -> None:
    assert nd.contrib.isnan.__name__ == "isnan"
    assert nd.contrib.isnan._op.name == "_contrib_isnan"  # type: ignore[attr-defined]
    assert {"isnan", "isinf", "isfinite", "div_sqrt_dim"} <= set(dir(nd.contrib))
    assert "relu" not in dir(nd.contrib)
    got = nd.contrib.isnan(nd.array([np.nan, 1.0]))
    np.testing.assert_array_equal(got.asnumpy(), [1, 0])
    s = sym.contrib.isinf(sym.var("x"), name="inf")
    assert s.list_outputs() == ["inf_output"]
    assert next(iter(inspect.signature(sym.contrib.isinf).parameters)) == "data"


def test_unknown_names_raise_attribute_error_naming_the_module() -> None:
    with pytest.raises(AttributeError, match=r"nnvmpy\.nd\.contrib.*'relu'"):
        nd.contrib.relu
    with pytest.raises(AttributeError, match=r"nnvmpy\.sym\.linalg.*'no_such_op'"):
        sym.linalg.no_such_op
    with pytest.raises(AttributeError):
        nd.contrib.__wrapped__


@pytest.mark.usefixtures("scoped_registry")
def test_ops_registered_later_appear_and_changes_are_seen() -> None:
    register_unary("_linalg_test_neg", _negative, "y = -x", make_zero_grad_nodes)
    register_unary("_contrib_test_neg", _negative, "y = -x", make_zero_grad_nodes)
    assert "test_neg" in dir(nd.linalg)
    np.testing.assert_array_equal(nd.linalg.test_neg(nd.array([1.0])).asnumpy(), [-1])
    np.testing.assert_array_equal(nd.contrib.test_neg(nd.array([2.0])).asnumpy(), [-2])
    assert sym.linalg.test_neg(sym.var("x")).list_arguments() == ["x"]
    first = nd.contrib.test_neg
    nv.registry.register_op("_contrib_test_neg").describe("changed")
    assert nd.contrib.test_neg is not first  # made again after the op changed
    assert "changed" in (nd.contrib.test_neg.__doc__ or "")


def test_internal_still_serves_the_prefixed_ops_by_full_name() -> None:
    got = nd._internal._contrib_isfinite(nd.array([np.inf, 0.0]))
    np.testing.assert_array_equal(got.asnumpy(), [0, 1])


def test_mx_contrib_ndarray_and_symbol_are_the_contrib_namespaces() -> None:
    """MXNet's mx.contrib.ndarray / mx.contrib.symbol (also as imported modules)."""
    import importlib

    import nnvmpy as nv

    assert nv.contrib.ndarray is nv.nd.contrib
    assert nv.contrib.nd is nv.nd.contrib
    assert nv.contrib.symbol is nv.sym.contrib
    assert importlib.import_module("nnvmpy.contrib.ndarray") is nv.nd.contrib
    x = nv.nd.array([1.0, float("inf"), float("nan")])
    assert nv.contrib.ndarray.isfinite(x).asnumpy().tolist() == [1.0, 0.0, 0.0]
