"""nv.name (NameManager, Prefix) and nv.AttrScope: default names and scoped attributes."""

from __future__ import annotations

import threading

import pytest

import nnvmpy as nv

sym = nv.sym


def test_name_manager_counts_per_hint_and_restarts_in_a_new_scope() -> None:
    with nv.name.NameManager():
        x = sym.var("x")
        assert [sym.relu(x).name, sym.relu(x).name, sym.sigmoid(x).name] == [
            "relu0",
            "relu1",
            "sigmoid0",
        ]
        assert sym.FullyConnected(x, num_hidden=2).name == "fullyconnected0"
        with nv.name.NameManager():
            assert sym.relu(x).name == "relu0"
        assert sym.relu(x).name == "relu2"  # the outer manager again
        assert sym.relu(x, name="given").name == "given"


def test_sub_namespace_ops_are_named_by_their_short_name_as_mxnet() -> None:
    """MXNet names a node of sym.contrib / linalg / random's generated functions after the
    name without its prefix (box_nms0, gemm20, uniform_like0); the hand-written samplers
    keep the op's full name (_random_uniform0), as MXNet's Python wrappers do."""
    with nv.name.NameManager():
        x = sym.var("x")
        assert sym.contrib.box_nms(x).name == "box_nms0"
        assert sym.contrib.BilinearResize2D(x, height=2, width=2).name == "bilinearresize2d0"
        assert sym.linalg.gemm2(x, x).name == "gemm20"
        assert sym.random.uniform_like(x).name == "uniform_like0"
        assert sym.random.uniform().name == "_random_uniform0"
        assert sym.contrib.box_nms(x, name="given").name == "given"


def test_name_manager_current_is_a_settable_class_property() -> None:
    outer = nv.name.NameManager.current
    with nv.name.NameManager() as inner:
        assert nv.name.NameManager.current is inner
    assert nv.name.NameManager.current is outer
    manager = nv.name.NameManager()
    nv.name.NameManager.current = manager
    try:
        assert manager.get(None, "op") == "op0"
        assert manager.get("mine", "op") == "mine"
        assert manager.get(None, "op") == "op1"
    finally:
        nv.name.NameManager.current = outer


def test_prefix_applies_to_given_and_generated_names() -> None:
    with nv.name.Prefix("net_"):
        x = sym.var("x")  # variables keep their names
        y = sym.relu(x)
        z = sym.FullyConnected(y, num_hidden=3, name="fc")
        assert nv.name.NameManager.current.get(None, "a") == "net_a0"
    assert x.name == "x"
    assert y.name == "net_relu0"
    assert z.list_arguments() == ["x", "net_fc_weight", "net_fc_bias"]


def test_name_managers_are_per_thread() -> None:
    seen: dict[str, object] = {}

    def worker() -> None:
        seen["manager"] = nv.name.NameManager.current
        seen["name"] = sym.relu(sym.var("x")).name

    with nv.name.NameManager() as mine:
        sym.relu(sym.var("x"))
        t = threading.Thread(target=worker)
        t.start()
        t.join()
        assert seen["manager"] is not mine
        assert nv.name.NameManager.current is mine
    assert seen["name"] == "relu0"  # a fresh manager in the new thread


def test_bad_names_are_named_errors() -> None:
    with pytest.raises(nv.NNVMError, match="Prefix: prefix must be a str"):
        nv.name.Prefix(3)  # type: ignore[arg-type]
    with pytest.raises(nv.NNVMError, match="name must be a str"):
        nv.name.NameManager().get(5, "op")  # type: ignore[arg-type]


# -- AttrScope --------------------------------------------------------------------------------


def test_attr_scope_reaches_variables_and_ops_and_nested_scopes_merge() -> None:
    with nv.AttrScope(group="4", data="great"):
        data = sym.var(
            "data", attr={"dtype": "data", "group": "1", "force_mirroring": "True"}, lr_mult=1
        )
        gdata = sym.var("data2")
    assert gdata.attr("group") == "4"
    assert data.attr("group") == "1"  # the symbol's own attr wins over the scope
    assert data.attr("lr_mult") == data.attr("__lr_mult__") == "1"
    assert data.attr("force_mirroring") == data.attr("__force_mirroring__") == "True"
    x = sym.var("x")
    with nv.attribute.AttrScope(__group__="4", __data__="great"):
        act = sym.Activation(x, act_type="relu")
        with nv.AttrScope(__init_bias__="0.0"):
            fc = sym.FullyConnected(act, num_hidden=10, name="fc2")
            assert nv.AttrScope.current.get(None) == {
                "__group__": "4",
                "__data__": "great",
                "__init_bias__": "0.0",
            }
        assert nv.AttrScope.current.get({"k": "v"}) == {
            "__group__": "4",
            "__data__": "great",
            "k": "v",
        }
    assert act.attr("__data__") == fc.attr("__data__") == "great"
    assert fc.attr("__init_bias__") == "0.0"
    assert act.attr("__init_bias__") is None
    # the weight the op created carries the node's attributes, as in MXNet
    assert fc.get_internals()["fc2_weight"].attr("__group__") == "4"
    assert nv.AttrScope.current.get(None) == {}


def test_ctx_group_scope_tags_every_node_of_a_stage() -> None:
    with nv.AttrScope(ctx_group="stage1"):
        data = sym.var("data")
        fc1 = sym.FullyConnected(data, name="fc1", num_hidden=8)
    with nv.AttrScope(ctx_group="stage2"):
        fc2 = sym.FullyConnected(fc1, name="fc2", num_hidden=4)
    groups = {name: d.get("ctx_group") for name, d in fc2.attr_dict().items()}
    assert groups == {
        "data": "stage1",
        "fc1_weight": "stage1",
        "fc1_bias": "stage1",
        "fc1": "stage1",
        "fc2_weight": "stage2",
        "fc2_bias": "stage2",
        "fc2": "stage2",
    }


def test_attr_scopes_are_per_thread() -> None:
    seen: dict[str, object] = {}

    def worker() -> None:
        seen["attr"] = sym.var("y").attr("__mood__")

    with nv.AttrScope(__mood__="calm"):
        t = threading.Thread(target=worker)
        t.start()
        t.join()
        assert sym.var("x").attr("__mood__") == "calm"
    assert seen["attr"] is None


def test_attr_scope_values_must_be_strings() -> None:
    with pytest.raises(nv.NNVMError, match="AttrScope: attribute 'lr_mult' must be a string"):
        nv.AttrScope(lr_mult=2)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="must be a string"):  # MXNet raises a ValueError
        nv.AttrScope(group=None)  # type: ignore[arg-type]


def test_a_scope_key_an_op_does_not_know_is_refused_and_symbols_still_compose() -> None:
    x = sym.var("x")
    with nv.AttrScope(mood="angry"):
        assert sym.var("v").attr("mood") == "angry"  # variables take any attribute
        with pytest.raises(nv.NNVMError, match="mood"):
            sym.FullyConnected(x, num_hidden=2)  # ... an op's parser refuses a non-__x__ key
    assert sym.FullyConnected(x, num_hidden=2, name="ok").name == "ok"
