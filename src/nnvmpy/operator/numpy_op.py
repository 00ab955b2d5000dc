"""MXNet's deprecated `NumpyOp`: an op written as Python methods over NumPy arrays.

Subclass NumpyOp, override `forward(in_data, out_data)` / `backward(out_grad, in_data,
out_data, in_grad)` (lists of NumPy arrays; write the outputs in place), `infer_shape`,
`list_arguments`, `list_outputs`, and call `get_symbol(*inputs, name=...)`. The base class
is the identity. It runs through the Custom op: each NumpyOp instance is registered as a
CustomOpProp of its own, so the registry, passes and engine treat it like any Custom op.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from ..base import NNVMError
from .custom import CustomOp, CustomOpProp, register

_ids = itertools.count()


class NumpyOp:
    """Base class of Python ops over NumPy arrays (MXNet 1.x's mx.operator.NumpyOp)."""

    def __init__(self, need_top_grad: bool = True) -> None:
        self.need_top_grad_ = need_top_grad
        self._op_type: str | None = None

    def forward(self, in_data: list[np.ndarray], out_data: list[np.ndarray]) -> None:
        out_data[0][:] = in_data[0]

    def backward(
        self,
        out_grad: list[np.ndarray],
        in_data: list[np.ndarray],
        out_data: list[np.ndarray],
        in_grad: list[np.ndarray],
    ) -> None:
        in_grad[0][:] = out_grad[0]

    def infer_shape(self, in_shape: list[Any]) -> tuple[list[Any], list[Any]]:
        return in_shape, [in_shape[0]]

    def list_arguments(self) -> list[str]:
        return ["data"]

    def list_outputs(self) -> list[str]:
        return ["output"]

    def need_top_grad(self) -> bool:
        return self.need_top_grad_

    def get_symbol(self, *args: Any, **kwargs: Any) -> Any:
        """A Symbol running this op on the given input symbols (name= names the node)."""
        from nnvmpy import sym

        if self._op_type is None:
            self._op_type = f"_numpy_op_{type(self).__name__}_{next(_ids)}"
            register(self._op_type)(_prop_for(self))
        return sym.Custom(*args, op_type=self._op_type, **kwargs)


def _prop_for(numpy_op: NumpyOp) -> type[CustomOpProp]:
    """The CustomOpProp (and CustomOp) adapting one NumpyOp instance."""

    class _Run(CustomOp):
        def forward(self, is_train: bool, req: Any, in_data: Any, out_data: Any, aux: Any) -> None:
            outs = [o.asnumpy() for o in out_data]
            numpy_op.forward([x.asnumpy() for x in in_data], outs)
            for dst, r, src in zip(out_data, req, outs, strict=True):
                self.assign(dst, r, src)

        def backward(
            self, req: Any, out_grad: Any, in_data: Any, out_data: Any, in_grad: Any, aux: Any
        ) -> None:
            grads = [g.asnumpy() for g in in_grad]
            numpy_op.backward(
                [g.asnumpy() for g in out_grad],
                [x.asnumpy() for x in in_data],
                [o.asnumpy() for o in out_data],
                grads,
            )
            for dst, r, src in zip(in_grad, req, grads, strict=True):
                self.assign(dst, r, src)

    class _Prop(CustomOpProp):
        def __init__(self) -> None:
            super().__init__(need_top_grad=numpy_op.need_top_grad())

        def list_arguments(self) -> list[str]:
            return list(numpy_op.list_arguments())

        def list_outputs(self) -> list[str]:
            return list(numpy_op.list_outputs())

        def infer_shape(self, in_shape: list[Any]) -> tuple[list[Any], list[Any], list[Any]]:
            shapes = numpy_op.infer_shape(in_shape)
            if (
                not isinstance(shapes, tuple | list)
                or len(shapes) not in (2, 3)
                or not all(
                    isinstance(group, tuple | list)
                    and all(isinstance(sh, tuple | list) for sh in group)
                    for group in shapes
                )
            ):
                raise NNVMError(
                    f"{type(numpy_op).__name__}.infer_shape must return (in_shapes, "
                    f"out_shapes), got {shapes!r:.80}"
                )
            return shapes[0], shapes[1], list(shapes[2]) if len(shapes) == 3 else []

        def create_operator(self, ctx: Any, in_shapes: Any, in_dtypes: Any) -> CustomOp:
            return _Run()

    return _Prop


__all__ = ["NumpyOp"]
