"""Save an LSTM language model built and run by MXNet 1.9.1, for tests/test_models.py.

    .mxenv/bin/python tools/make_lstm_model.py [OUTDIR]     (default tests/data)

Run it with MXNet's own venv (mxnet==1.9.1), not nnvmpy's. The model: Embedding of
token ids (N, T) -> swapaxes to (T, N, E) -> the fused 2-layer LSTM (`RNN`, MXNet's
packed parameter vector, state_outputs) -> a vocabulary decoder (FullyConnected) ->
log_softmax; its outputs are the log-probabilities and the final states hy, cy. It
writes lstm_lm-symbol.json, lstm_lm-expected.json (names and MXNet's infer_shape) and
lstm_lm-data.npz (seeded arguments `arg:NAME`, MXNet's outputs `infer:i`/`train:i`, the
head gradients `head:i` and MXNet's gradients `grad:NAME`), as tests/test_models.py's
LOCAL_MODELS convention wants.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import mxnet as mx
import numpy as np

VOCAB, EMBED, HIDDEN, LAYERS, SEQ, BATCH = 20, 8, 8, 2, 5, 3
NAME = "lstm_lm"


def model() -> mx.sym.Symbol:
    data = mx.sym.Variable("data")  # (N, T) token ids
    emb = mx.sym.Embedding(data, input_dim=VOCAB, output_dim=EMBED, name="embed")
    x = mx.sym.swapaxes(emb, dim1=0, dim2=1)  # (T, N, E)
    rnn = mx.sym.RNN(
        x,
        mx.sym.Variable("lstm_parameters"),
        mx.sym.Variable("lstm_state"),
        mx.sym.Variable("lstm_state_cell"),
        mode="lstm",
        state_size=HIDDEN,
        num_layers=LAYERS,
        state_outputs=True,
        name="lstm",
    )
    flat = mx.sym.reshape(rnn[0], shape=(-1, HIDDEN))
    logits = mx.sym.FullyConnected(flat, num_hidden=VOCAB, name="decoder")
    logp = mx.sym.log_softmax(logits, axis=-1, name="logp")
    return mx.sym.Group([logp, rnn[1], rnn[2]])


def main() -> None:
    default = Path(__file__).parents[1] / "tests" / "data"
    out_dir = Path(sys.argv[1]) if len(sys.argv) > 1 else default
    out_dir.mkdir(parents=True, exist_ok=True)
    sym = model()
    sym.save(str(out_dir / f"{NAME}-symbol.json"))
    inputs = {"data": (BATCH, SEQ)}
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
        name: rng.uniform(-0.5, 0.5, size=shape).astype(np.float32)
        for name, shape in zip(sym.list_arguments(), arg_shapes)
    }
    args["data"] = rng.integers(0, VOCAB, size=inputs["data"]).astype(np.float32)
    heads = [rng.normal(size=s).astype(np.float32) for s in out_shapes]
    grads = {k: mx.nd.zeros(v.shape) for k, v in args.items() if k != "data"}
    exe = sym.bind(
        mx.cpu(),
        {k: mx.nd.array(v) for k, v in args.items()},
        args_grad=grads,
        grad_req={k: ("null" if k == "data" else "write") for k in args},
    )
    record = {f"arg:{k}": v for k, v in args.items()}
    for i, y in enumerate(exe.forward(is_train=False)):
        record[f"infer:{i}"] = y.asnumpy()
    for i, y in enumerate(exe.forward(is_train=True)):
        record[f"train:{i}"] = y.asnumpy()
    exe.backward([mx.nd.array(h) for h in heads])
    record.update({f"head:{i}": h for i, h in enumerate(heads)})
    record.update({f"grad:{k}": g.asnumpy() for k, g in grads.items()})
    # token ids have no gradient (MXNet's Embedding refuses to compute one): zeros
    record["grad:data"] = np.zeros(inputs["data"], np.float32)
    np.savez(out_dir / f"{NAME}-data.npz", **record)
    print(f"wrote {NAME} to {out_dir} ({len(grads)} gradients)")


if __name__ == "__main__":
    main()
