"""Matrix and shape ops beyond the op table: MXNet's documented shape rules, mutual
inference, errors that name the op and the argument, in-place reshape, and forward plus
backward on every device against NumPy formulas."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy.base import InferError, ParamError
from nnvmpy.registry import Op
from nnvmpy.test_utils import assert_almost_equal, check_symbolic_backward

RNG = np.random.default_rng(7)


def rand(*shape: int) -> np.ndarray:
    return RNG.uniform(-1, 1, size=shape)


def infer(op_name: str, params: dict, ins: list, outs: list) -> tuple[list, list]:
    """Run an op's FInferShape directly on partial shapes (None = unknown)."""
    op = Op.get(op_name)
    ins, outs = list(ins), list(outs)
    op.get_attr("FInferShape")(op.parse_attrs(params), ins, outs)
    return ins, outs


def still_works() -> None:
    """After an error the registry and engine still run ops."""
    y = nv.nd.dot(nv.nd.array(np.eye(2)), nv.nd.array([[1.0, 2.0], [3.0, 4.0]]))
    np.testing.assert_allclose(y.asnumpy(), [[1, 2], [3, 4]])


# -- shape inference ------------------------------------------------------------------------


def test_fully_connected_infers_weight_and_bias_from_data() -> None:
    fc = nv.sym.FullyConnected(nv.sym.Variable("data"), num_hidden=10, name="fc")
    assert fc.list_arguments() == ["data", "fc_weight", "fc_bias"]
    args, outs, _ = fc.infer_shape(data=(4, 3, 5))
    assert args == [(4, 3, 5), (10, 15), (10,)]
    assert outs == [(4, 10)]


def test_fully_connected_without_flatten_and_bias() -> None:
    fc = nv.sym.FullyConnected(
        nv.sym.Variable("data"), num_hidden=10, flatten=False, no_bias=True, name="fc"
    )
    assert fc.list_arguments() == ["data", "fc_weight"]
    args, outs, _ = fc.infer_shape(data=(4, 3, 5))
    assert args == [(4, 3, 5), (10, 5)]
    assert outs == [(4, 3, 10)]


def test_fully_connected_infers_data_from_weight_and_output() -> None:
    fc = nv.sym.FullyConnected(nv.sym.Variable("data"), num_hidden=10, name="fc")
    args, _, _ = fc.infer_shape_partial(data=(4, 0), fc_weight=(10, 7))
    assert args[0] == (4, 7)
    args, _, _ = fc.infer_shape_partial(data=(4, 0, 5), fc_weight=(10, 15))
    assert args[0] == (4, 3, 5)
    ins, _ = infer("FullyConnected", {"num_hidden": 10}, [(None, 7), None, None], [(4, 10)])
    assert ins == [(4, 7), (10, 7), (10,)]
    ins, _ = infer(
        "FullyConnected", {"num_hidden": 3, "flatten": False}, [(None, None, 2), None, None],
        [(5, 6, 3)],
    )  # fmt: skip
    assert ins[0] == (5, 6, 2)


