"""check_op: an op's registered attributes checked against each other (nnvmpy's opcheck).

Shape and type inference both ways, req='add', in-place safety, and gradients against
finite differences, from the registry alone: no expected values needed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..attrs import FInferShape, FInferType, FInplaceOption, FResourceRequest, fcompute
from ..base import Context, NNVMError, OpReqType, cpu
from ..infer import shape_str
from ..registry import Op
from .compare import assert_almost_equal
from .symbolic import bind, check_numeric_gradient, check_symbolic_backward, parse_location

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
        from nnvmpy import sym as symbol_api

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
            atol=1e-6 if atol is None else atol,
            dtype=np.float64,
            ctx=ctx or cpu(),
        )
        _check_grad_req_add(s, location, ctx or cpu(), rng)


def _check_grad_req_add(sym: Any, location: dict[str, np.ndarray], ctx: Context, rng: Any) -> None:
    """The backward graph with grad_req='add' adds its gradients to the arrays' values."""
    loc = parse_location(sym, location, np.float64)
    exe = bind(sym, ctx, loc, None, "write")
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
    from nnvmpy.engine import RunContext
    from nnvmpy.resource import OpContext, get_resource

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
