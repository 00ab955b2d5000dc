"""Whole-network speed and memory: nnvmpy against a NumPy reference and MXNet 1.9.1.

    .venv/bin/python tools/bench_nets.py                       # everything (several minutes)
    .venv/bin/python tools/bench_nets.py --quick               # fewer repeats, no batch-32 training
    .venv/bin/python tools/bench_nets.py --only mlp            # cases whose name contains "mlp"
    .venv/bin/python tools/bench_nets.py --mxnet .mxenv        # also run MXNet from that venv
    .venv/bin/python tools/bench_nets.py --torch .torchenv     # and PyTorch's CPU build
    .venv/bin/python tools/bench_nets.py --only infer --bf16   # inference also in bfloat16

Cases, all on MXNet 1.9.1's own symbol files (../shared/models):

  mlp-train        784-512-512-10, batch 64: forward + backward + SGD-momentum update
  lenet-train      LeNet-5, batch 64: the same step
  resnet18-infer1  ResNet-18 v1, batch 1, 3x224x224: forward(is_train=False)
  resnet18-infer32 the same at batch 32
  resnet18-train32 ResNet-18 at batch 32: training step (skipped by --quick)

Each time is the median of several steps after warm-up, in ms per step; nnvmpy and MXNet
take turns for `--rounds` rounds (default 2) and each side reports its best round. The
NumPy column is an independent reference: a small interpreter of the same symbol JSON
written with NumPy only (im2col + matmul convolutions, and their col2im backward), which
runs the same step, training included. Its outputs are compared with nnvmpy's on the same
weights (`|dlogp|`: the largest difference of log-probabilities; for training over the
first two steps, so the backward and the update are checked too). With `--mxnet PATH`,
the same symbol files run in `PATH/bin/python` (MXNet's own timing, same recipe); with
`--torch PATH`, a small interpreter turns the same JSON into torch.nn.functional calls on
the same weights (conv2d, batch_norm, pools with MXNet's 'full' convention as ceil_mode,
cross-entropy as SoftmaxOutput's gradient, torch.optim.SGD with the same momentum and
weight decay) and its first step's log-probabilities are checked against the NumPy
reference, so both sides run the same network. The "issue"
column holds the MXNet numbers the issue's author measured on this machine.

Memory: the intermediate storage planned for ResNet-18 at batch 32 (`exe.storage_bytes`),
training (grad_req='write') and inference (grad_req='null'), against MXNet's debug_str
"Total N MB allocated" (N is MiB: MXNet shifts bytes right by 20); nnvmpy's default memory
arena, then NNVM's block plan (NNVMPY_MEMORY_PLAN=blocks, docs/memory.md) for comparison.

With `--bf16`, each inference case also runs with the AmpBFloat16 pass on
(NNVMPY_INFER_BF16=1: Convolution and FullyConnected in bfloat16 with float32
accumulation, on MKL's bfloat16 GEMM where it is installed, else its emulation), timed
in turns with the float32 run; a second table gives the time ratio and the accuracy:
`|dlogp|` and top-1 agreement of the bfloat16 log-probabilities against the float32 run
and against the NumPy reference (float32, the same weights and inputs).

The times are wall-clock on a shared machine: the load average is printed before and after;
when it is above the core count, the numbers are noisy. No assertions: this is a report.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

import nnvmpy as nv

REPO = Path(__file__).resolve().parents[1]
INPUTS = ("data", "softmax_label")
LR, MOMENTUM, WD = 0.01, 0.9, 1e-4


@dataclass
class Case:
    name: str
    model: str
    data_shape: tuple[int, ...]
    train: bool
    repeats: tuple[int, int]  # (warm-up, timed) full run; --quick uses (1, max(2, timed // 4))
    issue_ms: float
    target: float  # allowed nnvmpy / MXNet ratio


CASES = [
    Case("mlp-train", "mlp", (64, 784), True, (3, 30), 2.7, 1.2),
    Case("lenet-train", "lenet", (64, 1, 28, 28), True, (2, 10), 20.0, 1.5),
    Case("resnet18-infer1", "resnet18_v1", (1, 3, 224, 224), False, (2, 10), 20.0, 1.2),
    Case("resnet18-infer32", "resnet18_v1", (32, 3, 224, 224), False, (1, 4), 530.0, 1.2),
    Case("resnet18-train32", "resnet18_v1", (32, 3, 224, 224), True, (1, 3), 1900.0, 1.5),
]
ISSUE_MEMORY_MB = {"train": 753, "infer": 150}  # MXNet, ResNet-18, batch 32 (MiB)


def models_dir() -> Path:
    for candidate in (REPO.parent / "shared" / "models", Path("/work/shared/models")):
        if candidate.is_dir():
            return candidate
    sys.exit("bench_nets: no ../shared/models beside the repository nor /work/shared/models")


# -- the same weights for every implementation ------------------------------------------------


def init_value(name: str, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """Glorot-uniform weights, gamma and moving_var 1, biases / beta / moving_mean 0."""
    if name.endswith(("_gamma", "_moving_var", "_running_var")):
        return np.ones(shape, np.float32)
    if len(shape) < 2:
        return np.zeros(shape, np.float32)
    fan_in, fan_out = int(np.prod(shape[1:])), shape[0] * int(np.prod(shape[2:]))
    bound = np.sqrt(6.0 / (fan_in + fan_out))
    return rng.uniform(-bound, bound, size=shape).astype(np.float32)


def make_inputs(case: Case) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(1)
    x = rng.normal(size=case.data_shape).astype(np.float32)
    classes = 1000 if case.model.startswith("resnet") else 10
    return x, rng.integers(0, classes, size=case.data_shape[0]).astype(np.float32)


def median_ms(step: Callable[[], Any], warmup: int, repeats: int) -> float:
    for _ in range(warmup):
        step()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
    return 1000 * statistics.median(times)


# -- nnvmpy -----------------------------------------------------------------------------------


def bind_nnvmpy(path: Path, case: Case, req: str = "params") -> Any:
    """simple_bind: grad_req 'write' for the parameters ('params'), all args, or 'null'."""
    symbol = nv.sym.load(str(path))
    if req == "params":
        grad_req: Any = {
            n: "write" if case.train and n not in INPUTS else "null"
            for n in symbol.list_arguments()
        }
    else:
        grad_req = req
    return symbol.simple_bind(nv.cpu(), grad_req=grad_req, data=case.data_shape)


def nnvmpy_step(exe: Any, case: Case, weights: dict[str, np.ndarray]) -> Callable[[], Any]:
    for name, value in weights.items():
        (exe.aux_dict if name in exe.aux_dict else exe.arg_dict)[name][:] = value
    params = [n for n in exe.arg_dict if n not in INPUTS] if case.train else []
    moms = {n: nv.nd.zeros(exe.arg_dict[n].shape) for n in params}
    x, y = make_inputs(case)
    batch = case.data_shape[0]

    def step() -> Any:
        out = exe.forward(is_train=case.train, data=x, softmax_label=y)[0]
        if case.train:
            exe.backward()
            for n in params:
                w = exe.arg_dict[n]
                nv.nd.sgd_mom_update(
                    w, exe.grad_dict[n], moms[n], out=w, lr=LR, momentum=MOMENTUM, wd=WD,
                    rescale_grad=1.0 / batch,
                )  # fmt: skip
        nv.nd.waitall()
        return out

    return step


# -- NumPy reference: an interpreter of MXNet's symbol JSON -----------------------------------


def _tuple(text: str) -> tuple[int, ...]:
    return tuple(int(v) for v in text.strip("()[] ").split(",") if v.strip())


def im2col(x: np.ndarray, k: tuple, s: tuple, p: tuple) -> tuple[np.ndarray, tuple]:
    """(C*kh*kw, N*OH*OW) columns, one strided slice per kernel offset."""
    n, c, h, w = x.shape
    oh, ow = (h + 2 * p[0] - k[0]) // s[0] + 1, (w + 2 * p[1] - k[1]) // s[1] + 1
    xp = np.pad(x, ((0, 0), (0, 0), (p[0], p[0]), (p[1], p[1]))) if any(p) else x
    cols = np.empty((c, k[0], k[1], n, oh, ow), x.dtype)
    for i in range(k[0]):
        for j in range(k[1]):
            win = xp[:, :, i : i + s[0] * oh : s[0], j : j + s[1] * ow : s[1]]
            cols[:, i, j] = win.transpose(1, 0, 2, 3)
    return cols.reshape(c * k[0] * k[1], n * oh * ow), (oh, ow)


def col2im(dcols: np.ndarray, shape: tuple, k: tuple, s: tuple, p: tuple, o: tuple) -> np.ndarray:
    n, c, h, w = shape
    dcols = dcols.reshape(c, k[0], k[1], n, o[0], o[1])
    dxp = np.zeros((n, c, h + 2 * p[0], w + 2 * p[1]), dcols.dtype)
    for i in range(k[0]):
        for j in range(k[1]):
            win = dxp[:, :, i : i + s[0] * o[0] : s[0], j : j + s[1] * o[1] : s[1]]
            win += dcols[:, i, j].transpose(1, 0, 2, 3)
    return dxp[:, :, p[0] : p[0] + h, p[1] : p[1] + w]


def conv_fwd(a: dict, ins: list, train: bool) -> tuple[np.ndarray, Any]:
    x, w = ins[0], ins[1]
    k, f = _tuple(a["kernel"]), int(a["num_filter"])
    s, p = _tuple(a.get("stride", "(1,1)")), _tuple(a.get("pad", "(0,0)"))
    cols, o = im2col(x, k, s, p)
    y = (w.reshape(f, -1) @ cols).reshape(f, x.shape[0], *o).transpose(1, 0, 2, 3)
    if len(ins) > 2:
        y = y + ins[2].reshape(1, f, 1, 1)
    return np.ascontiguousarray(y), (cols if train else None, x.shape, k, s, p, o, w, len(ins))


def conv_bwd(dy: np.ndarray, cache: Any, need: list[bool]) -> list:
    cols, shape, k, s, p, o, w, n_in = cache
    dy2 = dy.transpose(1, 0, 2, 3).reshape(w.shape[0], -1)
    dw = (dy2 @ cols.T).reshape(w.shape)
    dx = col2im(w.reshape(w.shape[0], -1).T @ dy2, shape, k, s, p, o) if need[0] else None
    return [dx, dw] + ([dy2.sum(axis=1)] if n_in > 2 else [])


def pool_fwd(a: dict, ins: list, train: bool) -> tuple[np.ndarray, Any]:
    x = ins[0]
    if a.get("global_pool", "False") == "True":  # ResNet's global average pooling
        return x.mean(axis=(2, 3), keepdims=True), ("avg", x.shape)
    k, s = _tuple(a["kernel"]), _tuple(a.get("stride", "(1,1)"))
    p = _tuple(a.get("pad", "(0,0)"))
    xp = np.pad(x, ((0, 0), (0, 0), (p[0],) * 2, (p[1],) * 2), constant_values=-np.inf)
    oh, ow = (xp.shape[2] - k[0]) // s[0] + 1, (xp.shape[3] - k[1]) // s[1] + 1
    wins = [
        xp[:, :, i : i + s[0] * oh : s[0], j : j + s[1] * ow : s[1]]
        for i in range(k[0])
        for j in range(k[1])
    ]
    y = np.maximum.reduce(wins)
    return y, ("max", x.shape, k, s, p, xp if train else None, y)


def pool_bwd(dy: np.ndarray, cache: Any, need: list[bool]) -> list:
    if cache[0] == "avg":
        h, w = cache[1][2:]
        return [np.broadcast_to(dy / (h * w), cache[1]).copy()]
    _, shape, k, s, p, xp, y = cache
    oh, ow = y.shape[2:]
    dxp = np.zeros_like(xp)
    todo = np.ones(y.shape, bool)  # the gradient goes to the first maximum of each window
    for i in range(k[0]):
        for j in range(k[1]):
            sl = (
                slice(None),
                slice(None),
                slice(i, i + s[0] * oh, s[0]),
                slice(j, j + s[1] * ow, s[1]),
            )
            hit = todo & (xp[sl] == y)
            dxp[sl] += np.where(hit, dy, 0)
            todo &= ~hit
    return [dxp[:, :, p[0] : p[0] + shape[2], p[1] : p[1] + shape[3]]]


def bn_fwd(a: dict, ins: list, train: bool) -> tuple[np.ndarray, Any]:
    x, gamma, beta, mean, var = ins
    eps, mom = float(a.get("eps", 1e-3)), float(a.get("momentum", 0.9))
    if a.get("fix_gamma", "True") == "True":
        gamma = np.ones_like(gamma)
    if train and a.get("use_global_stats", "False") != "True":
        mu, sig2 = x.mean(axis=(0, 2, 3)), x.var(axis=(0, 2, 3))
        mean *= mom
        mean += (1 - mom) * mu
        var *= mom
        var += (1 - mom) * sig2
    else:
        mu, sig2 = mean, var
    inv = (1.0 / np.sqrt(sig2 + eps)).astype(np.float32).reshape(1, -1, 1, 1)
    xhat = (x - mu.reshape(1, -1, 1, 1)) * inv
    return xhat * gamma.reshape(1, -1, 1, 1) + beta.reshape(1, -1, 1, 1), (xhat, inv, gamma)


def bn_bwd(dy: np.ndarray, cache: Any, need: list[bool]) -> list:
    xhat, inv, gamma = cache
    m = dy.size // dy.shape[1]
    dbeta, dgamma = dy.sum(axis=(0, 2, 3)), (dy * xhat).sum(axis=(0, 2, 3))
    c = (1, -1, 1, 1)
    dx = (gamma.reshape(c) * inv / m) * (
        m * dy - dbeta.reshape(c) - xhat * dgamma.reshape(c)
    )  # fmt: skip
    return [dx, dgamma, dbeta]


def fc_fwd(a: dict, ins: list, train: bool) -> tuple[np.ndarray, Any]:
    x2 = ins[0].reshape(ins[0].shape[0], -1)
    y = x2 @ ins[1].T
    if len(ins) > 2:
        y += ins[2]
    return y, (x2, ins[0].shape, ins[1], len(ins))


def fc_bwd(dy: np.ndarray, cache: Any, need: list[bool]) -> list:
    x2, shape, w, n_in = cache
    dx = (dy @ w).reshape(shape) if need[0] else None
    return [dx, dy.T @ x2] + ([dy.sum(axis=0)] if n_in > 2 else [])


def act_fwd(a: dict, ins: list, train: bool) -> tuple[np.ndarray, Any]:
    y = np.maximum(ins[0], 0) if a["act_type"] == "relu" else np.tanh(ins[0])
    return y, (a["act_type"], y)


def act_bwd(dy: np.ndarray, cache: Any, need: list[bool]) -> list:
    kind, y = cache
    return [dy * (y > 0) if kind == "relu" else dy * (1 - y * y)]


def softmax_fwd(a: dict, ins: list, train: bool) -> tuple[np.ndarray, Any]:
    z = ins[0] - ins[0].max(axis=1, keepdims=True)
    e = np.exp(z)
    prob = e / e.sum(axis=1, keepdims=True)
    return prob, (prob, ins[1])


def softmax_bwd(dy: np.ndarray, cache: Any, need: list[bool]) -> list:
    prob, label = cache  # SoftmaxOutput ignores dy: d data = prob - onehot(label)
    grad = prob.copy()
    grad[np.arange(len(label)), label.astype(np.int64)] -= 1
    return [grad, None]


OPS: dict[str, tuple[Callable, Callable]] = {
    "Convolution": (conv_fwd, conv_bwd),
    "Pooling": (pool_fwd, pool_bwd),
    "BatchNorm": (bn_fwd, bn_bwd),
    "FullyConnected": (fc_fwd, fc_bwd),
    "Activation": (act_fwd, act_bwd),
    "SoftmaxOutput": (softmax_fwd, softmax_bwd),
    "Flatten": (
        lambda a, ins, t: (ins[0].reshape(ins[0].shape[0], -1), ins[0].shape),
        lambda dy, shape, need: [dy.reshape(shape)],
    ),
    "elemwise_add": (lambda a, ins, t: (ins[0] + ins[1], None), lambda dy, c, need: [dy, dy]),
}


class NumpyNet:
    """Runs an MXNet symbol JSON with NumPy: forward, backward, SGD with momentum."""

    def __init__(self, path: Path, case: Case, weights: dict[str, np.ndarray]):
        graph = json.loads(path.read_text())
        self.nodes, self.case = graph["nodes"], case
        self.values = {k: v.copy() for k, v in weights.items()}
        self.moms = {k: np.zeros_like(v) for k, v in weights.items() if k in self._params()}
        self.head = graph["heads"][0][0]
        # an entry needs a gradient when a parameter flows into it
        self.needs: list[bool] = []
        for node in self.nodes:
            if node["op"] == "null":
                self.needs.append(node["name"] in self.moms)
            else:
                self.needs.append(any(self.needs[i] for i, _, _ in node["inputs"]))

    def _params(self) -> set[str]:
        aux = ("_moving_mean", "_moving_var", "_running_mean", "_running_var")
        return {
            n["name"]
            for n in self.nodes
            if n["op"] == "null" and n["name"] not in INPUTS and not n["name"].endswith(aux)
        }

    def forward(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        outs: list[Any] = []
        self.caches: list[Any] = []
        self.values.update(data=x, softmax_label=y)
        for node in self.nodes:
            if node["op"] == "null":
                outs.append(self.values[node["name"]])
                self.caches.append(None)
                continue
            fwd = OPS[node["op"]][0]
            out, cache = fwd(node.get("attrs", {}), [outs[i] for i, _, _ in node["inputs"]],
                             self.case.train)  # fmt: skip
            outs.append(out)
            self.caches.append(cache)
        return outs[self.head]

    def backward(self) -> dict[str, np.ndarray]:
        grads: dict[int, np.ndarray] = {}
        result: dict[str, np.ndarray] = {}
        for nid in range(self.head, -1, -1):
            node = self.nodes[nid]
            if not self.needs[nid]:
                continue
            if node["op"] == "null":
                result[node["name"]] = grads[nid]
                continue
            dy = grads.pop(nid, None)
            ins = [i for i, _, _ in node["inputs"]]
            dins = OPS[node["op"]][1](dy, self.caches[nid], [self.needs[i] for i in ins])
            for i, d in zip(ins, dins):
                if d is not None and self.needs[i]:
                    grads[i] = grads[i] + d if i in grads else d
        return result

    def step(self) -> Callable[[], Any]:
        x, y = make_inputs(self.case)
        scale = 1.0 / self.case.data_shape[0]

        def run() -> np.ndarray:
            prob = self.forward(x, y)
            if self.case.train:
                for name, g in self.backward().items():
                    w, mom = self.values[name], self.moms[name]
                    mom *= MOMENTUM
                    mom -= LR * (scale * g + WD * w)
                    w += mom
            return prob

        return run


# -- MXNet, in its own interpreter -------------------------------------------------------------

MXNET_SCRIPT = r"""
import json, statistics, sys, time
import numpy as np
import mxnet as mx
cfg = json.loads(sys.argv[1])
def init_value(name, shape, rng):
    if name.endswith(("_gamma", "_moving_var", "_running_var")):
        return np.ones(shape, np.float32)
    if len(shape) < 2:
        return np.zeros(shape, np.float32)
    fan_in, fan_out = int(np.prod(shape[1:])), shape[0] * int(np.prod(shape[2:]))
    b = np.sqrt(6.0 / (fan_in + fan_out))
    return rng.uniform(-b, b, size=shape).astype(np.float32)
