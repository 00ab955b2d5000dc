"""broadcast.py and reduce.py beyond the op table: shape rules as properties, gradient
shapes, error messages, NDArray operators on different shapes, the kernels' fast paths.

References: np.broadcast_shapes for the shape rule, NumPy broadcasting and sums over the
broadcast axes for gradients.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import nnvmpy as nv
from nnvmpy.base import InferError, NNVMError, ParamError
from nnvmpy.engine import engine_type
from nnvmpy.ops import _broadcast_map as bmap
from nnvmpy.ops._broadcast_map import SERIAL_CUTOFF
from nnvmpy.ops._reduce_cuda import reduce_plan
from nnvmpy.ops.broadcast import broadcast_shape, infer_broadcast_binary
from nnvmpy.registry import Op
from nnvmpy.test_utils import check_numeric_gradient, check_symbolic_backward

nd, sym = nv.nd, nv.sym

# -- the shape rule as a property ------------------------------------------------------------

dims = st.lists(st.integers(1, 4), min_size=1, max_size=4).map(tuple)


def numpy_broadcast(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...] | None:
    try:
        return tuple(np.broadcast_shapes(a, b))
    except ValueError:
        return None


def infer(lhs, rhs, out=None, name="broadcast_add"):  # type: ignore[no-untyped-def]
    attrs = Op.get(name).parse_attrs({})
    ins, outs = [lhs, rhs], [out]
    known = infer_broadcast_binary(attrs, ins, outs)
    return known, ins, outs


@given(dims, dims)
def test_broadcast_shape_agrees_with_numpy(a: tuple[int, ...], b: tuple[int, ...]) -> None:
    want = numpy_broadcast(a, b)
    if want is None:
        with pytest.raises(InferError, match=r"broadcast_add: .*\(.*\) and \(.*\)"):
            infer(a, b)
        return
    known, ins, outs = infer(a, b)
    assert known
    assert outs == [want]
    assert ins == [a, b]


@given(dims, dims, st.data())
def test_partial_shapes_never_contradict_numpy(a, b, data) -> None:  # type: ignore[no-untyped-def]
    """Hide some dims (None): whatever is inferred, forward or back, is what NumPy says."""
    want = numpy_broadcast(a, b)
    if want is None:
        return
    hide = data.draw(st.lists(st.booleans(), min_size=len(a) + len(b), max_size=len(a) + len(b)))
    pa = tuple(None if h else d for h, d in zip(hide, a))
    pb = tuple(None if h else d for h, d in zip(hide[len(a) :], b))
    give_out = data.draw(st.booleans())
    known, ins, outs = infer(pa, pb, want if give_out else None)
    assert outs[0] is not None
    assert len(outs[0]) == len(want)
    for got, true in ((outs[0], want), (ins[0], a), (ins[1], b)):
        assert all(g is None or g == t for g, t in zip(got, true)), (got, true)
    assert known == (None not in ins[0] + ins[1] + outs[0])


def test_an_operand_of_unknown_rank_decides_nothing() -> None:
    known, ins, outs = infer(None, (3,), (2, 3))
    assert not known
    assert ins == [None, (3,)]
    assert outs == [(2, 3)]


def test_output_fills_unknown_input_dims_where_decided() -> None:
    # rhs is 1 there, so lhs is the output's dim; out is 1, so lhs is 1
    _, ins, _ = infer((None, None), (1, 1), (5, 1))
    assert ins[0] == (5, 1)
    _, ins, _ = infer((None, 3), (4, 3), (4, 3))  # lhs dim 0 could be 1 or 4: undecided
    assert ins[0] == (None, 3)


def test_broadcast_shape_keeps_undecided_dims_unknown() -> None:
    assert broadcast_shape("op", (None, 3), (4, 1)) == (4, 3)
    assert broadcast_shape("op", (None, 3), (1, 3)) == (None, 3)


# -- gradients -------------------------------------------------------------------------------


def unbroadcast(g: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Sum g over the axes `shape` was broadcast along (the independent reference)."""
    lead = g.ndim - len(shape)
    g = g.sum(axis=tuple(range(lead)))
    axes = tuple(d for d, n in enumerate(shape) if n == 1 and g.shape[d] != 1)
    return g.sum(axis=axes, keepdims=True).reshape(shape)


