"""Unary math beyond the op table: gradients of the backward ops (second derivatives),
values at poles and outside domains on every device, MXNet's rounding and straight-through
rules, special functions against SciPy, and the named errors.

References: finite differences of the backward op itself (check_numeric_gradient on
`_backward_X(dy, x)`), SciPy's special functions, NumPy formulas.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import special

import nnvmpy as nv
from nnvmpy.attrs import FGradient
from nnvmpy.base import ParamError
from nnvmpy.ops.special import digamma, erfinv
from nnvmpy.registry import Op
from nnvmpy.test_utils import check_numeric_gradient

nd, sym = nv.nd, nv.sym

# -- second derivatives: each backward op differentiated against finite differences ----------

# forward op -> the range its backward op's second input (x, or y for use='out') is drawn from
SECOND_ORDER = {
    "relu": (0.2, 1.0),
    "sigmoid": (0.2, 0.8),
    "tanh": (-0.8, 0.8),
    "exp": (0.5, 2.0),
    "log": (0.5, 2.0),
    "sqrt": (0.5, 2.0),
    "rsqrt": (0.5, 2.0),
    "square": (-1.0, 1.0),
    "abs": (0.2, 1.0),
    "reciprocal": (0.5, 2.0),
    "sin": (-2.0, 2.0),
    "cos": (-2.0, 2.0),
    "log1p": (-0.5, 1.0),
    "expm1": (0.5, 2.0),
    "softsign": (0.2, 1.0),
    "softrelu": (0.2, 2.0),
    "tan": (-1.0, 1.0),
    "arcsin": (-0.8, 0.8),
    "arccos": (-0.8, 0.8),
    "arctan": (-2.0, 2.0),
    "sinh": (-2.0, 2.0),
    "cosh": (-2.0, 2.0),
    "arcsinh": (-2.0, 2.0),
    "arccosh": (1.3, 3.0),
    "arctanh": (-0.8, 0.8),
    "log2": (0.5, 2.0),
    "log10": (0.5, 2.0),
    "cbrt": (0.5, 2.0),
    "rcbrt": (0.5, 2.0),
    "erf": (-1.5, 1.5),
    "hard_sigmoid": (-1.0, 1.0),
    "clip": (-0.3, 0.3),
}
PARAMS = {"clip": {"a_min": -0.5, "a_max": 0.5}}


@pytest.mark.parametrize("name", sorted(SECOND_ORDER))
def test_backward_op_gradient_matches_finite_differences(name: str) -> None:
    """d/d(dy) and d/dv of _backward_<name>(dy, v), through its FGradient."""
    bwd = f"_backward_{name}"
    assert Op.get(bwd).has_attr(FGradient), f"{bwd} has no FGradient"
    rng = np.random.default_rng(len(name))
    low, high = SECOND_ORDER[name]
    dy = rng.uniform(0.5, 1.5, size=(3, 4))
    v = rng.uniform(low, high, size=(3, 4))
    s = getattr(sym._internal, bwd)(sym.var("dy"), sym.var("v"), **PARAMS.get(name, {}))
    check_numeric_gradient(
        s, {"dy": dy, "v": v}, rtol=1e-4, atol=1e-6, dtype=np.float64, ctx=nv.cpu()
    )


def test_gradient_of_gradient_through_the_forward_op() -> None:
    """d/dx of f'(x) for f = tanh (its backward reads y = tanh(x)): 1 - tanh^2 differentiated
    through the output is -2 tanh (1 - tanh^2)."""
    x = nd.array([-0.7, 0.1, 0.9], dtype="float64")
    x.attach_grad()
    with nv.autograd.record():
        y = nd.tanh(x)
        (g,) = nv.autograd.grad(y, [x], create_graph=True)
    g.backward()
    t = np.tanh(x.asnumpy())
    np.testing.assert_allclose(g.asnumpy(), 1 - t * t, rtol=1e-12)
    np.testing.assert_allclose(x.grad.asnumpy(), -2 * t * (1 - t * t), rtol=1e-10)


def test_backward_ops_without_a_second_derivative_say_so() -> None:
    for name in ("gamma", "gammaln", "erfinv"):
        assert not Op.get(f"_backward_{name}").has_attr(FGradient)


# -- values at poles and outside the domain: C's answers, no warnings, on every device --------

EDGES = [
    ("arcsin", [2.0, -1.0], [np.nan, -np.pi / 2]),
    ("arccos", [-1.5, 1.0], [np.nan, 0.0]),
    ("arccosh", [0.5, 1.0], [np.nan, 0.0]),
    ("arctanh", [1.0, -1.0, 2.0], [np.inf, -np.inf, np.nan]),
    ("log2", [0.0, -1.0, 8.0], [-np.inf, np.nan, 3.0]),
    ("log10", [0.0, -1.0, 1000.0], [-np.inf, np.nan, 3.0]),
    ("rcbrt", [0.0, -8.0], [np.inf, -0.5]),
    ("cbrt", [-27.0, 0.0], [-3.0, 0.0]),
    ("gamma", [0.0, -1.0, -2.0, 200.0, 5.0], [np.inf, np.nan, np.nan, np.inf, 24.0]),
    ("gammaln", [0.0, -1.0, 1.0, -np.inf], [np.inf, np.inf, 0.0, np.inf]),
    ("erfinv", [1.0, -1.0, 2.0, 0.0], [np.inf, -np.inf, np.nan, 0.0]),
    ("sinh", [800.0, -800.0], [np.inf, -np.inf]),
    ("cosh", [800.0, -800.0], [np.inf, np.inf]),
]


@pytest.mark.parametrize(("name", "x", "want"), EDGES, ids=[e[0] for e in EDGES])
def test_poles_and_domains_give_cs_values(name: str, x, want, ctx: nv.Context) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # MXNet returns these silently
        got = getattr(nd, name)(nd.array(x, dtype="float64", ctx=ctx)).asnumpy()
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-300)


def test_rint_ties_go_to_the_lower_integer_as_mxnet(ctx: nv.Context) -> None:
    x = nd.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, -2.7, 2.7], ctx=ctx)
    # MXNet's docs: rint([-2.1, -1.9, 1.5, 1.9, 2.1]) = [-2, -2, 1, 2, 2]; a tie goes down
    np.testing.assert_array_equal(nd.rint(x).asnumpy(), [-3, -2, -1, 0, 1, 2, -3, 3])
    np.testing.assert_array_equal(nd.fix(x).asnumpy(), [-2, -1, -0, 0, 1, 2, -2, 2])
    np.testing.assert_array_equal(nd.trunc(x).asnumpy(), np.trunc(x.asnumpy()))
    nan = nd.array([np.nan, np.inf], ctx=ctx)
    for op in (nd.rint, nd.fix, nd.trunc, nd.floor, nd.ceil, nd.round):
        np.testing.assert_array_equal(op(nan).asnumpy(), [np.nan, np.inf])


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int32"])
def test_relu_maps_minus_inf_and_minus_zero_to_zero_and_keeps_nan(
    dtype: str, ctx: nv.Context, monkeypatch: pytest.MonkeyPatch
) -> None:
    """MXNet 1.9.1: relu([-inf, -0, nan]) = [0, 0, nan]; the fused chain's body is the same."""
    values = [-np.inf, -1.0, -0.0, 0.0, 2.0, np.inf, np.nan] if dtype != "int32" else [-3, 0, 5]
    x = np.array(values, dtype=dtype)
    want = np.maximum(x, x.dtype.type(0))  # NaN stays, -inf and -0 -> +0
    monkeypatch.setenv("NNVMPY_FUSION", "1")
    net = sym.relu(sym.var("x") * 1.0 + 0.0)  # one fused pointwise group
    exe = net.bind(ctx, {"x": nd.array(x, dtype=dtype, ctx=ctx)}, grad_req="null")
    for got in (
        nd.relu(nd.array(x, dtype=dtype, ctx=ctx)),
        nd.Activation(nd.array(x, dtype=dtype, ctx=ctx), act_type="relu"),
        exe.forward()[0],
    ):
        assert got.dtype == x.dtype
        np.testing.assert_array_equal(got.asnumpy(), want)
        assert not np.signbit(got.asnumpy()).any()