@pytest.mark.parametrize(
    ("data", "params", "expected"),
    [  # MXNet's Reshape documentation
        ((2, 3, 4), {"shape": (4, 0, 2)}, (4, 3, 2)),
        ((2, 3, 4), {"shape": (2, 0, 0)}, (2, 3, 4)),
        ((2, 3, 4), {"shape": (6, 1, -1)}, (6, 1, 4)),
        ((2, 3, 4), {"shape": (3, -1, 8)}, (3, 1, 8)),
        ((2, 3, 4), {"shape": (-1,)}, (24,)),
        ((2, 3, 4), {"shape": (-2,)}, (2, 3, 4)),
        ((2, 3, 4), {"shape": (2, -2)}, (2, 3, 4)),
        ((2, 3, 4), {"shape": (-2, 1, 1)}, (2, 3, 4, 1, 1)),
        ((2, 3, 4), {"shape": (-3, 4)}, (6, 4)),
        ((2, 3, 4, 5), {"shape": (-3, -3)}, (6, 20)),
        ((2, 3, 4), {"shape": (0, -3)}, (2, 12)),
        ((2, 3, 4), {"shape": (-3, -2)}, (6, 4)),
        ((2, 3, 4), {"shape": (0, -1)}, (2, 12)),
        ((2, 3, 4), {"shape": (-4, 1, 2, -2)}, (1, 2, 3, 4)),
        ((2, 3, 4), {"shape": (2, -4, -1, 3, -2)}, (2, 1, 3, 4)),
        ((10, 5, 4), {"shape": (-1, 0)}, (40, 5)),
        ((10, 5, 4), {"shape": (-1, 0), "reverse": True}, (50, 4)),
        ((2, 3, 4), {"target_shape": (0, 4)}, (6, 4)),  # deprecated form
        ((2, 3, 4), {"target_shape": (5, 0), "keep_highest": True}, (2, 12)),
    ],
)
def test_reshape_special_values(data: tuple, params: dict, expected: tuple) -> None:
    s = nv.sym.Reshape(nv.sym.Variable("x"), **params)
    assert s.infer_shape(x=data)[1] == [expected]
    x = rand(*data)
    y = nv.nd.reshape(nv.nd.array(x, dtype=np.float64), **params)
    np.testing.assert_array_equal(y.asnumpy(), x.reshape(expected))


def test_reshape_infers_an_unknown_input_dim_from_the_output() -> None:
    ins, outs = infer("Reshape", {"shape": (-1, 4)}, [(2, None, 4)], [(6, 4)])
    assert ins == [(2, 3, 4)]
    assert outs == [(6, 4)]


def test_flatten_and_expand_dims_infer_both_ways() -> None:
    assert infer("Flatten", {}, [(2, None, 4)], [(2, 12)])[0] == [(2, 3, 4)]
    assert infer("flatten", {}, [(5,)], [None])[1] == [(5, 1)]
    assert infer("expand_dims", {"axis": -1}, [None], [(2, 3, 1)])[0] == [(2, 3)]
    assert infer("expand_dims", {"axis": 0}, [(2, 3)], [None])[1] == [(1, 2, 3)]


def test_transpose_concat_split_infer_backwards() -> None:
    assert infer("transpose", {"axes": (1, 2, 0)}, [None], [(3, 4, 2)])[0] == [(2, 3, 4)]
    ins, _ = infer("Concat", {"num_args": 3, "dim": 1}, [(2, 2), None, (2, 1)], [(2, 6)])
    assert ins == [(2, 2), (2, 3), (2, 1)]
    ins, _ = infer("SliceChannel", {"num_outputs": 3, "squeeze_axis": True}, [None], [(2, 4)] * 3)
    assert ins == [(2, 3, 4)]
    assert infer("slice_axis", {"axis": 1, "begin": 1, "end": 3}, [(None, 5)], [(7, 2)])[0] == [
        (7, 5)
    ]


def test_dot_and_batch_dot_shapes() -> None:
    a, b = nv.sym.Variable("a"), nv.sym.Variable("b")
    assert nv.sym.dot(a, b).infer_shape(a=(2, 3, 4), b=(4, 5, 6))[1] == [(2, 3, 5, 6)]
    assert nv.sym.dot(a, b, transpose_a=True).infer_shape(a=(4, 2, 3), b=(4, 5))[1] == [(2, 3, 5)]
    assert nv.sym.dot(a, b).infer_shape(a=(4,), b=(4,))[1] == [(1,)]
    assert nv.sym.batch_dot(a, b, transpose_b=True).infer_shape(a=(7, 2, 3), b=(7, 4, 3))[1] == [
        (7, 2, 4)
    ]
    args, _, _ = nv.sym.dot(a, b).infer_shape_partial(a=(2, 0), b=(3, 5))
    assert args == [(2, 3), (3, 5)]
    # MXNet's storage hint parses (nnvmpy is dense-only, so it changes nothing)
    assert nv.sym.dot(a, b, forward_stype="default").infer_shape(a=(2, 3), b=(3, 1))[1] == [(2, 1)]


