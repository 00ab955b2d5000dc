"""Gradient compression with error feedback: MXNet 1.9.1's '1bit' and '2bit' pushes.

Each device's gradient is quantized before it is summed, and what the quantization drops
is kept in a residual (one per key and per position in the pushed list) and added to the
next gradient from there, so small updates are delayed, never lost. With v = grad +
residual, elementwise:

    '2bit' (threshold t > 0):  v >= t -> t,   v <= -t -> -t,   else 0
    '1bit' (threshold t):      v > t  -> +1,  else -1

and the residual becomes v minus what was sent. MXNet packs the quantized values into 2
(or 1) bits for the wire; in one process nothing travels, so nnvmpy sums the dequantized
values straight away: the arithmetic, and so every result, is the same.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..base import NNVMError

_TYPES = ("none", "1bit", "2bit")
_DEFAULT_THRESHOLD = 0.5


def _sent_2bit(v: Any, t: float) -> Any:
    return (v >= t) * t - (v <= -t) * t


def _sent_1bit(v: Any, t: float) -> Any:
    return (v > t) * 2.0 - 1.0


_SENT = {"2bit": _sent_2bit, "1bit": _sent_1bit}


class GradientCompression:
    """Parsed compression parameters and the residuals of one store."""

    def __init__(self, params: Any) -> None:
        if not isinstance(params, Mapping):
            raise NNVMError(
                "KVStore.set_gradient_compression: compression_params must be a dict such as "
                f"{{'type': '2bit', 'threshold': 0.5}}, got {type(params).__name__}"
            )
        unknown = sorted(set(params) - {"type", "threshold"})
        if unknown:
            raise NNVMError(
                f"KVStore.set_gradient_compression: unknown parameters {unknown}; "
                "expected 'type' and optionally 'threshold'"
            )
        if "type" not in params:
            raise NNVMError(
                f"KVStore.set_gradient_compression: 'type' is required, one of {list(_TYPES)}"
            )
        kind = params["type"]
        if not isinstance(kind, str) or kind.lower() not in _TYPES:
            raise NNVMError(
                f"KVStore.set_gradient_compression: unknown type {kind!r} for gradient "
                f"compression; expected one of {list(_TYPES)}"
            )
        try:
            threshold = float(params.get("threshold", _DEFAULT_THRESHOLD))
        except (TypeError, ValueError):
            raise NNVMError(
                "KVStore.set_gradient_compression: threshold must be a number, got "
                f"{params['threshold']!r}"
            ) from None
        self.type = kind.lower()
        if self.type == "2bit" and not threshold > 0:
            raise NNVMError(
                f"KVStore.set_gradient_compression: '2bit' needs a threshold > 0, got {threshold}"
            )
        self.threshold = threshold
        self._residuals: dict[tuple[Any, int], Any] = {}

    @property
    def active(self) -> bool:
        """False for type 'none': gradients are pushed as they are."""
        return self.type != "none"

    def get_params(self) -> dict[str, Any]:
        """The parameters in MXNet's form (what set_gradient_compression accepted)."""
        return {"type": self.type, "threshold": self.threshold}

    def quantize(self, key: Any, values: list[Any]) -> list[Any]:
        """The dequantized value each pushed gradient sends; updates the key's residuals.

        Engine operations only: they order after the writes of the gradients and before
        the next push of the same key, as a push does."""
        if not self.active:
            return values
        return [self._quantize_one(key, i, g) for i, g in enumerate(values)]

    def _quantize_one(self, key: Any, index: int, grad: Any) -> Any:
        from nnvmpy import ndarray as nd

        residual = self._residuals.get((key, index))
        if residual is None or residual.shape != grad.shape or residual.dtype != grad.dtype:
            residual = nd.zeros(grad.shape, ctx=grad.context, dtype=grad.dtype)
            self._residuals[(key, index)] = residual
        if grad.context != residual.context:
            grad = grad.as_in_context(residual.context)
        t = self.threshold
        v = grad + residual
        sent = _SENT[self.type](v, t)
        (v - sent).copyto(residual)
        return sent


__all__ = ["GradientCompression"]
