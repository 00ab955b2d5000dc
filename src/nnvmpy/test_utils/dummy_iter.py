"""DummyIter: a data iterator that serves one batch forever, to time a model without I/O."""

from __future__ import annotations

from typing import Any

from ..base import NNVMError
from ..io import DataBatch, DataIter


class DummyIter(DataIter):
    """Returns the first batch of `real_iter` on every `next()`, never running out; it
    describes its data as `real_iter` does (provide_data, provide_label, batch_size)."""

    def __init__(self, real_iter: DataIter) -> None:
        super().__init__(getattr(real_iter, "batch_size", 0))
        self.real_iter = real_iter
        self.provide_data: Any = getattr(real_iter, "provide_data", None)
        self.provide_label: Any = getattr(real_iter, "provide_label", None)
        try:
            self.the_batch: DataBatch = next(iter(real_iter))
        except StopIteration:
            raise NNVMError("DummyIter: real_iter has no batch to repeat") from None

    def reset(self) -> None:
        """Nothing to rewind: every batch is the first."""

    def next(self) -> DataBatch:
        return self.the_batch
