"""Type stubs for nnvmpy.ndarray.random, generated from the op registry by `nnvmpy stubs`.

Do not edit: `nnvmpy stubs` rewrites this file.
"""

from typing import Any, Literal, TypeAlias

import numpy as np

from nnvmpy.ndarray.ndarray import NDArray as NDArray
MixedParamsError: Any
def _context(fname: Any, ctx: Any) -> Any: ...
from nnvmpy.ndarray import _internal as _internal
def _make(op: Any, name: Any = ...) -> Any: ...
def _sample(fname: Any, random_op: Any, sample_op: Any, params: Any, shape: Any, dtype: Any, ctx: Any, out: Any, kwargs: Any) -> Any: ...
def check_params(fname: Any, names: Any, values: Any, array_type: Any, what: Any) -> Any: ...
def exponential(scale: Any = ..., shape: Any = ..., dtype: Any = ..., ctx: Any = ..., out: Any = ..., **kwargs: Any) -> Any: ...
def gamma(alpha: Any = ..., beta: Any = ..., shape: Any = ..., dtype: Any = ..., ctx: Any = ..., out: Any = ..., **kwargs: Any) -> Any: ...
def generalized_negative_binomial(mu: Any = ..., alpha: Any = ..., shape: Any = ..., dtype: Any = ..., ctx: Any = ..., out: Any = ..., **kwargs: Any) -> Any: ...
def is_number(x: Any) -> Any: ...
def multinomial(data: Any, shape: Any = ..., get_prob: Any = ..., out: Any = ..., dtype: Any = ..., **kwargs: Any) -> Any: ...
def negative_binomial(k: Any = ..., p: Any = ..., shape: Any = ..., dtype: Any = ..., ctx: Any = ..., out: Any = ..., **kwargs: Any) -> Any: ...
def normal(loc: Any = ..., scale: Any = ..., shape: Any = ..., dtype: Any = ..., ctx: Any = ..., out: Any = ..., **kwargs: Any) -> Any: ...
def op_kwargs(shape: Any, dtype: Any, kwargs: Any) -> Any: ...
def pdf_dirichlet(sample: Any, *args: Any, is_log: Any = ..., **kwargs: Any) -> Any: ...
def pdf_exponential(sample: Any, *args: Any, is_log: Any = ..., **kwargs: Any) -> Any: ...
def pdf_function(namespace: Any, dist: Any, params: Any) -> Any: ...
def pdf_gamma(sample: Any, *args: Any, is_log: Any = ..., **kwargs: Any) -> Any: ...
def pdf_generalized_negative_binomial(sample: Any, *args: Any, is_log: Any = ..., **kwargs: Any) -> Any: ...
def pdf_negative_binomial(sample: Any, *args: Any, is_log: Any = ..., **kwargs: Any) -> Any: ...
def pdf_normal(sample: Any, *args: Any, is_log: Any = ..., **kwargs: Any) -> Any: ...
def pdf_poisson(sample: Any, *args: Any, is_log: Any = ..., **kwargs: Any) -> Any: ...
def pdf_uniform(sample: Any, *args: Any, is_log: Any = ..., **kwargs: Any) -> Any: ...
def poisson(lam: Any = ..., shape: Any = ..., dtype: Any = ..., ctx: Any = ..., out: Any = ..., **kwargs: Any) -> Any: ...
def randint(low: Any, high: Any, shape: Any = ..., dtype: Any = ..., ctx: Any = ..., out: Any = ..., **kwargs: Any) -> Any: ...
def randn(*shape: Any, **kwargs: Any) -> Any: ...
def shuffle(data: Any, **kwargs: Any) -> Any: ...
def uniform(low: Any = ..., high: Any = ..., shape: Any = ..., dtype: Any = ..., ctx: Any = ..., out: Any = ..., **kwargs: Any) -> Any: ...

_Shape: TypeAlias = tuple[int, ...] | list[int] | int
_FloatTuple: TypeAlias = tuple[float, ...] | list[float] | float
_IntOrNoneTuple: TypeAlias = tuple[int | None, ...] | list[int | None]

def exponential_like(
    data: NDArray | None = None,
    *,
    lam: float = 1.0,
    out: NDArray | list[NDArray] | None = None,
) -> NDArray:
    """Draws samples of the exponential distribution with the parameters given, as an array with the shape and dtype of the input (whose values are not read).

    Parameters
    ----------
    data : NDArray-or-Symbol
        The input (only its shape and dtype are used).
    lam : float, optional, default=1.0
        Lambda parameter (rate) of the exponential distribution.

    Returns
    -------
    out : NDArray or list of NDArrays

    Defined in nnvmpy/ops/random/sample_op.py.
    """

