"""The generated nd namespace and the imperative path behind it.

Signatures and docstrings, ops registered after import, inputs by keyword, variadic
ops, errors that name the op and stay harmless, kernel errors surfacing at the next
wait, every engine computing the same program, and resources granted to kernels.
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy import engine, registry
from nnvmpy.attrs import FCompute_cpu, FInferShape, FInferType, FListInputNames, FResourceRequest
from nnvmpy.resource import ResourceRequest

nd = nv.nd
P = inspect.Parameter


def register_elemwise(name: str, compute, n_in: int = 1) -> nv.Op:
    return (
        nv.register_op(name)
        .describe(f"Test op {name}.")
        .set_num_inputs(n_in)
        .set_attr(FInferShape, nv.elemwise_shape(n_in, 1))
        .set_attr(FInferType, nv.elemwise_type(n_in, 1))
        .set_attr(FCompute_cpu, compute)
    )


def fail(attrs, ctx, inputs, req, outputs):
    raise ValueError("kernel exploded")


def still_works() -> None:
    x = nd.array([-1.0, 2.0])
    np.testing.assert_array_equal(nd.relu(x).asnumpy(), [0.0, 2.0])
    nd.waitall()


# -- the generated namespace --------------------------------------------------------------------


def test_signature_lists_inputs_then_keyword_only_params_then_out() -> None:
    sig = inspect.signature(nd.quadratic)
    assert list(sig.parameters) == ["data", "a", "b", "c", "out"]
    data, a, b, c, out = sig.parameters.values()
    assert data.kind is P.POSITIONAL_OR_KEYWORD
    for p in (a, b, c):
        assert p.kind is P.KEYWORD_ONLY
        assert p.default == 0.0
    assert out.kind is P.KEYWORD_ONLY
    assert out.default is None
    assert nd.quadratic.__name__ == "quadratic"


def test_signature_of_binary_variadic_and_required_param_ops() -> None:
    assert list(inspect.signature(nd.elemwise_add).parameters)[:2] == ["lhs", "rhs"]
    add_n = inspect.signature(nd.add_n).parameters
    assert next(iter(add_n.values())).kind is P.VAR_POSITIONAL
    a_min = inspect.signature(nd.clip).parameters["a_min"]
    assert a_min.kind is P.KEYWORD_ONLY
    assert a_min.default is P.empty  # required


def test_docstring_has_the_description_and_the_arguments() -> None:
    doc = nd.quadratic.__doc__
    assert "f(x) = a * x^2 + b * x + c" in doc
    assert "Coefficient of the quadratic term" in doc
    assert "Constant term" in doc
    assert "data : NDArray" in doc
    assert "Input ndarray" in doc
    assert "a : float" in doc
    assert "Hyperbolic tangent" in nd.tanh.__doc__


def test_internal_ops_live_in_nd_internal_only() -> None:
    y = nd._internal._plus_scalar(nd.array([1.0, 2.0]), scalar=0.5)
    np.testing.assert_array_equal(y.asnumpy(), [1.5, 2.5])
    with pytest.raises(AttributeError, match="_plus_scalar"):
        nd._plus_scalar
    with pytest.raises(AttributeError, match="relu"):
        nd._internal.relu
    assert "_plus_scalar" in dir(nd._internal)
    assert "_plus_scalar" not in dir(nd)
    assert "relu" in dir(nd)
    assert "relu" not in dir(nd._internal)
    with pytest.raises(AttributeError, match="no_such_op"):
        nd.no_such_op


def test_an_op_registered_after_import_appears_and_goes_with_its_scope() -> None:
    with registry.scoped_registry():
        register_elemwise("test_imp_triple", lambda a, c, i, r, o: np.multiply(i[0], 3, out=o[0]))
        register_elemwise("_test_imp_hidden", lambda a, c, i, r, o: np.negative(i[0], out=o[0]))
        assert "test_imp_triple" in dir(nd)
        assert "_test_imp_hidden" in dir(nd._internal)
        assert "_test_imp_hidden" not in dir(nd)
        x = nd.array([1.0, 2.0])
        np.testing.assert_array_equal(nd.test_imp_triple(x).asnumpy(), [3.0, 6.0])
        np.testing.assert_array_equal(nd._internal._test_imp_hidden(x).asnumpy(), [-1.0, -2.0])
        assert "Test op test_imp_triple." in nd.test_imp_triple.__doc__
    assert "test_imp_triple" not in dir(nd)
    with pytest.raises(AttributeError):
        nd.test_imp_triple


def test_a_changed_op_gets_a_fresh_function(scoped_registry) -> None:
    op = register_elemwise("test_imp_changing", lambda a, c, i, r, o: np.add(i[0], 1, out=o[0]))
    first = nd.test_imp_changing
    op.describe("Now documented differently.")
    assert "documented differently" in nd.test_imp_changing.__doc__
    assert first is not nd.test_imp_changing


# -- calling ------------------------------------------------------------------------------------


def test_inputs_by_keyword() -> None:
    a, b = nd.array([1.0, 2.0]), nd.array([10.0, 20.0])
    np.testing.assert_array_equal(nd.elemwise_sub(lhs=a, rhs=b).asnumpy(), [-9.0, -18.0])
    np.testing.assert_array_equal(nd.elemwise_sub(rhs=b, lhs=a).asnumpy(), [-9.0, -18.0])
    np.testing.assert_array_equal(nd.elemwise_sub(a, rhs=b).asnumpy(), [-9.0, -18.0])
    y = nd.quadratic(data=a, a=1.0, b=2.0, c=3.0)
    np.testing.assert_array_equal(y.asnumpy(), [6.0, 11.0])


def test_inputs_by_keyword_use_flistinputnames(scoped_registry) -> None:
    op = register_elemwise(
        "test_imp_axpy", lambda a, c, i, r, o: np.add(2 * i[0], i[1], out=o[0]), n_in=2
    )
    op.set_attr(FListInputNames, lambda attrs: ["x", "y"])
    x, y = nd.array([1.0]), nd.array([5.0])
    assert list(inspect.signature(nd.test_imp_axpy).parameters)[:2] == ["x", "y"]
    assert nd.test_imp_axpy(y=y, x=x).asscalar() == 7.0


def test_an_input_given_twice_is_an_error() -> None:
    a = nd.array([1.0])
    with pytest.raises(TypeError, match="lhs"):
        nd.elemwise_add(a, lhs=a)
    still_works()


@pytest.mark.parametrize("n", [1, 2, 3, 5])
def test_variadic_add_n(n) -> None:
    arrays = [np.full((2, 3), i + 1.5, dtype=np.float32) for i in range(n)]
    got = nd.add_n(*[nd.array(a) for a in arrays])
    np.testing.assert_allclose(got.asnumpy(), np.sum(arrays, axis=0))


def test_add_n_with_an_explicit_num_args() -> None:
    a = nd.array([1.0, 2.0])
    np.testing.assert_array_equal(nd.add_n(a, a, a, num_args=3).asnumpy(), [3.0, 6.0])
    with pytest.raises(nv.NNVMError, match="add_n: expects 2 inputs, got 3"):
        nd.add_n(a, a, a, num_args=2)
    still_works()


def test_unknown_parameter_names_the_op_and_suggests() -> None:
    x = nd.array([1.0])
    with pytest.raises(nv.ParamError, match=r"quadratic.*'aa'.*did you mean 'a'"):
        nd.quadratic(x, aa=1.0)
    still_works()


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"a": "abc"}, r"quadratic: parameter 'a' expects float, got 'abc'"),
        ({"a": [1, 2]}, r"quadratic: parameter 'a'"),
    ],
)
def test_bad_parameter_values_name_the_op_and_parameter(params, match) -> None:
    with pytest.raises(nv.ParamError, match=match):
        nd.quadratic(nd.array([1.0]), **params)
    still_works()


def test_missing_required_parameter() -> None:
    with pytest.raises(nv.ParamError, match=r"clip.*'a_max'"):
        nd.clip(nd.array([1.0]), a_min=0.0)
    still_works()


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda a: nd.elemwise_add(a), "elemwise_add: expects 2 inputs, got 1"),
        (lambda a: nd.relu(a, a), "relu: expects 1 inputs, got 2"),
        (lambda a: nd.relu(np.ones(2)), "relu: input 0 must be an NDArray, got ndarray"),
        (lambda a: nd.elemwise_add(a, [1.0, 2.0]), "elemwise_add: input 1 must be an NDArray"),
    ],
    ids=["too-few", "too-many", "numpy-input", "list-input"],
)
def test_wrong_inputs_are_errors_naming_the_op(call, match) -> None:
    with pytest.raises(nv.NNVMError, match=match):
        call(nd.array([1.0, 2.0]))
    still_works()


def test_shape_mismatch_names_the_op_and_both_shapes() -> None:
    a, b = nd.zeros((2, 3)), nd.zeros((3, 2))
    with pytest.raises(nv.InferError) as info:
        nd.elemwise_mul(a, b)
    msg = str(info.value)
    assert "elemwise_mul" in msg
    assert "(2, 3)" in msg
    assert "(3, 2)" in msg
    still_works()


def test_dtype_mismatch_is_an_error() -> None:
    a, b = nd.zeros((2,)), nd.zeros((2,), dtype="float64")
    with pytest.raises(nv.InferError, match="elemwise_add"):
        nd.elemwise_add(a, b)
    still_works()


def test_a_repeated_call_still_checks_the_device_of_every_input() -> None:
    a, b = nd.array([1.0, 2.0]), nd.array([3.0, 4.0])
    np.testing.assert_array_equal(nd.elemwise_add(a, b).asnumpy(), [4.0, 6.0])
    elsewhere = nd.array([3.0, 4.0], ctx=nv.cpu(1))  # same shape and dtype: same call plan
    with pytest.raises(nv.NNVMError, match=r"elemwise_add: input 1 is on cpu\(1\)"):
        nd.elemwise_add(a, elsewhere)
    still_works()


def test_a_changed_kernel_is_used_by_the_next_call(scoped_registry) -> None:
    op = register_elemwise("test_imp_rekernel", lambda a, c, i, r, o: np.add(i[0], 1, out=o[0]))
    x = nd.array([1.0, 2.0])
    np.testing.assert_array_equal(nd.test_imp_rekernel(x).asnumpy(), [2.0, 3.0])
    op.set_attr(FCompute_cpu, lambda a, c, i, r, o: np.add(i[0], 5, out=o[0]), plevel=11)
    np.testing.assert_array_equal(nd.test_imp_rekernel(x).asnumpy(), [6.0, 7.0])


def test_op_without_fcompute_for_the_device_is_an_error(scoped_registry) -> None:
    (
        nv.register_op("test_imp_no_kernel")
        .set_num_inputs(1)
        .set_attr(FInferShape, nv.elemwise_shape(1, 1))
        .set_attr(FInferType, nv.elemwise_type(1, 1))
    )
    with pytest.raises(nv.NNVMError, match="test_imp_no_kernel: no FCompute<cpu>"):
        nd.test_imp_no_kernel(nd.zeros((2,)))
    still_works()


def test_calls_are_asynchronous_and_ordered() -> None:
    x = nd.zeros((4096,))
    for i in range(100):
        x = nd._internal._plus_scalar(x, scalar=float(i))
    x = nd.elemwise_mul(x, x)
    np.testing.assert_array_equal(x.asnumpy(), np.full(4096, 4950.0**2))


# -- errors inside kernels ---------------------------------------------------------------------


@pytest.fixture(params=sorted(engine.ENGINE_TYPES))
def each_engine(request):
    """Every engine type in turn, as the process-wide engine."""
    nd.waitall()
    with engine.engine_type(request.param) as eng:
        yield eng
        nd.waitall()


WAITS = {
    "asnumpy": lambda y: y.asnumpy(),
    "wait_to_read": lambda y: y.wait_to_read(),
    "waitall": lambda y: nd.waitall(),
    "a-dependent": lambda y: nd.relu(y).asnumpy(),  # an op reading the failed output fails too
}


@pytest.mark.parametrize("wait", sorted(WAITS))
def test_kernel_error_surfaces_at_the_next_wait(scoped_registry, each_engine, wait) -> None:
    register_elemwise("test_imp_fail", fail)
    x = nd.array([1.0, 2.0])
    y = nd.test_imp_fail(x)  # pushed: returns at once, even on the naive engine
    with pytest.raises(nv.NNVMError, match=r"test_imp_fail.*kernel exploded") as info:
        WAITS[wait](y)
    assert isinstance(info.value.__cause__, ValueError)
    nd.waitall()  # reported once
    still_works()
    z = nd.quadratic(x, a=1.0)
    np.testing.assert_array_equal(z.asnumpy(), [1.0, 4.0])


def test_kernel_error_does_not_poison_independent_arrays(scoped_registry, each_engine) -> None:
    register_elemwise("test_imp_fail", fail)
    good = nd.array([3.0])
    nd.test_imp_fail(nd.array([1.0]))
    other = nd._internal._mul_scalar(good, scalar=2.0)
    assert other.asscalar() == 6.0
    with pytest.raises(nv.NNVMError, match="kernel exploded"):
        nd.waitall()
    still_works()


def test_a_bad_kernel_argument_surfaces_as_an_error(scoped_registry) -> None:
    """An exception from the kernel layer (not user code) takes the same route."""

    def wrong_shape(attrs, ctx, inputs, req, outputs):
        nv.ops.elemwise_unary._relu.launch(ctx, outputs[0], req[0], np.zeros(7, np.float32))

    register_elemwise("test_imp_bad_launch", wrong_shape)
    y = nd.test_imp_bad_launch(nd.zeros((3,)))
    with pytest.raises(nv.NNVMError, match="test_imp_bad_launch"):
        y.asnumpy()
    still_works()


# -- engines -----------------------------------------------------------------------------------


def small_program(x0: np.ndarray) -> nd.NDArray:
    x = nd.array(x0)
    y = nd.relu(x) * 2 + nd.quadratic(x, a=1.0, b=-2.0, c=0.5)
    y += x
    z = nd.add_n(y, x, nd.sigmoid(y))
    z -= 1
    w = z.copy()
    w /= 4
    return nd.elemwise_div(w, nd.exp(x)) - z.reshape((-1,)).reshape(x0.shape)


def small_program_numpy(x: np.ndarray) -> np.ndarray:
    x = x.astype(np.float64)
    y = np.maximum(x, 0) * 2 + (x * x - 2 * x + 0.5) + x
    z = y + x + 1 / (1 + np.exp(-y)) - 1
    return (z / 4) / np.exp(x) - z


def test_every_engine_computes_the_same_program(each_engine) -> None:
    x0 = np.linspace(-2, 2, 60, dtype=np.float32).reshape(5, 12)
    got = small_program(x0).asnumpy()
    np.testing.assert_allclose(got, small_program_numpy(x0), rtol=1e-5, atol=1e-5)


def test_engines_agree_with_each_other_exactly() -> None:
    x0 = np.random.default_rng(0).uniform(-2, 2, size=(64, 33)).astype(np.float32)
    results = {}
    for name in sorted(engine.ENGINE_TYPES):
        with engine.engine_type(name):
            results[name] = small_program(x0).asnumpy()
            nd.waitall()
    first, *rest = results.values()
    for r in rest:
        np.testing.assert_array_equal(r, first)


# -- resources ---------------------------------------------------------------------------------


def test_resources_are_delivered_to_the_kernel(scoped_registry) -> None:
    seen = {}

    def compute(attrs, ctx, inputs, req, outputs):
        scratch = ctx.requested[0].get_space((2, 3), np.float64)
        gen = ctx.requested[1].get_random()
        seen.update(scratch=(scratch.shape, scratch.dtype), gen=gen, n=len(ctx.requested))
        scratch[...] = inputs[0] * 2  # usable memory of the asked shape and dtype
        noise = gen.uniform(0.0, 1.0, size=inputs[0].shape)
        outputs[0][...] = scratch + noise

    register_elemwise("test_imp_resources", compute).set_attr(
        FResourceRequest, lambda attrs: [ResourceRequest.kTempSpace, ResourceRequest.kRandom]
    )
    x = np.arange(6, dtype=np.float64).reshape(2, 3)
    y = nd.test_imp_resources(nd.array(x, dtype="float64")).asnumpy()
    assert seen["n"] == 2
    assert seen["scratch"] == ((2, 3), np.float64)
    assert isinstance(seen["gen"], np.random.Generator)
    noise = y - 2 * x
    assert np.all((noise >= 0) & (noise < 1))
    assert len(np.unique(noise)) == 6
    y2 = nd.test_imp_resources(nd.array(x, dtype="float64")).asnumpy()
    assert not np.array_equal(y, y2)  # the generator advances between calls


def test_temp_space_takes_any_shape_spelling_and_reuses_its_buffer() -> None:
    from nnvmpy.resource import Resource

    space = Resource(ResourceRequest.kTempSpace, nv.cpu())
    big = space.get_space((4, 6), "float64")
    assert (big.shape, big.dtype) == ((4, 6), np.float64)
    for shape, want in ((5, (5,)), ([2, 3], (2, 3)), ((np.int64(3), 2), (3, 2)), ((), ())):
        got = space.get_space(shape, np.float32)
        assert got.shape == want
        assert np.shares_memory(got, big) or got.size == 0  # smaller asks reuse the buffer
    grown = space.get_space((10, 10), np.float64)  # a larger ask gets a larger buffer
    grown[...] = 1.0
    assert grown.sum() == 100.0


def test_resource_of_the_wrong_kind_is_a_type_error(scoped_registry) -> None:
    def compute(attrs, ctx, inputs, req, outputs):
        ctx.requested[0].get_random()

    register_elemwise("test_imp_wrong_resource", compute).set_attr(
        FResourceRequest, lambda attrs: [ResourceRequest.kTempSpace]
    )
    y = nd.test_imp_wrong_resource(nd.zeros((2,)))
    with pytest.raises(nv.NNVMError, match="get_random"):
        y.wait_to_read()
    still_works()


def test_an_op_without_inputs_runs_on_the_device_its_ctx_parameter_names() -> None:
    # MXNet: nd.random_uniform(..., ctx=...) and nd._zeros(..., ctx=...) place their output
    assert nv.nd.random_uniform(shape=(2,), ctx=nv.cpu(1)).context == nv.cpu(1)
    assert nv.nd._internal._zeros(shape=(2,), ctx="cpu(2)").context == nv.cpu(2)
    with pytest.raises(nv.NNVMError, match="ctx: cannot read 'tpu"):
        nv.nd._internal._zeros(shape=(2,), ctx="tpu(2)")
    assert nv.nd._internal._zeros(shape=(2,)).context == nv.cpu(0)


def test_a_hostile_input_count_is_refused_before_input_names_are_built() -> None:
    """A fuzz finding: num_weights=2**40 made nd.multi_sgd_update build 2**40 input names
    (FListInputNames) before anything checked the count; now the count is refused."""
    with pytest.raises(nv.NNVMError, match="multi_sgd_update"):
        nv.nd.multi_sgd_update(nv.nd.ones((2,)), num_weights=2**40, lrs=(0.1,), wds=(0.0,))


def test_an_empty_output_with_a_dim_numpy_refuses_is_a_named_error() -> None:
    """A fuzz finding: _eye(N=0, M=2**63) takes 0 bytes, so allocation passed, and NumPy's
    view of the shape raised a bare ValueError; the system stays usable after it."""
    with pytest.raises(nv.NNVMError, match=r"shape \(0, 9223372036854775808\)"):
        nv.nd._internal._eye(N=0, M=2**63)
    np.testing.assert_array_equal(nv.nd._internal._eye(N=2, M=3).asnumpy(), np.eye(2, 3))


_SPECIALIZED_CALLS = [
    ("relu", [np.array([1.0, -2.0, 3.0, -4.0], np.float32)], {}, lambda x: np.maximum(x, 0)),
    ("relu", [np.linspace(-1, 1, 24).reshape(2, 3, 4)], {}, lambda x: np.maximum(x, 0)),
    ("sqrt", [np.arange(6, dtype=np.float64).reshape(2, 3)], {}, np.sqrt),
    ("elemwise_add", [np.arange(5, dtype=np.int32), np.arange(5, dtype=np.int32) * 7], {}, np.add),
    (
        "elemwise_mul",
        [np.arange(6, dtype=np.float32).reshape(3, 2), np.full((3, 2), -1.5, np.float32)],
        {},
        np.multiply,
    ),
    ("_plus_scalar", [np.arange(4, dtype=np.float32)], {"scalar": 2.5}, lambda x: x + 2.5),
    ("_rminus_scalar", [np.arange(6.0).reshape(2, 3)], {"scalar": 1}, lambda x: 1 - x),
]


@pytest.mark.parametrize(("name", "arrays", "params", "reference"), _SPECIALIZED_CALLS)
def test_repeated_element_wise_calls_run_the_specialised_loop(
    name, arrays, params, reference, each_engine
) -> None:
    """A call plan of an element-wise op calls the compiled loop for its one signature
    directly; the repeats give NumPy's values on every engine (the first call builds it)."""
    from nnvmpy.imperative import CallPlan

    op = registry.Op.get(name)
    inputs = [nv.nd.array(a, dtype=a.dtype) for a in arrays]
    plan = CallPlan(op, inputs, dict(params))
    assert plan.fast is not None
    fn = getattr(nv.nd._internal, name, None) or getattr(nv.nd, name)
    for _ in range(3):
        got = fn(*inputs, **params)
        np.testing.assert_allclose(got.asnumpy(), reference(*arrays), rtol=1e-6)
        assert got.dtype == arrays[0].dtype