@pytest.mark.parametrize("op", ["relu", "Activation"])
def test_relu_gradient_is_nan_where_the_output_is_and_inf_times_zero_is_nan(
    op: str, ctx: nv.Context
) -> None:
    """MXNet 1.9.1's relu backward: dy * (y > 0), NaN where y is NaN (its relu_grad)."""
    x = nd.array([np.nan, -1.0, 0.0, 2.0, -np.inf], ctx=ctx)
    dy = nd.array([1.0, 1.0, 1.0, 1.0, np.inf], ctx=ctx)
    x.attach_grad()
    with nv.autograd.record():
        y = nd.relu(x) if op == "relu" else nd.Activation(x, act_type="relu")
    y.backward(dy)
    np.testing.assert_array_equal(x.grad.asnumpy(), [np.nan, 0.0, 0.0, 1.0, np.nan])


def test_logical_not_keeps_the_dtype_and_treats_nan_as_true(ctx: nv.Context) -> None:
    got = nd.logical_not(nd.array([0, 3, -1], dtype="int32", ctx=ctx))
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got.asnumpy(), [1, 0, 0])
    np.testing.assert_array_equal(nd.logical_not(nd.array([np.nan, 0.0])).asnumpy(), [0, 1])


def test_clip_is_mxnets_if_chain_and_its_gradient_includes_the_bounds() -> None:
    x = nd.array([-3.0, -1.0, 0.0, 1.0, 3.0, np.nan], dtype="float64")
    np.testing.assert_array_equal(nd.clip(x, -1, 1).asnumpy(), [-1, -1, 0, 1, 1, np.nan])
    # a_min > a_max: x > a_max gives a_max first, else x < a_min gives a_min
    np.testing.assert_array_equal(nd.clip(x[:5], a_min=1, a_max=-1).asnumpy(), [1, 1, -1, -1, -1])
    x = nd.array([-1.5, -1.0, 0.2, 1.0, 1.5], dtype="float64")
    x.attach_grad()
    with nv.autograd.record():
        y = nd.clip(x, a_min=-1.0, a_max=1.0)
    y.backward(nd.array([2.0, 3.0, 4.0, 5.0, 6.0], dtype="float64"))
    np.testing.assert_array_equal(x.grad.asnumpy(), [0, 3, 4, 5, 0])


