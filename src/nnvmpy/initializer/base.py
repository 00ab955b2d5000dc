"""The Initializer base class, InitDesc, the name registry (register/alias/create).

How a parameter is filled: an InitDesc whose attrs carry `__init__` (the JSON of
`Initializer.dumps()`, or a registered name) uses that initializer's `_init_weight`;
otherwise the name's ending picks a hook (`_PATTERNS`, MXNet's order).
"""

from __future__ import annotations

import difflib
import importlib
import json
import logging
import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

import numpy as np

from ..base import NNVMError, ParamError

T = TypeVar("T", bound=type)


class InitDesc(str):
    """A parameter's name plus its attributes (from `Symbol.attr_dict`) and the global init."""

    attrs: dict[str, str]
    global_init: Initializer | None

    def __new__(
        cls,
        name: str,
        attrs: Mapping[str, str] | None = None,
        global_init: Initializer | None = None,
    ) -> InitDesc:
        if not isinstance(name, str):
            raise NNVMError(f"InitDesc: name expects a str, got {type(name).__name__}")
        ret = super().__new__(cls, name)
        ret.attrs = dict(attrs or {})
        ret.global_init = global_init
        return ret


# -- registry ----------------------------------------------------------------------------------

_REGISTRY: dict[str, type[Initializer]] = {}
# initializers registered by a module imported on first use: name -> that module
_LAZY = {"fusedrnn": "..rnn.fused_init"}


def register(klass: T) -> T:
    """Register an Initializer subclass under its lower-case class name (for `create`)."""
    if not (isinstance(klass, type) and issubclass(klass, Initializer)):
        raise NNVMError(f"initializer.register: expects an Initializer subclass, got {klass!r}")
    name = klass.__name__.lower()
    if name in _REGISTRY and _REGISTRY[name] is not klass:
        warnings.warn(
            f"initializer.register: {klass.__module__}.{klass.__name__} replaces "
            f"{_REGISTRY[name].__module__}.{_REGISTRY[name].__name__} as {name!r}",
            UserWarning,
            stacklevel=2,
        )
    _REGISTRY[name] = klass
    return klass


def alias(*aliases: str) -> Callable[[T], T]:
    """Class decorator: also register the initializer under these (lower-cased) names."""

    def decorate(klass: T) -> T:
        for name in aliases:
            _REGISTRY[name.lower()] = klass
        return klass

    return decorate


def create(*args: Any, **kwargs: Any) -> Initializer:
    """An initializer from an instance, a name (+ arguments), a dumps() JSON string or a dict.

    >>> create("xavier", magnitude=2).dumps()
    '["xavier", {"rnd_type": "uniform", "factor_type": "avg", "magnitude": 2}]'
    >>> create('["normal", {"sigma": 0.5}]').sigma
    0.5
    """
    if args:
        spec, args = args[0], args[1:]
    elif "initializer" in kwargs:
        spec = kwargs.pop("initializer")
    else:
        raise NNVMError("initializer.create: expects an initializer name, JSON or instance")
    if isinstance(spec, Initializer):
        if args or kwargs:
            raise NNVMError("initializer.create: an instance takes no further arguments")
        return spec
    if isinstance(spec, Mapping):
        return create(**spec)
    if not isinstance(spec, str):
        raise NNVMError(
            f"initializer.create: expects a name, JSON string or Initializer, got {spec!r}"
        )
    if spec.lstrip().startswith(("[", "{")):
        if args or kwargs:
            raise NNVMError("initializer.create: a JSON spec takes no further arguments")
        return _from_json(spec)
    name = spec.lower()
    klass = _REGISTRY.get(name)
    if klass is None and name in _LAZY:  # defined beside what it initialises (nv.rnn)
        importlib.import_module(_LAZY[name], __package__)
        klass = _REGISTRY.get(name)
    if klass is None:
        close = difflib.get_close_matches(name, _REGISTRY, n=3)
        hint = f"; did you mean {close}?" if close else ""
        raise NNVMError(
            f"initializer.create: unknown initializer {spec!r}{hint} "
            f"(registered: {sorted(_REGISTRY)})"
        )
    return klass(*args, **kwargs)


