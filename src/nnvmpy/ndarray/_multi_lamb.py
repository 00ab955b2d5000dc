"""nd.contrib.multi_lamb_update / multi_mp_lamb_update: MXNet's list front-ends of the
_multi_(mp_)lamb_update ops (nnvmpy/ops/optimizer/multi_lamb.py).

They take one list per slot (weights, grads, means, vars[, float32 master weights]) and the
per-tensor step counts, learning rates and weight decays, interleave the lists into the
op's (weight_i, grad_i, mean_i, var_i[, weight32_i]) groups and call it.
"""

from __future__ import annotations

from typing import Any

from ..base import ParamError


def _call(op: str, columns: list[Any], step_count: Any, lrs: Any, wds: Any, out: Any,
          num_tensors: int, kwargs: dict[str, Any]) -> Any:  # fmt: skip
    from nnvmpy.ndarray import _internal

    weights = list(columns[0])
    lengths = [len(c) for c in columns]
    if any(n != len(weights) for n in lengths):
        raise ParamError(
            f"{op.lstrip('_')}: expects lists of equal length (one entry per tensor), "
            f"got lengths {lengths}"
        )
    if not weights:
        raise ParamError(f"{op.lstrip('_')}: expects at least one tensor, got none")
    data = [x for group in zip(*columns, strict=True) for x in group]
    return getattr(_internal, op)(
        *data, out=out, num_tensors=num_tensors or len(weights), step_count=tuple(step_count),
        learning_rates=tuple(lrs), wds=tuple(wds), **kwargs,
    )  # fmt: skip


def multi_lamb_update(weights: Any, grads: Any, mean: Any, var: Any, step_count: Any,
                      lrs: Any, wds: Any, out: Any = None, num_tensors: int = 0,
                      **kwargs: Any) -> Any:  # fmt: skip
    """LAMB updates of several tensors in one op (see _multi_lamb_update): lists of
    weights, grads, means and vars; tensor i uses step_count[i], lrs[i] and wds[i]."""
    return _call("_multi_lamb_update", [weights, grads, mean, var], step_count, lrs, wds, out,
                 num_tensors, kwargs)  # fmt: skip


def multi_mp_lamb_update(weights: Any, grads: Any, mean: Any, var: Any, weights32: Any,
                         step_count: Any, lrs: Any, wds: Any, out: Any = None,
                         num_tensors: int = 0, **kwargs: Any) -> Any:  # fmt: skip
    """Multi-precision multi_lamb_update: also a list of float32 master weights."""
    return _call("_multi_mp_lamb_update", [weights, grads, mean, var, weights32], step_count,
                 lrs, wds, out, num_tensors, kwargs)  # fmt: skip
