"""Convolution_v1, Pooling_v1 and BatchNorm_v1: MXNet's old parameter sets, names, results.

Forward values per parameter set are in cases_deconv.py's rows; here: the names and
shapes MXNet 1.9.1 gives (probed with .mxenv), the v1 average's divisor, BatchNorm_v1's
training statistics and gradients (MXNet's test_batchnorm_training, without the sparse
storage it also loops over), and the parameters the old ops reject.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy.base import ParamError
from nnvmpy.registry import Op
from nnvmpy.test_utils import check_numeric_gradient, check_symbolic_forward

sym = nv.sym


def still_works() -> None:
    y = nv.nd.Pooling_v1(nv.nd.ones((1, 1, 2, 2)), kernel=(2, 2), pool_type="sum")
    np.testing.assert_array_equal(y.asnumpy(), [[[[4.0]]]])


def test_names_and_shapes_follow_mxnet() -> None:
    data = sym.Variable("data")
    conv = sym.Convolution_v1(data, kernel=(3, 3, 3), num_filter=4, name="c")
    assert conv.list_arguments() == ["data", "c_weight", "c_bias"]
    assert conv.infer_shape(data=(2, 3, 5, 5, 5))[:2] == (
        [(2, 3, 5, 5, 5), (4, 3, 3, 3, 3), (4,)],
        [(2, 4, 3, 3, 3)],
    )
    pool = sym.Pooling_v1(
        data, kernel=(3, 3), stride=(2, 2), pad=(1, 1), pooling_convention="full", name="p"
    )
    assert pool.list_outputs() == ["p_output"]  # one output: no mask
    assert pool.infer_shape(data=(2, 3, 5, 5))[1] == [(2, 3, 3, 3)]
    assert sym.Pooling_v1(data, kernel=(3, 3), global_pool=True).infer_shape(data=(2, 3, 5, 5))[
        1
    ] == [(2, 3, 1, 1)]
    bn = sym.BatchNorm_v1(data, name="bn", output_mean_var=True)
    assert bn.list_arguments() == ["data", "bn_gamma", "bn_beta"]
    assert bn.list_outputs() == ["bn_output", "bn_mean", "bn_var"]
    assert bn.list_auxiliary_states() == ["bn_moving_mean", "bn_moving_var"]
    assert bn.infer_shape(data=(2, 3))[1:] == ([(2, 3), (3,), (3,)], [(3,), (3,)])
    assert sym.BatchNorm_v1(data, name="bn").list_outputs() == ["bn_output"]


def test_v1_average_divides_by_the_whole_kernel() -> None:
    """Unlike Pooling's, also where the window covers padding or runs past the input."""
    x = np.arange(25.0).reshape(1, 1, 5, 5)
    v1 = nv.nd.Pooling_v1(
        nv.nd.array(x), kernel=(2, 2), stride=(2, 2), pool_type="avg", pooling_convention="full"
    )
    # the last window of each row holds 2 (or 1) values and still divides by 4
    want = np.array([[12.0, 20.0, 13.0], [52.0, 60.0, 33.0], [41.0, 45.0, 24.0]]) / 4
    np.testing.assert_allclose(v1.asnumpy()[0, 0], want)
    new = nv.nd.Pooling(
        nv.nd.array(x), kernel=(2, 2), stride=(2, 2), pool_type="avg", pooling_convention="full"
    )
    assert new.asnumpy()[0, 0, 0, 2] == 13.0 / 2


def test_convolution_v1_matches_convolution_forward_and_backward() -> None:
    rng = np.random.default_rng(0)
    params: dict[str, Any] = {"kernel": (3, 3), "num_filter": 4, "pad": (1, 1), "num_group": 2}
    inputs = {
        "x": rng.standard_normal((2, 4, 5, 5)),
        "w": rng.standard_normal((4, 2, 3, 3)),
        "b": rng.standard_normal(4),
    }
    dy = rng.standard_normal((2, 4, 5, 5))
    results = []
    for op in (sym.Convolution, sym.Convolution_v1):
        s = op(*(sym.Variable(n) for n in inputs), **params)
        exe = s.simple_bind(
            nv.cpu(),
            type_dict=dict.fromkeys(inputs, "float64"),
            **{k: v.shape for k, v in inputs.items()},
        )
        y = exe.forward(is_train=True, **inputs)[0].asnumpy()
        exe.backward(nv.nd.array(dy, dtype="float64"))
        results.append([y, *(exe.grad_dict[n].asnumpy() for n in inputs)])
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def _bn_inputs(shape: tuple[int, ...], rng: np.random.Generator) -> tuple[list, list]:
    c = shape[1]
    gamma, beta = np.ones(c), np.ones(c)
    gamma[1] = 3
    beta[0] = 3
    data = [rng.normal(-0.1, 0.1, size=shape), gamma, beta]
    return data, [rng.uniform(size=c), rng.uniform(size=c)]


