"""nv.init: each initializer's values against its formula (SciPy statistics for the random ones).

References: Xavier's bound/std sqrt(magnitude / factor) from fan_in and fan_out computed
here, Orthogonal's W W^T = scale^2 I, the bilinear kernel from its textbook formula, and
MXNet's name rules (bias 0, gamma 1, moving_var 1, ...).
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from scipy import stats

import nnvmpy as nv
from nnvmpy import training
from nnvmpy.initializer import InitDesc
from nnvmpy.initializer import base as init_base

init = nv.init


def filled(initializer_: Any, name: str, shape: tuple[int, ...], **attrs: str) -> np.ndarray:
    arr = nv.nd.zeros(shape)
    initializer_(InitDesc(name, attrs), arr)
    return arr.asnumpy()


# -- random initializers -------------------------------------------------------------------------


def test_uniform_fills_u_minus_scale_scale() -> None:
    nv.random.seed(0)
    w = filled(init.Uniform(0.3), "fc_weight", (100, 50)).reshape(-1)
    assert w.min() >= -0.3
    assert w.max() <= 0.3
    assert stats.kstest(w, "uniform", args=(-0.3, 0.6)).pvalue > 1e-3


def test_normal_fills_n_0_sigma() -> None:
    nv.random.seed(1)
    w = filled(init.Normal(0.2), "fc_weight", (100, 50)).reshape(-1)
    assert stats.kstest(w, "norm", args=(0.0, 0.2)).pvalue > 1e-3


@pytest.mark.parametrize(
    ("factor_type", "factor"),
    [("avg", (288 + 576) / 2), ("in", 288), ("out", 576)],  # (64, 32, 3, 3): 32*9 in, 64*9 out
)
def test_xavier_uniform_scale_comes_from_fan_in_and_fan_out(
    factor_type: str, factor: float
) -> None:
    nv.random.seed(2)
    shape = (64, 32, 3, 3)
    bound = math.sqrt(3.0 / factor)
    xavier = init.Xavier(factor_type=factor_type)
    assert xavier.scale_for("w", shape) == pytest.approx(bound)
    w = filled(xavier, "conv_weight", shape).reshape(-1)
    assert np.abs(w).max() <= bound
    assert np.abs(w).max() > 0.99 * bound  # the whole range is used
    assert stats.kstest(w, "uniform", args=(-bound, 2 * bound)).pvalue > 1e-3


def test_xavier_gaussian_and_msra_prelu_standard_deviations() -> None:
    nv.random.seed(3)
    shape = (200, 100)  # fan_in 100, fan_out 200
    w = filled(init.Xavier("gaussian", "in", magnitude=2.0), "fc_weight", shape).reshape(-1)
    assert stats.kstest(w, "norm", args=(0.0, math.sqrt(2.0 / 100))).pvalue > 1e-3
    slope = 0.25
    msra = filled(init.MSRAPrelu("out", slope), "fc_weight", shape).reshape(-1)
    std = math.sqrt(2.0 / (1 + slope**2) / 200)
    assert stats.kstest(msra, "norm", args=(0.0, std)).pvalue > 1e-3


@pytest.mark.parametrize(
    ("shape", "rand_type"), [((4, 6), "uniform"), ((6, 4), "normal"), ((8, 2, 3, 3), "uniform")]
)
def test_orthogonal_rows_or_columns_are_orthonormal(shape: tuple[int, ...], rand_type: str) -> None:
    nv.random.seed(4)
    w = filled(init.Orthogonal(scale=1.5, rand_type=rand_type), "fc_weight", shape)
    m = w.reshape(shape[0], -1).astype(np.float64)
    gram = m @ m.T if m.shape[0] <= m.shape[1] else m.T @ m
    np.testing.assert_allclose(gram, 1.5**2 * np.eye(gram.shape[0]), atol=1e-5)


def test_a_seed_reproduces_random_initializers() -> None:
    draws = []
    for seed in (7, 7, 8):
        nv.random.seed(seed)
        draws.append(filled(init.Xavier(), "fc_weight", (20, 10)))
    np.testing.assert_array_equal(draws[0], draws[1])
    assert not np.array_equal(draws[0], draws[2])


# -- deterministic initializers ------------------------------------------------------------------


def bilinear_reference(shape: tuple[int, int, int, int]) -> np.ndarray:
    """FCN's upsampling filter, element by element."""
    kh, kw = shape[2], shape[3]
    f = math.ceil(kw / 2)
    c = (2 * f - 1 - f % 2) / (2 * f)
    plane = np.zeros((kh, kw))
    for y in range(kh):
        for x in range(kw):
            plane[y, x] = (1 - abs(x / f - c)) * (1 - abs(y / f - c))
    return np.broadcast_to(plane, shape)


