"""MXNet's ctypes surface (nnvmpy.capi, re-exported by nnvmpy.base): C strings, handles,
check_call and the _LIB entry points, used as MXNet's users call them."""

from __future__ import annotations

import ctypes
import gc

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy.base import (
    _LIB,
    NDArrayHandle,
    SymbolHandle,
    c_array,
    c_str,
    c_str_array,
    check_call,
    mx_uint,
)
from nnvmpy.capi import MissingEntryPoint


def test_c_strings_hold_utf8_bytes() -> None:
    assert c_str("exp").value == b"exp"
    arr = c_str_array(["exp", "sin", "\u00e9"])
    assert [arr[i] for i in range(3)] == [b"exp", b"sin", "\u00e9".encode()]
    assert list(c_array(mx_uint, [3, 1, 2])) == [3, 1, 2]


def test_check_call_passes_zero_and_refuses_other_codes() -> None:
    check_call(0)
    with pytest.raises(nv.NNVMError, match="returned -1"):
        check_call(-1)


def test_a_symbol_handle_names_the_symbol_while_it_lives() -> None:
    s = nv.sym.exp(nv.sym.Variable("x"), name="e")
    same = nv.sym.Symbol(s.handle)
    assert same.tojson() == s.tojson()
    stale = ctypes.c_void_p(s.handle.value)
    del s, same
    gc.collect()
    with pytest.raises(nv.NNVMError, match=r"Symbol\(handle\): .* not a handle of a live Symbol"):
        nv.sym.Symbol(stale)


def test_an_empty_or_foreign_handle_is_refused() -> None:
    with pytest.raises(nv.NNVMError, match="not a handle"):
        nv.sym.Symbol(SymbolHandle())
    arr = nv.nd.ones((2,))
    with pytest.raises(nv.NNVMError, match="not a handle of a live Symbol"):
        nv.sym.Symbol(ctypes.c_void_p(id(arr)))


def test_missing_entry_points_name_the_ones_there_are() -> None:
    assert not hasattr(_LIB, "MXNDArrayCreate")
    with pytest.raises(
        MissingEntryPoint, match=r"_LIB\.MXNDArrayCreate: .*MXBuildSubgraphByOpNames"
    ):
        _LIB.MXNDArrayCreate()
    assert hasattr(_LIB, "MXSetSubgraphPropertyOpNames")


def test_bad_arguments_are_refused_with_the_entry_point_named() -> None:
    with pytest.raises(nv.NNVMError, match="MXSetSubgraphPropertyOpNames: expected a C string"):
        _LIB.MXSetSubgraphPropertyOpNames(c_str("default"), mx_uint(1), [42])
    s = nv.sym.exp(nv.sym.Variable("x"))
    with pytest.raises(nv.NNVMError, match=r"MXBuildSubgraphByOpNames: the output argument"):
        _LIB.MXBuildSubgraphByOpNames(
            s.handle, c_str("default"), mx_uint(1), c_str_array(["exp"]), 7
        )


def _from_capsule_through_the_c_api(capsule: object) -> nv.nd.NDArray:
    """The DLPack import recipe written for MXNet before nd.from_dlpack existed."""
    name, used = c_str("dltensor"), c_str("used_dltensor")
    obj = ctypes.py_object(capsule)
    assert ctypes.pythonapi.PyCapsule_IsValid(obj, name)
    pointer = ctypes.c_void_p(ctypes.pythonapi.PyCapsule_GetPointer(obj, name))
    handle = NDArrayHandle()
    check_call(_LIB.MXNDArrayFromDLPack(pointer, ctypes.byref(handle)))
    ctypes.pythonapi.PyCapsule_SetName(obj, used)
    ctypes.pythonapi.PyCapsule_SetDestructor(obj, None)
    return nv.nd.NDArray(handle=handle)


def test_an_ndarray_from_a_dlpack_pointer_shares_the_memory() -> None:
    x = nv.nd.array(np.arange(6, dtype=np.float32).reshape(2, 3))
    z = _from_capsule_through_the_c_api(nv.nd.to_dlpack_for_write(x))
    np.testing.assert_array_equal(z.asnumpy(), x.asnumpy())
    z[:] = 7.0
    np.testing.assert_array_equal(x.asnumpy(), np.full((2, 3), 7.0, np.float32))
    del z
    gc.collect()  # the tensor's deleter runs once, with the imported array
    np.testing.assert_array_equal((x + 1).asnumpy(), np.full((2, 3), 8.0, np.float32))


def test_bad_dlpack_pointers_and_handles_are_refused() -> None:
    with pytest.raises(nv.NNVMError, match="MXNDArrayFromDLPack: expected a DLManagedTensor"):
        _LIB.MXNDArrayFromDLPack(ctypes.c_void_p(None), ctypes.byref(NDArrayHandle()))
    with pytest.raises(nv.NNVMError, match=r"NDArray\(handle\): .*not a handle of a live NDArray"):
        nv.nd.NDArray(handle=ctypes.c_void_p(12345))
    with pytest.raises(nv.NNVMError, match="NDArray: give its storage chunk, or handle="):
        nv.nd.NDArray()