def _from_json(text: str) -> Initializer:
    """`["name", {kwargs}]` (what dumps() writes) or `{"initializer": name, ...}`."""
    try:
        spec = json.loads(text)
    except json.JSONDecodeError as e:
        raise NNVMError(f"initializer.create: invalid JSON {text!r}: {e}") from None
    if isinstance(spec, dict):
        return create(**spec)
    if (
        not isinstance(spec, list)
        or len(spec) != 2
        or not isinstance(spec[0], str)
        or not isinstance(spec[1], dict)
    ):
        raise NNVMError(
            f'initializer.create: JSON {text!r} is not of the form ["name", {{kwargs}}]'
        )
    return create(spec[0], **spec[1])


# -- base class ----------------------------------------------------------------------------


def _random() -> Any:
    from nnvmpy import random

    return random


def _mean_abs_stat(arr: Any) -> str:
    """MXNet's default verbose statistic: ||x|| / sqrt(size)."""
    values = np.asarray(arr.asnumpy(), dtype=np.float64)
    return str(float(np.linalg.norm(values)) / math.sqrt(max(values.size, 1)))


# Name endings that decide the rule when no `__init__` attribute does, in MXNet's order.
_PATTERNS = (
    ("weight", "_init_weight"),
    ("bias", "_init_bias"),
    ("gamma", "_init_gamma"),
    ("beta", "_init_beta"),
    ("min", "_init_zero"),
    ("max", "_init_one"),
    ("weight_quantize", "_init_quantized_weight"),
    ("bias_quantize", "_init_quantized_bias"),
    ("moving_mean", "_init_zero"),
    ("moving_var", "_init_one"),
    ("moving_inv_var", "_init_zero"),
    ("moving_avg", "_init_zero"),
)