@pytest.mark.parametrize("shape", [(1, 1, 4, 4), (2, 3, 5, 5), (1, 2, 3, 4)])
def test_bilinear_is_the_upsampling_filter(shape: tuple[int, int, int, int]) -> None:
    w = filled(init.Bilinear(), "up_weight", shape)
    np.testing.assert_allclose(w, bilinear_reference(shape), rtol=1e-6)


def test_bilinear_4x4_is_mxnets_documented_kernel() -> None:
    arr = nv.nd.empty((1, 1, 4, 4))
    init.Bilinear()._init_weight(None, arr)  # MXNet's test_bilinear_init calls it so
    one_d = np.array([[0.25, 0.75, 0.75, 0.25]])
    np.testing.assert_array_equal(arr.asnumpy()[0, 0], one_d * one_d.T)


def test_constant_one_zero_and_lstm_bias() -> None:
    assert (filled(init.Constant(2.5), "w_weight", (2, 3)) == 2.5).all()
    row = np.array([1.0, 2.0, 3.0])
    np.testing.assert_array_equal(filled(init.Constant(row), "w_weight", (2, 3)), [row, row])
    np.testing.assert_array_equal(
        filled(init.Constant(nv.nd.array(row)), "w_weight", (1, 3)), [row]
    )
    assert (filled(init.One(), "w_weight", (2, 2)) == 1).all()
    assert (filled(init.Zero(), "w_weight", (2, 2)) == 0).all()
    # LSTMBias is a variable's own initializer: a bias name alone would give zeros
    lstm = init.LSTMBias(forget_bias=1.5).dumps()
    bias = filled(init.Uniform(), "lstm_i2h_bias", (12,), __init__=lstm)
    np.testing.assert_array_equal(bias, [0] * 3 + [1.5] * 3 + [0] * 6)


# -- name rules and the __init__ attribute -------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("fc1_bias", 0.0),
        ("bn_gamma", 1.0),
        ("bn_beta", 0.0),
        ("bn_moving_mean", 0.0),
        ("bn_moving_var", 1.0),
        ("bn_moving_inv_var", 0.0),
        ("bn_moving_avg", 0.0),
        ("data_min", 0.0),
        ("data_max", 1.0),
    ],
)
def test_names_pick_mxnets_default_values(name: str, value: float) -> None:
    assert (filled(init.Uniform(5.0), name, (3, 4)) == value).all()


def test_weight_names_get_the_initializers_own_rule_and_others_are_errors() -> None:
    assert (filled(init.Constant(3.0), "fc1_weight", (2, 2)) == 3).all()
    with pytest.raises(nv.ParamError, match="Uniform: unknown initialization pattern for 'data'"):
        filled(init.Uniform(), "data", (2, 2))
    assert (filled(init.One(), "x_weight", (2,)) == 1).all()  # still works afterwards


def test_plain_string_names_follow_mxnets_legacy_rules() -> None:
    arr = nv.nd.zeros((1, 1, 4, 4))
    init.Uniform()("upsampling0_weight", arr)
    np.testing.assert_allclose(arr.asnumpy(), bilinear_reference((1, 1, 4, 4)), rtol=1e-6)
    loc = nv.nd.zeros((6,))
    init.Uniform()("stn_loc_bias", loc)
    np.testing.assert_array_equal(loc.asnumpy(), [1, 0, 0, 0, 1, 0])
    moving = nv.nd.zeros((3,))
    init.Uniform()("bn_moving_var", moving)
    assert (moving.asnumpy() == 1).all()


def test_init_attribute_overrides_the_name_rule() -> None:
    # a bias would be 0; the variable's own initializer (sym.Variable(init=...)) wins
    value = filled(init.Uniform(), "fc_bias", (4,), __init__=init.Constant(3.0).dumps())
    assert (value == 3).all()
    named = filled(init.Uniform(), "gate", (2,), __init__='["one", {}]')
    assert (named == 1).all()


