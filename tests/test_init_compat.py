"""Default initializers that operators attach to their parameter variables on composition
(MXNet's FSetInputVarAttrOnCompose): prelu's gamma starts at 0.25, BatchNorm's moving
statistics at 0/1, for auto-created variables and for given ones without an `__init__`."""

from __future__ import annotations

import json

import numpy as np

import nnvmpy as nv


def _init_params(sym: nv.sym.Symbol, shape: tuple[int, ...]) -> tuple[dict, dict]:
    mod = nv.mod.Module(sym, label_names=None)
    mod.bind(data_shapes=[("data", shape)])
    mod.init_params()
    return mod.get_params()


def test_prelu_gamma_defaults_to_a_quarter() -> None:
    data = nv.sym.Variable("data")
    sym = nv.sym.LeakyReLU(data=data, act_type="prelu", name="act")
    spec = json.loads(sym.attr_dict()["act_gamma"]["__init__"])
    assert spec == ["Constant", {"value": 0.25}]
    args, _ = _init_params(sym, (10, 10))
    np.testing.assert_array_equal(args["act_gamma"].asnumpy(), np.full(10, 0.25, np.float32))
    # the other activations have no gamma input
    assert nv.sym.LeakyReLU(data=data, act_type="leaky").list_arguments() == ["data"]


def test_given_variables_get_the_default_unless_they_name_one() -> None:
    data = nv.sym.Variable("data")
    plain = nv.sym.Variable("g")
    nv.sym.LeakyReLU(data=data, gamma=plain, act_type="prelu")
    assert json.loads(plain.attr_dict()["g"]["__init__"]) == ["Constant", {"value": 0.25}]

    own = nv.sym.Variable("gamma", init=nv.init.One())
    sym = nv.sym.LeakyReLU(data=data, gamma=own, act_type="prelu")
    assert sym.attr_dict()["gamma"]["__init__"] == nv.init.One().dumps()
    args, _ = _init_params(sym, (10, 10))
    np.testing.assert_array_equal(args["gamma"].asnumpy(), np.ones(10, np.float32))

    mean = nv.sym.Variable("mm")
    bn = nv.sym.BatchNorm(data=data, moving_mean=mean, name="bn")
    attrs = bn.attr_dict()
    assert attrs["mm"]["__init__"] == '["zero", {}]'
    assert attrs["bn_moving_var"]["__init__"] == '["one", {}]'
    _, aux = _init_params(bn, (4, 3, 2, 2))
    np.testing.assert_array_equal(aux["mm"].asnumpy(), np.zeros(3, np.float32))
    np.testing.assert_array_equal(aux["bn_moving_var"].asnumpy(), np.ones(3, np.float32))
