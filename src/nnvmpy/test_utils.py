"""Testing helpers with MXNet's signatures, plus check_op: an op's attributes vs each other.

check_numeric_gradient compares backward against central finite differences of a random
projection of the outputs; check_symbolic_forward/backward compare with expected arrays;
check_op is nnvmpy's opcheck (shape/type inference both ways, gradients, req='add',
in-place safety).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .attrs import FInferShape, FInferType, FInplaceOption, FResourceRequest, fcompute
from .base import Context, NNVMError, OpReqType, cpu
from .infer import shape_str
from .registry import Op

_DEFAULT_RTOL = {np.dtype(np.float16): 1e-2, np.dtype(np.float32): 1e-4, np.dtype(np.float64): 1e-7}
_DEFAULT_ATOL = {
    np.dtype(np.float16): 1e-1,
    np.dtype(np.float32): 1e-3,
    np.dtype(np.float64): 1e-20,
}


def default_context() -> Context:
    return Context.default_ctx()


def _np(x: Any) -> np.ndarray:
    return x.asnumpy() if hasattr(x, "asnumpy") else np.asarray(x)


def assert_almost_equal(
    a: Any,
    b: Any,
    rtol: float | None = None,
    atol: float | None = None,
    names: tuple[str, str] = ("a", "b"),
    equal_nan: bool = False,
) -> None:
    """|a - b| <= atol + rtol |b| element-wise; the error shows the worst element and counts."""
    a, b = _np(a), _np(b)
    dtype = np.result_type(a.dtype, b.dtype) if a.dtype.kind == "f" else np.dtype(np.float64)
    rtol = _DEFAULT_RTOL.get(np.dtype(dtype), 1e-5) if rtol is None else rtol
    atol = _DEFAULT_ATOL.get(np.dtype(dtype), 1e-20) if atol is None else atol
    if a.shape != b.shape:
        raise AssertionError(f"shapes differ: {names[0]} {a.shape} vs {names[1]} {b.shape}")
    if np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan):
        return
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    err = np.abs(a64 - b64) - (atol + rtol * np.abs(b64))
    err = np.where(np.isnan(err), np.inf, err)
    bad = err > 0
    worst = np.unravel_index(int(np.argmax(err)), a.shape) if a.ndim else ()
    rel = np.abs(a64[worst] - b64[worst]) / max(abs(float(b64[worst])), 1e-30)
    raise AssertionError(
        f"arrays {names[0]} and {names[1]} differ in {int(bad.sum())} of {a.size} elements "
        f"(rtol={rtol}, atol={atol}); worst at index {tuple(int(i) for i in worst)}: "
        f"{names[0]}={a64[worst]!r}, {names[1]}={b64[worst]!r}, relative error {rel:.3g}\n"
        f"{names[0]}: {np.array2string(a, threshold=20)}\n"
        f"{names[1]}: {np.array2string(b, threshold=20)}"
    )


def almost_equal(
    a: Any, b: Any, rtol: float | None = None, atol: float | None = None, equal_nan: bool = False
) -> bool:
    try:
        assert_almost_equal(a, b, rtol, atol, equal_nan=equal_nan)
    except AssertionError:
        return False
    return True


def _location(sym: Any, location: Any, dtype: Any) -> dict[str, np.ndarray]:
    names = sym.list_arguments()
    if isinstance(location, Mapping):
        unknown = set(location) - set(names)
        if unknown:
            raise NNVMError(
                f"location names unknown arguments {sorted(unknown)}; arguments are {names}"
            )
        loc = dict(location)
    else:
        if len(location) != len(names):
            raise NNVMError(
                f"location has {len(location)} arrays for {len(names)} arguments {names}"
            )
        loc = dict(zip(names, location))
    missing = [n for n in names if n not in loc]
    if missing:
        raise NNVMError(f"location is missing arguments {missing}")
    return {
        k: np.asarray(_np(v), dtype=dtype if dtype is not None else _np(v).dtype)
        for k, v in loc.items()
    }


def _aux(sym: Any, aux_states: Any, dtype: Any) -> dict[str, np.ndarray]:
    names = sym.list_auxiliary_states()
    if aux_states is None:
        aux_states = {}
    if not isinstance(aux_states, Mapping):
        aux_states = dict(zip(names, aux_states))
    return {k: np.asarray(_np(v), dtype=dtype) for k, v in aux_states.items()}


def _bind(
    sym: Any, ctx: Any, loc: dict[str, np.ndarray], aux: dict[str, np.ndarray], grad_req: Any
) -> Any:
    from . import nd

    ctx = ctx or default_context()
    args = {k: nd.array(v, ctx, dtype=v.dtype) for k, v in loc.items()}
    aux_names = sym.list_auxiliary_states()
    if aux_names and not aux:
        _, _, aux_shapes = sym.infer_shape(**{k: v.shape for k, v in loc.items()})
        aux = {n: np.zeros(s, dtype=np.float32) for n, s in zip(aux_names, aux_shapes)}
    aux_arrays = {k: nd.array(v, ctx, dtype=v.dtype) for k, v in aux.items()}
    grads = {k: nd.zeros(v.shape, ctx, dtype=v.dtype) for k, v in loc.items()}
    return sym.bind(ctx, args, args_grad=grads, grad_req=grad_req, aux_states=aux_arrays)


def check_symbolic_forward(
    sym: Any,
    location: Any,
    expected: Any,
    rtol: float = 1e-4,
    atol: float | None = None,
    aux_states: Any = None,
    ctx: Any = None,
    equal_nan: bool = False,
    dtype: Any = np.float32,
) -> list[np.ndarray]:
    """Forward outputs equal `expected` (a list in list_outputs order, or a dict by name)."""
    loc = _location(sym, location, dtype)
    exe = _bind(sym, ctx, loc, _aux(sym, aux_states, dtype), "null")
    outputs = [o.asnumpy() for o in exe.forward(is_train=False)]
    names = sym.list_outputs()
    if isinstance(expected, Mapping):
        expected = [expected[n] for n in names]
    if len(expected) != len(outputs):
        raise NNVMError(f"expected {len(expected)} outputs, the symbol has {len(outputs)}")
    for name, out, exp in zip(names, outputs, expected):
        assert_almost_equal(out, _np(exp), rtol, atol, (f"forward {name}", "expected"), equal_nan)
    return outputs


def check_symbolic_backward(
    sym: Any,
    location: Any,
    out_grads: Any,
    expected: Any,
    rtol: float = 1e-5,
    atol: float | None = None,
    aux_states: Any = None,
    grad_req: Any = "write",
    ctx: Any = None,
    grad_stypes: Any = None,
    equal_nan: bool = False,
    dtype: Any = np.float32,
) -> dict[str, np.ndarray]:
    """Gradients equal `expected` (dict by argument name, or list in list_arguments order).

    With grad_req 'add' the gradient arrays start from random values, which the result
    must include, as in MXNet.
    """
    loc = _location(sym, location, dtype)
    names = sym.list_arguments()
    if not isinstance(expected, Mapping):
        expected = dict(zip(names, expected))
    reqs = (
        grad_req
        if isinstance(grad_req, Mapping)
        else {n: (grad_req if n in expected else "null") for n in names}
    )
    exe = _bind(sym, ctx, loc, _aux(sym, aux_states, dtype), reqs)
    rng = np.random.default_rng(0)
    initial = {}
    for n, g in exe.grad_dict.items():
        if reqs.get(n) == "add":
            initial[n] = rng.normal(size=g.shape).astype(g.dtype)
            g[:] = initial[n]
    exe.forward(is_train=True)
    grads = [out_grads] if not isinstance(out_grads, list | tuple | Mapping) else out_grads
    if isinstance(grads, Mapping):
        grads = [grads[n] for n in sym.list_outputs()]
    exe.backward([_np(g) for g in grads])
    result = {}
    for n, exp in expected.items():
        got = exe.grad_dict[n].asnumpy()
        want = _np(exp) + initial.get(n, 0)
        assert_almost_equal(got, want, rtol, atol, (f"gradient of {n}", "expected"), equal_nan)
        result[n] = got
    return result


def numeric_grad(f: Any, x: np.ndarray, eps: float) -> np.ndarray:
    """Central differences of scalar f at x (float64)."""
    grad = np.zeros(x.shape, dtype=np.float64)
    flat, gflat = x.reshape(-1), grad.reshape(-1)
    for i in range(flat.size):
        old = flat[i]
        flat[i] = old + eps
        fp = f()
        flat[i] = old - eps
        fm = f()
        flat[i] = old
        gflat[i] = (fp - fm) / (2 * eps)
    return grad


def check_numeric_gradient(
    sym: Any,
    location: Any,
    aux_states: Any = None,
    numeric_eps: float = 1e-3,
    rtol: float = 1e-2,
    atol: float | None = None,
    grad_nodes: Any = None,
    use_forward_train: bool = True,
    ctx: Any = None,
    grad_stype_dict: Any = None,
    dtype: Any = np.float32,
) -> None:
    """Backward agrees with finite differences of sum(outputs * random projection)."""
    loc = _location(sym, location, dtype)
    aux = _aux(sym, aux_states, dtype)
    names = sym.list_arguments()
    if grad_nodes is None:
        grad_nodes = names
    reqs = (
        {n: grad_nodes[n] for n in names if n in grad_nodes}
        if isinstance(grad_nodes, Mapping)
        else {n: ("write" if n in grad_nodes else "null") for n in names}
    )
    exe = _bind(sym, ctx, loc, aux, reqs)
    rng = np.random.default_rng(1234)
    exe.forward(is_train=use_forward_train)
    projs = [rng.normal(size=o.shape).astype(o.dtype) for o in exe.outputs]
    exe.backward(projs)
    symbolic = {n: g.asnumpy() for n, g in exe.grad_dict.items() if reqs.get(n) != "null"}
    probe = _bind(sym, ctx, loc, aux, "null")
    values = {n: v.astype(np.float64) for n, v in loc.items()}

    def f() -> float:
        outs = probe.forward(
            is_train=use_forward_train, **{n: v.astype(loc[n].dtype) for n, v in values.items()}
        )
        return float(sum((o.asnumpy().astype(np.float64) * p).sum() for o, p in zip(outs, projs)))

    if atol is None:
        atol = 1e-3 if np.dtype(dtype) != np.float64 else 1e-6
    for n in symbolic:
        num = numeric_grad(f, values[n], numeric_eps)
        assert_almost_equal(
            symbolic[n], num, rtol, atol, (f"symbolic gradient of {n}", "numeric gradient")
        )


# -- check_op ---------------------------------------------------------------------------------


def check_op(
    name: str,
    shapes: Sequence[Sequence[int]] | None = None,
    params: Mapping[str, Any] | None = None,
    low: float = -1.0,
    high: float = 1.0,
    dtype: Any = np.float32,
    rtol: float = 1e-2,
    atol: float | None = None,
    numeric_eps: float = 1e-3,
    grad: bool = True,
    seed: int = 0,
    ctx: Context | None = None,
) -> None:
    """Check an op's registered attributes against each other (nnvmpy's opcheck).

    - FInferShape forward (outputs from inputs) and backward (an input dropped is inferred
      back, or left unknown, never inferred wrongly), and a known output shape that
      contradicts the inputs raises NNVMError (SHAPE_ASSIGN_CHECK); FInferType likewise;
    - FCompute<cpu> with req='add' adds to what the output held;
    - every FInplaceOption pair gives the same result in place as out of place;
    - FGradient's backward graph agrees with finite differences, and with grad_req='add'
      adds to what the gradient arrays held (grad=True).
    """
    op = Op.get(name)
    attrs = op.parse_attrs(dict(params or {}))
    n_in = op.get_num_inputs(attrs)
    in_shapes: list[tuple[int, ...]] = [tuple(s) for s in (shapes or [(2, 3)] * n_in)]
    if len(in_shapes) != n_in:
        raise NNVMError(f"check_op({name!r}): {n_in} inputs, got {len(in_shapes)} shapes")
    rng = np.random.default_rng(seed)
    inputs = [rng.uniform(low, high, size=s).astype(dtype) for s in in_shapes]
    out_shapes = _check_shape_inference(op, attrs, in_shapes)
    out_types = _check_type_inference(op, attrs, n_in, len(out_shapes), np.dtype(dtype))
    ref = _run_compute(op, attrs, inputs, out_shapes, out_types, OpReqType.kWriteTo)
    _check_req_add(op, attrs, inputs, out_shapes, out_types, ref, rng)
    _check_inplace(op, attrs, inputs, out_shapes, out_types, ref)
    if grad and op.has_attr("FGradient"):
        from . import sym as symbol_api

        variables = [symbol_api.Variable(f"x{i}") for i in range(n_in)]
        s = getattr(symbol_api if not name.startswith("_") else symbol_api._internal, name)(
            *variables, **dict(params or {})
        )
        location = {f"x{i}": x.astype(np.float64) for i, x in enumerate(inputs)}
        check_numeric_gradient(
            s,
            location,
            numeric_eps=numeric_eps,
            rtol=rtol,
            atol=atol,
            dtype=np.float64,
            ctx=ctx or cpu(),
        )
        _check_grad_req_add(s, location, ctx or cpu(), rng)


def _check_grad_req_add(sym: Any, location: dict[str, np.ndarray], ctx: Context, rng: Any) -> None:
    """The backward graph with grad_req='add' adds its gradients to the arrays' values."""
    loc = _location(sym, location, np.float64)
    exe = _bind(sym, ctx, loc, {}, "write")
    exe.forward(is_train=True)
    out_grads = [rng.normal(size=o.shape) for o in exe.outputs]
    exe.backward(out_grads)
    written = {n: g.asnumpy() for n, g in exe.grad_dict.items()}
    check_symbolic_backward(
        sym, location, out_grads, written, 1e-6, 1e-9, grad_req="add", ctx=ctx, dtype=np.float64
    )


