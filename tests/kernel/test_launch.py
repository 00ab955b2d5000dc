"""kernel.launch: the helpers hand-written kernels share (write modes, axes, row launches)."""

from __future__ import annotations

import device_kernels as dk
import numpy as np
import pytest

from nnvmpy.base import InferError, NNVMError, OpReqType, cpu
from nnvmpy.kernel import launch as L


def test_req_code_maps_every_request():
    assert L.req_code("op", OpReqType.kNullOp) == L.NULL
    assert L.req_code("op", OpReqType.kWriteTo) == L.WRITE
    assert L.req_code("op", OpReqType.kWriteInplace) == L.WRITE
    assert L.req_code("op", "add") == L.ADD
    with pytest.raises(NNVMError, match=r"^myop: "):
        L.req_code("myop", "sideways")


@pytest.mark.parametrize(
    ("shape", "axis", "expected"),
    [((2, 3, 4), 0, (1, 2, 12)), ((2, 3, 4), 1, (2, 3, 4)), ((2, 3, 4), 2, (6, 4, 1))],
)
def test_split_axis(shape, axis, expected):
    assert L.split_axis(shape, axis) == expected
    assert np.prod(expected) == np.prod(shape)


def test_normalize_axis_names_the_op():
    assert L.normalize_axis("softmax", -1, (2, 3)) == 1
    with pytest.raises(
        InferError, match=r"softmax: axis 2 is out of range .* \(2, 3\); expected -2 <= axis < 2"
    ):
        L.normalize_axis("softmax", 2, (2, 3))


def test_run_rows_flattens_and_names_the_op_in_errors():
    x = np.random.default_rng(0).standard_normal((4, 6))
    out = np.empty_like(x)
    L.run_rows(cpu(), "center", dk.poly_map, x.size, out, x, 1.0, 0.0)  # 2-d: passed flat
    np.testing.assert_allclose(out, x * x, rtol=1e-12)
    L.run_rows(cpu(), "center", dk.poly_map, 0, out, x, 1.0, 0.0)  # nothing to do
    with pytest.raises(NNVMError, match=r"^center: poly_map: arg 1 is float16"):
        L.run_rows(cpu(), "center", dk.poly_map, x.size, out, x.astype(np.float16), 1.0, 0.0)


def test_uindex_is_an_unsigned_index():
    assert L.uindex(5) == 5
    assert isinstance(L.uindex(5), np.uint64)
