"""The generic checks every OpCase of OP_DB goes through.

- forward through `nv.nd.<op>` on every device and listed dtype, against the NumPy
  reference evaluated on the same inputs in float64;
- `out=` overwrites whatever the output held; FCompute<cpu> with req='add' adds to it,
  with req='write' overwrites garbage and with req='null' leaves it alone (MXNet's nd has
  no req argument, so these call the compute function directly);
- check_op: shape and type inference both ways, in-place option safe, req='add';
- gradients against central finite differences, in float64;
- on a GPU (or the simulator) the GPU kernels agree with the CPU ones.
"""

from __future__ import annotations

import zlib
from typing import Any

import numpy as np
import pytest
from op_db import OP_DB, OpCase

import nnvmpy as nv
from nnvmpy.attrs import FCompute_cpu, FInferDynamicShape, TIsBackward
from nnvmpy.base import OpReqType
from nnvmpy.imperative import infer_outputs
from nnvmpy.registry import Op
from nnvmpy.test_utils import _run_compute, check_numeric_gradient, check_op

# the CUDA simulator wraps unsigned integers with NumPy scalars, which warn about it
pytestmark = pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")
IDS = [c.test_id for c in OP_DB]


def cases(keep: Any = None) -> Any:
    """Parametrize a test by the OpCases `keep(case)` selects (all by default)."""
    chosen = [c for c in OP_DB if keep is None or keep(c)]
    return pytest.mark.parametrize("case", chosen, ids=[c.test_id for c in chosen])


by_case = cases()

# (test, case id) -> the bug, until it is fixed; strict, so a fix shows up as XPASS(strict)
KNOWN_BUGS: dict[tuple[str, str], str] = {}


def known_bug(request: pytest.FixtureRequest, test: str, case: OpCase) -> None:
    reason = KNOWN_BUGS.get((test, case.test_id))
    if reason is not None:
        request.applymarker(pytest.mark.xfail(reason=reason, strict=True))


# float64 resolves ~2^29 times finer than float32; 1e-6 leaves room for error that grows
# with an op's conditioning. float16 has ~8x fewer bits than float32's 24.
_SCALE = {np.dtype(np.float64): 1e-6, np.dtype(np.float32): 1.0, np.dtype(np.float16): 100.0}
_FLOOR = {np.dtype(np.float16): (5e-3, 1e-3)}


def tolerances(case: OpCase, dtypes: list[np.dtype]) -> tuple[float, float]:
    """(rtol, atol) for the least precise float dtype among an op's inputs and outputs.

    An integer-only op gets (0, 0): its results must be exact.
    """
    floats = [d for d in dtypes if d.kind == "f"]
    if not floats:
        return 0.0, 0.0
    worst = max(floats, key=lambda d: np.finfo(d).eps)
    for key, tol in case.tols.items():
        if np.dtype(key) == worst:
            return tol
    scale = _SCALE.get(worst, 1.0)
    floor_r, floor_a = _FLOOR.get(worst, (0.0, 0.0))
    return max(case.rtol * scale, floor_r), max(case.atol * scale, floor_a)


def rng_for(case: OpCase, *salt: Any) -> np.random.Generator:
    """A generator seeded by the test id: reproducible and different per case."""
    return np.random.default_rng(zlib.crc32(repr((case.test_id, *salt)).encode()))


def op_function(namespace: Any, name: str) -> Any:
    return getattr(namespace._internal if name.startswith("_") else namespace, name)


def as_list(x: Any) -> list[Any]:
    return list(x) if isinstance(x, list | tuple) else [x]


def reference(case: OpCase, inputs: list[np.ndarray]) -> list[np.ndarray]:
    return [np.asarray(r) for r in as_list(case.reference(*inputs, **case.params))]


def assert_matches(case: OpCase, got: np.ndarray, want: np.ndarray, in_dtype: Any, what: str):
    """Integer outputs exactly (wrapping as C casts do); floats within the derived tolerance."""
    assert got.shape == want.shape, f"{case.test_id} {what}: shape {got.shape} != {want.shape}"
    if got.dtype.kind in "iub":
        np.testing.assert_array_equal(
            got, as_int(want, got.dtype), err_msg=f"{case.test_id} {what}"
        )
        return
    rtol, atol = tolerances(case, [np.dtype(in_dtype), got.dtype])
    nv.test_utils.assert_almost_equal(got, want, rtol, atol, (f"{case.test_id} {what}", "numpy"))


