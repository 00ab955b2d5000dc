"""simple_bind's new arguments, gradients and auxiliary states read as zeros: they are
filled by one engine push per context (executor/arguments.py), also when the storage pool
hands back blocks that held other values."""

from __future__ import annotations

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy import sym


def _dirty_pool() -> None:
    """Leave freed blocks full of non-zero bytes for the next allocations to reuse."""
    for shape in [(3, 4), (4,), (2, 3, 4, 4), (16,), (3,), (4, 3, 1, 1), (2, 4, 4, 4)]:
        a = nv.nd.ones(shape) * 7
        a.wait_to_read()
        del a


@pytest.mark.parametrize("grad_req", ["write", "add", "null"])
def test_new_arrays_are_zeros_even_on_reused_blocks(grad_req: str) -> None:
    x = sym.var("data")
    y = sym.BatchNorm(sym.Convolution(x, num_filter=4, kernel=(1, 1)), name="bn")
    net = sym.FullyConnected(sym.Flatten(y), num_hidden=3)
    for _ in range(2):
        buffer: dict[str, nv.nd.NDArray] = {}  # arrays it makes join it (bucketing)
        _dirty_pool()
        exe = net.simple_bind(nv.cpu(), grad_req=grad_req, shared_buffer=buffer, data=(2, 3, 4, 4))
        arrays = [*exe.arg_arrays, *exe.aux_arrays, *exe.grad_dict.values()]
        assert len(arrays) == 7 + 2 + (7 if grad_req != "null" else 0)
        for a in arrays:
            np.testing.assert_array_equal(a.asnumpy(), 0)
        assert buffer["data"] is exe.arg_dict["data"]
        exe.forward(is_train=True, data=np.ones((2, 3, 4, 4), np.float32))
        exe.outputs[0].wait_to_read()


def test_other_dtypes_and_scalars_are_zeros() -> None:
    x, w = sym.var("x"), sym.var("w", shape=())
    with nv.util.np_shape():
        y = sym.broadcast_mul(sym.Cast(x, dtype="float16"), sym.Cast(w, dtype="float16"))
        _dirty_pool()
        exe = y.simple_bind(nv.cpu(), type_dict={"x": np.int32}, x=(2, 3), w=())
    assert exe.arg_dict["x"].dtype == np.int32
    assert exe.arg_dict["w"].shape == ()
    for a in [*exe.arg_arrays, *exe.grad_arrays]:
        np.testing.assert_array_equal(a.asnumpy(), 0)