GRADS = {
    "broadcast_add": lambda dy, a, b: (dy, dy),
    "broadcast_sub": lambda dy, a, b: (dy, -dy),
    "broadcast_mul": lambda dy, a, b: (dy * b, dy * a),
    "broadcast_div": lambda dy, a, b: (dy / b, -dy * a / b**2),
    "broadcast_power": lambda dy, a, b: (dy * b * a ** (b - 1), dy * a**b * np.log(a)),
    "broadcast_maximum": lambda dy, a, b: (dy * (a >= b), dy * (a < b)),
    "broadcast_minimum": lambda dy, a, b: (dy * (a <= b), dy * (a > b)),
}
SHAPES = [((2, 3), (3,)), ((3,), (2, 3)), ((2, 1, 4), (3, 1)), ((2, 3, 4, 5), (1, 3, 1, 1))]


@pytest.mark.parametrize("name", sorted(GRADS))
@pytest.mark.parametrize(("la", "lb"), SHAPES, ids=str)
def test_binary_gradients_are_summed_back_to_each_input(name, la, lb) -> None:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(3)
    a, b = rng.uniform(0.5, 1.5, la), rng.uniform(0.5, 1.5, lb) * rng.choice([-1, 1], lb)
    if name == "broadcast_power":
        b = np.abs(b)
    dy = rng.normal(size=np.broadcast_shapes(la, lb))
    ga, gb = GRADS[name](dy, np.broadcast_to(a, dy.shape), np.broadcast_to(b, dy.shape))
    s = getattr(sym, name)(sym.Variable("a"), sym.Variable("b"))
    want = {"a": unbroadcast(ga, la), "b": unbroadcast(gb, lb)}
    got = check_symbolic_backward(
        s, {"a": a, "b": b}, [dy], want, rtol=1e-10, atol=1e-12, dtype=np.float64
    )
    assert got["a"].shape == la
    assert got["b"].shape == lb


def test_gradients_accumulate_with_grad_req_add() -> None:
    rng = np.random.default_rng(4)
    a, b, dy = rng.normal(size=(4, 3)), rng.normal(size=(3,)), rng.normal(size=(4, 3))
    s = sym.broadcast_mul(sym.Variable("a"), sym.Variable("b"))
    want = {"a": dy * b, "b": (dy * a).sum(axis=0)}
    check_symbolic_backward(
        s, {"a": a, "b": b}, [dy], want, 1e-10, 1e-12, grad_req="add", dtype=np.float64
    )


@pytest.mark.parametrize("name", ["broadcast_equal", "broadcast_greater", "broadcast_lesser"])
def test_comparisons_have_zero_gradient(name: str) -> None:
    a, b = np.arange(6.0).reshape(2, 3), np.array([1.0, 4.0, 3.0])
    s = getattr(sym, name)(sym.Variable("a"), sym.Variable("b"))
    want = {"a": np.zeros((2, 3)), "b": np.zeros(3)}
    check_symbolic_backward(s, {"a": a, "b": b}, [np.ones((2, 3))], want, dtype=np.float64)


def test_max_sends_the_gradient_to_every_tie() -> None:
    x = np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 0.0]])
    dy = np.array([10.0, 20.0])
    want = {"x": np.array([[0.0, 10.0, 10.0], [20.0, 20.0, 0.0]])}
    check_symbolic_backward(sym.max(sym.Variable("x"), axis=1), {"x": x}, [dy], want)
    want = {"x": np.array([[10.0, 0.0, 0.0], [0.0, 0.0, 20.0]])}
    check_symbolic_backward(sym.min(sym.Variable("x"), axis=1), {"x": x}, [dy], want)


