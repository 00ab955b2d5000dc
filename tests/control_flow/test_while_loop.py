"""sym/nd.contrib.while_loop: the `_while_loop` op against NumPy loops (zero-padded
outputs, early exit, max_iterations), gradients against autograd over the Python loop
and finite differences, and its argument checks."""

from __future__ import annotations

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy.base import NNVMError, ParamError
from nnvmpy.graph import Graph, Node, NodeEntry
from nnvmpy.registry import Op
from nnvmpy.test_utils import assert_almost_equal, check_numeric_gradient

RNG = np.random.default_rng(11)


def _uniform(*shape: int) -> np.ndarray:
    return RNG.uniform(-1, 1, shape).astype(np.float32)


def _cond(i, s):
    return i < 3


def _func(i, s, w):
    new_s = s * w + 0.5
    return [new_s * 2], [i + 1, new_s]


def _numpy(i: float, s: np.ndarray, w: np.ndarray, max_iterations: int):
    outs = []
    while len(outs) < max_iterations and i < 3:
        s = s * w + 0.5
        outs.append(s * 2)
        i += 1
    stacked = np.zeros((max_iterations, *s.shape), np.float32)
    stacked[: len(outs)] = outs
    return stacked, i, s


def _symbol(max_iterations: int) -> nv.sym.Symbol:
    i, s, w = nv.sym.var("i"), nv.sym.var("s"), nv.sym.var("w")
    outs, (i_f, s_f) = nv.sym.contrib.while_loop(
        _cond, lambda i, s: _func(i, s, w), [i, s], max_iterations=max_iterations
    )
    return nv.sym.Group([outs[0], i_f, s_f])


@pytest.mark.parametrize("max_iterations", [5, 2])
def test_forward_matches_a_numpy_loop(max_iterations: int) -> None:
    s, w = _uniform(2, 3), _uniform(2, 3)
    args = {"i": nv.nd.array([0.0]), "s": nv.nd.array(s), "w": nv.nd.array(w)}
    out, i_f, s_f = (a.asnumpy() for a in _symbol(max_iterations).bind(nv.cpu(), args).forward())
    want_out, want_i, want_s = _numpy(0.0, s, w, max_iterations)
    assert out.shape == (max_iterations, 2, 3)
    assert_almost_equal(out, want_out, rtol=1e-5, atol=1e-6)
    assert i_f.tolist() == [want_i]
    assert_almost_equal(s_f, want_s, rtol=1e-5, atol=1e-6)


def test_a_false_condition_runs_no_step() -> None:
    s, w = _uniform(2), _uniform(2)
    args = {"i": nv.nd.array([7.0]), "s": nv.nd.array(s), "w": nv.nd.array(w)}
    out, i_f, s_f = (a.asnumpy() for a in _symbol(4).bind(nv.cpu(), args).forward())
    assert not out.any()
    assert i_f.tolist() == [7.0]
    assert_almost_equal(s_f, s)


def test_gradient_matches_autograd_over_the_python_loop() -> None:
    s, w = _uniform(2, 3), _uniform(2, 3)
    heads = [_uniform(4, 2, 3), _uniform(1), _uniform(2, 3)]
    ex = _symbol(4).bind(
        nv.cpu(),
        {"i": nv.nd.array([0.0]), "s": nv.nd.array(s), "w": nv.nd.array(w)},
        args_grad={"s": nv.nd.zeros((2, 3)), "w": nv.nd.zeros((2, 3))},
    )
    ex.forward(is_train=True)
    ex.backward([nv.nd.array(h) for h in heads])
    s_nd, w_nd = nv.nd.array(s), nv.nd.array(w)
    s_nd.attach_grad()
    w_nd.attach_grad()
    with nv.autograd.record():
        outs, (_, s_f) = nv.nd.contrib.while_loop(
            _cond, lambda i, s: _func(i, s, w_nd), [nv.nd.array([0.0]), s_nd], max_iterations=4
        )
        assert outs[0].shape == (4, 2, 3)  # padded to max_iterations like the symbol's
        loss = (outs[0] * nv.nd.array(heads[0])).sum() + (s_f * nv.nd.array(heads[2])).sum()
    loss.backward()
    assert_almost_equal(ex.grad_dict["s"].asnumpy(), s_nd.grad.asnumpy(), rtol=1e-5, atol=1e-5)
    assert_almost_equal(ex.grad_dict["w"].asnumpy(), w_nd.grad.asnumpy(), rtol=1e-5, atol=1e-5)