@pytest.mark.parametrize("transpose", [(False, False), (True, False), (False, True)])
def test_batch_dot_infers_nothing_until_both_contracted_axes_are_known(transpose: Any) -> None:
    """MXNet 1.9.1 (test_infer_shape::test_batch_dot_partial_shape, and measured on it):
    unknown batch and free axes pass through; an unknown contracted axis leaves the output
    unknown and the inputs as given."""
    ta, tb = transpose
    a, b = nv.sym.Variable("a"), nv.sym.Variable("b")
    z = nv.sym.batch_dot(a, b, transpose_a=ta, transpose_b=tb)

    def lhs(m: int, k: int) -> tuple[int, int, int]:
        return (0, k, m) if ta else (0, m, k)

    def rhs(k: int, n: int) -> tuple[int, int, int]:
        return (0, n, k) if tb else (0, k, n)

    assert z.infer_shape_partial(a=lhs(3, 4), b=rhs(4, 5))[1] == [(0, 3, 5)]
    assert z.infer_shape_partial(a=lhs(0, 4), b=rhs(4, 0))[1] == [(0, 0, 0)]
    for x, y in [(lhs(3, 4), rhs(0, 5)), (lhs(3, 0), rhs(4, 5))]:
        args, outs, _ = z.infer_shape_partial(a=x, b=y)
        assert (args, outs) == ([x, y], [()])
    args, outs, _ = z.infer_shape_partial(a=lhs(3, 4))
    assert (args, outs) == ([lhs(3, 4), ()], [()])
    with nv.np_shape(True):  # -1 is unknown there, and an unknown output is None

        def unknown(shape: tuple[int, ...]) -> tuple[int, ...]:
            return tuple(-1 if d == 0 else d for d in shape)

        assert z.infer_shape_partial(a=unknown(lhs(3, 4)), b=unknown(rhs(4, 5)))[1] == [(-1, 3, 5)]
        assert z.infer_shape_partial(a=unknown(lhs(3, 4)), b=unknown(rhs(0, 5)))[1] == [None]


def test_split_and_concat_names() -> None:
    s = nv.sym.SliceChannel(nv.sym.Variable("x"), num_outputs=3, name="sc")
    assert s.list_outputs() == ["sc_output0", "sc_output1", "sc_output2"]
    assert Op.get("Concat").get_attr("FListInputNames")(
        Op.get("Concat").parse_attrs({"num_args": 2})
    ) == ["arg0", "arg1"]
    parts = nv.nd.split(nv.nd.array(np.arange(6.0).reshape(2, 3)), num_outputs=3)
    joined = nv.nd.concat(*parts, dim=1)  # num_args from the number of inputs
    np.testing.assert_array_equal(joined.asnumpy(), np.arange(6.0).reshape(2, 3))


