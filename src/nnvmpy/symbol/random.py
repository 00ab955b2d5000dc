"""nv.sym.random: MXNet's sampling functions composing the random ops into symbols.

Number parameters select _random_<dist>, Symbol parameters the per-row _sample_<dist>
(MXNet's python/mxnet/symbol/random.py). Without `shape` a scalar sampler's output shape
is left for shape inference to find, e.g. from what it is added to. Every other op
registered as _random_<name> (the *_like samplers) is served here as <name>.

    noise = nv.sym.random.normal(0, 0.1, shape=(32, 10))
    per_row = nv.sym.random.uniform(nv.sym.Variable("low"), nv.sym.Variable("high"), shape=2)
"""

from __future__ import annotations

from typing import Any

from ..base import ParamError
from ..ndarray.random import check_params, is_number, op_kwargs, pdf_function
from ..signature import OpNamespace
from . import _internal
from .symbol import Symbol

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


def _sample(
    fname: str,
    random_op: str,
    sample_op: str | None,
    params: dict[str, Any],
    shape: Any,
    dtype: Any,
    kwargs: dict[str, Any],
) -> Symbol:
    names, values = list(params), list(params.values())
    extra = op_kwargs(shape, dtype, kwargs)
    if check_params(f"sym.random.{fname}", names, values, Symbol, "Symbol"):
        if sample_op is None:
            raise ParamError(f"sym.random.{fname}: {names[0]!r} must be a number, got Symbol")
        return getattr(_internal, sample_op)(*values, **extra)
    return getattr(_internal, random_op)(**params, **extra)


def uniform(
    low: Any = 0, high: Any = 1, shape: Any = None, dtype: Any = None, **kwargs: Any
) -> Symbol:
    """A uniform sampler on [low, high): numbers, or Symbols of per-row bounds."""
    return _sample(
        "uniform", "_random_uniform", "_sample_uniform", {"low": low, "high": high},
        shape, dtype, kwargs,
    )  # fmt: skip


def normal(
    loc: Any = 0, scale: Any = 1, shape: Any = None, dtype: Any = None, **kwargs: Any
) -> Symbol:
    """A normal sampler with mean loc and standard deviation scale."""
    if isinstance(loc, Symbol) or isinstance(scale, Symbol):
        check_params("sym.random.normal", ["loc", "scale"], [loc, scale], Symbol, "Symbol")
        params = {"mu": loc, "sigma": scale}
    else:
        params = {"loc": loc, "scale": scale}
    return _sample("normal", "_random_normal", "_sample_normal", params, shape, dtype, kwargs)


def randn(*shape: int, **kwargs: Any) -> Symbol:
    """A standard normal sampler of the given shape (loc, scale, dtype as keywords)."""
    loc = kwargs.pop("loc", 0)
    scale = kwargs.pop("scale", 1)
    for name, value in (("loc", loc), ("scale", scale)):
        if not is_number(value):
            raise ParamError(f"sym.random.randn: {name!r} must be a number, got {value!r}")
    dtype = kwargs.pop("dtype", None)
    params = {"loc": loc, "scale": scale}
    return _sample("randn", "_random_normal", None, params, shape or None, dtype, kwargs)


def poisson(lam: Any = 1, shape: Any = None, dtype: Any = None, **kwargs: Any) -> Symbol:
    """A Poisson sampler with mean lam (floats)."""
    return _sample(
        "poisson", "_random_poisson", "_sample_poisson", {"lam": lam}, shape, dtype, kwargs
    )


def exponential(scale: Any = 1, shape: Any = None, dtype: Any = None, **kwargs: Any) -> Symbol:
    """An exponential sampler with scale beta = 1 / rate."""
    if is_number(scale) and not scale > 0:
        raise ParamError(f"sym.random.exponential: 'scale' must be > 0, got {scale!r}")
    lam = 1.0 / scale if is_number(scale) or isinstance(scale, Symbol) else scale
    return _sample(
        "exponential", "_random_exponential", "_sample_exponential", {"lam": lam},
        shape, dtype, kwargs,
    )  # fmt: skip


def gamma(
    alpha: Any = 1, beta: Any = 1, shape: Any = None, dtype: Any = None, **kwargs: Any
) -> Symbol:
    """A gamma sampler with shape alpha and scale beta."""
    return _sample(
        "gamma", "_random_gamma", "_sample_gamma", {"alpha": alpha, "beta": beta},
        shape, dtype, kwargs,
    )  # fmt: skip


def negative_binomial(
    k: Any = 1, p: Any = 1, shape: Any = None, dtype: Any = None, **kwargs: Any
) -> Symbol:
    """A negative binomial sampler: failures before the k-th success."""
    return _sample(
        "negative_binomial", "_random_negative_binomial", "_sample_negative_binomial",
        {"k": k, "p": p}, shape, dtype, kwargs,
    )  # fmt: skip


def generalized_negative_binomial(
    mu: Any = 1, alpha: Any = 1, shape: Any = None, dtype: Any = None, **kwargs: Any
) -> Symbol:
    """A generalized negative binomial sampler (mean mu, dispersion alpha)."""
    return _sample(
        "generalized_negative_binomial", "_random_generalized_negative_binomial",
        "_sample_generalized_negative_binomial", {"mu": mu, "alpha": alpha},
        shape, dtype, kwargs,
    )  # fmt: skip


def randint(low: int, high: int, shape: Any = None, dtype: Any = None, **kwargs: Any) -> Symbol:
    """A sampler of integers uniform on [low, high)."""
    return _sample(
        "randint", "_random_randint", None, {"low": low, "high": high}, shape, dtype, kwargs
    )


def multinomial(
    data: Symbol, shape: Any = None, get_prob: bool = False, dtype: str = "int32", **kwargs: Any
) -> Symbol:
    """Draws from the categorical distributions along data's last axis."""
    if not isinstance(data, Symbol):
        raise ParamError(
            f"sym.random.multinomial: 'data' must be a Symbol, got {type(data).__name__}"
        )
    extra = op_kwargs(shape, dtype, kwargs)
    return _internal._sample_multinomial(data, get_prob=get_prob, **extra)


def shuffle(data: Symbol, **kwargs: Any) -> Symbol:
    """data with its first axis randomly permuted."""
    if not isinstance(data, Symbol):
        raise ParamError(f"sym.random.shuffle: 'data' must be a Symbol, got {type(data).__name__}")
    return _internal._shuffle(data, **kwargs)


# the densities (_random_pdf_*), as nd.random's
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


def _make(op: Any, name: str) -> Any:
    from nnvmpy.symbol import make

    return make(op, name, "_random_")


_ops = OpNamespace(
    _make,
    internal=True,
    module="nnvmpy.sym.random",
    module_globals=globals(),
    publish_to=globals(),
    prefix="_random_",
)
__getattr__ = _ops.module_getattr
__dir__ = _ops.module_dir
