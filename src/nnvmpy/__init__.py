"""nnvmpy: an NNVM-style operator system in Python.

One registry of operators with typed attributes; graph passes, an executor, a dependency
engine and Numba kernels consume those attributes. See README.md for a tour.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import attribute, attrs, context, engine, graph, kernel, name, ops, util
from . import config as _config
from . import ndarray as nd
from .attribute import AttrScope
from .attrs import fcompute, fstateful_compute
from .base import (
    Context,
    EngineError,
    IndexOutOfRange,
    InferError,
    MXNetError,
    NNVMError,
    OpNotFoundError,
    OpReqType,
    ParamError,
    cpu,
    cpu_pinned,
    current_context,
    gpu,
    num_gpus,
)
from .fusion.trace import fuse
from .graph import ElemwiseGradUseIn, ElemwiseGradUseNone, ElemwiseGradUseOut
from .infer import elemwise_shape, elemwise_type, shape_assign, type_assign
from .param import Parameter, Shape, field
from .registry import NodeAttrs, Op, OpMap, register_op
from .resource import OpContext, Resource, ResourceRequest
from .util import (
    is_np_array,
    is_np_shape,
    np_array,
    np_shape,
    reset_np,
    set_np,
    set_np_shape,
    use_np,
    use_np_array,
    use_np_shape,
)

__version__ = "0.1.0"

_LAZY = {
    "sym": ".symbol",
    "symbol": ".symbol",
    "test_utils": ".test_utils",
    "operator": ".operator",
    "simple_op": ".simple_op",
    "executor": ".executor",
    "random": ".random",
    "initializer": ".initializer",
    "init": ".init",
    "runtime": ".runtime",
    "autograd": ".autograd",
    "callback": ".callback",
    "optimizer": ".optimizer",
    "lr_scheduler": ".lr_scheduler",
    "rnn": ".rnn",
    "contrib": ".contrib",
    "io": ".io",
    "metric": ".metric",
    "mod": ".module",
    "module": ".module",
    "model": ".model",
    "viz": ".viz",
    "mon": ".monitor",
    "monitor": ".monitor",
    "visualization": ".viz",
    "profiler": ".profiler",
    "kv": ".kvstore",
    "kvstore": ".kvstore",
    "recordio": ".recordio",
}


if TYPE_CHECKING:  # the lazy modules as type checkers and IDEs should see them
    from nnvmpy import autograd as autograd
    from nnvmpy import contrib as contrib
    from nnvmpy import executor as executor
    from nnvmpy import init as init
    from nnvmpy import initializer as initializer
    from nnvmpy import kvstore as kv  # noqa: F401 - nv.kv
    from nnvmpy import kvstore as kvstore
    from nnvmpy import lr_scheduler as lr_scheduler
    from nnvmpy import operator as operator
    from nnvmpy import optimizer as optimizer
    from nnvmpy import profiler as profiler
    from nnvmpy import random as random
    from nnvmpy import recordio as recordio
    from nnvmpy import rnn as rnn
    from nnvmpy import runtime as runtime
    from nnvmpy import simple_op as simple_op
    from nnvmpy import symbol as sym  # noqa: F401 - nv.sym
    from nnvmpy import symbol as symbol
    from nnvmpy import test_utils as test_utils
    from nnvmpy import viz as visualization  # noqa: F401 - MXNet's long name of nv.viz
    from nnvmpy import viz as viz

if _config.PROFILER_AUTOSTART.get() == "1":  # profile the whole run, dump at exit
    from nnvmpy import profiler as _profiler

    _profiler.autostart()


def __getattr__(name: str) -> Any:
    """Modules that pull in more machinery load on first use, keeping `import nnvmpy` fast."""
    if name in _LAZY:
        import importlib

        module = importlib.import_module(_LAZY[name], __name__)
        globals()[name] = module
        return module
    raise AttributeError(f"module 'nnvmpy' has no attribute {name!r}")


__all__ = [
    "AttrScope",
    "Context",
    "ElemwiseGradUseIn",
    "ElemwiseGradUseNone",
    "ElemwiseGradUseOut",
    "EngineError",
    "IndexOutOfRange",
    "InferError",
    "MXNetError",
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
    "attribute",
    "attrs",
    "context",
    "cpu",
    "cpu_pinned",
    "current_context",
    "elemwise_shape",
    "elemwise_type",
    "engine",
    "fcompute",
    "field",
    "fstateful_compute",
    "fuse",
    "gpu",
    "graph",
    "is_np_array",
    "is_np_shape",
    "kernel",
    "name",
    "nd",
    "np_array",
    "np_shape",
    "num_gpus",
    "ops",
    "register_op",
    "reset_np",
    "set_np",
    "set_np_shape",
    "shape_assign",
    "type_assign",
    "use_np",
    "use_np_array",
    "use_np_shape",
    "util",
]