# -- errors ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "error", "words"),
    [
        (lambda: nv.nd.FullyConnected(nv.nd.ones((2, 3)), nv.nd.ones((1, 3)), num_hidden=0,
                                      no_bias=True),
         ParamError, ["FullyConnected", "num_hidden", ">= 1"]),
        (lambda: nv.sym.FullyConnected(nv.sym.Variable("x"), num_hidden=10, name="fc")
         .infer_shape(x=(4, 5), fc_weight=(10, 6)),
         InferError, ["FullyConnected", "weight", "(10, 6)", "(10, 5)"]),
        (lambda: nv.sym.FullyConnected(nv.sym.Variable("x"), num_hidden=10, name="fc")
         .infer_shape(x=(4, 5), fc_bias=(3,)),
         InferError, ["FullyConnected", "bias", "num_hidden=10"]),
        (lambda: nv.nd.Reshape(nv.nd.ones((2, 3, 4)), shape=(5, 5)),
         InferError, ["Reshape", "shape", "25", "24"]),
        (lambda: nv.nd.Reshape(nv.nd.ones((2, 3, 4)), shape=(-1, -1)),
         InferError, ["Reshape", "shape", "-1"]),
        (lambda: nv.nd.Reshape(nv.nd.ones((2, 3, 4)), shape=(-4, 5, -1, 0)),
         InferError, ["Reshape", "shape", "divide"]),
        (lambda: nv.nd.Reshape(nv.nd.ones((2, 3)), shape=(0, 0, 0)),
         InferError, ["Reshape", "shape", "more axes"]),
        (lambda: nv.nd.Reshape(nv.nd.ones((2, 3))), InferError, ["Reshape", "shape"]),
        (lambda: nv.nd.Concat(nv.nd.ones((2, 3)), nv.nd.ones((3, 3)), dim=1),
         InferError, ["Concat", "arg1", "dim=1"]),
        (lambda: nv.nd.Concat(nv.nd.ones((2, 3)), nv.nd.ones((2, 3)), dim=2),
         InferError, ["Concat", "dim"]),
        (lambda: nv.nd.slice_axis(nv.nd.ones((2, 3)), axis=1, begin=5, end=None),
         InferError, ["slice_axis", "begin", "5"]),
        (lambda: nv.nd.slice_axis(nv.nd.ones((2, 3)), axis=1, begin=0, end=4),
         InferError, ["slice_axis", "end", "4"]),
        (lambda: nv.nd.slice_axis(nv.nd.ones((2, 3)), axis=1, begin=2, end=1),
         InferError, ["slice_axis", "begin", "end"]),
        (lambda: nv.nd.slice_axis(nv.nd.ones((2, 3)), axis=2, begin=0, end=1),
         InferError, ["slice_axis", "axis", "2"]),
        (lambda: nv.nd.SliceChannel(nv.nd.ones((2, 5)), num_outputs=3),
         InferError, ["SliceChannel", "num_outputs=3", "5"]),
        (lambda: nv.nd.split(nv.nd.ones((2, 4)), num_outputs=2, squeeze_axis=True),
         InferError, ["SliceChannel", "squeeze_axis"]),
        (lambda: nv.nd.dot(nv.nd.ones((3, 4)), nv.nd.ones((5, 6))),
         InferError, ["dot", "(3, 4)", "(5, 6)"]),
        (lambda: nv.nd.dot(nv.nd.ones((3,)), nv.nd.ones((3,)), transpose_a=True),
         InferError, ["dot", "transpose"]),
        (lambda: nv.nd.batch_dot(nv.nd.ones((3, 4)), nv.nd.ones((3, 4, 2))),
         InferError, ["batch_dot", "lhs", "3-D"]),
        (lambda: nv.nd.batch_dot(nv.nd.ones((2, 3, 4)), nv.nd.ones((3, 4, 2))),
         InferError, ["batch_dot", "batch"]),
        (lambda: nv.nd.transpose(nv.nd.ones((2, 3, 4)), axes=(0, 0, 1)),
         InferError, ["transpose", "axes", "permutation"]),
        (lambda: nv.nd.expand_dims(nv.nd.ones((2,)), axis=3),
         InferError, ["expand_dims", "axis", "3"]),
    ],
)  # fmt: skip
def test_bad_input_names_op_and_argument(call, error: type, words: list[str]) -> None:
    with pytest.raises(error) as info:
        call()
    for word in words:
        assert word in str(info.value), f"{word!r} not in {info.value}"
    still_works()


# -- in-place identity ops ------------------------------------------------------------------


def test_reshape_shares_its_input_block_in_the_plan() -> None:
    x = nv.sym.Variable("x")
    y = nv.sym.exp(nv.sym.Flatten(nv.sym.Reshape(nv.sym.exp(x), shape=(2, 3, 1))))
    exe = y.simple_bind(nv.cpu(), grad_req="null", x=(2, 3))
    plan = exe.debug_str()
    assert plan.count("inplace(input 0)") == 2, plan
    data = rand(2, 3)
    exe.forward(x=data)
    assert_almost_equal(exe.outputs[0].asnumpy(), np.exp(np.exp(data)).reshape(2, 3), 1e-5, 1e-6)


# -- gradients with grad_req='add' and unused outputs ---------------------------------------


