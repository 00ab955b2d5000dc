"""nv.io.PrefetchingIter: reads the next batch of other iterators in background threads.

Each wrapped iterator gets one thread that fetches its next batch as soon as the current
one has been taken, so loading overlaps the training step (at the cost of one batch of
memory per iterator). The batches of all the iterators are merged into one DataBatch:
their data lists and label lists concatenated in order, with the names of
`provide_data` / `provide_label` renamed per iterator by `rename_data` / `rename_label`:

    it = nv.io.PrefetchingIter([it_a, it_b], rename_data=[{"data": "a"}, {"data": "b"}])

The iterators must yield the same number of batches with the same pad. Where MXNet 1.9.1
differs: an exception raised by a wrapped iterator is re-raised by next() instead of
leaving the consumer waiting forever; a rename map may leave names out (they keep theirs)
but may not name what its iterator does not provide; renamed descriptions keep their
layout; a merged batch keeps the first batch's bucket_key, and its provide_data /
provide_label are the batches' own (an iterator's, when a batch has none). close()
stops the threads; an iterator nobody references stops them too.
"""

from __future__ import annotations

import contextlib
import threading
from typing import Any

from ..base import NNVMError, ParamError
from . import DataBatch, DataDesc, DataIter


class _Prefetcher:
    """One wrapped iterator and the thread that fetches its next batch.

    The thread holds only this object (not the PrefetchingIter), so dropping the
    PrefetchingIter lets its __del__ stop the threads.
    """

    def __init__(self, data_iter: Any, index: int) -> None:
        self.data_iter = data_iter
        self.batch: Any = None  # the fetched batch; None at the end of the data
        self.error: BaseException | None = None
        self.running = True
        self.wanted = threading.Event()  # set: fetch the next batch
        self.ready = threading.Event()  # set: `batch` (or `error`) is there to take
        self.wanted.set()
        self.thread = threading.Thread(
            target=self._run, name=f"PrefetchingIter-{index}", daemon=True
        )
        self.thread.start()

    def _run(self) -> None:
        while True:
            self.wanted.wait()
            self.wanted.clear()  # cleared before fetching: a close() meanwhile is not lost
            if not self.running:
                return
            try:
                self.batch, self.error = self.data_iter.next(), None
            except StopIteration:
                self.batch, self.error = None, None
            except BaseException as e:  # re-raised in the consumer's thread by take()
                self.batch, self.error = None, e
            self.ready.set()

    def take(self) -> Any:
        """The fetched batch (None at the end), once the thread has it."""
        self.ready.wait()
        if self.error is not None:
            raise self.error
        return self.batch

    def fetch_next(self) -> None:
        """Let the thread fetch the batch after the one just taken."""
        self.ready.clear()
        self.wanted.set()

    def reset(self) -> None:
        self.ready.wait()  # no fetch in flight while the iterator resets
        self.data_iter.reset()
        self.error = None
        self.fetch_next()

    def close(self) -> None:
        self.running = False
        self.wanted.set()
        if self.thread is not threading.current_thread():
            self.thread.join(timeout=10)


def _renamed(descs: Any, rename: dict[str, str] | None) -> list[DataDesc]:
    out = []
    for d in descs or []:
        d = d if isinstance(d, DataDesc) else DataDesc(d[0], tuple(d[1]))
        name = rename.get(d.name, d.name) if rename else d.name
        out.append(DataDesc(name, d.shape, d.dtype, d.layout))
    return out


def _check_renames(rename: Any, iters: list[Any], what: str) -> None:
    if rename is None:
        return
    if not isinstance(rename, list | tuple) or len(rename) != len(iters):
        raise ParamError(
            f"PrefetchingIter: {what} must be a list of one dict per iterator "
            f"({len(iters)}), got {rename!r:.80}"
        )
    attr = "provide_data" if what == "rename_data" else "provide_label"
    for i, (mapping, it) in enumerate(zip(rename, iters)):
        if not isinstance(mapping, dict):
            raise ParamError(f"PrefetchingIter: {what}[{i}] must be a dict, got {mapping!r:.60}")
        names = [d[0] for d in getattr(it, attr, None) or []]
        unknown = sorted(set(mapping) - set(names))
        if unknown:
            raise ParamError(
                f"PrefetchingIter: {what}[{i}] renames {unknown}, but iterator {i} provides {names}"
            )


