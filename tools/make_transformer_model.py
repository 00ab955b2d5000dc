"""Save a transformer block built and run by MXNet 1.9.1, for tests/test_models.py.

    .mxenv/bin/python tools/make_transformer_model.py [OUTDIR]     (default tests/data)

Run it with MXNet's own venv (mxnet==1.9.1), not nnvmpy's. It builds one pre-norm
transformer encoder block from MXNet symbols (LayerNorm, FullyConnected with
flatten=False, reshape/transpose into heads, batch_dot, softmax, a GELU feed-forward),
and writes:

    transformer_block-symbol.json     the symbol, as MXNet saves it
    transformer_block-expected.json   list_arguments/outputs/auxiliary_states, the input
                                      shapes and MXNet's infer_shape results
    transformer_block-data.npz        fixed inputs and parameters (seeded) `arg:NAME`, MXNet's
                                      outputs `infer:0` and `train:0`, the head gradient
                                      `head:0` and MXNet's gradients `grad:NAME`

The keys follow tests/test_models.py's LOCAL_MODELS convention: the test loads the symbol
with nnvmpy and compares names, shapes, outputs and gradients with MXNet's.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import mxnet as mx
import numpy as np

BATCH, SEQ, MODEL, HEADS, HIDDEN = 2, 5, 16, 2, 32
NAME = "transformer_block"


def attention(x: mx.sym.Symbol) -> mx.sym.Symbol:
    """Multi-head self-attention: (B, S, D) -> (B, S, D)."""
    head = MODEL // HEADS

    def heads(name: str) -> mx.sym.Symbol:
        y = mx.sym.FullyConnected(x, num_hidden=MODEL, flatten=False, name=f"att_{name}")
        y = mx.sym.reshape(y, shape=(0, 0, HEADS, head))  # (B, S, H, d)
        y = mx.sym.transpose(y, axes=(0, 2, 1, 3))  # (B, H, S, d)
        return mx.sym.reshape(y, shape=(-3, 0, 0))  # (B*H, S, d)

    q, k, v = heads("q"), heads("k"), heads("v")
    score = mx.sym.batch_dot(q, k, transpose_b=True) * (1.0 / np.sqrt(head))
    weights = mx.sym.softmax(score, axis=-1, name="att_softmax")
    ctx = mx.sym.batch_dot(weights, v)  # (B*H, S, d)
    ctx = mx.sym.reshape(ctx, shape=(-4, -1, HEADS, 0, 0))  # (B, H, S, d)
    ctx = mx.sym.transpose(ctx, axes=(0, 2, 1, 3))
    ctx = mx.sym.reshape(ctx, shape=(0, 0, -3))  # (B, S, D)
    return mx.sym.FullyConnected(ctx, num_hidden=MODEL, flatten=False, name="att_out")


def block() -> mx.sym.Symbol:
    data = mx.sym.Variable("data")
    x = data + attention(mx.sym.LayerNorm(data, axis=-1, eps=1e-5, name="ln1"))
    h = mx.sym.LayerNorm(x, axis=-1, eps=1e-5, name="ln2")
    h = mx.sym.FullyConnected(h, num_hidden=HIDDEN, flatten=False, name="ffn_in")
    h = mx.sym.LeakyReLU(h, act_type="gelu", name="ffn_gelu")
    h = mx.sym.FullyConnected(h, num_hidden=MODEL, flatten=False, name="ffn_out")
    return x + h


def main() -> None:
    default = Path(__file__).parents[1] / "tests" / "data"
    out_dir = Path(sys.argv[1]) if len(sys.argv) > 1 else default
    out_dir.mkdir(parents=True, exist_ok=True)
    sym = block()
    sym.save(str(out_dir / f"{NAME}-symbol.json"))

    inputs = {"data": (BATCH, SEQ, MODEL)}
    arg_shapes, out_shapes, aux_shapes = sym.infer_shape(**inputs)
    expected = {
        "list_arguments": sym.list_arguments(),
        "list_outputs": sym.list_outputs(),
        "list_auxiliary_states": sym.list_auxiliary_states(),
        "input_shapes": inputs,
        "arg_shapes": arg_shapes,
        "out_shapes": out_shapes,
        "aux_shapes": aux_shapes,
    }
    (out_dir / f"{NAME}-expected.json").write_text(json.dumps(expected, indent=1) + "\n")

    rng = np.random.default_rng(0)
    args = {
        name: rng.normal(0.0, 0.5, size=shape).astype(np.float32)
        for name, shape in zip(sym.list_arguments(), arg_shapes)
    }
    for name in args:  # LayerNorm's scale near 1
        if name.endswith("_gamma"):
            args[name] = (1.0 + 0.1 * rng.normal(size=args[name].shape)).astype(np.float32)
    head = rng.normal(size=out_shapes[0]).astype(np.float32)
    exe = sym.bind(
        mx.cpu(),
        {k: mx.nd.array(v) for k, v in args.items()},
        args_grad={k: mx.nd.zeros(v.shape) for k, v in args.items()},
    )
    inferred = exe.forward(is_train=False)[0].asnumpy()
    output = exe.forward(is_train=True)[0].asnumpy()
    exe.backward([mx.nd.array(head)])
    grads = {f"grad:{k}": g.asnumpy() for k, g in exe.grad_dict.items()}
    record = {f"arg:{k}": v for k, v in args.items()}
    record.update({"infer:0": inferred, "train:0": output, "head:0": head}, **grads)
    np.savez(out_dir / f"{NAME}-data.npz", **record)
    print(f"wrote {NAME} to {out_dir} (output {output.shape}, {len(grads)} gradients)")


if __name__ == "__main__":
    main()
