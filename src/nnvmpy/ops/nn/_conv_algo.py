"""Per-layer convolution algorithm choice, measured once per shape and cached on disk.

Why. Which CPU algorithm is fastest for a 3x3 stride-1 convolution depends on the layer:
Winograd does 2.25x (F(2x2)) or 4x (F(4x4)) fewer multiplies but pays for its input and
output transforms, which cost most on layers with few channels, while the GEMM paths
(_conv_shift's shifted GEMMs, im2col) keep BLAS at its peak. As cuDNN's find and MXNet's
`cudnn_tune` do, the first call with a new (direction, shape, dtype, threads) times the
candidates once on the layer's own data and remembers the fastest: in memory, and in a
JSON file (NNVMPY_CONV_ALGO_CACHE) that later processes read instead of measuring.

NNVMPY_CONV_ALGO forces a choice: 'gemm' (never Winograd), 'winograd' (F(2x2,3x3)),
'winograd2', 'winograd4' (F(4x4,3x3)), or 'auto' (default: measure). A forced Winograd
applies only where Winograd can run (see `eligible`); elsewhere the GEMM paths run.
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from ... import config, threads
from ...base import NNVMError
from . import _blas

#: the names a choice can take, and the Winograd output tile each means (0: GEMM paths)
TILE_OF = {"gemm": 0, "winograd": 2, "winograd2": 2, "winograd4": 4}
_CHOICES = ("auto", *TILE_OF)
#: a measured choice only, for layers where 'gemm' means the shifted GEMMs (_conv_shift):
#: im2col chunks instead. Its GEMMs have cg*9 inner or outer size where each shifted one
#: has cg. Which wins depends on the BLAS and the batch: ResNet-18's 64-channel 56x56
#: layer at batch 32, two threads, filter gradient: OpenBLAS im2col 51 ms vs shifted 77,
#: MKL 46 vs 37.
IM2COL = "im2col"

_lock = threading.Lock()
_memory: dict[str, str] = {}
_loaded_from: str | None = None


def eligible(s: Any, dtype: Any) -> bool:
    """A 2-D 3x3 stride-1 undilated convolution with padding <= 2, float32/64, not
    depthwise (its direct loops are cheaper than any GEMM): Winograd can run."""
    from nnvmpy.ops.nn._conv_winograd import supported

    win = s.win
    return (
        s.planar
        and not s.depthwise
        and np.dtype(dtype) in (np.dtype(np.float32), np.dtype(np.float64))
        and supported((win.kh, win.kw), (win.sh, win.sw), (win.dh, win.dw), (win.ph, win.pw))
    )


def forced() -> str:
    """NNVMPY_CONV_ALGO, checked."""
    value = config.CONV_ALGO.get().strip().lower() or "auto"
    if value not in _CHOICES:
        raise NNVMError(
            f"Convolution: NNVMPY_CONV_ALGO must be one of {', '.join(_CHOICES)}, got {value!r}"
        )
    return value


def cache_path() -> str:
    """The JSON file of measured choices ('' : memory only)."""
    path = config.CONV_ALGO_CACHE.get().strip()
    return os.path.expanduser(path) if path else ""


#: bumped when an algorithm's implementation changes enough that choices measured before
#: are stale (2: Winograd's plane layout and lanes, which turned the 56x56 layers from
#: im2col to Winograd; 3: batch-1 Winograd as one block with team transforms; 4: the
#: cold-weight charge below): entries of other versions in the file are measured again
ALGO_VERSION = 4


def key(kind: str, s: Any, dtype: Any) -> str:
    """The cache key: direction, sizes, padding, groups, dtype, the thread width the layer
    runs at now and the BLAS the GEMMs run on (a choice timed with OpenBLAS is wrong for
    MKL).

    The width, not the budget: the load governor (threads.py) narrows the teams to one
    thread while other processes hold a core, and the best algorithm differs between the
    two. ResNet-18's 64-channel 56x56 layer at batch 32 on MKL: shifted GEMMs 40 ms vs
    F(2x2) 55 ms at two threads, but 59 vs 42 ms at one. Keyed by the budget, a choice
    timed while the machine was busy was kept for the quiet machine too. The last field
    is ALGO_VERSION."""
    win = s.win
    sizes = (s.n, s.c, s.h, s.w, s.f, s.groups, win.ph, win.pw)
    blas = _blas.name()
    dims = "x".join(map(str, sizes))
    return f"{kind}|{dims}|{np.dtype(dtype).name}|t{threads.width()}|{blas}|v{ALGO_VERSION}"


def _load(path: str) -> None:
    global _loaded_from
    if _loaded_from == path:
        return
    _loaded_from = path
    if not path:
        return
    try:
        with open(path) as f:
            data = json.load(f)
    except (OSError, ValueError):
        return  # no file yet, or a damaged one: measure again
    if isinstance(data, dict):
        for k, v in data.items():
            algo = v.get("algo") if isinstance(v, dict) else v
            if isinstance(algo, str) and (algo in TILE_OF or algo == IM2COL):
                _memory.setdefault(k, algo)


def _save(path: str, k: str, choice: str, times: dict[str, float]) -> None:
    """Merge one entry, {"algo": choice, "ms": the times measured}, into the JSON file
    (atomic replace; other processes' entries kept)."""
    if not path:
        return
    try:
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        try:
            with open(path) as f:
                data = json.load(f)
            if not isinstance(data, dict):
                data = {}
        except (OSError, ValueError):
            data = {}
        data[k] = {"algo": choice, "ms": {n: round(t * 1e3, 3) for n, t in times.items()}}
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path) or ".", suffix=".tmp")
        with os.fdopen(fd, "w") as f:
            json.dump(data, f, indent=0, sort_keys=True)
        os.replace(tmp, path)
    except OSError:
        pass  # a read-only cache directory costs a measurement per process, nothing else