class Initializer:
    """Base class: routes a parameter to an `_init_*` hook by its name, then fills it.

    Subclasses implement `_init_weight(name, arr)` (and may override the other hooks);
    keyword arguments given to `__init__` are what `dumps()` records.
    """

    def __init__(self, **kwargs: Any) -> None:
        self._kwargs = kwargs
        self._verbose = False
        self._print_func: Callable[[Any], str] | None = None

    def set_verbosity(
        self, verbose: bool = False, print_func: Callable[[Any], str] | None = None
    ) -> Initializer:
        """Log each initialized array with `print_func(arr)` (default ||x|| / sqrt(size))."""
        self._verbose = verbose
        self._print_func = print_func or _mean_abs_stat
        return self

    def _verbose_print(self, desc: str, init: str, arr: Any) -> None:
        if self._verbose and self._print_func:
            logging.info("Initialized %s as %s: %s", desc, init, self._print_func(arr))

    def dumps(self) -> str:
        """JSON `["name", {kwargs}]` that `create()` (and the `__init__` attribute) read back.

        >>> create("normal", sigma=0.5).dumps()
        '["normal", {"sigma": 0.5}]'
        """
        return json.dumps([type(self).__name__.lower(), _jsonable(self._kwargs)])

    def __call__(self, desc: Any, arr: Any) -> None:
        """Fill `arr` (an NDArray) for the parameter `desc` (an InitDesc, or a plain name)."""
        _check_array(type(self).__name__, desc, arr)
        if not isinstance(desc, InitDesc):
            self._legacy_init(desc, arr)
            return
        if desc.global_init is None:
            desc.global_init = self
        init = desc.attrs.get("__init__", "")
        if init:
            try:
                chosen = create(init)
            except NNVMError as e:
                raise NNVMError(
                    f"{type(self).__name__}: '__init__' attribute of {desc!r}: {e}"
                ) from e
            chosen._init_weight(desc, arr)
            self._verbose_print(desc, init, arr)
            return
        for ending, hook in _PATTERNS:
            if desc.endswith(ending):
                getattr(self, hook)(desc, arr)
                self._verbose_print(desc, ending, arr)
                return
        self._init_default(desc, arr)

    def _legacy_init(self, name: str, arr: Any) -> None:
        """init(name, arr) with a plain str: MXNet's older name rules (upsampling, stn_loc)."""
        if name.startswith("upsampling"):
            self._init_bilinear(name, arr)
        elif name.startswith("stn_loc") and name.endswith("weight"):
            self._init_zero(name, arr)
        elif name.startswith("stn_loc") and name.endswith("bias"):
            self._init_loc_bias(name, arr)
        else:
            self(InitDesc(name, global_init=self), arr)

    # hooks ----------------------------------------------------------------------------------

    def _init_bilinear(self, _: str, arr: Any) -> None:
        arr[:] = bilinear_kernel(arr.shape).astype(arr.dtype)

    def _init_loc_bias(self, name: str, arr: Any) -> None:
        # identity affine transform [[1, 0, 0], [0, 1, 0]] for a spatial transformer
        if arr.shape != (6,):
            raise ParamError(f"{type(self).__name__}: {name!r} needs shape (6,), got {arr.shape}")
        arr[:] = np.array([1.0, 0, 0, 0, 1.0, 0], dtype=arr.dtype)

    def _init_zero(self, _: str, arr: Any) -> None:
        arr[:] = 0.0

    def _init_one(self, _: str, arr: Any) -> None:
        arr[:] = 1.0

    def _init_bias(self, _: str, arr: Any) -> None:
        arr[:] = 0.0

    def _init_gamma(self, _: str, arr: Any) -> None:
        arr[:] = 1.0

    def _init_beta(self, _: str, arr: Any) -> None:
        arr[:] = 0.0

    def _init_quantized_weight(self, _: str, arr: Any) -> None:
        # int8 weights of a quantized graph: random integers in [-127, 127). MXNet 1.9.1
        # draws one integer and fills the whole array with it; each element gets its own.
        values = _random().randint(-127, 127, shape=arr.shape, dtype="int32", ctx=arr.context)
        arr[:] = values.astype(arr.dtype)

    def _init_quantized_bias(self, _: str, arr: Any) -> None:
        arr[:] = 0

    def _init_weight(self, name: str, arr: Any) -> None:
        raise NotImplementedError(f"{type(self).__name__} must implement _init_weight")

    def _init_default(self, name: str, _: Any) -> None:
        raise ParamError(
            f"{type(self).__name__}: unknown initialization pattern for {name!r}; names ending "
            "in weight, bias, gamma, beta, min, max, weight_quantize, bias_quantize or moving_* "
            "have a default rule. Give the variable an initializer: "
            "sym.Variable(name, init=nv.init.Xavier())"
        )


def _check_array(where: str, desc: Any, arr: Any) -> None:
    from nnvmpy.ndarray import NDArray

    if not isinstance(desc, str):
        raise NNVMError(f"{where}: the parameter name must be a str or InitDesc, got {desc!r}")
    if not isinstance(arr, NDArray):
        raise NNVMError(f"{where}: {desc!r} must be an NDArray, got {type(arr).__name__}")


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if hasattr(value, "asnumpy"):
        value = value.asnumpy()
    if isinstance(value, np.ndarray | np.generic):
        return value.tolist()
    return value


def bilinear_kernel(shape: Sequence[int]) -> np.ndarray:
    """The bilinear upsampling filter (FCN) for an (out, in, kh, kw) weight.

    w[y, x] = (1 - |x/f - c|) (1 - |y/f - c|), f = ceil(kw / 2), c = (2f - 1 - f mod 2) / 2f.
    """
    if len(shape) != 4:
        raise ParamError(
            f"Bilinear: needs a 4-D (out, in, kh, kw) weight, got shape {tuple(shape)}"
        )
    kh, kw = int(shape[2]), int(shape[3])
    f = math.ceil(kw / 2.0)
    c = (2 * f - 1 - f % 2) / (2.0 * f)
    x = np.arange(kw, dtype=np.float64)
    y = np.arange(kh, dtype=np.float64)
    plane = np.outer(1 - np.abs(y / f - c), 1 - np.abs(x / f - c))
    return np.broadcast_to(plane, tuple(shape)).astype(np.float32)
