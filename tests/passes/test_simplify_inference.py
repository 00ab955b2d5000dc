"""SimplifyInference: BatchNorm folded into the layer before it, Dropout removed, at bind.

References: the same symbol bound with NNVMPY_SIMPLIFY_INFERENCE=0 (and the epilogue pass
off: "plain"), and NumPy formulas of FullyConnected + BatchNorm.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy import sym
from nnvmpy.graph import Graph, apply_passes
from nnvmpy.ops.nn import inference

RNG = np.random.default_rng(7)
OFF = {"NNVMPY_SIMPLIFY_INFERENCE": "0", "NNVMPY_FUSE_EPILOGUE": "0"}


def _arrays(symbol: Any, **shapes: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """Random arguments, and moving statistics away from 0/1 so the fold matters."""
    args, _, aux = symbol.infer_shape(**shapes)
    arg = {
        n: nv.nd.array(RNG.standard_normal(s).astype(np.float32))
        for n, s in zip(symbol.list_arguments(), args)
    }
    aux_d = {
        n: nv.nd.array(RNG.uniform(0.5, 2.0, s).astype(np.float32) if "var" in n else
                       RNG.standard_normal(s).astype(np.float32))
        for n, s in zip(symbol.list_auxiliary_states(), aux)
    }  # fmt: skip
    return arg, aux_d


def _bind(symbol: Any, args: Any, aux: Any, monkeypatch: pytest.MonkeyPatch, on: bool) -> Any:
    for k, v in OFF.items():
        if on:
            monkeypatch.delenv(k, raising=False)
        else:
            monkeypatch.setenv(k, v)
    exe = symbol.bind(nv.cpu(), args, aux_states=aux, grad_req="null")
    for k in OFF:
        monkeypatch.delenv(k, raising=False)
    return exe


def _both(symbol: Any, monkeypatch: pytest.MonkeyPatch, **shapes: Any) -> tuple[Any, Any]:
    args, aux = _arrays(symbol, **shapes)
    return _bind(symbol, args, aux, monkeypatch, True), _bind(symbol, args, aux, monkeypatch, False)


def _ops(exe: Any) -> list[str]:
    return [n.op.name for n in exe._graph.indexed.nodes if n.op is not None]


def _close(a: Any, b: Any) -> None:
    np.testing.assert_allclose(a.asnumpy(), b.asnumpy(), rtol=2e-5, atol=2e-5)


@pytest.mark.parametrize("fix_gamma", [True, False])
def test_batch_norm_after_convolution_folds_into_its_weights(
    fix_gamma: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    x = sym.var("x")
    conv = sym.Convolution(x, kernel=(3, 3), num_filter=6, pad=(1, 1), no_bias=True, name="c")
    net = sym.BatchNorm(conv, fix_gamma=fix_gamma, eps=1e-3, name="bn")
    exe, plain = _both(net, monkeypatch, x=(2, 3, 5, 5))
    assert "BatchNorm" not in _ops(exe)
    assert "_FoldScaleShift" in _ops(exe)
    assert exe._simplified == {"bn": "BatchNorm: folded into 'c'"}
    assert "BatchNorm" in _ops(plain)
    _close(exe.forward()[0], plain.forward()[0])
    # gamma is ignored with fix_gamma, as MXNet: scaling it changes the output otherwise
    exe.arg_dict["bn_gamma"][:] = 3.0
    plain.arg_dict["bn_gamma"][:] = 3.0
    _close(exe.forward()[0], plain.forward()[0])


def test_fully_connected_and_batch_norm_match_the_numpy_formula(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fc = sym.FullyConnected(sym.var("x"), num_hidden=5, name="fc")
    net = sym.BatchNorm(fc, fix_gamma=False, name="batchnorm0")  # named: auto names count up
    exe, _ = _both(net, monkeypatch, x=(4, 7))
    a = {n: v.asnumpy() for n, v in {**exe.arg_dict, **exe.aux_dict}.items()}
    y = a["x"] @ a["fc_weight"].T + a["fc_bias"]
    bn = "batchnorm0_"
    want = (y - a[bn + "moving_mean"]) / np.sqrt(a[bn + "moving_var"] + 1e-3) * a[bn + "gamma"] + a[
        bn + "beta"
    ]
    assert "BatchNorm" not in _ops(exe)
    np.testing.assert_allclose(exe.forward()[0].asnumpy(), want, rtol=1e-5, atol=1e-5)


def test_last_axis_batch_norm_folds_into_fully_connected_without_flatten(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fc = sym.FullyConnected(sym.var("x"), num_hidden=4, flatten=False, no_bias=True)
    exe, plain = _both(sym.BatchNorm(fc, axis=-1, fix_gamma=False), monkeypatch, x=(2, 3, 5))
    assert "BatchNorm" not in _ops(exe)
    _close(exe.forward()[0], plain.forward()[0])
    # axis 1 of a 3-D output is not the units axis: no fold, same answer
    exe, plain = _both(sym.BatchNorm(fc, axis=1), monkeypatch, x=(2, 4, 5))
    assert "BatchNorm" in _ops(exe)
    _close(exe.forward()[0], plain.forward()[0])


def test_batch_norm_whose_input_is_read_twice_is_not_folded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    conv = sym.Convolution(sym.var("x"), kernel=(1, 1), num_filter=4, name="c")
    net = sym.BatchNorm(conv, fix_gamma=False, name="bn") + conv
    exe, plain = _both(net, monkeypatch, x=(2, 3, 4, 4))
    assert "BatchNorm" in _ops(exe)
    assert "bn" not in exe._simplified
    _close(exe.forward()[0], plain.forward()[0])
    # mean/var read (output_mean_var): no fold either
    bn = sym.BatchNorm(conv, output_mean_var=True, fix_gamma=False)
    exe, plain = _both(sym.Group([bn[0], bn[1]]), monkeypatch, x=(2, 3, 4, 4))
    assert "BatchNorm" in _ops(exe)
    for a, b in zip(exe.forward(), plain.forward()):
        _close(a, b)


def test_parameters_changed_between_forwards_reach_the_fold(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    conv = sym.Convolution(sym.var("x"), kernel=(3, 3), num_filter=4, name="c")
    net = sym.relu(sym.BatchNorm(conv, fix_gamma=False, name="bn"))
    exe, plain = _both(net, monkeypatch, x=(2, 3, 6, 6))
    _close(exe.forward()[0], plain.forward()[0])
    new = {
        "c_weight": RNG.standard_normal((4, 3, 3, 3)),
        "c_bias": RNG.standard_normal(4),
        "bn_gamma": RNG.standard_normal(4),
        "bn_beta": RNG.standard_normal(4),
    }
    for name, value in new.items():  # one at a time: each must reach the output
        before = exe.forward()[0].asnumpy()
        for e in (exe, plain):
            e.arg_dict[name][:] = value.astype(np.float32)
        _close(exe.forward()[0], plain.forward()[0])
        assert not np.allclose(exe.outputs[0].asnumpy(), before), name
    stats = {"bn_moving_mean": RNG.standard_normal(4), "bn_moving_var": RNG.uniform(1, 3, 4)}
    for e in (exe, plain):
        e.copy_params_from({}, {k: v.astype(np.float32) for k, v in stats.items()})
    _close(
        exe.forward(x=np.ones((2, 3, 6, 6), np.float32))[0],
        plain.forward(x=np.ones((2, 3, 6, 6), np.float32))[0],
    )


def test_fold_runs_again_only_after_an_input_changed(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    real = inference._fold_loop

    class Counting:
        def launch(self, *a: Any, **kw: Any) -> None:
            calls.append(1)
            real.launch(*a, **kw)

    monkeypatch.setattr(inference, "_fold_loop", Counting())
    net = sym.BatchNorm(sym.Convolution(sym.var("x"), kernel=(1, 1), num_filter=3), name="bn")
    exe, _ = _both(net, monkeypatch, x=(1, 2, 3, 3))
    for _ in range(3):
        exe.forward(x=RNG.standard_normal((1, 2, 3, 3)))  # the data is no input of the fold
    nv.nd.waitall()
    assert len(calls) == 1
    exe.aux_dict["bn_moving_var"][:] = 4.0
    exe.forward()
    exe.forward()
    nv.nd.waitall()
    assert len(calls) == 2


def test_dropout_is_removed_at_inference_and_kept_when_always_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    x = sym.var("x")
    exe, plain = _both(sym.Dropout(sym.relu(x), p=0.3, name="d"), monkeypatch, x=(3, 4))
    assert "Dropout" not in _ops(exe)
    assert "Dropout" in _ops(plain)
    assert exe._simplified == {"d": "Dropout: removed (the identity at inference)"}
    _close(exe.forward()[0], plain.forward()[0])
    exe, _ = _both(sym.Dropout(x, p=0.3, mode="always"), monkeypatch, x=(3, 4))
    assert "Dropout" in _ops(exe)
    out = exe.forward(x=np.ones((3, 4)))[0].asnumpy()
    assert set(np.unique(out)) <= {0.0, np.float32(1 / 0.7)}


def test_training_forward_runs_the_graph_as_written(monkeypatch: pytest.MonkeyPatch) -> None:
    """BatchNorm with batch statistics (and its moving-average update) at is_train=True."""
    conv = sym.Convolution(sym.var("x"), kernel=(3, 3), num_filter=4, name="c")
    net = sym.BatchNorm(conv, fix_gamma=False, name="bn")
    exe, plain = _both(net, monkeypatch, x=(2, 3, 5, 5))
    assert not exe._train_safe
    for e in (exe, plain):
        e.aux_dict["bn_moving_mean"][:] = 0.0  # both start from the same statistics
        e.aux_dict["bn_moving_var"][:] = 1.0
    _close(exe.forward(is_train=True)[0], plain.forward(is_train=True)[0])
    _close(exe.aux_dict["bn_moving_var"], plain.aux_dict["bn_moving_var"])
    # the next inference folds the updated statistics
    _close(exe.forward()[0], plain.forward()[0])


def test_global_stats_batch_norm_folds_for_training_forwards_too(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    conv = sym.Convolution(sym.var("x"), kernel=(3, 3), num_filter=4)
    exe, plain = _both(sym.BatchNorm(conv, use_global_stats=True), monkeypatch, x=(2, 3, 5, 5))
    assert exe._train_safe
    assert "BatchNorm" not in _ops(exe)
    _close(exe.forward(is_train=True)[0], plain.forward(is_train=True)[0])
    assert exe._plain is None


def test_knob_gradient_and_debug_str(monkeypatch: pytest.MonkeyPatch) -> None:
    conv = sym.Convolution(sym.var("x"), kernel=(1, 1), num_filter=2, name="c")
    net = sym.BatchNorm(conv, name="bn")
    args, aux = _arrays(net, x=(1, 2, 3, 3))
    exe = _bind(net, args, aux, monkeypatch, True)
    text = exe.debug_str()
    assert "Simplified for inference: 1 nodes" in text
    assert "bn: BatchNorm: folded into 'c'" in text
    assert "Op:_FoldScaleShift, Name=bn_fold" in text
    monkeypatch.setenv("NNVMPY_SIMPLIFY_INFERENCE", "0")
    off = net.bind(nv.cpu(), args, aux_states=aux, grad_req="null")
    assert off._simplified == {}
    assert "Simplified" not in off.debug_str()
    monkeypatch.delenv("NNVMPY_SIMPLIFY_INFERENCE")
    grads = {n: nv.nd.zeros(a.shape) for n, a in args.items()}
    train = net.bind(nv.cpu(), args, args_grad=grads, aux_states=aux)
    assert "BatchNorm" in _ops(train)
    assert train._simplified == {}


def test_pass_on_an_untyped_graph_folds_only_where_the_axes_are_given() -> None:
    conv = sym.Convolution(sym.var("x"), kernel=(1, 1), num_filter=2)
    g = apply_passes(Graph(sym.BatchNorm(conv, axis=-3)._heads), ["SimplifyInference"])
    assert g.attrs["simplified"] == {}  # -3 needs the rank, which only a shape gives
    g = apply_passes(Graph(sym.BatchNorm(conv, axis=1)._heads), ["SimplifyInference"])
    assert len(g.attrs["simplified"]) == 1


def test_fold_op_cannot_be_made_from_attributes() -> None:
    with pytest.raises(nv.NNVMError, match="_FoldScaleShift: node 'n' cannot be made"):
        nv.Op.get("_FoldScaleShift").parse_attrs({"a": "1"}, "n")
    assert nv.sym.Variable("still_works") is not None  # the registry stays usable


# -- whole networks (tools/bench_nets.py's, at inference) ----------------------------------


def _net_outputs(model: str, shape: tuple[int, ...], on: bool, mp: pytest.MonkeyPatch) -> Any:
    import dataclasses
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parents[2] / "tools"))
    import bench_nets as bn

    case = dataclasses.replace(bn.CASES[0], model=model, data_shape=shape, train=False)
    path = bn.models_dir() / f"{model}-symbol.json"
    for k, v in OFF.items():
        mp.setenv(k, "1" if on else v)
    exe = bn.bind_nnvmpy(path, case, req="null")
    for k in OFF:
        mp.delenv(k)
    step = bn.nnvmpy_step(exe, case, bn.weights_for(path, case))
    return exe, step().asnumpy(), bn.NumpyNet(path, case, bn.weights_for(path, case)).step()()


@pytest.mark.parametrize(
    ("model", "shape", "folds"),
    [("mlp", (8, 784), 0), ("lenet", (4, 1, 28, 28), 0), ("resnet18_v1", (1, 3, 224, 224), 20)],
)
def test_networks_give_the_same_outputs_with_and_without_the_passes(
    model: str, shape: tuple[int, ...], folds: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pathlib import Path

    if not (Path(__file__).parents[3] / "shared" / "models").is_dir():
        pytest.skip("no ../shared/models")
    exe, out, ref = _net_outputs(model, shape, True, monkeypatch)
    _, plain, _ = _net_outputs(model, shape, False, monkeypatch)
    folded = [v for v in exe._simplified.values() if "folded" in v]
    assert len(folded) == folds  # ResNet-18 (Gluon's v1): all 20 BatchNorms follow a convolution
    np.testing.assert_allclose(out, plain, rtol=1e-4, atol=1e-6)
    # and, as bench_nets checks, against its NumPy interpreter of the symbol file
    assert np.abs(np.log(np.maximum(out, 1e-30)) - np.log(np.maximum(ref, 1e-30))).max() < 1e-3


def test_every_python_block_of_the_inference_guide_runs() -> None:
    import re
    from pathlib import Path

    doc = Path(__file__).resolve().parents[2] / "docs" / "inference.md"
    blocks = re.findall(r"^```python\n(.*?)^```", doc.read_text(), re.S | re.M)
    assert len(blocks) >= 3
    namespace: dict[str, object] = {"__name__": "inference_doc"}
    for code in blocks:  # not a file: numba compiles the guide's loop in memory
        exec(compile(code, f"<{doc.name}>", "exec"), namespace)
