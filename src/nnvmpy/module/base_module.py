"""BaseModule: the loops MXNet's Module API builds on forward/backward/update.

fit() trains over a DataIter for epochs (metric, callbacks, evaluation), score() evaluates,
predict()/iter_predict() run inference; subclasses provide bind, init_params, forward, ...
"""

from __future__ import annotations

import logging
import time
import warnings
from collections.abc import Iterator
from typing import Any, NamedTuple

import numpy as np

from ..base import NNVMError


class BatchEndParam(NamedTuple):
    """What batch_end_callback receives (MXNet's model.BatchEndParam)."""

    epoch: int
    nbatch: int
    eval_metric: Any
    locals: dict[str, Any] | None


def _as_list(obj: Any) -> list[Any]:
    if obj is None:
        return []
    return list(obj) if isinstance(obj, list | tuple) else [obj]


class BaseModule:
    """State flags and the training / evaluation loops."""

    def __init__(self, logger: Any = None) -> None:
        self.logger = logger or logging
        self.binded = False
        self.for_training = False
        self.inputs_need_grad = False
        self.params_initialized = False
        self.optimizer_initialized = False
        self._params_dirty = False

    # subclasses: bind, init_params, init_optimizer, forward, backward, update,
    # get_outputs, get_params, set_params, update_metric, data_names, ...

    def forward_backward(self, data_batch: Any) -> None:
        self.forward(data_batch, is_train=True)  # type: ignore[attr-defined]
        self.backward()  # type: ignore[attr-defined]

    def prepare(self, data_batch: Any, sparse_row_id_fn: Any = None) -> None:
        """Get ready for `data_batch` before its forward (MXNet's hook for switching a
        bucket or pulling row_sparse parameters). Nothing to do here: a module without
        row_sparse parameters ignores `sparse_row_id_fn`, with a UserWarning as MXNet."""
        if sparse_row_id_fn is not None:
            warnings.warn(
                f"{type(self).__name__}.prepare: sparse_row_id_fn is not invoked "
                "(no row_sparse parameters to pull)",
                UserWarning,
                stacklevel=2,
            )

    def set_params(
        self,
        arg_params: dict[str, Any],
        aux_params: dict[str, Any] | None,
        allow_missing: bool = False,
        force_init: bool = True,
        allow_extra: bool = False,
    ) -> None:
        """Set the parameters from these arrays: init_params() without an initializer."""
        self.init_params(  # type: ignore[attr-defined]
            None,
            arg_params,
            aux_params,
            allow_missing=allow_missing,
            force_init=force_init,
            allow_extra=allow_extra,
        )

    # -- parameter files ----------------------------------------------------------------------

    def save_params(self, fname: str) -> None:
        """Write get_params() to `fname` in nd.save's format, keyed 'arg:<name>' and
        'aux:<name>' as MXNet's .params files (mx.nd.load and Module.load_params read it)."""
        from nnvmpy import nd
        from nnvmpy.model import params_file_dict

        arg_params, aux_params = self.get_params()  # type: ignore[attr-defined]
        nd.save(fname, params_file_dict(arg_params, aux_params))

    def load_params(self, fname: str) -> None:
        """Read a file of save_params (or an MXNet .params file) and set_params() it: every
        parameter of the module must be in it. Keys other than 'arg:'/'aux:' raise
        ParamError (a ValueError, as MXNet)."""
        from nnvmpy import nd
        from nnvmpy.model import split_params_file

        arg_params, aux_params = split_params_file(nd.load(fname), fname)
        self.set_params(arg_params, aux_params)

    def score(
        self,
        eval_data: Any,
        eval_metric: Any,
        num_batch: int | None = None,
        batch_end_callback: Any = None,
        score_end_callback: Any = None,
        reset: bool = True,
        epoch: int = 0,
        sparse_row_id_fn: Any = None,
    ) -> list[tuple[str, float]]:
        """Run the metric over eval_data (forward only); returns its name-value pairs."""
        from nnvmpy import metric as metric_mod

        if not (self.binded and self.params_initialized):
            raise NNVMError("Module.score: bind() and init_params() first")
        if reset:
            eval_data.reset()
        eval_metric = metric_mod.create(eval_metric)
        eval_metric.reset()
        nbatch = 0
        actual_num_batch = 0  # score_end_callback gets the count of batches, as in MXNet
        # the loop variables keep MXNet's names: callbacks read them from locals()
        for nbatch, eval_batch in enumerate(eval_data):
            if num_batch is not None and nbatch == num_batch:
                break
            self.forward(eval_batch, is_train=False)  # type: ignore[attr-defined]
            self.update_metric(eval_metric, eval_batch.label)  # type: ignore[attr-defined]
            for cb in _as_list(batch_end_callback):
                cb(BatchEndParam(epoch, nbatch, eval_metric, locals()))
            actual_num_batch += 1
        for cb in _as_list(score_end_callback):
            cb(BatchEndParam(epoch, actual_num_batch, eval_metric, locals()))
        return eval_metric.get_name_value()

    def iter_predict(
        self, eval_data: Any, num_batch: int | None = None, reset: bool = True
    ) -> Iterator[tuple[list[Any], int, Any]]:
        """(outputs without the padded rows, batch index, batch) per batch."""
        if not (self.binded and self.params_initialized):
            raise NNVMError("Module.iter_predict: bind() and init_params() first")
        if reset:
            eval_data.reset()
        for nbatch, batch in enumerate(eval_data):
            if num_batch is not None and nbatch == num_batch:
                break
            self.forward(batch, is_train=False)  # type: ignore[attr-defined]
            pad = batch.pad or 0
            outs = [o[0 : o.shape[0] - pad] for o in self.get_outputs()]  # type: ignore[attr-defined]
            yield outs, nbatch, batch

    def predict(
        self,
        eval_data: Any,
        num_batch: int | None = None,
        merge_batches: bool = True,
        reset: bool = True,
        always_output_list: bool = False,
        sparse_row_id_fn: Any = None,
    ) -> Any:
        """Outputs over eval_data, concatenated along the batch axis when merge_batches."""
        from nnvmpy import nd
        from nnvmpy.io import DataBatch
        from nnvmpy.ndarray.ndarray import NDArray

        if isinstance(eval_data, NDArray | np.ndarray):  # one array: one forward, as MXNet
            self.forward(DataBatch([nd.array(eval_data)]), is_train=False)  # type: ignore[attr-defined]
            return self.get_outputs()[0]  # type: ignore[attr-defined]
        if not isinstance(eval_data, list | tuple) and not hasattr(eval_data, "reset"):
            from nnvmpy.io import NDArrayIter

            eval_data = NDArrayIter(eval_data, batch_size=self.data_shapes[0].shape[0])  # type: ignore[attr-defined]
        outputs = [[o.copy() for o in outs] for outs, _, _ in self.iter_predict(
            eval_data, num_batch, reset
        )]  # fmt: skip
        if not merge_batches:
            return outputs
        if not outputs:
            return []
        merged = [
            nd.array(np.concatenate([b[i].asnumpy() for b in outputs]))
            for i in range(len(outputs[0]))
        ]
        return merged[0] if len(merged) == 1 and not always_output_list else merged

    def _fit_epoch_begin(self, epoch: int, train_data: Any) -> None:
        """Called by fit() before each epoch (a subclass's hook, e.g. SVRGModule's)."""

    def fit(
        self,
        train_data: Any,
        eval_data: Any = None,
        eval_metric: Any = "acc",
        epoch_end_callback: Any = None,
        batch_end_callback: Any = None,
        kvstore: Any = "local",
        optimizer: Any = "sgd",
        optimizer_params: Any = (("learning_rate", 0.01),),
        eval_end_callback: Any = None,
        eval_batch_end_callback: Any = None,
        initializer: Any = None,
        arg_params: Any = None,
        aux_params: Any = None,
        allow_missing: bool = False,
        force_rebind: bool = False,
        force_init: bool = False,
        begin_epoch: int = 0,
        num_epoch: int | None = None,
        validation_metric: Any = None,
        monitor: Any = None,
        sparse_row_id_fn: Any = None,
    ) -> None:
        """Train for epochs begin_epoch .. num_epoch - 1 (MXNet's Module.fit)."""
        from nnvmpy import initializer as init_mod
        from nnvmpy import metric as metric_mod

        if num_epoch is None:
            raise NNVMError("Module.fit: num_epoch is required")
        self.bind(  # type: ignore[attr-defined]
            data_shapes=train_data.provide_data,
            label_shapes=train_data.provide_label,
            for_training=True,
            force_rebind=force_rebind,
        )
        if monitor is not None:
            self.install_monitor(monitor)  # type: ignore[attr-defined]
        self.init_params(  # type: ignore[attr-defined]
            initializer=initializer or init_mod.Uniform(0.01),
            arg_params=arg_params,
            aux_params=aux_params,
            allow_missing=allow_missing,
            force_init=force_init,
        )
        self.init_optimizer(  # type: ignore[attr-defined]
            kvstore=kvstore, optimizer=optimizer, optimizer_params=optimizer_params
        )
        validation_metric = validation_metric or eval_metric
        eval_metric = metric_mod.create(eval_metric)
        for epoch in range(begin_epoch, num_epoch):
            self._fit_epoch_begin(epoch, train_data)
            tic = time.time()
            eval_metric.reset()
            nbatch = 0
            for nbatch, data_batch in enumerate(train_data):  # MXNet's name (callbacks' locals)
                if monitor is not None:
                    monitor.tic()
                self.forward_backward(data_batch)
                self.update()  # type: ignore[attr-defined]
                self.update_metric(eval_metric, data_batch.label)  # type: ignore[attr-defined]
                if monitor is not None:
                    monitor.toc_print()
                for cb in _as_list(batch_end_callback):
                    cb(BatchEndParam(epoch, nbatch, eval_metric, locals()))
            # global values: a batch callback's reset_local() (Speedometer) must not blank them
            for name, value in eval_metric.get_global_name_value():
                self.logger.info("Epoch[%d] Train-%s=%f", epoch, name, value)
            self.logger.info("Epoch[%d] Time cost=%.3f", epoch, time.time() - tic)
            arg, aux = self.get_params()  # type: ignore[attr-defined]
            for cb in _as_list(epoch_end_callback):
                cb(epoch, self.symbol, arg, aux)  # type: ignore[attr-defined]
            if eval_data is not None:
                res = self.score(
                    eval_data,
                    validation_metric,
                    score_end_callback=eval_end_callback,
                    batch_end_callback=eval_batch_end_callback,
                    epoch=epoch,
                )
                for name, value in res:
                    self.logger.info("Epoch[%d] Validation-%s=%f", epoch, name, value)
            train_data.reset()
