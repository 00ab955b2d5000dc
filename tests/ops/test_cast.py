"""Cast and copies with bool arrays (kernels have no bool type: bools travel as bytes)."""

from __future__ import annotations

import numpy as np
import pytest

import nnvmpy as nv


@pytest.mark.parametrize("src", [np.float32, np.float64, np.int32, np.uint8])
def test_cast_to_bool_is_nonzero_as_numpy(ctx: nv.Context, src: type) -> None:
    values = np.array([0, 1, 2, 3, 0], dtype=src) * (1 if src == np.uint8 else -1)
    if np.issubdtype(src, np.floating):
        values = np.append(values, [np.nan, -0.0]).astype(src)
    got = nv.nd.array(values, ctx=ctx, dtype=src).astype("bool")
    assert got.dtype == np.bool_
    np.testing.assert_array_equal(got.asnumpy(), values.astype(bool))


def test_bool_arrays_copy_and_cast_back(ctx: nv.Context) -> None:
    flags = np.array([True, False, True])
    x = nv.nd.array(flags, ctx=ctx, dtype="bool")
    y = nv.nd.zeros((3,), ctx=ctx, dtype="bool")
    y[:] = x  # _copy of bool
    np.testing.assert_array_equal(y.asnumpy(), flags)
    np.testing.assert_array_equal(x.astype("float32").asnumpy(), [1.0, 0.0, 1.0])
    np.testing.assert_array_equal(nv.nd.identity(x).asnumpy(), flags)


def test_symbolic_cast_to_bool_binds_and_differentiates() -> None:
    """Executor arguments of bool dtype are assigned through _copy (a fuzz finding)."""
    s = nv.sym.Cast(nv.sym.Variable("d"), dtype="bool")
    exe = s.simple_bind(nv.cpu(), d=(3,))
    exe.arg_dict["d"][:] = np.array([0.0, 1.0, 2.0])
    np.testing.assert_array_equal(exe.forward(is_train=True)[0].asnumpy(), [False, True, True])
    exe.backward([np.ones(3, bool)])
    np.testing.assert_array_equal(exe.grad_dict["d"].asnumpy(), [1.0, 1.0, 1.0])
