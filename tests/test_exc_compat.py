"""MXNet's asynchronous failure semantics for ops whose kernel rejects a value.

MXNet's samplers CHECK their parameters in Forward, so `nd.random.normal(0, -1)` returns
at once and the failure is raised by the next wait on what depends on it (asnumpy,
wait_to_read, waitall), once; arrays sharing the failure read normally afterwards.
"""

from __future__ import annotations

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy.base import NNVMError, ParamError

nd = nv.nd


def test_out_of_domain_sampler_returns_and_fails_its_dependents_at_the_wait() -> None:
    a = nd.random.normal(0, 1, (2, 2))
    b = nd.random.normal(0, -1, (2, 2))  # returns: the check runs in the kernel
    c = nd.dot(a, b)  # pushed behind the failed op, skipped, inherits its failure
    with pytest.raises(NNVMError, match=r"_random_normal.*'scale'.*> 0") as err:
        c.asnumpy()
    assert isinstance(err.value.__cause__, ParamError)
    nd.waitall()  # reported once: nothing left to raise
    # float32 sums of two products: near 0 the rounding is absolute, not relative
    np.testing.assert_allclose(nd.dot(a, a).asnumpy(), a.asnumpy() @ a.asnumpy(), atol=1e-6)


def test_rows_of_a_failed_array_share_one_report() -> None:
    a, b = nd.random.normal(0, -1, (2, 2)).copyto(nv.cpu())
    with pytest.raises(NNVMError, match="_random_normal"):
        a.asnumpy()
    assert b.asnumpy().shape == (2,)  # the shared failure was reported by a's wait


@pytest.mark.parametrize(
    ("make", "pattern"),
    [
        (lambda: nd.random.uniform(2, 1, shape=(3,)), r"_random_uniform.*'high'.*>= low"),
        (lambda: nd.random.gamma(-1, 1, shape=(3,)), r"_random_gamma.*'alpha'"),
        (lambda: nd.random.poisson(-1, shape=(3,)), r"_random_poisson.*'lam'"),
        (lambda: nd.random.randint(5, 2, shape=(3,)), r"_random_randint.*'high'"),
        (
            lambda: nd._internal._random_normal_like(nd.ones((3,)), loc=0, scale=-1),
            r"normal_like.*'scale'",
        ),
    ],
)
def test_every_sampler_checks_in_its_kernel(make, pattern) -> None:  # type: ignore[no-untyped-def]
    out = make().copyto(nv.cpu())
    with pytest.raises(NNVMError, match=pattern):
        nd.waitall()
    nd.waitall()  # the failure is reported once
    assert out.shape == (3,)


def test_symbolic_graph_with_a_failing_sampler_raises_at_the_wait() -> None:
    x = nv.sym.Variable("x")
    out = nv.sym.dot(x, nv.sym.random.normal(0, -1, (2, 2)))
    exe = out.bind(nv.cpu(), args={"x": nd.ones((3, 2))})
    outputs = exe.forward()
    with pytest.raises(NNVMError, match="_random_normal"):
        outputs[0].asnumpy()


def test_parse_errors_stay_synchronous() -> None:
    with pytest.raises(ParamError, match=r"_random_uniform.*'dtype'"):
        nd.random.uniform(shape=3, dtype="int32")
