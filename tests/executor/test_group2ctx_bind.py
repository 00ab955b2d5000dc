"""bind with group2ctx (MXNet's model parallelism): arguments outside a mapped ctx_group
may be bound on any of the executor's contexts; results checked against NumPy formulas."""

from __future__ import annotations

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy import NNVMError

SHAPE = (4, 5)


def _chain() -> nv.sym.Symbol:
    a, b, c = (nv.sym.Variable(n) for n in ("a", "b", "c"))
    with nv.AttrScope(ctx_group="dev1"):
        net = (a + b) * 3.0
    with nv.AttrScope(ctx_group="dev2"):
        net = net + c
    return net


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_argument_bound_on_a_group_context_runs_forward_and_backward(dtype) -> None:
    rng = np.random.default_rng(0)
    a, b, c, head = (rng.standard_normal(SHAPE).astype(dtype) for _ in range(4))
    ctxs = [nv.cpu(0), nv.cpu(0), nv.cpu(1)]  # c lives where the group that reads it runs
    args = [nv.nd.array(x, ctx=ctx, dtype=dtype) for x, ctx in zip((a, b, c), ctxs)]
    grads = [nv.nd.zeros(SHAPE, ctx=ctx, dtype=dtype) for ctx in ctxs]
    exe = _chain().bind(
        nv.cpu(0), args=args, args_grad=grads, group2ctx={"dev1": nv.cpu(0), "dev2": nv.cpu(1)}
    )
    assert "c" in exe.debug_str()
    exe.forward(is_train=True)
    np.testing.assert_allclose(exe.outputs[0].asnumpy(), (a + b) * 3 + c, rtol=1e-6)
    exe.backward([nv.nd.array(head, dtype=dtype)])
    want = [3 * head, 3 * head, head]
    for g, w, ctx in zip(grads, want, ctxs):
        assert g.context == ctx
        np.testing.assert_allclose(g.asnumpy(), w, rtol=1e-6)


def test_argument_off_every_executor_context_is_refused() -> None:
    args = [nv.nd.zeros(SHAPE), nv.nd.zeros(SHAPE), nv.nd.zeros(SHAPE, ctx=nv.cpu(5))]
    with pytest.raises(NNVMError, match=r"argument 'c' is on cpu\(5\).*group2ctx"):
        _chain().bind(nv.cpu(0), args=args, group2ctx={"dev1": nv.cpu(0), "dev2": nv.cpu(1)})


def test_without_group2ctx_every_argument_is_on_the_executor_context() -> None:
    args = [nv.nd.zeros(SHAPE), nv.nd.zeros(SHAPE), nv.nd.zeros(SHAPE, ctx=nv.cpu(1))]
    with pytest.raises(NNVMError, match=r"argument 'c' is on cpu\(1\), the executor on cpu\(0\)"):
        _chain().bind(nv.cpu(0), args=args)


def test_argument_in_a_mapped_group_must_be_on_that_group_context() -> None:
    with nv.AttrScope(ctx_group="dev2"):
        x = nv.sym.Variable("x")
    y = x * 2.0
    msg = r"argument 'x' is on cpu\(0\), its ctx_group's context on cpu\(1\)"
    with pytest.raises(NNVMError, match=msg):
        y.bind(nv.cpu(0), args=[nv.nd.zeros(SHAPE)], group2ctx={"dev2": nv.cpu(1)})


def test_group_on_another_device_type_is_refused() -> None:
    x = nv.sym.Variable("x")
    with pytest.raises(NNVMError, match=r"group2ctx maps \{'dev2': 'gpu\(0\)'\} off"):
        (x * 2.0).simple_bind(nv.cpu(0), x=SHAPE, group2ctx={"dev2": nv.gpu(0)})
