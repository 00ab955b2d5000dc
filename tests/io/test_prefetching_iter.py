"""nv.io.PrefetchingIter: background prefetching that yields exactly the wrapped iterators'
batches, merged in order. Reference: fresh, identical NDArrayIters read directly."""

from __future__ import annotations

import gc
import threading
from typing import Any

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy.base import NNVMError, ParamError

A = np.arange(20, dtype=np.float32).reshape(10, 2)
B = -np.arange(30, dtype=np.float32).reshape(10, 3)
LA, LB = np.arange(10, dtype=np.float32), 2 * np.arange(10, dtype=np.float32)


def _iters(shuffle: bool = False) -> list[nv.io.NDArrayIter]:
    return [
        nv.io.NDArrayIter(A, LA, batch_size=4, shuffle=shuffle),
        nv.io.NDArrayIter({"b": B}, {"lb": LB}, batch_size=4, shuffle=shuffle),
    ]


def _arrays(batch: Any) -> tuple[list[np.ndarray], list[np.ndarray], int]:
    return [d.asnumpy() for d in batch.data], [lb.asnumpy() for lb in batch.label], batch.pad


def _direct(iters: list[nv.io.NDArrayIter]) -> list[tuple[Any, Any, int]]:
    """What the iterators yield read one after the other, merged by hand."""
    out = []
    for batches in zip(*iters):
        arrays = [_arrays(b) for b in batches]
        out.append(
            ([d for a in arrays for d in a[0]], [lb for a in arrays for lb in a[1]], arrays[0][2])
        )
    return out


def _assert_same(got: list[Any], want: list[Any]) -> None:
    assert len(got) == len(want)
    for (gd, gl, gp), (wd, wl, wp) in zip(got, want):
        assert gp == wp
        for g, w in zip(gd + gl, wd + wl, strict=True):
            np.testing.assert_array_equal(g, w)


def test_yields_the_wrapped_batches_merged_in_order_every_epoch() -> None:
    it = nv.io.PrefetchingIter(_iters())
    want = _direct(_iters())
    assert [b[2] for b in want] == [0, 0, 2]  # the last batch is padded
    for _ in range(3):
        _assert_same([_arrays(b) for b in it], want)
        it.reset()
    it.close()


def test_shuffled_iterators_give_the_same_batches_as_read_directly() -> None:
    np.random.seed(5)  # noqa: NPY002 - NDArrayIter shuffles with NumPy's global RNG, as MXNet
    it = nv.io.PrefetchingIter(_iters(shuffle=True))
    got = [_arrays(b) for b in it]
    np.random.seed(5)  # noqa: NPY002
    _assert_same(got, _direct(_iters(shuffle=True)))
    it.close()


def test_provide_data_and_label_are_concatenated_and_renamed() -> None:
    it = nv.io.PrefetchingIter(
        _iters(),
        rename_data=[{"data": "a"}, {"b": "b2"}],
        rename_label=[{"softmax_label": "la"}, {}],  # names left out keep their own
    )
    assert [(d.name, d.shape) for d in it.provide_data] == [("a", (4, 2)), ("b2", (4, 3))]
    assert [(d.name, d.shape) for d in it.provide_label] == [("la", (4,)), ("lb", (4,))]
    assert it.batch_size == 4
    batch = it.next()
    assert [d.name for d in batch.provide_data] == ["a", "b2"]
    assert [d.name for d in batch.provide_label] == ["la", "lb"]
    assert it.getpad() == 0
    assert it.getindex() is None
    np.testing.assert_array_equal(it.getdata()[1].asnumpy(), B[:4])
    np.testing.assert_array_equal(it.getlabel()[0].asnumpy(), LA[:4])
    it.close()


