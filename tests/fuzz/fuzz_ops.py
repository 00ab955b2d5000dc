"""Every registered op with random, often hostile, parameters, shapes, dtypes and values.

A call starts from one of the op's rows in the op table (tests/ops/cases_*.py: valid
parameters, shapes and inputs) or, for an op without one, from its declared defaults,
and is then mutated: a parameter replaced by a hostile value or an unknown key added,
shapes perturbed, dtypes changed, an input dropped or added, contents made NaN, huge
or out-of-range indices. The call runs through `nd.<op>` and through `sym.<op>` +
simple_bind + forward (+ backward); either may work or raise NNVMError, nothing else.

Outputs larger than MAX_OUTPUT_ELEMENTS are not computed (their shape inference still
runs): the fuzzer looks for wrong errors, not for how long a huge result takes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np
from fuzz_common import Chooser, Finding, Health, checked
from fuzz_values import (
    FLOAT_DTYPES,
    SUPPORTED_DTYPES,
    array_values,
    default_value,
    field_value,
    perturb_shape,
)
from known_issues import skip_reason, skipped_ops

import nnvmpy as nv
from nnvmpy.attrs import FGradient
from nnvmpy.base import NNVMError
from nnvmpy.imperative import infer_outputs, parse_attrs
from nnvmpy.registry import Op

MAX_OUTPUT_ELEMENTS = 2_000_000


@cache
def all_ops() -> tuple[Op, ...]:
    """Every registered op once (aliases share an Op), by name."""
    unique = {id(op): op for op in map(Op.get, Op.list_op_names())}
    return tuple(sorted(unique.values(), key=lambda op: op.name))


def fuzzable_ops() -> tuple[Op, ...]:
    skip = skipped_ops()
    return tuple(op for op in all_ops() if op.name not in skip)


@cache
def table_rows() -> dict[str, list[Any]]:
    """Op name -> its rows in the op table (tests/ops/op_db.py), if that is importable."""
    try:
        from op_db import OP_DB
    except ImportError:
        return {}
    rows: dict[str, list[Any]] = {}
    for case in OP_DB:
        try:
            rows.setdefault(Op.get(case.name).name, []).append(case)
        except NNVMError:
            pass
    return rows


@dataclass
class OpCall:
    """One call: the op, its keyword parameters and its input arrays (NumPy)."""

    op: Op
    params: dict[str, Any]
    inputs: list[np.ndarray]
    how: str  # the mutations made, for the report

    @property
    def names(self) -> tuple[str, ...]:
        """What an error about this op may call it: its name (aliases resolve to it)."""
        return (self.op.name,)

    def repro(self, path: str) -> str:
        args = ", ".join(f"array({x.shape}, {x.dtype})" for x in self.inputs)
        return f"{path}.{self.op.name}({args}, **{self.params!r:.300}) [{self.how}]"


def _fields(op: Op) -> dict[str, Any]:
    cls = getattr(op, "param_cls", None)
    return dict(cls._fields_) if cls is not None else {}


def _seed(c: Chooser, op: Op) -> tuple[dict[str, Any], list[tuple[int, ...]], list[str], Any]:
    """(params, shapes, dtypes, the table row or None) to start from."""
    rows = table_rows().get(op.name, [])
    if rows and c.chance(0.85):
        row = c.choice(rows)
        dtype = np.dtype(c.choice(list(row.dtypes))).name
        return dict(row.params), [tuple(s) for s in row.shapes], [dtype] * len(row.shapes), row
    fields = _fields(op)
    params = {k: default_value(c, f) for k, f in fields.items() if f.required}
    try:
        n_in = op.get_num_inputs(op.parse_attrs(params))
    except Exception:
        n_in = c.integer(1, 3)
    shape = tuple(c.integer(1, 4) for _ in range(c.integer(1, 3)))
    return params, [shape] * n_in, [c.choice(FLOAT_DTYPES)] * n_in, None


def make_call(c: Chooser, op: Op) -> OpCall:
    """A seed for `op`, then zero to three mutations."""
    params, shapes, dtypes, row = _seed(c, op)
    how = [f"seed {row.test_id}" if row is not None else "seed: defaults"]
    fields = _fields(op)
    for _ in range(c.choice([0, 1, 1, 2, 3])):
        kind = c.integer(0, 9)
        if kind <= 3 and fields:
            key = c.choice(sorted(fields))
            params[key] = field_value(c, fields[key])
            how.append(f"{key}={params[key]!r:.60}")
        elif kind == 4:
            params["bogus_param"] = c.choice([1, "x", None])
            how.append("unknown param")
        elif kind <= 6 and shapes:
            i = c.integer(0, len(shapes) - 1)
            if c.chance(0.5):
                new = perturb_shape(c, shapes[i])
                shapes = [new if s == shapes[i] else s for s in shapes]
            else:
                shapes[i] = perturb_shape(c, shapes[i])
            how.append(f"shapes {shapes}")
        elif kind == 7:
            dt = c.choice(SUPPORTED_DTYPES)
            if shapes and c.chance(0.5):
                dtypes[c.integer(0, len(dtypes) - 1)] = dt
            else:
                dtypes = [dt] * len(dtypes)
            how.append(f"dtypes {dtypes}")
        elif kind == 8 and shapes:
            i = c.integer(0, len(shapes) - 1)
            shapes.pop(i)
            dtypes.pop(i)
            how.append("an input dropped")
        else:
            shapes.append(shapes[-1] if shapes else (2,))
            dtypes.append(dtypes[-1] if dtypes else "float32")
            how.append("an input added")
    seed = c.integer(0, 2**31)
    if not shapes:
        inputs = []
    elif row is not None and [tuple(s) for s in row.shapes] == shapes and c.chance(0.5):
        rng = np.random.default_rng(seed)
        inputs = [
            np.asarray(x).astype(dt) for x, dt in zip(row.make_inputs(rng, dtypes[0]), dtypes)
        ]
    else:
        inputs = [array_values(c, s, dt, seed + i) for i, (s, dt) in enumerate(zip(shapes, dtypes))]
    return OpCall(op, params, inputs, "; ".join(how))


def _small_enough(call: OpCall) -> bool:
    """Shape inference as invoke does it; False when the outputs would be huge.

    Errors propagate: a raw one from an op's FInferShape is a finding."""
    attrs = parse_attrs(call.op, call.params)
    if call.op.get_num_inputs(attrs) != len(call.inputs):
        return True  # invoke refuses the call before inference
    n_out = call.op.get_num_outputs(attrs)
    shapes, _ = infer_outputs(
        attrs, [x.shape for x in call.inputs], [x.dtype for x in call.inputs], n_out
    )
    return sum(math.prod(s) for s in shapes) <= MAX_OUTPUT_ELEMENTS


