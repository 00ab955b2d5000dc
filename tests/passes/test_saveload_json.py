"""SaveJSON / LoadJSON: round trips, MXNet 1.9.1 model files byte for byte, old formats."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from nnvmpy import registry
from nnvmpy.attrs import FInferShape, FMutateInputs
from nnvmpy.base import NNVMError
from nnvmpy.graph import Graph, Node, NodeEntry, apply_passes
from nnvmpy.graph.attrs import JSON, MXNET_VERSION, SHAPE
from nnvmpy.passes import graph_from_json, graph_to_json
from nnvmpy.registry import NodeAttrs, Op, register_op

Fn = Callable[..., NodeEntry]
# CI clones the repository with shared/ beside it; a developer machine has /work/shared
MODELS = next(
    (
        p
        for p in (
            Path(__file__).resolve().parents[2].parent / "shared" / "models",
            Path("/work/shared/models"),
        )
        if p.is_dir()
    ),
    Path("/work/shared/models"),
)
MODEL_NAMES = ["mlp", "lenet", "resnet18_v1"]


def structure(graph: Graph) -> list[Any]:
    """Everything JSON stores, by node id: comparable across two graphs."""
    idx = graph.indexed
    nodes = [
        (
            n.op.name if n.op else "null",
            n.name,
            n.attrs.dict,
            list(idx[i].inputs),
            list(idx[i].control_deps),
        )
        for i, n in enumerate(idx.nodes)
    ]
    return [nodes, idx.input_nodes, idx.node_row_ptr, idx.outputs]


def test_round_trip_keeps_structure_and_attributes(op: Fn, var: Fn) -> None:
    x = var("x", __shape__="(2, 3)", __lr_mult__="0.5")
    moving = var("moving", __init__="zeros")
    bn = op("t_bn", x, NodeEntry(moving.node, 0, version=1), name="bn")
    fc = op("t_fc", bn, var("w"), name="fc", num_hidden=3)
    split = op("t_split2", fc, name="split")
    later = op("t_relu", split, name="later")
    later.node.control_deps.append(bn.node)
    g = Graph([later, NodeEntry(split.node, 1)], {MXNET_VERSION: 10901, "note": "hi"})
    text = graph_to_json(g)
    loaded = graph_from_json(text)
    assert structure(loaded) == structure(g)
    assert loaded.attrs == {MXNET_VERSION: 10901, "note": "hi"}
    assert graph_to_json(loaded) == text


def test_save_and_load_as_passes(op: Fn, var: Fn) -> None:
    g = Graph([op("t_relu", var("x"), name="r")])
    saved = apply_passes(g, "SaveJSON")
    doc = json.loads(saved.attrs[JSON])
    assert doc["nodes"][1] == {"op": "t_relu", "name": "r", "inputs": [[0, 0, 0]]}
    assert doc["attrs"] == {"mxnet_version": ["int", 10901]}
    loaded = apply_passes(Graph([], {JSON: saved.attrs[JSON]}), "LoadJSON")
    assert structure(loaded) == structure(g)
    assert JSON not in loaded.attrs


# -- MXNet's model files -----------------------------------------------------------------------


def _any_attrs(attrs: NodeAttrs) -> dict[str, str]:
    return dict(attrs.dict)


def _with_bias(attrs: NodeAttrs) -> int:
    return 2 if attrs.dict.get("no_bias", "False") == "True" else 3


# name: (inputs, outputs); MXNet 1.9.1 (MKL-DNN build) gives max pooling a hidden workspace
STAND_INS: dict[str, tuple[Any, Any]] = {
    "Convolution": (_with_bias, 1),
    "FullyConnected": (_with_bias, 1),
    "BatchNorm": (5, 3),
    "Activation": (1, 1),
    "Flatten": (1, 1),
    "SoftmaxOutput": (2, 1),
    "elemwise_add": (2, 1),
    "Pooling": (1, lambda attrs: 2 if attrs.dict.get("pool_type") == "max" else 1),
}


@pytest.fixture(scope="module")
def mxnet_ops() -> Iterator[None]:
    """Stand-ins for the model files' ops, where the real ones are not registered yet."""
    with registry.scoped_registry():
        for name, (n_in, n_out) in STAND_INS.items():
            if name not in Op.list_op_names():
                op = (
                    register_op(name)
                    .set_attr_parser(_any_attrs)
                    .set_num_inputs(n_in)
                    .set_num_outputs(n_out)
                )
                if name == "BatchNorm":
                    op.set_attr(FMutateInputs, lambda attrs: [3, 4])
        yield


