"""sym/nd.contrib.foreach: the `_foreach` op's forward against NumPy loops, its gradients
against the unrolled graph and finite differences, inference through the body, JSON."""

from __future__ import annotations

import json

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy.base import NNVMError
from nnvmpy.test_utils import assert_almost_equal, check_numeric_gradient

RNG = np.random.default_rng(7)


def _uniform(*shape: int) -> np.ndarray:
    return RNG.uniform(-1, 1, shape).astype(np.float32)


def _step(x, states, w):
    """out = tanh(x * w + s); new state = out + s (works on Symbols and NDArrays)."""
    F = nv.sym if isinstance(x, nv.sym.Symbol) else nv.nd
    out = F.tanh(x * w + states[0])
    return out, [out + states[0]]


def _numpy_loop(xs: np.ndarray, s: np.ndarray, w: np.ndarray):
    outs = []
    for x in xs:
        out = np.tanh(x * w + s)
        s = out + s
        outs.append(out)
    return np.stack(outs), s


def _foreach_symbol() -> nv.sym.Symbol:
    x, s, w = nv.sym.var("x"), nv.sym.var("s"), nv.sym.var("w")
    out, states = nv.sym.contrib.foreach(lambda d, st: _step(d, st, w), x, [s])
    return nv.sym.Group([out, states[0]])


def _unrolled_symbol(length: int) -> nv.sym.Symbol:
    x, s, w = nv.sym.var("x"), nv.sym.var("s"), nv.sym.var("w")
    outs = []
    for t in range(length):
        out, (s,) = _step(
            nv.sym.squeeze(nv.sym.slice_axis(x, axis=0, begin=t, end=t + 1), axis=0), [s], w
        )
        outs.append(nv.sym.expand_dims(out, axis=0))
    return nv.sym.Group([nv.sym.concat(*outs, dim=0), s])


def test_forward_matches_a_numpy_loop() -> None:
    xs, s, w = _uniform(4, 3), _uniform(3), _uniform(3)
    ex = _foreach_symbol().bind(
        nv.cpu(), {"x": nv.nd.array(xs), "s": nv.nd.array(s), "w": nv.nd.array(w)}
    )
    out, final = (a.asnumpy() for a in ex.forward())
    want_out, want_s = _numpy_loop(xs, s, w)
    assert_almost_equal(out, want_out, rtol=1e-5, atol=1e-6)
    assert_almost_equal(final, want_s, rtol=1e-5, atol=1e-6)


def test_inputs_are_data_state_then_free_variables() -> None:
    sym = _foreach_symbol()
    assert sym.list_arguments() == ["x", "s", "w"]
    args, outs, _ = sym.infer_shape(x=(5, 2, 3), s=(2, 3))
    assert args == [(5, 2, 3), (2, 3), (2, 3)]  # w's shape comes from inside the body
    assert outs == [(5, 2, 3), (2, 3)]


def test_gradient_matches_the_unrolled_graph() -> None:
    xs, s, w = _uniform(4, 3), _uniform(3), _uniform(3)
    args = {"x": xs, "s": s, "w": w}
    heads = [_uniform(4, 3), _uniform(3)]
    grads = []
    for sym in (_foreach_symbol(), _unrolled_symbol(4)):
        ex = sym.bind(
            nv.cpu(),
            {k: nv.nd.array(v) for k, v in args.items()},
            args_grad={k: nv.nd.zeros(v.shape) for k, v in args.items()},
        )
        ex.forward(is_train=True)
        ex.backward([nv.nd.array(h) for h in heads])
        grads.append({k: ex.grad_dict[k].asnumpy() for k in args})
    for k in args:
        assert_almost_equal(grads[0][k], grads[1][k], rtol=1e-5, atol=1e-6)


def test_gradient_matches_finite_differences() -> None:
    loc = {"x": _uniform(3, 2).astype(np.float64), "s": _uniform(2).astype(np.float64),
           "w": _uniform(2).astype(np.float64)}  # fmt: skip
    check_numeric_gradient(_foreach_symbol(), loc, numeric_eps=1e-3, rtol=1e-2, atol=1e-4)


def test_grad_req_add_accumulates() -> None:
    xs, s, w = _uniform(3, 2), _uniform(2), _uniform(2)
    sym = _foreach_symbol()
    base = {k: nv.nd.array(v) for k, v in {"x": xs, "s": s, "w": w}.items()}
    grads = {k: nv.nd.ones(v.shape) for k, v in base.items()}
    ex = sym.bind(nv.cpu(), base, args_grad=grads, grad_req="add")
    ex.forward(is_train=True)
    ex.backward([nv.nd.ones((3, 2)), nv.nd.ones((2,))])
    once = {k: v.asnumpy() - 1 for k, v in grads.items()}
    ex.forward(is_train=True)
    ex.backward([nv.nd.ones((3, 2)), nv.nd.ones((2,))])
    for k, v in grads.items():
        assert_almost_equal(v.asnumpy(), 1 + 2 * once[k], rtol=1e-5, atol=1e-6)


