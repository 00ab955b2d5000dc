"""Write the U-Net-style and legacy-layer model files of tests/data with MXNet 1.9.1.

    .mxenv/bin/python tools/make_unet_model.py [--out tests/data]

Run with MXNet's own venv: the files are MXNet's word, which tests/test_models.py holds
nnvmpy to. For each model NAME it writes

  NAME-symbol.json    the symbol, saved by MXNet (sym.save)
  NAME-expected.json  what MXNet returns for list_arguments / list_outputs /
                      list_auxiliary_states and infer_shape(**input_shapes), as the shared
                      model files' expected.json hold
  NAME-data.npz       fixed inputs and parameters (arg:NAME, aux:NAME), MXNet's outputs of
                      forward(is_train=False) (infer:i) and forward(is_train=True) (train:i),
                      the head gradient it back-propagated (head:i), the gradients
                      (grad:NAME) and the auxiliary states after the training step
                      (aux_after:NAME); float32

Models:

  unet       an encoder-decoder on 2x3x16x16 images: Convolution + BatchNorm + relu
             blocks, max and avg Pooling down, Deconvolution (4x4, stride 2) and
             UpSampling (nearest) up, Concat skip connections, a bilinear UpSampling
             (weight initialised with the bilinear filter), a center Crop back to
             16x16 and a 1x1 Convolution head.
  legacy_v1  Convolution_v1, BatchNorm_v1 (output_mean_var), Pooling_v1 (max and avg, full
             convention), as symbol files of old MXNet models use, and a 3-D branch:
             Convolution and Pooling (MXNet computes no 3-D _v1 layers).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import mxnet as mx
import numpy as np

REPO = Path(__file__).resolve().parents[1]


def conv_block(x: mx.sym.Symbol, name: str, filters: int) -> mx.sym.Symbol:
    x = mx.sym.Convolution(x, kernel=(3, 3), pad=(1, 1), num_filter=filters, name=f"{name}_conv")
    x = mx.sym.BatchNorm(x, fix_gamma=False, name=f"{name}_bn")
    return mx.sym.Activation(x, act_type="relu", name=f"{name}_relu")


def unet() -> tuple[mx.sym.Symbol, dict[str, tuple[int, ...]]]:
    data = mx.sym.var("data")
    enc1 = conv_block(data, "enc1", 4)  # 16x16
    down1 = mx.sym.Pooling(enc1, kernel=(2, 2), stride=(2, 2), pool_type="max", name="down1")
    enc2 = conv_block(down1, "enc2", 8)  # 8x8
    down2 = mx.sym.Pooling(enc2, kernel=(2, 2), stride=(2, 2), pool_type="avg", name="down2")
    mid = conv_block(down2, "mid", 8)  # 4x4
    up2 = mx.sym.Deconvolution(
        mid, kernel=(4, 4), stride=(2, 2), pad=(1, 1), num_filter=8, no_bias=False, name="up2"
    )  # 8x8
    dec2 = conv_block(mx.sym.Concat(up2, enc2, dim=1, name="cat2"), "dec2", 8)
    up1 = mx.sym.UpSampling(dec2, scale=2, sample_type="nearest", name="up1")  # 16x16
    dec1 = conv_block(mx.sym.Concat(up1, enc1, dim=1, name="cat1"), "dec1", 4)
    smooth = mx.sym.UpSampling(
        dec1, scale=2, sample_type="bilinear", num_filter=4, name="smooth"
    )  # 32x32
    crop = mx.sym.Crop(smooth, h_w=(16, 16), center_crop=True, name="crop")
    head = mx.sym.Convolution(crop, kernel=(1, 1), num_filter=2, name="head")
    return head, {"data": (2, 3, 16, 16)}


def legacy_v1() -> tuple[mx.sym.Symbol, dict[str, tuple[int, ...]]]:
    data = mx.sym.var("data")
    x = mx.sym.Convolution_v1(data, kernel=(3, 3), pad=(1, 1), num_filter=6, name="conv1")
    x = mx.sym.BatchNorm_v1(x, fix_gamma=False, output_mean_var=True, name="bn1")[0]
    x = mx.sym.Activation(x, act_type="relu", name="relu1")
    x = mx.sym.Pooling_v1(
        x, kernel=(3, 3), stride=(2, 2), pool_type="max", pooling_convention="full", name="pool1"
    )
    x = mx.sym.Convolution_v1(x, kernel=(2, 2), num_filter=4, num_group=2, name="conv2")
    x = mx.sym.Pooling_v1(
        x, kernel=(2, 2), stride=(2, 2), pad=(1, 1), pool_type="avg", name="pool2"
    )
    vol = mx.sym.var("volume")  # MXNet computes no 3-D _v1 layers: the current ops
    y = mx.sym.Convolution(vol, kernel=(2, 3, 3), stride=(1, 2, 2), num_filter=3, name="conv3d")
    y = mx.sym.Pooling(y, kernel=(2, 2, 2), stride=(1, 2, 2), pool_type="max", name="pool3d")
    return mx.sym.Group([x, y]), {"data": (2, 3, 9, 9), "volume": (2, 2, 4, 7, 7)}


def parameters(sym: mx.sym.Symbol, shapes: dict, rng: np.random.Generator) -> tuple[dict, dict]:
    arg_shapes, _, aux_shapes = sym.infer_shape(**shapes)
    args, aux = {}, {}
    for name, shape in zip(sym.list_arguments(), arg_shapes):
        if name in shapes:
            args[name] = rng.standard_normal(shape)
        elif name.endswith("weight") and "smooth" in name:
            w = mx.nd.zeros(shape)
            mx.init.Bilinear()(mx.init.InitDesc(name), w)
            args[name] = w.asnumpy()
        elif name.endswith("gamma"):
            args[name] = rng.uniform(0.5, 1.5, shape)
        else:
            args[name] = rng.normal(0.0, 0.3, shape)
    for name, shape in zip(sym.list_auxiliary_states(), aux_shapes):
        low, high = (-0.2, 0.2) if name.endswith("mean") else (0.5, 1.5)
        aux[name] = rng.uniform(low, high, shape)
    as32 = lambda d: {k: np.asarray(v, np.float32) for k, v in d.items()}  # noqa: E731
    return as32(args), as32(aux)


def write(name: str, sym: mx.sym.Symbol, shapes: dict, out: Path, seed: int) -> None:
    rng = np.random.default_rng(seed)
    args, aux = parameters(sym, shapes, rng)
    arg_shapes, out_shapes, aux_shapes = sym.infer_shape(**shapes)
    sym.save(str(out / f"{name}-symbol.json"))
    expected = {
        "list_arguments": sym.list_arguments(),
        "list_outputs": sym.list_outputs(),
        "list_auxiliary_states": sym.list_auxiliary_states(),
        "input_shapes": {k: list(v) for k, v in shapes.items()},
        "arg_shapes": [list(s) for s in arg_shapes],
        "out_shapes": [list(s) for s in out_shapes],
        "aux_shapes": [list(s) for s in aux_shapes],
    }
    (out / f"{name}-expected.json").write_text(json.dumps(expected, indent=1) + "\n")

    grads = {k: mx.nd.zeros(v.shape) for k, v in args.items()}
    exe = sym.bind(
        mx.cpu(),
        {k: mx.nd.array(v) for k, v in args.items()},
        args_grad=grads,
        aux_states={k: mx.nd.array(v) for k, v in aux.items()},
    )
    record = {f"arg:{k}": v for k, v in args.items()}
    record.update({f"aux:{k}": v for k, v in aux.items()})
    for i, y in enumerate(exe.forward(is_train=False)):
        record[f"infer:{i}"] = y.asnumpy()
    heads = [rng.standard_normal(s).astype(np.float32) for s in out_shapes]
    for i, y in enumerate(exe.forward(is_train=True)):
        record[f"train:{i}"] = y.asnumpy()
    exe.backward([mx.nd.array(h) for h in heads])
    record.update({f"head:{i}": h for i, h in enumerate(heads)})
    record.update({f"grad:{k}": v.asnumpy() for k, v in grads.items()})
    record.update({f"aux_after:{k}": v.asnumpy() for k, v in exe.aux_dict.items()})
    np.savez_compressed(out / f"{name}-data.npz", **record)
    print(f"{name}: {len(args)} arguments, outputs {out_shapes} -> {out}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=str(REPO / "tests" / "data"))
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    assert mx.__version__ == "1.9.1", f"run with MXNet 1.9.1's venv, got {mx.__version__}"
    write("unet", *unet(), out, seed=12)
    write("legacy_v1", *legacy_v1(), out, seed=13)


if __name__ == "__main__":
    main()