#: timed runs per candidate after a warm-up run (the best counts: load only slows runs)
REPEATS = 3

#: Bytes per second a layer reads its weights at when they come from memory. The timing
#: runs a layer over and over on the same weights, which then stay in the cache; in a
#: network every other layer passes between two calls and evicts them. Winograd reads its
#: transformed filter U, (a/3)^2 times the weights, so its timed runs flattered it most:
#: ResNet-18's 512 @ 7x7 layer at batch 1 timed F(2x2) at 1.08 ms against the GEMM's 1.10,
#: but in the network ran 1.75 against 1.20 (its U is 16.8 MB, the weights 9.4). Each
#: Winograd candidate is charged U's extra bytes at this rate (0.46 ms there; 0.1 ms for
#: the 256 @ 14x14 F(2x2), 0.03 for 64 @ 56x56 F(4x4); nothing that matters at batch 32).
COLD_WEIGHT_BYTES_PER_S = 16e9


def cold_charge(name: str, s: Any, dtype: Any) -> float:
    """Seconds added to candidate `name`'s timed run: its transformed filter's bytes
    beyond the weights', read at COLD_WEIGHT_BYTES_PER_S (0 for the GEMM paths)."""
    tile = TILE_OF.get(name, 0)
    if not tile:
        return 0.0
    extra = ((tile + 2) ** 2 - 9) * s.f * s.cg * np.dtype(dtype).itemsize
    return extra / COLD_WEIGHT_BYTES_PER_S


def _time(fn: Callable[[], None]) -> float:
    fn()  # compiles (first time) and warms the caches
    best = float("inf")
    for _ in range(REPEATS):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def choose(
    kind: str,
    s: Any,
    dtype: Any,
    names: tuple[str, ...],
    build: Callable[[], dict[str, Callable[[], None]]],
) -> str:
    """The algorithm for this layer among `names`: forced, remembered, or measured now
    over build()'s candidates (name -> a run of the layer into scratch output) and
    remembered. build() runs only to measure: its scratch output and closures cost ~25
    us, on every call of every convolution when they were made up front."""
    value = forced()
    if value != "auto":
        return value
    k = key(kind, s, dtype)
    path = cache_path()
    with _lock:
        _load(path)
        found = _memory.get(k)
    if found is not None and found in names:
        return found
    candidates = build()
    times = {name: _time(fn) + cold_charge(name, s, dtype) for name, fn in candidates.items()}
    best = min(times, key=lambda name: times[name])
    with _lock:
        _memory[k] = best
        _save(path, k, best, times)
    return best


def forget() -> None:
    """Drop the choices in memory (the file is read again on the next choice)."""
    global _loaded_from
    with _lock:
        _memory.clear()
        _decisions.clear()
        _loaded_from = None


# -- the decisions _conv_cpu asks for -------------------------------------------------------

#: every decision made in this process, by (kind, shape, dtype, thread width, BLAS,
#: NNVMPY_CONV_ALGO): the way to it (eligibility, the forced value, the cache key and
#: file, the candidates' names) took 23-30 us of Python per convolution call, 0.6 ms of
#: a ResNet-18 batch-1 inference. forget() clears it.
_decisions: dict[tuple[Any, ...], str] = {}


def _decision_key(kind: str, s: Any, dtype: Any) -> tuple[Any, ...]:
    return (kind, s, dtype, threads.width(), id(_blas.active()), config.CONV_ALGO.get())


def _decided(kind: str, s: Any, dtype: Any) -> str | None:
    return _decisions.get(_decision_key(kind, s, dtype))


def _decide(kind: str, s: Any, dtype: Any, decide: Callable[[], str]) -> str:
    key = _decision_key(kind, s, dtype)
    choice = _decisions[key] = decide()
    return choice


