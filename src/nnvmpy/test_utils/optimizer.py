"""Compare two optimizers step for step, as MXNet's test_utils does.

    compare_optimizer(PyReference(lr=0.1), nv.optimizer.SGD(lr=0.1), (3, 4), np.float32)

Both optimizers start from the same random weight and gradient, make their states with
`create_state_multi_precision` and take one `update_multi_precision` step; the states
(before and after) and the weights must agree. With a list of shapes, the second optimizer
updates all weights in one call (its multi-tensor path) and the first one weight at a time.
"""

from __future__ import annotations

import copy
from typing import Any

from ..base import NNVMError
from .compare import assert_almost_equal
from .generate import default_context


def compare_ndarray_tuple(t1: Any, t2: Any, rtol: Any = None, atol: Any = None) -> None:
    """assert_almost_equal on two states: NDArrays or (nested) tuples of them; a None on
    either side (a stateless optimizer, an unused slot) is skipped."""
    if t1 is None or t2 is None:
        return
    if isinstance(t1, tuple | list):  # pairs up to the shorter one, as MXNet's zip does
        for s1, s2 in zip(t1, t2, strict=False):
            compare_ndarray_tuple(s1, s2, rtol, atol)
        return
    assert_almost_equal(t1, t2, rtol=rtol, atol=atol)


def _uniform(shape: Any, dtype: Any) -> Any:
    from nnvmpy import random

    return random.uniform(shape=shape, ctx=default_context(), dtype=dtype)


def _dense_pair(shape: Any, dtype: Any, stype: str, what: str) -> tuple[Any, Any]:
    if stype != "default":
        raise NNVMError(
            f"compare_optimizer: {what} storage type {stype!r} is not supported; nnvmpy "
            "arrays are dense (expected 'default')"
        )
    second = _uniform(shape, dtype)
    return second.copyto(default_context()), second


def compare_optimizer(
    opt1: Any,
    opt2: Any,
    shape: Any,
    dtype: Any,
    w_stype: str = "default",
    g_stype: str = "default",
    rtol: float = 1e-4,
    atol: float = 1e-5,
    compare_states: bool = True,
    ntensors: int = 1,
) -> None:
    """One update step of opt1 and of opt2 from equal weights, gradients and states must
    give equal states and weights (within rtol/atol).

    `shape` is one shape, or a list of `ntensors` shapes for a multi-tensor comparison.
    w_stype / g_stype: storage types of weight and gradient (only 'default' in nnvmpy).
    """
    if not isinstance(shape, list):
        if ntensors != 1:
            raise NNVMError(
                f"compare_optimizer: one shape given, so ntensors must be 1, got {ntensors}"
            )
        w1, w2 = _dense_pair(shape, dtype, w_stype, "weight")
        g1, g2 = _dense_pair(shape, dtype, g_stype, "gradient")
        state1 = opt1.create_state_multi_precision(0, w1)
        state2 = opt2.create_state_multi_precision(0, w2)
        if compare_states:
            compare_ndarray_tuple(state1, state2)
        opt1.update_multi_precision(0, w1, g1, state1)
        opt2.update_multi_precision(0, w2, g2, state2)
        if compare_states:
            compare_ndarray_tuple(state1, state2, rtol=rtol, atol=atol)
        assert_almost_equal(w1, w2, rtol=rtol, atol=atol)
        return
    if len(shape) != ntensors:
        raise NNVMError(
            f"compare_optimizer: expects ntensors ({ntensors}) shapes, got {len(shape)}"
        )
    w1 = tuple(_uniform(s, dtype) for s in shape)
    g1 = tuple(_uniform(s, dtype) for s in shape)
    w2, g2 = copy.deepcopy(w1), copy.deepcopy(g1)
    states2 = [opt2.create_state_multi_precision(0, w) for w in w2]
    opt2.update_multi_precision(list(range(ntensors)), w2, g2, states2)
    for i in range(ntensors):
        state1 = opt1.create_state_multi_precision(i, w1[i])
        opt1.update_multi_precision(i, w1[i], g1[i], state1)
        if compare_states:
            compare_ndarray_tuple(state1, states2[i], rtol, atol)
        compare_ndarray_tuple(w1[i], w2[i], rtol, atol)