@pytest.mark.parametrize("model", MODEL_NAMES)
def test_mxnet_model_file_resaves_byte_for_byte(model: str, mxnet_ops: None) -> None:
    text = (MODELS / f"{model}-symbol.json").read_text()
    graph = graph_from_json(text)
    saved = graph_to_json(graph)
    original, ours = json.loads(text), json.loads(saved)
    for key in ("nodes", "arg_nodes", "node_row_ptr", "heads", "attrs"):
        assert ours[key] == original[key], key
    assert saved == text


def test_resnet_aux_states_and_dunder_attributes(mxnet_ops: None) -> None:
    graph = graph_from_json((MODELS / "resnet18_v1-symbol.json").read_text())
    idx = graph.indexed
    aux = [idx.nodes[n].name for n in idx.aux_nodes]
    assert len(aux) == 40
    assert aux[:2] == [
        "resnetv10_batchnorm0_running_mean",
        "resnetv10_batchnorm0_running_var",
    ]
    weight = next(n for n in idx.nodes if n.name == "resnetv10_conv0_weight")
    assert weight.attrs.dict["__shape__"] == "(64, 0, 7, 7)"
    expected = json.loads((MODELS / "resnet18_v1-expected.json").read_text())
    assert [idx.nodes[n].name for n in idx.arg_nodes] == expected["list_arguments"]
    assert aux == expected["list_auxiliary_states"]


@pytest.mark.parametrize("model", MODEL_NAMES)
def test_model_shapes_match_mxnet_when_the_real_ops_are_there(model: str) -> None:
    doc = json.loads((MODELS / f"{model}-symbol.json").read_text())
    ops = {n["op"] for n in doc["nodes"]} - {"null"}
    known = set(Op.list_op_names())
    missing = sorted(o for o in ops if o not in known or not Op.get(o).has_attr(FInferShape))
    if missing:
        pytest.skip(f"ops without FInferShape yet: {missing}")
    expected = json.loads((MODELS / f"{model}-expected.json").read_text())
    graph = apply_passes(
        graph_from_json(json.dumps(doc)), "InferShape", shapes=expected["input_shapes"]
    )
    idx, shapes = graph.indexed, graph.attrs[SHAPE]
    by_name = {idx.nodes[n].name: shapes[idx.entry_id(n, 0)] for n in idx.input_nodes}
    assert [list(by_name[n]) for n in expected["list_arguments"]] == expected["arg_shapes"]
    assert [list(by_name[n]) for n in expected["list_auxiliary_states"]] == expected["aux_shapes"]
    assert [list(shapes[e]) for e in idx.output_eids] == expected["out_shapes"]


# -- older files and bad input -------------------------------------------------------------------


def _node(op: str, name: str, inputs: list[list[int]], **extra: Any) -> dict[str, Any]:
    return {"op": op, "name": name, "inputs": inputs, "backward_source_id": -1, **extra}


