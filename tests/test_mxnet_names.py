"""MXNet's spellings in nv.base and at the top level (MXNetError, mx_real_t, py_str, ...)."""

from __future__ import annotations

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy import base


def test_mxnet_error_is_nnvm_error() -> None:
    assert base.MXNetError is nv.NNVMError is nv.MXNetError
    with pytest.raises(base.MXNetError, match="unknown device type"):
        nv.Context("tpu")
    with pytest.raises(base.MXNetError):  # every documented subclass is caught too
        nv.nd.ones((2,)).reshape((3,))


def test_python_type_shims() -> None:
    assert base.mx_real_t is np.float32
    assert base.py_str(b"caf\xc3\xa9") == "café"
    assert base.py_str("already") == "already"
    assert isinstance(np.float16(1), base.numeric_types)
    assert isinstance(3, base.numeric_types)
    assert isinstance(np.int8(3), base.integer_types)
    assert not isinstance(3.0, base.integer_types)
    assert isinstance("s", base.string_types)
    assert base._as_list(3) == [3]
    assert base._as_list([3]) == [3]
    assert base._as_list((3,)) == [(3,)]


def test_not_implemented_for_symbol_names_the_function() -> None:
    err = base.NotImplementedForSymbol(bool, "bool", 1)
    assert isinstance(err, nv.NNVMError)
    assert str(err) == (
        "Function bool (namely operator 'bool') with arguments (<class 'int'>) is not "
        "implemented for Symbol and only available in NDArray."
    )
    assert str(base.NotImplementedForSymbol("asnumpy")) == (
        "Function asnumpy is not implemented for Symbol and only available in NDArray."
    )


def test_top_level_mxnet_names() -> None:
    assert nv.current_context() == nv.cpu()
    assert nv.cpu_pinned(2) == nv.Context("cpu_pinned", 2)
    for name in ("context", "util", "runtime", "init", "initializer", "engine"):
        assert getattr(nv, name).__name__ == f"nnvmpy.{name}"