def test_mean_gradient_divides_by_the_count() -> None:
    x, dy = np.ones((2, 3, 4)), np.arange(3.0)
    s = sym.mean(sym.Variable("x"), axis=1, exclude=True)
    want = {"x": np.broadcast_to(dy[:, None] / 8, (2, 3, 4))}
    check_symbolic_backward(s, {"x": x}, [dy], want, dtype=np.float64)


def test_broadcast_to_gradient_sums_over_the_expanded_axes() -> None:
    rng = np.random.default_rng(5)
    x, dy = rng.normal(size=(3,)), rng.normal(size=(2, 3))
    s = sym.broadcast_to(sym.Variable("x"), shape=(2, 3))
    check_symbolic_backward(s, {"x": x}, [dy], {"x": dy.sum(axis=0)}, 1e-10, dtype=np.float64)


# -- errors ----------------------------------------------------------------------------------


def test_incompatible_shapes_name_the_op_and_both_shapes() -> None:
    with pytest.raises(InferError, match=r"broadcast_mul: .*\(2, 3\) and \(4,\)"):
        nd.broadcast_mul(nd.ones((2, 3)), nd.ones((4,)))
    a, b = sym.Variable("a"), sym.Variable("b")
    with pytest.raises(NNVMError, match=r"broadcast_add.*\(2, 3\).*\(2, 4\)"):
        sym.broadcast_add(a, b).infer_shape(a=(2, 3), b=(2, 4))
    out = nd.broadcast_mul(nd.ones((2, 3)), nd.ones((3,)))  # still usable afterwards
    np.testing.assert_array_equal(out.asnumpy(), np.ones((2, 3)))


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"axis": 3}, r"sum: axis 3 is out of range for input shape \(2, 3\)"),
        ({"axis": -3}, r"sum: axis -3 is out of range"),
        ({"axis": (1, -1)}, r"sum: axis \(1, -1\) names an axis twice"),
    ],
)
def test_bad_reduction_axes_name_the_axis(params: dict, match: str) -> None:
    with pytest.raises(InferError, match=match):
        nd.sum(nd.ones((2, 3)), **params)
    np.testing.assert_array_equal(nd.sum(nd.ones((2, 3)), axis=1).asnumpy(), [3.0, 3.0])


def test_bad_reduction_parameters_are_param_errors() -> None:
    with pytest.raises(ParamError, match=r"sum: parameter 'keepdims' expects boolean"):
        nd.sum(nd.ones((2, 3)), keepdims="maybe")
    with pytest.raises(ParamError, match=r"norm: parameter 'ord' expects int in \[1, 2\]"):
        nd.norm(nd.ones((2, 3)), ord=3)
    with pytest.raises(ParamError, match=r"mean: parameter 'axis' expects Shape"):
        nd.mean(nd.ones((2, 3)), axis="x")


def test_broadcast_to_and_axis_errors() -> None:
    with pytest.raises(InferError, match=r"broadcast_to: .*\(2, 3\) to shape \(2, 4\)"):
        nd.broadcast_to(nd.ones((2, 3)), shape=(2, 4))
    with pytest.raises(InferError, match=r"broadcast_axis: broadcasting axis 1 must have size 1"):
        nd.broadcast_axis(nd.ones((2, 3)), axis=1, size=4)
    with pytest.raises(InferError, match=r"broadcast_axis: 'axis' 2 is out of range"):
        nd.broadcast_axis(nd.ones((2, 1)), axis=2, size=4)
    with pytest.raises(InferError, match=r"broadcast_axis: 'axis' \(0, 1\) and 'size' \(3,\)"):
        nd.broadcast_axis(nd.ones((1, 1)), axis=(0, 1), size=3)
    got = nd.broadcast_axis(nd.ones((2, 1)), axis=1, size=4)
    assert got.shape == (2, 4)


def test_reductions_infer_partial_shapes_both_ways() -> None:
    x = sym.Variable("x")
    args, outs, _ = sym.sum(x, axis=1, keepdims=True).infer_shape_partial(x=(2, 0, 4))
    assert outs == [(2, 1, 4)]
    s = sym.sum(x, axis=0)
    args, outs, _ = (s + sym.Variable("y")).infer_shape_partial(x=(0, 0, 4), y=(3, 4))
    assert args[0][1:] == (3, 4)  # dim 0 is summed away: undecided


