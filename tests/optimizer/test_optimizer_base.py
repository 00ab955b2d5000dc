"""The Optimizer base class: registry, learning rate and schedules, lr/wd multipliers
(by index, by name, from symbol attributes), update counts, pickling."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy.optimizer import Optimizer


def test_create_is_case_insensitive_and_unknown_names_are_named() -> None:
    assert type(nv.optimizer.create("SgD", momentum=0.9)) is nv.optimizer.SGD
    for name in ("sgd", "nag", "adam", "rmsprop", "ftrl", "signum", "lamb", "ftml", "ccsgd"):
        assert name in Optimizer.opt_registry
    with pytest.raises(nv.ParamError, match=r"Cannot find optimizer 'adamw'.*'adam'"):
        nv.optimizer.create("adamw")


def test_register_adds_a_subclass_and_warns_on_override() -> None:
    @nv.optimizer.register
    class PlainStep(Optimizer):  # weight -= lr * grad
        def update(self, index, weight, grad, state):
            self._update_count(index)
            weight[:] = weight - self._get_lr(index) * grad

    try:
        opt = nv.optimizer.create("plainstep", learning_rate=0.5)
        w = nv.nd.array([1.0, 2.0])
        nv.optimizer.get_updater(opt)(0, nv.nd.array([2.0, 2.0]), w)
        np.testing.assert_allclose(w.asnumpy(), [0.0, 1.0])
        with pytest.warns(UserWarning, match="overriding existing optimizer"):
            nv.optimizer.register(type("PlainStep", (Optimizer,), {}))
    finally:
        Optimizer.opt_registry.pop("plainstep", None)
    with pytest.raises(nv.ParamError, match="Optimizer subclass"):
        nv.optimizer.register(int)


def test_learning_rate_from_a_scheduler_and_set_learning_rate() -> None:
    sched = nv.lr_scheduler.FactorScheduler(step=2, factor=0.5)
    opt = nv.optimizer.SGD(learning_rate=0.8, lr_scheduler=sched)
    assert sched.base_lr == 0.8  # the optimizer's learning_rate is the schedule's base
    lrs = []
    for _ in range(6):
        opt._update_count(0)
        lrs.append(opt._get_lr(0))
    assert lrs == [0.8, 0.8, 0.4, 0.4, 0.2, 0.2]
    assert opt.learning_rate == 0.2
    with pytest.raises(UserWarning, match="LRScheduler"):
        opt.set_learning_rate(0.1)
    plain = nv.optimizer.SGD(learning_rate=0.3)
    plain.set_learning_rate(0.1)
    assert plain.learning_rate == 0.1


def test_multipliers_by_index_and_by_name() -> None:
    names = {0: "fc_weight", 1: "fc_bias", 2: "bn_gamma", 3: "bn_beta"}
    opt = nv.optimizer.SGD(learning_rate=1.0, wd=0.1, param_idx2name=names)
    # named parameters other than *_weight / *_gamma get no weight decay
    assert opt._get_wds([0, 1, 2, 3]) == [0.1, 0.0, 0.1, 0.0]
    opt.set_lr_mult({"fc_bias": 2.0, 3: 0.5})
    assert opt._get_lrs([0, 1, 2, 3]) == [1.0, 2.0, 1.0, 0.5]
    opt.set_wd_mult({"fc_bias": 1.0})
    assert opt._get_wds([0, 1]) == [0.1, 0.1]
    assert opt._get_lr(7) == 1.0  # an unknown index gets no multiplier


def test_symbol_attributes_set_the_default_multipliers() -> None:
    data = nv.sym.Variable("data")
    w = nv.sym.Variable("fc_weight", lr_mult=0.1, wd_mult=3.0)
    b = nv.sym.Variable("fc_bias", lr_mult=2.0)
    net = nv.sym.FullyConnected(data, weight=w, bias=b, num_hidden=4, name="fc")
    names = dict(enumerate(net.list_arguments()))  # data, fc_weight, fc_bias
    opt = nv.optimizer.SGD(learning_rate=1.0, wd=0.5, sym=net, param_idx2name=names)
    assert opt.lr_mult == {"fc_weight": 0.1, "fc_bias": 2.0}
    assert opt._get_lrs([0, 1, 2]) == [1.0, 0.1, 2.0]
    assert opt._get_wds([1, 2]) == [1.5, 0.0]
    opt.set_lr_mult({"fc_weight": 1.0})  # explicit values win over the attributes
    assert opt._get_lr(1) == 1.0


def test_param_dict_multipliers_win() -> None:
    class P:
        lr_mult, wd_mult = 0.25, 4.0

    opt = nv.optimizer.SGD(learning_rate=2.0, wd=0.1, param_dict={5: P()})
    assert opt._get_lr(5) == 0.5
    assert opt._get_wd(5) == pytest.approx(0.4)
    clone = pickle.loads(pickle.dumps(opt))
    assert clone.param_dict == {}
    assert clone._get_lr(5) == 2.0


def test_update_counts_are_per_index_and_per_device() -> None:
    opt = nv.optimizer.Adam(begin_num_update=10)
    opt._update_count([0, 1])
    opt._update_count(0)
    assert opt._index_update_count == {0: 12, 1: 11}
    assert opt.num_update == 12
    opt._set_current_context(1)
    opt._update_count(0)
    assert opt._index_update_count == {0: 11}
    opt._set_current_context(0)
    assert opt._index_update_count[0] == 12


def test_bad_constructor_arguments_are_named() -> None:
    with pytest.raises(nv.ParamError, match=r"SGD: param_idx2name must be a dict"):
        nv.optimizer.SGD(param_idx2name=["w"])
    with pytest.raises(DeprecationWarning):
        nv.optimizer.SGD().set_lr_scale({})
