"""DataParallelExecutorGroup: one executor per context, each on its slice of the batch.

MXNet 1.x's data parallelism inside one process. The batch axis of every input (the 'N'
of its DataDesc layout, else axis 0) is split into consecutive slices sized by the
workload list; executor i is bound for slice i on contexts[i]. forward copies each slice
in; get_outputs / get_input_grads concatenate the devices' results along each array's
batch axis (an output's axis comes from its `__layout__` attribute, default 'N' first);
backward hands each executor its slice of the head gradients. Parameters have one copy
per device: set_params writes all of them, get_params returns their mean (the copies
agree while a KVStore or the Module's updater keeps them in step).

Memory shared between groups (the BucketingModule binds one group per bucket):
`shared_group` makes this group's executors take the parameters (and their gradients)
of the other group's, and reuse its `shared_data_arrays` -- per device, a dict of the
arrays of every non-parameter input -- as buffers, so switching buckets allocates
nothing new.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..base import Context, NNVMError, ParamError
from ..io import DataDesc


def split_slices(batch_size: int, workload: Sequence[float]) -> list[slice]:
    """Consecutive slices of range(batch_size), sized in proportion to `workload`."""
    total = float(sum(workload))
    if total <= 0:
        raise ParamError(f"DataParallelExecutorGroup: workload {list(workload)} sums to <= 0")
    sizes = [round(w * batch_size / total) for w in workload]
    sizes[-1] = batch_size - sum(sizes[:-1])
    if any(s <= 0 for s in sizes):
        raise ParamError(
            f"DataParallelExecutorGroup: a batch of {batch_size} cannot be split over "
            f"{len(workload)} devices with workload {list(workload)} (a slice would be empty)"
        )
    out, begin = [], 0
    for s in sizes:
        out.append(slice(begin, begin + s))
        begin += s
    return out


def _slice_axis(arr: Any, axis: int, sl: slice) -> Any:
    from nnvmpy import nd

    if axis == 0:
        return arr[sl.start : sl.stop]
    return nd.slice_axis(arr, axis=axis, begin=sl.start, end=sl.stop)


def _merge(outputs: list[list[Any]], axes: Sequence[int]) -> list[Any]:
    """Per output, the devices' arrays concatenated along its batch axis (the first
    device's array alone when the output has no batch axis, or there is one device)."""
    from nnvmpy import nd

    merged = []
    for arrays, axis in zip(outputs, axes):
        if axis >= 0 and len(arrays) > 1:
            ctx = arrays[0].context
            merged.append(nd.concat(*[a.as_in_context(ctx) for a in arrays], dim=axis))
        else:
            merged.append(arrays[0])
    return merged


def _sliced_shapes(descs: list[DataDesc], sl: slice, axes: list[int]) -> list[DataDesc]:
    out = []
    for d, axis in zip(descs, axes):
        shape = list(d.shape)
        if axis >= 0:
            shape[axis] = sl.stop - sl.start
        out.append(DataDesc(d.name, tuple(shape), d.dtype, d.layout))
    return out