def test_gradient_matches_finite_differences() -> None:
    sym = _symbol(4)
    loc = {
        "i": np.zeros(1),
        "s": _uniform(3).astype(np.float64),
        "w": _uniform(3).astype(np.float64),
    }
    check_numeric_gradient(sym, loc, grad_nodes=["s", "w"], numeric_eps=1e-3, rtol=1e-2, atol=1e-4)


def test_nested_while_loops() -> None:
    def outer_func(i, acc):
        _, (_, inner) = nv.sym.contrib.while_loop(
            lambda j, a: j < 2, lambda j, a: ([], [j + 1, a + i]), [i * 0, acc], max_iterations=3
        )
        return [], [i + 1, inner]

    i, acc = nv.sym.var("i"), nv.sym.var("acc")
    _, (_, acc_f) = nv.sym.contrib.while_loop(
        lambda i, a: i < 3, outer_func, [i, acc], max_iterations=5
    )
    ex = acc_f.bind(nv.cpu(), {"i": nv.nd.array([0.0]), "acc": nv.nd.array([1.0])})
    assert ex.forward()[0].asnumpy().tolist() == [1.0 + 2 * (0 + 1 + 2)]


def test_json_round_trip() -> None:
    sym = _symbol(3)
    text = sym.tojson()
    assert nv.sym.load_json(text).tojson() == text


def test_max_iterations_is_required() -> None:
    with pytest.raises(NNVMError, match="max_iterations"):
        nv.sym.contrib.while_loop(
            _cond, lambda i, s: _func(i, s, s), [nv.sym.var("i"), nv.sym.var("s")]
        )
    with pytest.raises(NNVMError, match="max_iterations"):
        nv.nd.contrib.while_loop(
            _cond, lambda i, s: _func(i, s, s), [nv.nd.zeros(1), nv.nd.zeros(1)]
        )


def test_func_must_keep_the_number_of_loop_variables() -> None:
    with pytest.raises(NNVMError, match="gave 1 loop variables, expected 2"):
        nv.sym.contrib.while_loop(
            _cond, lambda i, s: ([], [i + 1]), [nv.sym.var("i"), nv.sym.var("s")], max_iterations=2
        )


def test_a_non_scalar_condition_fails_at_run_time() -> None:
    x = nv.sym.var("x")
    _, final = nv.sym.contrib.while_loop(
        lambda x: x < 1, lambda x: ([], [x + 1]), [x], max_iterations=2
    )
    ex = final[0].bind(nv.cpu(), {"x": nv.nd.zeros(3)})
    with pytest.raises(NNVMError, match="scalar"):
        ex.forward()[0].asnumpy()


def test_func_must_read_every_loop_variable() -> None:
    i, s = nv.sym.var("i"), nv.sym.var("s")
    with pytest.raises(ParamError, match="does not read loop_vars \\[1\\]"):
        nv.sym.contrib.while_loop(
            lambda i, s: i < 2, lambda i, s: ([], [i + 1, i * 2]), [i, s], max_iterations=2
        )


def test_loop_variables_anywhere_among_the_inputs() -> None:
    """MXNet orders the node's inputs as the union of cond's and func's inputs:
    func_var_locs says which func inputs are the loop variables."""
    v_c = nv.sym.var("v")
    cond = Graph([(nv.sym.sum(v_c) < 10)._heads[0]])
    v_f, w_f = nv.sym.var("v"), nv.sym.var("w")
    func = Graph([(v_f * w_f)._heads[0]])
    names = [func.indexed.nodes[n].name for n in func.indexed.input_nodes]
    assert names == ["v", "w"]
    attrs = Op.get("_while_loop").parse_attrs(
        {"num_args": "2", "num_outputs": "1", "num_out_data": "0", "max_iterations": "6",
         "cond_input_locs": "[1]", "func_input_locs": "[1, 0]", "func_var_locs": "[0]"},
        "loop",
    )  # fmt: skip
    attrs.parsed.subgraphs = [cond, func]
    w, v = nv.sym.var("w"), nv.sym.var("v")  # op input 0 is the free w, 1 the loop variable
    node = Node(attrs, [w._heads[0], v._heads[0]])
    sym = nv.sym.Symbol([NodeEntry(node, 0)])
    assert sym.infer_shape(w=(2,), v=(2,))[1] == [(2,)]
    ex = sym.bind(nv.cpu(), {"w": nv.nd.array([2.0, 3.0]), "v": nv.nd.array([1.0, 1.0])})
    assert ex.forward()[0].asnumpy().tolist() == [4.0, 9.0]  # (1,1) (2,3) (4,9): sum 13 stops