def _check_shape_inference(op: Op, attrs: Any, shapes: list[tuple[int, ...]]) -> list[Any]:
    infer = op.get_attr(FInferShape)
    if infer is None:
        raise NNVMError(f"check_op({op.name!r}): no FInferShape")
    n_out = op.get_num_outputs(attrs)
    ins, outs = list(shapes), [None] * n_out
    if not infer(attrs, ins, outs):
        raise AssertionError(
            f"{op.name}: FInferShape returned False with every input known "
            f"({', '.join(map(shape_str, shapes))})"
        )
    for i in range(len(shapes)):
        partial: list[Any] = list(shapes)
        partial[i] = None
        back_outs: list[Any] = list(outs)
        infer(attrs, partial, back_outs)
        if partial[i] is not None and not _agrees(partial[i], shapes[i]):
            raise AssertionError(
                f"{op.name}: FInferShape inferred input {i} backward as "
                f"{shape_str(partial[i])}, but it is {shape_str(shapes[i])}"
            )
        if back_outs != outs:
            raise AssertionError(
                f"{op.name}: FInferShape changed the outputs from {outs} to "
                f"{back_outs} when input {i} was unknown"
            )
    _check_shape_conflicts(op, attrs, shapes, outs)
    return outs


def _agrees(partial: Any, shape: tuple[int, ...]) -> bool:
    """A (possibly partly unknown) inferred shape matches the true one where it is known."""
    return len(partial) == len(shape) and all(
        d is None or int(d) == t for d, t in zip(partial, shape)
    )