@pytest.mark.parametrize("shape", [(2, 3), (2, 3, 2, 2), (2, 8, 2, 2)])
@pytest.mark.parametrize("fix_gamma", [True, False])
@pytest.mark.parametrize("use_global_stats", [False, True])
def test_batchnorm_v1_gradients_match_finite_differences(
    shape: tuple[int, ...], fix_gamma: bool, use_global_stats: bool
) -> None:
    """MXNet's test_batchnorm_training for the _v1 op (default storage)."""
    rng = np.random.default_rng(1)
    location, aux = _bn_inputs(shape, rng)
    s = sym.BatchNorm_v1(
        sym.Variable("data"), fix_gamma=fix_gamma, use_global_stats=use_global_stats
    )
    check_numeric_gradient(s, location, aux, numeric_eps=1e-2, rtol=0.16, atol=1e-2)


def test_batchnorm_v1_training_statistics_and_moving_averages() -> None:
    rng = np.random.default_rng(2)
    x = rng.standard_normal((4, 3, 2, 2))
    bn = sym.BatchNorm_v1(
        sym.Variable("data"), name="bn", output_mean_var=True, momentum=0.8, eps=1e-3
    )
    exe = bn.simple_bind(nv.cpu(), type_dict={"data": "float64"}, data=x.shape)
    exe.arg_dict["bn_gamma"][:] = 2.0
    exe.arg_dict["bn_beta"][:] = 0.5
    exe.aux_dict["bn_moving_var"][:] = 1.0
    out, mean, var = (o.asnumpy() for o in exe.forward(is_train=True, data=x))
    want_mean, want_var = x.mean(axis=(0, 2, 3)), x.var(axis=(0, 2, 3))  # biased variance
    np.testing.assert_allclose(mean, want_mean, rtol=1e-10)
    np.testing.assert_allclose(var, want_var, rtol=1e-10)
    c = (1, -1, 1, 1)
    xhat = (x - want_mean.reshape(c)) / np.sqrt(want_var.reshape(c) + 1e-3)
    np.testing.assert_allclose(out, xhat + 0.5, rtol=1e-10, atol=1e-12)  # fix_gamma: gamma = 1
    np.testing.assert_allclose(
        exe.aux_dict["bn_moving_mean"].asnumpy(), 0.2 * want_mean, rtol=1e-10
    )
    np.testing.assert_allclose(
        exe.aux_dict["bn_moving_var"].asnumpy(), 0.8 + 0.2 * want_var, rtol=1e-10
    )
    # inference uses (and outputs) the moving statistics
    moving_mean = exe.aux_dict["bn_moving_mean"].asnumpy()
    moving_var = exe.aux_dict["bn_moving_var"].asnumpy()
    check_symbolic_forward(
        bn,
        {"data": x, "bn_gamma": np.full(3, 2.0), "bn_beta": np.full(3, 0.5)},
        [
            (x - moving_mean.reshape(c)) / np.sqrt(moving_var.reshape(c) + 1e-3) + 0.5,
            moving_mean,
            moving_var,
        ],
        aux_states={"bn_moving_mean": moving_mean, "bn_moving_var": moving_var},
        dtype=np.float64,
    )


@pytest.mark.parametrize(
    ("op", "params", "pattern"),
    [
        (
            "Convolution_v1",
            {"kernel": (3,), "num_filter": 2},
            r"Convolution_v1.*'kernel'.*2 or 3 dim",
        ),
        ("Convolution_v1", {"kernel": (3, 3), "num_filter": 2, "layout": "NCW"}, r"'layout'"),
        (
            "Convolution_v1",
            {"kernel": (3, 3), "num_filter": 3, "num_group": 2},
            r"'num_filter' \(3\)",
        ),
        ("Pooling_v1", {"kernel": (3,)}, r"Pooling_v1.*'kernel'.*2 or 3 dim"),
        ("Pooling_v1", {"kernel": (3, 3), "pool_type": "lp"}, r"Pooling_v1.*'pool_type'"),
        ("Pooling_v1", {"kernel": (3, 3), "pooling_convention": "same"}, r"'pooling_convention'"),
        ("Pooling_v1", {"pool_type": "avg"}, r"Pooling_v1.*'kernel' is required"),
        ("BatchNorm_v1", {"axis": 1}, r"BatchNorm_v1.*unknown parameter 'axis'"),
    ],
)
def test_old_parameter_sets_reject_what_mxnet_rejects(
    op: str, params: dict[str, Any], pattern: str
) -> None:
    with pytest.raises(ParamError, match=pattern):
        Op.get(op).parse_attrs(params)
    still_works()