def test_straight_through_and_gradient_multiplier_gradients() -> None:
    x = nd.array([-1.4, 0.3, 2.6], dtype="float64")
    head = nd.array([1.0, 2.0, 3.0], dtype="float64")
    for op, want in (
        (nd.contrib.round_ste, [-1, 0, 3]),
        (nd.contrib.sign_ste, [-1, 1, 1]),
        (lambda a: nd.contrib.gradientmultiplier(a, scalar=-0.5), x.asnumpy()),
    ):
        x.attach_grad()
        with nv.autograd.record():
            y = op(x)
        y.backward(head)
        np.testing.assert_array_equal(y.asnumpy(), want)
    np.testing.assert_array_equal(x.grad.asnumpy(), [-0.5, -1.0, -1.5])  # the last one
    x.attach_grad()
    with nv.autograd.record():
        y = nd.contrib.round_ste(x)
    y.backward(head)
    np.testing.assert_array_equal(x.grad.asnumpy(), head.asnumpy())  # straight through


def test_step_functions_have_zero_gradients() -> None:
    for name in ("rint", "fix", "trunc", "logical_not", "_contrib_isnan", "_contrib_isfinite"):
        s = (getattr(sym._internal, name) if name.startswith("_") else getattr(sym, name))(
            sym.var("x")
        )
        exe = s.simple_bind(nv.cpu(), x=(2, 3))
        exe.forward(is_train=True, x=np.full((2, 3), 0.3))
        exe.backward(nd.ones((2, 3)))
        np.testing.assert_array_equal(exe.grad_dict["x"].asnumpy(), 0, err_msg=name)


def test_hard_sigmoid_matches_its_definition() -> None:
    x = np.array([-5.0, -2.5, 0.0, 1.0, 2.5, 5.0])
    got = nd.hard_sigmoid(nd.array(x, dtype="float64"), alpha=0.3, beta=0.4).asnumpy()
    np.testing.assert_allclose(got, np.maximum(0, np.minimum(1, 0.3 * x + 0.4)), rtol=1e-15)


# -- special functions against SciPy ---------------------------------------------------------


