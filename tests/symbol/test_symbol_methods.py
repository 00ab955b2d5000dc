"""Symbol's NDArray-only methods (refused as MXNet refuses them), gradient(wrt) against
finite differences, get_backend_symbol and as_nd_ndarray."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy.base import NotImplementedForSymbol
from nnvmpy.passes.partition import remove_subgraph_op_names, set_subgraph_op_names


@pytest.mark.parametrize(
    "name", ["as_in_context", "asnumpy", "asscalar", "backward", "copy", "detach", "wait_to_read"]
)
def test_ndarray_only_methods_raise_naming_the_function(name: str) -> None:
    s = nv.sym.var("x") + 1
    with pytest.raises(NotImplementedForSymbol, match=f"Function {name} is not implemented"):
        getattr(s, name)()
    assert s.list_arguments() == ["x"]  # the symbol is unharmed


@pytest.mark.parametrize(("op", "text"), [("+=", "+="), ("-=", "-="), ("*=", "*="), ("/=", "/=")])
def test_in_place_arithmetic_is_refused_and_leaves_the_name_bound(op: str, text: str) -> None:
    s = nv.sym.var("x")
    before = s
    with pytest.raises(NotImplementedForSymbol, match=re.escape(f"namely operator '{text}'")):
        exec(f"s {op} 2", {}, {"s": s})
    assert s is before
    assert (s + 2).list_arguments() == ["x"]  # the out-of-place form still works


def test_as_nd_ndarray_is_the_symbol() -> None:
    s = nv.sym.var("x") * 2
    assert s.as_nd_ndarray() is s


def _numeric_grad(f, x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        hi, lo = x.copy(), x.copy()
        hi[i] += eps
        lo[i] -= eps
        g[i] = (f(hi) - f(lo)) / (2 * eps)
    return g


def test_gradient_matches_finite_differences_of_the_output_sum() -> None:
    x, w = nv.sym.var("x"), nv.sym.var("w")
    y = nv.sym.Group([nv.sym.tanh(x) * w, nv.sym.sum(x * x, axis=1)])
    g = y.gradient(["w", "x"])
    assert len(g.list_outputs()) == 2
    rng = np.random.default_rng(0)
    xv, wv = rng.normal(size=(3, 4)), rng.normal(size=(3, 4))

    def total(xa: np.ndarray, wa: np.ndarray) -> float:
        return float((np.tanh(xa) * wa).sum() + (xa * xa).sum())

    dw, dx = g.eval(x=nv.nd.array(xv, dtype="float64"), w=nv.nd.array(wv, dtype="float64"))
    np.testing.assert_allclose(dx.asnumpy(), _numeric_grad(lambda a: total(a, wv), xv), 1e-6)
    np.testing.assert_allclose(dw.asnumpy(), _numeric_grad(lambda a: total(xv, a), wv), 1e-6)


def test_gradient_of_a_loss_op_uses_its_own_head_gradient() -> None:
    data, label = nv.sym.var("data"), nv.sym.var("label")
    out = nv.sym.SoftmaxOutput(data, label, name="sm")
    (g,) = out.gradient(["data"])
    rng = np.random.default_rng(1)
    d = rng.normal(size=(4, 5)).astype(np.float32)
    lab = np.array([0, 3, 1, 4], dtype=np.float32)
    (got,) = g.eval(data=nv.nd.array(d), label=nv.nd.array(lab))
    p = np.exp(d - d.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(got.asnumpy(), p - np.eye(5)[lab.astype(int)], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("wrt", ["x", ["z"], [1]])
def test_gradient_with_bad_wrt_names_the_problem(wrt: object) -> None:
    s = nv.sym.sin(nv.sym.var("x"))
    with pytest.raises(nv.NNVMError, match=r"Symbol\.gradient"):
        s.gradient(wrt)
    assert s.gradient(["x"]).list_outputs()  # still usable


def test_get_backend_symbol_partitions_by_the_registered_names() -> None:
    x = nv.sym.var("x")
    s = nv.sym.cos(nv.sym.exp(x)) + 1
    plain = s.get_backend_symbol("default")  # no names registered: an unchanged copy
    assert plain is not s
    assert plain.tojson() == s.tojson()
    set_subgraph_op_names("default", ["exp", "cos"])
    try:
        part = s.get_backend_symbol("default")
    finally:
        remove_subgraph_op_names("default")
    ops = [n["op"] for n in json.loads(part.tojson())["nodes"]]
    assert "_CachedOp" in ops
    assert "exp" not in ops
    xv = np.linspace(-1, 1, 6, dtype=np.float32)
    (got,) = part.eval(x=nv.nd.array(xv))
    np.testing.assert_allclose(got.asnumpy(), np.cos(np.exp(xv)) + 1, rtol=1e-5, atol=1e-6)
    with pytest.raises(nv.NNVMError, match="unknown backend 'nope'"):
        s.get_backend_symbol("nope")


def _op_names(s: nv.sym.Symbol) -> list[str]:
    return [n["op"] for n in json.loads(s.tojson())["nodes"] if n["op"] != "null"]


def test_optimize_for_takes_mxnets_shape_type_and_stype_dicts() -> None:
    # MXNet 1.9.1: optimize_for(backend, args, aux, ctx, shape_dict, type_dict, stype_dict,
    # skip_infer, **kwargs); the dicts type inputs without an array. A bool input is not a
    # dtype the fused kernels compute in, so typing it keeps the chain unfused.
    s = nv.sym.exp(nv.sym.var("x")) * 2 + 1
    assert _op_names(s.optimize_for("fuse", shape_dict={"x": (2, 2)})) == ["_FusedOp"]
    typed = s.optimize_for("fuse", shape_dict={"x": (2, 2)}, type_dict={"x": np.bool_})
    assert _op_names(typed) == ["exp", "_mul_scalar", "_plus_scalar"]
    # positional, as MXNet allows; skip_infer=True ignores the dicts
    skipped = s.optimize_for("fuse", None, None, None, {"x": (2, 2)}, {"x": "bool"}, None, True)
    assert _op_names(skipped) == ["_FusedOp"]
    # an array in args wins over the dicts ("used iff input NDArray is not in args")
    given = s.optimize_for("fuse", args={"x": nv.nd.ones((2, 2))}, type_dict={"x": "bool"})
    assert _op_names(given) == ["_FusedOp"]
    out = given.eval(x=nv.nd.array([[0.0, 1.0], [2.0, 0.5]]))[0].asnumpy()
    np.testing.assert_allclose(out, np.exp([[0.0, 1.0], [2.0, 0.5]]) * 2 + 1, rtol=1e-6)


@pytest.mark.parametrize(
    ("kwargs", "kind", "match"),
    [
        ({"shape_dict": {"x": 3}}, ValueError, r"shape_dict\['x'\] = 3 has to be a tuple or list"),
        ({"type_dict": {"x": "complex64"}}, ValueError, r"type_dict\['x'\] = complex64 is not"),
        ({"type_dict": {"x": "nosuchtype"}}, TypeError, r"type_dict\['x'\] = 'nosuchtype'"),
        ({"stype_dict": {"x": "dense"}}, ValueError, r"stype_dict\['x'\] = 'dense' is not a"),
    ],
)
def test_optimize_for_checks_the_dicts_as_mxnet(kwargs: dict, kind: type, match: str) -> None:
    with pytest.raises(kind, match=f"Symbol.optimize_for: {match}") as info:
        nv.sym.exp(nv.sym.var("x")).optimize_for("fuse", **kwargs)
    assert isinstance(info.value, nv.NNVMError)
