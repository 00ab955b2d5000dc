"""nv.io.CSVIter and DataBatch's text, against MXNet 1.x's documented behaviour.

The expected batches are written out by hand from MXNet's CSVIter docs (round_batch
wraps the last batch around and the next pass starts after the wrapped examples; without
it, padded rows keep the previous batch's contents and every pass restarts).
"""

from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy.base import ParamError

ROWS = np.array([[1, 2, 3], [2, 3, 4], [3, 4, 5], [4, 5, 6]], np.float32)


@pytest.fixture
def csv(tmp_path: Path) -> Path:
    (tmp_path / "data.csv").write_text(
        "".join(",".join(map(str, r)) + "\n" for r in ROWS.astype(int))
    )
    (tmp_path / "label.csv").write_text("10\n20\n30\n40\n")
    return tmp_path


def _passes(it: nv.io.CSVIter, n: int) -> list[list[tuple[list[int], int]]]:
    out = []
    for _ in range(n):
        out.append([([int(v) for v in b.label[0].asnumpy()], b.pad) for b in it])
        it.reset()
    return out


def test_round_batch_wraps_and_the_next_pass_starts_after_the_wrap(csv: Path) -> None:
    it = nv.io.CSVIter(
        data_csv=str(csv / "data.csv"), data_shape=(3,), batch_size=3,
        label_csv=str(csv / "label.csv"),
    )  # fmt: skip
    first = it.next()
    np.testing.assert_array_equal(first.data[0].asnumpy(), ROWS[:3])
    np.testing.assert_array_equal(first.index, [0, 1, 2])
    it.reset()
    assert _passes(it, 3) == [
        [([10, 20, 30], 0), ([40, 10, 20], 2)],  # rows 3, 0, 1: two wrapped from the start
        [([30, 40, 10], 1)],  # starts at row 2, after the two wrapped rows
        [([20, 30, 40], 0)],  # starts at row 1; ends exactly, so the next pass restarts
    ]


def test_without_round_batch_padded_rows_keep_the_previous_batch(csv: Path) -> None:
    it = nv.io.CSVIter(
        data_csv=str(csv / "data.csv"), data_shape=(3,), batch_size=3, round_batch=False,
        label_csv=str(csv / "label.csv"),
    )  # fmt: skip
    assert _passes(it, 2) == [[([10, 20, 30], 0), ([40, 20, 30], 2)]] * 2
    it = nv.io.CSVIter(
        data_csv=str(csv / "data.csv"), data_shape=(3,), batch_size=5, round_batch=False
    )
    batch = it.next()
    np.testing.assert_array_equal(batch.data[0].asnumpy(), np.vstack([ROWS, np.zeros((1, 3))]))
    assert batch.pad == 1


def test_shapes_dtypes_default_labels_and_directories(csv: Path) -> None:
    it = nv.io.CSVIter(
        data_csv=str(csv / "data.csv"), data_shape=(1, 3), batch_size=2, dtype="int64"
    )
    assert [(d.name, d.shape) for d in it.provide_data] == [("data", (2, 1, 3))]
    assert [(d.name, d.shape) for d in it.provide_label] == [("softmax_label", (2,))]
    batch = it.next()
    assert batch.data[0].dtype == np.int64
    assert batch.label[0].dtype == np.int64
    np.testing.assert_array_equal(batch.data[0].asnumpy(), ROWS[:2].reshape(2, 1, 3))
    np.testing.assert_array_equal(batch.label[0].asnumpy(), [0, 0])  # no label_csv: zeros
    assert it.getdata().shape == (2, 1, 3)  # one NDArray, as MXNet's MXDataIter
    (csv / "dir").mkdir()
    (csv / "dir" / "a.csv").write_text("2147483648\n\n")  # exact in int64; blank lines skipped
    (csv / "dir" / "b.csv").write_text("7\n")
    it = nv.io.CSVIter(data_csv=str(csv / "dir"), data_shape=(1,), batch_size=2, dtype="int64")
    np.testing.assert_array_equal(it.next().data[0].asnumpy(), [[2147483648], [7]])


def test_bad_arguments_name_the_problem(csv: Path) -> None:
    data = str(csv / "data.csv")
    with pytest.raises(ParamError, match=r"CSVIter: dtype float64 is not supported"):
        nv.io.CSVIter(data_csv=data, data_shape=(3,), batch_size=2, dtype="float64")
    with pytest.raises(ParamError, match=r"data.csv:1 has 3 values; data_csv expects 4"):
        nv.io.CSVIter(data_csv=data, data_shape=(4,), batch_size=2)
    with pytest.raises(ParamError, match=r"neither a file nor a directory"):
        nv.io.CSVIter(data_csv=str(csv / "missing.csv"), data_shape=(3,), batch_size=2)
    with pytest.raises(ParamError, match=r"batch_size must be a positive int"):
        nv.io.CSVIter(data_csv=data, data_shape=(3,), batch_size=0)


def test_data_batch_text_matches_mxnet() -> None:
    batch = nv.io.DataBatch(data=[nv.nd.ones((2, 3))])
    assert str(batch) == "DataBatch: data shapes: [(2, 3)] label shapes: None"
    batch = nv.io.DataBatch(
        data=[nv.nd.ones((2, 3)), nv.nd.ones((7, 8))], label=[nv.nd.ones((4, 5))]
    )
    assert str(batch) == "DataBatch: data shapes: [(2, 3), (7, 8)] label shapes: [(4, 5)]"


def test_data_desc_is_the_pair_name_shape_with_dtype_and_layout_attributes() -> None:
    desc = nv.io.DataDesc("data", (4, 3), np.float16, "NC")
    name, shape = desc  # MXNet's DataDesc is a (name, shape) namedtuple
    assert (name, shape) == ("data", (4, 3))
    assert (desc.dtype, desc.layout) == (np.float16, "NC")
    assert dict([desc, nv.io.DataDesc("label", (4,))]) == {"data": (4, 3), "label": (4,)}
    assert desc == nv.io.DataDesc("data", (4, 3))  # dtype and layout do not take part
    again = pickle.loads(pickle.dumps(desc))
    assert isinstance(again, nv.io.DataDesc)
    assert (again.name, again.shape, again.dtype, again.layout) == (
        "data",
        (4, 3),
        np.float16,
        "NC",
    )
