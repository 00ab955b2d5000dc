"""Errors, write requests, devices and the shape/dtype aliases every layer shares."""

from __future__ import annotations

import enum
import operator
import threading
from typing import Any

import numpy as np

Shape = tuple[int | None, ...]
DType = np.dtype


class NNVMError(Exception):
    """Every error nnvmpy raises on bad input or a failed computation."""


class OpNotFoundError(NNVMError, KeyError):
    """An operator name that is not in the registry."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class ParamError(NNVMError, ValueError):
    """A Parameter field got an unknown key, a wrong type or an out-of-range value."""


class InferError(NNVMError):
    """Shape or type inference found two values that disagree."""


class EngineError(NNVMError):
    """A function pushed to the engine raised; carries the original exception as __cause__."""


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


class Context:
    """A device: type ('cpu' or 'gpu') and id. Equal contexts hash alike."""

    device_type: str
    device_id: int

    def __init__(self, device_type: str | Context, device_id: int = 0) -> None:
        if isinstance(device_type, Context):
            device_id = device_type.device_id
            device_type = device_type.device_type
        if device_type not in ("cpu", "gpu", "cpu_pinned"):
            raise NNVMError(
                f"unknown device type {device_type!r}; expected 'cpu', 'gpu' or 'cpu_pinned'"
            )
        self.device_type = device_type
        self.device_id = int(device_id)

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

    @classmethod
    def default_ctx(cls) -> Context:
        """The innermost `with ctx:` device, else cpu(0)."""
        stack = _ctx_stack()
        return stack[-1] if stack else cpu()

    def __enter__(self) -> Context:
        _ctx_stack().append(self)
        return self

    def __exit__(self, *exc: Any) -> None:
        _ctx_stack().pop()


# Per thread, as MXNet's Context._default_ctx: `with nv.gpu(0):` in one thread must not
# change (or pop) another thread's default device.
_ctx_local = threading.local()


def _ctx_stack() -> list[Context]:
    stack: list[Context] | None = getattr(_ctx_local, "stack", None)
    if stack is None:
        stack = _ctx_local.stack = []
    return stack


def cpu(device_id: int = 0) -> Context:
    """The CPU device (its id is informational, as in MXNet)."""
    return Context("cpu", device_id)


def gpu(device_id: int = 0) -> Context:
    """The GPU with this id; using it needs the `gpu` extra (or NUMBA_ENABLE_CUDASIM=1)."""
    return Context("gpu", device_id)


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


def as_dtype(dtype: Any) -> np.dtype:
    """np.dtype(dtype), with MXNet's string names accepted too."""
    try:
        result: np.dtype = np.dtype(dtype)
    except TypeError as e:
        raise NNVMError(f"unknown dtype {dtype!r}") from e
    return result
