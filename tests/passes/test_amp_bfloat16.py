"""AmpBFloat16 and nv.contrib.amp.convert_symbol: which nodes compute in bfloat16.

The pass reads FBFloat16Compute from the registry; it marks a node only in an executor
without gradients, on the CPU, when every input but the weight and every output is
float32, and the node asked (convert_symbol) or NNVMPY_INFER_BF16=1 asks for all of
them except those excluded. Numerics: tests/ops/test_amp_bf16.py.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy import sym
from nnvmpy.attrs import FBFloat16Compute
from nnvmpy.base import ParamError
from nnvmpy.graph import Graph, apply_passes
from nnvmpy.ops.amp_bf16 import AMP_DTYPE, PACK_OP
from nnvmpy.registry import Op

RNG = np.random.default_rng(5)


def _net() -> Any:
    """conv 'c1' -> relu -> conv 'c2' (sharing nothing) -> FullyConnected 'fc'."""
    x = sym.var("x")
    c1 = sym.Convolution(x, kernel=(3, 3), num_filter=4, pad=(1, 1), name="c1")
    c2 = sym.Convolution(sym.relu(c1), kernel=(1, 1), num_filter=4, name="c2", no_bias=True)
    return sym.FullyConnected(c2, num_hidden=3, name="fc")


def _args(net: Any, dtype: Any = np.float32, **shapes: Any) -> dict[str, Any]:
    arg_shapes = net.infer_shape(**shapes)[0]
    return {
        n: nv.nd.array(RNG.standard_normal(s).astype(dtype), dtype=dtype)
        for n, s in zip(net.list_arguments(), arg_shapes)
    }


def _marked(exe: Any) -> dict[str, str]:
    """{node name: op} of the nodes reading a packed weight in the bound graph."""
    idx = exe._graph.indexed
    out = {}
    for nid, node in enumerate(idx.nodes):
        if node.op is None or node.op.name == PACK_OP:
            continue
        base = getattr(node.attrs.parsed, "base", None)  # an _Epilogue wraps its producer
        attrs = base if base is not None else node.attrs
        if any(idx.nodes[e.node_id].op is Op.get(PACK_OP) for e in idx[nid].inputs):
            assert attrs.dict[AMP_DTYPE] == "bfloat16"
            out[attrs.name] = attrs.op.name
    return out


def test_convolution_and_fully_connected_declare_bf16_compute() -> None:
    declared = {op.name for op in map(Op.get, Op.list_op_names()) if op.get_attr(FBFloat16Compute)}
    assert {"Convolution", "FullyConnected"} <= declared
    assert "Deconvolution" not in declared


def test_knob_marks_every_eligible_node_of_an_inference_executor(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    net = _net()
    args = _args(net, x=(2, 3, 6, 6))
    assert _marked(net.bind(nv.cpu(), args, grad_req="null")) == {}  # off by default
    monkeypatch.setenv("NNVMPY_INFER_BF16", "1")
    exe = net.bind(nv.cpu(), args, grad_req="null")
    assert _marked(exe) == {"c1": "Convolution", "c2": "Convolution", "fc": "FullyConnected"}
    text = exe.debug_str()
    assert "c1: Convolution: bfloat16 operands, float32 accumulation (" in text
    assert f"{PACK_OP}, Name=c1_weight_bf16" in text


def test_training_executors_stay_float32(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NNVMPY_INFER_BF16", "1")
    net = nv.contrib.amp.convert_symbol(_net())
    args = _args(net, x=(2, 3, 6, 6))
    grads = {n: nv.nd.zeros(a.shape) for n, a in args.items()}
    exe = net.bind(nv.cpu(), args, args_grad=grads, grad_req="write")
    assert _marked(exe) == {}
    monkeypatch.setenv("NNVMPY_INFER_BF16", "0")
    monkeypatch.setenv("NNVMPY_CHANNELS_LAST", "0")  # the same kernels as training's
    plain = _net().bind(nv.cpu(), args, grad_req="null")
    y = exe.forward(is_train=True)[0].asnumpy()
    exe.backward([nv.nd.ones(y.shape)])
    # the marks are inert with gradients: the float32 result, bit for bit
    assert np.array_equal(y, plain.forward()[0].asnumpy())


def test_float64_nodes_are_not_marked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NNVMPY_INFER_BF16", "1")
    net = _net()
    exe = net.bind(nv.cpu(), _args(net, np.float64, x=(2, 3, 6, 6)), grad_req="null")
    assert _marked(exe) == {}
    # the ChannelsLast pass's note on the same node follows AmpBFloat16's
    assert exe._simplified["c1"].startswith(
        "Convolution: not in bfloat16 (it computes in float64, not float32)"
    )


def test_excluded_names_stay_float32_even_with_the_knob(monkeypatch: pytest.MonkeyPatch) -> None:
    net = nv.contrib.amp.convert_symbol(_net(), excluded_sym_names=["c2"])
    assert net.get_internals()["c2_output"].attr(AMP_DTYPE) == "float32"
    args = _args(net, x=(2, 3, 6, 6))
    assert _marked(net.bind(nv.cpu(), args, grad_req="null")) == {
        "c1": "Convolution",
        "fc": "FullyConnected",
    }
    monkeypatch.setenv("NNVMPY_INFER_BF16", "1")
    exe = net.bind(nv.cpu(), args, grad_req="null")
    assert set(_marked(exe)) == {"c1", "fc"}
    assert exe._simplified["c2"] == "Convolution: not in bfloat16 (excluded)"


def test_convert_symbol_marks_only_ops_declaring_the_attribute() -> None:
    original = _net()
    net = nv.contrib.amp.convert_symbol(original, target_dtype="bfloat16")
    marks = {n: a[AMP_DTYPE] for n, a in net.attr_dict().items() if AMP_DTYPE in a}
    assert marks == {"c1": "bfloat16", "c2": "bfloat16", "fc": "bfloat16"}
    assert all(AMP_DTYPE not in a for a in original.attr_dict().values())  # a copy
    assert net.list_arguments() == original.list_arguments()


def test_convert_symbol_survives_json_and_runs_in_bfloat16() -> None:
    net = nv.contrib.amp.convert_symbol(_net(), excluded_sym_names=["fc"])
    loaded = sym.load_json(net.tojson())
    assert loaded.tojson() == net.tojson()
    assert loaded.get_internals()["c1_output"].attr(AMP_DTYPE) == "bfloat16"
    exe = loaded.bind(nv.cpu(), _args(loaded, x=(2, 3, 6, 6)), grad_req="null")
    assert set(_marked(exe)) == {"c1", "c2"}


def test_a_shared_weight_is_packed_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NNVMPY_INFER_BF16", "1")
    x, w = sym.var("x"), sym.var("w")
    a = sym.FullyConnected(x, weight=w, num_hidden=4, no_bias=True, name="a")
    b = sym.FullyConnected(x * 2, weight=w, num_hidden=4, no_bias=True, name="b")
    net = a + b
    exe = net.bind(nv.cpu(), _args(net, x=(3, 5)), grad_req="null")
    ops = [n.op.name for n in exe._graph.indexed.nodes if n.op is not None]
    assert ops.count(PACK_OP) == 1
    assert set(_marked(exe)) == {"a", "b"}


def test_pass_leaves_a_graph_without_requests_unchanged() -> None:
    net = _net()
    typed = apply_passes(Graph(net._heads), ["InferShape", "InferType"], shapes={"x": (1, 3, 5, 5)})
    out = apply_passes(typed, ["AmpBFloat16"])
    assert out.attrs["amp_bf16"] == {}
    assert [n.name for n in out.indexed.nodes] == [n.name for n in typed.indexed.nodes]


def test_pass_needs_types() -> None:
    with pytest.raises(nv.NNVMError, match="AmpBFloat16 needs graph attribute 'dtype'"):
        apply_passes(Graph(_net()._heads), ["AmpBFloat16"])


@pytest.mark.parametrize("dtype", ["float16", "int8", "float32", None])
def test_convert_symbol_refuses_other_target_dtypes(dtype: Any) -> None:
    with pytest.raises(ParamError, match=r"convert_symbol: argument 'target_dtype' must be"):
        nv.contrib.amp.convert_symbol(_net(), target_dtype=dtype)


@pytest.mark.parametrize(
    ("names", "match"),
    [
        (["c9"], r"'excluded_sym_names' names \['c9'\], which are not nodes"),
        ("c1", r"'excluded_sym_names' must be a list of node names"),
        ([1], r"'excluded_sym_names' must hold strings"),
    ],
)
def test_convert_symbol_refuses_bad_excluded_names(names: Any, match: str) -> None:
    with pytest.raises(ParamError, match=f"convert_symbol: argument {match}"):
        nv.contrib.amp.convert_symbol(_net(), excluded_sym_names=names)


def test_convert_symbol_needs_a_symbol() -> None:
    with pytest.raises(ParamError, match="convert_symbol: argument 'sym' must be a Symbol"):
        nv.contrib.amp.convert_symbol("net")  # type: ignore[arg-type]


def test_an_unknown_marker_value_is_refused_at_bind_and_binding_still_works() -> None:
    net = sym.Convolution(sym.var("x"), kernel=(1, 1), num_filter=2, name="c")
    net._set_attr(__amp_dtype__="float16")
    args = _args(net, x=(1, 2, 3, 3))
    with pytest.raises(ParamError, match=r"AmpBFloat16: node 'c' \(Convolution\) has __amp_dt"):
        net.bind(nv.cpu(), args, grad_req="null")
    net._set_attr(__amp_dtype__="bfloat16")
    assert set(_marked(net.bind(nv.cpu(), args, grad_req="null"))) == {"c"}


def test_convert_model_keeps_the_parameters() -> None:
    arg_params = {"c1_weight": nv.nd.ones((4, 3, 3, 3))}
    net, args, aux = nv.contrib.amp.convert_model(_net(), arg_params, {})
    assert args is arg_params
    assert aux == {}
    assert net.get_internals()["fc_output"].attr(AMP_DTYPE) == "bfloat16"