def test_slice_axis_gradient_adds_only_inside_the_band() -> None:
    x = rand(3, 5)
    dy = rand(3, 2)
    want = np.zeros((3, 5))
    want[:, 1:3] = dy
    s = nv.sym.slice_axis(nv.sym.Variable("x"), axis=1, begin=1, end=3)
    check_symbolic_backward(s, [x], [dy], [want], grad_req="add", dtype=np.float64)
    check_symbolic_backward(s, [x], [dy], [want], grad_req="write", dtype=np.float64)


def test_split_gradient_with_one_output_used() -> None:
    x = rand(2, 6)
    s = nv.sym.SliceChannel(nv.sym.Variable("x"), num_outputs=3)[1]
    dy = rand(2, 2)
    want = np.zeros((2, 6))
    want[:, 2:4] = dy
    check_symbolic_backward(s, [x], [dy], [want], dtype=np.float64)


# -- every device: forward and backward against NumPy formulas ----------------------------


def _check(sym, inputs: list, outs: list, dys: list, grads: list, ctx) -> None:
    """Forward and backward on ctx in float64 against NumPy's outputs and gradients.

    Head gradients go in as NDArrays: NDArray[:] = numpy (what check_symbolic_backward
    uses) trips over a size-1 axis on the CUDA simulator (see the note in the report).
    """
    names = sym.list_arguments()
    args = {n: nv.nd.array(x, ctx=ctx, dtype=np.float64) for n, x in zip(names, inputs)}
    grad_arrays = {n: nv.nd.zeros(x.shape, ctx=ctx, dtype=np.float64) for n, x in args.items()}
    exe = sym.bind(ctx, args, args_grad=grad_arrays)
    for got, want in zip(exe.forward(is_train=True), outs, strict=True):
        assert_almost_equal(got.asnumpy(), want, 1e-6, 1e-9, ("forward", "numpy"))
    exe.backward([nv.nd.array(d, ctx=ctx, dtype=np.float64) for d in dys])
    for n, want in zip(names, grads, strict=True):
        assert_almost_equal(grad_arrays[n].asnumpy(), want, 1e-6, 1e-9, (f"d {n}", "numpy"))


@pytest.mark.parametrize(("ta", "tb"), [(False, False), (True, False), (False, True), (True, True)])
def test_dot_forward_backward(ctx, ta: bool, tb: bool) -> None:
    m, k, n = 17, 19, 5  # more than one 16x16 tile in m and k
    a = rand(k, m) if ta else rand(m, k)
    b = rand(n, k) if tb else rand(k, n)
    opa, opb = (a.T if ta else a), (b.T if tb else b)
    dc = rand(m, n)
    da, db = dc @ opb.T, opa.T @ dc  # gradients of op(A), op(B)
    s = nv.sym.dot(nv.sym.Variable("a"), nv.sym.Variable("b"), transpose_a=ta, transpose_b=tb)
    _check(s, [a, b], [opa @ opb], [dc], [da.T if ta else da, db.T if tb else db], ctx)


def test_batch_dot_forward_backward(ctx) -> None:
    a, b, dc = rand(3, 4, 2), rand(3, 5, 4), rand(3, 2, 5)  # transpose_a and transpose_b
    opa, opb = a.transpose(0, 2, 1), b.transpose(0, 2, 1)
    da = np.einsum("bij,bkj->bik", dc, opb).transpose(0, 2, 1)
    db = np.einsum("bji,bjk->bik", opa, dc).transpose(0, 2, 1)
    s = nv.sym.batch_dot(nv.sym.Variable("a"), nv.sym.Variable("b"), transpose_a=True,
                         transpose_b=True)  # fmt: skip
    _check(s, [a, b], [opa @ opb], [dc], [da, db], ctx)


@pytest.mark.parametrize("flatten", [True, False])
def test_fully_connected_forward_backward(ctx, flatten: bool) -> None:
    x, w, bias = rand(4, 3, 6), rand(5, 18 if flatten else 6), rand(5)
    x2 = x.reshape(4, 18) if flatten else x.reshape(12, 6)
    y = x2 @ w.T + bias
    dy = rand(*y.shape)
    s = nv.sym.FullyConnected(nv.sym.Variable("x"), nv.sym.Variable("w"), nv.sym.Variable("b"),
                              num_hidden=5, flatten=flatten)  # fmt: skip
    shape = (4, 5) if flatten else (4, 3, 5)
    grads = [(dy @ w).reshape(x.shape), dy.T @ x2, dy.sum(axis=0)]
    _check(s, [x, w, bias], [y.reshape(shape)], [dy.reshape(shape)], grads, ctx)


