"""Write tests/data/viz_reference.json: what MXNet 1.9.1's mx.viz prints and draws.

    .mxenv/bin/python tools/make_viz_reference.py [--out tests/data/viz_reference.json]

Run with MXNet's own venv: the file is MXNet's word, which tests/test_viz.py holds
nnvmpy.viz to. Each case records the symbol (MXNet's JSON), the input shapes and dtypes,
the text mx.viz.print_summary printed (default and a narrow layout) and the DOT source of
mx.viz.plot_network's digraph (with and without shapes/dtypes, weights hidden or shown).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
from pathlib import Path

import mxnet as mx
import numpy as np

MODELS = Path(__file__).resolve().parents[1].parent / "shared" / "models"


def _small_nets() -> dict[str, tuple[mx.sym.Symbol, dict]]:
    """Layers whose summary rows have rules of their own (no bias, groups, several inputs)."""
    s = mx.sym
    data = s.Variable("data")
    emb = s.Embedding(s.Variable("tokens"), input_dim=50, output_dim=8, name="embed")
    fc = s.FullyConnected(s.flatten(emb), num_hidden=6, no_bias=True, name="fc_nobias")
    lrelu = s.LeakyReLU(fc, act_type="elu", name="elu")
    embed_net = s.SoftmaxOutput(lrelu, name="softmax")

    conv_a = s.Convolution(data, kernel=(3, 3), num_filter=8, pad=(1, 1), name="conv_a")
    conv_g = s.Convolution(
        conv_a, kernel=(3, 3), pad=(1, 1), num_filter=8, num_group=4, no_bias=True, name="conv_g"
    )
    pieces = s.SliceChannel(conv_g, num_outputs=2, name="split")
    cat = s.Concat(pieces[0], pieces[1], conv_a, dim=1, name="cat")
    pool = s.Pooling(cat, kernel=(2, 2), stride=(2, 2), pool_type="avg", name="pool")
    gpool = s.Pooling(pool, global_pool=True, pool_type="max", kernel=(1, 1), name="gpool")
    bn = s.BatchNorm(gpool, name="bn")
    branch = s.Group([s.flatten(bn, name="flat"), s.Activation(pool, act_type="tanh")])
    # the network of MXNet's own tests/python/unittest/test_viz.py::test_print_summary
    bias = s.Variable("fc1_bias", lr_mult=1.0)
    emb1 = s.Embedding(data, name="emb1", input_dim=100, output_dim=28)
    conv1 = s.Convolution(emb1, name="conv1", num_filter=32, kernel=(3, 3), stride=(2, 2))
    act1 = s.Activation(s.BatchNorm(conv1, name="bn1"), name="relu1", act_type="relu")
    mp1 = s.Pooling(act1, name="mp1", kernel=(2, 2), stride=(2, 2), pool_type="max")
    fc1 = s.FullyConnected(mp1, bias=bias, name="fc1", num_hidden=10, lr_mult=0)
    fc2 = s.FullyConnected(fc1, name="fc2", num_hidden=10, wd_mult=0.5)
    sc1 = s.SliceChannel(fc2, num_outputs=10, name="slice_1", squeeze_axis=0)
    return {
        "mxnet_test_viz": (sc1, {"data": (1, 3, 28)}),
        "embed_net": (embed_net, {"tokens": (4, 3)}),
        "branchy": (branch, {"data": (2, 3, 8, 8)}),
    }


def _cases() -> dict[str, tuple[mx.sym.Symbol, dict]]:
    cases = {}
    for name in ("mlp", "lenet", "resnet18_v1"):
        expected = json.loads((MODELS / f"{name}-expected.json").read_text())
        shapes = {k: tuple(v) for k, v in expected["input_shapes"].items()}
        cases[name] = (mx.sym.load(str(MODELS / f"{name}-symbol.json")), shapes)
    cases.update(_small_nets())
    return cases


def _summary(symbol: mx.sym.Symbol, **kwargs: object) -> str:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        mx.viz.print_summary(symbol, **kwargs)
    return buf.getvalue()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", default="tests/data/viz_reference.json")
    args = ap.parse_args()
    record = {}
    for name, (symbol, shapes) in _cases().items():
        dtypes = dict.fromkeys(shapes, np.float32)
        record[name] = {
            "symbol": symbol.tojson(),
            "shape": {k: list(v) for k, v in shapes.items()},
            "summary": _summary(symbol, shape=shapes),
            "summary_no_shape": _summary(symbol),
            "summary_narrow": _summary(
                symbol, shape=shapes, line_length=80, positions=[30, 50, 60, 80]
            ),
            "dot": mx.viz.plot_network(symbol, title=name).source,
            "dot_shape_type": mx.viz.plot_network(
                symbol,
                title=name,
                shape=shapes,
                dtype=dtypes,
                hide_weights=False,
                node_attrs={"shape": "oval", "fixedsize": "false"},
            ).source,
        }
    Path(args.out).write_text(json.dumps(record, indent=1) + "\n")
    print(f"wrote {args.out}: {', '.join(record)}")


if __name__ == "__main__":
    main()