def test_imperative_foreach_records_for_autograd() -> None:
    xs, s, w = _uniform(4, 3), _uniform(3), _uniform(3)
    x_nd, s_nd, w_nd = nv.nd.array(xs), nv.nd.array(s), nv.nd.array(w)
    for a in (x_nd, s_nd, w_nd):
        a.attach_grad()
    with nv.autograd.record():
        out, states = nv.nd.contrib.foreach(lambda d, st: _step(d, st, w_nd), x_nd, [s_nd])
        loss = out.sum() + states[0].sum()
    loss.backward()
    want_out, _ = _numpy_loop(xs, s, w)
    assert_almost_equal(out.asnumpy(), want_out, rtol=1e-5, atol=1e-6)
    # the symbolic op gives the same gradients as autograd over the Python loop
    ex = _foreach_symbol().bind(
        nv.cpu(),
        {"x": nv.nd.array(xs), "s": nv.nd.array(s), "w": nv.nd.array(w)},
        args_grad={"x": nv.nd.zeros((4, 3)), "s": nv.nd.zeros(3), "w": nv.nd.zeros(3)},
    )
    ex.forward(is_train=True)
    ex.backward([nv.nd.ones((4, 3)), nv.nd.ones(3)])
    for name, arr in (("x", x_nd), ("s", s_nd), ("w", w_nd)):
        assert_almost_equal(arr.grad.asnumpy(), ex.grad_dict[name].asnumpy(), rtol=1e-5, atol=1e-6)


def test_outer_expressions_are_computed_outside_the_body() -> None:
    a, b, x, s = (nv.sym.var(n) for n in "abxs")
    free = a + b  # made outside foreach: an input of the node, not part of its subgraph
    out, _ = nv.sym.contrib.foreach(lambda d, st: (d * free + st[0], [st[0]]), x, [s])
    ex = out.bind(nv.cpu(), {k: nv.nd.array(v) for k, v in
                             {"a": [1.0, 2.0], "b": [3.0, 4.0], "x": [[1.0, 1.0], [2.0, 2.0]],
                              "s": [0.5, 0.5]}.items()})  # fmt: skip
    assert_almost_equal(ex.forward()[0].asnumpy(), np.array([[4.5, 6.5], [8.5, 12.5]]))


def test_one_dimensional_data_gives_slices_of_shape_1() -> None:
    x, s = nv.sym.var("x"), nv.sym.var("s")
    out, _ = nv.sym.contrib.foreach(lambda d, st: (d * st[0], [st[0] * 2]), x, [s])
    _, outs, _ = out.infer_shape(x=(3,), s=(1,))
    assert outs == [(3, 1)]
    ex = out.bind(nv.cpu(), {"x": nv.nd.array([1.0, 2.0, 3.0]), "s": nv.nd.array([1.0])})
    assert_almost_equal(ex.forward()[0].asnumpy(), np.array([[1.0], [4.0], [12.0]]))


def test_unknown_first_dimension_stays_unknown() -> None:
    data = nv.sym.var("data", shape=(0, 3, 4))
    outs, _ = nv.sym.contrib.foreach(
        lambda d, st: (d + st[0], [st[0] * 2]), data, [nv.sym.var("s")]
    )
    _, out_shapes, _ = outs.infer_shape_partial()
    assert out_shapes == [(0, 3, 4)]


def test_nested_foreach() -> None:
    def inner(d, st):
        return d * 2 + st[0], [d + st[0]]

    def outer(d, st):
        out, states = nv.sym.contrib.foreach(inner, d, st)
        return out, states

    x, s = nv.sym.var("x"), nv.sym.var("s")
    out, states = nv.sym.contrib.foreach(outer, x, [s])
    xs, s0 = _uniform(2, 3, 4), _uniform(4)
    ex = nv.sym.Group([out, states[0]]).bind(nv.cpu(), {"x": nv.nd.array(xs), "s": nv.nd.array(s0)})
    got_out, got_s = (a.asnumpy() for a in ex.forward())
    want_out, st = np.zeros((2, 3, 4), np.float32), s0
    for i in range(2):
        for j in range(3):
            want_out[i, j] = xs[i, j] * 2 + st
            st = xs[i, j] + st
    assert_almost_equal(got_out, want_out, rtol=1e-5, atol=1e-6)
    assert_almost_equal(got_s, st, rtol=1e-5, atol=1e-6)


def test_json_round_trip_keeps_the_subgraph() -> None:
    sym = _foreach_symbol()
    text = sym.tojson()
    assert '"subgraphs"' in text
    loaded = nv.sym.load_json(text)
    assert loaded.tojson() == text
    xs, s, w = _uniform(3, 2), _uniform(2), _uniform(2)
    args = {"x": nv.nd.array(xs), "s": nv.nd.array(s), "w": nv.nd.array(w)}
    got = loaded.bind(nv.cpu(), args).forward()[0].asnumpy()
    assert_almost_equal(got, _numpy_loop(xs, s, w)[0], rtol=1e-5, atol=1e-6)


