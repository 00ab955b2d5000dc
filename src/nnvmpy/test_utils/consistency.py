"""check_consistency: one symbol (or several equivalent ones) on several devices and dtypes.

Each entry of `ctx_list` is what simple_bind takes: `{'ctx': nv.cpu(), 'data': (2, 3),
'type_dict': {'data': np.float16}}`. Every executor gets the same random inputs; the one
whose first output has the highest precision is the ground truth, and every other
executor's outputs (and, unless grad_req is 'null', its gradients after a backward pass
with common head gradients) must match it within the tolerance of the less precise dtype.
"""

from __future__ import annotations

import traceback
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..base import NNVMError
from .compare import assert_almost_equal, get_tols


def _smaller(dt1: Any, dt2: Any) -> np.dtype:
    """The less precise of two dtypes (fewer bytes)."""
    a, b = np.dtype(dt1), np.dtype(dt2)
    return a if a.itemsize < b.itemsize else b


def _symbols(sym: Any, ctx_list: Any) -> list[Any]:
    from nnvmpy.symbol import Symbol

    if not isinstance(ctx_list, list | tuple) or len(ctx_list) < 2:
        raise NNVMError("check_consistency: ctx_list needs at least two simple_bind dicts")
    for i, entry in enumerate(ctx_list):
        if not isinstance(entry, Mapping):
            raise NNVMError(
                f"check_consistency: ctx_list[{i}] expects a dict of simple_bind arguments, "
                f"got {type(entry).__name__}"
            )
    if isinstance(sym, Symbol):
        return [sym] * len(ctx_list)
    if len(sym) != len(ctx_list):
        raise NNVMError(
            f"check_consistency: {len(sym)} symbols for {len(ctx_list)} entries of ctx_list"
        )
    return list(sym)


@dataclass
class _Rule:
    """How results are compared: tolerances, NaN handling, raise or print."""

    rtol: Any
    atol: Any
    equal_nan: bool
    raise_on_err: bool

    def check(self, arr: Any, gtarr: Any, names: tuple[str, str], rtol: Any, atol: Any) -> None:
        try:
            assert_almost_equal(arr, gtarr, rtol, atol, names, equal_nan=self.equal_nan)
        except AssertionError:
            if self.raise_on_err:
                raise
            traceback.print_exc()


def check_consistency(
    sym: Any,
    ctx_list: Any,
    scale: float = 1.0,
    grad_req: Any = "write",
    arg_params: Mapping[str, Any] | None = None,
    aux_params: Mapping[str, Any] | None = None,
    rtol: Any = None,
    atol: Any = None,
    raise_on_err: bool = True,
    ground_truth: Mapping[str, Any] | None = None,
    equal_nan: bool = False,
    use_uniform: bool = False,
    rand_type: Any = np.float64,
    *,
    tol: Any = None,
) -> dict[str, Any]:
    """Run `sym` on every entry of `ctx_list` and compare all results with the most precise.

    Inputs not in `arg_params` are drawn N(0, scale^2) (or U(-0.92 scale, 0.92 scale) with
    use_uniform) in `rand_type`; aux states not in `aux_params` start at 0. `tol` (MXNet's
    older spelling) sets both rtol and atol. Returns the ground truth by name (outputs,
    then gradients).
    """
    rule = _Rule(
        rtol if rtol is not None else tol,
        atol if atol is not None else tol,
        equal_nan,
        raise_on_err,
    )
    exes = _bind_all(_symbols(sym, ctx_list), ctx_list, grad_req)
    args = _draw_inputs(exes[0], arg_params, scale, use_uniform, rand_type)
    for exe in exes:
        _set_inputs(exe, args, aux_params or {}, grad_req)
        exe.forward(is_train=False)
    dtypes = [np.dtype(exe.outputs[0].dtype) for exe in exes]
    gt_idx = max(range(len(exes)), key=lambda i: (dtypes[i].itemsize, -i))
    gt = dict(ground_truth) if ground_truth is not None else dict(exes[gt_idx].output_dict)
    for i, exe in enumerate(exes):
        for name, arr in exe.output_dict.items():
            if i != gt_idx:
                rule.check(arr, gt[name], _names(i, gt_idx, name), rule.rtol, rule.atol)
    if grad_req == "null":
        return gt
    _forward_backward(exes)
    if ground_truth is None:
        gt = {**exes[gt_idx].output_dict, **exes[gt_idx].grad_dict}
    for i, exe in enumerate(exes):
        if i != gt_idx:
            _check_training(exe, gt, rule, (i, dtypes[i]), (gt_idx, dtypes[gt_idx]))
    return gt


