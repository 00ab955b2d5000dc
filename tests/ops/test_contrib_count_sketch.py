"""count_sketch: MXNet's documented example, its GPU test (check_countsketch: forward and
backward against loops), the symbolic shapes and the errors. MXNet 1.9.1 has no CPU kernel
for it, so the spec is its docs and GPU test."""

from __future__ import annotations

import numpy as np
import pytest

import nnvmpy as nv


def test_documented_example() -> None:
    x = nv.nd.array([[1.2, 2.5, 3.4], [3.2, 5.7, 6.6]])
    out = nv.nd.contrib.count_sketch(
        data=x, h=nv.nd.array([[0, 3, 4]]), s=nv.nd.array([[1, -1, 1]]), out_dim=5
    )
    want = [[1.2, 0, 0, -2.5, 3.4], [3.2, 0, 0, -5.7, 6.6]]
    np.testing.assert_allclose(out.asnumpy(), want, rtol=1e-6)


def test_colliding_buckets_add_up() -> None:
    x = nv.nd.array([[1.0, 2.0, 4.0]])
    out = nv.nd.contrib.count_sketch(x, nv.nd.array([2, 2, 0]), nv.nd.array([1, -1, 1]), out_dim=3)
    np.testing.assert_array_equal(out.asnumpy(), [[4.0, 0.0, -1.0]])


def test_mxnet_check_countsketch(ctx: nv.Context) -> None:
    rng = np.random.default_rng(5)
    n, in_dim, out_dim = 17, 45, 11
    x = rng.uniform(-10, 10, (n, in_dim))
    h = rng.integers(0, out_dim, (1, in_dim))
    s = rng.integers(0, 2, (1, in_dim)) * 2 - 1.0
    sym = nv.sym.contrib.count_sketch(
        data=nv.sym.var("data"), h=nv.sym.var("h"), s=nv.sym.var("s"), out_dim=out_dim
    )
    want = np.zeros((n, out_dim))
    for i in range(n):
        for j in range(in_dim):
            want[i, h[0, j]] += x[i, j] * s[0, j]
    location = {"data": x, "h": h, "s": s}
    nv.test_utils.check_symbolic_forward(sym, location, [want], rtol=1e-3, atol=1e-5, ctx=ctx)
    dy = rng.normal(-3, 3, (n, out_dim))
    dx = np.array([[dy[i, h[0, j]] * s[0, j] for j in range(in_dim)] for i in range(n)])
    nv.test_utils.check_symbolic_backward(
        sym, location, [dy], {"data": dx}, rtol=1e-3, atol=1e-5, ctx=ctx,
        grad_req={"data": "write", "h": "null", "s": "null"},
    )  # fmt: skip


def test_symbolic_shapes_and_errors() -> None:
    s = nv.sym.contrib.count_sketch(nv.sym.var("data"), nv.sym.var("h"), nv.sym.var("s"), out_dim=4)
    assert s.infer_shape(data=(3, 5)) == ([(3, 5), (1, 5), (1, 5)], [(3, 4)], [])
    with pytest.raises(nv.NNVMError, match="_contrib_count_sketch: input 'h' has shape \\(1, 4\\)"):
        s.infer_shape(data=(3, 5), h=(1, 4))
    with pytest.raises(nv.NNVMError, match="out_dim"):
        nv.nd.contrib.count_sketch(nv.nd.ones((2, 3)), nv.nd.zeros((1, 3)), nv.nd.ones((1, 3)))
    bad = nv.nd.contrib.count_sketch(
        nv.nd.ones((2, 3)), nv.nd.array([[0, 3, 5]]), nv.nd.ones((1, 3)), out_dim=5
    )
    with pytest.raises(nv.NNVMError, match=r"h\[2\] = 5.0 is out of range for out_dim=5"):
        bad.asnumpy()
    with pytest.raises(nv.NNVMError, match="input 'h' has dtype int32"):
        nv.nd.contrib.count_sketch(
            nv.nd.ones((2, 3)), nv.nd.zeros((1, 3), dtype=np.int32), nv.nd.ones((1, 3)), out_dim=2
        )