def _check_shape_conflicts(
    op: Op, attrs: Any, shapes: list[tuple[int, ...]], outs: list[Any]
) -> None:
    """A known output shape that contradicts the inputs must raise, not be overwritten."""
    infer = op.get_attr(FInferShape)
    assert infer is not None
    for o, shape in enumerate(outs):
        if not shape:
            continue
        wrong = (int(shape[0]) + 1, *shape[1:])
        given: list[Any] = list(outs)
        given[o] = wrong
        try:
            infer(attrs, list(shapes), given)
        except NNVMError:
            continue
        raise AssertionError(
            f"{op.name}: FInferShape accepted output {o} of shape {shape_str(wrong)} "
            f"for inputs {', '.join(map(shape_str, shapes))}, which give "
            f"{shape_str(shape)}; it must raise on a conflict (use nv.shape_assign)"
        )


def _check_type_inference(
    op: Op, attrs: Any, n_in: int, n_out: int, dtype: np.dtype
) -> list[np.dtype]:
    infer = op.get_attr(FInferType)
    if infer is None:
        return [dtype] * n_out
    ins, outs = [dtype] * n_in, [None] * n_out
    infer(attrs, ins, outs)
    if any(t is None for t in outs):
        raise AssertionError(f"{op.name}: FInferType left an output unknown with inputs {dtype}")
    if n_in:
        back_ins: list[Any] = [None] * n_in
        infer(attrs, back_ins, list(outs))
        for i, t in enumerate(back_ins):
            if t is not None and np.dtype(t) != ins[i]:
                raise AssertionError(
                    f"{op.name}: FInferType inferred input {i} backward as {t}, but it is {ins[i]}"
                )
    return [np.dtype(t) for t in outs]


