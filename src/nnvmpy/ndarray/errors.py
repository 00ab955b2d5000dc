"""NDArray's error classes: NNVMErrors that are also the builtin error Python code expects."""

from __future__ import annotations

from ..base import NNVMError


class NDArrayValueError(NNVMError, ValueError):
    """A bad value for an NDArray method (a ValueError, as MXNet raises)."""


class NDArrayTypeError(NNVMError, TypeError):
    """An argument of the wrong type (a TypeError, as MXNet and Python raise)."""


class NDArrayIndexError(NNVMError, IndexError):
    """A bad index (an IndexError, so that iteration and `x[i]` behave as in Python)."""


__all__ = ["NDArrayIndexError", "NDArrayTypeError", "NDArrayValueError"]