def test_parameters_round_trip_in_mxnet_string_form() -> None:
    attrs = Op.get("sum").parse_attrs({"axis": "(0, 2)", "keepdims": "True"})
    assert attrs.parsed.to_dict() == {"axis": "(0, 2)", "keepdims": "True", "exclude": "False"}
    assert Op.get("max").parse_attrs({}).parsed.axis is None


# -- NDArray operators on different shapes ---------------------------------------------------


def test_ndarray_operators_broadcast_when_shapes_differ() -> None:
    rng = np.random.default_rng(6)
    a, b = rng.uniform(0.5, 1.5, (2, 3)), rng.uniform(0.5, 1.5, (3,))
    x, y = nd.array(a, dtype=np.float64), nd.array(b, dtype=np.float64)
    for got, want in [
        (x + y, a + b),
        (y + x, b + a),
        (x - y, a - b),
        (y - x, b - a),
        (x * y, a * b),
        (x / y, a / b),
        (y / x, b / a),
        (x**y, a**b),
        (x == nd.array(a[0], dtype=np.float64), (a == a[0]).astype(np.float64)),
    ]:
        np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-12)


# -- kernel paths ----------------------------------------------------------------------------


def test_collapse_merges_dims_that_broadcast_alike() -> None:
    shape, (sa, sb) = bmap.collapse((8, 16, 5, 5), [(8, 16, 5, 5), (1, 16, 1, 1)])
    assert shape.tolist() == [8, 16, 25]
    assert sa.tolist() == [400, 25, 1]
    assert sb.tolist() == [0, 1, 0]
    shape, (sa, sb) = bmap.collapse((4, 3), [(4, 3), (3,)])
    assert shape.tolist() == [4, 3]
    assert sb.tolist() == [0, 1]
    shape, (sa,) = bmap.collapse((1, 1), [(1,)])
    assert shape.tolist() == [1]
    assert sa.tolist() == [0]


def test_reduce_plan_groups_kept_and_reduced_dims() -> None:
    kept, reduced = reduce_plan((8, 16, 5, 5), (1, 16, 1, 1))
    assert kept == [16, 25]
    assert reduced == [8, 25, 400, 1]
    kept, reduced = reduce_plan((4, 3), (1, 1))
    assert kept == [1, 0]
    assert reduced == [12, 1]


@pytest.mark.parametrize(
    ("la", "lb"),
    [
        ((256, 1024), (1024,)),  # parallel, both contiguous along rows
        ((10, 3 * bmap.CHUNK + 5), (10, 1)),  # rows longer than one chunk
        ((3, 5, 120, 120), (1, 5, 1, 1)),  # NCHW per-channel
    ],
    ids=str,
)
def test_large_broadcasts_take_the_parallel_loop(la, lb) -> None:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(7)
    a, b = rng.normal(size=la).astype(np.float32), rng.normal(size=lb).astype(np.float32)
    assert np.prod(np.broadcast_shapes(la, lb)) >= SERIAL_CUTOFF
    got = nd.broadcast_mul(nd.array(a), nd.array(b)).asnumpy()
    np.testing.assert_allclose(got, a * b, rtol=1e-6)
    out = nd.array(np.ones_like(got))
    nd.broadcast_add(nd.array(a), nd.array(b), out=out)
    np.testing.assert_allclose(out.asnumpy(), a + b, rtol=1e-6)


def test_broadcast_map_adds_with_req_add_on_every_pattern() -> None:
    from nnvmpy.ops.elemwise_binary import _mul_grad_lhs

    rng = np.random.default_rng(8)
    for shapes in [((4, 3), (4, 3), (3,)), ((4, 3), (4, 1), (4, 3)), ((4, 3), (1, 3), (4, 1))]:
        arrays = [rng.normal(size=s) for s in shapes]
        out = np.ones((4, 3))
        bmap.broadcast_map(_mul_grad_lhs, None, out, "add", *arrays)
        np.testing.assert_allclose(out, 1 + arrays[0] * arrays[2] + 0 * arrays[1])