def as_int(x: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """x in an integer dtype as C does it: floats truncate toward zero, then bits wrap."""
    return x.astype(np.int64).astype(dtype)


def make_inputs(case: OpCase, dtype: Any, *salt: Any) -> list[np.ndarray]:
    inputs = case.make_inputs(rng_for(case, dtype, *salt), dtype)
    assert len(inputs) == len(case.shapes), f"{case.test_id}: inputs do not match shapes"
    return inputs


def run_nd(case: OpCase, inputs: list[np.ndarray], ctx: nv.Context, out: Any = None) -> list:
    arrays = [nv.nd.array(x, ctx=ctx, dtype=x.dtype) for x in inputs]
    extra = {} if out is None else {"out": out}
    with ctx:  # an op without inputs (an initialiser) runs on the default device
        result = op_function(nv.nd, case.name)(*arrays, **case.params, **extra)
    return as_list(result)


def attrs_and_outputs(case: OpCase, inputs: list[np.ndarray]) -> tuple[Any, Any, list, list]:
    op = Op.get(case.name)
    attrs = op.parse_attrs(case.params)
    dynamic = op.get_attr(FInferDynamicShape)  # output shapes that need the input values
    shapes, dtypes = infer_outputs(
        attrs,
        [x.shape for x in inputs],
        [x.dtype for x in inputs],
        op.get_num_outputs(attrs),
        None
        if dynamic is None
        else dynamic(attrs, [nv.nd.array(x, dtype=x.dtype) for x in inputs]),
    )
    return op, attrs, shapes, dtypes


def garbage(shape: Any, dtype: np.dtype) -> np.ndarray:
    return np.full(shape, np.nan if dtype.kind == "f" else 123, dtype=dtype)


# -- the table itself --------------------------------------------------------------------------


def test_op_db_ids_are_unique() -> None:
    seen: set[str] = set()
    dups = {i for i in IDS if i in seen or seen.add(i)}  # type: ignore[func-returns-value]
    assert not dups, f"OpCase test ids must be unique (give the cases an id=): {sorted(dups)}"


# Ops only graph passes make (their attribute parsers refuse user attributes, so a table
# row cannot build them); the pass tests compare their graphs' outputs with the plain
# graph's: tests/passes/test_simplify_inference.py, test_fuse_epilogue.py, test_channels_last.py.
# _backward_BatchNormAddReLU: the gradient of FuseBatchNormReLU's op (not TIsBackward: its
# outputs are not its forward's inputs in order), test_batch_norm_relu_kernels.py.
MADE_BY_PASSES = {
    "_backward_BatchNormAddReLU",
    "_FoldScaleShift",
    "_Epilogue",
    "_ChannelsLastWeight",
    "_ChannelsLastConvolution",
    "_ChannelsLastPooling",
}
# Ops whose output shape only out= gives (a table row calls without it): test_set_value.py.
NEEDS_OUT = {"_set_value"}


def test_every_builtin_forward_op_has_a_case() -> None:
    """A new op in src/nnvmpy/ops comes with its OpCase row (backward ops go via gradients)."""
    covered = {c.name for c in OP_DB} | MADE_BY_PASSES | NEEDS_OUT
    missing = [
        op.name
        for op in Op.list_ops()
        if op.source.startswith("nnvmpy/ops/")
        and not op.get_attr(TIsBackward, False)
        and op.has_attr(FCompute_cpu)
        and covered.isdisjoint((op.name, *op.aliases))
    ]
    assert not missing, f"ops without a row in tests/ops/cases_*.py: {missing}"


def test_every_case_names_a_registered_op() -> None:
    unknown = [c.test_id for c in OP_DB if c.name not in Op.list_op_names()]
    assert not unknown, f"OpCases for unregistered ops: {unknown}"


# -- forward -------------------------------------------------------------------------------------


@by_case
def test_forward_matches_reference(case: OpCase, ctx: nv.Context) -> None:
    if ctx.device_type == "gpu" and not case.gpu:
        pytest.skip(f"{case.name} has no FCompute<gpu>")
    for dtype in case.dtypes:
        inputs = make_inputs(case, dtype)
        got = run_nd(case, inputs, ctx)
        want = reference(case, [x.astype(np.float64) for x in inputs])
        assert len(got) == len(want), f"{case.test_id}: {len(got)} outputs, expected {len(want)}"
        for j, (g, w) in enumerate(zip(got, want)):
            assert g.context == ctx
            assert_matches(case, g.asnumpy(), w, dtype, f"output {j} ({np.dtype(dtype)}, {ctx})")


@by_case
def test_out_argument_overwrites_garbage(case: OpCase, ctx: nv.Context) -> None:
    if ctx.device_type == "gpu" and not case.gpu:
        pytest.skip(f"{case.name} has no FCompute<gpu>")
    dtype = case.dtypes[0]
    inputs = make_inputs(case, dtype, "out")
    _, _, shapes, dtypes = attrs_and_outputs(case, inputs)
    if not shapes:
        pytest.skip(f"{case.name} has no outputs (it only mutates its inputs)")
    want = reference(case, [x.astype(np.float64) for x in inputs])
    outs = [nv.nd.array(garbage(s, d), ctx=ctx, dtype=d) for s, d in zip(shapes, dtypes)]
    outs = outs[: len(want)]  # the visible outputs
    got = run_nd(case, inputs, ctx, out=outs if len(outs) > 1 else outs[0])
    for j, (g, o, w) in enumerate(zip(got, outs, want)):
        assert g is o, f"{case.test_id}: out= must return the array it was given"
        assert_matches(case, o.asnumpy(), w, dtype, f"out[{j}]")


@by_case
@pytest.mark.parametrize("req", ["write", "add", "null"])
def test_fcompute_honours_req(case: OpCase, req: str, request: pytest.FixtureRequest) -> None:
    """kWriteTo overwrites garbage, kAddTo adds to what was there, kNullOp touches nothing."""
    known_bug(request, f"req={req}", case)
    for dtype in case.dtypes:
        inputs = make_inputs(case, dtype, "req")
        op, attrs, shapes, dtypes = attrs_and_outputs(case, inputs)
        want = reference(case, [x.astype(np.float64) for x in inputs])
        rng = rng_for(case, dtype, req)
        if req == "add":  # small start values: integer sums must not overflow
            start = [rng.integers(0, 5, size=s).astype(d) for s, d in zip(shapes, dtypes)]
        else:
            start = [garbage(s, d) for s, d in zip(shapes, dtypes)]
        outputs = [s.copy() for s in start]
        _run_compute(op, attrs, inputs, shapes, dtypes, OpReqType.parse(req), outputs)
        for j, w in enumerate(want):
            if req == "null":
                np.testing.assert_array_equal(outputs[j], start[j], err_msg=f"{case.test_id}")
            elif req == "add":
                # an integer output gets the op's result converted first, then added
                result = as_int(w, dtypes[j]) if dtypes[j].kind in "iub" else w
                total = result.astype(np.float64) + start[j]
                assert_matches(case, outputs[j], total, dtype, f"output {j} with req='add'")
            else:
                assert_matches(case, outputs[j], w, dtype, f"output {j} with req='write'")


# -- attributes against each other, and gradients ----------------------------------------------


@cases(lambda c: c.check_op)
def test_check_op(case: OpCase) -> None:
    """Shape/type inference both ways, req='add', in-place safety (gradients: below)."""
    check_op(
        case.name,
        [tuple(s) for s in case.shapes],
        case.params,
        low=case.low,
        high=case.high,
        dtype=case.dtypes[0],
        grad=False,
    )


@cases(lambda c: c.grad)
def test_gradient_matches_finite_differences(case: OpCase) -> None:
    inputs = make_inputs(case, np.float64, "grad")
    names = [f"x{i}" for i in range(len(inputs))]
    variables = [nv.sym.Variable(n) for n in names]
    s = op_function(nv.sym, case.name)(*variables, **case.params)
    which = range(len(inputs)) if case.grad_inputs is None else case.grad_inputs
    check_numeric_gradient(
        s,
        dict(zip(names, inputs)),
        rtol=case.grad_rtol,
        atol=case.grad_atol,
        grad_nodes=[names[i] for i in which],
        dtype=np.float64,
        ctx=nv.cpu(),
    )


# -- GPU -----------------------------------------------------------------------------------------


@pytest.mark.gpu
@cases(lambda c: c.gpu)
def test_gpu_matches_cpu(case: OpCase) -> None:
    for dtype in case.dtypes:
        inputs = make_inputs(case, dtype, "gpu")
        on_cpu = run_nd(case, inputs, nv.cpu())
        on_gpu = run_nd(case, inputs, nv.gpu(0))
        for j, (c, g) in enumerate(zip(on_cpu, on_gpu)):
            assert g.dtype == c.dtype
            assert g.shape == c.shape
            assert_matches(case, g.asnumpy(), c.asnumpy().astype(np.float64), dtype, f"gpu {j}")