def test_erfinv_is_double_precision_up_to_one() -> None:
    tail = 1 - np.logspace(-16, -1, 200)
    y = np.concatenate([tail, -tail, np.linspace(-0.99, 0.99, 999), [np.nextafter(1.0, 0)]])
    got = nd.erfinv(nd.array(y, dtype="float64")).asnumpy()
    want = special.erfinv(y)
    np.testing.assert_allclose(got, want, rtol=1e-14, atol=1e-300)
    assert erfinv(0.3) == pytest.approx(special.erfinv(0.3), rel=1e-15)  # the device function


def test_digamma_and_the_gamma_gradients_match_scipy() -> None:
    x = np.concatenate([np.linspace(-4.7, 30, 700), [1e-6, 1e3, 1e8]])
    x = x[np.abs(x - np.round(x)) > 1e-2]  # digamma is ill-conditioned next to its poles
    got = np.array([digamma(v) for v in x])
    np.testing.assert_allclose(got, special.psi(x), rtol=1e-12, atol=1e-12)
    assert np.isnan(digamma(-2.0))
    assert np.isnan(digamma(0.0))
    xs = nd.array([0.3, 1.7, 4.2, -1.5], dtype="float64")
    for name, want in (
        ("gamma", special.gamma(xs.asnumpy()) * special.psi(xs.asnumpy())),
        ("gammaln", special.psi(xs.asnumpy())),
    ):
        xs.attach_grad()
        with nv.autograd.record():
            y = getattr(nd, name)(xs)
        y.backward()
        np.testing.assert_allclose(xs.grad.asnumpy(), want, rtol=1e-12, err_msg=name)


@pytest.mark.parametrize("name", ["erf", "erfinv", "gamma", "gammaln", "arcsinh", "cbrt"])
def test_float16_computes_in_float32_precision(name: str, ctx: nv.Context) -> None:
    x = np.array([0.1, 0.3, 0.45, 0.7, 0.9], dtype=np.float16)
    got = getattr(nd, name)(nd.array(x, dtype="float16", ctx=ctx))
    assert got.dtype == np.float16
    ref = {"erf": special.erf, "erfinv": special.erfinv, "gamma": special.gamma}
    ref |= {"gammaln": special.gammaln, "arcsinh": np.arcsinh, "cbrt": np.cbrt}
    want = ref[name](x.astype(np.float64)).astype(np.float16)  # one rounding, at the end
    np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-3, atol=1e-3)


# -- MXNet's calling conventions and bad input -------------------------------------------------


def test_parameters_may_follow_the_inputs_positionally() -> None:
    x = nd.array([-3.0, 0.5, 3.0])
    np.testing.assert_array_equal(nd.clip(x, -2, 2).asnumpy(), [-2, 0.5, 2])
    s = sym.clip(sym.var("x"), -1, 1)
    assert s.list_attr() == {"a_min": "-1", "a_max": "1"}
    with pytest.raises(TypeError, match=r"a_min.*both by position and keyword"):
        nd.clip(x, -2, 2, a_min=0)
    with pytest.raises(TypeError, match="clip"):
        nd.clip(x, -2, 2, 3)


def test_missing_and_bad_parameters_are_named_errors() -> None:
    x = nd.array([1.0, 2.0])
    with pytest.raises(ParamError, match=r"clip.*a_max"):
        nd.clip(x, a_min=0)
    with pytest.raises(ParamError, match=r"hard_sigmoid.*alpha"):
        nd.hard_sigmoid(x, alpha="steep")
    with pytest.raises(ParamError, match=r"_plus_scalar.*is_int"):
        nd._internal._plus_scalar(x, scalar=1, is_int="maybe")
    np.testing.assert_array_equal(nd.clip(x, 0, 1.5).asnumpy(), [1, 1.5])  # still works


def test_is_int_false_promotes_integer_arrays_to_float64_as_mxnet_1_9() -> None:
    x = nd.array([1, 2], dtype="int32")
    y = nd._internal._plus_scalar(x, scalar=2.5, is_int=False)
    assert y.dtype == np.float64
    np.testing.assert_array_equal(y.asnumpy(), [3.5, 4.5])
    assert nd._internal._plus_scalar(x, scalar=2.5).dtype == np.int32
