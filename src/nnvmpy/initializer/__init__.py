"""Weight initializers with MXNet's names and behaviour (`nv.init`, `nv.initializer`).

An initializer is called as `init(InitDesc(name, attrs), arr)` and fills `arr` in place.
The name picks the rule, as in MXNet: `*weight` gets the initializer's own pattern,
`*bias` and `*beta` zeros, `*gamma` ones, `*min` zeros and `*max` ones (quantization
ranges), `moving_mean`/`moving_var`/`moving_inv_var`/`moving_avg` the values BatchNorm
starts from (MXNet sets those through an `__init__` attribute; here the name decides).
A variable whose attrs carry `__init__` (the JSON of `Initializer.dumps()`, set by
`sym.Variable(init=...)`) uses that initializer instead.

Random initializers draw through `nv.random`, so `nv.random.seed` makes them reproducible.
`FusedRNN` is not here: fused RNN parameters belong to the RNN issue.
"""

from __future__ import annotations

from .base import InitDesc, Initializer, alias, bilinear_kernel, create, register
from .compose import Load, Mixed, init_params
from .fill import Bilinear, Constant, LSTMBias, One, Zero
from .sampled import MSRAPrelu, Normal, Orthogonal, Uniform, Xavier

__all__ = [
    "Bilinear",
    "Constant",
    "InitDesc",
    "Initializer",
    "LSTMBias",
    "Load",
    "MSRAPrelu",
    "Mixed",
    "Normal",
    "One",
    "Orthogonal",
    "Uniform",
    "Xavier",
    "Zero",
    "alias",
    "bilinear_kernel",
    "create",
    "init_params",
    "register",
]


def __getattr__(name: str) -> object:
    """nv.init.FusedRNN lives with the RNN cells (nnvmpy.rnn), imported on first use."""
    if name == "FusedRNN":
        from nnvmpy.rnn.fused_init import FusedRNN

        return FusedRNN
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