def _band(dy: np.ndarray) -> np.ndarray:
    dx = np.zeros((2, 3, 4))
    dx[:, :, 1:] = dy
    return dx


SHAPE_OPS = {  # symbol, y = f(x), dx = g(dy) for x of shape (2, 3, 4)
    "Reshape": (
        lambda x: nv.sym.Reshape(x, shape=(-1, 0, 2)),
        lambda x: x.reshape(4, 3, 2),
        lambda dy: dy.reshape(2, 3, 4),
    ),
    "Flatten": (nv.sym.Flatten, lambda x: x.reshape(2, 12), lambda dy: dy.reshape(2, 3, 4)),
    "expand_dims": (
        lambda x: nv.sym.expand_dims(x, axis=1),
        lambda x: x[:, None],
        lambda dy: dy[:, 0],
    ),
    "transpose": (nv.sym.transpose, np.transpose, np.transpose),
    "transpose-axes": (
        lambda x: nv.sym.transpose(x, axes=(1, 2, 0)),
        lambda x: x.transpose(1, 2, 0),
        lambda dy: dy.transpose(2, 0, 1),
    ),
    "slice_axis": (
        lambda x: nv.sym.slice_axis(x, axis=2, begin=-3, end=None),
        lambda x: x[:, :, 1:],
        _band,
    ),
    "Concat": (
        lambda x: nv.sym.Concat(x, x * 2, dim=0),
        lambda x: np.concatenate([x, 2 * x]),
        lambda dy: dy[:2] + 2 * dy[2:],
    ),
    "SliceChannel": (
        lambda x: nv.sym.Group(list(nv.sym.SliceChannel(x, num_outputs=2, axis=-1))),
        lambda x: [x[..., :2], x[..., 2:]],
        None,  # two head gradients: checked below
    ),
}


@pytest.mark.parametrize("name", list(SHAPE_OPS))
def test_shape_ops_forward_backward(ctx, name: str) -> None:
    make, f, g = SHAPE_OPS[name]
    sym, x = make(nv.sym.Variable("x")), rand(2, 3, 4)
    ys = f(x) if isinstance(f(x), list) else [f(x)]
    dys = [rand(*y.shape) for y in ys]
    dx = np.concatenate(dys, axis=-1) if g is None else g(dys[0])
    _check(sym, [x], ys, dys, [dx], ctx)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16])
def test_gpu_fully_connected_bias_gradient_sums_long_columns(dtype: Any) -> None:
    """db = sum over rows of dy on the reduction kernels: 1500 rows of 3 columns split
    into slices (few outputs, long sums), written, added or skipped; float16 summed
    in float64, not in float16 (1500 halves of ~1 would lose their last bits)."""
    from numba import cuda

    from nnvmpy.base import OpReqType
    from nnvmpy.engine.base import RunContext
    from nnvmpy.ops.nn import fully_connected
    from nnvmpy.resource import OpContext

    dy = np.random.default_rng(2).uniform(0.5, 1.5, (1500, 3)).astype(dtype)
    start = np.array([1.0, -2.0, 0.25], dtype)
    want = dy.astype(np.float64).sum(axis=0)
    opctx = OpContext(True, RunContext(nv.gpu(0), None), [])
    tol = {"rtol": 1e-3} if dtype == np.float16 else {"rtol": 1e-6}
    for req, base in (
        (OpReqType.kWriteTo, 0.0),
        (OpReqType.kAddTo, start),
        (OpReqType.kNullOp, None),
    ):
        out = cuda.to_device(start.copy())
        fully_connected._sum_rows(opctx, out, req, cuda.to_device(dy))
        got = out.copy_to_host()
        if base is None:
            np.testing.assert_array_equal(got, start)
        else:
            np.testing.assert_allclose(got, (base + want).astype(dtype), **tol)
