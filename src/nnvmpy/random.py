"""nv.random: seeding, and the samplers of nv.nd.random under MXNet's mx.random names.

    nv.random.seed(42)                      # every device
    nv.random.seed(7, ctx=nv.gpu(0))        # only that device
    x = nv.random.uniform(-1, 1, shape=(2, 3))

Random ops draw from one Philox-4x32 stream per device (resource.py, kernel/philox.py).
After seed(s) the numbers depend only on s and the ops run since: the same on every
engine, with any number of engine or numba threads, and the same on cpu(0) and gpu(0).
"""

from __future__ import annotations

import numbers

from . import resource
from .base import Context, ParamError
from .ndarray.random import (
    exponential,
    gamma,
    generalized_negative_binomial,
    multinomial,
    negative_binomial,
    normal,
    poisson,
    randint,
    randn,
    shuffle,
    uniform,
)

__all__ = [
    "exponential",
    "gamma",
    "generalized_negative_binomial",
    "multinomial",
    "negative_binomial",
    "normal",
    "poisson",
    "randint",
    "randn",
    "seed",
    "shuffle",
    "uniform",
]


def seed(seed_state: int, ctx: Context | str = "all") -> None:
    """Seed the random number generators of every device (ctx='all') or of one device.

    Random ops already pushed keep the numbers of the old seed; those pushed after this
    call start from the new one, so the same seed reproduces the same numbers.

    Args:
        seed_state: an integer (any size; it is taken modulo 2**64).
        ctx: 'all', or the Context whose generator to seed.

    Raises:
        ParamError: seed_state is not an integer, or ctx is neither 'all' nor a Context.
    """
    if not isinstance(seed_state, numbers.Integral) or isinstance(seed_state, bool):
        raise ParamError(
            f"random.seed: seed_state must be an int, got {type(seed_state).__name__} "
            f"{seed_state!r}"
        )
    if isinstance(ctx, str) and ctx == "all":
        resource.seed(int(seed_state))
        return
    if not isinstance(ctx, Context):
        raise ParamError(f"random.seed: ctx must be 'all' or a Context, got {ctx!r}")
    resource.seed(int(seed_state), Context(ctx))
