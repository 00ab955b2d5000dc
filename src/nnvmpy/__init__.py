"""nnvmpy: an NNVM-style operator system in Python.

One registry of operators with typed attributes; graph passes, an executor, a dependency
engine and Numba kernels consume those attributes. See README.md for a tour.
"""

from __future__ import annotations

from typing import Any

from . import attrs, engine, graph, kernel, ops
from . import ndarray as nd
from .attrs import fcompute, fstateful_compute
from .base import (
    Context,
    EngineError,
    InferError,
    NNVMError,
    OpNotFoundError,
    OpReqType,
    ParamError,
    cpu,
    gpu,
    num_gpus,
)
from .graph import ElemwiseGradUseIn, ElemwiseGradUseNone, ElemwiseGradUseOut
from .infer import elemwise_shape, elemwise_type, shape_assign, type_assign
from .param import Parameter, Shape, field
from .registry import NodeAttrs, Op, OpMap, register_op
from .resource import OpContext, Resource, ResourceRequest

__version__ = "0.1.0"

_LAZY = {
    "sym": ".symbol",
    "symbol": ".symbol",
    "test_utils": ".test_utils",
    "operator": ".operator",
    "simple_op": ".simple_op",
    "executor": ".executor",
    "random": ".random",
}


def __getattr__(name: str) -> Any:
    """Modules that pull in more machinery load on first use, keeping `import nnvmpy` fast."""
    if name in _LAZY:
        import importlib

        module = importlib.import_module(_LAZY[name], __name__)
        globals()[name] = module
        return module
    raise AttributeError(f"module 'nnvmpy' has no attribute {name!r}")


__all__ = [
    "Context",
    "ElemwiseGradUseIn",
    "ElemwiseGradUseNone",
    "ElemwiseGradUseOut",
    "EngineError",
    "InferError",
    "NNVMError",
    "NodeAttrs",
    "Op",
    "OpContext",
    "OpMap",
    "OpNotFoundError",
    "OpReqType",
    "ParamError",
    "Parameter",
    "Resource",
    "ResourceRequest",
    "Shape",
    "attrs",
    "cpu",
    "elemwise_shape",
    "elemwise_type",
    "engine",
    "fcompute",
    "field",
    "fstateful_compute",
    "gpu",
    "graph",
    "kernel",
    "nd",
    "num_gpus",
    "ops",
    "register_op",
    "shape_assign",
    "type_assign",
]
