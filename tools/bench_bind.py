"""Binding and stepping a large unrolled graph, against MXNet 1.9.1: what bucketing costs.

    .venv/bin/python tools/bench_bind.py [--steps 200] [--layers 2] [--hidden 32]
                                         [--batch 8] [--rounds 2] [--mxnet PATH]
                                         [--baseline SRC]
    .venv/bin/python tools/bench_bind.py --model SYMBOL.json [--batch 32]
                                         [--req write|null] [--rounds 2] ...

The graph is an LSTM unrolled by hand from symbols (per step and layer: two
FullyConnected, SliceChannel, four activations and the cell's element-wise arithmetic),
its outputs concatenated into a MakeLoss: at the defaults 6600 entries, the size a
BucketingModule binds once per bucket. Each side, in its own process, reports the best
of three `simple_bind(grad_req='write')` calls, the first training step after the bind
(forward + backward to the gradients: where first-run work lands, such as building
fused kernels), and the best of ten later steps.

`--mxnet` names MXNet's venv (or its python; default ./.mxenv). `--baseline SRC` adds a
side importing nnvmpy from another source tree (`git archive HEAD src | tar -x -C
/tmp/base`, SRC=/tmp/base/src): before and after in one run. The sides take turns for
`--rounds` and each keeps its best; the load average is printed beside the numbers.

`--model` binds a symbol file instead (e.g. ../shared/models/resnet18_v1-symbol.json):
its input `data` gets (--batch, 3, 224, 224) unless `--data-shape` says otherwise, and
`--req` is the grad_req; each side reports the best of `--binds` `simple_bind` calls
(no steps): until the call returns, and until `nd.waitall()` after it returns (MXNet
zero-fills the arrays it allocates in engine pushes that may still be running).
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from _vs_mxnet import run_side, side_python

SCRIPT = """
import json, sys, time
T, L, H, N = (int(a) for a in sys.argv[1:5])
mx = __import__(sys.argv[5])
sym = mx.sym

def unrolled():
    xs = sym.SliceChannel(sym.Variable("data"), num_outputs=T, axis=1, squeeze_axis=True)
    outs = [xs[t] for t in range(T)]
    for l in range(L):
        wi, bi = sym.Variable(f"l{l}_i2h_weight"), sym.Variable(f"l{l}_i2h_bias")
        wh, bh = sym.Variable(f"l{l}_h2h_weight"), sym.Variable(f"l{l}_h2h_bias")
        h, c, new = sym.zeros((N, H)), sym.zeros((N, H)), []
        for t in range(T):
            g = sym.FullyConnected(outs[t], wi, bi, num_hidden=4 * H)
            g = g + sym.FullyConnected(h, wh, bh, num_hidden=4 * H)
            s = sym.SliceChannel(g, num_outputs=4)
            i, f, o = (sym.Activation(s[k], act_type="sigmoid") for k in (0, 1, 3))
            z = sym.Activation(s[2], act_type="tanh")
            c = f * c + i * z
            h = o * sym.Activation(c, act_type="tanh")
            new.append(h)
        outs = new
    return sym.MakeLoss(sym.sum(sym.Concat(*outs, dim=1)))

net = unrolled()
entries = len(net.get_internals().list_outputs())
bind = float("inf")
for _ in range(3):
    t = time.perf_counter()
    exe = net.simple_bind(mx.cpu(), grad_req="write", data=(N, T, 16))
    bind = min(bind, time.perf_counter() - t)

def step():
    exe.forward(is_train=True)
    exe.backward()
    for g in exe.grad_arrays:
        g.wait_to_read()

t = time.perf_counter()
step()
first = time.perf_counter() - t
later = float("inf")
for _ in range(10):
    t = time.perf_counter()
    step()
    later = min(later, time.perf_counter() - t)
ms = {"bind": bind * 1e3, "first": first * 1e3, "step": later * 1e3}
print(json.dumps({"entries": entries, **ms}))
"""

MODEL_SCRIPT = """
import json, sys, time
path, shape, req, binds = sys.argv[1], tuple(json.loads(sys.argv[2])), sys.argv[3], int(sys.argv[4])
mx = __import__(sys.argv[5])
net = mx.sym.load(path)
bind = wait = float("inf")
for _ in range(binds):
    t = time.perf_counter()
    exe = net.simple_bind(mx.cpu(), grad_req=req, data=shape)
    t1 = time.perf_counter()
    mx.nd.waitall()
    bind, wait = min(bind, t1 - t), min(wait, time.perf_counter() - t)
    del exe