sym = mx.sym.load(cfg["path"])
shape = tuple(cfg["shape"])
if cfg["mode"] == "memory":
    res = {}
    for req in ("write", "null"):
        exe = sym.simple_bind(mx.cpu(), grad_req=req, data=shape)
        line = [l for l in exe.debug_str().splitlines() if "MB allocated" in l][0]
        res[req] = int(line.split()[1])
    print("RESULT " + json.dumps(res)); sys.exit()
train = cfg["train"]
req = {n: ("write" if train and n not in ("data", "softmax_label") else "null")
       for n in sym.list_arguments()}
exe = sym.simple_bind(mx.cpu(), grad_req=req, data=shape)
rng = np.random.default_rng(0)
for d in (exe.arg_dict, exe.aux_dict):
    for n, a in d.items():
        if n not in ("data", "softmax_label"):
            a[:] = init_value(n, a.shape, rng)
params = [n for n in exe.arg_dict if train and n not in ("data", "softmax_label")]
moms = {n: mx.nd.zeros(exe.arg_dict[n].shape) for n in params}
rng = np.random.default_rng(1)
x = rng.normal(size=shape).astype(np.float32)
y = rng.integers(0, cfg["classes"], size=shape[0]).astype(np.float32)
def step():
    exe.forward(is_train=train, data=x, softmax_label=y)
    if train:
        exe.backward()
        for n in params:
            w = exe.arg_dict[n]
            mx.nd.sgd_mom_update(w, exe.grad_dict[n], moms[n], out=w, lr=cfg["lr"],
                                 momentum=cfg["momentum"], wd=cfg["wd"],
                                 rescale_grad=1.0 / shape[0])
    mx.nd.waitall()
