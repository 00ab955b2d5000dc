"""NDArrayIter's dtypes as MXNet 1.9.1's: NumPy (and list) data is read as float32, as
nd.array reads it, while an NDArray keeps its own dtype."""

from __future__ import annotations

import numpy as np
import pytest

import nnvmpy as nv


@pytest.mark.parametrize("dtype", [np.int64, np.float64, np.float16])
def test_numpy_data_and_label_become_float32(dtype):
    x = np.arange(12).reshape(6, 2).astype(dtype)
    it = nv.io.NDArrayIter(x, x[:, 0], batch_size=3, label_name="lab")
    assert [np.dtype(d.dtype) for d in it.provide_data + it.provide_label] == [np.float32] * 2
    batch = next(iter(it))
    assert batch.data[0].dtype == np.float32
    np.testing.assert_array_equal(batch.data[0].asnumpy(), x[:3].astype(np.float32))


def test_ndarray_data_keeps_its_dtype():
    x = nv.nd.array(np.arange(6).reshape(3, 2), dtype="int32")
    it = nv.io.NDArrayIter({"a": x, "b": np.ones((3, 1))}, batch_size=1)
    assert {d.name: np.dtype(d.dtype) for d in it.provide_data} == {
        "a": np.int32,
        "b": np.float32,
    }