def test_old_format_with_param_attr_and_hint_keys() -> None:
    old = {
        "nodes": [
            _node("null", "data", [], param={}, attr={"ctx_group": "dev1"}),
            _node("null", "fc_weight", [], param={}),
            _node(
                "t_fc",
                "fc",
                [[0, 0], [1, 0]],
                param={"num_hidden": "3"},
                attr={"weight_lr_mult": "2.0", "lr_mult": "0.5"},
            ),
            _node("t_bn", "bn", [[2, 0]], param={}),  # before 0.9: aux inputs were not stored
        ],
        "arg_nodes": [0, 1],
        "heads": [[3, 0]],
    }
    g = graph_from_json(json.dumps(old))
    nodes = {n.name: n for n in g.indexed.nodes}
    assert nodes["data"].attrs.dict == {"__ctx_group__": "dev1"}
    assert nodes["fc_weight"].attrs.dict == {"__lr_mult__": "2.0"}
    assert nodes["fc"].attrs.dict == {"num_hidden": "3", "__lr_mult__": "0.5"}
    assert [e.node.name for e in nodes["bn"].inputs] == ["fc", "bn_moving_mean"]
    assert g.indexed.aux_nodes == [g.indexed.node_id(nodes["bn_moving_mean"])]


def test_unknown_op_names_the_node() -> None:
    doc = {
        "nodes": [_node("null", "x", []), _node("t_relux", "act", [[0, 0, 0]])],
        "arg_nodes": [0],
        "heads": [[1, 0, 0]],
    }
    with pytest.raises(NNVMError, match=r"node 'act' uses operator 't_relux'.*'t_relux?'"):
        graph_from_json(json.dumps(doc))
    doc["nodes"][1]["op"] = "t_relu"  # the loader is still usable after the error
    assert graph_from_json(json.dumps(doc)).outputs[0].node.op is Op.get("t_relu")


def test_rejected_attributes_name_the_node(scoped_registry: None) -> None:
    def strict(attrs: NodeAttrs) -> None:
        if {k for k in attrs.dict if not k.startswith("__")} - {"axis"}:
            raise NNVMError(f"t_strict: unknown parameter {sorted(attrs.dict)}")

    register_op("t_strict").set_attr_parser(strict)
    doc = {
        "nodes": [_node("null", "x", []), _node("t_strict", "s", [[0, 0, 0]], attrs={"axes": "1"})],
        "arg_nodes": [0],
        "heads": [[1, 0, 0]],
    }
    with pytest.raises(NNVMError, match=r"node 's' \(t_strict\).*unknown parameter"):
        graph_from_json(json.dumps(doc))
    doc["nodes"][1]["attrs"] = {"axis": "1", "__shape__": "(2,)"}
    assert graph_from_json(json.dumps(doc)).outputs[0].node.attrs.dict["__shape__"] == "(2,)"


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ("not json", "not a symbol JSON document"),
        ('{"nodes": []}', "not a symbol JSON document"),
        (
            '{"nodes": [{"op": "null", "name": "x", "inputs": []}], "heads": [[3, 0, 0]]}',
            "refers to node 3",
        ),
        (
            '{"nodes": [{"op": "null", "name": "x", "inputs": []}], "heads": [[0, 1, 0]]}',
            "reads output 1 of 'x'",
        ),
        (
            '{"nodes": [{"op": "null", "name": "x", "inputs": []},'
            ' {"op": "t_add", "name": "a", "inputs": [[0, 0, 0]]}], "heads": [[1, 0, 0]],'
            ' "attrs": {"mxnet_version": ["int", 10901]}}',
            r"node 'a' \(t_add\) has 1 inputs but the op takes 2",
        ),
    ],
)
def test_malformed_documents_are_named(doc: str, message: str) -> None:
    with pytest.raises(NNVMError, match=message):
        graph_from_json(doc)


def test_variables_keep_their_attributes_through_a_round_trip() -> None:
    x = Node.variable("x", {"__dtype__": "0", "__storage_type__": "0", "__wd_mult__": "1.0"})
    loaded = graph_from_json(graph_to_json(Graph([NodeEntry(x)])))
    assert loaded.outputs[0].node.attrs.dict == x.attrs.dict