def test_float16_goes_through_float32_on_the_cpu() -> None:
    a, b = np.arange(6, dtype=np.float16).reshape(2, 3), np.array([1, 2, 3], np.float16)
    got = nd.broadcast_mul(nd.array(a, dtype=np.float16), nd.array(b, dtype=np.float16))
    assert got.dtype == np.float16
    np.testing.assert_array_equal(got.asnumpy(), a * b)
    total = nd.sum(nd.array(a, dtype=np.float16), axis=0).asnumpy()
    np.testing.assert_array_equal(total, a.sum(axis=0))


# -- GPU ------------------------------------------------------------------------------------


@pytest.fixture
def gpu_engine():  # type: ignore[no-untyped-def]
    """The simulator runs kernels in Python threads and swaps module globals: one at a time."""
    with engine_type("NaiveEngine"):
        yield nv.gpu(0)


@pytest.mark.gpu
@pytest.mark.parametrize(
    ("la", "lb"),
    [((2, 3), (3,)), ((2, 1, 4), (3, 1)), ((2, 3, 4, 5), (1, 3, 1, 1)), ((5,), (1,))],
    ids=str,
)
def test_gpu_broadcast_matches_numpy(gpu_engine, la, lb) -> None:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(9)
    a, b = rng.normal(size=la).astype(np.float32), rng.normal(size=lb).astype(np.float32)
    x, y = nd.array(a, ctx=gpu_engine), nd.array(b, ctx=gpu_engine)
    np.testing.assert_allclose(nd.broadcast_sub(x, y).asnumpy(), a - b, rtol=1e-6)
    out = nd.array(np.ones(np.broadcast_shapes(la, lb)), ctx=gpu_engine)
    nd.broadcast_maximum(x, y, out=out)
    np.testing.assert_allclose(out.asnumpy(), np.maximum(a, b))
    full = np.broadcast_shapes(la, lb)
    np.testing.assert_array_equal(
        nd.broadcast_to(x, shape=full).asnumpy(), np.broadcast_to(a, full)
    )


@pytest.mark.gpu
@pytest.mark.parametrize("shape", [(3, 4, 5), (2, 300)], ids=str)  # (2, 300): the block kernel
@pytest.mark.parametrize("name", ["sum", "mean", "max", "min", "prod", "norm"])
def test_gpu_reductions_match_numpy(gpu_engine, shape, name) -> None:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(10)
    x = rng.uniform(0.9, 1.1, shape).astype(np.float32)
    refs = {
        "sum": np.sum,
        "mean": np.mean,
        "max": np.max,
        "min": np.min,
        "prod": np.prod,
        "norm": lambda v, axis: np.sqrt((v * v).sum(axis=axis)),
    }
    arr = nd.array(x, ctx=gpu_engine)
    for axis in [None, 0, -1, (0, len(shape) - 1)]:
        got = getattr(nd, name)(arr, axis=axis).asnumpy()
        want = np.atleast_1d(refs[name](x.astype(np.float64), axis=axis))
        np.testing.assert_allclose(got, want, rtol=1e-5, err_msg=f"{name} axis={axis}")


@pytest.mark.gpu
def test_gpu_gradients_match_finite_differences(gpu_engine) -> None:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(11)
    a, b = sym.Variable("a"), sym.Variable("b")
    loc = {"a": rng.uniform(0.5, 1.5, (2, 3, 4)), "b": rng.uniform(0.5, 1.5, (3, 4))}
    check_numeric_gradient(sym.broadcast_div(a, b), loc, dtype=np.float64, ctx=gpu_engine)
    loc = {"a": rng.permutation(24).reshape(2, 3, 4) / 24.0}
    check_numeric_gradient(sym.max(a, axis=1), loc, dtype=np.float64, ctx=gpu_engine)
    check_numeric_gradient(sym.mean(a, axis=(0, 2)), loc, dtype=np.float64, ctx=gpu_engine)