def _budget(s: Any) -> int:
    from nnvmpy.ops.nn._conv_cpu import MAX_WORKSPACE_BYTES

    return min(s.workspace_mb << 20, MAX_WORKSPACE_BYTES)


#: below this many direct-convolution FLOPs 'auto' keeps the GEMM paths without measuring:
#: Winograd's transforms cost most there, a timing would be noise, and small layers (unit
#: tests' among them) then run the same code on every machine. ResNet-18's smallest 3x3
#: layer at batch 1 does 115 MFLOP.
MIN_AUTO_FLOPS = 20_000_000


def _small(s: Any) -> bool:
    return 2 * s.n * s.f * s.cg * 9 * s.win.ho * s.win.wo < MIN_AUTO_FLOPS


def _preset(s: Any, dtype: Any) -> int | None:
    """The tile decided without measuring (0 when Winograd cannot run, the forced one,
    0 for a small layer), or None: measure."""
    if not eligible(s, dtype):
        return 0
    value = forced()
    if value != "auto":
        return TILE_OF[value]
    return 0 if _small(s) else None


def _name(tile: int) -> str:
    return {0: "gemm", 2: "winograd2", 4: "winograd4"}[tile]


def _names(s: Any, dtype: Any, winograd: tuple[str, ...]) -> tuple[str, ...]:
    """The candidates: 'gemm', the Winograd ones, and IM2COL where 'gemm' means the
    shifted GEMMs (else they are one)."""
    from nnvmpy.ops.nn import _conv_shift

    im2col = (IM2COL,) if _conv_shift.supported(s, dtype) else ()
    return ("gemm", *winograd, *im2col)


def forward_tile(s: Any, x: Any, w: Any, bias: Any, res: Any, training: bool = True) -> int:
    """The Winograd output tile for this forward convolution, 0 for the GEMM paths."""
    return TILE_OF.get(forward_algo(s, x, w, bias, res, training), 0)


def forward_algo(s: Any, x: Any, w: Any, bias: Any, res: Any, training: bool = True) -> str:
    """The algorithm for this forward convolution: 'gemm', IM2COL or a Winograd name.

    training: the forward of a training step (is_train), whose outputs feed gradients:
    F(4x4) is not a candidate there (see _forward_algo)."""
    kind = "forward_train" if training else "forward"
    return _decided(kind, s, x.dtype) or _decide(
        kind, s, x.dtype, lambda: _forward_algo(s, x, w, bias, res, training)
    )


def _forward_algo(s: Any, x: Any, w: Any, bias: Any, res: Any, training: bool) -> str:
    """The algorithm for this forward convolution: 'gemm', IM2COL or a Winograd name.

    training: the forward of a training step (is_train), whose outputs feed gradients:
    F(4x4) is not a candidate there (timed on a busy machine it won every forward layer
    of ResNet-18, and a training step's |dlogp| then reached 1.2e-3, over issue 17's
    1e-3); inference (is_train=False) may take it. The two choices are kept apart."""
    tile = _preset(s, x.dtype)
    if tile is not None:
        return _name(tile)
    names = _names(s, x.dtype, ("winograd2",) if training else ("winograd2", "winograd4"))

    def build() -> dict[str, Callable[[], None]]:
        from nnvmpy.ops.nn import _conv_cpu, _conv_winograd

        scratch = np.empty((s.n, s.f, 1, s.win.ho, s.win.wo), x.dtype)
        write = _conv_cpu.OpReqType.kWriteTo
        x4, w4, o4 = _conv_cpu.planar(x), _conv_cpu.planar(w), _conv_cpu.planar(scratch)
        pad = (s.win.ph, s.win.pw)

        def wino(m: int) -> Callable[[], None]:
            return lambda: _conv_winograd.conv3x3(
                x4, w4, bias, o4, pad, s.groups, False, res, _budget(s), m
            )

        def gemm(shifted: bool = True) -> None:
            _conv_cpu.forward(s, x, w, bias, scratch, write, res, gemm_only=True, shifted=shifted)

        runs = {"gemm": gemm, "winograd2": wino(2), "winograd4": wino(4)}
        runs[IM2COL] = lambda: gemm(shifted=False)
        return {name: runs[name] for name in names}

    kind = "forward_train" if training else "forward"
    return choose(kind, s, x.dtype, names, build)


def backward_data_tile(s: Any, dy: Any, w: Any, res: Any) -> int:
    """The Winograd tile for this convolution's data gradient, 0 for the GEMM paths."""
    return TILE_OF.get(backward_data_algo(s, dy, w, res), 0)


