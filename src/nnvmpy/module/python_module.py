"""PythonModule and PythonLossModule: modules whose computation is plain Python.

PythonModule gives the Module API with nothing to learn: no parameters, no optimizer,
bind() records and checks the input shapes, and a subclass writes forward, backward,
get_outputs, get_input_grads and `_compute_output_shapes`. PythonLossModule is the usual
end of a SequentialModule: its outputs are its input scores, and backward() computes the
gradient of a loss written in Python, `grad_func(scores, labels)`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

from ..base import NNVMError, ParamError
from .base_module import BaseModule
from .module import _DEFAULT_INIT


def _names(names: Sequence[str] | None) -> list[str] | None:
    return None if names is None else list(names)


class PythonModule(BaseModule):
    """A parameter-free module; a subclass provides the computation (see the module doc)."""

    def __init__(
        self,
        data_names: Sequence[str],
        label_names: Sequence[str] | None,
        output_names: Sequence[str],
        logger: Any = logging,
    ) -> None:
        super().__init__(logger=logger)
        self._data_names = list(data_names)
        self._label_names = _names(label_names)
        self._output_names = list(output_names)
        self._data_shapes: Any = None
        self._label_shapes: Any = None
        self._output_shapes: Any = None

    @property
    def data_names(self) -> list[str]:
        return self._data_names

    @property
    def output_names(self) -> list[str]:
        return self._output_names

    @property
    def data_shapes(self) -> Any:
        return self._data_shapes

    @property
    def label_shapes(self) -> Any:
        """None when the module takes no labels."""
        return self._label_shapes

    @property
    def output_shapes(self) -> Any:
        return self._output_shapes

    # -- no parameters, no optimizer ----------------------------------------------------------

    def get_params(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """({}, {}): a subclass with parameters overrides this."""
        return {}, {}

    def init_params(
        self,
        initializer: Any = _DEFAULT_INIT,
        arg_params: dict[str, Any] | None = None,
        aux_params: dict[str, Any] | None = None,
        allow_missing: bool = False,
        force_init: bool = False,
        allow_extra: bool = False,
    ) -> None:
        """Nothing to initialize (a subclass with parameters overrides this)."""
        self.params_initialized = True

    def init_optimizer(
        self,
        kvstore: Any = "local",
        optimizer: Any = "sgd",
        optimizer_params: Any = (("learning_rate", 0.01),),
        force_init: bool = False,
    ) -> None:
        """Nothing to optimize (a subclass with parameters overrides this)."""
        self.optimizer_initialized = True

    def update(self) -> None:
        """Nothing to update (a subclass with parameters overrides this)."""

    def update_metric(self, eval_metric: Any, labels: Any, pre_sliced: bool = False) -> None:
        """The metric on get_outputs() against `labels`; nothing when bound without labels."""
        if self._label_shapes is None:
            return
        if pre_sliced:
            raise NNVMError(f"{type(self).__name__}.update_metric: pre_sliced is not supported")
        eval_metric.update(labels, self.get_outputs())

    # -- bind ---------------------------------------------------------------------------------

    def bind(
        self,
        data_shapes: Any,
        label_shapes: Any = None,
        for_training: bool = True,
        inputs_need_grad: bool = False,
        force_rebind: bool = False,
        shared_module: Any = None,
        grad_req: Any = "write",
    ) -> None:
        """Record the input shapes (their names must be data_names / label_names, in
        order) and compute the output shapes."""
        what = f"{type(self).__name__}.bind"
        if self.binded and not force_rebind:
            self.logger.warning("%s: already bound, ignoring bind()", what)
            return
        if grad_req != "write":
            raise ParamError(f"{what}: grad_req must be 'write', got {grad_req!r}")
        given = [name for name, _ in data_shapes]
        if given != self._data_names:
            raise ParamError(f"{what}: data_shapes name {given}, data_names are {self._data_names}")
        if label_shapes is not None:
            labels = [name for name, _ in label_shapes]
            if labels != (self._label_names or []):
                raise ParamError(
                    f"{what}: label_shapes name {labels}, label_names are {self._label_names}"
                )
        self.for_training, self.inputs_need_grad = for_training, inputs_need_grad
        self._data_shapes, self._label_shapes = data_shapes, label_shapes
        self._output_shapes = self._compute_output_shapes()
        self.binded = True

    def _compute_output_shapes(self) -> list[tuple[str, tuple[int, ...]]]:
        """[(output name, shape)], from self._data_shapes and self._label_shapes."""
        raise NotImplementedError(f"{type(self).__name__}: write _compute_output_shapes()")

    # -- the computation a subclass writes ----------------------------------------------------

    def forward(self, data_batch: Any, is_train: bool | None = None) -> None:
        raise NotImplementedError(f"{type(self).__name__}: write forward()")

    def backward(self, out_grads: Any = None) -> None:
        raise NotImplementedError(f"{type(self).__name__}: write backward()")

    def get_outputs(self, merge_multi_context: bool = True) -> list[Any]:
        raise NotImplementedError(f"{type(self).__name__}: write get_outputs()")

    def get_input_grads(self, merge_multi_context: bool = True) -> list[Any]:
        raise NotImplementedError(f"{type(self).__name__}: write get_input_grads()")

    def install_monitor(self, mon: Any) -> None:
        raise NotImplementedError(f"{type(self).__name__}: no executors to monitor")


class PythonLossModule(PythonModule):
    """A loss in Python: outputs the scores it gets (one data input, one label input);
    backward() sets the scores' gradient to grad_func(scores, labels) (an NDArray or
    anything nd.array takes). Without grad_func, a subclass writes _backward_impl()."""

    def __init__(
        self,
        name: str = "pyloss",
        data_names: Sequence[str] = ("data",),
        label_names: Sequence[str] = ("softmax_label",),
        logger: Any = logging,
        grad_func: Callable[[Any, Any], Any] | None = None,
    ) -> None:
        super().__init__(data_names, label_names, [f"{name}_output"], logger=logger)
        for what, names in (("data_names", data_names), ("label_names", label_names)):
            if len(names) != 1:
                raise ParamError(f"PythonLossModule: {what} must name one input, got {names}")
        if grad_func is not None and not callable(grad_func):
            raise ParamError(f"PythonLossModule: grad_func must be callable, got {grad_func!r}")
        self._name = name
        self._grad_func = grad_func
        self._scores: Any = None
        self._labels: Any = None
        self._scores_grad: Any = None

    def _compute_output_shapes(self) -> list[tuple[str, tuple[int, ...]]]:
        return [(f"{self._name}_output", tuple(self._data_shapes[0][1]))]

    def forward(self, data_batch: Any, is_train: bool | None = None) -> None:
        """Keep the scores (and, when training, the labels) for backward()."""
        self._scores = data_batch.data[0]
        if is_train is None:
            is_train = self.for_training
        if is_train:
            if not data_batch.label:
                raise NNVMError("PythonLossModule.forward: a training batch needs labels")
            self._labels = data_batch.label[0]

    def get_outputs(self, merge_multi_context: bool = True) -> list[Any]:
        """[scores]: the loss module passes its input through."""
        return [self._scores]

    def backward(self, out_grads: Any = None) -> None:
        if out_grads is not None:
            raise ParamError("PythonLossModule.backward: a loss takes no out_grads")
        if not self.for_training:
            raise NNVMError("PythonLossModule.backward: bound with for_training=False")
        self._backward_impl()

    def _backward_impl(self) -> None:
        """self._scores_grad = the loss's gradient with respect to self._scores."""
        from nnvmpy import nd
        from nnvmpy.ndarray.ndarray import NDArray

        if self._grad_func is None:
            raise NotImplementedError(
                "PythonLossModule: give grad_func, or write _backward_impl() in a subclass"
            )
        grad = self._grad_func(self._scores, self._labels)
        self._scores_grad = grad if isinstance(grad, NDArray) else nd.array(grad)

    def get_input_grads(self, merge_multi_context: bool = True) -> list[Any]:
        """[the gradient backward() computed for the scores]."""
        return [self._scores_grad]


__all__ = ["PythonLossModule", "PythonModule"]