def test_one_iterator_and_iter_next_after_the_end() -> None:
    it = nv.io.PrefetchingIter(nv.io.NDArrayIter(A, batch_size=5))
    assert it.iter_next()
    assert it.iter_next()
    assert not it.iter_next()
    assert not it.iter_next()  # stays at the end until reset
    with pytest.raises(StopIteration):
        it.next()
    it.reset()
    np.testing.assert_array_equal(it.next().data[0].asnumpy(), A[:5])
    it.close()


def test_a_module_trains_from_a_prefetching_iter() -> None:
    x = np.random.default_rng(0).normal(size=(40, 3)).astype(np.float32)
    y = (x[:, 0] > 0).astype(np.float32)
    net = nv.sym.SoftmaxOutput(
        nv.sym.FullyConnected(nv.sym.Variable("data"), num_hidden=2, name="fc"), name="softmax"
    )
    mod = nv.mod.Module(net)
    train = nv.io.PrefetchingIter(nv.io.NDArrayIter(x, y, batch_size=10))
    mod.fit(train, num_epoch=15, optimizer_params={"learning_rate": 0.5})
    ((_, acc),) = mod.score(train, "acc")
    assert acc > 0.9
    train.close()


class _Failing(nv.io.DataIter):
    provide_data = [nv.io.DataDesc("data", (1,))]
    provide_label: list[Any] = []

    def reset(self) -> None:
        pass

    def next(self) -> nv.io.DataBatch:
        raise OSError("disk gone")


def test_errors_of_the_wrapped_iterator_reach_the_consumer() -> None:
    it = nv.io.PrefetchingIter(_Failing())
    with pytest.raises(OSError, match="disk gone"):
        it.next()
    it.close()


def test_iterators_of_different_lengths_or_pads_raise() -> None:
    short = nv.io.PrefetchingIter(
        [nv.io.NDArrayIter(A, batch_size=5), nv.io.NDArrayIter(A[:5], batch_size=5)]
    )
    short.next()
    with pytest.raises(NNVMError, match=r"iterators \[1\] ended while the others"):
        short.next()
    short.close()
    pads = nv.io.PrefetchingIter(
        [nv.io.NDArrayIter(A, batch_size=4), nv.io.NDArrayIter(A[:9], batch_size=4)]
    )
    pads.next()
    pads.next()
    with pytest.raises(NNVMError, match=r"different pads \[2, 3\]"):
        pads.next()
    pads.close()


def test_bad_arguments_give_named_errors() -> None:
    with pytest.raises(ParamError, match=r"PrefetchingIter: iters is empty"):
        nv.io.PrefetchingIter([])
    with pytest.raises(ParamError, match=r"iters\[0\] is a ndarray, not a DataIter"):
        nv.io.PrefetchingIter(A)
    with pytest.raises(ParamError, match=r"rename_data must be a list of one dict per iterator"):
        nv.io.PrefetchingIter(_iters(), rename_data=[{"data": "x"}])
    with pytest.raises(ParamError, match=r"rename_label\[1\] renames \['nope'\]"):
        nv.io.PrefetchingIter(_iters(), rename_label=[{}, {"nope": "x"}])
    with pytest.raises(NNVMError, match=r"PrefetchingIter.getdata: no current batch"):
        nv.io.PrefetchingIter(_iters()).getdata()


def test_close_stops_the_threads() -> None:
    it = nv.io.PrefetchingIter(_iters())
    threads = [w.thread for w in it._workers]
    assert all(t.is_alive() for t in threads)
    it.next()
    it.close()
    for t in threads:
        t.join(timeout=5)
    assert not any(t.is_alive() for t in threads)
    assert not [t for t in threading.enumerate() if t in threads]


def test_dropping_the_iterator_stops_its_threads() -> None:
    it = nv.io.PrefetchingIter(_iters())
    threads = [w.thread for w in it._workers]
    del it  # the threads hold only their workers, so nothing keeps the iterator alive
    gc.collect()
    for t in threads:
        t.join(timeout=5)
    assert not any(t.is_alive() for t in threads)