def test_signatures_off_the_plain_path_are_not_specialised() -> None:
    """float16 goes through float32 copies and large float arrays of an op with a NumPy
    implementation through NumPy: their plans keep the checked launch, with right values."""
    from nnvmpy.imperative import CallPlan

    half = nv.nd.array(np.array([1.0, -2.0, 3.0], np.float16), dtype=np.float16)
    assert CallPlan(registry.Op.get("relu"), [half], {}).fast is None
    np.testing.assert_array_equal(nv.nd.relu(half).asnumpy(), [1.0, 0.0, 3.0])
    big = np.linspace(-3, 3, 1 << 16).astype(np.float32)
    assert CallPlan(registry.Op.get("tanh"), [nv.nd.array(big)], {}).fast is None
    np.testing.assert_allclose(nv.nd.tanh(nv.nd.array(big)).asnumpy(), np.tanh(big), rtol=1e-6)


def test_list_valued_params_reuse_the_call_plan_and_parsed_attrs() -> None:
    """multi_sgd_update(lrs=[...]) is planned once, not parsed and inferred on every call."""
    from nnvmpy import imperative

    ws = [nv.nd.ones((3,)) for _ in range(2)]
    gs = [nv.nd.ones((3,)) for _ in range(2)]

    def call() -> None:
        nv.nd.multi_sgd_update(ws[0], gs[0], ws[1], gs[1], out=ws, lrs=[0.5, 0.25],
                               wds=[0.0, 0.0], num_weights=2)  # fmt: skip

    op = registry.Op.get("multi_sgd_update")
    call()
    assert any(key[0] is op for key in imperative._plans)  # planned and kept
    assert any(key[0] is op for key in imperative._attrs_cache)
    plans, attrs = dict(imperative._plans), dict(imperative._attrs_cache)
    call()
    assert imperative._plans == plans
    assert imperative._attrs_cache == attrs
    np.testing.assert_allclose(ws[0].asnumpy(), [0.0] * 3)  # 1 - 0.5 * 1, twice
    np.testing.assert_allclose(ws[1].asnumpy(), [0.5] * 3)