for _ in range(cfg["warmup"]):
    step()
ts = []
for _ in range(cfg["repeats"]):
    t = time.perf_counter(); step(); ts.append(time.perf_counter() - t)
print("RESULT " + json.dumps({"ms": 1000 * statistics.median(ts)}))
"""


def run_mxnet(venv: Path, cfg: dict[str, Any]) -> dict[str, Any] | None:
    python = venv / "bin" / "python"
    proc = subprocess.run(
        [str(python), "-c", MXNET_SCRIPT, json.dumps(cfg)],
        capture_output=True, text=True, timeout=1800, check=False, env=nv.threads.anchor_env(),
    )  # fmt: skip
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT ") :])
    print(f"  MXNet failed ({python}): {proc.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
    return None


# -- PyTorch, in its own interpreter: the same symbol JSON as torch functional calls --------

TORCH_SCRIPT = r"""
import json, math, os, statistics, sys, time
import numpy as np
import torch
import torch.nn.functional as F
cfg = json.loads(sys.argv[1])
torch.set_num_threads(os.cpu_count())
graph = json.load(open(cfg["path"]))
nodes, head = graph["nodes"], graph["heads"][0][0]
weights = dict(np.load(cfg["weights"]))
train = cfg["train"]
def tup(text):
    return tuple(int(v) for v in text.strip("()[] ").split(",") if v.strip())
