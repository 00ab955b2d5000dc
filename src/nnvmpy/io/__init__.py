"""nv.io: MXNet 1.x's data iterator interface (DataDesc, DataBatch, DataIter, NDArrayIter,
CSVIter, PrefetchingIter).

What `nv.mod.Module` and MXNet-style training loops consume: an iterator yields
DataBatch objects whose `data` and `label` are lists of NDArrays, and describes them with
`provide_data` / `provide_label` (DataDesc: name, shape, dtype, layout).

    it = nv.io.NDArrayIter(x, y, batch_size=32, shuffle=True, last_batch_handle="pad")
    for batch in it:
        ...                      # batch.data[0], batch.label[0], batch.pad
    it.reset()
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from ..base import NNVMError, ParamError


class DataDesc(tuple):
    """Name, shape, dtype and layout of one input (MXNet's DataDesc).

    As in MXNet it is the pair (name, shape), with dtype and layout as attributes, so
    ``name, shape = desc`` and ``dict(it.provide_data)`` work; two descriptions with the
    same name and shape compare equal whatever their dtypes.
    """

    dtype: Any
    layout: str
    _fields = ("name", "shape")  # MXNet's DataDesc is a namedtuple of these two

    def __new__(
        cls, name: str, shape: Sequence[int], dtype: Any = np.float32, layout: str = "NCHW"
    ) -> DataDesc:
        self = super().__new__(cls, (name, shape))
        self.dtype = dtype
        self.layout = layout
        return self

    def __getnewargs__(self) -> tuple[Any, ...]:  # pickle and copy keep dtype and layout
        return (self.name, self.shape, self.dtype, self.layout)

    @property
    def name(self) -> str:
        return self[0]

    @property
    def shape(self) -> tuple[int, ...]:
        return self[1]

    def __repr__(self) -> str:
        return f"DataDesc[{self.name},{self.shape},{np.dtype(self.dtype)},{self.layout}]"

    def _replace(self, **fields: Any) -> DataDesc:
        """A copy with `name` and/or `shape` replaced, as namedtuple's _replace; dtype and
        layout are kept (MXNet 1.9's loses them, so its copy cannot even be printed)."""
        unknown = [k for k in fields if k not in self._fields]
        if unknown:
            raise ParamError(
                f"DataDesc._replace: got unexpected field names {unknown}; the fields are "
                f"{list(self._fields)} (dtype and layout are kept from the original)"
            )
        values = {"name": self.name, "shape": self.shape, **fields}
        return DataDesc(values["name"], values["shape"], self.dtype, self.layout)

    def _asdict(self) -> dict[str, Any]:
        """{'name': ..., 'shape': ...}, as namedtuple's _asdict."""
        return {"name": self.name, "shape": self.shape}

    @staticmethod
    def get_batch_axis(layout: str | None) -> int:
        """The position of 'N' in the layout (0 when there is no layout)."""
        return 0 if layout is None else layout.find("N")

    @staticmethod
    def get_list(shapes: Sequence[tuple[str, Any]], types: Any = None) -> list[DataDesc]:
        """DataDescs from (name, shape) pairs and optional (name, dtype) pairs."""
        dtypes = dict(types) if types is not None else {}
        return [DataDesc(n, tuple(s), dtypes.get(n, np.float32)) for n, s in shapes]


def as_descs(shapes: Any, what: str) -> list[DataDesc]:
    """A list of DataDesc from DataDescs, (name, shape) pairs, or None (no inputs)."""
    if shapes is None:
        return []
    out = []
    for item in shapes:
        if isinstance(item, DataDesc):
            out.append(item)
        elif isinstance(item, tuple | list) and len(item) == 2 and isinstance(item[0], str):
            out.append(DataDesc(item[0], tuple(int(d) for d in item[1])))
        else:
            raise ParamError(f"{what}: expected DataDesc or (name, shape) pairs, got {item!r}")
    return out


class DataBatch:
    """One batch: lists of NDArrays for data and label, and how many rows are padding."""

    def __init__(
        self,
        data: Sequence[Any] | None,
        label: Sequence[Any] | None = None,
        pad: int | None = None,
        index: Any = None,
        bucket_key: Any = None,
        provide_data: list[DataDesc] | None = None,
        provide_label: list[DataDesc] | None = None,
    ) -> None:
        if data is not None and not isinstance(data, list | tuple):
            raise ParamError("DataBatch: data must be a list of NDArrays")
        if label is not None and not isinstance(label, list | tuple):
            raise ParamError("DataBatch: label must be a list of NDArrays")
        self.data = list(data) if data is not None else None
        self.label = list(label) if label is not None else None
        self.pad = pad
        self.index = index
        self.bucket_key = bucket_key
        self.provide_data = provide_data
        self.provide_label = provide_label

    def __str__(self) -> str:
        """MXNet's form: "<class>: data shapes: [...] label shapes: [...]", None where a
        batch has no labels."""
        shapes = [d.shape for d in self.data or []]
        labels = [lb.shape for lb in self.label] if self.label else None
        return f"{type(self).__name__}: data shapes: {shapes} label shapes: {labels}"


class DataIter:
    """The iterator protocol of MXNet's data iterators."""

    def __init__(self, batch_size: int = 0) -> None:
        self.batch_size = batch_size

    def __iter__(self) -> Iterator[DataBatch]:
        return self

    def reset(self) -> None:
        """Go back to the first batch."""

    def next(self) -> DataBatch:
        if self.iter_next():
            return DataBatch(
                self.getdata(), self.getlabel(), pad=self.getpad(), index=self.getindex()
            )
        raise StopIteration

    def __next__(self) -> DataBatch:
        return self.next()

    def iter_next(self) -> bool:
        """Move to the next batch; False at the end."""
        return False

    def getdata(self) -> list[Any]:
        raise NotImplementedError

    def getlabel(self) -> list[Any]:
        raise NotImplementedError

    def getindex(self) -> Any:
        return None

    def getpad(self) -> int:
        return 0


def _as_named_arrays(data: Any, default_name: str) -> list[tuple[str, np.ndarray]]:
    """An array, a list of arrays or a dict -> [(name, numpy array)] sorted by name."""
    if data is None:
        return []
    if isinstance(data, dict):
        items = list(OrderedDict(data).items())
    elif isinstance(data, list | tuple):
        if len(data) == 1:
            items = [(default_name, data[0])]
        else:
            items = [(f"_{i}_{default_name}", d) for i, d in enumerate(data)]
    else:
        items = [(default_name, data)]
    out = []
    for name, value in items:
        # MXNet keeps an NDArray's dtype but reads anything else as float32 (nd.array's
        # default), so integer NumPy data feeds a float network
        arr = value.asnumpy() if hasattr(value, "asnumpy") else np.asarray(value, np.float32)
        out.append((name, arr))
    return sorted(out, key=lambda item: item[0])  # MXNet orders inputs by name


class NDArrayIter(DataIter):
    """Batches of in-memory arrays (NDArray or NumPy), optionally shuffled.

    last_batch_handle: 'pad' fills the last batch from the start (batch.pad says how
    many rows), 'discard' drops it, 'roll_over' carries the rest into the next epoch
    (whose first batch reports them as its pad, as MXNet does).

    layout: where the batch axis is, the position of 'N' (MXNet's convention): with
    'TNC' every data and label array is batched along axis 1 and provide_data has the
    batch size there. MXNet 1.9.1 counts (and shuffles) samples along axis 0 whatever
    the layout, so it skips samples when axis 0 is shorter than the batch axis; nnvmpy
    counts, shuffles, pads and rolls over along the batch axis. Both agree for 'N...'
    layouts and, without shuffling, whenever the two axes have the same length.
    """

    def __init__(
        self,
        data: Any,
        label: Any = None,
        batch_size: int = 1,
        shuffle: bool = False,
        last_batch_handle: str = "pad",
        data_name: str = "data",
        label_name: str = "softmax_label",
        layout: str = "NCHW",
    ) -> None:
        super().__init__(batch_size)
        if last_batch_handle not in ("pad", "discard", "roll_over"):
            raise ParamError(
                f"NDArrayIter: last_batch_handle must be 'pad', 'discard' or 'roll_over', "
                f"got {last_batch_handle!r}"
            )
        if int(batch_size) <= 0:
            raise ParamError(f"NDArrayIter: batch_size must be positive, got {batch_size}")
        if not isinstance(layout, str) or "N" not in layout:
            raise ParamError(f"NDArrayIter: layout must name the batch axis 'N', got {layout!r}")
        self.layout = layout
        self._axis = layout.find("N")
        self.data = _as_named_arrays(data, data_name)
        self.label = _as_named_arrays(label, label_name)
        if not self.data:
            raise ParamError("NDArrayIter: data is required")
        self.num_data = self._num_samples()
        if last_batch_handle == "discard" and self.num_data < batch_size:
            raise ParamError(
                f"NDArrayIter: batch_size {batch_size} exceeds the {self.num_data} samples "
                "with last_batch_handle='discard'"
            )
        self.shuffle = shuffle
        self.last_batch_handle = last_batch_handle
        self.idx = np.arange(self.num_data)
        self.cursor = -batch_size
        self._cache: tuple[np.ndarray, int] | None = None  # roll_over's carried rows
        self.hard_reset()

    def _num_samples(self) -> int:
        """The common length of every array along the batch axis."""
        axis, sizes = self._axis, {}
        for name, arr in self.data + self.label:
            if arr.ndim <= axis:
                raise ParamError(
                    f"NDArrayIter: layout {self.layout!r} batches along axis {axis}, but "
                    f"{name!r} has shape {arr.shape}"
                )
            sizes[name] = arr.shape[axis]
        if len(set(sizes.values())) != 1:
            where = "first dimension" if axis == 0 else f"size on axis {axis} ({self.layout!r})"
            raise ParamError(f"NDArrayIter: all arrays need the same {where}: {sizes}")
        return next(iter(sizes.values()))

    def _descs(self, arrays: list[tuple[str, np.ndarray]]) -> list[DataDesc]:
        axis = self._axis
        return [
            DataDesc(
                n, (*a.shape[:axis], self.batch_size, *a.shape[axis + 1 :]), a.dtype, self.layout
            )
            for n, a in arrays
        ]

    @property
    def provide_data(self) -> list[DataDesc]:
        return self._descs(self.data)

    @property
    def provide_label(self) -> list[DataDesc]:
        return self._descs(self.label)

    def hard_reset(self) -> None:
        """Reset ignoring roll_over's carried rows."""
        self._cache = None
        self.cursor = -self.batch_size
        if self.shuffle:
            np.random.shuffle(self.idx)  # noqa: NPY002 - NumPy's global RNG, as MXNet (seeded by tests)

    def reset(self) -> None:
        bs, cursor = self.batch_size, self.cursor
        if self.last_batch_handle == "roll_over" and 0 <= cursor < self.num_data < cursor + bs:
            # the rows the last epoch could not fill a batch with start the next one
            self._cache = (self.idx[cursor:].copy(), self.num_data - cursor)
        else:
            self._cache = None
        if self.shuffle:
            np.random.shuffle(self.idx)  # noqa: NPY002 - NumPy's global RNG, as MXNet (seeded by tests)
        self.cursor = -bs - (self._cache[1] if self._cache is not None else 0)

    def iter_next(self) -> bool:
        self.cursor += self.batch_size
        if self.last_batch_handle == "discard":
            return self.cursor + self.batch_size <= self.num_data
        return self.cursor < self.num_data

    def _rows(self) -> np.ndarray:
        """The sample indices of the current batch (along the batch axis)."""
        start, end = self.cursor, self.cursor + self.batch_size
        if start < 0:  # roll_over: rows carried from the end of the last epoch
            assert self._cache is not None
            return np.concatenate([self._cache[0], self.idx[:end]])
        if end <= self.num_data:
            return self.idx[start:end]
        if self.last_batch_handle == "pad":  # wrap around (as often as needed) to fill it
            return self.idx[np.arange(start, end) % self.num_data]
        return self.idx[start:]

    def _batch(self, arrays: list[tuple[str, np.ndarray]]) -> list[Any]:
        from nnvmpy import nd

        rows = self._rows()
        return [nd.array(np.take(a, rows, axis=self._axis), dtype=a.dtype) for _, a in arrays]

    def next(self) -> DataBatch:
        if not self.iter_next():
            raise StopIteration
        if self.last_batch_handle == "roll_over" and self.cursor + self.batch_size > self.num_data:
            raise StopIteration  # the rest rolls over into the next epoch
        return DataBatch(
            self._batch(self.data), self._batch(self.label), pad=self.getpad(), index=None
        )

    def getdata(self) -> list[Any]:
        return self._batch(self.data)

    def getlabel(self) -> list[Any]:
        return self._batch(self.label)

    def getpad(self) -> int:
        end = self.cursor + self.batch_size
        if self.last_batch_handle == "pad" and end > self.num_data:
            return end - self.num_data
        if self.last_batch_handle == "roll_over" and self.cursor < 0:
            return -self.cursor  # MXNet counts the carried rows as the pad
        return 0


class ResizeIter(DataIter):
    """Another iterator cut or stretched to `size` batches per epoch (reset when it ends)."""

    def __init__(self, data_iter: DataIter, size: int, reset_internal: bool = True) -> None:
        super().__init__(data_iter.batch_size)
        self.data_iter, self.size, self.reset_internal = data_iter, size, reset_internal
        self.cur = 0
        self.current_batch: DataBatch | None = None
        self.provide_data = data_iter.provide_data  # type: ignore[attr-defined]
        self.provide_label = data_iter.provide_label  # type: ignore[attr-defined]

    def reset(self) -> None:
        self.cur = 0
        if self.reset_internal:
            self.data_iter.reset()

    def iter_next(self) -> bool:
        if self.cur == self.size:
            return False
        try:
            self.current_batch = self.data_iter.next()
        except StopIteration:
            self.data_iter.reset()
            self.current_batch = self.data_iter.next()
        self.cur += 1
        return True

    def next(self) -> DataBatch:
        if not self.iter_next():
            raise StopIteration
        assert self.current_batch is not None
        return self.current_batch

    def getdata(self) -> list[Any]:
        assert self.current_batch is not None
        return self.current_batch.data or []

    def getlabel(self) -> list[Any]:
        assert self.current_batch is not None
        return self.current_batch.label or []


def check_batch(batch: Any, what: str) -> DataBatch:
    if not isinstance(batch, DataBatch):
        raise NNVMError(f"{what}: expected an nv.io.DataBatch, got {type(batch).__name__}")
    return batch


from .csv_iter import CSVIter  # noqa: E402 - it builds on the classes above
from .prefetching_iter import PrefetchingIter  # noqa: E402 - it builds on the classes above

__all__ = [
    "CSVIter",
    "DataBatch",
    "DataDesc",
    "DataIter",
    "NDArrayIter",
    "PrefetchingIter",
    "ResizeIter",
]