def test_bad_init_attribute_is_a_named_error() -> None:
    with pytest.raises(nv.NNVMError, match=r"'__init__' attribute of 'fc_bias'.*invalid JSON"):
        filled(init.Uniform(), "fc_bias", (2,), __init__='["constant", {')
    with pytest.raises(
        nv.NNVMError, match=r"unknown initializer 'xavire'; did you mean \['xavier'\]"
    ):
        filled(init.Uniform(), "fc_bias", (2,), __init__='["xavire", {}]')
    with pytest.raises(nv.NNVMError, match="is not of the form"):
        filled(init.Uniform(), "fc_bias", (2,), __init__="[1, 2, 3]")
    assert (filled(init.Uniform(), "fc_bias", (2,)) == 0).all()


def test_global_init_is_recorded_on_the_descriptor() -> None:
    desc = InitDesc("w_weight")
    xavier = init.Xavier()
    xavier(desc, nv.nd.zeros((3, 3)))
    assert desc.global_init is xavier
    assert isinstance(desc, str)
    assert desc == "w_weight"


# -- dumps, create, register ---------------------------------------------------------------------


def test_dumps_is_mxnets_json_and_create_reads_it_back() -> None:
    assert init.Normal(0.5).dumps() == '["normal", {"sigma": 0.5}]'
    assert init.Xavier(factor_type="in", magnitude=2.34).dumps() == (
        '["xavier", {"rnd_type": "uniform", "factor_type": "in", "magnitude": 2.34}]'
    )
    assert json.loads(init.MSRAPrelu().dumps()) == [
        "msraprelu",
        {"factor_type": "avg", "slope": 0.25},
    ]
    for original in (
        init.Uniform(0.2),
        init.Normal(0.3),
        init.Xavier("gaussian", "out", 2),
        init.MSRAPrelu("in", 0.1),
        init.Orthogonal(2.0, "normal"),
        init.Constant(1.5),
        init.One(),
        init.Zero(),
        init.Bilinear(),
        init.LSTMBias(2.0),
    ):
        again = init.create(original.dumps())
        assert type(again) is type(original)
        assert again.dumps() == original.dumps()
    assert init.create(init.Constant([1, 2]).dumps()).value == [1, 2]


def test_create_takes_names_aliases_instances_and_dicts() -> None:
    assert isinstance(init.create("Xavier", magnitude=2), init.Xavier)
    assert isinstance(init.create("zeros"), init.Zero)
    assert isinstance(init.create("ones"), init.One)
    xavier = init.Xavier()
    assert init.create(xavier) is xavier
    assert isinstance(init.create({"initializer": "normal", "sigma": 0.1}), init.Normal)
    assert nv.initializer.create is init.create  # nv.init is nv.initializer's short name


@pytest.fixture
def scoped_initializers() -> Iterator[None]:
    saved = dict(init_base._REGISTRY)
    yield
    init_base._REGISTRY.clear()
    init_base._REGISTRY.update(saved)


def test_register_and_alias_a_custom_initializer(scoped_initializers: None) -> None:
    @init.register
    @init.alias("tenths")
    class TenthInit(init.Initializer):
        def __init__(self) -> None:
            super().__init__()

        def _init_weight(self, _: str, arr: Any) -> None:
            arr[:] = 0.1

        def _init_bias(self, _: str, arr: Any) -> None:
            arr[:] = 1

    for name in ("tenthinit", "tenths"):
        custom = init.create(name)
        assert np.allclose(filled(custom, "fc_weight", (2,)), 0.1)
        assert (filled(custom, "fc_bias", (2,)) == 1).all()
    with pytest.raises(nv.NNVMError, match="expects an Initializer subclass"):
        init.register(dict)


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: init.Xavier(rnd_type="laplace"), r"Xavier: rnd_type expects one of \['uniform'"),
        (lambda: init.Xavier(factor_type="sum"), "Xavier: factor_type expects one of"),
        (lambda: init.Xavier(magnitude=-1), "Xavier: magnitude must be > 0, got -1"),
        (lambda: init.Uniform(0), "Uniform: scale must be > 0, got 0"),
        (lambda: init.Normal("a"), "Normal: sigma expects a number, got 'a'"),
        (lambda: init.Orthogonal(rand_type="x"), "Orthogonal: rand_type expects one of"),
        (lambda: init.create("nope"), "initializer.create: unknown initializer 'nope'"),
        (lambda: init.create(3), "expects a name, JSON string or Initializer, got 3"),
        (lambda: init.create(init.One(), 2), "an instance takes no further arguments"),
    ],
)
def test_bad_initializer_arguments_are_named_errors(make: Any, message: str) -> None:
    with pytest.raises(nv.NNVMError, match=message):
        make()