class PrefetchingIter(DataIter):
    """Prefetches the batches of one or more iterators and merges them (see the module doc).

    Args:
        iters: a DataIter or a list of them.
        rename_data: None, or a list with one {old name: new name} dict per iterator.
        rename_label: the same for the labels.
    """

    def __init__(
        self,
        iters: Any,
        rename_data: list[dict[str, str]] | None = None,
        rename_label: list[dict[str, str]] | None = None,
    ) -> None:
        iters = list(iters) if isinstance(iters, list | tuple) else [iters]
        if not iters:
            raise ParamError("PrefetchingIter: iters is empty; give at least one DataIter")
        for i, it in enumerate(iters):
            if not (hasattr(it, "next") and hasattr(it, "reset")):
                raise ParamError(
                    f"PrefetchingIter: iters[{i}] is a {type(it).__name__}, not a DataIter "
                    "(it needs next() and reset())"
                )
        _check_renames(rename_data, iters, "rename_data")
        _check_renames(rename_label, iters, "rename_label")
        self.iters = iters
        self.n_iter = len(iters)
        self.rename_data = rename_data
        self.rename_label = rename_label
        first = self.provide_data[0] if self.provide_data else None
        super().__init__(first.shape[max(DataDesc.get_batch_axis(first.layout), 0)] if first else 0)
        self.current_batch: DataBatch | None = None
        self._workers = [_Prefetcher(it, i) for i, it in enumerate(iters)]

    def _merged(self, attr: str, renames: Any, sources: list[Any]) -> list[DataDesc]:
        """The descriptions of `attr` over all iterators (or batches), renamed."""
        out: list[DataDesc] = []
        for i, (src, it) in enumerate(zip(sources, self.iters)):
            descs = getattr(src, attr, None) or getattr(it, attr, None)
            out += _renamed(descs, renames[i] if renames else None)
        return out

    @property
    def provide_data(self) -> list[DataDesc]:
        return self._merged("provide_data", self.rename_data, self.iters)

    @property
    def provide_label(self) -> list[DataDesc]:
        return self._merged("provide_label", self.rename_label, self.iters)

    def reset(self) -> None:
        for worker in self._workers:
            worker.reset()

    def iter_next(self) -> bool:
        batches = [worker.take() for worker in self._workers]
        ended = [i for i, b in enumerate(batches) if b is None]
        if ended:
            if len(ended) != len(batches):
                raise NNVMError(
                    f"PrefetchingIter: iterators {ended} ended while the others still have "
                    "batches; the iterators must yield the same number of batches"
                )
            return False
        pads = [b.pad for b in batches]
        if len(set(pads)) != 1:
            raise NNVMError(f"PrefetchingIter: the iterators' batches have different pads {pads}")
        first = batches[0]
        self.current_batch = DataBatch(
            [d for b in batches for d in b.data or []],
            [lb for b in batches for lb in b.label or []],
            pad=first.pad,
            index=first.index,
            bucket_key=getattr(first, "bucket_key", None),
            provide_data=self._merged("provide_data", self.rename_data, batches),
            provide_label=self._merged("provide_label", self.rename_label, batches),
        )
        for worker in self._workers:
            worker.fetch_next()
        return True

    def next(self) -> DataBatch:
        if self.iter_next():
            assert self.current_batch is not None
            return self.current_batch
        raise StopIteration

    def _current(self, what: str) -> DataBatch:
        if self.current_batch is None:
            raise NNVMError(f"PrefetchingIter.{what}: no current batch; call iter_next() first")
        return self.current_batch

    def getdata(self) -> list[Any]:
        return self._current("getdata").data or []

    def getlabel(self) -> list[Any]:
        return self._current("getlabel").label or []

    def getindex(self) -> Any:
        return self._current("getindex").index

    def getpad(self) -> int:
        return self._current("getpad").pad or 0

    def close(self) -> None:
        """Stop the prefetching threads (the iterator cannot be used afterwards)."""
        for worker in getattr(self, "_workers", []):
            worker.close()

    def __del__(self) -> None:
        # at interpreter exit threading may be torn down already; the threads are daemons
        with contextlib.suppress(Exception):
            self.close()


__all__ = ["PrefetchingIter"]