def test_element_wise_calls_below_the_parallel_cut_run_in_the_calling_thread() -> None:
    """A free element-wise call on up to parallel_size() - 1 elements is pushed INLINE
    (runs here: a worker hand-off costs more than the loop); a dot of the same output
    size and an element-wise loop large enough for a thread team go to the workers."""
    from nnvmpy import imperative, threads
    from nnvmpy.engine import FnProperty

    def prop(op_name: str, *arrays: nv.nd.NDArray) -> FnProperty:
        out = getattr(nv.nd, op_name)(*arrays)
        out.wait_to_read()
        op = registry.Op.get(op_name)
        found = [
            plan.prop
            for key, plan in imperative._plans.items()
            if key[0] is op and [tuple(s) for s in plan.shapes] == [out.shape]
        ]
        assert found, op_name
        return found[-1]

    mid = nv.nd.ones((64, 512))  # 32768 elements: above INLINE_MAX_SIZE
    assert imperative.INLINE_MAX_SIZE < 64 * 512
    assert prop("relu", mid) is FnProperty.INLINE
    assert prop("elemwise_add", mid, mid) is FnProperty.INLINE
    assert prop("dot", mid, nv.nd.ones((512, 512))) is FnProperty.NORMAL
    assert prop("relu", nv.nd.ones((threads.parallel_size(),))) is FnProperty.NORMAL
    np.testing.assert_array_equal(nv.nd.relu(mid - 2).asnumpy(), np.zeros((64, 512)))