def test_shape_errors_name_the_array_and_leave_it_usable() -> None:
    arr = nv.nd.zeros((5,))
    with pytest.raises(
        nv.ParamError, match=r"Xavier: cannot initialize 'fc_weight' of shape \(5,\)"
    ):
        init.Xavier()(InitDesc("fc_weight"), arr)
    with pytest.raises(nv.ParamError, match="LSTMBias: 'b_weight' needs a first dimension"):
        init.LSTMBias()(InitDesc("b_weight"), arr)
    with pytest.raises(nv.ParamError, match="Bilinear: needs a 4-D"):
        init.Bilinear()(InitDesc("u_weight"), arr)
    with pytest.raises(nv.NNVMError, match="'w_weight' must be an NDArray, got ndarray"):
        init.One()(InitDesc("w_weight"), np.zeros(2))
    init.One()(InitDesc("w_weight"), arr)
    assert (arr.asnumpy() == 1).all()


# -- Load, Mixed ---------------------------------------------------------------------------------


def test_load_takes_values_by_name_and_drops_arg_aux_prefixes() -> None:
    saved = {"arg:fc_weight": nv.nd.array([[1.0, 2.0]]), "aux:bn_moving_mean": np.array([3.0])}
    load = init.Load(saved, default_init=init.Constant(9.0))
    w, m, other = nv.nd.zeros((1, 2)), nv.nd.zeros((1,)), nv.nd.zeros((2, 2))
    load(InitDesc("fc_weight"), w)
    load("bn_moving_mean", m)
    load(InitDesc("fc2_weight"), other)  # not saved: the default initializer
    np.testing.assert_array_equal(w.asnumpy(), [[1.0, 2.0]])
    np.testing.assert_array_equal(m.asnumpy(), [3.0])
    assert (other.asnumpy() == 9).all()


def test_load_errors_are_named_assertion_errors_as_mxnets() -> None:
    # MXNet 1.9.1 asserts these (AssertionError); nnvmpy's are NNVMErrors as well
    load = init.Load({"fc_weight": nv.nd.zeros((2, 2))})
    cases = [
        (lambda: load("fc_weight", nv.nd.zeros((3,))), r"Load: 'fc_weight' has shape \(3,\) but"),
        (lambda: load("x", nv.nd.zeros((3,))), "Load: 'x' is not in the loaded parameters"),
        (lambda: init.Load(3), "Load: param expects a file name or a dict"),
    ]
    for call, match in cases:
        with pytest.raises(AssertionError, match=match) as info:
            call()
        assert isinstance(info.value, nv.NNVMError)


@pytest.mark.skipif(not hasattr(nv.nd, "save"), reason="nd.save is not there yet")
def test_load_reads_a_saved_parameter_file(tmp_path: Any) -> None:
    path = str(tmp_path / "p.params")
    nv.nd.save(path, {"arg:w_weight": nv.nd.array([[4.0, 5.0]])})
    arr = nv.nd.zeros((1, 2))
    init.Load(path)("w_weight", arr)
    np.testing.assert_array_equal(arr.asnumpy(), [[4.0, 5.0]])


