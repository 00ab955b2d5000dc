"""Symbol attributes (attr, list_attr, attr_dict, _set_attr, hidden keys) and copies
(copy, deepcopy, pickle) — MXNet's documented behaviour, MXNet's JSON as the common form."""

from __future__ import annotations

import copy
import json
import pickle

import numpy as np
import pytest

import nnvmpy as nv

sym = nv.sym


def _contains(small: dict, big: dict) -> bool:
    return all(
        k in big and (_contains(v, big[k]) if isinstance(v, dict) else big[k] == v)
        for k, v in small.items()
    )


def test_list_attr_shows_hidden_keys_under_both_names() -> None:
    data = sym.var("data", attr={"mood": "angry"})
    op = sym.Convolution(
        data=data,
        name="conv",
        kernel=(1, 1),
        num_filter=1,
        attr={"__mood__": "so so", "wd_mult": "x"},
    )
    assert _contains({"__mood__": "so so", "wd_mult": "x", "__wd_mult__": "x"}, op.list_attr())
    # stored once, as __wd_mult__: that is what JSON holds
    node = next(n for n in json.loads(op.tojson())["nodes"] if n["name"] == "conv")
    assert node["attrs"]["__wd_mult__"] == "x"
    assert "wd_mult" not in node["attrs"]


def test_attr_dict_covers_every_node_and_op_keywords_become_hidden_attributes() -> None:
    data = sym.var("data", attr={"mood": "angry"})
    op = sym.Convolution(
        data=data, name="conv", kernel=(1, 1), num_filter=1, attr={"__mood__": "so so"}, lr_mult=1
    )
    want = {
        "data": {"mood": "angry"},
        "conv_weight": {"__mood__": "so so"},
        "conv": {
            "kernel": "(1, 1)",
            "__mood__": "so so",
            "num_filter": "1",
            "lr_mult": "1",
            "__lr_mult__": "1",
        },
        "conv_bias": {"__mood__": "so so"},
    }
    assert _contains(want, op.attr_dict())
    # the created weight carries the node's attributes (lr_mult reaches the optimizer)
    assert op.get_internals()["conv_weight"].attr("lr_mult") == "1"


def test_attr_answers_name_and_op_name_and_none_for_absent_keys() -> None:
    fc = sym.FullyConnected(sym.var("x"), num_hidden=4, name="fc")
    assert fc.attr("name") == "fc"
    assert fc.attr("op_name") == "FullyConnected"
    assert sym.var("x").attr("op_name") == "null"
    assert fc.attr("num_hidden") == "4"
    assert fc.attr("missing") is None
    with pytest.raises(nv.NNVMError, match="key must be a string"):
        fc.attr(3)  # type: ignore[arg-type]


def test_set_attr_sets_strings_and_reparses_op_parameters() -> None:
    x = sym.var("x")
    y = sym.FullyConnected(x, num_hidden=4, name="fc")
    y._set_attr(ctx_group="dev1", __note__="n")
    assert y.attr("__ctx_group__") == "dev1"
    assert y.attr("__note__") == "n"
    y._set_attr(num_hidden="6")
    assert y.infer_shape(x=(2, 3))[1] == [(2, 6)]
    with pytest.raises(nv.NNVMError, match="must be a string"):
        y._set_attr(__note__=3)  # type: ignore[arg-type]
    with pytest.raises(nv.NNVMError, match="num_hidden"):
        y._set_attr(num_hidden="zero")
    assert y.attr("num_hidden") == "6"  # a refused value changes nothing
    with pytest.raises(nv.NNVMError, match="weight_lr_mult"):
        x._set_attr(weight_lr_mult="2")  # MXNet's deprecated per-input spelling


def test_variable_attributes_validate_types_and_names() -> None:
    with pytest.raises(nv.NNVMError, match="attribute 'a' must be a string"):
        sym.var("v", attr={"a": 1})
    with pytest.raises(nv.NNVMError, match="attr must be a dict"):
        sym.var("v", attr=["a"])  # type: ignore[arg-type]
    with pytest.raises(nv.NNVMError, match="non-empty strings"):
        sym.var("v", attr={3: "x"})  # type: ignore[dict-item]
    with pytest.raises(nv.NNVMError, match="shape must be a tuple of ints"):
        sym.var("v", shape=(2, None))
    with pytest.raises(nv.NNVMError, match="stype"):
        sym.var("v", stype="dense")
    v = sym.var("v", shape=(2, 0), dtype="float16", init="zeros", wd_mult=0.5, stype="default")
    assert v.list_attr() == {
        "__shape__": "(2, 0)",
        "__dtype__": "2",
        "__init__": "zeros",
        "__wd_mult__": "0.5",
        "wd_mult": "0.5",
        "__storage_type__": "0",
    }


def test_ops_refuse_non_string_attr_keys_and_per_input_hints() -> None:
    x = sym.var("x")
    with pytest.raises(nv.NNVMError, match="attr must be a dict"):
        sym.relu(x, attr="lr_mult")
    with pytest.raises(nv.NNVMError, match="weight_lr_mult"):
        sym.FullyConnected(x, num_hidden=2, weight_lr_mult=2)
    assert sym.FullyConnected(x, num_hidden=2, name="after").name == "after"


def test_attributes_survive_json_and_pickle() -> None:
    with nv.AttrScope(__group__="g"):
        x = sym.var("x", lr_mult=2.0, attr={"mood": "calm"})
        y = sym.FullyConnected(x, num_hidden=3, name="fc", attr={"__init_bias__": "0.0"})
    for again in (sym.load_json(y.tojson()), pickle.loads(pickle.dumps(y))):
        assert again.attr_dict() == y.attr_dict()
        assert again.tojson() == y.tojson()


def test_copies_are_whole_new_graphs() -> None:
    x = sym.var("x")
    y = sym.relu(x * 2.0, name="r")
    for dup in (copy.copy(y), copy.deepcopy(y)):
        assert dup.tojson() == y.tojson()
        dup._set_attr(__note__="copy only")
        assert y.attr("__note__") is None
        dup.get_children()._set_attr(__note__="inner")
        assert y.get_children().attr("__note__") is None


def test_pickled_models_bind_and_compute_the_same() -> None:
    x = sym.var("x")
    net = sym.FullyConnected(sym.relu(x), num_hidden=3, name="fc")
    back = pickle.loads(pickle.dumps([net, x]))[0]
    rng = np.random.default_rng(0)
    args = {
        "x": rng.standard_normal((2, 4)),
        "fc_weight": rng.standard_normal((3, 4)),
        "fc_bias": rng.standard_normal(3),
    }
    nd = {k: nv.nd.array(v, dtype="float64") for k, v in args.items()}
    want = np.maximum(args["x"], 0) @ args["fc_weight"].T + args["fc_bias"]
    np.testing.assert_allclose(back.eval(nv.cpu(), **nd)[0].asnumpy(), want)
