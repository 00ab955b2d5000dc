"""FuseBatchNormReLU: BatchNorm -> [add ->] relu chains of a training graph as one node.

Which chains it takes (and leaves), names, and the executor's training step against the
same symbol bound with NNVMPY_FUSE_BN_RELU=0: outputs, every gradient (write and add) and
the moving statistics, equal to float32 rounding (the fused kernels compute what the
separate nodes did, in the same order; the residual is added before the value is rounded
to float32 on the GPU, and CPU rows may reassociate x * a + b + residual).
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


def test_bn_add_relu_becomes_one_node_with_the_residual_last() -> None:
    x, r = sym.var("x"), sym.var("r")
    net = sym.relu(_bn(x) + r, name="out")
    ops, notes = _fused_ops(net)
    assert ops == ["_BatchNormAddReLU"]
    assert list(notes) == ["out"]
    assert notes["out"].startswith("BatchNorm 'bn' + elemwise_add '")
    assert notes["out"].endswith("' + relu 'out'")
    g = apply_passes(Graph(net._heads), ["FuseBatchNormReLU"])
    assert [e.node.name for e in g.outputs[0].node.inputs] == [
        "x", "bn_gamma", "bn_beta", "bn_moving_mean", "bn_moving_var", "r"
    ]  # fmt: skip


def test_two_batch_norms_into_one_add_the_first_takes_it() -> None:
    x = sym.var("x")
    net = sym.relu(_bn(x, "first") + _bn(x, "second"))
    g = apply_passes(Graph(net._heads), ["FuseBatchNormReLU"])
    fused = g.outputs[0].node
    assert fused.op.name == "_BatchNormAddReLU"
    assert fused.inputs[0].node.name == "x"
    assert fused.inputs[5].node.op.name == "BatchNorm"
    assert fused.inputs[5].node.name == "second"


def test_pairs_left_alone() -> None:
    x = sym.var("x")
    bn = _bn(x)
    with_stats = _bn(x, output_mean_var=True)
    added = bn + x
    cases = {
        "output read twice": sym.relu(bn) + bn,
        "output is a graph output": sym.Group([sym.relu(bn), bn]),
        "mean read": sym.relu(with_stats[0]) + with_stats[1],
        "not relu": sym.Activation(bn, act_type="sigmoid"),
        "BatchNorm_v1": sym.relu(sym.BatchNorm_v1(x)),
        "add read twice": sym.relu(added) * added,
        "add then sigmoid": sym.sigmoid(bn + x),
    }
    with nv.AttrScope(ctx_group="dev1"):
        placed = _bn(x, "bn_dev1")
    cases["another ctx_group"] = sym.relu(placed)
    for why, net in cases.items():
        ops, notes = _fused_ops(net)
        assert "_contrib_BatchNormWithReLU" not in ops, why
        assert notes == {}, why


def test_resnet18_has_nine_pairs_and_eight_residual_chains() -> None:
    path = MODELS / "resnet18_v1-symbol.json"
    if not path.exists():
        pytest.skip("no shared models folder")
    net = nv.sym.load(str(path))
    ops, notes = _fused_ops(net)
    assert len(notes) == 17
    assert ops.count("_contrib_BatchNormWithReLU") == 9
    assert ops.count("_BatchNormAddReLU") == 8  # every block's end: relu(bn + shortcut)
    assert ops.count("BatchNorm") == 3  # the downsampling shortcuts' (the residuals)
    assert "elemwise_add" not in ops
    assert json.loads(net.tojson())  # the symbol itself is untouched
    assert "_contrib_BatchNormWithReLU" not in net.tojson()


def _net(convolutions: bool = True) -> Any:
    """Two BatchNorm -> relu pairs, a residual block and a downsampling one (on the
    simulator without convolutions and FullyConnected, whose tiled kernels take minutes
    there)."""
    x = sym.var("data")
    if not convolutions:
        h = sym.relu(_bn(x, "bn1", fix_gamma=False), name="r1")
        h = sym.Activation(_bn(h, "bn3", fix_gamma=False) + x, act_type="relu", name="r3")
        h = sym.relu(_bn(h, "bn4", fix_gamma=False) + _bn(h * 2, "bn5"), name="r4")
        return sym.mean(sym.relu(_bn(h, "bn2"), name="r2"), axis=(2, 3))
    h = sym.Convolution(x, kernel=(3, 3), num_filter=4, pad=(1, 1), name="c1")
    h = sym.Activation(_bn(h, "bn1", fix_gamma=False), act_type="relu", name="r1")
    h = sym.Convolution(h, kernel=(3, 3), num_filter=4, name="c2")
    h = sym.relu(_bn(h, "bn2"), name="r2")  # fix_gamma (default True)
    # a residual block, relu(bn3(conv(h)) + h), and a downsampling one, whose shortcut is
    # a BatchNorm too: relu(bn4(conv(h)) + bn5(conv(h)))
    r = sym.Convolution(h, kernel=(3, 3), num_filter=4, pad=(1, 1), name="c3")
    h = sym.Activation(_bn(r, "bn3", fix_gamma=False) + h, act_type="relu", name="r3")
    r = sym.Convolution(h, kernel=(3, 3), num_filter=5, stride=(2, 2), name="c4")
    s = sym.Convolution(h, kernel=(3, 3), num_filter=5, stride=(2, 2), name="c5")
    h = sym.relu(_bn(r, "bn4", fix_gamma=False) + _bn(s, "bn5", fix_gamma=False), name="r4")
    return sym.FullyConnected(sym.flatten(h), num_hidden=3, name="fc")


def _step(on: bool, grad_req: str, mp: pytest.MonkeyPatch, ctx: Any) -> tuple[Any, dict, dict]:
    mp.setenv("NNVMPY_FUSE_BN_RELU", "1" if on else "0")
    net = _net(convolutions=ctx.device_type == "cpu")
    rng = np.random.default_rng(7)
    exe = net.simple_bind(ctx, data=(2, 3, 8, 8), grad_req=grad_req)
    for arr in exe.arg_dict.values():
        arr[:] = rng.normal(size=arr.shape)
    for arr in exe.grad_dict.values():
        arr[:] = rng.normal(size=arr.shape)  # what an adding request adds to
    ops = [n.op.name for n in exe._graph.indexed.nodes if n.op is not None]
    assert ("_contrib_BatchNormWithReLU" in ops) == on
    assert ("_backward_contrib_BatchNormWithReLU" in ops) == on
    assert ops.count("_BatchNormAddReLU") == ops.count("_backward_BatchNormAddReLU") == 2 * on
    assert len(exe._with_relu) == (4 if on else 0)
    outs = []
    for _ in range(2):  # moving statistics carry over between steps
        outs.append(exe.forward(is_train=True)[0].asnumpy())
        exe.backward([nv.nd.array(rng.normal(size=(2, 3)), ctx=ctx)])
    grads = {k: v.asnumpy() for k, v in exe.grad_dict.items()}
    aux = {k: v.asnumpy() for k, v in exe.aux_dict.items()}
    return np.stack(outs), grads, aux


@pytest.mark.parametrize(
    "device",
    ["cpu", pytest.param("gpu", marks=[pytest.mark.gpu, pytest.mark.sim_barriers])],
)
@pytest.mark.parametrize("grad_req", ["write", "add"])
def test_training_step_equals_separate_nodes(
    device: str, grad_req: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    ctx = nv.cpu() if device == "cpu" else nv.gpu(0)
    fused = _step(True, grad_req, monkeypatch, ctx)
    plain = _step(False, grad_req, monkeypatch, ctx)
    close = {"rtol": 1e-5, "atol": 1e-6}
    np.testing.assert_allclose(fused[0], plain[0], **close)
    for name in plain[1]:
        np.testing.assert_allclose(fused[1][name], plain[1][name], **close, err_msg=name)
    for name in plain[2]:
        np.testing.assert_allclose(fused[2][name], plain[2][name], **close, err_msg=name)


def test_debug_str_lists_the_chains() -> None:
    exe = _net().simple_bind(nv.cpu(), data=(2, 3, 8, 8))
    text = exe.debug_str()
    assert "Fused with relu for training: 4 nodes" in text
    assert "\tr1: BatchNorm 'bn1' + Activation 'r1'" in text
    assert "Op:_BatchNormAddReLU, Name=r4" in text


def test_inference_binding_is_not_rewritten() -> None:
    exe = _net().simple_bind(nv.cpu(), data=(2, 3, 8, 8), grad_req="null")
    assert exe._with_relu == {}


def test_the_readers_of_a_chain_are_copies_that_name_the_node_they_copy() -> None:
    x = sym.var("x")
    conv = sym.Convolution(x, num_filter=2, kernel=(1, 1))
    net = sym.FullyConnected(sym.relu(_bn(conv)), num_hidden=3) * 2
    g = apply_passes(Graph(net._heads), ["FuseBatchNormReLU"])
    copied = g.attrs["bn_relu_copied_from"]
    # the nodes before the chain are kept as they are; those after it read the new node
    assert sorted(n.op.name for n in copied) == ["FullyConnected", "_mul_scalar"]
    assert conv._heads[0].node in g.indexed.nodes
    for new, old in copied.items():  # same op, name and attributes
        assert (new.op, new.name, new.attrs.dict) == (old.op, old.name, old.attrs.dict)
    plain = apply_passes(Graph((x + 1)._heads), ["FuseBatchNormReLU"])  # nothing to fuse
    assert plain.attrs["bn_relu_copied_from"] == {}