class DataParallelExecutorGroup:
    """Executors for `contexts`, each bound on its share of the batch (see the module doc)."""

    def __init__(
        self,
        symbol: Any,
        contexts: Sequence[Context],
        workload: Sequence[float] | None,
        data_shapes: Any,
        label_shapes: Any,
        param_names: Sequence[str],
        for_training: bool,
        inputs_need_grad: bool,
        shared_group: DataParallelExecutorGroup | None = None,
        logger: Any = logging,
        fixed_param_names: Sequence[str] | None = None,
        grad_req: Any = "write",
        state_names: Sequence[str] | None = None,
        group2ctxs: Any = None,
    ) -> None:
        from nnvmpy.io import as_descs

        self.symbol = symbol
        self.contexts = list(contexts)
        self.workload = list(workload) if workload is not None else [1] * len(self.contexts)
        if len(self.workload) != len(self.contexts):
            raise ParamError(
                f"DataParallelExecutorGroup: {len(self.workload)} workloads for "
                f"{len(self.contexts)} contexts"
            )
        self.group2ctxs = _group2ctxs(group2ctxs, len(self.contexts))
        self.param_names = list(param_names)
        self.arg_names = symbol.list_arguments()
        self.aux_names = symbol.list_auxiliary_states()
        self.for_training = for_training
        self.inputs_need_grad = inputs_need_grad
        self.logger = logger
        self.fixed_param_names = list(fixed_param_names or [])
        self.state_names = list(state_names or [])
        self.shared_data_arrays: list[dict[str, Any]] = (
            shared_group.shared_data_arrays
            if shared_group is not None
            else [{} for _ in self.contexts]
        )
        self.execs: list[Any] = []
        self.batch_size: int | None = None
        self.slices: list[slice] = []
        self._total_exec_bytes = 0
        self.output_layouts = [
            DataDesc.get_batch_axis(symbol[i].attr("__layout__"))
            for i in range(len(symbol.list_outputs()))
        ]
        data = as_descs(data_shapes, "DataParallelExecutorGroup data_shapes")
        labels = as_descs(label_shapes, "DataParallelExecutorGroup label_shapes")
        data_names = {d.name for d in data}
        if not for_training:
            grad_req = "null"
        self.grad_req: dict[str, str] = {}
        for n in self.arg_names:
            base = grad_req.get(n, "null") if isinstance(grad_req, dict) else grad_req
            if not for_training:
                self.grad_req[n] = "null"
            elif n in self.param_names:
                self.grad_req[n] = "null" if n in self.fixed_param_names else base
            elif n in data_names:
                self.grad_req[n] = base if inputs_need_grad else "null"
            else:
                self.grad_req[n] = "null"
        self.bind_exec(data, labels, shared_group)

    # -- binding ------------------------------------------------------------------------------

    def decide_slices(self, data_shapes: list[DataDesc]) -> list[int]:
        """The batch axis of each input; sets batch_size and the per-device slices."""
        axes = [DataDesc.get_batch_axis(d.layout) for d in data_shapes]
        for d, axis in zip(data_shapes, axes):
            if axis < 0:
                continue
            size = int(d.shape[axis])
            if self.batch_size is None:
                self.batch_size = size
                self.slices = split_slices(size, self.workload)
            elif size != self.batch_size:
                raise ParamError(
                    f"DataParallelExecutorGroup: all inputs must have the same batch size; "
                    f"{d.name!r} has {size} on axis {axis} (layout {d.layout}), others "
                    f"{self.batch_size}"
                )
        return axes

    def bind_exec(
        self,
        data_shapes: list[DataDesc],
        label_shapes: list[DataDesc] | None,
        shared_group: DataParallelExecutorGroup | None = None,
        reshape: bool = False,
    ) -> None:
        """Bind (or, with reshape, rebind) one executor per context for these shapes."""
        self.batch_size = None
        label_shapes = list(label_shapes or [])
        self.data_layouts = self.decide_slices(data_shapes)
        self.label_layouts = self.decide_slices(label_shapes) if label_shapes else []
        self.data_shapes, self.label_shapes = list(data_shapes), label_shapes
        self.data_names = [d.name for d in data_shapes]
        self.label_names = [d.name for d in label_shapes]
        old = self.execs
        self.execs = []
        self._total_exec_bytes = 0
        for i, ctx in enumerate(self.contexts):
            shared_exec = None
            if reshape:
                shared_exec = old[i]
            elif shared_group is not None:
                shared_exec = shared_group.execs[i]
            exe = self._bind_ith_exec(i, ctx, shared_exec)
            self.execs.append(exe)
            self._total_exec_bytes += int(getattr(exe, "storage_bytes", 0))
        self._collect_arrays()

    def reshape(self, data_shapes: list[DataDesc], label_shapes: list[DataDesc] | None) -> None:
        """Rebind for new input shapes, keeping the parameter arrays."""
        if list(data_shapes) == self.data_shapes and list(label_shapes or []) == self.label_shapes:
            return
        self.bind_exec(data_shapes, label_shapes, reshape=True)

    def _bind_ith_exec(self, i: int, ctx: Context, shared_exec: Any) -> Any:
        sl = self.slices[i] if self.slices else slice(0, 0)
        descs = _sliced_shapes(self.data_shapes, sl, self.data_layouts)
        if self.label_shapes:
            descs += _sliced_shapes(self.label_shapes, sl, self.label_layouts)
        shapes = {d.name: tuple(d.shape) for d in descs}
        types = {d.name: np.dtype(d.dtype) for d in descs}
        return self.symbol.simple_bind(
            ctx,
            grad_req=self.grad_req,
            type_dict=types,
            group2ctx=self.group2ctxs[i],
            shared_arg_names=self.param_names,
            shared_exec=shared_exec,
            shared_buffer=self.shared_data_arrays[i],
            **shapes,
        )

    def _collect_arrays(self) -> None:
        execs = self.execs
        self.data_arrays = [
            [(sl, e.arg_dict[n]) for sl, e in zip(self.slices, execs)] for n in self.data_names
        ]
        self.label_arrays = [
            [(sl, e.arg_dict[n]) for sl, e in zip(self.slices, execs)] for n in self.label_names
        ]
        self.state_arrays = [[e.arg_dict[n] for e in execs] for n in self.state_names]
        self.param_arrays = [[e.arg_dict[n] for e in execs] for n in self.param_names]
        if self.for_training:
            self.grad_arrays = [
                [e.grad_dict[n] for e in execs] if n in execs[0].grad_dict else None
                for n in self.param_names
            ]
        else:
            self.grad_arrays = [None] * len(self.param_names)
        self.aux_arrays = [[e.aux_dict[n] for e in execs] for n in self.aux_names]
        if self.inputs_need_grad:
            self.input_grad_arrays = [
                [e.grad_dict[n] for e in execs] if n in execs[0].grad_dict else None
                for n in self.data_names
            ]
        else:
            self.input_grad_arrays = []

    # -- parameters ---------------------------------------------------------------------------

    def set_params(
        self, arg_params: dict[str, Any], aux_params: dict[str, Any], allow_extra: bool = False
    ) -> None:
        """Copy the given arrays into every executor (names it lacks: ValueError unless
        allow_extra)."""
        for exe in self.execs:
            for given, arrays, kind in (
                (arg_params, exe.arg_dict, "argument"),
                (aux_params or {}, exe.aux_dict, "auxiliary state"),
            ):
                for name, value in given.items():
                    if name in arrays:
                        arrays[name][:] = value
                    elif not allow_extra:
                        raise ParamError(
                            f"set_params: {name!r} is not an {kind} of the symbol "
                            "(pass allow_extra=True to ignore it)"
                        )

    def get_params(self, arg_params: dict[str, Any], aux_params: dict[str, Any]) -> None:
        """Write the mean over devices of each parameter into arg_params / aux_params."""
        for names, blocks, out in (
            (self.param_names, self.param_arrays, arg_params),
            (self.aux_names, self.aux_arrays, aux_params),
        ):
            for name, block in zip(names, blocks):
                mean = np.mean([b.asnumpy() for b in block], axis=0)
                if name in out:
                    out[name][:] = mean.astype(out[name].dtype)
                else:
                    from nnvmpy import nd

                    out[name] = nd.array(mean, dtype=block[0].dtype)

    # -- computation --------------------------------------------------------------------------

    def forward(self, data_batch: Any, is_train: bool | None = None) -> None:
        """Copy each device's slice of the batch in and run every executor's forward."""
        _load(_batch_arrays(data_batch, "data"), self.data_arrays, self.data_layouts)
        if is_train is None:
            is_train = self.for_training
        labels = getattr(data_batch, "label", None)
        if self.label_arrays and labels:
            _load(list(labels), self.label_arrays, self.label_layouts)
        for exe in self.execs:
            exe.forward(is_train=is_train)

    def backward(self, out_grads: Any = None) -> None:
        if not self.for_training:
            raise NNVMError("backward: the executors are bound with for_training=False")
        if out_grads is not None and not isinstance(out_grads, list | tuple):
            out_grads = [out_grads]
        for i, (exe, sl) in enumerate(zip(self.execs, self.slices)):
            mine = None
            if out_grads is not None:
                mine = []
                for grad, axis in zip(out_grads, self.output_layouts):
                    part = _slice_axis(grad, axis, sl) if axis >= 0 else grad
                    mine.append(part.as_in_context(self.contexts[i]))
            exe.backward(mine)

    def get_outputs(
        self, merge_multi_context: bool = True, begin: int = 0, end: int | None = None
    ) -> list[Any]:
        n = len(self.execs[0].outputs)
        end = n if end is None else end
        outputs = [[e.outputs[i] for e in self.execs] for i in range(begin, end)]
        if merge_multi_context:
            return _merge(outputs, self.output_layouts[begin:end])
        return outputs

    def get_input_grads(self, merge_multi_context: bool = True) -> list[Any]:
        if not self.inputs_need_grad:
            raise NNVMError("get_input_grads: bind with inputs_need_grad=True")
        grads = self.input_grad_arrays
        if merge_multi_context:
            return [
                None if g is None else _merge([g], [axis])[0]
                for g, axis in zip(grads, self.data_layouts)
            ]
        return grads

    def get_states(self, merge_multi_context: bool = True) -> list[Any]:
        if merge_multi_context:
            return _merge(self.state_arrays, [0] * len(self.state_arrays))
        return self.state_arrays

    def set_states(self, states: Any = None, value: Any = None) -> None:
        """States from per-device lists (as get_states(merge_multi_context=False)), or every
        state array filled with the scalar `value`."""
        if states is not None:
            if value is not None:
                raise ParamError("set_states: give states or value, not both")
            for dsts, srcs in zip(self.state_arrays, states):
                for dst, src in zip(dsts, srcs):
                    src.copyto(dst)
        elif value is not None:
            for dsts in self.state_arrays:
                for dst in dsts:
                    dst[:] = value
        else:
            raise ParamError("set_states: give states or value")

    def get_output_shapes(self) -> list[tuple[str, tuple[int, ...]]]:
        outputs = self.get_outputs()
        return [(n, tuple(o.shape)) for n, o in zip(self.symbol.list_outputs(), outputs)]

    def update_metric(self, eval_metric: Any, labels: Any, pre_sliced: bool = False) -> None:
        """Each device's outputs against its slice of the labels."""
        for i, (exe, sl) in enumerate(zip(self.execs, self.slices)):
            if pre_sliced:
                mine = labels[i]
            else:
                mine = [
                    _slice_axis(lb, axis, sl) if axis >= 0 else lb
                    for lb, axis in zip(labels, self.label_layouts or [0] * len(labels))
                ]
            eval_metric.update(mine, exe.outputs)

    def install_monitor(self, mon: Any) -> None:
        for exe in self.execs:
            mon.install(exe)