def test_a_state_the_body_does_not_read_is_refused() -> None:
    x, s1, s2 = nv.sym.var("x"), nv.sym.var("s1"), nv.sym.var("s2")
    with pytest.raises(NNVMError, match="does not read init_states \\[1\\]"):
        nv.sym.contrib.foreach(lambda d, st: (d, [st[0] + 1, st[0] + 2]), x, [s1, s2])
    with pytest.raises(AssertionError):  # MXNet raises an AssertionError here
        nv.sym.contrib.foreach(lambda d, st: (d, [st[0] + 1, st[0] + 2]), x, [s1, s2])


def test_body_must_return_as_many_states() -> None:
    x, s = nv.sym.var("x"), nv.sym.var("s")
    with pytest.raises(NNVMError, match="gave 2 states, expected 1"):
        nv.sym.contrib.foreach(lambda d, st: (d, [st[0], st[0]]), x, [s])


def test_a_node_without_its_subgraph_says_so() -> None:
    node = nv.sym.Group(
        nv.sym.contrib.foreach(
            lambda d, st: (d + st[0], [st[0]]), nv.sym.var("x"), [nv.sym.var("s")]
        )[1]
    )
    text = node.tojson().replace('"subgraphs"', '"unused_key"')
    with pytest.raises(NNVMError, match="subgraphs"):
        nv.sym.load_json(text).bind(
            nv.cpu(), {"x": nv.nd.ones((2, 2)), "s": nv.nd.ones(2)}
        ).forward()


def test_backward_differentiates_the_forward_run_random_masks_included() -> None:
    """The gradient uses the dropout masks the forward drew (kept in the op state), not
    new ones: d out / d x is 2 where the output kept x (p=0.5), else 0."""
    x = nv.sym.var("x")
    out, _ = nv.sym.contrib.foreach(
        lambda d, st: (nv.sym.Dropout(d, p=0.5), [st[0]]), x, [nv.sym.var("s")]
    )
    xs = RNG.uniform(0.5, 1.5, (6, 50)).astype(np.float32)  # no zeros: a kept x shows
    grad = nv.nd.zeros(xs.shape)
    ex = out.bind(nv.cpu(), {"x": nv.nd.array(xs), "s": nv.nd.zeros(1)}, args_grad={"x": grad})
    got = ex.forward(is_train=True)[0].asnumpy()
    ex.backward([nv.nd.ones(xs.shape)])
    kept = got != 0
    assert 0 < kept.mean() < 1
    assert_almost_equal(got[kept], 2 * xs[kept], rtol=1e-6, atol=1e-6)
    assert_almost_equal(grad.asnumpy(), 2.0 * kept)


def test_backward_after_an_inference_forward_replays_the_loop() -> None:
    xs, s, w = _uniform(3, 2), _uniform(2), _uniform(2)
    args = {"x": nv.nd.array(xs), "s": nv.nd.array(s), "w": nv.nd.array(w)}
    grads = {k: nv.nd.zeros(v.shape) for k, v in args.items()}
    ex = _foreach_symbol().bind(nv.cpu(), args, args_grad=grads)
    ex.forward(is_train=True)
    ex.backward([nv.nd.ones((3, 2)), nv.nd.ones(2)])
    trained = {k: v.asnumpy().copy() for k, v in grads.items()}
    ex.forward(is_train=False)  # keeps no records: backward runs the loop again
    ex.backward([nv.nd.ones((3, 2)), nv.nd.ones(2)])
    for k, v in grads.items():
        assert_almost_equal(v.asnumpy(), trained[k], rtol=1e-6, atol=1e-7)


def test_subgraphs_on_an_op_without_them_are_refused() -> None:
    sym_json = nv.sym.relu(nv.sym.var("x")).tojson()
    doc = json.loads(sym_json)
    doc["nodes"][1]["subgraphs"] = json.loads(_foreach_symbol().tojson())["nodes"][-1]["subgraphs"]
    with pytest.raises(NNVMError, match="has subgraphs but its op takes none"):
        nv.sym.load_json(json.dumps(doc))


def test_the_node_declares_the_resources_of_its_body() -> None:
    """The loop runs its body's nodes itself; declaring their resources (Dropout's random
    stream) lets the executor order the loop with random ops outside it."""
    from nnvmpy.attrs import FResourceRequest
    from nnvmpy.resource import ResourceRequest

    def body(x: nv.sym.Symbol, st: list[nv.sym.Symbol]) -> tuple[nv.sym.Symbol, list]:
        y = nv.sym.Dropout(x, p=0.5) + st[0]
        return y, [y]

    out, _ = nv.sym.contrib.foreach(body, nv.sym.var("d"), [nv.sym.var("s")])
    node = out._heads[0].node
    assert node.op.get_attr(FResourceRequest)(node.attrs) == [ResourceRequest.kRandom]
    plain, _ = nv.sym.contrib.foreach(lambda x, st: (x + st[0], [st[0]]), nv.sym.var("d"),
                                      [nv.sym.var("s")])  # fmt: skip
    node = plain._heads[0].node
    assert node.op.get_attr(FResourceRequest)(node.attrs) == []