def test_mixed_uses_the_first_matching_pattern() -> None:
    mixed = init.Mixed(["fc1", ".*"], [init.Constant(7.0), init.One()])
    assert (filled(mixed, "fc1_weight", (2,)) == 7).all()
    assert (filled(mixed, "fc2_weight", (2,)) == 1).all()
    assert (filled(mixed, "fc1_bias", (2,)) == 0).all()  # the chosen one still applies name rules
    # MXNet 1.9.1 raises ValueError for no match and asserts equal list lengths
    with pytest.raises(ValueError, match=r"Mixed: parameter 'fc_weight' matches none") as info:
        filled(init.Mixed(["bias"], [init.Zero()]), "fc_weight", (2,))
    assert isinstance(info.value, nv.NNVMError)
    with pytest.raises(AssertionError, match="Mixed: 1 patterns but 2 initializers") as info2:
        init.Mixed(["a"], [init.Zero(), init.One()])
    assert isinstance(info2.value, nv.NNVMError)


# -- users -------------------------------------------------------------------------------------


def test_init_params_fills_every_array_by_its_name() -> None:
    arrays = {n: nv.nd.zeros((3, 4)) for n in ("fc_weight", "fc_bias", "bn_gamma")}
    arrays["own"] = nv.nd.zeros((2,))
    init.init_params(init.Xavier(), arrays, {"own": {"__init__": init.Constant(5.0).dumps()}})
    bound = math.sqrt(3.0 / 3.5)
    w = arrays["fc_weight"].asnumpy()
    assert 0 < np.abs(w).max() <= bound
    assert (arrays["fc_bias"].asnumpy() == 0).all()
    assert (arrays["bn_gamma"].asnumpy() == 1).all()
    assert (arrays["own"].asnumpy() == 5).all()


def test_trainer_starts_from_xavier_weights_and_zero_biases() -> None:
    trainer = training.Trainer(training.mlp_symbol((16,), classes=3), (4, 8), seed=11)
    params = trainer.exe.arg_dict
    assert np.abs(params["fc1_weight"].asnumpy()).max() <= math.sqrt(6.0 / (8 + 16))
    assert np.abs(params["fc2_weight"].asnumpy()).max() <= math.sqrt(6.0 / (16 + 3))
    assert (params["fc1_bias"].asnumpy() == 0).all()
    again = training.Trainer(training.mlp_symbol((16,), classes=3), (4, 8), seed=11)
    np.testing.assert_array_equal(
        params["fc1_weight"].asnumpy(), again.exe.arg_dict["fc1_weight"].asnumpy()
    )
    ones = training.Trainer(training.mlp_symbol((16,), classes=3), (4, 8), initializer="one")
    assert (ones.exe.arg_dict["fc2_weight"].asnumpy() == 1).all()


def test_verbose_initializers_log_a_statistic(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO):
        filled(init.One().set_verbosity(True), "fc_weight", (4,))
    assert "Initialized fc_weight as weight: 1.0" in caplog.text


@pytest.mark.gpu
def test_initializers_fill_gpu_arrays() -> None:
    nv.random.seed(0)
    w = nv.nd.zeros((8, 4), ctx=nv.gpu(0))
    init.Xavier()(InitDesc("fc_weight"), w)
    assert w.context == nv.gpu(0)
    values = np.abs(w.asnumpy())
    assert 0 < values.max() <= math.sqrt(3.0 / 6.0)  # fan_in 4, fan_out 8
    up = nv.nd.zeros((1, 2, 4, 4), ctx=nv.gpu(0))
    init.Bilinear()(InitDesc("up_weight"), up)
    np.testing.assert_allclose(up.asnumpy(), bilinear_reference((1, 2, 4, 4)), rtol=1e-6)
    gamma = nv.nd.zeros((3,), ctx=nv.gpu(0))
    init.Xavier()(InitDesc("bn_gamma"), gamma)
    assert (gamma.asnumpy() == 1).all()


def test_fused_rnn_is_found_by_name_before_nnvmpy_rnn_is_imported() -> None:
    """A loaded symbol's '__init__' may name 'fusedrnn' in a process that never imported
    nv.rnn; nv.init.FusedRNN is MXNet's spelling."""
    import subprocess
    import sys

    code = (
        "import sys, nnvmpy as nv\n"
        "assert 'nnvmpy.rnn' not in sys.modules\n"
        'i = nv.init.create(\'["fusedrnn", {"init": null, "num_hidden": 4, '
        '"num_layers": 1, "mode": "lstm"}]\')\n'
        "assert isinstance(i, nv.init.FusedRNN)\n"
        "assert nv.initializer.FusedRNN is nv.init.FusedRNN\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
