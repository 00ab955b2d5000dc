"""nv.nd.contrib: the ops registered as `_contrib_<name>`, as `<name>` (MXNet's nd.contrib).

Generated on access like nv.nd, so ops registered later appear too. The AdamW updates
(adamw_update, mp_adamw_update, multi_adamw_update, multi_mp_adamw_update) are written
here, as in MXNet: they take rescale_grad as a float or an NDArray and the multi_* ones
lists of arrays, then call the registered _(multi_)(mp_)adamw_update ops.
"""

from __future__ import annotations

import math
from typing import Any

from ..base import ParamError
from ..signature import sub_namespace
from ._multi_lamb import multi_lamb_update, multi_mp_lamb_update  # noqa: F401 - MXNet's names


def _make(op: Any, name: str = "") -> Any:
    from nnvmpy.ndarray import _make as make_nd_function

    return make_nd_function(op)


_ops = sub_namespace("_contrib_", _make, "nnvmpy.nd.contrib", globals())
__getattr__ = _ops.module_getattr
__dir__ = _ops.module_dir


# -- control flow: Python loops over NDArray ops (nnvmpy/contrib/control_flow.py) -------------


def foreach(body: Any, data: Any, init_states: Any) -> Any:
    """Run body(data[i], states) -> (outputs, states) for each i along data's first axis;
    return (the outputs stacked, the final states)."""
    from nnvmpy.contrib.control_flow import nd_foreach

    return nd_foreach(body, data, init_states)


def while_loop(cond: Any, func: Any, loop_vars: Any, max_iterations: Any = None) -> Any:
    """While cond(*loop_vars) (at most max_iterations times): (step_output, loop_vars) =
    func(*loop_vars); return (step outputs stacked, zero-padded to max_iterations rows,
    the final loop_vars)."""
    from nnvmpy.contrib.control_flow import nd_while_loop

    return nd_while_loop(cond, func, loop_vars, max_iterations)


def cond(pred: Any, then_func: Any, else_func: Any, name: Any = None) -> Any:
    """then_func() when the one-element pred is true, else else_func()."""
    from nnvmpy.contrib.control_flow import nd_cond

    return nd_cond(pred, then_func, else_func)


# -- AdamW: front-ends of the _adamw_update ops (nnvmpy.ops.optimizer.adamw) ------------------


def _rescale(rescale_grad: Any, like: Any) -> Any:
    """rescale_grad as the (1,) array input the ops read (a float becomes one on like's device)."""
    from nnvmpy.ndarray import full
    from nnvmpy.ndarray.ndarray import NDArray

    if isinstance(rescale_grad, NDArray):
        return rescale_grad.as_in_context(like.context)
    return full((1,), float(rescale_grad), ctx=like.context)


def _call(op: str, *args: Any, **kwargs: Any) -> Any:
    from nnvmpy.ndarray import _internal

    return getattr(_internal, op)(*args, **kwargs)


def adamw_update(weight: Any, grad: Any, mean: Any, var: Any, rescale_grad: Any, lr: float,
                 eta: float, beta1: float = 0.9, beta2: float = 0.999, epsilon: float = 1e-8,
                 wd: float = 0, clip_gradient: float = -1, out: Any = None, name: Any = None,
                 **kwargs: Any) -> Any:  # fmt: skip
    """AdamW update of one weight (see _adamw_update); skipped when rescale_grad is NaN,
    Inf or 0. rescale_grad: a float or an NDArray (its first element)."""
    return _call("_adamw_update", weight, grad, mean, var, _rescale(rescale_grad, weight),
                 lr=lr, eta=eta, beta1=beta1, beta2=beta2, epsilon=epsilon, wd=wd,
                 clip_gradient=clip_gradient, out=out, name=name, **kwargs)  # fmt: skip


def mp_adamw_update(weight: Any, grad: Any, mean: Any, var: Any, weight32: Any,
                    rescale_grad: Any, lr: float, eta: float, beta1: float = 0.9,
                    beta2: float = 0.999, epsilon: float = 1e-8, wd: float = 0,
                    clip_gradient: float = -1, out: Any = None, name: Any = None,
                    **kwargs: Any) -> Any:  # fmt: skip
    """Multi-precision AdamW update (see _mp_adamw_update): runs on the float32 weight32."""
    return _call("_mp_adamw_update", weight, grad, mean, var, weight32,
                 _rescale(rescale_grad, weight), lr=lr, eta=eta, beta1=beta1, beta2=beta2,
                 epsilon=epsilon, wd=wd, clip_gradient=clip_gradient, out=out, name=name,
                 **kwargs)  # fmt: skip


