"""The NDArray API: creation, properties, copies, views, assignment, arithmetic and out=.

Expected values are NumPy computations on the same data; in-place operators are also
checked to keep the array's storage (the same Chunk), as MXNet's do.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy import engine
from nnvmpy.attrs import FCompute_cpu, FInferShape, FInferType
from nnvmpy.kernel import storage
from nnvmpy.registry import Op

nd = nv.nd


def assert_values(x: nd.NDArray, want, dtype=None) -> None:
    got = x.asnumpy()
    want = np.asarray(want, dtype=dtype or got.dtype)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


# -- creation ----------------------------------------------------------------------------------


def test_array_defaults_to_float32_even_for_float64_input(ctx) -> None:
    src = np.arange(6, dtype=np.float64).reshape(2, 3) / 7
    x = nd.array(src, ctx=ctx)
    assert x.dtype == np.float32  # MXNet's default, whatever NumPy's dtype was
    assert x.shape == (2, 3)
    assert x.context == ctx
    assert_values(x, src.astype(np.float32))


@pytest.mark.parametrize("dtype", ["float64", np.int32, np.dtype(np.uint8), "float16"])
def test_array_keeps_an_explicit_dtype(dtype) -> None:
    src = [[1, 2], [3, 250]]
    x = nd.array(src, dtype=dtype)
    assert x.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(x.asnumpy(), np.array(src, dtype=dtype))


def test_array_from_an_ndarray_copies_and_keeps_its_dtype() -> None:
    a = nd.array([1, 2, 3], dtype="int64")
    b = nd.array(a)
    assert b.dtype == np.int64
    assert b._chunk is not a._chunk
    a[:] = 0
    np.testing.assert_array_equal(b.asnumpy(), [1, 2, 3])


def test_array_from_a_scalar_list_and_nested_lists() -> None:
    assert nd.array(3.5).size == 1  # shape (1,) as MXNet 1.x, which has no 0-d arrays
    assert nd.array(3.5).asscalar() == 3.5
    assert nd.array([[1.0], [2.0]]).shape == (2, 1)


@pytest.mark.parametrize(
    ("make", "value"),
    [(nd.zeros, 0), (nd.ones, 1), (lambda s, **kw: nd.full(s, 7.25, **kw), 7.25)],
    ids=["zeros", "ones", "full"],
)
@pytest.mark.parametrize("dtype", [None, "float64", "int32"])
def test_zeros_ones_full(ctx, make, value, dtype) -> None:
    x = make((2, 3), ctx=ctx, dtype=dtype)
    want_dtype = np.dtype(dtype or np.float32)
    assert (x.shape, x.dtype, x.context) == ((2, 3), want_dtype, ctx)
    np.testing.assert_array_equal(x.asnumpy(), np.full((2, 3), value, dtype=want_dtype))


def test_creation_accepts_an_int_shape_and_the_default_context() -> None:
    assert nd.zeros(4).shape == (4,)
    assert nd.empty((2, 0)).size == 0  # nd.ones((2, 0)) is an unknown shape (MXNet's legacy)
    assert nd.empty(3).context == nv.cpu()
    with nv.cpu(1):
        assert nd.zeros((2,)).context == nv.cpu(1)
        assert nd.array([1.0]).context == nv.cpu(1)
    assert nd.zeros((2,)).context == nv.cpu(0)


def test_empty_has_shape_dtype_and_context_only(ctx) -> None:
    x = nd.empty((3, 1, 2), ctx, "float64")
    assert (x.shape, x.dtype, x.context, x.size, x.ndim) == ((3, 1, 2), np.float64, ctx, 6, 3)
    x[:] = 2
    assert_values(x, np.full((3, 1, 2), 2.0))


@pytest.mark.parametrize("bad", [(2, -1), "abc", 2.5j])
def test_bad_shape_is_an_error_naming_the_shape(bad) -> None:
    with pytest.raises(nv.NNVMError, match="shape"):
        nd.zeros(bad)
    assert_values(nd.zeros((1,)), [0.0])  # still usable


def test_unknown_dtype_is_an_error() -> None:
    with pytest.raises(nv.NNVMError, match="dtype"):
        nd.zeros((2,), dtype="float33")


# -- properties and reading --------------------------------------------------------------------


def test_properties() -> None:
    x = nd.zeros((4, 5, 6), dtype="int32")
    assert x.shape == (4, 5, 6)
    assert x.size == 120
    assert x.ndim == 3
    assert len(x) == 4
    assert x.context == x.ctx == nv.cpu()
    assert x.dtype == np.int32
    assert "4x5x6" in repr(x)


def test_asnumpy_returns_an_independent_copy() -> None:
    x = nd.array([1.0, 2.0])
    a = x.asnumpy()
    a[0] = 100
    assert_values(x, [1.0, 2.0])
    assert isinstance(a, np.ndarray)
    assert a.dtype == np.float32


def test_wait_to_read_waits_for_pending_writes() -> None:
    x = nd.zeros((1000,))
    for _ in range(20):
        x += 1
    assert x.wait_to_read() is None
    np.testing.assert_array_equal(x._data, np.full(1000, 20.0))  # the buffer itself, no copy


def test_scalar_conversions() -> None:
    x = nd.array([2.5])
    assert float(x) == 2.5
    assert int(x) == 2
    assert x.asscalar() == 2.5
    assert bool(x)
    with pytest.raises(nv.NNVMError, match="not a scalar"):
        nd.zeros((2,)).asscalar()


def test_numpy_conversion_via_array_protocol() -> None:
    x = nd.array([[1, 2], [3, 4]])
    np.testing.assert_array_equal(np.asarray(x), [[1, 2], [3, 4]])


# -- copies ------------------------------------------------------------------------------------


def test_copyto_an_array_writes_into_it_and_returns_it(ctx) -> None:
    x = nd.array([1.0, 2.0, 3.0], ctx=ctx)
    y = nd.zeros((3,), ctx=ctx)
    assert x.copyto(y) is y
    assert_values(y, [1.0, 2.0, 3.0])
    x[:] = 9  # later writes to the source do not reach the copy
    assert_values(y, [1.0, 2.0, 3.0])


def test_copyto_converts_dtype() -> None:
    y = nd.zeros((3,), dtype="float64")
    nd.array([1.5, 2.5, -3.5]).copyto(y)
    assert y.dtype == np.float64
    assert_values(y, [1.5, 2.5, -3.5])


def test_copyto_a_context_makes_a_new_array() -> None:
    x = nd.array([1.0, 2.0])
    y = x.copyto(nv.cpu(1))
    assert y.context == nv.cpu(1)
    assert y._chunk is not x._chunk
    assert_values(y, [1.0, 2.0])
    assert x.as_in_context(nv.cpu()) is x


@pytest.mark.gpu
def test_copyto_between_cpu_and_gpu() -> None:
    x = nd.array([1.0, 2.0, 3.0])
    g = x.copyto(nv.gpu(0))
    assert g.context == nv.gpu(0)
    back = (g * 2).copyto(nv.cpu())
    assert_values(back, [2.0, 4.0, 6.0])
    h = nd.zeros((3,), ctx=nv.gpu(0))
    x.copyto(h)
    assert_values(h, [1.0, 2.0, 3.0])


def test_copyto_wrong_shape_is_an_error_and_nothing_breaks() -> None:
    x = nd.array([1.0, 2.0])
    y = nd.zeros((3,))
    with pytest.raises(nv.NNVMError, match=r"\(2,\).*\(3,\)"):
        x.copyto(y)
    with pytest.raises(TypeError, match="NDArray or a Context"):  # as MXNet
        x.copyto(np.zeros(2))  # type: ignore[arg-type]
    assert_values(y, [0.0, 0.0, 0.0])
    assert_values(x.copyto(nd.zeros((2,))), [1.0, 2.0])


def test_copy_has_its_own_storage(ctx) -> None:
    x = nd.array([1.0, 2.0], ctx=ctx)
    y = x.copy()
    assert y._chunk is not x._chunk
    assert y.context == ctx
    x += 1
    assert_values(y, [1.0, 2.0])
    assert_values(x, [2.0, 3.0])


@pytest.mark.parametrize("dtype", ["float64", "int32", "uint8", "float16"])
def test_astype(ctx, dtype) -> None:
    src = np.array([0.5, 1.5, 2.75, 7.0], dtype=np.float32)
    x = nd.array(src, ctx=ctx)
    y = x.astype(dtype)
    assert y.dtype == np.dtype(dtype)
    assert y._chunk is not x._chunk
    np.testing.assert_array_equal(y.asnumpy(), src.astype(dtype))


def test_astype_same_dtype_without_copy_is_the_same_array() -> None:
    x = nd.zeros((2,))
    assert x.astype("float32", copy=False) is x
    assert x.astype("float32")._chunk is not x._chunk


# -- views -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "shape"),
    [
        (((3, 4),), (3, 4)),
        ((2, 6), (2, 6)),
        ((-1,), (12,)),
        ((4, -1), (4, 3)),
        (((-1, 2, 2),), (3, 2, 2)),
    ],
)
def test_reshape_is_a_view_sharing_storage(args, shape) -> None:
    src = np.arange(12, dtype=np.float32)
    x = nd.array(src.reshape(2, 6))
    v = x.reshape(*args)
    assert v.shape == shape
    assert v._chunk is x._chunk
    np.testing.assert_array_equal(v.asnumpy(), src.reshape(shape))
    v[:] = 5  # a write through the view is seen by the base ...
    np.testing.assert_array_equal(x.asnumpy(), np.full((2, 6), 5.0))
    x += 1  # ... and the other way round
    np.testing.assert_array_equal(v.asnumpy(), np.full(shape, 6.0))


def test_reshape_keyword_shape() -> None:
    assert nd.zeros((2, 3)).reshape(shape=(3, 2)).shape == (3, 2)


@pytest.mark.parametrize("bad", [(5,), (-1, -1), (5, -1), (0, 5)])
def test_reshape_to_an_incompatible_shape_is_an_error(bad) -> None:
    x = nd.zeros((2, 6))
    with pytest.raises(nv.NNVMError, match="reshape"):
        x.reshape(bad)
    assert x.reshape((12,)).shape == (12,)


# -- assignment and indexing ---------------------------------------------------------------------


def test_setitem_scalar(ctx) -> None:
    x = nd.zeros((2, 3), ctx=ctx, dtype="int32")
    x[:] = 7
    np.testing.assert_array_equal(x.asnumpy(), np.full((2, 3), 7, dtype=np.int32))
    x[...] = -1
    np.testing.assert_array_equal(x.asnumpy(), np.full((2, 3), -1, dtype=np.int32))


def test_setitem_numpy_array_list_and_broadcast(ctx) -> None:
    x = nd.zeros((2, 3), ctx=ctx)
    x[:] = np.arange(6).reshape(2, 3)
    assert_values(x, np.arange(6).reshape(2, 3))
    x[:] = [1.0, 2.0, 3.0]  # broadcast along the first axis, as NumPy
    assert_values(x, [[1.0, 2.0, 3.0]] * 2)


def test_setitem_ndarray_copies_values_keeping_storage(ctx) -> None:
    x = nd.zeros((2, 2), ctx=ctx)
    chunk = x._chunk
    y = nd.array([[1.0, 2.0], [3.0, 4.0]], ctx=ctx)
    x[:] = y
    assert x._chunk is chunk
    assert_values(x, [[1.0, 2.0], [3.0, 4.0]])
    y[:] = 0
    assert_values(x, [[1.0, 2.0], [3.0, 4.0]])


def test_setitem_on_a_0d_array() -> None:
    x = nd.array(np.zeros(()))
    assert x.shape == ()
    x[()] = 4.0
    assert x.asscalar() == 4.0


def test_setitem_with_an_unsupported_key_is_an_error() -> None:
    x = nd.zeros((3,))
    with pytest.raises(nv.NNVMError, match="is not supported"):
        x["a"] = 5
    assert_values(x, [0.0, 0.0, 0.0])
    x[1:2] = 5
    assert_values(x, [0.0, 5.0, 0.0])


needs_slice_axis = pytest.mark.skipif(
    "slice_axis" not in Op.list_op_names(), reason="slice_axis is not registered yet"
)


@needs_slice_axis
def test_getitem_int_and_slice() -> None:
    src = np.arange(12, dtype=np.float32).reshape(4, 3)
    x = nd.array(src)
    np.testing.assert_array_equal(x[1].asnumpy(), src[1])
    np.testing.assert_array_equal(x[-1].asnumpy(), src[-1])
    np.testing.assert_array_equal(x[1:3].asnumpy(), src[1:3])
    np.testing.assert_array_equal(x[:2].asnumpy(), src[:2])
    with pytest.raises(IndexError):
        x[4]


def test_getitem_unsupported_key_is_an_error() -> None:
    with pytest.raises(nv.NNVMError, match="is not supported"):
        nd.zeros((3, 3))[1, 2.5]


# -- arithmetic --------------------------------------------------------------------------------

A = np.array([[1.0, -2.0, 3.0], [0.5, 4.0, -0.25]], dtype=np.float32)
B = np.array([[2.0, 1.0, -1.5], [4.0, -8.0, 0.5]], dtype=np.float32)


@pytest.mark.parametrize(
    ("fn", "ref"),
    [
        (lambda a, b: a + b, np.add),
        (lambda a, b: a - b, np.subtract),
        (lambda a, b: a * b, np.multiply),
        (lambda a, b: a / b, np.divide),
    ],
    ids=["add", "sub", "mul", "div"],
)
def test_arithmetic_between_arrays(ctx, fn, ref) -> None:
    a, b = nd.array(A, ctx=ctx), nd.array(B, ctx=ctx)
    c = fn(a, b)
    assert c.context == ctx
    assert c._chunk is not a._chunk
    assert_values(c, ref(A, B))
    assert_values(a, A)  # inputs untouched


@pytest.mark.parametrize(
    ("fn", "ref"),
    [
        (lambda x: x + 2, lambda a: a + 2),
        (lambda x: 2 + x, lambda a: 2 + a),
        (lambda x: x - 2, lambda a: a - 2),
        (lambda x: 2 - x, lambda a: 2 - a),
        (lambda x: x * 3, lambda a: a * 3),
        (lambda x: 3 * x, lambda a: 3 * a),
        (lambda x: x / 4, lambda a: a / 4),
        (lambda x: 1 / x, lambda a: 1 / a),
        (lambda x: x**2, lambda a: a**2),
        (lambda x: -x, lambda a: -a),
        (lambda x: abs(x), np.abs),
        (lambda x: x + np.float32(0.5), lambda a: a + 0.5),
        (lambda x: np.float64(0.5) * x, lambda a: 0.5 * a),
        (lambda x: (x == 3.0), lambda a: (a == 3.0).astype(np.float32)),
    ],
    ids=[
        "x+s", "s+x", "x-s", "s-x", "x*s", "s*x", "x/s", "s/x", "x**s", "neg", "abs",
        "np32+", "np64*", "eq",
    ],
)  # fmt: skip
def test_arithmetic_with_scalars(ctx, fn, ref) -> None:
    x = nd.array(A, ctx=ctx)
    y = fn(x)
    assert isinstance(y, nd.NDArray)
    assert y.context == ctx
    assert_values(y, ref(A))


def test_arithmetic_with_an_unsupported_type_is_a_type_error() -> None:
    x = nd.zeros((2,))
    with pytest.raises(TypeError):
        x + "a"  # type: ignore[operator]
    with pytest.raises(TypeError):
        [1, 2] - x  # type: ignore[operator]


def test_mismatched_shapes_without_broadcast_op_is_an_error() -> None:
    a, b = nd.zeros((2, 3)), nd.zeros((3, 2))
    with pytest.raises(nv.NNVMError):
        a - b
    assert_values(a - a, np.zeros((2, 3)))


@pytest.mark.parametrize(
    ("op", "operand", "ref"),
    [
        ("+=", 1.5, lambda a: a + 1.5),
        ("-=", 1.5, lambda a: a - 1.5),
        ("*=", -2.0, lambda a: a * -2),
        ("/=", 4.0, lambda a: a / 4),
        ("+=", B, lambda a: a + B),
        ("-=", B, lambda a: a - B),
        ("*=", B, lambda a: a * B),
        ("/=", B, lambda a: a / B),
    ],
    ids=["+=s", "-=s", "*=s", "/=s", "+=a", "-=a", "*=a", "/=a"],
)
def test_in_place_operators_reuse_the_storage(ctx, op, operand, ref) -> None:
    x = nd.array(A, ctx=ctx)
    view = x.reshape((-1,))
    before, alias = x._chunk, x
    rhs = nd.array(operand, ctx=ctx) if isinstance(operand, np.ndarray) else operand
    namespace = {"x": x, "rhs": rhs}
    exec(f"x {op} rhs", namespace)
    x = namespace["x"]
    assert x is alias
    assert x._chunk is before  # the same array and the same buffer
    assert_values(x, ref(A))
    assert_values(view, ref(A).reshape(-1))  # views see the update


@pytest.mark.parametrize(
    ("op", "ref"),
    [
        ("+=", lambda a: a + a),
        ("-=", lambda a: a - a),
        ("*=", lambda a: a * a),
        ("/=", lambda a: a / a),
    ],
    ids=["x+=x", "x-=x", "x*=x", "x/=x"],
)
def test_in_place_operator_with_itself(ctx, op, ref) -> None:
    """x += x: out is both inputs; MXNet allows it, and the storage stays the same."""
    x = nd.array(A, ctx=ctx)
    chunk = x._chunk
    namespace = {"x": x}
    exec(f"x {op} x", namespace)
    assert namespace["x"] is x
    assert x._chunk is chunk
    assert_values(x, ref(A))


def test_out_aliasing_an_input_twice_is_computed_safely() -> None:
    """add_n(x, y, x, out=x) must not read the third input after writing the output."""
    x, y = nd.array(A), nd.array(B)
    chunk = x._chunk
    assert nd.add_n(x, y, x, out=x) is x
    assert x._chunk is chunk
    assert_values(x, 2 * A + B)


def test_in_place_chain_keeps_the_order() -> None:
    x = nd.ones((64,))
    for i in range(50):
        x *= 2 if i % 2 else 0.5
        x += 1
    want = np.ones(64)
    for i in range(50):
        want = want * (2 if i % 2 else 0.5) + 1
    assert_values(x, want)


# -- out= --------------------------------------------------------------------------------------


def test_out_argument_writes_into_the_given_array(ctx) -> None:
    x = nd.array(A, ctx=ctx)
    y = nd.full(A.shape, 99.0, ctx=ctx)
    chunk = y._chunk
    r = nd.relu(x, out=y)
    assert r is y
    assert y._chunk is chunk
    assert_values(y, np.maximum(A, 0))


def test_out_may_alias_an_input_when_the_op_allows_in_place() -> None:
    x = nd.array(A)
    nd.sigmoid(x, out=x)
    assert_values(x, 1 / (1 + np.exp(-A)))
    y = nd.array(A)
    nd.elemwise_mul(y, y, out=y)
    assert_values(y, A * A)


def test_out_aliasing_an_input_of_an_op_without_in_place_is_an_error(scoped_registry) -> None:
    def double(attrs, ctx, inputs, req, outputs):
        outputs[0][...] = 2 * inputs[0]

    (
        nv.register_op("test_nd_double")
        .set_num_inputs(1)
        .set_attr(FInferShape, nv.elemwise_shape(1, 1))
        .set_attr(FInferType, nv.elemwise_type(1, 1))
        .set_attr(FCompute_cpu, double)
    )
    x = nd.array([1.0, 2.0])
    with pytest.raises(nv.NNVMError, match=r"test_nd_double.*out\[0\].*input 0.*in-place"):
        nd.test_nd_double(x, out=x)
    assert_values(x, [1.0, 2.0])  # nothing ran
    y = nd.zeros((2,))
    assert nd.test_nd_double(x, out=y) is y
    assert_values(y, [2.0, 4.0])


@pytest.mark.parametrize(
    ("shape", "dtype", "match"),
    [((3,), "float32", r"\(3,\)"), ((2, 2), "float32", r"\(2, 2\)"), ((2,), "float64", "float64")],
)
def test_out_of_the_wrong_shape_or_dtype_is_an_error(shape, dtype, match) -> None:
    x = nd.array([1.0, -2.0])
    bad = nd.zeros(shape, dtype=dtype)
    with pytest.raises(nv.NNVMError, match=rf"relu: out\[0\].*{match}"):
        nd.relu(x, out=bad)
    np.testing.assert_array_equal(bad.asnumpy(), np.zeros(shape))
    assert_values(nd.relu(x), [1.0, 0.0])


def test_out_with_too_many_arrays_is_an_error() -> None:
    x = nd.array([1.0])
    with pytest.raises(nv.NNVMError, match="out= needs 1"):
        nd.relu(x, out=[nd.zeros((1,)), nd.zeros((1,))])


@pytest.mark.gpu
def test_inputs_on_different_devices_is_an_error() -> None:
    a, b = nd.zeros((2,)), nd.zeros((2,), ctx=nv.gpu(0))
    with pytest.raises(nv.NNVMError, match=r"elemwise_add: input 1 is on gpu\(0\)"):
        nd.elemwise_add(a, b)
    with pytest.raises(nv.NNVMError, match="out\\[0\\] is on"):
        nd.relu(a, out=b)
    assert_values(a + a, [0.0, 0.0])


@pytest.mark.parametrize("engine_name", sorted(engine.ENGINE_TYPES))
def test_dropping_an_array_a_pending_op_reads_keeps_its_storage(engine_name: str) -> None:
    with engine.engine_type(engine_name) as eng:
        x = nd.array(np.arange(64, dtype=np.float32))
        gate = threading.Event()
        seen: list[np.ndarray] = []

        def slow_read(rc: engine.RunContext, data: np.ndarray = x._data) -> None:
            gate.wait(0 if engine_name == "NaiveEngine" else 5)
            seen.append(np.array(data, copy=True))

        eng.push_sync(slow_read, x.context, [x._chunk.var], [])
        del x  # its storage must stay out of the pool until slow_read has run
        # allocations that would reuse the block if it were freed now (nd.array writes at once)
        others = [nd.array(np.full(64, 7.0)) for _ in range(8)]
        gate.set()
        nd.waitall()
        np.testing.assert_array_equal(seen[0], np.arange(64, dtype=np.float32))
        assert all((o.asnumpy() == 7.0).all() for o in others)


def _hold(eng: engine.Engine, arr: nv.nd.NDArray) -> threading.Event:
    """Keep a write pending on `arr` until the returned gate opens."""
    gate = threading.Event()
    eng.push_sync(lambda rc: gate.wait(10), arr.context, [], [arr._chunk.var], name="hold")
    return gate


def _count_deletes(monkeypatch: pytest.MonkeyPatch, eng: engine.Engine) -> list[str]:
    pushed: list[str] = []
    delete = type(eng).delete_variable

    def counting(self: engine.Engine, fn: object, ctx: object, var: object) -> None:
        pushed.append(repr(var))
        delete(self, fn, ctx, var)

    monkeypatch.setattr(type(eng), "delete_variable", counting)
    return pushed


def test_a_dead_array_a_pending_op_still_reads_is_parked_then_reused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """x = x + 1 with the op on old x still queued: old x is parked (no delete pushed per
    op), and once that op is done the next array of its size takes the block over."""
    from nnvmpy.ndarray import ndarray as ndmod

    with engine.engine_type("ThreadedEnginePerDevice") as eng:
        nd.waitall()
        deletes = _count_deletes(monkeypatch, eng)
        x = nd.array(np.zeros(16, dtype=np.float32))
        gate = _hold(eng, x)
        handles = []
        for _ in range(5):
            handles.append(x._chunk.handle)
            x = x + 1  # queued behind the hold: every old x is still read by a queued op
        assert deletes == []
        assert len(ndmod._parked) >= 3
        gate.set()
        x.wait_to_read()  # every op done (waitall would return the parked blocks)
        ys = [x * k for k in range(5)]  # the 4 parked blocks and the last old x's, taken over
        assert [any(h is y._chunk.handle for h in handles) for y in ys] == [True] * 5
        for k, y in enumerate(ys):
            assert_values(y, [5.0 * k] * 16)


def test_past_parked_max_the_oldest_parked_array_is_deleted(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from nnvmpy.ndarray import ndarray as ndmod

    monkeypatch.setattr(ndmod, "PARKED_MAX", 2)
    with engine.engine_type("ThreadedEnginePerDevice") as eng:
        nd.waitall()
        deletes = _count_deletes(monkeypatch, eng)
        x = nd.array(np.zeros(16, dtype=np.float32))
        gate = _hold(eng, x)
        for _ in range(6):
            x = x + 1
        assert len(ndmod._parked) == 2
        assert len(deletes) >= 2  # the oldest ones, pushed to run after their readers
        gate.set()
        assert_values(x, [6.0] * 16)
        before = storage.stats(x.context).bytes_in_use
        nd.waitall()  # returns the parked blocks to the pool
        assert not ndmod._parked
        assert storage.stats(x.context).bytes_in_use <= before - 2 * 64


def test_a_failed_array_is_parked_and_deleted_without_reuse(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A variable that holds a failure is never taken over; waitall still frees it."""
    from nnvmpy.ndarray import ndarray as ndmod

    with engine.engine_type("ThreadedEnginePerDevice") as eng:
        nd.waitall()
        x = nd.array(np.zeros(16, dtype=np.float32))

        def fail(rc: engine.RunContext) -> None:
            raise ValueError("boom")

        eng.push_sync(fail, x.context, [], [x._chunk.var], name="fail")
        bad = x._chunk.handle
        x = x + 1  # skipped: the failure propagates
        y = nd.array(np.ones(16, dtype=np.float32))
        assert y._chunk.handle is not bad
        with pytest.raises(nv.NNVMError, match="boom"):
            nd.waitall()
        assert not ndmod._parked
        nd.waitall()  # reported once; the system goes on
        assert_values(y + 1, [2.0] * 16)


def test_a_chain_of_temporaries_reuses_one_pooled_block() -> None:
    with engine.engine_type("NaiveEngine"):
        y = nd.array([1.0, -2.0, 3.0, -4.0])
        y = nd.relu(y)
        before = storage.stats(y.context)
        for _ in range(50):
            y = nd.relu(y)
        after = storage.stats(y.context)
        assert after.allocations == before.allocations  # each freed temporary is reused
        assert_values(y, [1.0, 0.0, 3.0, 0.0])
