"""nv.io.CSVIter: MXNet's CSV file iterator (src/io/iter_csv.cc with its batch loader).

Each non-blank line of ``data_csv`` (a file, or a directory whose files are read in name
order) is one example, reshaped to ``data_shape``; ``label_csv`` gives the labels the same
way (all zeros without it). Batches follow MXNet's batch loader:

* ``round_batch=True`` (default): the last batch of a pass is completed with examples from
  the start (``pad`` says how many), and those count as read: the next pass, after
  ``reset()``, starts after them. A ``reset()`` after a pass that did not wrap starts
  again from the first example.
* ``round_batch=False``: the last batch holds the remaining examples followed by whatever
  the previous batch left in those rows (``pad`` says how many); every pass starts from the
  first example.

Unlike NDArrayIter, ``getdata()`` / ``getlabel()`` return one NDArray (MXNet's MXDataIter).
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..base import NNVMError, ParamError
from . import DataBatch, DataDesc, DataIter

#: the dtypes MXNet's CSVIter parses (None: float32)
_DTYPES = {"None": np.float32, "float32": np.float32, "int32": np.int32, "int64": np.int64}


def _files(path: str, what: str) -> list[str]:
    if os.path.isdir(path):
        names = sorted(n for n in os.listdir(path) if os.path.isfile(os.path.join(path, n)))
        return [os.path.join(path, n) for n in names]
    if not os.path.isfile(path):
        raise ParamError(f"CSVIter: {what} {path!r} is neither a file nor a directory")
    return [path]


def _parse(cells: list[list[str]], dtype: type, where: str) -> np.ndarray:
    table = np.array(cells, dtype=str)
    try:
        return table.astype(np.float64 if dtype is np.float32 else dtype).astype(dtype)
    except ValueError:
        pass
    # integers written as decimals ("1.7" -> 1, as C's strtol reads them), or a bad cell
    out: np.ndarray = np.empty(table.shape, dtype)
    for index, cell in np.ndenumerate(table):
        try:
            out[index] = int(float(cell)) if dtype is not np.float32 else float(cell)
        except ValueError:
            raise ParamError(
                f"CSVIter: {where}: cannot read {cell!r} as {np.dtype(dtype)}"
            ) from None
    return out


def read_csv(path: str, shape: tuple[int, ...], dtype: type, what: str) -> np.ndarray:
    """The examples of a CSV file or directory: an array (rows, *shape) of dtype."""
    size = math.prod(shape)
    cells: list[list[str]] = []
    for name in _files(path, what):
        with open(name) as fh:
            for lineno, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                row = line.strip().split(",")
                if len(row) != size:
                    raise ParamError(
                        f"CSVIter: {name}:{lineno} has {len(row)} values; {what} expects "
                        f"{size} (the size of its shape {shape})"
                    )
                cells.append(row)
    if not cells:
        return np.empty((0, *shape), dtype)
    return _parse(cells, dtype, f"{what} {path!r}").reshape((len(cells), *shape))


def _shape(value: Any, what: str) -> tuple[int, ...]:
    shape = (value,) if isinstance(value, int) else tuple(value)
    if not shape or any(not isinstance(d, int | np.integer) or d <= 0 for d in shape):
        raise ParamError(f"CSVIter: {what} must be a tuple of positive ints, got {value!r}")
    return tuple(int(d) for d in shape)


class CSVIter(DataIter):
    """Batches of the examples in CSV files (see the module's docstring)."""

    def __init__(
        self,
        data_csv: str,
        data_shape: Sequence[int],
        batch_size: int,
        label_csv: str | None = None,
        label_shape: Sequence[int] = (1,),
        round_batch: bool = True,
        prefetch_buffer: int = 4,
        ctx: str = "gpu",
        dtype: Any = None,
        data_name: str = "data",
        label_name: str = "softmax_label",
    ) -> None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size <= 0:
            raise ParamError(f"CSVIter: batch_size must be a positive int, got {batch_size!r}")
        super().__init__(batch_size)
        key = "None" if dtype is None else np.dtype(dtype).name
        if key not in _DTYPES:
            raise ParamError(
                f"CSVIter: dtype {key} is not supported; expected None, float32, int32 or int64"
            )
        self.dtype = np.dtype(_DTYPES[key])
        self.data_shape = _shape(data_shape, "data_shape")
        self.label_shape = _shape(label_shape, "label_shape")
        self.round_batch = bool(round_batch)
        self.data_name, self.label_name = data_name, label_name
        self._data = read_csv(data_csv, self.data_shape, self.dtype.type, "data_csv")
        n = len(self._data)
        if n == 0:
            raise ParamError(f"CSVIter: data_csv {data_csv!r} holds no examples")
        if label_csv is None or label_csv == "NULL":
            self._label = np.zeros((n, *self.label_shape), self.dtype)
        else:
            self._label = read_csv(label_csv, self.label_shape, self.dtype.type, "label_csv")
            if len(self._label) < n:
                raise ParamError(
                    f"CSVIter: label_csv {label_csv!r} has {len(self._label)} rows, fewer "
                    f"than the {n} of data_csv"
                )
            self._label = self._label[:n]
        if self.round_batch and batch_size > 2 * n:
            raise ParamError(
                f"CSVIter: batch_size {batch_size} needs more than the {n} examples twice "
                "over to fill a batch (round_batch)"
            )
        self._batch_label_shape = () if self.label_shape == (1,) else self.label_shape
        # the batch buffer's example numbers; -1: a row nothing was read into yet (zeros)
        self._rows = np.full(batch_size, -1, np.int64)
        self._start = 0  # the example this pass starts at
        self._cursor = 0  # the next example to read
        self._resume = 0  # where a reset starts the next pass (round_batch: after the wrap)
        self._pad = 0
        self._current: np.ndarray | None = None

    @property
    def provide_data(self) -> list[DataDesc]:
        return [DataDesc(self.data_name, (self.batch_size, *self.data_shape), self.dtype.type)]

    @property
    def provide_label(self) -> list[DataDesc]:
        shape = (self.batch_size, *self._batch_label_shape)
        return [DataDesc(self.label_name, shape, self.dtype.type)]

    def reset(self) -> None:
        self._start = self._cursor = self._resume
        self._resume = 0
        self._current = None

    def iter_next(self) -> bool:
        n, bs = len(self._data), self.batch_size
        if self._cursor >= n:
            self._current = None
            return False
        real = min(bs, n - self._cursor)
        rows = self._rows.copy()
        rows[:real] = np.arange(self._cursor, self._cursor + real)
        self._cursor += real
        self._pad = bs - real
        if self._pad and self.round_batch:
            if self._pad > n:
                raise NNVMError(
                    f"CSVIter: batch_size {bs} needs {self._pad} examples from the start to "
                    f"complete the last batch, but there are only {n}"
                )
            rows[real:] = np.arange(self._pad)
            self._resume = self._pad
        # round_batch=False: the padded rows keep what the previous batch read there
        self._rows = self._current = rows
        return True

    def _take(self, source: np.ndarray, shape: tuple[int, ...]) -> Any:
        from nnvmpy import nd

        if self._current is None:
            raise NNVMError("CSVIter: no current batch; call iter_next() (or next()) first")
        rows = self._current
        out = np.zeros((self.batch_size, *shape), self.dtype)
        have = rows >= 0
        out[have] = source[rows[have]].reshape((-1, *shape))
        return nd.array(out, dtype=self.dtype)

    def getdata(self) -> Any:
        return self._take(self._data, self.data_shape)

    def getlabel(self) -> Any:
        return self._take(self._label, self._batch_label_shape)

    def getpad(self) -> int:
        return self._pad

    def getindex(self) -> np.ndarray:
        if self._current is None:
            raise NNVMError("CSVIter: no current batch; call iter_next() (or next()) first")
        return np.where(self._current >= 0, self._current, 0).astype(np.uint64)

    def next(self) -> DataBatch:
        if not self.iter_next():
            raise StopIteration
        return DataBatch(
            [self.getdata()],
            [self.getlabel()],
            pad=self.getpad(),
            index=self.getindex(),
            provide_data=self.provide_data,
            provide_label=self.provide_label,
        )
