"""Initializers that need no random numbers: Zero, One, Constant, Bilinear, LSTMBias."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..base import ParamError
from .base import Initializer, alias, register


@register
@alias("zeros")
class Zero(Initializer):
    """Weights = 0."""

    def __init__(self) -> None:
        super().__init__()

    def _init_weight(self, _: str, arr: Any) -> None:
        arr[:] = 0


@register
@alias("ones")
class One(Initializer):
    """Weights = 1."""

    def __init__(self) -> None:
        super().__init__()

    def _init_weight(self, _: str, arr: Any) -> None:
        arr[:] = 1


@register
class Constant(Initializer):
    """Weights = `value`, a scalar or an array broadcastable to the weight."""

    def __init__(self, value: Any) -> None:
        super().__init__(value=value)
        self.value = value

    def _init_weight(self, _: str, arr: Any) -> None:
        value = self.value.asnumpy() if hasattr(self.value, "asnumpy") else self.value
        arr[:] = np.broadcast_to(np.asarray(value, dtype=arr.dtype), arr.shape)


@register
class Bilinear(Initializer):
    """The bilinear upsampling filter for Deconvolution/UpSampling weights (bilinear_kernel)."""

    def __init__(self) -> None:
        super().__init__()

    def _init_weight(self, _: str, arr: Any) -> None:
        self._init_bilinear(_, arr)


@register
class LSTMBias(Initializer):
    """LSTM bias: zeros except the forget gate (the second of four gates) = forget_bias."""

    def __init__(self, forget_bias: float = 1.0) -> None:
        super().__init__(forget_bias=forget_bias)
        self.forget_bias = float(forget_bias)

    def _init_weight(self, name: str, arr: Any) -> None:
        if not arr.shape or arr.shape[0] % 4:
            raise ParamError(
                f"LSTMBias: {name!r} needs a first dimension divisible by 4 (the four gates), "
                f"got shape {arr.shape}"
            )
        values = np.zeros(arr.shape, dtype=arr.dtype)
        num_hidden = arr.shape[0] // 4
        values[num_hidden : 2 * num_hidden] = self.forget_bias
        arr[:] = values