nodes = len(net.get_internals().list_outputs())
print(json.dumps({"nodes": nodes, "bind": bind * 1e3, "wait": wait * 1e3}))
"""

ROWS = (("bind", "simple_bind"), ("first", "first step"), ("step", "later step"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=200, help="time steps unrolled")
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--hidden", type=int, default=32)
    ap.add_argument("--batch", type=int, default=None, help="default 8 (LSTM), 32 (--model)")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--mxnet", default=None)
    ap.add_argument("--baseline", default=None, help="another nnvmpy source tree (its src/)")
    ap.add_argument("--model", default=None, help="a symbol json to bind instead of the LSTM")
    ap.add_argument("--data-shape", default=None, help="with --model: data's shape, '32,3,224,224'")
    ap.add_argument("--req", default="write", choices=("write", "null"), help="with --model")
    ap.add_argument("--binds", type=int, default=10, help="with --model: binds per round")
    a = ap.parse_args()
    if a.model:
        model_main(a)
        return
    sizes = [str(v) for v in (a.steps, a.layers, a.hidden, a.batch or 8)]
    best, loads = best_of_rounds(a, SCRIPT, sizes, ROWS)
    entries = int(best["nnvmpy"]["entries"])
    print(
        f"unrolled LSTM: {a.steps} steps x {a.layers} layers, hidden {a.hidden}, batch "
        f"{a.batch or 8} ({entries} entries), training bind and steps (ms, best):"
    )
    report(best, loads, ROWS)


def best_of_rounds(
    a: argparse.Namespace, script: str, args: list[str], rows: tuple[tuple[str, str], ...]
) -> tuple[dict[str, dict[str, float]], list[float]]:
    """Each side (nnvmpy, --baseline, MXNet) runs `script` in its own process, in turns
    for --rounds rounds; per side the best of each row's key, and the load averages."""
    sides = {"nnvmpy": (sys.executable, [*args, "nnvmpy"], None)}
    if a.baseline:
        sides["baseline"] = (sys.executable, [*args, "nnvmpy"], a.baseline)
    mx_py = side_python(a.mxnet, ".mxenv", "mxnet")
    if mx_py:
        sides["mxnet"] = (mx_py, [*args, "mxnet"], None)
    best: dict[str, dict[str, float]] = {}
    loads = [os.getloadavg()[0]]
    for _ in range(a.rounds):
        for name, (py, side_args, src) in sides.items():
            got = json.loads(run_side(py, script, side_args, src))
            mine = best.setdefault(name, got)
            for key, _label in rows:
                mine[key] = min(mine[key], got[key])
        loads.append(os.getloadavg()[0])
    return best, loads


def report(
    best: dict[str, dict[str, float]], loads: list[float], rows: tuple[tuple[str, str], ...]
) -> None:
    """The table of best times per side, the ratios to MXNet, and the load averages."""
    print(f"  {'':14s}" + "".join(f"{name:>12s}" for name in best))
    for key, label in rows:
        print(f"  {label:14s}" + "".join(f"{r[key]:12.1f}" for r in best.values()))
    if "mxnet" in best:
        for key, label in rows:
            ratio = best["nnvmpy"][key] / best["mxnet"][key]
            print(f"  nnvmpy / mxnet, {label}: {ratio:.2f}x")
    print(
        "  load average (1 min) before and after each round: " + " ".join(f"{x:.2f}" for x in loads)
    )


def model_main(a: argparse.Namespace) -> None:
    """--model: the best simple_bind of a symbol file, per side."""
    path = os.path.abspath(a.model)
    if a.data_shape:
        shape = [int(d) for d in a.data_shape.split(",")]
    else:
        shape = [a.batch or 32, 3, 224, 224]
    args = [path, json.dumps(shape), a.req, str(a.binds)]
    rows = (("bind", "returned"), ("wait", "+ waitall"))
    best, loads = best_of_rounds(a, MODEL_SCRIPT, args, rows)
    nodes = int(best["nnvmpy"]["nodes"])
    print(
        f"{os.path.basename(path)} ({nodes} entries), data {tuple(shape)}, "
        f"simple_bind(grad_req={a.req!r}) (ms, best of {a.binds} x {a.rounds} rounds):"
    )
    report(best, loads, rows)


if __name__ == "__main__":
    main()
