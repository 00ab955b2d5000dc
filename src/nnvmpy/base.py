"""Errors, write requests, devices and the shape/dtype aliases every layer shares."""

from __future__ import annotations

import enum
import operator
import os
import platform
import re
import threading
from typing import Any

import numpy as np

Shape = tuple[int | None, ...]
DType = np.dtype


class NNVMError(Exception):
    """Every error nnvmpy raises on bad input or a failed computation."""


MXNetError = NNVMError  # MXNet's spelling: `except mx.base.MXNetError` catches nnvmpy's errors


class OpNotFoundError(NNVMError, KeyError):
    """An operator name that is not in the registry."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class ParamError(NNVMError, ValueError):
    """A Parameter field got an unknown key, a wrong type or an out-of-range value."""


class InferError(NNVMError):
    """Shape or type inference found two values that disagree."""


class IndexOutOfRange(NNVMError, IndexError):
    """An index outside its axis where an op raises for it (take/pick mode 'raise',
    gather_nd, scatter_nd): an IndexError too, as MXNet's."""


class EngineError(NNVMError):
    """A function pushed to the engine raised; carries the original exception as __cause__.

    When that exception is also one of Python's standard kinds (IndexOutOfRange is an
    IndexError), the EngineError raised at the wait is one too (`engine_error_for`), so
    `except IndexError` catches `nd.gather_nd(...).asnumpy()` as it does in MXNet.
    """


# most specific first; KeyError is left out (its str() quotes the message)
_STANDARD_KINDS = (
    IndexError,
    ZeroDivisionError,
    OverflowError,
    FloatingPointError,
    ArithmeticError,
    ValueError,
    TypeError,
    MemoryError,
)
_engine_error_kinds: dict[type, type[EngineError]] = {}


def engine_error_for(cause: BaseException) -> type[EngineError]:
    """EngineError, or a subclass of it and of the standard kind `cause` belongs to."""
    kind = next((k for k in _STANDARD_KINDS if isinstance(cause, k)), None)
    if kind is None:
        return EngineError
    cls = _engine_error_kinds.get(kind)
    if cls is None:
        cls = _engine_error_kinds[kind] = type(
            f"Engine{kind.__name__}", (EngineError, kind), {"__module__": __name__}
        )
    return cls


class NotImplementedForSymbol(NNVMError):
    """An NDArray-only function called on a Symbol (MXNet's error, e.g. for `bool(symbol)`)."""

    def __init__(self, function: Any, alias: str | None = None, *args: Any) -> None:
        super().__init__(function, alias, *args)
        self.function = getattr(function, "__name__", str(function))
        self.alias = alias
        self.args_ = [str(type(a)) for a in args]

    def __str__(self) -> str:
        msg = f"Function {self.function}"
        if self.alias:
            msg += f" (namely operator {self.alias!r})"
        if self.args_:
            msg += " with arguments (" + ", ".join(self.args_) + ")"
        return msg + " is not implemented for Symbol and only available in NDArray."


# MXNet's Python-version shims, still imported by its tests and user code.
mx_real_t = np.float32  # the default real type of NDArrays
numeric_types: tuple[type, ...] = (float, int, np.generic)
integer_types: tuple[type, ...] = (int, np.integer)
string_types: tuple[type, ...] = (str,)


def py_str(x: bytes | str) -> str:
    """A C string from MXNet's API as a Python str (bytes are UTF-8)."""
    return x.decode("utf-8") if isinstance(x, bytes) else x


def _as_list(obj: Any) -> list[Any]:
    """obj itself when it is a list, else [obj] (MXNet's base._as_list)."""
    return obj if isinstance(obj, list) else [obj]


class OpReqType(enum.IntEnum):
    """How a kernel writes an output (MXNet's OpReqType)."""

    kNullOp = 0
    kWriteTo = 1
    kWriteInplace = 2
    kAddTo = 3

    @classmethod
    def parse(cls, req: OpReqType | str | int) -> OpReqType:
        """Accept the enum, its int value or MXNet's Python strings ('null', 'write', ...)."""
        if isinstance(req, OpReqType):
            return req
        if isinstance(req, str):
            try:
                return _REQ_ALIASES[req]
            except KeyError:
                names = sorted(_REQ_ALIASES)
                raise NNVMError(f"unknown req {req!r}; expected one of {names}") from None
        try:
            return cls(operator.index(req))  # not int(req): 2.7 must not mean kWriteInplace
        except (ValueError, TypeError):
            raise NNVMError(f"unknown req {req!r}; expected 0..3 or a req string") from None