def test_hidden_outputs_get_null_req_unless_a_gradient_reads_them(scoped_registry) -> None:
    """nd.<op> drops hidden outputs, so their req is kNullOp (the kernel skips them, as for
    outputs no executor node reads); under autograd.record() those the op's gradient
    reads are written. `invoke` returns every output: all written."""
    from nnvmpy.attrs import FGradient, FNumVisibleOutputs
    from nnvmpy.base import OpReqType
    from nnvmpy.graph.node import NodeEntry
    from nnvmpy.imperative import invoke

    seen = []

    def compute(attrs, ctx, inputs, req, outputs):
        seen.append(list(req))
        np.multiply(inputs[0], 2, out=outputs[0])
        for out, r in zip(outputs[1:], req[1:]):
            if r != OpReqType.kNullOp:
                out[...] = 7

    op = (
        nv.register_op("test_imp_hidden")
        .set_num_inputs(1)
        .set_num_outputs(3)
        .set_attr(FNumVisibleOutputs, lambda attrs: 1)
        .set_attr(FInferShape, nv.elemwise_shape(1, 3))
        .set_attr(FInferType, nv.elemwise_type(1, 3))
        .set_attr(FCompute_cpu, compute)
    )
    x = nd.array([1.0, 2.0])
    np.testing.assert_array_equal(nd.test_imp_hidden(x).asnumpy(), [2.0, 4.0])
    null, write = OpReqType.kNullOp, OpReqType.kWriteTo
    assert seen[-1] == [write, null, null]
    outputs = invoke(op, [x], {})
    np.testing.assert_array_equal(outputs[1].asnumpy(), [7.0, 7.0])
    assert seen[-1] == [write, write, write]
    from nnvmpy.graph.grad import make_grad_node

    def gradient(node, ograds):  # dx = dy * hidden output 1 (output 2 is never read)
        return make_grad_node("elemwise_mul", node, [ograds[0], NodeEntry(node, 1)])

    op.set_attr(FGradient, gradient)
    xa = nd.array([1.0, 2.0])
    xa.attach_grad()
    with nv.autograd.record():
        y = nd.test_imp_hidden(xa)
    assert seen[-1] == [write, write, null]  # the gradient reads output 1 only
    y.backward()
    np.testing.assert_array_equal(xa.grad.asnumpy(), [7.0, 7.0])


