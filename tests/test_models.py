"""Whole networks: MXNet 1.9.1's symbol files load and infer as MXNet does; models train.

The reference for the first part is MXNet itself: each `<model>-expected.json` beside the
symbol file holds what MXNet 1.9.1 returned for list_arguments, list_outputs,
list_auxiliary_states and infer_shape on the same file.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy import training


def _models_dir() -> Path | None:
    """`<repo>/../shared/models` (the CI layout), else the shared folder of this machine."""
    repo = Path(__file__).resolve().parents[1]
    for candidate in (repo.parent / "shared" / "models", Path("/work/shared/models")):
        if candidate.is_dir():
            return candidate
    return None


MODELS = _models_dir()
needs_models = pytest.mark.skipif(MODELS is None, reason="shared model files not present")
NAMES = ["mlp", "lenet", "resnet18_v1"]


def _load(name: str) -> tuple[nv.sym.Symbol, dict]:
    assert MODELS is not None
    symbol = nv.sym.load(str(MODELS / f"{name}-symbol.json"))
    expected = json.loads((MODELS / f"{name}-expected.json").read_text())
    return symbol, expected


def _tuples(shapes: list) -> list[tuple[int, ...]]:
    return [tuple(s) for s in shapes]


@needs_models
@pytest.mark.parametrize("name", NAMES)
def test_model_file_lists_the_names_mxnet_lists(name: str) -> None:
    symbol, expected = _load(name)
    assert symbol.list_arguments() == expected["list_arguments"]
    assert symbol.list_outputs() == expected["list_outputs"]
    assert symbol.list_auxiliary_states() == expected["list_auxiliary_states"]


@needs_models
@pytest.mark.parametrize("name", NAMES)
def test_model_file_infers_the_shapes_mxnet_infers(name: str) -> None:
    symbol, expected = _load(name)
    inputs = {k: tuple(v) for k, v in expected["input_shapes"].items()}
    arg_shapes, out_shapes, aux_shapes = symbol.infer_shape(**inputs)
    assert _tuples(arg_shapes) == _tuples(expected["arg_shapes"])
    assert _tuples(out_shapes) == _tuples(expected["out_shapes"])
    assert _tuples(aux_shapes) == _tuples(expected["aux_shapes"])


@needs_models
def test_resnet18_trains_one_step_with_a_planned_memory() -> None:
    symbol, _ = _load("resnet18_v1")
    inputs = ("data", "softmax_label")
    req = {n: "null" if n in inputs else "write" for n in symbol.list_arguments()}
    exe = symbol.simple_bind(nv.cpu(), grad_req=req, data=(2, 3, 224, 224))
    assert 0 < exe.storage_bytes < exe.storage_naive_bytes

    nv.random.seed(0)
    params = {n: a for n, a in exe.arg_dict.items() if n not in inputs}
    # Xavier weights; the file's '__init__' attributes give BatchNorm's ones and zeros
    nv.init.init_params(nv.init.Xavier(), {**params, **exe.aux_dict}, symbol.attr_dict())
    rng = np.random.default_rng(0)

    x = rng.normal(size=(2, 3, 224, 224)).astype(np.float32)
    label = np.array([3, 997], np.float32)
    prob = exe.forward(is_train=True, data=x, softmax_label=label)[0].asnumpy()
    assert prob.shape == (2, 1000)
    assert np.isfinite(prob).all()
    assert (prob >= 0).all()
    np.testing.assert_allclose(prob.sum(axis=1), 1.0, rtol=1e-4)

    exe.backward()
    for name in (
        "resnetv10_conv0_weight",
        "resnetv10_batchnorm0_gamma",
        "resnetv10_stage4_conv1_weight",
        "resnetv10_dense0_weight",
        "resnetv10_dense0_bias",
    ):
        grad = exe.grad_dict[name].asnumpy()
        assert np.isfinite(grad).all(), name
        assert np.abs(grad).max() > 0, name


def test_mlp_training_lowers_the_loss_and_generalises() -> None:
    x, y = training.cluster_dataset(3000, dim=64, seed=1)
    x_train, y_train, x_test, y_test = x[:2400], y[:2400], x[2400:], y[2400:]
    trainer = training.Trainer(training.mlp_symbol((64, 64)), (32, 64), lr=0.05)
    hist = trainer.fit(x_train, y_train, x_test, y_test, epochs=4, progress=False)
    assert hist.steps == 4 * (2400 // 32)
    assert np.mean(hist.losses[-20:]) < 0.5 * hist.losses[0]
    assert hist.test_accuracy > 0.9


def test_lenet_training_lowers_the_loss() -> None:
    x, y = training.stroke_dataset(640, seed=2)
    trainer = training.Trainer(training.lenet_symbol(), (32, *x.shape[1:]), lr=0.05)
    hist = trainer.fit(x[:512], y[:512], x[512:], y[512:], epochs=2, progress=False)
    assert np.isfinite(hist.losses).all()
    assert np.mean(hist.losses[-5:]) < 0.8 * np.mean(hist.losses[:5])


def test_progress_into_a_log_is_one_line_per_epoch(capsys: pytest.CaptureFixture[str]) -> None:
    from nnvmpy.training import Trainer, cluster_dataset, mlp_symbol

    x, y = cluster_dataset(256, seed=3)
    trainer = Trainer(mlp_symbol((16,)), (64, x.shape[1]), lr=0.02)
    trainer.fit(x, y, x, y, epochs=2, progress=True)
    err = capsys.readouterr().err
    assert err.count("epoch 1/2") == err.count("epoch 2/2") == 1  # no redraws in a log
    assert err.count("[" + "#" * 30 + "] 4/4 loss") == 2  # the finished bar of each epoch


# -- model files written by MXNet 1.9.1 into tests/data (tools/make_*_model.py) -------------------

DATA = Path(__file__).resolve().parent / "data"
#: NAME-symbol.json, NAME-expected.json and NAME-data.npz in tests/data, each from a generator
#: script under tools/ run with .mxenv (the npz holds inputs, parameters and MXNet's results)
LOCAL_MODELS = ["unet", "legacy_v1", "transformer_block", "lstm_lm"]


def _load_local(name: str) -> tuple[nv.sym.Symbol, dict, dict[str, np.ndarray]]:
    symbol = nv.sym.load(str(DATA / f"{name}-symbol.json"))
    expected = json.loads((DATA / f"{name}-expected.json").read_text())
    with np.load(DATA / f"{name}-data.npz") as record:
        return symbol, expected, dict(record)


@pytest.mark.parametrize("name", LOCAL_MODELS)
def test_local_model_lists_and_infers_what_mxnet_does(name: str) -> None:
    symbol, expected, _ = _load_local(name)
    assert symbol.list_arguments() == expected["list_arguments"]
    assert symbol.list_outputs() == expected["list_outputs"]
    assert symbol.list_auxiliary_states() == expected["list_auxiliary_states"]
    inputs = {k: tuple(v) for k, v in expected["input_shapes"].items()}
    arg_shapes, out_shapes, aux_shapes = symbol.infer_shape(**inputs)
    assert _tuples(arg_shapes) == _tuples(expected["arg_shapes"])
    assert _tuples(out_shapes) == _tuples(expected["out_shapes"])
    assert _tuples(aux_shapes) == _tuples(expected["aux_shapes"])


def _close(got: np.ndarray, want: np.ndarray, what: str) -> None:
    # MXNet ran in float32: compare at float32's precision, relative to the array's scale
    scale = max(float(np.abs(want).max()), 1.0)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5 * scale, err_msg=what)


@pytest.mark.parametrize("name", LOCAL_MODELS)
def test_local_model_forward_and_backward_match_mxnet(name: str) -> None:
    """The same parameters and inputs give MXNet's outputs, gradients and moving statistics."""
    symbol, _, record = _load_local(name)
    args = {k[4:]: v.astype(np.float64) for k, v in record.items() if k.startswith("arg:")}
    aux = {k[4:]: v.astype(np.float64) for k, v in record.items() if k.startswith("aux:")}
    exe = symbol.simple_bind(
        nv.cpu(), type_dict=dict.fromkeys(args, "float64"), **{k: v.shape for k, v in args.items()}
    )
    for k, v in args.items():
        exe.arg_dict[k][:] = v
    for k, v in aux.items():
        exe.aux_dict[k][:] = v
    for i, y in enumerate(exe.forward(is_train=False)):
        _close(y.asnumpy(), record[f"infer:{i}"], f"{name} inference output {i}")
    outputs = exe.forward(is_train=True)
    for i, y in enumerate(outputs):
        _close(y.asnumpy(), record[f"train:{i}"], f"{name} training output {i}")
    heads = [nv.nd.array(record[f"head:{i}"], dtype="float64") for i in range(len(outputs))]
    exe.backward(heads)
    for k in args:
        _close(exe.grad_dict[k].asnumpy(), record[f"grad:{k}"], f"{name} gradient of {k}")
    for k in aux:
        _close(exe.aux_dict[k].asnumpy(), record[f"aux_after:{k}"], f"{name} {k} after training")