def _group2ctxs(group2ctxs: Any, n: int) -> list[Any]:
    """One {group: Context} per device from None, one dict for all devices, a list of
    dicts, or dicts whose values are lists with a context per device."""
    if group2ctxs is None:
        return [None] * n
    if isinstance(group2ctxs, list | tuple):
        if len(group2ctxs) != n:
            raise ParamError(f"Module: group2ctxs lists {len(group2ctxs)} dicts for {n} contexts")
        return [_group2ctxs(g, 1)[0] for g in group2ctxs]
    if not isinstance(group2ctxs, dict):
        raise ParamError(
            f"Module: group2ctxs must be a dict or a list of dicts, got {group2ctxs!r:.80}"
        )
    out: list[dict[str, Any]] = [{} for _ in range(n)]
    for group, ctxs in group2ctxs.items():
        if isinstance(ctxs, list | tuple):
            if len(ctxs) not in (1, n):
                raise ParamError(
                    f"Module: group2ctxs[{group!r}] lists {len(ctxs)} contexts for {n} devices"
                )
            ctxs = list(ctxs) * (n // len(ctxs))
        else:
            ctxs = [ctxs] * n
        for i in range(n):
            out[i][group] = ctxs[i]
    return out


def _batch_arrays(batch: Any, field: str) -> list[Any]:
    from nnvmpy import nd
    from nnvmpy.ndarray.ndarray import NDArray

    arrays = getattr(batch, field, None)
    if arrays is None:
        raise NNVMError(f"forward: the batch has no {field!r} (a list of arrays)")
    if not isinstance(arrays, list | tuple):
        arrays = [arrays]
    return [a if isinstance(a, NDArray) else nd.array(a) for a in arrays]


def _load(sources: list[Any], targets: list[list[tuple[slice, Any]]], axes: list[int]) -> None:
    for src, dsts, axis in zip(sources, targets, axes):
        for sl, dst in dsts:
            part = _slice_axis(src, axis, sl) if axis >= 0 and len(dsts) > 1 else src
            if tuple(part.shape) != tuple(dst.shape):
                raise NNVMError(
                    f"forward: an input slice has shape {tuple(part.shape)}, the executor "
                    f"is bound for {tuple(dst.shape)}"
                )
            part.copyto(dst)


merge_multi_context = _merge  # the public name (MXNet: _merge_multi_context)

__all__ = ["DataParallelExecutorGroup", "merge_multi_context", "split_slices"]
