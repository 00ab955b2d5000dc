"""SequentialModule: modules chained so that each one's outputs are the next one's data.

MXNet 1.x's container for composing modules by hand (a Module, then a PythonLossModule,
...). bind() binds each module on the output shapes of the one before it, every module
after the first with inputs_need_grad so that backward() can hand each module's input
gradients to the module before it. Modules added with take_labels=True get the batch's
labels (the same ones for all of them) and feed update_metric; auto_wiring=True renames
the incoming shapes to the module's own data_names. A symbolic graph does the same job
with less copying; this is the handy tool for mixing modules of different kinds.
"""

from __future__ import annotations

import copy
import logging
from typing import Any

from ..base import NNVMError, ParamError
from .base_module import BaseModule
from .module import _DEFAULT_INIT


class SequentialModule(BaseModule):
    """A chain of modules (see the module doc)."""

    META_TAKE_LABELS = "take_labels"
    META_AUTO_WIRING = "auto_wiring"
    _META_KEYS = (META_AUTO_WIRING, META_TAKE_LABELS)

    def __init__(self, logger: Any = logging) -> None:
        super().__init__(logger=logger)
        self._modules: list[BaseModule] = []
        self._metas: list[dict[str, Any]] = []
        self._label_shapes: Any = None

    def add(self, module: BaseModule, **kwargs: Any) -> SequentialModule:
        """Append `module`; the chain must be bound and initialized again. Meta keywords:
        take_labels (give this module the batch's labels), auto_wiring (rename the incoming
        shapes to its data_names). Returns self, for chained add() calls."""
        if not isinstance(module, BaseModule):
            raise ParamError(
                f"SequentialModule.add: module must be a module (nv.mod.BaseModule), got "
                f"{type(module).__name__}"
            )
        unknown = sorted(set(kwargs) - set(self._META_KEYS))
        if unknown:
            raise ParamError(
                f"SequentialModule.add: unknown meta {unknown}; known: {list(self._META_KEYS)}"
            )
        self._modules.append(module)
        self._metas.append(dict(kwargs))
        self.binded = self.params_initialized = self.optimizer_initialized = False
        return self

    def _takes_labels(self, i: int) -> bool:
        return bool(self._metas[i].get(self.META_TAKE_LABELS, False))

    def _require(self, what: str, params: bool = False, optimizer: bool = False) -> None:
        if not self.binded:
            raise NNVMError(f"SequentialModule.{what}: call bind() first")
        if params and not self.params_initialized:
            raise NNVMError(f"SequentialModule.{what}: call init_params() first")
        if optimizer and not self.optimizer_initialized:
            raise NNVMError(f"SequentialModule.{what}: call init_optimizer() first")

    # -- names and shapes: the first module's inputs, the last module's outputs ---------------

    @property
    def data_names(self) -> list[str]:
        return list(self._modules[0].data_names) if self._modules else []  # type: ignore[attr-defined]

    @property
    def output_names(self) -> list[str]:
        return list(self._modules[-1].output_names) if self._modules else []  # type: ignore[attr-defined]

    @property
    def data_shapes(self) -> Any:
        self._require("data_shapes")
        return self._modules[0].data_shapes  # type: ignore[attr-defined]

    @property
    def label_shapes(self) -> Any:
        """The label shapes given to bind(); None when no module takes labels."""
        self._require("label_shapes")
        return self._label_shapes

    @property
    def output_shapes(self) -> Any:
        self._require("output_shapes")
        return self._modules[-1].output_shapes  # type: ignore[attr-defined]

    # -- parameters ---------------------------------------------------------------------------

    def get_params(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """Every module's (arg_params, aux_params), merged into one pair of dicts."""
        self._require("get_params", params=True)
        arg_params: dict[str, Any] = {}
        aux_params: dict[str, Any] = {}
        for module in self._modules:
            arg, aux = module.get_params()  # type: ignore[attr-defined]
            arg_params.update(arg)
            aux_params.update(aux)
        return arg_params, aux_params

    def init_params(
        self,
        initializer: Any = _DEFAULT_INIT,
        arg_params: dict[str, Any] | None = None,
        aux_params: dict[str, Any] | None = None,
        allow_missing: bool = False,
        force_init: bool = False,
        allow_extra: bool = False,
    ) -> None:
        """Initialize every module from the same arrays and initializer. The given dicts
        cover the whole chain, so each module ignores the others' names (allow_extra);
        two modules with a parameter of the same name raise ParamError."""
        if self.params_initialized and not force_init:
            return
        self._require("init_params")
        owner: dict[str, int] = {}
        for i, module in enumerate(self._modules):
            module.init_params(  # type: ignore[attr-defined]
                initializer=initializer,
                arg_params=arg_params,
                aux_params=aux_params,
                allow_missing=allow_missing,
                force_init=force_init,
                allow_extra=True,
            )
            arg, aux = module.get_params()  # type: ignore[attr-defined]
            for name in [*arg, *aux]:
                if name in owner:
                    raise ParamError(
                        f"SequentialModule.init_params: parameter {name!r} of module {i} "
                        f"({type(module).__name__}) is also a parameter of module {owner[name]}"
                    )
                owner[name] = i
        self._check_extra(arg_params, aux_params, owner, allow_extra)
        self.params_initialized = True

    @staticmethod
    def _check_extra(arg_params: Any, aux_params: Any, owner: dict[str, int], allow: bool) -> None:
        extra = sorted((set(arg_params or ()) | set(aux_params or ())) - set(owner))
        if extra and not allow:
            raise ParamError(
                f"SequentialModule.init_params: {extra} are parameters of no module in the "
                "chain (pass allow_extra=True to ignore them)"
            )

    # -- binding and optimizer ----------------------------------------------------------------

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
        """Bind each module on the previous module's output shapes (see the module doc)."""
        if self.binded and not force_rebind:
            self.logger.warning("SequentialModule.bind: already bound, ignoring bind()")
            return
        if not self._modules:
            raise NNVMError("SequentialModule.bind: the chain is empty; add() modules first")
        if shared_module is not None:
            raise ParamError("SequentialModule.bind: shared_module is not supported")
        if inputs_need_grad and not for_training:
            raise ParamError("SequentialModule.bind: inputs_need_grad needs for_training=True")
        shapes = data_shapes
        for i, module in enumerate(self._modules):
            if self._metas[i].get(self.META_AUTO_WIRING, False):
                shapes = self._wire(i, module, shapes)
            module.bind(  # type: ignore[attr-defined]
                data_shapes=shapes,
                label_shapes=label_shapes if self._takes_labels(i) else None,
                for_training=for_training,
                # the module before needs this module's input gradients for its backward
                inputs_need_grad=bool(inputs_need_grad or (for_training and i > 0)),
                force_rebind=force_rebind,
                shared_module=None,
                grad_req=grad_req,
            )
            shapes = module.output_shapes  # type: ignore[attr-defined]
        any_labels = any(self._takes_labels(i) for i in range(len(self._modules)))
        self._label_shapes = label_shapes if any_labels else None
        self.for_training, self.inputs_need_grad = for_training, inputs_need_grad
        self.binded = True

    @staticmethod
    def _wire(i: int, module: BaseModule, shapes: Any) -> list[tuple[str, Any]]:
        names = list(module.data_names)  # type: ignore[attr-defined]
        if len(names) != len(shapes):
            raise ParamError(
                f"SequentialModule.bind: module {i} (auto_wiring) has data_names {names} for "
                f"{len(shapes)} incoming arrays"
            )
        return [(name, tuple(shape)) for name, (_, shape) in zip(names, shapes)]

    def init_optimizer(
        self,
        kvstore: Any = "local",
        optimizer: Any = "sgd",
        optimizer_params: Any = (("learning_rate", 0.01),),
        force_init: bool = False,
    ) -> None:
        """The same optimizer settings for every module (each gets its own optimizer)."""
        self._require("init_optimizer", params=True)
        if self.optimizer_initialized and not force_init:
            self.logger.warning("SequentialModule.init_optimizer: already initialized, ignoring")
            return
        for module in self._modules:
            module.init_optimizer(  # type: ignore[attr-defined]
                kvstore=kvstore,
                optimizer=optimizer,
                optimizer_params=optimizer_params,
                force_init=force_init,
            )
        self.optimizer_initialized = True

    # -- computation --------------------------------------------------------------------------

    def forward(self, data_batch: Any, is_train: bool | None = None) -> None:
        """Run each module on the previous module's outputs; labels go to the modules
        that take them."""
        self._require("forward", params=True)
        labels = getattr(data_batch, "label", None)
        provide_label = getattr(data_batch, "provide_label", None)
        batch = copy.copy(data_batch)  # keeps pad, index, bucket_key, ...
        for i, module in enumerate(self._modules):
            takes = self._takes_labels(i)
            batch.label = labels if takes else None
            if hasattr(batch, "provide_label"):
                batch.provide_label = provide_label if takes else None
            if self._metas[i].get(self.META_AUTO_WIRING, False) and getattr(
                batch, "provide_data", None
            ):
                batch.provide_data = self._wire(i, module, batch.provide_data)
            module.forward(batch, is_train=is_train)  # type: ignore[attr-defined]
            if i + 1 == len(self._modules):
                break
            batch.data = module.get_outputs()  # type: ignore[attr-defined]
            if hasattr(batch, "provide_data"):  # what a bucketing module downstream reads
                names = [name for name, _ in module.output_shapes]  # type: ignore[attr-defined]
                batch.provide_data = [(n, x.shape) for n, x in zip(names, batch.data)]

    def backward(self, out_grads: Any = None) -> None:
        """Backward through the chain: each module's input gradients are the output
        gradients of the module before it."""
        self._require("backward", params=True)
        for i in range(len(self._modules) - 1, -1, -1):
            self._modules[i].backward(out_grads=out_grads)  # type: ignore[attr-defined]
            if i > 0:
                out_grads = self._modules[i].get_input_grads()  # type: ignore[attr-defined]

    def update(self) -> None:
        self._require("update", params=True, optimizer=True)
        for module in self._modules:
            module.update()  # type: ignore[attr-defined]

    def get_outputs(self, merge_multi_context: bool = True) -> list[Any]:
        """The last module's outputs."""
        self._require("get_outputs", params=True)
        return self._modules[-1].get_outputs(merge_multi_context=merge_multi_context)  # type: ignore[attr-defined]

    def get_input_grads(self, merge_multi_context: bool = True) -> list[Any]:
        """The first module's input gradients (bind with inputs_need_grad=True)."""
        self._require("get_input_grads", params=True)
        if not self.inputs_need_grad:
            raise NNVMError("SequentialModule.get_input_grads: bind with inputs_need_grad=True")
        return self._modules[0].get_input_grads(merge_multi_context=merge_multi_context)  # type: ignore[attr-defined]

    def update_metric(self, eval_metric: Any, labels: Any, pre_sliced: bool = False) -> None:
        """Update the metric with the outputs of every module that takes labels."""
        self._require("update_metric", params=True)
        for i, module in enumerate(self._modules):
            if self._takes_labels(i):
                module.update_metric(eval_metric, labels, pre_sliced)  # type: ignore[attr-defined]

    def install_monitor(self, mon: Any) -> None:
        self._require("install_monitor")
        for module in self._modules:
            module.install_monitor(mon)  # type: ignore[attr-defined]


__all__ = ["SequentialModule"]
