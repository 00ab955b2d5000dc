"""Random initializers: Uniform, Normal, Orthogonal, Xavier, MSRAPrelu (draws via nv.random)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..base import ParamError
from .base import Initializer, _random, register


def _positive(where: str, name: str, value: Any) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ParamError(f"{where}: {name} expects a number, got {value!r}") from None
    if not number > 0:
        raise ParamError(f"{where}: {name} must be > 0, got {value!r}")
    return number


def _choice(where: str, name: str, value: Any, allowed: Sequence[str]) -> str:
    if value not in allowed:
        raise ParamError(f"{where}: {name} expects one of {list(allowed)}, got {value!r}")
    return str(value)


@register
class Uniform(Initializer):
    """Weights ~ U(-scale, scale)."""

    def __init__(self, scale: float = 0.07) -> None:
        super().__init__(scale=scale)
        self.scale = _positive("Uniform", "scale", scale)

    def _init_weight(self, _: str, arr: Any) -> None:
        _random().uniform(-self.scale, self.scale, shape=arr.shape, dtype=arr.dtype, out=arr)


@register
class Normal(Initializer):
    """Weights ~ N(0, sigma^2)."""

    def __init__(self, sigma: float = 0.01) -> None:
        super().__init__(sigma=sigma)
        self.sigma = _positive("Normal", "sigma", sigma)

    def _init_weight(self, _: str, arr: Any) -> None:
        _random().normal(0.0, self.sigma, shape=arr.shape, dtype=arr.dtype, out=arr)


@register
class Orthogonal(Initializer):
    """Weights = scale * an orthonormal basis (Saxe et al. 2013), from the SVD of a random draw.

    The weight is viewed as (out, prod(rest)); its rows (out <= in) or columns are orthonormal.
    """

    def __init__(self, scale: float = 1.414, rand_type: str = "uniform") -> None:
        super().__init__(scale=scale, rand_type=rand_type)
        self.scale = float(scale)
        self.rand_type = _choice("Orthogonal", "rand_type", rand_type, ("uniform", "normal"))

    def _init_weight(self, name: str, arr: Any) -> None:
        if len(arr.shape) < 2:
            raise ParamError(f"Orthogonal: {name!r} needs at least 2 dimensions, got {arr.shape}")
        nout, nin = arr.shape[0], math.prod(arr.shape[1:])
        draw = _random().uniform if self.rand_type == "uniform" else _random().normal
        args = (-1.0, 1.0) if self.rand_type == "uniform" else (0.0, 1.0)
        tmp = draw(*args, shape=(nout, nin), dtype="float64").asnumpy()
        u, _, v = np.linalg.svd(tmp, full_matrices=False)
        q = u if u.shape == tmp.shape else v
        arr[:] = (self.scale * q.reshape(arr.shape)).astype(arr.dtype)


@register
class Xavier(Initializer):
    """Glorot: scale = sqrt(magnitude / factor), factor = (fan_in + fan_out)/2, fan_in or fan_out.

    For an (out, in, *kernel) weight, fan_in = in * prod(kernel), fan_out = out * prod(kernel).
    rnd_type 'uniform' draws U(-scale, scale), 'gaussian' N(0, scale^2).
    """

    def __init__(
        self, rnd_type: str = "uniform", factor_type: str = "avg", magnitude: float = 3
    ) -> None:
        super().__init__(rnd_type=rnd_type, factor_type=factor_type, magnitude=magnitude)
        self.rnd_type = _choice("Xavier", "rnd_type", rnd_type, ("uniform", "gaussian"))
        self.factor_type = _choice("Xavier", "factor_type", factor_type, ("avg", "in", "out"))
        self.magnitude = _positive("Xavier", "magnitude", magnitude)

    def _init_weight(self, name: str, arr: Any) -> None:
        scale = self.scale_for(name, arr.shape)
        if self.rnd_type == "uniform":
            _random().uniform(-scale, scale, shape=arr.shape, dtype=arr.dtype, out=arr)
        else:
            _random().normal(0.0, scale, shape=arr.shape, dtype=arr.dtype, out=arr)

    def scale_for(self, name: str, shape: Sequence[int]) -> float:
        """The bound (uniform) or standard deviation (gaussian) for a weight of this shape."""
        if len(shape) < 2:
            raise ParamError(
                f"{type(self).__name__}: cannot initialize {name!r} of shape {tuple(shape)}; "
                "Xavier needs a weight of at least 2 dimensions"
            )
        hw_scale = math.prod(shape[2:])
        fan_in, fan_out = shape[1] * hw_scale, shape[0] * hw_scale
        factor = {"avg": (fan_in + fan_out) / 2.0, "in": fan_in, "out": fan_out}[self.factor_type]
        return math.sqrt(self.magnitude / factor)


@register
class MSRAPrelu(Xavier):
    """He et al. 2015 for PReLU slope `slope`: Xavier 'gaussian' with magnitude 2/(1+slope^2)."""

    def __init__(self, factor_type: str = "avg", slope: float = 0.25) -> None:
        super().__init__("gaussian", factor_type, 2.0 / (1 + slope**2))
        self._kwargs = {"factor_type": factor_type, "slope": slope}
