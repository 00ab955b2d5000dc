"""NDArrayIter(layout=...): the batch axis is where 'N' is in the layout (MXNet's rule).

References: NumPy slices of the same arrays along that axis. For 'TNC' nnvmpy counts,
pads, rolls over and shuffles along axis 1 (MXNet 1.9.1 counts along axis 0, so it
agrees only when the two lengths are equal; see NDArrayIter's docstring).
"""

from __future__ import annotations

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy.base import ParamError

T, N, C = 3, 5, 2
X = np.arange(T * N * C, dtype=np.float32).reshape(T, N, C)  # (time, batch, channel)
Y = np.arange(T * N, dtype=np.float32).reshape(T, N) * 10


def _epoch(it: nv.io.NDArrayIter) -> list[tuple[np.ndarray, np.ndarray, int]]:
    out = [(b.data[0].asnumpy(), b.label[0].asnumpy(), b.pad) for b in it]
    it.reset()
    return out


def _check(batches: list[tuple[np.ndarray, np.ndarray, int]], rows: list[list[int]]) -> None:
    """Each batch is X[:, rows] and Y[:, rows] for its sample indices."""
    assert len(batches) == len(rows)
    for (data, label, _), idx in zip(batches, rows):
        np.testing.assert_array_equal(data, X[:, idx])
        np.testing.assert_array_equal(label, Y[:, idx])


def test_tnc_batches_along_axis_1_with_the_batch_size_there() -> None:
    it = nv.io.NDArrayIter(X, Y, batch_size=2, layout="TNC", last_batch_handle="pad")
    assert [(d.name, d.shape, d.layout) for d in it.provide_data] == [("data", (T, 2, C), "TNC")]
    assert [(d.name, d.shape, d.layout) for d in it.provide_label] == [
        ("softmax_label", (T, 2), "TNC")
    ]
    batches = _epoch(it)
    _check(batches, [[0, 1], [2, 3], [4, 0]])  # all N = 5 samples, the last one padded
    assert [pad for *_, pad in batches] == [0, 0, 1]


def test_tnc_discard_and_roll_over_follow_axis_1() -> None:
    discard = nv.io.NDArrayIter(X, Y, batch_size=2, layout="TNC", last_batch_handle="discard")
    _check(_epoch(discard), [[0, 1], [2, 3]])
    roll = nv.io.NDArrayIter(X, Y, batch_size=2, layout="TNC", last_batch_handle="roll_over")
    _check(_epoch(roll), [[0, 1], [2, 3]])
    second = _epoch(roll)  # sample 4 starts the next epoch: 6 rows, 3 full batches
    _check(second, [[4, 0], [1, 2], [3, 4]])
    assert [pad for *_, pad in second] == [1, 0, 0]  # MXNet reports the carried rows as pad


def test_tnc_shuffle_permutes_samples_not_time_steps() -> None:
    np.random.seed(0)  # noqa: NPY002 - NDArrayIter shuffles with NumPy's global RNG, as MXNet
    it = nv.io.NDArrayIter(X, Y, batch_size=5, shuffle=True, layout="TNC")
    ((data, label, _),) = _epoch(it)
    order = [int(v) for v in data[0, :, 0] // C]  # sample index of each column
    assert sorted(order) == list(range(N))
    np.testing.assert_array_equal(data, X[:, order])
    np.testing.assert_array_equal(label, Y[:, order])


def test_other_layouts_put_the_batch_where_n_is() -> None:
    x = np.arange(2 * 3 * 7, dtype=np.float32).reshape(2, 3, 7)  # 'CTN': batch on axis 2
    it = nv.io.NDArrayIter(x, batch_size=4, layout="CTN", last_batch_handle="discard")
    assert it.provide_data[0].shape == (2, 3, 4)
    ((data, _, _),) = [(b.data[0].asnumpy(), None, b.pad) for b in it]
    np.testing.assert_array_equal(data, x[:, :, :4])


def test_default_layout_pads_even_past_twice_the_data() -> None:
    x = np.arange(4, dtype=np.float32).reshape(2, 2)
    it = nv.io.NDArrayIter(x, batch_size=5, last_batch_handle="pad")
    (batch,) = list(it)
    np.testing.assert_array_equal(batch.data[0].asnumpy(), x[[0, 1, 0, 1, 0]])
    assert batch.pad == 3
    assert it.provide_data[0].layout == "NCHW"


def test_bad_layouts_give_named_errors() -> None:
    with pytest.raises(ParamError, match=r"NDArrayIter: layout must name the batch axis 'N'"):
        nv.io.NDArrayIter(X, layout="TC")
    with pytest.raises(ParamError, match=r"batches along axis 1, but 'softmax_label' has shape"):
        nv.io.NDArrayIter(X, np.zeros(N), layout="TNC")
    with pytest.raises(ParamError, match=r"the same size on axis 1 \('TNC'\)"):
        nv.io.NDArrayIter(X, np.zeros((T, N + 1)), layout="TNC")
