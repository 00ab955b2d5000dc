"""Executor: bind/simple_bind, forward/backward against NumPy, grad_req, state, aux, errors."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy.graph import NodeEntry, make_grad_node, make_node

sym, nd = nv.sym, nv.nd
F64 = np.float64
SHAPE = (3, 4)


def assign(out: np.ndarray, req: nv.OpReqType, value: Any) -> None:
    """KERNEL_ASSIGN for NumPy test kernels."""
    if req == nv.OpReqType.kAddTo:
        out[...] += value
    elif req != nv.OpReqType.kNullOp:
        out[...] = value


def values(seed: int = 0, *names: str) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {n: rng.uniform(-1, 1, SHAPE) for n in names}


# y = quadratic(x * w + b; a=2, b=3, c=1):  u = x*w + b,  dy/du = 4u + 3
def affine_quadratic() -> nv.sym.Symbol:
    x, w, b = sym.var("x"), sym.var("w"), sym.var("b")
    mul = sym.elemwise_mul(x, w, name="mul")
    return sym.quadratic(sym.elemwise_add(mul, b, name="add"), a=2, b=3, c=1, name="quad")


def reference(v: dict[str, np.ndarray], head: Any = 1.0) -> tuple[np.ndarray, dict[str, Any]]:
    u = v["x"] * v["w"] + v["b"]
    du = head * (4 * u + 3)
    return 2 * u * u + 3 * u + 1, {"x": du * v["w"], "w": du * v["x"], "b": du}


def arrays(v: dict[str, np.ndarray], ctx: Any = None) -> dict[str, Any]:
    return {n: nd.array(a, ctx, dtype=F64) for n, a in v.items()}


# -- binding --------------------------------------------------------------------------------------


def test_bind_with_lists_matches_hand_derived_gradients() -> None:
    y = affine_quadratic()
    assert y.list_arguments() == ["x", "w", "b"]
    v = values(0, "x", "w", "b")
    args = [nd.array(v[n], dtype=F64) for n in "xwb"]
    grads = [nd.zeros(SHAPE, dtype=F64) for _ in range(3)]
    exe = y.bind(nv.cpu(), args, args_grad=grads)
    assert exe.arg_arrays == args
    assert exe.grad_arrays == grads
    out = exe.forward(is_train=True)
    want, dwant = reference(v)
    np.testing.assert_allclose(out[0].asnumpy(), want, rtol=1e-12)
    exe.backward()  # ones as the head gradient
    for n, g in zip("xwb", grads):
        np.testing.assert_allclose(g.asnumpy(), dwant[n], rtol=1e-12)
    assert list(exe.output_dict) == ["quad_output"]
    assert exe.output_dict["quad_output"] is exe.outputs[0]


def test_second_backward_without_forward_is_refused_unless_accumulating(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # unfused: a fused backward recomputes what it reads from the arguments, needs no forward
    monkeypatch.setenv("NNVMPY_FUSION", "0")
    y = affine_quadratic()
    v = values(3, "x", "w", "b")
    grads = {n: nd.zeros(SHAPE, dtype=F64) for n in "xwb"}
    exe = y.bind(nv.cpu(), arrays(v), args_grad=grads, grad_req="write")
    with pytest.raises(nv.NNVMError, match="call forward"):
        exe.backward()  # no forward yet
    exe.forward(is_train=True)
    exe.backward()
    with pytest.raises(nv.NNVMError, match="call forward"):
        exe.backward()
    exe.forward(is_train=True)
    exe.backward()  # usable again after the error
    np.testing.assert_allclose(grads["b"].asnumpy(), reference(v)[1]["b"], rtol=1e-12)


def test_bind_with_dicts_and_explicit_head_gradient() -> None:
    y = affine_quadratic()
    v = values(1, "x", "w", "b")
    grads = {n: nd.zeros(SHAPE, dtype=F64) for n in "xwb"}
    exe = y.bind(nv.cpu(), arrays(v), args_grad=grads)
    assert list(exe.arg_dict) == ["x", "w", "b"]
    assert exe.grad_dict == grads
    exe.forward(is_train=True)
    head = np.random.default_rng(2).normal(size=SHAPE)
    exe.backward([nd.array(head, dtype=F64)])
    _, dwant = reference(v, head)
    for n in "xwb":
        np.testing.assert_allclose(grads[n].asnumpy(), dwant[n], rtol=1e-12)
    exe.forward(is_train=True)
    exe.backward(head * 2)  # one array without a list, NumPy accepted
    np.testing.assert_allclose(grads["b"].asnumpy(), 2 * dwant["b"], rtol=1e-12)
    exe.forward(is_train=True)
    exe.backward()  # back to ones
    np.testing.assert_allclose(grads["b"].asnumpy(), reference(v)[1]["b"], rtol=1e-12)


def test_grad_req_write_add_null_per_argument() -> None:
    y = affine_quadratic()
    v = values(3, "x", "w", "b")
    grads = {n: nd.zeros(SHAPE, dtype=F64) for n in "xw"}
    exe = y.bind(nv.cpu(), arrays(v), args_grad=grads, grad_req={"x": "add", "w": "write"})
    assert set(exe.grad_dict) == {"x", "w"}
    assert exe.grad_arrays[2] is None
    _, dwant = reference(v)
    exe.forward(is_train=True)
    exe.backward()
    np.testing.assert_allclose(grads["x"].asnumpy(), dwant["x"], rtol=1e-12)
    exe.backward()  # a second backward after one forward: 'add' accumulates, 'write' overwrites
    np.testing.assert_allclose(grads["x"].asnumpy(), 2 * dwant["x"], rtol=1e-12)
    np.testing.assert_allclose(grads["w"].asnumpy(), dwant["w"], rtol=1e-12)
    exe.forward(is_train=True)
    exe.backward()
    np.testing.assert_allclose(grads["x"].asnumpy(), 3 * dwant["x"], rtol=1e-12)
    np.testing.assert_allclose(grads["w"].asnumpy(), dwant["w"], rtol=1e-12)


def test_grad_req_add_keeps_what_the_array_held() -> None:
    y = affine_quadratic()
    v = values(4, "x", "w", "b")
    start = np.full(SHAPE, 10.0)
    exe = y.simple_bind(nv.cpu(), grad_req="add", type_dict={"x": F64}, x=SHAPE)
    exe.copy_params_from(v)
    exe.grad_dict["b"][:] = start
    exe.forward(is_train=True)
    exe.backward()
    np.testing.assert_allclose(exe.grad_dict["b"].asnumpy(), start + reference(v)[1]["b"])


def test_grad_req_null_prunes_the_backward_graph() -> None:
    y = affine_quadratic()
    v = values(5, "x", "w", "b")
    exe = y.simple_bind(
        nv.cpu(),
        grad_req={"x": "null", "w": "null", "b": "write"},
        type_dict={"x": F64},
        x=SHAPE,
    )
    assert list(exe.grad_dict) == ["b"]
    plan = exe.debug_str()
    assert "Name=quad_backward" in plan
    assert "Name=mul_backward" not in plan  # nothing below 'add' needs a gradient
    exe.forward(is_train=True, **v)
    exe.backward()
    np.testing.assert_allclose(exe.grad_dict["b"].asnumpy(), reference(v)[1]["b"], rtol=1e-12)
    inference = y.simple_bind(nv.cpu(), grad_req="null", x=SHAPE)
    assert inference.grad_dict == {}
    assert "_backward" not in inference.debug_str()
    inference.backward()  # as MXNet: nothing wants a gradient, so nothing runs


def test_simple_bind_with_type_dict() -> None:
    y = affine_quadratic()
    exe = y.simple_bind(nv.cpu(), type_dict={"x": F64}, x=SHAPE)
    assert [a.dtype for a in exe.arg_arrays] == [np.dtype(F64)] * 3
    assert [g.dtype for g in exe.grad_arrays if g is not None] == [np.dtype(F64)] * 3
    assert exe.outputs[0].dtype == np.dtype(F64)
    assert [a.shape for a in exe.arg_arrays] == [SHAPE] * 3
    default = y.simple_bind(nv.cpu(), x=SHAPE)
    assert default.outputs[0].dtype == np.dtype(np.float32)
    # a part of the graph no given type reaches gets float32, the rest keeps type_dict
    g = sym.Group([sym.quadratic(sym.var("p")), sym.quadratic(sym.var("q"))])
    mixed = g.simple_bind(nv.cpu(), type_dict={"p": F64}, p=(2,), q=(3,))
    assert [a.dtype for a in mixed.arg_arrays] == [np.dtype(F64), np.dtype(np.float32)]


def test_forward_copies_keyword_inputs_and_reuses_outputs() -> None:
    y = affine_quadratic()
    exe = y.simple_bind(nv.cpu(), grad_req="null", type_dict={"x": F64}, x=SHAPE)
    x_array = exe.arg_dict["x"]
    v = values(6, "x", "w", "b")
    out1 = exe.forward(**v)
    first = out1[0].asnumpy()
    np.testing.assert_allclose(first, reference(v)[0], rtol=1e-12)
    v["x"][:] = 0.0  # the executor copied the values, so this changes nothing
    np.testing.assert_allclose(exe.arg_dict["x"].asnumpy(), first * 0 + x_array.asnumpy())
    assert exe.arg_dict["x"] is x_array
    v2 = values(7, "x", "w", "b")
    out2 = exe.forward(x=nd.array(v2["x"], dtype=F64), w=v2["w"], b=v2["b"])
    assert out2[0] is out1[0]  # the same output arrays, refilled
    np.testing.assert_allclose(out1[0].asnumpy(), reference(v2)[0], rtol=1e-12)


def test_copy_params_from() -> None:
    y = affine_quadratic()
    exe = y.simple_bind(nv.cpu(), x=SHAPE)
    exe.copy_params_from({"w": np.ones(SHAPE)})
    np.testing.assert_array_equal(exe.arg_dict["w"].asnumpy(), np.ones(SHAPE))
    with pytest.raises(nv.NNVMError, match="'v' is not an argument"):
        exe.copy_params_from({"v": np.ones(SHAPE)})
    exe.copy_params_from({"v": np.ones(SHAPE)}, allow_extra_params=True)


def test_debug_str_lists_nodes_storage_and_total(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NNVMPY_FUSION", "0")  # fused, this chain needs no planned storage
    x = sym.var("x")
    y = sym.sigmoid(sym.quadratic(sym.relu(x, name="r"), a=1, name="q"), name="s")
    exe = y.simple_bind(nv.cpu(), x=(16, 16))
    text = exe.debug_str()
    for node in ("Op:relu, Name=r", "Op:quadratic, Name=q", "Op:sigmoid, Name=s"):
        assert node in text
    assert "Name=q_backward" in text
    assert "Variable:x" in text
    assert re.search(r"storage=\d+", text)
    assert "storage=external" in text
    total = re.search(r"Total ([\d.]+) MB allocated \((\d+) bytes", text)
    assert total is not None
    assert int(total.group(2)) == exe.storage_bytes > 0


def test_outputs_can_be_the_variables_and_repeat() -> None:
    x = sym.var("x")
    q = sym.quadratic(x, a=1, name="q")
    exe = sym.Group([q, x, q]).simple_bind(nv.cpu(), type_dict={"x": F64}, x=(3,))
    xv = np.array([1.0, 2.0, 3.0])
    outs = [o.asnumpy() for o in exe.forward(is_train=True, x=xv)]
    np.testing.assert_array_equal(outs[0], xv * xv)
    np.testing.assert_array_equal(outs[1], xv)
    np.testing.assert_array_equal(outs[2], xv * xv)
    exe.backward([np.ones(3), 2 * np.ones(3), 3 * np.ones(3)])
    np.testing.assert_allclose(exe.grad_dict["x"].asnumpy(), 2 * xv + 2 + 3 * 2 * xv)


def test_executor_runs_on_every_device(ctx: nv.Context) -> None:
    y = affine_quadratic()
    v = values(8, "x", "w", "b")
    grads = {n: nd.zeros(SHAPE, ctx, dtype=F64) for n in "xwb"}
    exe = y.bind(ctx, arrays(v, ctx), args_grad=grads)
    out = exe.forward(is_train=True)[0]
    assert out.context == ctx
    want, dwant = reference(v)
    np.testing.assert_allclose(out.asnumpy(), want, rtol=1e-12)
    exe.backward()
    for n in "xwb":
        np.testing.assert_allclose(grads[n].asnumpy(), dwant[n], rtol=1e-12)


# -- ops with special attributes ------------------------------------------------------------------


def test_loss_op_needs_no_head_gradient(scoped_registry: None) -> None:
    """An FGradient that ignores its ograds, like SoftmaxOutput: d(data) = data - label."""

    def forward(attrs: Any, ctx: Any, ins: list[Any], req: list[Any], outs: list[Any]) -> None:
        assign(outs[0], req[0], ins[0])

    def backward(attrs: Any, ctx: Any, ins: list[Any], req: list[Any], outs: list[Any]) -> None:
        assign(outs[0], req[0], ins[0] - ins[1])
        assign(outs[1], req[1], 0.0)

    (
        nv.register_op("t_exe_l2loss")
        .set_num_inputs(2)
        .set_num_outputs(1)
        .set_attr("FListInputNames", lambda attrs: ["data", "label"])
        .set_attr("FInferShape", nv.elemwise_shape(2, 1))
        .set_attr("FInferType", nv.elemwise_type(2, 1))
        .set_attr("FCompute<cpu>", forward)
        .set_attr(
            "FGradient",
            lambda node, ograds: make_grad_node("_t_exe_backward_l2loss", node, node.inputs),
        )
    )
    (
        nv.register_op("_t_exe_backward_l2loss")
        .set_num_inputs(2)
        .set_num_outputs(2)
        .set_attr("TIsBackward", True)
        .set_attr("FCompute<cpu>", backward)
    )
    x = sym.var("x")
    loss = sym.t_exe_l2loss(sym.quadratic(x, a=1, name="q"), name="loss")
    assert loss.list_arguments() == ["x", "loss_label"]
    exe = loss.simple_bind(
        nv.cpu(), grad_req={"x": "write"}, type_dict={"x": F64}, x=(4,), loss_label=(4,)
    )
    xv, label = np.array([0.5, -1.0, 2.0, 0.0]), np.array([1.0, 1.0, 1.0, 1.0])
    exe.forward(is_train=True, x=xv, loss_label=label)
    exe.backward()
    want = (xv * xv - label) * 2 * xv
    np.testing.assert_allclose(exe.grad_dict["x"].asnumpy(), want, rtol=1e-12)
    exe.forward(is_train=True, x=xv, loss_label=label)
    exe.backward([np.full(4, 100.0)])  # ignored, as MXNet's loss layers ignore it
    np.testing.assert_allclose(exe.grad_dict["x"].asnumpy(), want, rtol=1e-12)


class CubeState:
    """Op state: counts calls and keeps x for backward (a cuDNN descriptor stand-in)."""

    def __init__(self, shapes: list[Any]) -> None:
        self.shapes = shapes
        self.forward_calls = 0
        self.backward_calls = 0
        self.saved: np.ndarray | None = None


@pytest.fixture
def cube_op(scoped_registry: None) -> list[CubeState]:
    """y = x^3 with FCreateOpState; backward reads x from the state, not from the graph."""
    created: list[CubeState] = []

    def create(attrs: Any, ctx: Any, in_shapes: list[Any], in_types: list[Any]) -> CubeState:
        state = CubeState(in_shapes)
        created.append(state)
        return state

    def forward(state: CubeState, ctx: Any, ins: list[Any], req: list[Any], outs: list[Any]):
        state.forward_calls += 1
        state.saved = np.array(ins[0])
        assign(outs[0], req[0], ins[0] ** 3)

    def backward(state: CubeState, ctx: Any, ins: list[Any], req: list[Any], outs: list[Any]):
        state.backward_calls += 1
        assign(outs[0], req[0], ins[0] * 3 * state.saved**2)

    (
        nv.register_op("t_exe_cube")
        .set_num_inputs(1)
        .set_num_outputs(1)
        .set_attr("FInferShape", nv.elemwise_shape(1, 1))
        .set_attr("FInferType", nv.elemwise_type(1, 1))
        .set_attr("FCreateOpState", create)
        .set_attr("FStatefulCompute<cpu>", forward)
        .set_attr("FGradient", nv.ElemwiseGradUseNone("_t_exe_backward_cube"))
    )
    (
        nv.register_op("_t_exe_backward_cube")
        .set_num_inputs(1)
        .set_num_outputs(1)
        .set_attr("TIsBackward", True)
        .set_attr("FStatefulCompute<cpu>", backward)
    )
    return created


def test_stateful_op_shares_its_state_with_its_backward(cube_op: list[CubeState]) -> None:
    x = sym.var("x")
    y = sym.t_exe_cube(sym.t_exe_cube(x, name="c1"), name="c2")
    exe = y.simple_bind(nv.cpu(), type_dict={"x": F64}, x=(3,))
    assert len(cube_op) == 2  # one state per node, created at bind
    assert cube_op[0].shapes == [(3,)]
    xv = np.array([1.0, -2.0, 0.5])
    np.testing.assert_allclose(exe.forward(is_train=True, x=xv)[0].asnumpy(), xv**9)
    exe.backward()
    np.testing.assert_allclose(exe.grad_dict["x"].asnumpy(), 9 * xv**8, rtol=1e-12)
    exe.forward(is_train=True, x=xv)[0].wait_to_read()
    assert [(s.forward_calls, s.backward_calls) for s in cube_op] == [(2, 1), (2, 1)]
    other = y.simple_bind(nv.cpu(), x=(3,))
    assert len(cube_op) == 4  # another executor, its own states
    other.forward(x=xv)
    other.outputs[0].wait_to_read()
    assert [s.forward_calls for s in cube_op] == [2, 2, 1, 1]


@pytest.fixture
def split_op(scoped_registry: None) -> None:
    """(x) -> (2x, x^2), outputs named 'double' and 'square'."""

    def forward(attrs: Any, ctx: Any, ins: list[Any], req: list[Any], outs: list[Any]) -> None:
        assign(outs[0], req[0], 2 * ins[0])
        assign(outs[1], req[1], ins[0] * ins[0])

    def backward(attrs: Any, ctx: Any, ins: list[Any], req: list[Any], outs: list[Any]) -> None:
        dy0, dy1, x = ins
        assign(outs[0], req[0], 2 * dy0 + 2 * x * dy1)

    (
        nv.register_op("t_exe_split")
        .set_num_inputs(1)
        .set_num_outputs(2)
        .set_attr("FListOutputNames", lambda attrs: ["double", "square"])
        .set_attr("FInferShape", nv.elemwise_shape(1, 2))
        .set_attr("FInferType", nv.elemwise_type(1, 2))
        .set_attr("FCompute<cpu>", forward)
        .set_attr("FGradient", nv.ElemwiseGradUseIn("_t_exe_backward_split"))
    )
    (
        nv.register_op("_t_exe_backward_split")
        .set_num_inputs(3)
        .set_num_outputs(1)
        .set_attr("TIsBackward", True)
        .set_attr("FCompute<cpu>", backward)
    )


def test_multi_output_op(split_op: None) -> None:
    x = sym.var("x")
    s = sym.t_exe_split(x, name="sp")
    assert s.list_outputs() == ["sp_double", "sp_square"]
    exe = s.simple_bind(nv.cpu(), type_dict={"x": F64}, x=(4,))
    xv = np.array([1.0, -2.0, 3.0, 0.5])
    double, square = (o.asnumpy() for o in exe.forward(is_train=True, x=xv))
    np.testing.assert_array_equal(double, 2 * xv)
    np.testing.assert_array_equal(square, xv * xv)
    exe.backward([np.ones(4), np.full(4, 3.0)])
    np.testing.assert_allclose(exe.grad_dict["x"].asnumpy(), 2 + 3 * 2 * xv)
    # both outputs feeding one node; and only one of them used
    both = sym.elemwise_mul(s[0], s["sp_square"], name="m")  # 2x^3
    exe = both.simple_bind(nv.cpu(), type_dict={"x": F64}, x=(4,))
    np.testing.assert_allclose(exe.forward(is_train=True, x=xv)[0].asnumpy(), 2 * xv**3)
    exe.backward()
    np.testing.assert_allclose(exe.grad_dict["x"].asnumpy(), 6 * xv**2, rtol=1e-12)
    one = sym.quadratic(s[1], a=1, name="q")  # x^4
    exe = one.simple_bind(nv.cpu(), type_dict={"x": F64}, x=(4,))
    exe.forward(is_train=True, x=xv)
    exe.backward()
    np.testing.assert_allclose(exe.grad_dict["x"].asnumpy(), 4 * xv**3, rtol=1e-12)


@pytest.fixture
def running_mean_op(scoped_registry: None) -> None:
    """y = x; in training, moving_mean <- 0.5 moving_mean + 0.5 mean(x) (an FMutateInputs)."""

    def forward(attrs: Any, ctx: Any, ins: list[Any], req: list[Any], outs: list[Any]) -> None:
        assign(outs[0], req[0], ins[0])
        if ctx.is_train:
            ins[1][...] = 0.5 * ins[1] + 0.5 * ins[0].mean()

    def infer_shape(attrs: Any, ins: list[Any], outs: list[Any]) -> bool:
        nv.shape_assign(ins, 1, (1,))
        return bool(nv.elemwise_shape(1, 1)(attrs, ins[:1], outs))

    (
        nv.register_op("t_exe_running_mean")
        .set_num_inputs(2)
        .set_num_outputs(1)
        .set_attr("FListInputNames", lambda attrs: ["data", "moving_mean"])
        .set_attr("FMutateInputs", lambda attrs: [1])
        .set_attr("FInferShape", infer_shape)
        .set_attr("FInferType", nv.elemwise_type(2, 1))
        .set_attr("FCompute<cpu>", forward)
        .set_attr("FGradient", running_mean_gradient)
    )


def running_mean_gradient(node: Any, ograds: list[Any]) -> list[Any]:
    """dx = dy; the auxiliary state gets a zero gradient (FGradient covers every input)."""
    copy = make_node("_copy", f"{node.name}_backward", [ograds[0]])
    zero = make_node("zeros_like", f"{node.name}_aux_zero_grad", [node.inputs[1]])
    return [NodeEntry(copy, 0), NodeEntry(zero, 0)]


def test_aux_states_are_updated_in_training_forward(running_mean_op: None) -> None:
    x = sym.var("x")
    s = sym.quadratic(sym.t_exe_running_mean(x, name="rm"), a=1, name="q")
    assert s.list_arguments() == ["x"]
    assert s.list_auxiliary_states() == ["rm_moving_mean"]
    exe = s.simple_bind(nv.cpu(), x=(2, 2))
    moving = exe.aux_dict["rm_moving_mean"]
    assert moving.shape == (1,)
    assert len(exe.aux_arrays) == 1
    xv = np.full((2, 2), 4.0, dtype=np.float32)
    exe.forward(is_train=True, x=xv)
    np.testing.assert_array_equal(moving.asnumpy(), [2.0])
    exe.forward(is_train=True, x=xv)
    np.testing.assert_array_equal(moving.asnumpy(), [3.0])
    exe.forward(is_train=False, x=xv)  # inference reads, does not update
    np.testing.assert_array_equal(moving.asnumpy(), [3.0])
    exe.backward()
    np.testing.assert_allclose(exe.grad_dict["x"].asnumpy(), 2 * xv)
    # bind with aux states given by the caller (dict or list)
    aux = nd.array([10.0])
    bound = s.bind(nv.cpu(), {"x": nd.array(xv)}, aux_states={"rm_moving_mean": aux})
    bound.forward(is_train=True)
    np.testing.assert_array_equal(aux.asnumpy(), [7.0])
    assert bound.aux_dict["rm_moving_mean"] is aux
    listed = s.bind(nv.cpu(), [nd.array(xv)], aux_states=[nd.array([0.0])])
    listed.forward(is_train=True)
    np.testing.assert_array_equal(listed.aux_arrays[0].asnumpy(), [2.0])
    with pytest.raises(nv.NNVMError, match="aux_states is required"):
        s.bind(nv.cpu(), [nd.array(xv)])


# -- bad input, and working afterwards -------------------------------------------------------------


def test_inconsistent_shapes_at_simple_bind() -> None:
    x, y = sym.var("x"), sym.var("y")
    s = sym.elemwise_add(x, y, name="plus")
    with pytest.raises(nv.InferError, match=r"plus.*\(3, 2\).*\(2, 3\)"):
        s.simple_bind(nv.cpu(), x=(2, 3), y=(3, 2))
    with pytest.raises(nv.NNVMError, match=r"still unknown: \{'x': '.*', 'y': '.*'\}"):
        s.simple_bind(nv.cpu(), x=(2, 0))
    exe = s.simple_bind(nv.cpu(), x=(2, 3))
    assert exe.forward(x=np.ones((2, 3)), y=np.ones((2, 3)))[0].asnumpy().sum() == 12


def test_unknown_and_missing_argument_names() -> None:
    x, y = sym.var("x"), sym.var("y")
    s = sym.elemwise_add(x, y)
    good = {"x": nd.zeros((2, 3)), "y": nd.zeros((2, 3))}
    # as MXNet: names that are not arguments are ignored (a checkpoint may hold more)
    s.bind(nv.cpu(), {**good, "z": nd.zeros((2, 3)), "b": None})
    with pytest.raises(nv.NNVMError, match=r"args is missing \['y'\]"):
        s.bind(nv.cpu(), {"x": nd.zeros((2, 3))})
    with pytest.raises(nv.NNVMError, match="args needs 2 arrays"):
        s.bind(nv.cpu(), [nd.zeros((2, 3))])
    s.simple_bind(nv.cpu(), x=(2, 3), z=(2, 3), axis=1)  # as MXNet: not shapes of inputs
    with pytest.raises(nv.NNVMError, match="unknown argument 'z'"):
        s.infer_shape(x=(2, 3), z=(2, 3))
    with pytest.raises(nv.NNVMError, match="must be an NDArray"):
        s.bind(nv.cpu(), [np.zeros((2, 3)), np.zeros((2, 3))])
    with pytest.raises(nv.NNVMError, match="grad_req 'wrte' is not one of"):
        s.bind(nv.cpu(), good, args_grad=good, grad_req={"x": "wrte"})
    only_x = s.bind(nv.cpu(), good, args_grad=good, grad_req={"x": "write", "z": "add"})
    assert only_x._grad_names == ["x"]  # y is 'null'; z names nothing and is ignored
    exe = s.bind(nv.cpu(), good, args_grad={"x": nd.zeros((2, 3)), "y": nd.zeros((2, 3))})
    with pytest.raises(nv.NNVMError, match="forward: unknown argument 'z'"):
        exe.forward(z=np.ones((2, 3)))
    np.testing.assert_array_equal(exe.forward(x=np.ones((2, 3)))[0].asnumpy(), np.ones((2, 3)))


def test_wrong_shapes_given_to_forward_and_backward() -> None:
    exe = sym.quadratic(sym.var("x"), a=1).simple_bind(nv.cpu(), x=(2, 3))
    with pytest.raises(nv.NNVMError, match=r"argument 'x' has shape \(3, 2\), expected \(2, 3\)"):
        exe.forward(x=np.ones((3, 2)))
    exe.forward(is_train=True, x=np.ones((2, 3)))
    with pytest.raises(nv.NNVMError, match="expected 1 out_grads"):
        exe.backward([])
    exe.backward([np.ones((2, 3)), np.full((9,), 7.0)])  # as MXNet: extras are ignored
    np.testing.assert_array_equal(exe.grad_dict["x"].asnumpy(), np.full((2, 3), 2.0))
    exe.forward(is_train=True, x=np.ones((2, 3)))
    with pytest.raises(nv.NNVMError, match=r"has shape \(3, 3\), expected \(2, 3\)"):
        exe.backward([np.ones((3, 3))])
    exe.backward()
    np.testing.assert_array_equal(exe.grad_dict["x"].asnumpy(), np.full((2, 3), 2.0))


@pytest.mark.parametrize("grad_req", ["wrte", ["write", "bogus"], {"x": "sum"}])
def test_invalid_grad_req(grad_req: Any) -> None:
    s = sym.elemwise_add(sym.var("x"), sym.var("y"))
    args = [nd.zeros((2,)), nd.zeros((2,))]
    with pytest.raises(nv.NNVMError, match="is not one of 'write', 'add', 'null'"):
        s.bind(nv.cpu(), args, args_grad=[nd.zeros((2,))] * 2, grad_req=grad_req)
    with pytest.raises(nv.NNVMError, match="grad_req needs 2 entries"):
        s.bind(nv.cpu(), args, args_grad=[nd.zeros((2,))] * 2, grad_req=["write"])
    exe = s.bind(nv.cpu(), args, args_grad=[nd.zeros((2,)), None], grad_req="write")
    assert list(exe.grad_dict) == ["x"]


def test_error_in_an_op_surfaces_at_asnumpy_and_the_executor_recovers(
    scoped_registry: None,
) -> None:
    def forward(attrs: Any, ctx: Any, ins: list[Any], req: list[Any], outs: list[Any]) -> None:
        if (np.asarray(ins[0]) < 0).any():
            raise ValueError("t_exe_picky wants non-negative input")
        assign(outs[0], req[0], ins[0])

    (
        nv.register_op("t_exe_picky")
        .set_num_inputs(1)
        .set_num_outputs(1)
        .set_attr("FInferShape", nv.elemwise_shape(1, 1))
        .set_attr("FInferType", nv.elemwise_type(1, 1))
        .set_attr("FCompute<cpu>", forward)
    )
    x = sym.var("x")
    s = sym.quadratic(sym.t_exe_picky(sym.quadratic(x, a=1, c=-1), name="pk"), a=1, name="q")
    exe = s.simple_bind(nv.cpu(), grad_req="null", x=(2,))
    outs = exe.forward(x=np.array([0.0, 0.5]))  # x^2 - 1 < 0: the op raises
    with pytest.raises(nv.NNVMError, match=r"pk \(t_exe_picky\).*non-negative"):
        outs[0].asnumpy()
    good = exe.forward(x=np.array([2.0, 3.0]))
    np.testing.assert_array_equal(good[0].asnumpy(), [9.0, 64.0])
    fresh = s.simple_bind(nv.cpu(), grad_req="null", x=(2,))
    np.testing.assert_array_equal(fresh.forward(x=np.array([2.0, 2.0]))[0].asnumpy(), [9.0, 9.0])
    np.testing.assert_array_equal(nd.quadratic(nd.array([1.0, 2.0]), a=1).asnumpy(), [1.0, 4.0])


def test_op_without_compute_is_named_at_bind(scoped_registry: None) -> None:
    (
        nv.register_op("t_exe_shapeless")
        .set_num_inputs(1)
        .set_num_outputs(1)
        .set_attr("FInferShape", nv.elemwise_shape(1, 1))
        .set_attr("FInferType", nv.elemwise_type(1, 1))
    )
    s = sym.t_exe_shapeless(sym.var("x"), name="nc")
    with pytest.raises(nv.NNVMError, match=r"'nc' \(t_exe_shapeless\) has no FCompute<cpu>"):
        s.simple_bind(nv.cpu(), grad_req="null", x=(2,))
    with pytest.raises(nv.NNVMError, match="no FGradient"):
        s.simple_bind(nv.cpu(), x=(2,))


def test_an_output_nothing_reads_gets_req_null(scoped_registry) -> None:
    seen: list[list[nv.OpReqType]] = []

    def compute(attrs, ctx, inputs, req, outputs):  # type: ignore[no-untyped-def]
        seen.append(list(req))
        np.copyto(outputs[0], inputs[0])
        if req[1] != nv.OpReqType.kNullOp:
            outputs[1][...] = 7.0

    (
        nv.register_op("test_exec_two_out")
        .set_num_outputs(2)
        .set_attr("FInferShape", nv.elemwise_shape(1, 2))
        .set_attr("FInferType", nv.elemwise_type(1, 2))
        .set_attr("FCompute<cpu>", compute)
    )
    x = nv.sym.Variable("x")
    y = nv.sym.test_exec_two_out(x)
    data = np.arange(3.0, dtype=np.float32)
    exe = nv.sym.relu(y[0]).simple_bind(nv.cpu(), grad_req="null", x=(3,))
    exe.forward(x=data)
    np.testing.assert_array_equal(exe.outputs[0].asnumpy(), data)
    assert seen[-1] == [nv.OpReqType.kWriteTo, nv.OpReqType.kNullOp]
    # a graph output is written even though no node reads it
    exe = y.simple_bind(nv.cpu(), grad_req="null", x=(3,))
    exe.forward(x=data)
    np.testing.assert_array_equal(exe.outputs[1].asnumpy(), [7.0, 7.0, 7.0])
    assert seen[-1] == [nv.OpReqType.kWriteTo, nv.OpReqType.kWriteTo]


def test_binding_infers_each_forward_node_once(scoped_registry: None) -> None:
    """The backward and the fused graphs start from the forward graph's shapes and types:
    only their new nodes are inferred again (a 6600-node LSTM binds in 2/3 of the time)."""
    calls: dict[str, int] = {}

    def counted(rule: Any, what: str) -> Any:
        def infer(attrs: Any, ins: list[Any], outs: list[Any]) -> Any:
            key = f"{attrs.name} {what}"
            calls[key] = calls.get(key, 0) + 1
            return rule(attrs, ins, outs)

        return infer

    def square(attrs: Any, ctx: Any, ins: list[Any], req: list[Any], outs: list[Any]) -> None:
        assign(outs[0], req[0], ins[0] ** 2)

    def square_grad(attrs: Any, ctx: Any, ins: list[Any], req: list[Any], outs: list[Any]):
        assign(outs[0], req[0], 2 * ins[1] * ins[0])  # ins: dy, x

    (
        nv.register_op("t_exe_square")
        .set_num_inputs(1)
        .set_num_outputs(1)
        .set_attr("FInferShape", counted(nv.elemwise_shape(1, 1), "shape"))
        .set_attr("FInferType", counted(nv.elemwise_type(1, 1), "type"))
        .set_attr("FCompute<cpu>", square)
        .set_attr(
            "FGradient",
            lambda node, ograds: make_grad_node(
                "_t_exe_backward_square", node, [ograds[0], node.inputs[0]]
            ),
        )
    )
    (
        nv.register_op("_t_exe_backward_square")
        .set_num_inputs(2)
        .set_num_outputs(1)
        .set_attr("TIsBackward", True)
        .set_attr("FCompute<cpu>", square_grad)
    )
    x = sym.var("x")
    h = x
    for i in range(3):  # element-wise ops between them get fused: the graph is rebuilt
        h = sym.t_exe_square(h * 0.5 + 0.25, name=f"sq{i}")
    xv = np.linspace(-1, 1, 12).reshape(SHAPE)
    exe = h.bind(nv.cpu(), {"x": nd.array(xv, dtype=F64)}, {"x": nd.zeros(SHAPE, dtype=F64)})
    assert exe._fused_groups, "the case needs a fused graph"
    assert calls == {f"sq{i} {what}": 1 for i in range(3) for what in ("shape", "type")}
    exe.forward(is_train=True)
    exe.backward()
    want, grad = xv, np.ones_like(xv)
    for _ in range(3):
        u = want * 0.5 + 0.25
        grad = grad * 2 * u * 0.5
        want = u**2
    np.testing.assert_allclose(exe.outputs[0].asnumpy(), want, rtol=1e-12)
