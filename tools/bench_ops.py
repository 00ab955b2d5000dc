"""CPU time of single ops through nd, against MXNet 1.9.1 on the same machine.

    .venv/bin/python tools/bench_ops.py --mxnet .mxenv            # every case
    .venv/bin/python tools/bench_ops.py --mxnet .mxenv -k pool lrn  # cases naming these

Each case is one `nd` call at a realistic size (layers of (32, 64, 56, 56) float32, rows
of (4096, 1024), stacks of matrices), timed as the best of `--repeat` after two warm-up
calls, waiting for the result. With --mxnet the same calls run in that venv's Python on
MXNet's `nd` (same names and parameters) and the table gives the ratio nnvmpy / MXNet
(below 1: nnvmpy is faster), slowest first. Without it, nnvmpy's times alone.

`fb` cases time a forward and backward under autograd (the head gradient passed in) and
wait for every input's gradient. The cases are the ones optimised against MXNet so far
and their neighbours: add one when you speed an op up, so the next sweep sees it.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from _vs_mxnet import best_of, results_in

Case = Callable[[Any, Callable[..., Any]], Callable[[], Any]]
CASES: dict[str, Case] = {}


def case(name: str) -> Callable[[Case], Case]:
    def put(fn: Case) -> Case:
        CASES[name] = fn
        return fn

    return put


def _randn(*shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _fb(nd: Any, ag: Any, op: Callable[..., Any], *inputs: Any) -> Callable[[], Any]:
    """Forward + backward of op(*inputs) under autograd: a call returns the gradients."""
    for x in inputs:
        x.attach_grad()
    head = nd.ones(op(*inputs).shape)

    def run() -> list[Any]:
        with ag.record():
            y = op(*inputs)
        y.backward(head)
        return [x.grad for x in inputs]

    return run


# -- layers on (32, 64, 56, 56) ------------------------------------------------------------
LAYER = (32, 64, 56, 56)


@case("Pooling max 3x3/2")
def _(lib: Any, arr: Callable[..., Any]) -> Callable[[], Any]:
    x = arr(_randn(32, 64, 112, 112))
    return lambda: lib.nd.Pooling(x, kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="max")


@case("Pooling max 3x3/2 fb")
def _(lib: Any, arr: Callable[..., Any]) -> Callable[[], Any]:
    def op(x: Any) -> Any:
        return lib.nd.Pooling(x, kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="max")

    return _fb(lib.nd, lib.autograd, op, arr(_randn(32, 64, 112, 112)))


@case("Pooling global max")
def _(lib: Any, arr: Callable[..., Any]) -> Callable[[], Any]:
    x = arr(_randn(*LAYER))
    return lambda: lib.nd.Pooling(x, kernel=(1, 1), global_pool=True, pool_type="max")


@case("LRN nsize 5")
def _(lib: Any, arr: Callable[..., Any]) -> Callable[[], Any]:
    x = arr(_randn(16, 64, 56, 56))
    return lambda: lib.nd.LRN(x, nsize=5)


@case("LRN nsize 5 fb")
def _(lib: Any, arr: Callable[..., Any]) -> Callable[[], Any]:
    return _fb(lib.nd, lib.autograd, lambda x: lib.nd.LRN(x, nsize=5), arr(_randn(16, 64, 56, 56)))


def _depthwise(lib: Any, stride: int) -> Callable[..., Any]:
    return lambda x, w: lib.nd.Convolution(
        x, w, kernel=(3, 3), pad=(1, 1), stride=(stride, stride), num_filter=64, num_group=64,
        no_bias=True,
    )  # fmt: skip


@case("Convolution depthwise 3x3")
def _(lib: Any, arr: Callable[..., Any]) -> Callable[[], Any]:
    x, w = arr(_randn(*LAYER)), arr(_randn(64, 1, 3, 3))
    conv = _depthwise(lib, 1)
    return lambda: conv(x, w)


@case("Convolution depthwise 3x3 fb")
def _(lib: Any, arr: Callable[..., Any]) -> Callable[[], Any]:
    return _fb(
        lib.nd, lib.autograd, _depthwise(lib, 1), arr(_randn(*LAYER)), arr(_randn(64, 1, 3, 3))
    )


@case("Convolution depthwise 3x3/2 fb")
def _(lib: Any, arr: Callable[..., Any]) -> Callable[[], Any]:
    return _fb(
        lib.nd, lib.autograd, _depthwise(lib, 2), arr(_randn(*LAYER)), arr(_randn(64, 1, 3, 3))
    )


@case("Crop 56 -> 50")
def _(lib: Any, arr: Callable[..., Any]) -> Callable[[], Any]:
    x = arr(_randn(*LAYER))
    return lambda: lib.nd.Crop(x, offset=(2, 2), h_w=(50, 50))


@case("depth_to_space 2")
def _(lib: Any, arr: Callable[..., Any]) -> Callable[[], Any]:
    x = arr(_randn(*LAYER))
    return lambda: lib.nd.depth_to_space(x, 2)


@case("space_to_depth 2")
def _(lib: Any, arr: Callable[..., Any]) -> Callable[[], Any]:
    x = arr(_randn(*LAYER))
    return lambda: lib.nd.space_to_depth(x, 2)


@case("Correlation d=4")
def _(lib: Any, arr: Callable[..., Any]) -> Callable[[], Any]:
    a, b = arr(_randn(2, 32, 32, 32)), arr(_randn(2, 32, 32, 32, seed=1))
    kw = {"kernel_size": 1, "max_displacement": 4, "stride1": 1, "stride2": 1, "pad_size": 4}
    return lambda: lib.nd.Correlation(a, b, **kw)


@case("im2col 3x3 pad 1")
def _(lib: Any, arr: Callable[..., Any]) -> Callable[[], Any]:
    x = arr(_randn(8, 64, 28, 28))
    return lambda: lib.nd.im2col(x, kernel=(3, 3), pad=(1, 1))


@case("col2im 3x3 pad 1")
def _(lib: Any, arr: Callable[..., Any]) -> Callable[[], Any]:
    c = arr(_randn(8, 576, 784))
    return lambda: lib.nd.col2im(c, output_size=(28, 28), kernel=(3, 3), pad=(1, 1))


# -- rows, sequences, casts -----------------------------------------------------------------
@case("argmax last axis")
def _(lib: Any, arr: Callable[..., Any]) -> Callable[[], Any]:
    x = arr(_randn(4096, 1024))
    return lambda: lib.nd.argmax(x, axis=1)


@case("SequenceMask")
def _(lib: Any, arr: Callable[..., Any]) -> Callable[[], Any]:
    x = arr(_randn(100, 64, 512))
    lengths = arr(np.random.default_rng(1).integers(1, 100, 64).astype(np.float32))
    return lambda: lib.nd.SequenceMask(x, lengths, use_sequence_length=True)


@case("SequenceReverse")
def _(lib: Any, arr: Callable[..., Any]) -> Callable[[], Any]:
    x = arr(_randn(100, 64, 512))
    lengths = arr(np.random.default_rng(1).integers(1, 100, 64).astype(np.float32))
    return lambda: lib.nd.SequenceReverse(x, lengths, use_sequence_length=True)


@case("SequenceLast fb")
def _(lib: Any, arr: Callable[..., Any]) -> Callable[[], Any]:
    x = arr(_randn(50, 32, 256))
    lengths = arr(np.random.default_rng(1).integers(1, 50, 32).astype(np.float32))
    x.attach_grad()
    head = lib.nd.ones((32, 256))

    def run() -> Any:
        with lib.autograd.record():
            y = lib.nd.SequenceLast(x, lengths, use_sequence_length=True)
        y.backward(head)
        return x.grad

    return run


@case("shuffle 65536 rows")
def _(lib: Any, arr: Callable[..., Any]) -> Callable[[], Any]:
    x = arr(_randn(65536, 16))
    return lambda: lib.nd.random.shuffle(x)


@case("cast float32 -> float16")
def _(lib: Any, arr: Callable[..., Any]) -> Callable[[], Any]:
    x = arr(_randn(4 << 20))
    return lambda: lib.nd.cast(x, dtype="float16")


@case("cast float16 -> float32")
def _(lib: Any, arr: Callable[..., Any]) -> Callable[[], Any]:
    x = arr(_randn(4 << 20).astype(np.float16))
    return lambda: lib.nd.cast(x, dtype="float32")


@case("arange 4M")
def _(lib: Any, arr: Callable[..., Any]) -> Callable[[], Any]:
    return lambda: lib.nd.arange(0, 4 << 20)


# -- ops whose backward lagged MXNet's (helper-131's forward + backward sweep) ------------
@case("SwapAxis 1<->3 fb")
def _(lib: Any, arr: Callable[..., Any]) -> Callable[[], Any]:
    def op(x: Any) -> Any:
        return lib.nd.SwapAxis(x, dim1=1, dim2=3)

    return _fb(lib.nd, lib.autograd, op, arr(_randn(*LAYER)))


@case("UpSampling nearest x2 fb")
def _(lib: Any, arr: Callable[..., Any]) -> Callable[[], Any]:
    def op(x: Any) -> Any:
        return lib.nd.UpSampling(x, scale=2, sample_type="nearest", num_args=1)

    return _fb(lib.nd, lib.autograd, op, arr(_randn(32, 64, 28, 28)))


@case("gather_nd rows fb")
def _(lib: Any, arr: Callable[..., Any]) -> Callable[[], Any]:
    rows = np.random.default_rng(1).integers(0, 4096, (1, 8192)).astype(np.float32)
    data, indices = arr(_randn(4096, 1024)), arr(rows)

    def op(x: Any) -> Any:
        return lib.nd.gather_nd(x, indices)

    return _fb(lib.nd, lib.autograd, op, data)


@case("pad constant fb")
def _(lib: Any, arr: Callable[..., Any]) -> Callable[[], Any]:
    def op(x: Any) -> Any:
        return lib.nd.pad(x, mode="constant", pad_width=(0, 0, 0, 0, 1, 1, 1, 1))

    return _fb(lib.nd, lib.autograd, op, arr(_randn(*LAYER)))


@case("pad edge fb")
def _(lib: Any, arr: Callable[..., Any]) -> Callable[[], Any]:
    def op(x: Any) -> Any:
        return lib.nd.pad(x, mode="edge", pad_width=(0, 0, 0, 0, 1, 1, 1, 1))

    return _fb(lib.nd, lib.autograd, op, arr(_randn(*LAYER)))


@case("SoftmaxOutput fb")
def _(lib: Any, arr: Callable[..., Any]) -> Callable[[], Any]:
    label = arr(np.random.default_rng(1).integers(0, 1024, 4096).astype(np.float32))

    def op(x: Any) -> Any:
        return lib.nd.SoftmaxOutput(x, label)

    return _fb(lib.nd, lib.autograd, op, arr(_randn(4096, 1024)))


@case("khatri_rao 64x64x8 rows")
def _(lib: Any, arr: Callable[..., Any]) -> Callable[[], Any]:
    a, b, c = arr(_randn(64, 512)), arr(_randn(64, 512, seed=1)), arr(_randn(8, 512, seed=2))
    return lambda: lib.nd.khatri_rao(a, b, c)


def _affine(lib: Any, arr: Callable[..., Any]) -> Any:
    """Near-identity affine maps for 32 images, and GridGenerator on them at 224 x 224."""
    theta = np.tile(np.float32([1, 0.1, 0, -0.1, 1, 0]), (32, 1)) + 0.01 * _randn(32, 6)
    return arr(theta), lambda t: lib.nd.GridGenerator(
        t, transform_type="affine", target_shape=(224, 224)
    )


@case("GridGenerator affine 224")
def _(lib: Any, arr: Callable[..., Any]) -> Callable[[], Any]:
    theta, op = _affine(lib, arr)
    return lambda: op(theta)


@case("GridGenerator affine 224 fb")
def _(lib: Any, arr: Callable[..., Any]) -> Callable[[], Any]:
    theta, op = _affine(lib, arr)
    return _fb(lib.nd, lib.autograd, op, theta)


# -- linalg on stacks of 8 matrices --------------------------------------------------------
def _spd(n: int) -> np.ndarray:
    g = np.random.default_rng(n).standard_normal((8, n, n))
    return (g @ g.transpose(0, 2, 1) + n * np.eye(n)).astype(np.float32)


@case("linalg inverse 8x256")
def _(lib: Any, arr: Callable[..., Any]) -> Callable[[], Any]:
    a = arr(_spd(256))
    return lambda: lib.nd.linalg.inverse(a)


@case("linalg potrf 8x512")
def _(lib: Any, arr: Callable[..., Any]) -> Callable[[], Any]:
    a = arr(_spd(512))
    return lambda: lib.nd.linalg.potrf(a)


@case("linalg potri 8x512")
def _(lib: Any, arr: Callable[..., Any]) -> Callable[[], Any]:
    factor = arr(np.linalg.cholesky(_spd(512).astype(np.float64)).astype(np.float32))
    return lambda: lib.nd.linalg.potri(factor)


@case("linalg slogdet 8x256")
def _(lib: Any, arr: Callable[..., Any]) -> Callable[[], Any]:
    a = arr(_spd(256))
    return lambda: lib.nd.linalg.slogdet(a)[1]


@case("linalg gelqf 8x256")
def _(lib: Any, arr: Callable[..., Any]) -> Callable[[], Any]:
    a = arr(_randn(8, 256, 256))
    return lambda: lib.nd.linalg.gelqf(a)[0]


@case("linalg syevd 8x256")
def _(lib: Any, arr: Callable[..., Any]) -> Callable[[], Any]:
    a = arr(_spd(256))
    return lambda: lib.nd.linalg.syevd(a)[0]


def run_here(lib_name: str, repeat: int, names: list[str]) -> dict[str, float]:
    """{case: ms} for the named cases, on nnvmpy or mxnet (`lib_name`)."""
    lib: Any = __import__(lib_name)  # both expose nd and autograd at the top level

    def arr(a: np.ndarray) -> Any:
        return lib.nd.array(a, dtype=a.dtype)

    results = {}
    for name in names:
        call = CASES[name](lib, arr)

        def timed(call: Callable[[], Any] = call) -> None:
            out = call()
            for o in out if isinstance(out, list) else [out]:
                o.wait_to_read()

        results[name] = best_of(timed, repeat, warmup=2)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-k", nargs="*", default=[], help="only cases naming one of these")
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--mxnet", help="a venv with MXNet 1.9.1 (its bin/python runs this)")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    names = [n for n in CASES if not args.k or any(k.lower() in n.lower() for k in args.k)]
    if args.worker:
        print(json.dumps(run_here(args.worker, args.repeat, names)))
        return
    theirs: dict[str, float] = {}
    if args.mxnet:
        theirs = results_in(args.mxnet, __file__, ["--repeat", str(args.repeat), "-k", *args.k])
    ours = run_here("nnvmpy", args.repeat, names)
    print(f"CPU, float32, best of {args.repeat} ms; load {os.getloadavg()[0]:.1f}")
    order = sorted(names, key=lambda n: -ours[n] / theirs[n]) if theirs else names
    print(f"{'case':<34}{'nnvmpy':>9}", end="")
    print(f"{'MXNet':>9}{'ratio':>8}" if theirs else "")
    for name in order:
        line = f"{name:<34}{ours[name]:9.2f}"
        if name in theirs:
            line += f"{theirs[name]:9.2f}{ours[name] / theirs[name]:7.2f}x"
        print(line)
    if theirs:
        print("ratio: nnvmpy's time over MXNet's (below 1: nnvmpy is faster)")


if __name__ == "__main__":
    sys.exit(main())
