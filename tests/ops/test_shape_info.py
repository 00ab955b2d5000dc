"""shape_array, size_array, reshape_like and cast beyond the op table, and `Custom` being a
registry op from `import nnvmpy` on."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import nnvmpy as nv

nd = nv.nd


def still_works() -> None:
    np.testing.assert_array_equal(nd.shape_array(nd.ones((2, 5))).asnumpy(), [2, 5])


@pytest.mark.parametrize("op", ["shape_array", "size_array"])
def test_shape_ops_have_zero_gradients(op: str, ctx: nv.Context) -> None:
    x = nv.sym.Variable("x")
    exe = getattr(nv.sym, op)(x).simple_bind(ctx, x=(3, 1, 4))
    exe.grad_dict["x"][:] = 7
    exe.forward(is_train=True, x=np.ones((3, 1, 4)))
    exe.backward([nd.ones(exe.outputs[0].shape, ctx=ctx, dtype=np.int64)])
    want = [3, 1, 4] if op == "shape_array" else [12]
    np.testing.assert_array_equal(exe.outputs[0].asnumpy(), want)
    assert exe.outputs[0].dtype == np.int64
    np.testing.assert_array_equal(exe.grad_dict["x"].asnumpy(), 0)


def test_reshape_like_keeps_lhs_dtype() -> None:
    # MXNet's test_reshape_like_different_types: rhs lends only its shape
    z = nd.reshape_like(nd.zeros((2, 3)), nd.array([[1, 2], [3, 4], [5, 6]]).astype("int32"))
    assert z.dtype == np.float32
    np.testing.assert_array_equal(z.asnumpy(), np.zeros((3, 2)))


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({}, "has 6 elements but input 'lhs' has 8"),
        ({"lhs_begin": 2, "lhs_end": 1}, "'lhs_begin'=2 and 'lhs_end'=1"),
        ({"rhs_begin": 0, "rhs_end": 5}, "'rhs_begin'=0 and 'rhs_end'=5"),
    ],
)
def test_reshape_like_bad_ranges(params: dict, match: str) -> None:
    with pytest.raises(nv.InferError, match=match):
        nd.reshape_like(nd.ones((2, 4)), nd.ones((2, 3)), **params)
    still_works()


def test_reshape_like_gradient_reaches_lhs_only(ctx: nv.Context) -> None:
    s = nv.sym.reshape_like(nv.sym.Variable("lhs"), nv.sym.Variable("rhs"))
    exe = s.simple_bind(ctx, lhs=(6,), rhs=(2, 3))
    exe.forward(is_train=True, lhs=np.arange(6), rhs=np.ones((2, 3)))
    dy = np.arange(6).reshape(2, 3) * 2.0
    exe.backward([nd.array(dy, ctx=ctx)])
    np.testing.assert_array_equal(exe.grad_dict["lhs"].asnumpy(), dy.reshape(6))
    np.testing.assert_array_equal(exe.grad_dict["rhs"].asnumpy(), 0)


def test_cast_is_an_alias_of_cast() -> None:
    x = nd.array([1.7, -2.2, 3.0])
    np.testing.assert_array_equal(nd.cast(x, dtype="int32").asnumpy(), [1, -2, 3])
    s = nv.sym.cast(nv.sym.Variable("x"), dtype="float16")
    assert nv.sym.load_json(s.tojson()).infer_type(x=np.float32)[1] == [np.float16]
    with pytest.raises(nv.ParamError, match="Cast: parameter 'dtype'"):  # MXNet names Cast too
        nd.cast(x, dtype="float17")
    still_works()


def test_custom_is_registered_on_import() -> None:
    code = (
        "import nnvmpy\n"
        "from nnvmpy.registry import Op\n"
        "op = Op.get('Custom')\n"
        "assert op.source.startswith('nnvmpy/operator/custom.py'), op.source\n"
        "assert 'Custom' in dir(nnvmpy.nd) and 'Custom' in dir(nnvmpy.sym)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
