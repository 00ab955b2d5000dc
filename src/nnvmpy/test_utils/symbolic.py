"""Checking a symbol against expected values and finite differences (MXNet's signatures).

`location` (the argument values) and `aux_states` are a list in list_arguments() /
list_auxiliary_states() order or a dict by name; values are NumPy arrays or NDArrays.
`dtype` is the dtype the arrays are bound in, or "asnumpy" to keep each array's own.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

import numpy as np

from ..base import NNVMError
from .compare import assert_almost_equal, default_numeric_eps, get_tolerance
from .generate import default_context

_DTYPES = (np.float16, np.float32, np.float64)


def _np(x: Any) -> np.ndarray:
    return x.asnumpy() if hasattr(x, "asnumpy") else np.asarray(x)


def _check_dtype(where: str, dtype: Any, allow_asnumpy: bool = True) -> None:
    if allow_asnumpy and isinstance(dtype, str) and dtype == "asnumpy":
        return
    try:
        ok = np.dtype(dtype) in {np.dtype(t) for t in _DTYPES}
    except TypeError:
        ok = False
    if not ok:
        accepted = "float16, float32, float64" + (" or 'asnumpy'" if allow_asnumpy else "")
        raise NNVMError(f"{where}: dtype expects {accepted}, got {dtype!r}")


def _cast(value: Any, dtype: Any) -> np.ndarray:
    """A C-ordered copy-or-view of value in dtype ('asnumpy': its own dtype)."""
    arr = _np(value)
    return np.ascontiguousarray(arr, dtype=arr.dtype if isinstance(dtype, str) else dtype)


def _by_name(where: str, what: str, given: Any, names: list[str]) -> dict[str, Any]:
    """A dict by name from a list (in `names` order) or a dict that names each exactly once."""
    if isinstance(given, Mapping):
        unknown = [k for k in given if k not in names]
        if unknown:
            raise NNVMError(f"{where}: {what} names unknown arguments {unknown}; they are {names}")
        missing = [n for n in names if n not in given]
        if missing:
            raise NNVMError(f"{where}: {what} is missing {missing}")
        return dict(given)
    if not isinstance(given, list | tuple):
        raise NNVMError(f"{where}: {what} expects a list or dict, got {type(given).__name__}")
    if len(given) != len(names):
        raise NNVMError(
            f"{where}: {what} has {len(given)} arrays for {len(names)} arguments {names}"
        )
    return dict(zip(names, given))


def parse_location(
    sym: Any, location: Any, dtype: Any = np.float32, where: str = "location"
) -> dict[str, np.ndarray]:
    """Argument values as NumPy arrays of `dtype` ('asnumpy': each keeps its own), by name."""
    loc = _by_name(where, "location", location, sym.list_arguments())
    return {k: _cast(v, dtype) for k, v in loc.items()}


def parse_aux_states(
    sym: Any, aux_states: Any, dtype: Any = np.float32, where: str = "aux_states"
) -> dict[str, np.ndarray] | None:
    """Auxiliary state values by name (None when not given)."""
    if aux_states is None:
        return None
    aux = _by_name(where, "aux_states", aux_states, sym.list_auxiliary_states())
    return {k: _cast(v, dtype) for k, v in aux.items()}


def bind(
    sym: Any,
    ctx: Any,
    loc: Mapping[str, np.ndarray],
    aux: Mapping[str, np.ndarray] | None,
    grad_req: Any,
    grads: Mapping[str, np.ndarray] | None = None,
) -> Any:
    """Bind with NDArrays made from `loc` / `aux` (zeros when aux is None) and `grads`.

    `grads` gives the starting gradient arrays; None gives zeros for every argument.
    """
    from nnvmpy import nd

    ctx = ctx or default_context()
    args = {k: nd.array(v, ctx, dtype=v.dtype) for k, v in loc.items()}
    aux_names = sym.list_auxiliary_states()
    if aux is None and aux_names:
        _, _, aux_shapes = sym.infer_shape(**{k: v.shape for k, v in loc.items()})
        first = next(iter(loc.values())).dtype if loc else np.dtype(np.float32)
        aux = {n: np.zeros(s, dtype=first) for n, s in zip(aux_names, aux_shapes)}
    aux_arrays = {k: nd.array(v, ctx, dtype=v.dtype) for k, v in (aux or {}).items()}
    if grads is None:
        grads = {k: np.zeros(v.shape, dtype=v.dtype) for k, v in loc.items()}
    grad_arrays = {k: nd.array(v, ctx, dtype=v.dtype) for k, v in grads.items()}
    return sym.bind(ctx, args, args_grad=grad_arrays, grad_req=grad_req, aux_states=aux_arrays)


def simple_forward(sym: Any, ctx: Any = None, is_train: bool = False, **inputs: Any) -> Any:
    """Forward with NumPy inputs by name; the NumPy output (a list when there are several)."""
    exe = bind(sym, ctx, parse_location(sym, inputs, "asnumpy", "simple_forward"), None, "null")
    outputs = [o.asnumpy() for o in exe.forward(is_train=is_train)]
    return outputs[0] if len(outputs) == 1 else outputs


def check_symbolic_forward(
    sym: Any,
    location: Any,
    expected: Any,
    rtol: Any = None,
    atol: Any = None,
    aux_states: Any = None,
    ctx: Any = None,
    equal_nan: bool = False,
    dtype: Any = np.float32,
) -> list[Any]:
    """Forward outputs equal `expected` (a list in list_outputs order, or a dict by name).

    Returns the executor's outputs (NDArrays).
    """
    _check_dtype("check_symbolic_forward", dtype)
    loc = parse_location(sym, location, dtype, "check_symbolic_forward")
    aux = parse_aux_states(sym, aux_states, dtype, "check_symbolic_forward")
    names = sym.list_outputs()
    if isinstance(expected, Mapping):
        expected = [expected[n] for n in names]
    elif not isinstance(expected, list | tuple):
        expected = [expected]
    if len(expected) > len(names):
        raise NNVMError(
            f"check_symbolic_forward: {len(expected)} expected arrays for {len(names)} outputs"
        )
    exe = bind(sym, ctx, loc, aux, "null")
    outputs = exe.forward(is_train=False)
    for name, exp, out in zip(names, expected, outputs):
        assert_almost_equal(
            exp, out, rtol, atol, (f"EXPECTED_{name}", f"FORWARD_{name}"), equal_nan=equal_nan
        )
    return list(outputs)


def _reqs(grad_req: Any, names: list[str]) -> dict[str, str]:
    if isinstance(grad_req, str):
        reqs = dict.fromkeys(names, grad_req)
    elif isinstance(grad_req, list | tuple):
        reqs = dict(zip(names, grad_req))
    elif isinstance(grad_req, Mapping):
        reqs = dict(grad_req)
    else:
        raise NNVMError(f"grad_req expects a str, list or dict, got {grad_req!r}")
    for n, r in reqs.items():
        if r not in ("write", "add", "null"):
            raise NNVMError(f"grad_req for {n!r} expects 'write', 'add' or 'null', got {r!r}")
    return reqs


def _head_grads(out_grads: Any, names: list[str], dtype: Any) -> list[np.ndarray] | None:
    if out_grads is None:
        return None
    if isinstance(out_grads, Mapping):
        out_grads = [out_grads[n] for n in names]
    elif not isinstance(out_grads, list | tuple):
        out_grads = [out_grads]
    return [_cast(g, dtype) for g in out_grads]


def check_symbolic_backward(
    sym: Any,
    location: Any,
    out_grads: Any,
    expected: Any,
    rtol: Any = None,
    atol: Any = None,
    aux_states: Any = None,
    grad_req: Any = "write",
    ctx: Any = None,
    grad_stypes: Any = None,
    equal_nan: bool = False,
    dtype: Any = np.float32,
) -> dict[str, Any]:
    """Gradients equal `expected` (a dict by argument name, or a list in list_arguments order).

    The gradient arrays start from random values: with grad_req 'add' the result must be
    those plus the gradient, with 'null' they must be left alone. Returns the gradient
    arrays (NDArrays) by name.
    """
    _check_dtype("check_symbolic_backward", dtype)
    _dense_only("check_symbolic_backward", grad_stypes)
    names = sym.list_arguments()
    loc = parse_location(sym, location, dtype, "check_symbolic_backward")
    aux = parse_aux_states(sym, aux_states, dtype, "check_symbolic_backward")
    if not isinstance(expected, Mapping):
        expected = dict(zip(names, expected))
    unknown = [k for k in expected if k not in names]
    if unknown:
        raise NNVMError(f"check_symbolic_backward: expected names unknown arguments {unknown}")
    reqs = _reqs(grad_req, names)
    rng = np.random.default_rng(0)
    initial = {
        k: rng.normal(size=loc[k].shape).astype(_cast(expected[k], dtype).dtype)
        for k in sorted(expected)
    }
    exe = bind(sym, ctx, loc, aux, {n: reqs.get(n, "null") for n in names}, initial)
    exe.forward(is_train=True)
    if any(reqs.get(n, "null") != "null" for n in initial):
        exe.backward(_head_grads(out_grads, sym.list_outputs(), dtype))
    grads = exe.grad_dict
    for name, exp in expected.items():
        got = grads[name].asnumpy()
        req = reqs.get(name, "null")
        want = {"write": _np(exp), "add": _np(exp) + initial[name], "null": initial[name]}[req]
        assert_almost_equal(
            want, got, rtol, atol, (f"EXPECTED_{name}", f"BACKWARD_{name}"), equal_nan=equal_nan
        )
    return {k: grads[k] for k in expected}


def _dense_only(where: str, stypes: Any) -> None:
    if not stypes:
        return
    sparse = {k: v for k, v in dict(stypes).items() if v not in (None, "default")}
    if sparse:
        raise NNVMError(
            f"{where}: storage types {sparse} are not supported; nnvmpy has dense storage only"
        )


class NumericGradError(NNVMError, AssertionError):
    """numeric_grad's bad dtype: an AssertionError, as MXNet's `assert dtype in (...)`."""


def numeric_grad(
    executor: Any,
    location: Mapping[str, Any],
    aux_states: Mapping[str, Any] | None = None,
    eps: float = 1e-4,
    use_forward_train: bool = True,
    dtype: Any = np.float32,
) -> dict[str, np.ndarray]:
    """{argument name: d sum(outputs[0]) / d argument} by central differences (MXNet's).

    Each float array in `location` (a dict by argument name) is written into the
    executor's arg_dict as `dtype`; every element in turn is moved by +eps/2 and -eps/2
    (in the array's own dtype), `aux_states` (a dict by name) are written back before each
    forward, and the gradient is (sum(f+) - sum(f-)) / eps of the first output. Non-float
    arrays get zero gradients. The executor's arguments are left at `location`.
    """
    from nnvmpy import nd

    try:
        ok = np.dtype(dtype) in {np.dtype(t) for t in _DTYPES}
    except TypeError:
        ok = False
    if not ok:
        raise NumericGradError(
            f"numeric_grad: dtype expects float16, float32 or float64, got {dtype!r}"
        )
    if not isinstance(location, Mapping):
        raise NNVMError(
            f"numeric_grad: location expects a dict of argument name to array, "
            f"got {type(location).__name__}"
        )
    values = {k: np.array(_np(v), order="C") for k, v in location.items()}
    aux = {k: _np(v) for k, v in (aux_states or {}).items()}
    args = executor.arg_dict

    def put(name: str, value: np.ndarray) -> None:
        args[name][:] = nd.array(value, dtype=dtype)

    def total() -> np.ndarray:
        for key, val in aux.items():
            executor.aux_dict[key][:] = nd.array(val, dtype=dtype)
        executor.forward(is_train=use_forward_train)
        return np.asarray(executor.outputs[0].asnumpy())

    for k, v in values.items():
        put(k, v)
    grads = {k: np.zeros(v.shape, dtype=dtype) for k, v in values.items()}
    for k, v in values.items():
        if v.dtype.kind != "f":
            continue
        flat, old = v.reshape(-1), v.copy()
        for i in range(flat.size):
            flat[i] += eps / 2.0
            put(k, v)
            f_plus = total()
            flat[i] -= eps
            put(k, v)
            f_minus = total()
            grads[k].reshape(-1)[i] = (f_plus - f_minus).sum() / eps
            flat[i] = old.reshape(-1)[i]
        put(k, old)
    return grads


def central_difference(f: Any, x: np.ndarray, eps: float) -> np.ndarray:
    """Central differences (f(x + eps/2) - f(x - eps/2)) / eps of a scalar f, per element of x.

    x is changed in place while f runs and restored afterwards.
    """
    grad = np.zeros(x.shape, dtype=np.float64)
    for i in range(x.size):  # x.flat writes through whatever x's memory layout
        old = x.flat[i]
        x.flat[i] = old + eps / 2
        fp = f()
        x.flat[i] = old - eps / 2
        fm = f()
        x.flat[i] = old
        grad.flat[i] = (fp - fm) / eps
    return grad


def _grad_nodes(grad_nodes: Any, names: list[str]) -> dict[str, str]:
    if grad_nodes is None:
        return dict.fromkeys(names, "write")
    if isinstance(grad_nodes, Mapping):
        reqs = _reqs(dict(grad_nodes), names)
    elif isinstance(grad_nodes, list | tuple):
        reqs = dict.fromkeys(grad_nodes, "write")
    else:
        raise NNVMError(
            f"check_numeric_gradient: grad_nodes expects a list or dict, got {grad_nodes!r}"
        )
    unknown = [n for n in reqs if n not in names]
    if unknown:
        raise NNVMError(f"check_numeric_gradient: grad_nodes names unknown arguments {unknown}")
    return reqs


def check_numeric_gradient(
    sym: Any,
    location: Any,
    aux_states: Any = None,
    numeric_eps: Any = None,
    rtol: Any = None,
    atol: Any = None,
    grad_nodes: Any = None,
    use_forward_train: bool = True,
    ctx: Any = None,
    grad_stype_dict: Any = None,
    dtype: Any = np.float32,
) -> None:
    """Backward agrees with central differences of sum(outputs * random projection).

    Every output gets its own projection (positive weights, as MXNet's), so multi-output
    symbols are checked too. grad_nodes: the arguments to check (a list), or a dict of
    their grad_req ('write', 'add', 'null'). numeric_eps defaults per dtype
    (default_numeric_eps). rtol/atol default to what finite differences resolve, not to
    the exact-comparison defaults: rtol 1e-2, atol 1e-3 (1e-6 for float64).
    """
    where = "check_numeric_gradient"
    _check_dtype(where, dtype, allow_asnumpy=False)
    _dense_only(where, grad_stype_dict)
    names = sym.list_arguments()
    loc = parse_location(sym, location, dtype, where)
    aux = parse_aux_states(sym, aux_states, dtype, where)
    reqs = _grad_nodes(grad_nodes, names)
    rng = np.random.default_rng(1234)
    initial = {
        n: rng.normal(0, 0.01, size=loc[n].shape).astype(dtype) for n in reqs if reqs[n] != "null"
    }
    exe = bind(sym, ctx, loc, aux, {n: reqs.get(n, "null") for n in names}, initial)
    exe.forward(is_train=True)  # as MXNet: backward needs the training forward
    projs = [rng.uniform(0.1, 1.1, size=o.shape).astype(o.dtype) for o in exe.outputs]
    eps = get_tolerance(exe.outputs[0], numeric_eps, default_numeric_eps())
    if np.dtype(dtype) != np.float64 and eps < 1e-5:
        raise NNVMError(f"{where}: numeric_eps {eps} is too small for {np.dtype(dtype)} inputs")
    if not initial:
        return
    exe.backward(projs)
    symbolic = {n: g.asnumpy() for n, g in exe.grad_dict.items() if n in initial}

    rtol = 1e-2 if rtol is None else rtol
    if atol is None:
        atol = 1e-6 if np.dtype(dtype) == np.float64 else 1e-3
    f, values = _projected_forward(
        bind(sym, ctx, loc, aux, "null"), loc, aux, projs, use_forward_train
    )
    for n in initial:
        num = central_difference(f, values[n], eps).astype(loc[n].dtype)
        got = symbolic[n] - initial[n] if reqs[n] == "add" else symbolic[n]
        assert_almost_equal(num, got, rtol, atol, (f"NUMERICAL_{n}", f"BACKWARD_{n}"))


def _projected_forward(
    probe: Any,
    loc: Mapping[str, np.ndarray],
    aux: Mapping[str, np.ndarray] | None,
    projs: list[np.ndarray],
    is_train: bool,
) -> tuple[Any, dict[str, np.ndarray]]:
    """(f, values): f() = sum(outputs * projs) at `values` (float64 copies to perturb)."""
    values = {n: v.astype(np.float64) for n, v in loc.items()}
    start = dict(aux) if aux is not None else {k: a.asnumpy() for k, a in probe.aux_dict.items()}

    def f() -> float:
        for k, v in start.items():  # a train-mode forward may have updated the aux states
            probe.aux_dict[k][:] = v
        outs = probe.forward(
            is_train=is_train, **{n: v.astype(loc[n].dtype) for n, v in values.items()}
        )
        return float(sum((o.asnumpy().astype(np.float64) * p).sum() for o, p in zip(outs, projs)))

    return f, values


def check_speed(
    sym: Any,
    location: Mapping[str, np.ndarray] | None = None,
    ctx: Any = None,
    N: int = 20,
    grad_req: Any = None,
    typ: str = "whole",
    **kwargs: Any,
) -> float:
    """Seconds per forward+backward (typ='whole') or per forward (typ='forward'), over N runs.

    Without `location`, the argument shapes come from `kwargs` (as simple_bind's) and the
    values are standard normal.
    """
    from nnvmpy import nd

    if typ not in ("whole", "forward"):
        raise NNVMError(f"check_speed: typ expects 'whole' or 'forward', got {typ!r}")
    if not isinstance(N, int) or N < 1:
        raise NNVMError(f"check_speed: N expects an int >= 1, got {N!r}")
    ctx = ctx or default_context()
    grad_req = "write" if grad_req is None else grad_req
    if location is None:
        exe = sym.simple_bind(ctx, grad_req=grad_req, **kwargs)
        location = {k: np.random.normal(size=a.shape) for k, a in exe.arg_dict.items()}  # noqa: NPY002
    else:
        if not isinstance(location, Mapping):
            raise NNVMError(f"check_speed: location expects a dict, got {type(location).__name__}")
        exe = sym.simple_bind(ctx, grad_req=grad_req, **{k: v.shape for k, v in location.items()})
    for name, value in location.items():
        exe.arg_dict[name][:] = np.asarray(value).astype(exe.arg_dict[name].dtype)
    train = typ == "whole"

    def run() -> None:
        exe.forward(is_train=train)
        if train:
            exe.backward(out_grads=exe.outputs)

    run()  # warm up: compiles kernels, plans memory
    nd.waitall()
    tic = time.perf_counter()
    for _ in range(N):
        run()
    nd.waitall()
    return (time.perf_counter() - tic) / N