aux = ("_moving_mean", "_moving_var", "_running_mean", "_running_var")
params = {n: torch.tensor(v, requires_grad=train and not n.endswith(aux))
          for n, v in weights.items()}
buffers = {n: t for n, t in params.items() if n.endswith(aux)}
trainable = [t for n, t in params.items() if not n.endswith(aux)]
def run(x, label):
    outs = []
    for node in nodes:
        op, a = node["op"], node.get("attrs", {})
        if op == "null":
            outs.append(x if node["name"] == "data" else label if node["name"] == "softmax_label"
                        else params[node["name"]])
            continue
        ins = [outs[i] for i, _, _ in node["inputs"]]
        if op == "Convolution":
            y = F.conv2d(ins[0], ins[1], ins[2] if len(ins) > 2 else None,
                         stride=tup(a.get("stride", "(1,1)")), padding=tup(a.get("pad", "(0,0)")))
        elif op == "BatchNorm":
            gamma = torch.ones_like(ins[1]) if a.get("fix_gamma", "True") == "True" else ins[1]
            y = F.batch_norm(ins[0], ins[3], ins[4], gamma, ins[2], training=train,
                             momentum=1 - float(a.get("momentum", 0.9)),
                             eps=float(a.get("eps", 1e-3)))
        elif op == "Activation":
            y = torch.relu(ins[0]) if a["act_type"] == "relu" else torch.tanh(ins[0])
        elif op == "Pooling":
            if a.get("global_pool", "False") == "True":
                y = ins[0].mean(dim=(2, 3), keepdim=True)
            else:
                k, s = tup(a["kernel"]), tup(a.get("stride", "(1,1)"))
                p, ceil = tup(a.get("pad", "(0,0)")), a.get("pooling_convention") == "full"
                pool = F.max_pool2d if a.get("pool_type", "max") == "max" else F.avg_pool2d
                y = pool(ins[0], k, s, p, ceil_mode=ceil)
        elif op == "FullyConnected":
            y = F.linear(ins[0].flatten(1), ins[1], ins[2] if len(ins) > 2 else None)
        elif op == "Flatten":
            y = ins[0].flatten(1)
        elif op == "elemwise_add":
            y = ins[0] + ins[1]
        elif op == "SoftmaxOutput":
            y = ins[0]  # logits: the loss below is SoftmaxOutput's gradient
        else:
            raise SystemExit(f"bench_nets torch: no translation for {op}")
        outs.append(y)
    return outs[head]