def test_max_pooling_without_its_mask_keeps_value_and_gradient() -> None:
    """Imperative max pooling skips its hidden mask outside record(); the values and the
    recorded gradient (which routes dy to each window's first maximum) stay exact."""
    rng = np.random.default_rng(3)
    x = rng.integers(0, 4, size=(2, 3, 7, 7)).astype(np.float32)  # ties in windows
    want = np.zeros((2, 3, 3, 3), np.float32)
    for i in range(3):
        for j in range(3):
            want[:, :, i, j] = x[:, :, 2 * i : 2 * i + 3, 2 * j : 2 * j + 3].max(axis=(2, 3))
    got = nd.Pooling(nd.array(x), kernel=(3, 3), stride=(2, 2), pool_type="max")
    np.testing.assert_array_equal(got.asnumpy(), want)
    xa = nd.array(x)
    xa.attach_grad()
    with nv.autograd.record():
        y = nd.Pooling(xa, kernel=(3, 3), stride=(2, 2), pool_type="max")
    y.backward(nd.ones(y.shape))
    np.testing.assert_array_equal(y.asnumpy(), want)
    grad = np.zeros_like(x)
    for n in range(2):
        for c in range(3):
            for i in range(3):
                for j in range(3):
                    win = x[n, c, 2 * i : 2 * i + 3, 2 * j : 2 * j + 3]
                    a, b = np.unravel_index(np.argmax(win), win.shape)
                    grad[n, c, 2 * i + a, 2 * j + b] += 1
    np.testing.assert_array_equal(xa.grad.asnumpy(), grad)