_REQ_ALIASES = {
    "null": OpReqType.kNullOp,
    "write": OpReqType.kWriteTo,
    "inplace": OpReqType.kWriteInplace,
    "add": OpReqType.kAddTo,
    **{m.name: m for m in OpReqType},
}


class _ContextMeta(type):
    """`Context.default_ctx` as MXNet 1.x spells it: a per-thread class property, settable."""

    @property
    def default_ctx(cls) -> Context:
        """The innermost `with ctx:` device, else this thread's default (cpu(0) unless set)."""
        return current_context()

    @default_ctx.setter
    def default_ctx(cls, ctx: Context) -> None:
        set_default_ctx(ctx)


class Context(metaclass=_ContextMeta):
    """A device: type and id. Equal contexts hash alike.

    'cpu_pinned' and 'cpu_shared' are MXNet's page-locked and shared-memory CPU contexts;
    both run CPU kernels (see `kernel_device`); cpu_pinned memory is page-locked where CUDA
    is available (kernel/storage.py), cpu_shared memory is ordinary.
    """

    devtype2str = {1: "cpu", 2: "gpu", 3: "cpu_pinned", 5: "cpu_shared"}
    devstr2type = {v: k for k, v in devtype2str.items()}

    device_type: str
    device_id: int

    def __init__(self, device_type: str | Context, device_id: int = 0) -> None:
        if isinstance(device_type, Context):
            device_id = device_type.device_id
            device_type = device_type.device_type
        if device_type not in self.devstr2type:
            raise NNVMError(
                f"Context: unknown device type {device_type!r}; expected one of "
                f"{list(self.devstr2type)}"
            )
        if isinstance(device_id, str) and device_id.strip().isdigit():  # Context('cpu', '2')
            device_id = int(device_id)
        if isinstance(device_id, bool) or not hasattr(device_id, "__index__"):
            raise NNVMError(f"Context: device_id must be an int, got {device_id!r:.40}")
        self.device_type = device_type
        self.device_id = operator.index(device_id)

    @property
    def device_typeid(self) -> int:
        """MXNet's integer code of the device type (1 cpu, 2 gpu, 3 cpu_pinned, 5 cpu_shared)."""
        return self.devstr2type[self.device_type]

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Context)
            and other.device_type == self.device_type
            and other.device_id == self.device_id
        )

    def __hash__(self) -> int:
        return hash((self.device_type, self.device_id))

    def __repr__(self) -> str:
        return f"{self.device_type}({self.device_id})"

    __str__ = __repr__

    def __enter__(self) -> Context:
        _ctx_stack().append(self)
        return self

    def __exit__(self, *exc: Any) -> None:
        _ctx_stack().pop()

    def empty_cache(self) -> None:
        """MXNet frees cached GPU memory here; nnvmpy's pools release blocks as arrays die."""


# Per thread, as MXNet's Context._default_ctx: `with nv.gpu(0):` in one thread must not
# change (or pop) another thread's default device.
_ctx_local = threading.local()


def _ctx_stack() -> list[Context]:
    stack: list[Context] | None = getattr(_ctx_local, "stack", None)
    if stack is None:
        stack = _ctx_local.stack = []
    return stack


def set_default_ctx(ctx: Context) -> None:
    """Make `ctx` this thread's device outside any `with ctx:` block."""
    if not isinstance(ctx, Context):
        raise NNVMError(f"set_default_context: expected a Context, got {type(ctx).__name__}")
    _ctx_local.default = ctx


def current_context() -> Context:
    """The device new arrays go to: the innermost `with ctx:` block, else the default."""
    stack = _ctx_stack()
    if stack:
        return stack[-1]
    default: Context | None = getattr(_ctx_local, "default", None)
    if default is None:  # one per thread, as MXNet's Context._default_ctx: not one per call
        default = _ctx_local.default = cpu()
    return default


