"""FuseBatchNormReLU: BatchNorm -> relu pairs of a training graph as one node.

Which pairs it takes (and leaves), names, and the executor's training step against the
same symbol bound with NNVMPY_FUSE_BN_RELU=0: outputs, every gradient (write and add) and
the moving statistics, equal to the bit, since the fused kernels compute what the two
nodes did in the same order.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy import sym
from nnvmpy.graph import Graph, apply_passes

MODELS = Path(__file__).resolve().parents[3] / "shared" / "models"


def _fused_ops(net: Any) -> tuple[list[str], dict[str, str]]:
    g = apply_passes(Graph(net._heads), ["FuseBatchNormReLU"])
    return [n.op.name for n in g.indexed.nodes if n.op is not None], g.attrs["with_relu"]


def _bn(x: Any, name: str = "bn", **kw: Any) -> Any:
    return sym.BatchNorm(x, name=name, **kw)


@pytest.mark.parametrize(
    "relu",
    [lambda h: sym.Activation(h, act_type="relu", name="r"), lambda h: sym.relu(h, name="r")],
    ids=["Activation", "relu"],
)  # fmt: skip
def test_a_pair_becomes_one_node_named_after_the_relu(relu: Any) -> None:
    net = relu(_bn(sym.var("x")))
    ops, notes = _fused_ops(net)
    assert ops == ["_contrib_BatchNormWithReLU"]
    assert list(notes) == ["r"]
    assert notes["r"].startswith("BatchNorm 'bn' + ")
    g = apply_passes(Graph(net._heads), ["FuseBatchNormReLU"])
    node = g.outputs[0].node
    assert node.name == "r"
    assert node.attrs.dict == net._heads[0].node.inputs[0].node.attrs.dict
    # the moving statistics stay the same variables, mutated by the fused node
    assert [e.node.name for e in node.inputs] == ["x", "bn_gamma", "bn_beta",
                                                  "bn_moving_mean", "bn_moving_var"]  # fmt: skip


def test_pairs_left_alone() -> None:
    x = sym.var("x")
    bn = _bn(x)
    with_stats = _bn(x, output_mean_var=True)
    cases = {
        "output read twice": sym.relu(bn) + bn,
        "output is a graph output": sym.Group([sym.relu(bn), bn]),
        "mean read": sym.relu(with_stats[0]) + with_stats[1],
        "not relu": sym.Activation(bn, act_type="sigmoid"),
        "BatchNorm_v1": sym.relu(sym.BatchNorm_v1(x)),
    }
    with nv.AttrScope(ctx_group="dev1"):
        placed = _bn(x, "bn_dev1")
    cases["another ctx_group"] = sym.relu(placed)
    for why, net in cases.items():
        ops, notes = _fused_ops(net)
        assert "_contrib_BatchNormWithReLU" not in ops, why
        assert notes == {}, why


def test_resnet18_has_nine_pairs() -> None:
    path = MODELS / "resnet18_v1-symbol.json"
    if not path.exists():
        pytest.skip("no shared models folder")
    net = nv.sym.load(str(path))
    ops, notes = _fused_ops(net)
    assert len(notes) == 9 == ops.count("_contrib_BatchNormWithReLU")
    assert ops.count("BatchNorm") == 11  # those before a residual add
    assert json.loads(net.tojson())  # the symbol itself is untouched
    assert "_contrib_BatchNormWithReLU" not in net.tojson()


def _net() -> Any:
    x = sym.var("data")
    h = sym.Convolution(x, kernel=(3, 3), num_filter=4, pad=(1, 1), name="c1")
    h = sym.Activation(_bn(h, "bn1", fix_gamma=False), act_type="relu", name="r1")
    h = sym.Convolution(h, kernel=(3, 3), num_filter=4, name="c2")
    h = sym.relu(_bn(h, "bn2"), name="r2")  # fix_gamma (default True)
    return sym.FullyConnected(sym.flatten(h), num_hidden=3, name="fc")


def _step(on: bool, grad_req: str, mp: pytest.MonkeyPatch) -> tuple[Any, dict, dict]:
    mp.setenv("NNVMPY_FUSE_BN_RELU", "1" if on else "0")
    net = _net()
    rng = np.random.default_rng(7)
    exe = net.simple_bind(nv.cpu(), data=(2, 3, 6, 6), grad_req=grad_req)
    for arr in exe.arg_dict.values():
        arr[:] = rng.normal(size=arr.shape)
    for arr in exe.grad_dict.values():
        arr[:] = rng.normal(size=arr.shape)  # what an adding request adds to
    ops = [n.op.name for n in exe._graph.indexed.nodes if n.op is not None]
    assert ("_contrib_BatchNormWithReLU" in ops) == on
    assert ("_backward_contrib_BatchNormWithReLU" in ops) == on
    assert len(exe._with_relu) == (2 if on else 0)
    outs = []
    for _ in range(2):  # moving statistics carry over between steps
        outs.append(exe.forward(is_train=True)[0].asnumpy())
        exe.backward([nv.nd.array(rng.normal(size=(2, 3)))])
    grads = {k: v.asnumpy() for k, v in exe.grad_dict.items()}
    aux = {k: v.asnumpy() for k, v in exe.aux_dict.items()}
    return np.stack(outs), grads, aux


@pytest.mark.parametrize("grad_req", ["write", "add"])
def test_training_step_equals_separate_nodes(grad_req: str, monkeypatch: pytest.MonkeyPatch):
    fused = _step(True, grad_req, monkeypatch)
    plain = _step(False, grad_req, monkeypatch)
    np.testing.assert_array_equal(fused[0], plain[0])
    for name in plain[1]:
        np.testing.assert_array_equal(fused[1][name], plain[1][name], err_msg=name)
    for name in plain[2]:
        np.testing.assert_array_equal(fused[2][name], plain[2][name], err_msg=name)


def test_inference_binding_is_not_rewritten() -> None:
    exe = _net().simple_bind(nv.cpu(), data=(2, 3, 6, 6), grad_req="null")
    assert exe._with_relu == {}