def _run_compute(
    op: Op,
    attrs: Any,
    inputs: list[np.ndarray],
    out_shapes: list[Any],
    out_types: list[Any],
    req: OpReqType,
    outputs: list[Any] | None = None,
) -> list:
    from .engine import RunContext
    from .resource import OpContext, get_resource

    compute = op.get_attr(fcompute("cpu"))
    if compute is None:
        raise NNVMError(f"check_op({op.name!r}): no FCompute<cpu>")
    if outputs is None:
        outputs = [np.zeros(s, dtype=t) for s, t in zip(out_shapes, out_types)]
    requests = op.get_attr(FResourceRequest)
    resources = [get_resource(k, cpu())[0] for k in (requests(attrs) if requests else [])]
    ctx = OpContext(False, RunContext(cpu(), None), resources)
    compute(attrs, ctx, inputs, [req] * len(outputs), outputs)
    return outputs


def _check_req_add(
    op: Op,
    attrs: Any,
    inputs: list[np.ndarray],
    out_shapes: list[Any],
    out_types: list[Any],
    ref: list[np.ndarray],
    rng: Any,
) -> None:
    start = [rng.uniform(-1, 1, size=s).astype(t) for s, t in zip(out_shapes, out_types)]
    got = _run_compute(
        op, attrs, inputs, out_shapes, out_types, OpReqType.kAddTo, [s.copy() for s in start]
    )
    for j, (g, s, r) in enumerate(zip(got, start, ref)):
        assert_almost_equal(
            g,
            s + r,
            names=(f"{op.name} output {j} with req='add'", "initial + output with req='write'"),
        )


