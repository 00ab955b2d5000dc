"""nv.nd.random: MXNet's sampling functions over the random ops.

Scalar parameters select the _random_<dist> op (shape, dtype and ctx say what to make),
NDArray parameters the per-row _sample_<dist> op (the output is the parameters' shape
followed by `shape`), as MXNet's python/mxnet/ndarray/random.py does:

    nd.random.uniform(-1, 1, shape=(2, 3))                       # _random_uniform
    nd.random.normal(nd.array([0, 10]), nd.array([1, 2]), shape=4)  # _sample_normal: (2, 4)

With scalars and neither shape nor out one sample is drawn (shape (1,)), as in MXNet.
Every other op registered as _random_<name> is served here as <name>, as MXNet's module
does: the *_like samplers take an array and draw samples of its shape and dtype,

    nd.random.normal_like(x, loc=0, scale=2)                     # _random_normal_like

Every function returns at once (the op is pushed to the engine); nv.random.seed makes
the numbers reproducible.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..base import Context, ParamError, current_context
from ..signature import OpNamespace
from . import _internal
from .ndarray import NDArray

__all__ = [
    "exponential",
    "gamma",
    "generalized_negative_binomial",
    "multinomial",
    "negative_binomial",
    "normal",
    "pdf_dirichlet",
    "pdf_exponential",
    "pdf_gamma",
    "pdf_generalized_negative_binomial",
    "pdf_negative_binomial",
    "pdf_normal",
    "pdf_poisson",
    "pdf_uniform",
    "poisson",
    "randint",
    "randn",
    "shuffle",
    "uniform",
]


def is_number(x: Any) -> bool:
    return isinstance(x, numbers.Real) and not isinstance(x, np.ndarray)


class MixedParamsError(ParamError, AssertionError):
    """Array and number distribution parameters mixed in one call: MXNet asserts they share
    a type, so this is an AssertionError (and, as a ParamError, a ValueError)."""


def check_params(
    fname: str, names: Sequence[str], values: Sequence[Any], array_type: type, what: str
) -> bool:
    """True when the parameters are arrays (`array_type`), False when numbers; else raise.

    The first parameter decides, as in MXNet's _random_helper.

    Raises:
        ParamError: the first parameter is neither an array nor a number (a ValueError, as
            MXNet's).
        MixedParamsError: a later parameter is not of the first one's kind (an
            AssertionError, as MXNet's).
    """
    first = values[0]
    arrays = isinstance(first, array_type)
    if not arrays and not is_number(first):
        raise ParamError(
            f"{fname}: parameter {names[0]!r} must be a number or an {what}, got "
            f"{type(first).__name__}"
        )
    for name, value in zip(names[1:], values[1:]):
        if arrays and not isinstance(value, array_type):
            raise MixedParamsError(
                f"{fname}: parameter {name!r} must be an {what} like {names[0]!r} (array "
                f"parameters select per-row sampling), got {type(value).__name__}"
            )
        if not arrays and not is_number(value):
            raise MixedParamsError(
                f"{fname}: parameter {name!r} must be a number like {names[0]!r} (distribution "
                f"parameters all have one type), got {type(value).__name__}"
            )
    return arrays


def op_kwargs(shape: Any, dtype: Any, kwargs: dict[str, Any]) -> dict[str, Any]:
    """kwargs plus shape and dtype where given (None: the op's default)."""
    extra = dict(kwargs)
    if shape is not None:
        extra["shape"] = shape
    if dtype is not None:
        extra["dtype"] = dtype
    return extra


def _sample(
    fname: str,
    random_op: str,
    sample_op: str | None,
    params: dict[str, Any],
    shape: Any,
    dtype: Any,
    ctx: Any,
    out: NDArray | None,
    kwargs: dict[str, Any],
) -> Any:
    """Call random_op with numbers, sample_op with NDArrays (MXNet's _random_helper)."""
    names, values = list(params), list(params.values())
    if check_params(f"nd.random.{fname}", names, values, NDArray, "NDArray"):
        if sample_op is None:
            raise ParamError(f"nd.random.{fname}: {names[0]!r} must be a number, got NDArray")
        fn: Callable[..., Any] = getattr(_internal, sample_op)
        return fn(*values, out=out, **op_kwargs(shape, dtype, kwargs))
    if out is not None:  # as in MXNet, out gives the device, and the shape and dtype unless set
        shape = out.shape if shape is None else shape
        dtype = out.dtype if dtype is None else dtype
        ctx = out.context
    elif shape is None:
        shape = 1
    ctx = _context(fname, ctx)
    extra = op_kwargs(shape, dtype, kwargs)
    with ctx:
        return getattr(_internal, random_op)(ctx=str(ctx), out=out, **params, **extra)


def _context(fname: str, ctx: Any) -> Context:
    if ctx is None:
        return current_context()
    if isinstance(ctx, Context):
        return ctx
    raise ParamError(f"nd.random.{fname}: ctx must be a Context such as nv.cpu(0), got {ctx!r}")


def uniform(
    low: Any = 0, high: Any = 1, shape: Any = None, dtype: Any = None, ctx: Any = None,
    out: NDArray | None = None, **kwargs: Any,
) -> Any:  # fmt: skip
    """Samples of a uniform distribution on [low, high).

    Args:
        low, high: numbers, or NDArrays of one shape (one distribution per element).
        shape: samples to draw (per distribution for NDArrays); default one.
        dtype: 'float16', 'float32' (default) or 'float64'.
        ctx: device of the output (numbers only; NDArrays keep theirs).
        out: array to write into.
    """
    return _sample(
        "uniform", "_random_uniform", "_sample_uniform", {"low": low, "high": high},
        shape, dtype, ctx, out, kwargs,
    )  # fmt: skip


def normal(
    loc: Any = 0, scale: Any = 1, shape: Any = None, dtype: Any = None, ctx: Any = None,
    out: NDArray | None = None, **kwargs: Any,
) -> Any:  # fmt: skip
    """Samples of a normal distribution with mean loc and standard deviation scale."""
    if isinstance(loc, NDArray) or isinstance(scale, NDArray):
        params = {"mu": loc, "sigma": scale}
        check_params("nd.random.normal", ["loc", "scale"], [loc, scale], NDArray, "NDArray")
    else:
        params = {"loc": loc, "scale": scale}
    return _sample(
        "normal", "_random_normal", "_sample_normal", params, shape, dtype, ctx, out, kwargs
    )


def randn(*shape: int, **kwargs: Any) -> Any:
    """Standard normal samples of the given shape: randn(2, 3, loc=0, scale=1, dtype=...).

    The shape may also be given as `shape=(2, 3)` (MXNet takes it only positionally).
    """
    if "shape" in kwargs:
        if shape:
            raise ParamError(
                f"nd.random.randn: shape given twice: positionally {shape} and as "
                f"shape={kwargs['shape']!r}"
            )
        given = kwargs.pop("shape")
        shape = tuple(given) if isinstance(given, list | tuple) else (given,)
    loc = kwargs.pop("loc", 0)
    scale = kwargs.pop("scale", 1)
    for name, value in (("loc", loc), ("scale", scale)):
        if not is_number(value):
            raise ParamError(f"nd.random.randn: {name!r} must be a number, got {value!r}")
    dtype = kwargs.pop("dtype", None)
    ctx = kwargs.pop("ctx", None)
    out = kwargs.pop("out", None)
    return _sample(
        "randn", "_random_normal", None, {"loc": loc, "scale": scale},
        shape or None, dtype, ctx, out, kwargs,
    )  # fmt: skip


def poisson(
    lam: Any = 1, shape: Any = None, dtype: Any = None, ctx: Any = None,
    out: NDArray | None = None, **kwargs: Any,
) -> Any:  # fmt: skip
    """Samples of a Poisson distribution with mean lam (returned as floats)."""
    return _sample(
        "poisson", "_random_poisson", "_sample_poisson", {"lam": lam},
        shape, dtype, ctx, out, kwargs,
    )  # fmt: skip


def exponential(
    scale: Any = 1, shape: Any = None, dtype: Any = None, ctx: Any = None,
    out: NDArray | None = None, **kwargs: Any,
) -> Any:  # fmt: skip
    """Samples of an exponential distribution with scale beta = 1 / rate."""
    if is_number(scale) and not scale > 0:
        raise ParamError(f"nd.random.exponential: 'scale' must be > 0, got {scale!r}")
    lam = 1.0 / scale if is_number(scale) or isinstance(scale, NDArray) else scale
    return _sample(
        "exponential", "_random_exponential", "_sample_exponential", {"lam": lam},
        shape, dtype, ctx, out, kwargs,
    )  # fmt: skip


def gamma(
    alpha: Any = 1, beta: Any = 1, shape: Any = None, dtype: Any = None, ctx: Any = None,
    out: NDArray | None = None, **kwargs: Any,
) -> Any:  # fmt: skip
    """Samples of a gamma distribution with shape alpha and scale beta."""
    return _sample(
        "gamma", "_random_gamma", "_sample_gamma", {"alpha": alpha, "beta": beta},
        shape, dtype, ctx, out, kwargs,
    )  # fmt: skip


def negative_binomial(
    k: Any = 1, p: Any = 1, shape: Any = None, dtype: Any = None, ctx: Any = None,
    out: NDArray | None = None, **kwargs: Any,
) -> Any:  # fmt: skip
    """Samples of a negative binomial distribution: failures before the k-th success."""
    return _sample(
        "negative_binomial", "_random_negative_binomial", "_sample_negative_binomial",
        {"k": k, "p": p}, shape, dtype, ctx, out, kwargs,
    )  # fmt: skip


def generalized_negative_binomial(
    mu: Any = 1, alpha: Any = 1, shape: Any = None, dtype: Any = None, ctx: Any = None,
    out: NDArray | None = None, **kwargs: Any,
) -> Any:  # fmt: skip
    """Samples of a generalized negative binomial distribution (mean mu, dispersion alpha)."""
    return _sample(
        "generalized_negative_binomial", "_random_generalized_negative_binomial",
        "_sample_generalized_negative_binomial", {"mu": mu, "alpha": alpha},
        shape, dtype, ctx, out, kwargs,
    )  # fmt: skip


def randint(
    low: int, high: int, shape: Any = None, dtype: Any = None, ctx: Any = None,
    out: NDArray | None = None, **kwargs: Any,
) -> Any:  # fmt: skip
    """Random integers uniform on [low, high); dtype 'int32' (default) or 'int64'."""
    return _sample(
        "randint", "_random_randint", None, {"low": low, "high": high},
        shape, dtype, ctx, out, kwargs,
    )  # fmt: skip


def multinomial(
    data: NDArray, shape: Any = None, get_prob: bool = False, out: Any = None,
    dtype: str = "int32", **kwargs: Any,
) -> Any:  # fmt: skip
    """Draws from the categorical distributions along data's last axis (rows sum to 1).

    Returns the samples, or [samples, log-probabilities] with get_prob=True.
    """
    if not isinstance(data, NDArray):
        raise ParamError(
            f"nd.random.multinomial: 'data' must be an NDArray, got {type(data).__name__}"
        )
    extra = op_kwargs(shape, dtype, kwargs)
    return _internal._sample_multinomial(data, get_prob=get_prob, out=out, **extra)


def shuffle(data: NDArray, **kwargs: Any) -> Any:
    """data with its first axis randomly permuted."""
    if not isinstance(data, NDArray):
        raise ParamError(f"nd.random.shuffle: 'data' must be an NDArray, got {type(data).__name__}")
    return _internal._shuffle(data, **kwargs)


# -- densities: the _random_pdf_* ops ------------------------------------------------------------


def pdf_function(namespace: Any, dist: str, params: str) -> Callable[..., Any]:
    """nd.random.pdf_<dist> (or sym's, from its `_internal` namespace): the density op
    _random_pdf_<dist> called as (sample, <params>, is_log=False)."""
    op = f"_random_pdf_{dist}"

    def pdf(sample: Any, *args: Any, is_log: bool = False, **kwargs: Any) -> Any:
        return getattr(namespace, op)(sample, *args, is_log=is_log, **kwargs)

    pdf.__name__ = pdf.__qualname__ = f"pdf_{dist}"
    pdf.__doc__ = (
        f"Densities of `sample` under the {dist} distributions with parameters ({params}) "
        f"(the op {op}; is_log=True: log-densities). The parameter arrays share one shape "
        "S and the sample's shape starts with S."
    )
    return pdf


pdf_uniform = pdf_function(_internal, "uniform", "low, high")
pdf_normal = pdf_function(_internal, "normal", "mu, sigma")
pdf_gamma = pdf_function(_internal, "gamma", "alpha, beta")
pdf_exponential = pdf_function(_internal, "exponential", "lam")
pdf_poisson = pdf_function(_internal, "poisson", "lam")
pdf_negative_binomial = pdf_function(_internal, "negative_binomial", "k, p")
pdf_generalized_negative_binomial = pdf_function(
    _internal, "generalized_negative_binomial", "mu, alpha"
)
pdf_dirichlet = pdf_function(_internal, "dirichlet", "alpha")


# -- the other _random_<name> ops (the *_like samplers) as <name>, generated on access ----------


def _make(op: Any, name: str = "") -> Any:
    from nnvmpy.ndarray import _make as make_nd_function

    return make_nd_function(op)


_ops = OpNamespace(
    _make,
    internal=True,
    module="nnvmpy.nd.random",
    module_globals=globals(),
    publish_to=globals(),
    prefix="_random_",
)
__getattr__ = _ops.module_getattr
__dir__ = _ops.module_dir