def backward_data_algo(s: Any, dy: Any, w: Any, res: Any) -> str:
    """The algorithm for this convolution's data gradient: 'gemm', IM2COL or a Winograd
    name."""
    return _decided("backward_data", s, dy.dtype) or _decide(
        "backward_data", s, dy.dtype, lambda: _backward_data_algo(s, dy, w, res)
    )


def _backward_data_algo(s: Any, dy: Any, w: Any, res: Any) -> str:
    tile = _preset(s, dy.dtype)
    if tile is not None:
        return _name(tile)
    # Not F(4x4) in training by default: with it on every layer's data gradient too, a
    # ResNet-18 step's |dlogp| against the float64 reference reached 1.2e-3 (the bar is
    # 1e-3; F(2x2) 6.9e-4, GEMM 8.4e-4). NNVMPY_CONV_ALGO=winograd4 still forces it.
    names = _names(s, dy.dtype, ("winograd2",))

    def build() -> dict[str, Callable[[], None]]:
        from nnvmpy.ops.nn import _conv_cpu, _conv_winograd

        scratch = np.empty((s.n, s.c, 1, s.h, s.w), dy.dtype)
        write, null = _conv_cpu.OpReqType.kWriteTo, _conv_cpu.OpReqType.kNullOp
        dy4, w4, o4 = _conv_cpu.planar(dy), _conv_cpu.planar(w), _conv_cpu.planar(scratch)
        pad = (2 - s.win.ph, 2 - s.win.pw)

        def gemm(shifted: bool = True) -> None:
            grads, reqs = [scratch, None], [write, null]
            _conv_cpu.backward(s, dy, None, w, grads, reqs, res, gemm_only=True, shifted=shifted)

        runs = {
            "gemm": gemm,
            "winograd2": lambda: _conv_winograd.conv3x3(
                dy4, w4, None, o4, pad, s.groups, False, res, _budget(s), 2, transpose_w=True
            ),
            IM2COL: lambda: gemm(shifted=False),
        }
        return {name: runs[name] for name in names}

    return choose("backward_data", s, dy.dtype, names, build)


def backward_weight_tile(s: Any, dy: Any, x: Any, w: Any, res: Any) -> int:
    """The Winograd tile for this convolution's filter gradient, 0 for the GEMM paths."""
    return TILE_OF.get(backward_weight_algo(s, dy, x, w, res), 0)


def backward_weight_algo(s: Any, dy: Any, x: Any, w: Any, res: Any) -> str:
    """The algorithm for this convolution's filter gradient: 'gemm', IM2COL or a
    Winograd name."""
    return _decided("backward_weight", s, dy.dtype) or _decide(
        "backward_weight", s, dy.dtype, lambda: _backward_weight_algo(s, dy, x, w, res)
    )


def _backward_weight_algo(s: Any, dy: Any, x: Any, w: Any, res: Any) -> str:
    tile = _preset(s, dy.dtype)
    if tile is not None:
        return _name(tile)
    # no F(4x4) unless forced: its filter gradient's float32 error is ~1e-5 of the largest
    # entry, 10-30x F(2x2)'s. ResNet-18's second training step against the float64
    # reference (bench_nets' |dlogp|, issue 17 asks <= 1e-3): GEMM paths 8.4e-4, F(2x2)
    # everywhere 6.9e-4, F(4x4) everywhere 1.2e-3, 'auto' 9.0e-4.
    names = _names(s, dy.dtype, ("winograd2",))

    def build() -> dict[str, Callable[[], None]]:
        from nnvmpy.ops.nn import _conv_cpu, _conv_winograd

        scratch = np.empty((s.f, s.cg, 1, 3, 3), dy.dtype)
        write, null = _conv_cpu.OpReqType.kWriteTo, _conv_cpu.OpReqType.kNullOp
        dy4, x4, o4 = _conv_cpu.planar(dy), _conv_cpu.planar(x), _conv_cpu.planar(scratch)
        pad = (s.win.ph, s.win.pw)

        def gemm(shifted: bool = True) -> None:
            grads, reqs = [None, scratch], [null, write]
            _conv_cpu.backward(s, dy, x, w, grads, reqs, res, gemm_only=True, shifted=shifted)

        runs = {
            "gemm": gemm,
            "winograd2": lambda: _conv_winograd.weight_grad3x3(
                x4, dy4, o4, pad, s.groups, False, res, _budget(s), 2
            ),
            IM2COL: lambda: gemm(shifted=False),
        }
        return {name: runs[name] for name in names}

    return choose("backward_weight", s, dy.dtype, names, build)


__all__ = [
    "IM2COL",
    "TILE_OF",
    "backward_data_algo",
    "backward_data_tile",
    "backward_weight_algo",
    "backward_weight_tile",
    "cache_path",
    "choose",
    "eligible",
    "forced",
    "forget",
    "forward_algo",
    "forward_tile",
    "key",
]