def _check_inplace(
    op: Op,
    attrs: Any,
    inputs: list[np.ndarray],
    out_shapes: list[Any],
    out_types: list[Any],
    ref: list[np.ndarray],
) -> None:
    fn = op.get_attr(FInplaceOption)
    for i, o in fn(attrs) if fn is not None else []:
        # PlanMemory shares a block between entries of equal byte size, so an identity
        # op (Reshape, Flatten) may pair arrays of different shapes but the same size
        size = int(np.prod(out_shapes[o], dtype=np.int64))
        if inputs[i].size != size or inputs[i].dtype != out_types[o]:
            raise AssertionError(
                f"{op.name}: FInplaceOption pairs input {i} "
                f"{inputs[i].shape} {inputs[i].dtype} with output {o} "
                f"{out_shapes[o]} {out_types[o]}, which differ in size or dtype"
            )
        ins = [x.copy() for x in inputs]
        outputs = [np.zeros(s, dtype=t) for s, t in zip(out_shapes, out_types)]
        outputs[o] = ins[i].reshape(out_shapes[o])  # a view: the same memory
        got = _run_compute(op, attrs, ins, out_shapes, out_types, OpReqType.kWriteInplace, outputs)
        assert_almost_equal(
            got[o], ref[o], names=(f"{op.name} output {o} in place of input {i}", "out of place")
        )