rng = np.random.default_rng(1)
shape = tuple(cfg["shape"])
x = torch.tensor(rng.normal(size=shape).astype(np.float32))
y = torch.tensor(rng.integers(0, cfg["classes"], size=shape[0]).astype(np.int64))
opt = torch.optim.SGD(trainable, lr=cfg["lr"], momentum=cfg["momentum"],
                      weight_decay=cfg["wd"]) if train else None
def step():
    if train:
        opt.zero_grad(set_to_none=True)
        logits = run(x, y)
        F.cross_entropy(logits, y).backward()  # mean: SoftmaxOutput's grad / batch
        opt.step()
    else:
        with torch.no_grad():
            logits = run(x, y)
    return logits
first = torch.log_softmax(step().detach(), dim=1).numpy()
for _ in range(max(cfg["warmup"] - 1, 0)):
    step()
ts = []
for _ in range(cfg["repeats"]):
    t = time.perf_counter(); step(); ts.append(time.perf_counter() - t)
np.save(cfg["weights"] + ".logp.npy", first)
print("RESULT " + json.dumps({"ms": 1000 * statistics.median(ts),
                              "threads": torch.get_num_threads()}))
"""


def run_torch(venv: Path, cfg: dict[str, Any]) -> dict[str, Any] | None:
    """TORCH_SCRIPT in the venv's python; its first step's log-probabilities come back too."""
    python = venv / "bin" / "python" if (venv / "bin" / "python").exists() else venv
    proc = subprocess.run(
        [str(python), "-c", TORCH_SCRIPT, json.dumps(cfg)],
        capture_output=True, text=True, timeout=1800, check=False, env=nv.threads.anchor_env(),
    )  # fmt: skip
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT "):
            result = json.loads(line[len("RESULT ") :])
            result["logp"] = np.load(cfg["weights"] + ".logp.npy")
            return result
    print(f"  PyTorch failed ({python}): {proc.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
    return None


# -- the report -------------------------------------------------------------------------------


def weights_for(path: Path, case: Case) -> dict[str, np.ndarray]:
    symbol = nv.sym.load(str(path))
    arg_shapes, _, aux_shapes = symbol.infer_shape(data=case.data_shape)
    rng = np.random.default_rng(0)
    names = symbol.list_arguments() + symbol.list_auxiliary_states()
    return {
        n: init_value(n, tuple(s), rng)
        for n, s in zip(names, list(arg_shapes) + list(aux_shapes))
        if n not in INPUTS
    }


def bench_case(case: Case, models: Path, args: argparse.Namespace) -> dict[str, Any]:
    path = models / f"{case.model}-symbol.json"
    warmup, repeats = case.repeats
    if args.quick:
        warmup, repeats = 1, max(2, repeats // 4)
    weights = weights_for(path, case)
    row: dict[str, Any] = {"case": case}
    nn_step = nnvmpy_step(bind_nnvmpy(path, case), case, weights)
    ref_step = NumpyNet(path, case, weights).step()
    # Same weights: the first step checks forward, the second (training) the whole update.
    row["dlogp"] = 0.0
    for _ in range(2 if case.train else 1):
        logp = np.log(np.maximum(nn_step().asnumpy(), 1e-30))
        dlogp = np.abs(logp - np.log(np.maximum(ref_step(), 1e-30))).max()
        row["dlogp"] = max(row["dlogp"], float(dlogp))
    bf_step = None
    if args.bf16 and not case.train:
        bf_step = nnvmpy_step(bind_bf16(path, case), case, weights)
        row.update(bf16_accuracy(nn_step, bf_step, ref_step))
    if not args.no_numpy:
        row["numpy"] = median_ms(ref_step, max(warmup - 2, 0), repeats)
    cfg = {
        "path": str(path), "shape": case.data_shape, "train": case.train, "mode": "time",
        "classes": 1000 if case.model.startswith("resnet") else 10, "warmup": warmup,
        "repeats": repeats, "lr": LR, "momentum": MOMENTUM, "wd": WD,
    }  # fmt: skip
    # nnvmpy and MXNet take turns, round by round, and each keeps its best round: a burst
    # of load from other tenants of the machine then hits both sides alike.
    nn_times, mx_times, torch_times, bf_times = [], [], [], []
    if args.torch:  # the same weights, through a file; its first step is checked below
        fd, weights_file = tempfile.mkstemp(suffix=".npz")
        os.close(fd)
        np.savez(weights_file, **weights)
        torch_cfg = {**cfg, "weights": weights_file}
    for r in range(args.rounds):
        nn_times.append(median_ms(nn_step, max(warmup - 1, 0) if r == 0 else 1, repeats))
        if bf_step is not None:
            bf_times.append(median_ms(bf_step, max(warmup - 1, 0) if r == 0 else 1, repeats))
        if args.mxnet:
            res = run_mxnet(Path(args.mxnet), cfg)
            if res:
                mx_times.append(res["ms"])
        if args.torch:
            res = run_torch(Path(args.torch), torch_cfg)
            if res:
                torch_times.append(res["ms"])
                # PyTorch's first step against the NumPy reference's: the same network?
                ref = NumpyNet(path, case, weights).step()()
                row["torch_dlogp"] = float(
                    np.abs(res["logp"] - np.log(np.maximum(ref, 1e-30))).max()
                )
    if args.torch:
        for leftover in (weights_file, weights_file + ".logp.npy"):
            Path(leftover).unlink(missing_ok=True)
    row["nnvmpy"] = min(nn_times)
    row["mxnet"] = min(mx_times) if mx_times else None
    row["torch"] = min(torch_times) if torch_times else None
    row["bf16"] = min(bf_times) if bf_times else None
    return row


def bind_bf16(path: Path, case: Case) -> Any:
    """bind_nnvmpy with NNVMPY_INFER_BF16=1: the AmpBFloat16 pass marks every
    Convolution and FullyConnected (the executor reads the knob at bind)."""
    saved = os.environ.get("NNVMPY_INFER_BF16")
    os.environ["NNVMPY_INFER_BF16"] = "1"
    try:
        return bind_nnvmpy(path, case, "null")
    finally:
        if saved is None:
            del os.environ["NNVMPY_INFER_BF16"]
        else:
            os.environ["NNVMPY_INFER_BF16"] = saved


def bf16_accuracy(nn_step: Callable[[], Any], bf_step: Callable[[], Any], ref_step: Any) -> dict:
    """|dlogp| and top-1 agreement of the bfloat16 run against float32 and the reference."""

    def logp(p: np.ndarray) -> np.ndarray:
        return np.log(np.maximum(p, 1e-30))

    lp32, lp16 = logp(nn_step().asnumpy()), logp(bf_step().asnumpy())
    lpref = logp(ref_step())
    top = lp16.argmax(axis=1)
    return {
        "bf16_dlogp": float(np.abs(lp16 - lp32).max()),
        "bf16_top1": float((top == lp32.argmax(axis=1)).mean()),
        "bf16_dlogp_ref": float(np.abs(lp16 - lpref).max()),
        "bf16_top1_ref": float((top == lpref.argmax(axis=1)).mean()),
    }


def fmt_ms(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.1f}" if value < 100 else f"{value:.0f}"


def print_times(rows: list[dict[str, Any]]) -> None:
    head = (
        f"{'case':<17} {'nnvmpy ms':>10} {'NumPy ms':>9} {'MXNet ms':>9} {'torch ms':>9} "
        f"{'issue ms':>9} {'nnvmpy/MXNet':>13} {'target':>7} {'nnvmpy/torch':>13} {'|dlogp|':>8}"
    )
    print(head)
    print("-" * len(head))
    for row in rows:
        case = row["case"]
        base = row.get("mxnet") or case.issue_ms
        ratio = row["nnvmpy"] / base
        mark = "ok" if ratio <= case.target else "MISS"
        src = "" if row.get("mxnet") else "*"
        vs_torch = f"{row['nnvmpy'] / row['torch']:>12.2f}x" if row.get("torch") else f"{'-':>13}"
        print(
            f"{case.name:<17} {fmt_ms(row['nnvmpy']):>10} {fmt_ms(row.get('numpy')):>9} "
            f"{fmt_ms(row.get('mxnet')):>9} {fmt_ms(row.get('torch')):>9} "
            f"{fmt_ms(case.issue_ms):>9} {ratio:>7.2f}x{src:1} {mark:>4} {case.target:>6.1f}x "
            f"{vs_torch} {row['dlogp']:>8.1e}"
        )
    if any(not row.get("mxnet") for row in rows):
        print("(* ratio against the issue's MXNet number: no MXNet time in this run)")
    torch_checks = [row["torch_dlogp"] for row in rows if "torch_dlogp" in row]
    if torch_checks:
        print(
            f"PyTorch runs the same networks: its first step's |dlogp| against the NumPy "
            f"reference is at most {max(torch_checks):.1e}"
        )


def print_bf16(rows: list[dict[str, Any]]) -> None:
    """The --bf16 table: time against the float32 run, accuracy against both references."""
    from nnvmpy.ops.amp_bf16 import gemm_description

    rows = [r for r in rows if r.get("bf16")]
    if not rows:
        return
    print(f"\nbfloat16 inference (AmpBFloat16; GEMM: {gemm_description()})")
    head = (
        f"{'case':<17} {'float32 ms':>10} {'bf16 ms':>8} {'bf16/f32':>9} "
        f"{'|dlogp| f32':>11} {'top-1 f32':>9} {'|dlogp| ref':>11} {'top-1 ref':>9}"
    )
    print(head)
    print("-" * len(head))
    for row in rows:
        print(
            f"{row['case'].name:<17} {fmt_ms(row['nnvmpy']):>10} {fmt_ms(row['bf16']):>8} "
            f"{row['bf16'] / row['nnvmpy']:>8.2f}x {row['bf16_dlogp']:>11.1e} "
            f"{row['bf16_top1']:>9.3f} {row['bf16_dlogp_ref']:>11.1e} {row['bf16_top1_ref']:>9.3f}"
        )


def print_memory(models: Path, args: argparse.Namespace) -> None:
    case = Case("resnet18-b32", "resnet18_v1", (32, 3, 224, 224), True, (0, 0), 0, 1)
    path = models / "resnet18_v1-symbol.json"
    mx = None
    if args.mxnet:
        mx = run_mxnet(Path(args.mxnet), {"path": str(path), "shape": case.data_shape,
                                          "mode": "memory"})  # fmt: skip
    print("\nPlanned intermediate storage, ResNet-18 v1, batch 32, 3x224x224 (MiB)")
    head = (
        f"{'grad_req':<28} {'nnvmpy':>8} {'naive':>8} {'MXNet':>7} {'issue':>6} "
        f"{'nnvmpy/MXNet':>13}  target <= 1.0x (ideally 0.9x)"
    )
    print(head)
    print("-" * len(head))
    for label, req, key, plan in (
        ("'write' (all args, as MXNet)", "write", "train", "arena"),
        ("'write' params, inputs null", "params", "train", "arena"),
        ("'null' (inference)", "null", "infer", "arena"),
        ("'write', NNVM's blocks", "write", "train", "blocks"),
        ("'null', NNVM's blocks", "null", "infer", "blocks"),
    ):
        saved = os.environ.get("NNVMPY_MEMORY_PLAN")
        os.environ["NNVMPY_MEMORY_PLAN"] = plan  # read at bind
        try:
            exe = bind_nnvmpy(path, case, req)
        finally:
            os.environ.pop("NNVMPY_MEMORY_PLAN")
            if saved is not None:
                os.environ["NNVMPY_MEMORY_PLAN"] = saved
        mine, naive = exe.storage_bytes / 2**20, exe.storage_naive_bytes / 2**20
        theirs = mx["write" if key == "train" else "null"] if mx else None
        ref = theirs or ISSUE_MEMORY_MB[key]
        print(
            f"{label:<28} {mine:>8.0f} {naive:>8.0f} {fmt_ms(theirs):>7} "
            f"{ISSUE_MEMORY_MB[key]:>6} {mine / ref:>12.2f}x"
        )


def blas_name() -> str:
    """The cblas nnvmpy's convolution/FC GEMMs run on here: mkl, openblas or none."""
    from nnvmpy.ops.nn import _blas

    lib = _blas.active()
    return "none" if lib is None else f"{lib.name} ({lib.path})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats, no batch-32 training")
    parser.add_argument("--only", help="run only the cases whose name contains this")
    parser.add_argument("--mxnet", help="a venv with mxnet==1.9.1 (e.g. .mxenv)")
    parser.add_argument("--torch", help="a venv with torch==2.13.0+cpu (e.g. .torchenv)")
    parser.add_argument("--no-numpy", action="store_true", help="skip the NumPy reference timing")
    parser.add_argument(
        "--bf16",
        action="store_true",
        help="also run the inference cases in bfloat16 (NNVMPY_INFER_BF16=1) and report "
        "the time ratio and the accuracy loss",
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=2,
        help="nnvmpy and MXNet time in turns this many rounds; each keeps its best median",
    )
    args = parser.parse_args()
    models = models_dir()
    cases = [c for c in CASES if not (args.quick and c.name == "resnet18-train32")]
    if args.only:
        cases = [c for c in cases if args.only in c.name]
    load = os.getloadavg()[0]
    print(f"bench_nets: {os.cpu_count()} CPUs, load average {load:.1f} at start")
    print(f"nnvmpy GEMMs on {blas_name()} (NNVMPY_BLAS={os.environ.get('NNVMPY_BLAS', 'auto')})")
    rows = []
    for case in cases:
        print(f"  running {case.name} ...", file=sys.stderr, flush=True)
        rows.append(bench_case(case, models, args))
    print()
    print_times(rows)
    print_bf16(rows)
    if not args.only or "memory".startswith(args.only) or "resnet" in args.only:
        print_memory(models, args)
    print(f"\nload average {os.getloadavg()[0]:.1f} at the end ({os.cpu_count()} CPUs); "
          "above the CPU count the times are noisy.")  # fmt: skip


if __name__ == "__main__":
    main()
