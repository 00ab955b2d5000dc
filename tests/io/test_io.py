"""nv.io: DataDesc, DataBatch, NDArrayIter and ResizeIter against NumPy indexing."""

from __future__ import annotations

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy.base import ParamError


def test_data_desc_fields_batch_axis_and_get_list() -> None:
    desc = nv.io.DataDesc("data", (4, 3), np.float16, "NC")
    assert (desc.name, desc.shape, desc.dtype, desc.layout) == ("data", (4, 3), np.float16, "NC")
    assert nv.io.DataDesc.get_batch_axis("TNC") == 1
    assert nv.io.DataDesc.get_batch_axis(None) == 0
    descs = nv.io.DataDesc.get_list([("a", (2, 5)), ("b", (2,))], [("b", np.int32)])
    assert [(d.name, d.shape, d.dtype) for d in descs] == [
        ("a", (2, 5), np.float32),
        ("b", (2,), np.int32),
    ]


def test_data_desc_replace_is_namedtuples_and_keeps_dtype_and_layout() -> None:
    # MXNet's DataDesc subclasses namedtuple('DataDesc', ['name', 'shape']); its _replace
    # drops dtype and layout (a bug: the copy cannot even be printed); nnvmpy keeps them
    desc = nv.io.DataDesc("data", (4, 3), np.float16, "NC")
    batch8 = desc._replace(shape=(8, 3))
    assert type(batch8) is nv.io.DataDesc
    assert (batch8.name, batch8.shape, batch8.dtype, batch8.layout) == (
        "data", (8, 3), np.float16, "NC"
    )  # fmt: skip
    assert tuple(desc._replace(name="x")) == ("x", (4, 3))
    assert repr(batch8) == "DataDesc[data,(8, 3),float16,NC]"
    assert desc._fields == ("name", "shape")
    assert desc._asdict() == {"name": "data", "shape": (4, 3)}
    with pytest.raises(
        ValueError, match=r"DataDesc._replace: got unexpected field names \['dtype'\]"
    ):
        desc._replace(dtype=np.float32)


def test_data_batch_holds_lists_and_rejects_a_bare_array() -> None:
    x = nv.nd.ones((2, 3))
    batch = nv.io.DataBatch([x], [nv.nd.zeros((2,))], pad=1, index=np.array([0, 1]))
    assert batch.data[0].shape == (2, 3)
    assert batch.label[0].shape == (2,)
    assert batch.pad == 1
    with pytest.raises(ParamError, match=r"DataBatch: data must be a list"):
        nv.io.DataBatch(x)


def test_shuffled_epoch_is_a_permutation_with_labels_kept_aligned() -> None:
    np.random.seed(3)  # noqa: NPY002 - NDArrayIter shuffles with NumPy's global RNG, as MXNet
    x = np.arange(12, dtype=np.float32).reshape(12, 1) * np.array([[1.0, 10.0]], np.float32)
    y = np.arange(12, dtype=np.float32)
    it = nv.io.NDArrayIter(x, y, batch_size=4, shuffle=True)
    rows, labels = [], []
    for batch in it:
        rows.append(batch.data[0].asnumpy())
        labels.append(batch.label[0].asnumpy())
    data, label = np.concatenate(rows), np.concatenate(labels)
    assert sorted(label.tolist()) == y.tolist()
    np.testing.assert_array_equal(data, x[label.astype(np.int64)])
    with pytest.raises(StopIteration):
        it.next()
    it.reset()
    assert sum(1 for _ in it) == 3


def test_list_and_dict_inputs_are_named_and_ordered_by_name() -> None:
    a, b = np.zeros((6, 2), np.float32), np.ones((6, 3), np.float32)
    listed = nv.io.NDArrayIter([a, b], batch_size=3)
    assert [(d.name, d.shape) for d in listed.provide_data] == [
        ("_0_data", (3, 2)),
        ("_1_data", (3, 3)),
    ]
    named = nv.io.NDArrayIter({"z": a, "y": b}, batch_size=2, data_name="ignored")
    assert [d.name for d in named.provide_data] == ["y", "z"]
    first = named.next()
    np.testing.assert_array_equal(first.data[0].asnumpy(), b[:2])
    assert named.provide_label == []


def test_resize_iter_repeats_or_cuts_the_inner_iterator() -> None:
    x = np.arange(6, dtype=np.float32).reshape(6, 1)
    inner = nv.io.NDArrayIter(x, batch_size=2)  # 3 batches per epoch
    longer = nv.io.ResizeIter(inner, 5)
    got = [b.data[0].asnumpy().ravel().tolist() for b in longer]
    want = [x[i : i + 2].ravel().tolist() for i in (0, 2, 4, 0, 2)]
    assert got == want
    longer.reset()
    assert len(list(longer)) == 5
    shorter = nv.io.ResizeIter(nv.io.NDArrayIter(x, batch_size=2), 2)
    assert len(list(shorter)) == 2
    assert shorter.provide_data[0].shape == (2, 1)


def test_bad_arguments_are_named() -> None:
    x = np.zeros((4, 1))
    with pytest.raises(ParamError, match=r"NDArrayIter: batch_size must be positive"):
        nv.io.NDArrayIter(x, batch_size=0)
    with pytest.raises(ParamError, match=r"NDArrayIter: batch_size 5 exceeds the 4 samples"):
        nv.io.NDArrayIter(x, batch_size=5, last_batch_handle="discard")
    with pytest.raises(ParamError, match=r"NDArrayIter: data is required"):
        nv.io.NDArrayIter(None, batch_size=1)
