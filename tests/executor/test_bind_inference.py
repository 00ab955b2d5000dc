"""Binding infers each node's shape and dtype once and carries the results from graph to
graph: simple_bind's symbol-level inference seeds the executor's forward graph (through
the copies EliminateCommonExpr and FuseBatchNormReLU make), and a fused node's outputs
take their members'. What every bound graph must still hold: each entry has the shape and
dtype a fresh InferShape / InferType of the final graph gives, from its variables alone.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from unrolled_lstm import unrolled_lstm

import nnvmpy as nv
from nnvmpy import sym
from nnvmpy.graph import Graph, apply_passes
from nnvmpy.graph.attrs import DTYPE, SHAPE


def _residual() -> tuple[Any, dict[str, Any]]:
    """BatchNorm -> relu and BatchNorm -> add -> relu chains (FuseBatchNormReLU)."""
    x = sym.var("data")
    y = sym.Activation(
        sym.BatchNorm(sym.Convolution(x, num_filter=4, kernel=(1, 1))), act_type="relu"
    )
    z = sym.BatchNorm(sym.Convolution(y, num_filter=4, kernel=(1, 1)))
    y = sym.Activation(z + y, act_type="relu")
    return sym.SoftmaxOutput(sym.FullyConnected(y, num_hidden=3), name="sm"), {"data": (2, 3, 4, 4)}


def _mixed() -> tuple[Any, dict[str, Any]]:
    """Element-wise groups on both sides of a cast to float64."""
    y = sym.FullyConnected(sym.var("data"), num_hidden=6)
    y = sym.Cast(sym.exp(y) * 2 + sym.sin(y), dtype="float64") * 3
    return sym.sum(y), {"data": (3, 4)}


def _resnet_like() -> tuple[Any, dict[str, Any]]:
    """Strided and 1x1 convolutions, BatchNorm, residual adds and a Dropout: without
    gradients SimplifyInference, ChannelsLast and FuseEpilogue all rewrite it, and each
    rewrite's copies keep the values inferred before it (executor/inference.py)."""

    def block(y: Any, n: int, stride: tuple[int, int]) -> Any:
        z = sym.Convolution(y, num_filter=n, kernel=(1, 1), stride=stride, no_bias=True)
        z = sym.Activation(sym.BatchNorm(z), act_type="relu")
        z = sym.Convolution(z, num_filter=n, kernel=(3, 3), pad=(1, 1), no_bias=True)
        s = sym.Convolution(y, num_filter=n, kernel=(1, 1), stride=stride, no_bias=True)
        return sym.Activation(sym.BatchNorm(z) + s, act_type="relu")

    y = block(block(sym.var("data"), 8, (2, 2)), 8, (1, 1))
    y = sym.Pooling(y, global_pool=True, kernel=(1, 1), pool_type="avg")
    y = sym.Dropout(sym.Flatten(y), p=0.5)
    net = sym.SoftmaxOutput(sym.FullyConnected(y, num_hidden=3), name="sm")
    return net, {"data": (2, 4, 16, 16)}


def _fresh(graph: Graph) -> Graph:
    """`graph`'s structure inferred from nothing but its variables' shapes and dtypes."""
    idx = graph.indexed
    var_eids = [idx.entry_id(nid, 0) for nid in idx.input_nodes]
    return apply_passes(
        Graph(graph.outputs),
        ["InferShape", "InferType"],
        shape_inputs=[graph.attrs[SHAPE][e] for e in var_eids],
        dtype_inputs=[graph.attrs[DTYPE][e] for e in var_eids],
    )


@pytest.mark.parametrize("net", [unrolled_lstm, _residual, _mixed, _resnet_like])
@pytest.mark.parametrize("grad_req", ["write", "null"])
def test_every_bound_entry_has_what_a_fresh_inference_gives(net: Any, grad_req: str) -> None:
    symbol, shapes = net()
    exe = symbol.simple_bind(nv.cpu(), grad_req=grad_req, **shapes)
    graph = exe._graph
    fresh = _fresh(graph)
    assert graph.attrs[SHAPE] == fresh.attrs[SHAPE]
    assert graph.attrs[DTYPE] == fresh.attrs[DTYPE]
    if net is unrolled_lstm:  # fused nodes, whose outputs took their members' values, are there
        assert any(n.op is not None and n.op.name == "_FusedOp" for n in graph.indexed.nodes)


def test_simple_bind_and_bind_build_the_same_graph() -> None:
    """bind infers the forward graph from scratch; simple_bind starts from the symbol's
    inference. Both end with the same entries, shapes, dtypes and memory plan."""
    symbol, shapes = unrolled_lstm()
    seeded = symbol.simple_bind(nv.cpu(), grad_req="write", **shapes)
    plain = symbol.bind(nv.cpu(), seeded.arg_dict, args_grad=seeded.grad_dict)
    for key in (SHAPE, DTYPE, "storage_id"):
        assert seeded._graph.attrs[key] == plain._graph.attrs[key]
    rng = np.random.default_rng(0)
    for arr in seeded.arg_arrays:
        arr[:] = rng.uniform(-1, 1, arr.shape)
    for exe in (seeded, plain):
        exe.forward(is_train=True)
        exe.backward()
    for name in seeded.grad_dict:
        np.testing.assert_array_equal(
            seeded.grad_dict[name].asnumpy(), plain.grad_dict[name].asnumpy()
        )


def test_inference_rewrites_say_which_nodes_they_copied() -> None:
    """SimplifyInference, ChannelsLast and FuseEpilogue name the nodes they copied as
    they were (same op and attributes, inputs of the same shapes and dtypes), so the
    executor infers only the nodes they made; what simplify() returns is what a fresh
    inference of the final graph gives."""
    from nnvmpy.executor.inference import simplify

    symbol, shapes = _resnet_like()
    dtypes = {"data": np.float32}

    def typed(outputs: Any) -> Graph:
        return apply_passes(
            Graph(outputs), ["InferShape", "InferType"], shapes=shapes, dtypes=dtypes
        )

    graph = typed(symbol._heads)
    for name, key in [
        ("SimplifyInference", "simplified_copied_from"),
        ("ChannelsLast", "channels_last_copied_from"),
        ("FuseEpilogue", "epilogue_copied_from"),
    ]:
        out = apply_passes(graph, [name])
        copies = out.attrs[key]
        assert copies, name
        for new, old in copies.items():
            assert new.attrs.op is old.attrs.op
            assert new.attrs.dict == old.attrs.dict
        graph = typed(out.outputs)
    simplified, notes, train_safe = simplify(typed(symbol._heads), shapes, dtypes)
    assert not train_safe  # the Dropout is gone
    assert any("folded" in v for v in notes.values())
    fresh = _fresh(simplified)
    assert simplified.attrs[SHAPE] == fresh.attrs[SHAPE]
    assert simplified.attrs[DTYPE] == fresh.attrs[DTYPE]