def _multi(op: str, columns: list[Any], rescale_grad: Any, size: int, **kwargs: Any) -> Any:
    weights = list(columns[0])
    if any(len(c) != len(weights) for c in columns):
        raise ParamError(
            f"{op.lstrip('_')}: expects lists of equal length (one entry per weight), "
            f"got lengths {[len(c) for c in columns]}"
        )
    if not weights:
        raise ParamError(f"{op.lstrip('_')}: expects at least one weight, got none")
    data = [x for group in zip(*columns, strict=True) for x in group]
    data.append(_rescale(rescale_grad, weights[0]))
    return _call(op, *data, num_weights=size or len(weights), **kwargs)


def multi_adamw_update(weights: Any, grads: Any, mean: Any, var: Any, rescale_grad: Any,
                       lrs: Any, wds: Any, etas: Any, out: Any = None, name: Any = None,
                       size: int = 0, **kwargs: Any) -> Any:  # fmt: skip
    """AdamW updates of several weights in one op (see _multi_adamw_update): lists of
    weights, grads, means and vars; weight i uses lrs[i], wds[i], etas[i]."""
    return _multi("_multi_adamw_update", [weights, grads, mean, var], rescale_grad, size,
                  lrs=lrs, wds=wds, etas=etas, out=out, name=name, **kwargs)  # fmt: skip


def multi_mp_adamw_update(weights: Any, grads: Any, mean: Any, var: Any, weights32: Any,
                          rescale_grad: Any, lrs: Any, wds: Any, etas: Any, out: Any = None,
                          name: Any = None, size: int = 0, **kwargs: Any) -> Any:  # fmt: skip
    """Multi-precision multi_adamw_update: also a list of float32 master weights."""
    return _multi("_multi_mp_adamw_update", [weights, grads, mean, var, weights32],
                  rescale_grad, size, lrs=lrs, wds=wds, etas=etas, out=out, name=name,
                  **kwargs)  # fmt: skip


# -- rand_zipfian: log-uniform candidate classes (sampled softmax), over nd.random.uniform -----


def rand_zipfian(true_classes: Any, num_sampled: int, range_max: int, ctx: Any = None) -> Any:
    """Draws num_sampled classes of [0, range_max) with replacement from the approximately
    log-uniform (Zipfian) distribution P(c) = (log(c + 2) - log(c + 1)) / log(range_max + 1).

    Returns (samples, expected_count_true, expected_count_sampled): the samples as int64,
    and num_sampled * P(c) for each of true_classes and of the samples, as float64.
    ctx: the device of the outputs (default: the current context).
    """
    from nnvmpy.base import current_context
    from nnvmpy.ndarray.ndarray import NDArray
    from nnvmpy.ndarray.random import uniform

    _check_zipfian_args("nd.contrib.rand_zipfian", true_classes, NDArray, num_sampled, range_max)
    ctx = current_context() if ctx is None else ctx
    log_range = math.log(range_max + 1)
    # exp(u) - 1 for u uniform on [0, log(range_max + 1)) lies in [c, c + 1) with chance P(c)
    u = uniform(0, log_range, shape=(num_sampled,), dtype="float64", ctx=ctx)
    samples = (u.exp() - 1).astype("int64") % range_max
    true_count = _zipfian_expected_count(true_classes.as_in_context(ctx), num_sampled, log_range)
    return samples, true_count, _zipfian_expected_count(samples, num_sampled, log_range)


def _zipfian_expected_count(classes: Any, num_sampled: int, log_range: float) -> Any:
    """num_sampled * P(class) of rand_zipfian, in float64 (NDArrays or Symbols)."""
    c = classes.astype("float64")
    return ((c + 2.0) / (c + 1.0)).log() * (num_sampled / log_range)


def _check_zipfian_args(
    fname: str, true_classes: Any, array_type: type, num_sampled: Any, range_max: Any
) -> None:
    if not isinstance(true_classes, array_type):
        raise ParamError(
            f"{fname}: 'true_classes' must be a {array_type.__name__}, got "
            f"{type(true_classes).__name__}"
        )
    for name, value in (("num_sampled", num_sampled), ("range_max", range_max)):
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ParamError(f"{fname}: {name!r} must be an int >= 1, got {value!r}")