def context_from(value: Any) -> Context | None:
    """A Context from what an op's `ctx` parameter may hold: a Context, MXNet's string form
    'cpu(1)' / 'gpu(0)' / 'cpu_pinned(0)', or ''/None (None: the caller's default)."""
    if value is None or isinstance(value, Context):
        return value
    text = str(value).strip()
    if not text:
        return None
    m = re.fullmatch(r"(\w+)\((\d+)\)", text) or re.fullmatch(r"(\w+)", text)
    if m is None or m.group(1) not in Context.devstr2type:
        raise NNVMError(
            f"ctx: cannot read {value!r} as a device; expected e.g. 'cpu(0)' or 'gpu(1)'"
        )
    return Context(m.group(1), int(m.group(2)) if m.lastindex == 2 else 0)


def kernel_device(ctx: Context) -> str:
    """'gpu' or 'cpu': which FCompute<dev> runs on `ctx` (pinned/shared memory is CPU)."""
    return "gpu" if ctx.device_type == "gpu" else "cpu"


def cpu(device_id: int = 0) -> Context:
    """The CPU device (its id is informational, as in MXNet)."""
    return Context("cpu", device_id)


def gpu(device_id: int = 0) -> Context:
    """The GPU with this id; using it needs the `gpu` extra (or NUMBA_ENABLE_CUDASIM=1)."""
    return Context("gpu", device_id)


def cpu_pinned(device_id: int = 0) -> Context:
    """MXNet's page-locked host memory for asynchronous GPU copies (ordinary memory where
    CUDA is not available)."""
    return Context("cpu_pinned", device_id)


def num_gpus() -> int:
    """Number of CUDA devices numba can see (0 without numba.cuda or a driver)."""
    try:
        from numba import cuda
    except ImportError:
        return 0
    numba_cuda: Any = cuda  # numba is untyped
    try:
        if not numba_cuda.is_available():
            return 0
        return len(numba_cuda.gpus)
    except Exception:
        return 0


#: The dtypes an NDArray may have: MXNet's type flags 0-11 (its file format has no others).
SUPPORTED_DTYPES: tuple[np.dtype, ...] = tuple(
    np.dtype(t)
    for t in (
        np.float32, np.float64, np.float16, np.uint8, np.int32, np.int8, np.int64, np.bool_,
        np.int16, np.uint16, np.uint32, np.uint64,
    )
)  # fmt: skip
_SUPPORTED = frozenset(SUPPORTED_DTYPES)


def as_dtype(dtype: Any, what: str = "dtype") -> np.dtype:
    """np.dtype(dtype), with MXNet's string names accepted too; NNVMError naming `what`
    for anything that is not one of SUPPORTED_DTYPES (object, str, complex, ...)."""
    try:
        result: np.dtype = np.dtype(dtype)
    except (TypeError, ValueError, SyntaxError) as e:  # NumPy's parser: SyntaxError for "i4,(2"
        raise NNVMError(f"{what}: unknown dtype {dtype!r:.60} ({e})") from None
    if result not in _SUPPORTED:
        names = ", ".join(d.name for d in SUPPORTED_DTYPES)
        raise NNVMError(f"{what}: dtype {result} is not supported; expected one of {names}")
    return result


def data_dir_default() -> str:
    """Where downloaded data and models go unless MXNET_HOME says otherwise (MXNet's
    default): %APPDATA%\\mxnet on Windows, ~/.mxnet elsewhere."""
    if platform.system() == "Windows":
        return os.path.join(os.environ.get("APPDATA", ""), "mxnet")
    return os.path.join(os.path.expanduser("~"), ".mxnet")


def data_dir() -> str:
    """The data directory: the MXNET_HOME environment variable, read at each call, else
    `data_dir_default()`."""
    return os.getenv("MXNET_HOME", data_dir_default())


# MXNet's ctypes names (base._LIB, check_call, c_str, SymbolHandle, ...): see capi.py. Last,
# because capi.py imports NNVMError from here.
from .capi import (  # noqa: E402, F401
    _LIB,
    NDArrayHandle,
    SymbolHandle,
    c_array,
    c_str,
    c_str_array,
    check_call,
    mx_uint,
)