def gamma_like(
    data: NDArray | None = None,
    *,
    alpha: float = 1.0,
    beta: float = 1.0,
    out: NDArray | list[NDArray] | None = None,
) -> NDArray:
    """Draws samples of the gamma distribution with the parameters given, as an array with the shape and dtype of the input (whose values are not read).

    Parameters
    ----------
    data : NDArray-or-Symbol
        The input (only its shape and dtype are used).
    alpha : float, optional, default=1.0
        Alpha parameter (shape) of the gamma distribution.
    beta : float, optional, default=1.0
        Beta parameter (scale) of the gamma distribution.

    Returns
    -------
    out : NDArray or list of NDArrays

    Defined in nnvmpy/ops/random/sample_op.py.
    """

def generalized_negative_binomial_like(
    data: NDArray | None = None,
    *,
    mu: float = 1.0,
    alpha: float = 1.0,
    out: NDArray | list[NDArray] | None = None,
) -> NDArray:
    """Draws samples of the generalized negative binomial distribution with the parameters given, as an array with the shape and dtype of the input (whose values are not read).

    Parameters
    ----------
    data : NDArray-or-Symbol
        The input (only its shape and dtype are used).
    mu : float, optional, default=1.0
        Mean of the negative binomial distribution.
    alpha : float, optional, default=1.0
        Alpha (dispersion) parameter of the negative binomial distribution.

    Returns
    -------
    out : NDArray or list of NDArrays

    Defined in nnvmpy/ops/random/sample_op.py.
    """

def negative_binomial_like(
    data: NDArray | None = None,
    *,
    k: int = 1,
    p: float = 1.0,
    out: NDArray | list[NDArray] | None = None,
) -> NDArray:
    """Draws samples of the negative binomial distribution with the parameters given, as an array with the shape and dtype of the input (whose values are not read).

    Parameters
    ----------
    data : NDArray-or-Symbol
        The input (only its shape and dtype are used).
    k : int, optional, default=1
        Limit of unsuccessful experiments.
    p : float, optional, default=1.0
        Failure probability in each experiment.

    Returns
    -------
    out : NDArray or list of NDArrays

    Defined in nnvmpy/ops/random/sample_op.py.
    """

def normal_like(
    data: NDArray | None = None,
    *,
    loc: float = 0.0,
    scale: float = 1.0,
    out: NDArray | list[NDArray] | None = None,
) -> NDArray:
    """Draws samples of the normal distribution with the parameters given, as an array with the shape and dtype of the input (whose values are not read).

    Parameters
    ----------
    data : NDArray-or-Symbol
        The input (only its shape and dtype are used).
    loc : float, optional, default=0.0
        Mean of the distribution.
    scale : float, optional, default=1.0
        Standard deviation of the distribution.

    Returns
    -------
    out : NDArray or list of NDArrays

    Defined in nnvmpy/ops/random/sample_op.py.
    """

def poisson_like(
    data: NDArray | None = None,
    *,
    lam: float = 1.0,
    out: NDArray | list[NDArray] | None = None,
) -> NDArray:
    """Draws samples of the poisson distribution with the parameters given, as an array with the shape and dtype of the input (whose values are not read).

    Parameters
    ----------
    data : NDArray-or-Symbol
        The input (only its shape and dtype are used).
    lam : float, optional, default=1.0
        Lambda parameter (rate) of the Poisson distribution.

    Returns
    -------
    out : NDArray or list of NDArrays

    Defined in nnvmpy/ops/random/sample_op.py.
    """

def uniform_like(
    data: NDArray | None = None,
    *,
    low: float = 0.0,
    high: float = 1.0,
    out: NDArray | list[NDArray] | None = None,
) -> NDArray:
    """Draws samples of the uniform distribution with the parameters given, as an array with the shape and dtype of the input (whose values are not read).

    Parameters
    ----------
    data : NDArray-or-Symbol
        The input (only its shape and dtype are used).
    low : float, optional, default=0.0
        Lower bound of the distribution.
    high : float, optional, default=1.0
        Upper bound of the distribution.

    Returns
    -------
    out : NDArray or list of NDArrays

    Defined in nnvmpy/ops/random/sample_op.py.
    """