def _bind_all(syms: list[Any], ctx_list: Any, grad_req: Any) -> list[Any]:
    output_names, arg_names = syms[0].list_outputs(), syms[0].list_arguments()
    exes = []
    for i, (s, entry) in enumerate(zip(syms, ctx_list)):
        if s.list_arguments() != arg_names or s.list_outputs() != output_names:
            raise NNVMError(
                f"check_consistency: symbol {i} has arguments {s.list_arguments()} and outputs "
                f"{s.list_outputs()}, symbol 0 {arg_names} and {output_names}"
            )
        kwargs = dict(entry)
        exes.append(s.simple_bind(kwargs.pop("ctx", None), grad_req=grad_req, **kwargs))
    return exes


def _draw_inputs(
    exe: Any, given: Mapping[str, Any] | None, scale: float, uniform: bool, rand_type: Any
) -> dict[str, Any]:
    args = dict(given or {})
    for name, arr in sorted(exe.arg_dict.items()):  # sorted: the same draws every run
        if name not in args:
            if uniform:
                draw = np.random.uniform(-0.92 * scale, 0.92 * scale, size=arr.shape)  # noqa: NPY002
            else:
                draw = np.random.normal(size=arr.shape, scale=scale)  # noqa: NPY002
            args[name] = draw.astype(rand_type)
    return args


def _set_inputs(exe: Any, args: Mapping[str, Any], aux: Mapping[str, Any], grad_req: Any) -> None:
    for name, arr in exe.arg_dict.items():
        arr[:] = _host(args[name], arr.dtype)
    for name, arr in exe.aux_dict.items():
        arr[:] = _host(aux.get(name, 0), arr.dtype)
    if grad_req == "add":
        for arr in exe.grad_dict.values():
            arr[:] = 0


def _forward_backward(exes: list[Any]) -> None:
    """Train-mode forward, then backward with common head gradients: executor 0's outputs
    cast to the least precise dtype each output has anywhere."""
    for exe in exes:
        exe.forward(is_train=True)
    least = [out.dtype for out in exes[0].outputs]
    for exe in exes:
        least = [_smaller(out.dtype, dt) for out, dt in zip(exe.outputs, least)]
    heads = [out.asnumpy().astype(dt) for out, dt in zip(exes[0].outputs, least)]
    for exe in exes:
        exe.backward([h.astype(out.dtype) for h, out in zip(heads, exe.outputs)])


def _check_training(
    exe: Any, gt: Mapping[str, Any], rule: _Rule, me: tuple[int, Any], truth: tuple[int, Any]
) -> None:
    grads = exe.grad_dict
    results = list(exe.output_dict.items())
    results += [(n, grads.get(n)) for n in exe.arg_dict]
    for name, arr in results:
        if gt.get(name) is None or arr is None:
            if (gt.get(name) is None) != (arr is None):
                raise AssertionError(f"check_consistency: only one side has a gradient for {name}")
            continue
        rt, at = rule.rtol, rule.atol
        # a float16 model's float32 parts (BatchNorm's gamma) get float16 tolerances
        small_arr, small_gt = _smaller(arr.dtype, me[1]), _smaller(gt[name].dtype, truth[1])
        if small_arr != arr.dtype or small_gt != gt[name].dtype:
            rt, at = get_tols(np.zeros(1, small_arr), np.zeros(1, small_gt), rt, at)
        rule.check(arr, gt[name], _names(me[0], truth[0], name), rt, at)


def _names(i: int, gt_idx: int, name: str) -> tuple[str, str]:
    return f"ctx_list[{i}] {name}", f"ctx_list[{gt_idx}] {name} (ground truth)"


def _host(value: Any, dtype: Any) -> Any:
    """A NumPy value of `dtype` for `arr[:] = ...` (NDArrays are read back first)."""
    value = value.asnumpy() if hasattr(value, "asnumpy") else value
    return np.asarray(value).astype(dtype)