def _function(namespace: Any, op: Op) -> Any:
    return getattr(namespace._internal if op.name.startswith("_") else namespace, op.name)


def run_nd(call: OpCall) -> None:
    arrays = [nv.nd.array(x, dtype=x.dtype) for x in call.inputs]
    if _guarded(call):
        return
    out = _function(nv.nd, call.op)(*arrays, **call.params)
    for o in out if isinstance(out, list | tuple) else [out]:
        o.wait_to_read()
    nv.nd.waitall()


def _guarded(call: OpCall) -> bool:
    """True when the call should not run (huge output); NNVMError leaves it to the call."""
    try:
        return not _small_enough(call)
    except NNVMError:
        return False


def run_sym(call: OpCall, is_train: bool) -> None:
    names = [f"in{i}" for i in range(len(call.inputs))]
    variables = [nv.sym.Variable(n) for n in names]
    sym = _function(nv.sym, call.op)(*variables, name="fuzzed", **call.params)
    if _guarded(call):
        return
    shapes = {n: x.shape for n, x in zip(names, call.inputs)}
    types = {n: x.dtype for n, x in zip(names, call.inputs)}
    arg_shapes, out_shapes, aux_shapes = sym.infer_shape_partial(**shapes)
    everything = [*(arg_shapes or []), *(out_shapes or []), *(aux_shapes or [])]
    if not everything or any(not s or 0 in s for s in everything):
        sym.infer_shape(**shapes)  # unknown shapes: only the error is left to check
        return
    if sum(math.prod(s) for s in everything) > MAX_OUTPUT_ELEMENTS:
        return
    req = {
        n: "write" if np.dtype(types.get(n, np.float32)).kind == "f" else "null"
        for n in sym.list_arguments()
    }
    exe = sym.simple_bind(nv.cpu(), grad_req=req if is_train else "null", type_dict=types, **shapes)
    for n, x in zip(names, call.inputs):
        if n in exe.arg_dict:
            exe.arg_dict[n][:] = x
    outs = exe.forward(is_train=is_train)
    if is_train and call.op.get_attr(FGradient) is not None:
        exe.backward([nv.nd.ones(o.shape, dtype=o.dtype) for o in outs])
    nv.nd.waitall()


def check_op_call(c: Chooser, health: Health, op: Op | None = None) -> list[Finding]:
    """One random call of `op` (a random op if None) through nd and through sym.

    A path the known-issues list names is left out."""
    op = op if op is not None else c.choice(fuzzable_ops())
    call = make_call(c, op)
    dtypes = [x.dtype.name for x in call.inputs]
    found: list[Finding] = []
    if skip_reason(op.name, "nd", dtypes) is None:
        found += checked(
            health, f"op {op.name} (nd)", lambda: run_nd(call), call.repro("nd"), call.names
        )
    is_train = c.chance(0.5)
    if skip_reason(op.name, "sym", dtypes) is None:
        found += checked(
            health,
            f"op {op.name} (sym)",
            lambda: run_sym(call, is_train),
            call.repro("sym") + f" is_train={is_train}",
            (*call.names, "fuzzed"),  # the node's name: its backward nodes carry it
        )
    return found


__all__ = ["OpCall", "all_ops", "check_op_call", "fuzzable_ops", "make_call", "run_nd", "run_sym"]
