"""nv.sym.contrib: composing functions for the `_contrib_<name>` ops (MXNet's sym.contrib)."""

from __future__ import annotations

import math
from typing import Any

from ..signature import sub_namespace


def _make(op: Any, name: str) -> Any:
    from nnvmpy.symbol import make

    return make(op, name, "_contrib_")


_ops = sub_namespace("_contrib_", _make, "nnvmpy.sym.contrib", globals())
__getattr__ = _ops.module_getattr
__dir__ = _ops.module_dir


# -- control flow: one op node holding subgraphs (nnvmpy/contrib/control_flow.py) -------------


def foreach(body: Any, data: Any, init_states: Any, name: str = "foreach") -> Any:
    """A `_foreach` node running body(data_slice, states) -> (outputs, states) over the
    first axis of data; returns (the stacked outputs, the final states)."""
    from nnvmpy.contrib.control_flow import sym_foreach

    return sym_foreach(body, data, init_states, name)


def while_loop(cond: Any, func: Any, loop_vars: Any, max_iterations: Any = None,
               name: str = "while_loop") -> Any:  # fmt: skip
    """A `_while_loop` node: (step outputs stacked to max_iterations rows, final loop_vars)."""
    from nnvmpy.contrib.control_flow import sym_while_loop

    return sym_while_loop(cond, func, loop_vars, max_iterations, name)


def cond(pred: Any, then_func: Any, else_func: Any, name: str = "cond") -> Any:
    """A `_cond` node running then_func's graph when pred is true, else else_func's."""
    from nnvmpy.contrib.control_flow import sym_cond

    return sym_cond(pred, then_func, else_func, name)


# -- rand_zipfian: log-uniform candidate classes (sampled softmax), over sym.random.uniform ----


def rand_zipfian(true_classes: Any, num_sampled: int, range_max: int) -> Any:
    """Symbols (samples, expected_count_true, expected_count_sampled) of nd.contrib's
    rand_zipfian: num_sampled classes of [0, range_max) drawn with replacement from
    P(c) = (log(c + 2) - log(c + 1)) / log(range_max + 1) (int64), and num_sampled * P(c)
    of true_classes and of the samples (float64)."""
    from nnvmpy.ndarray.contrib import _check_zipfian_args, _zipfian_expected_count
    from nnvmpy.symbol.random import uniform
    from nnvmpy.symbol.symbol import Symbol

    _check_zipfian_args("sym.contrib.rand_zipfian", true_classes, Symbol, num_sampled, range_max)
    log_range = math.log(range_max + 1)
    u: Any = uniform(0, log_range, shape=(num_sampled,), dtype="float64")  # fluent .exp()
    samples = (u.exp() - 1).astype("int64") % range_max
    true_count = _zipfian_expected_count(true_classes, num_sampled, log_range)
    return samples, true_count, _zipfian_expected_count(samples, num_sampled, log_range)
