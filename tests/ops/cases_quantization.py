"""OpCase rows for ops/quantization: references written from MXNet's documented formulas
(symmetric ranges: one int8 step is MaxAbs(min, max) / 127, uint8 / 255, int32 / (2^31-1)),
with loops over outputs where the op is a contraction. All forward-only (integer outputs):
grad=False; check_op draws float inputs, so rows with integer data skip it."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from op_db import OpCase

I32 = 2147483647


def _r(v: float) -> np.ndarray:
    return np.array([v], np.float32)


def _maxabs(lo: np.ndarray, hi: np.ndarray) -> float:
    return max(abs(float(lo[0])), abs(float(hi[0])))


def _int8_codes(x: np.ndarray, r: float) -> np.ndarray:
    out = [math.copysign(math.trunc(min(abs(v) * 127.0 / r + 0.5, 127.0)), v) for v in x.ravel()]
    return np.array(out).reshape(x.shape)


# -- quantize_v2 -------------------------------------------------------------------------


def quantize_v2_int8_ref(x: np.ndarray) -> list[np.ndarray]:
    r = max(abs(x.min()), abs(x.max()))
    return [_int8_codes(x, r), np.array([-r]), np.array([r])]


def quantize_v2_uint8_calib_ref(x: np.ndarray, **p: Any) -> list[np.ndarray]:
    lo, hi = p["min_calib_range"], p["max_calib_range"]
    codes = [
        math.trunc(min(max((v - lo) * 255.0 / (hi - lo) + 0.5, 0.0), 255.0)) for v in x.ravel()
    ]
    return [np.array(codes).reshape(x.shape), np.array([lo]), np.array([hi])]


# -- requantize (float32 arithmetic, as the formula is stated for float32) --------------


def requantize_ref(q: np.ndarray, lo: np.ndarray, hi: np.ndarray, **p: Any) -> list[np.ndarray]:
    scale = np.float32(_maxabs(lo, hi) / I32)
    x = q.astype(np.int32).astype(np.float32) * scale
    if "min_calib_range" in p:
        r = np.float32(max(abs(p["min_calib_range"]), abs(p["max_calib_range"])))
    else:
        r = np.float32(max(abs(q.min()), abs(q.max()))) * scale
    s = np.float32(127.0 / r)
    codes = [
        math.copysign(math.trunc(float(min(abs(v) * s + np.float32(0.5), 127.0))), v)
        for v in x.ravel()
    ]
    return [np.array(codes).reshape(q.shape), np.array([-r]), np.array([r])]


def _requantize_inputs(rng: np.random.Generator, dtype: Any) -> list[np.ndarray]:
    q = rng.integers(-(10**9), 10**9, (4, 6)).astype(np.int32)
    return [q, _r(-1010.0), _r(1020.0)]


# -- flatten / act / pooling: the range passes through ----------------------------------


def _codes(kind: Any, shape: tuple[int, ...]) -> Any:
    info = np.iinfo(kind)

    def make(rng: np.random.Generator, dtype: Any) -> list[np.ndarray]:
        q = rng.integers(info.min, int(info.max) + 1, shape).astype(kind)
        return [q, _r(-2.5), _r(3.0)]

    return make


def flatten_ref(q: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> list[np.ndarray]:
    return [q.reshape(q.shape[0], -1), lo, hi]


def relu_ref(q: np.ndarray, lo: np.ndarray, hi: np.ndarray, **p: Any) -> list[np.ndarray]:
    return [np.array([max(v, 0.0) for v in q.ravel()]).reshape(q.shape), lo, hi]


def pool_max_ref(q: np.ndarray, lo: np.ndarray, hi: np.ndarray, **p: Any) -> list[np.ndarray]:
    (kh, kw), (sh, sw) = p["kernel"], p["stride"]
    n, c, h, w = q.shape
    oh, ow = (h - kh) // sh + 1, (w - kw) // sw + 1
    out = np.zeros((n, c, oh, ow))
    for i in range(oh):
        for j in range(ow):
            out[:, :, i, j] = q[:, :, i * sh : i * sh + kh, j * sw : j * sw + kw].max(axis=(2, 3))
    return [out, lo, hi]


def pool_avg_pad_ref(q: np.ndarray, lo: np.ndarray, hi: np.ndarray, **p: Any) -> list[np.ndarray]:
    """3x3 windows, stride 2, pad 1, 'valid': the divisor counts the padding (always 9)."""
    x = np.pad(q, [(0, 0), (0, 0), (1, 1), (1, 1)])
    n, c, h, w = x.shape
    oh, ow = (h - 3) // 2 + 1, (w - 3) // 2 + 1
    out = np.zeros((n, c, oh, ow))
    for i in range(oh):
        for j in range(ow):
            out[:, :, i, j] = np.rint(
                x[:, :, 2 * i : 2 * i + 3, 2 * j : 2 * j + 3].sum(axis=(2, 3)) / 9
            )
    return [out, lo, hi]


# -- int32 accumulators -----------------------------------------------------------------


def _fc_inputs(kind: Any, bias: bool) -> Any:
    def make(rng: np.random.Generator, dtype: Any) -> list[np.ndarray]:
        lo_d = 0 if kind == np.uint8 else -127
        x = rng.integers(lo_d, 128, (3, 2, 4)).astype(kind)
        w = rng.integers(-127, 128, (5, 8)).astype(np.int8)
        head = [x, w] + ([rng.integers(-127, 128, (5,)).astype(np.int8)] if bias else [])
        ranges = [_r(-0.0), _r(2.0), _r(-1.5), _r(0.5)] + ([_r(-3.0), _r(1.0)] if bias else [])
        return head + ranges

    return make


def _int32_ref(data_steps: float, bias: bool, product: Any) -> Any:
    def ref(*a: np.ndarray, **p: Any) -> list[np.ndarray]:
        n = 3 if bias else 2
        rng_ = a[n:]
        step = (_maxabs(rng_[0], rng_[1]) / data_steps) * (_maxabs(rng_[2], rng_[3]) / 127.0)
        out = product(a[0], a[1], p)
        if bias:
            b = a[2] * (_maxabs(rng_[4], rng_[5]) / 127.0) / step
            shape = [1] * out.ndim
            shape[1] = -1
            out = out + np.rint(b).reshape(shape)
        return [out, np.array([-step * I32]), np.array([step * I32])]

    return ref


def _fc_product(x: np.ndarray, w: np.ndarray, p: dict[str, Any]) -> np.ndarray:
    x2 = x.reshape(x.shape[0], -1)
    out = np.zeros((x2.shape[0], w.shape[0]))
    for i in range(x2.shape[0]):
        for j in range(w.shape[0]):
            out[i, j] = sum(float(u) * float(v) for u, v in zip(x2[i], w[j]))
    return out


def _conv_product(x: np.ndarray, w: np.ndarray, p: dict[str, Any]) -> np.ndarray:
    """Direct loops: pad 1, stride 2, 3x3 kernel, one group."""
    xp = np.pad(x, [(0, 0), (0, 0), (1, 1), (1, 1)])
    n, f = x.shape[0], w.shape[0]
    oh, ow = (xp.shape[2] - 3) // 2 + 1, (xp.shape[3] - 3) // 2 + 1
    out = np.zeros((n, f, oh, ow))
    for b in range(n):
        for k in range(f):
            for i in range(oh):
                for j in range(ow):
                    out[b, k, i, j] = np.sum(xp[b, :, 2 * i : 2 * i + 3, 2 * j : 2 * j + 3] * w[k])
    return out


def _conv_inputs(rng: np.random.Generator, dtype: Any) -> list[np.ndarray]:
    x = rng.integers(-127, 128, (2, 3, 5, 6)).astype(np.int8)
    w = rng.integers(-127, 128, (4, 3, 3, 3)).astype(np.int8)
    b = rng.integers(-127, 128, (4,)).astype(np.int8)
    return [x, w, b, _r(-1.0), _r(1.0), _r(-0.25), _r(0.5), _r(-2.0), _r(8.0)]


# -- concat / elemwise_add: codes moved onto the output's step --------------------------


def _concat_inputs(rng: np.random.Generator, dtype: Any) -> list[np.ndarray]:
    a = rng.integers(-127, 128, (2, 3)).astype(np.int8)
    b = rng.integers(0, 256, (2, 2)).astype(np.uint8)
    return [a, b, _r(-1.0), _r(1.0), _r(0.0), _r(3.0)]


def concat_ref(a: np.ndarray, b: np.ndarray, *r: np.ndarray, **p: Any) -> list[np.ndarray]:
    """int8 output over (-1, 3): step 3/127; a's step 1/127, b's (uint8) 3/255."""
    out_step = 3.0 / 127
    qa = np.rint(a * (1.0 / 127) / out_step)
    qb = np.clip(np.rint(b * (3.0 / 255) / out_step), -128, 127)
    return [np.concatenate([qa, qb], axis=1), np.array([-1.0]), np.array([3.0])]


def _add_inputs(rng: np.random.Generator, dtype: Any) -> list[np.ndarray]:
    a = rng.integers(-127, 128, (3, 4)).astype(np.int8)
    b = rng.integers(-127, 128, (3, 4)).astype(np.int8)
    return [a, b, _r(-0.5), _r(0.5), _r(-2.0), _r(1.5)]


def add_ref(a: np.ndarray, b: np.ndarray, *r: np.ndarray, **p: Any) -> list[np.ndarray]:
    real = a * (0.5 / 127) + b * (2.0 / 127)
    if "min_calib_range" in p:
        rng_ = max(abs(p["min_calib_range"]), abs(p["max_calib_range"]))
        q = np.clip(np.rint(real * 127 / rng_), -128, 127)
        return [q, np.array([p["min_calib_range"]]), np.array([p["max_calib_range"]])]
    return [np.rint(real * I32 / 2.5), np.array([-2.5]), np.array([2.5])]


def _embedding_inputs(rng: np.random.Generator, dtype: Any) -> list[np.ndarray]:
    idx = np.array([[0, 4, 2], [7, -1, 3]], np.float32)  # 7 and -1 are clipped
    w = rng.integers(-127, 128, (5, 3)).astype(np.int8)
    return [idx, w, _r(-0.5), _r(0.25)]


def embedding_ref(idx: np.ndarray, w: np.ndarray, lo: np.ndarray, hi: np.ndarray, **p: Any) -> Any:
    out = np.zeros((*idx.shape, w.shape[1]))
    for pos in np.ndindex(idx.shape):
        out[pos] = w[min(max(int(idx[pos]), 0), p["input_dim"] - 1)]
    return [out, lo, hi]


# -- calibrate_entropy ------------------------------------------------------------------


def _sum32(v: np.ndarray) -> np.float32:
    """A float32 sum added in order (as a C++ std::accumulate of floats)."""
    total = np.float32(0)
    for x in v:
        total = np.float32(total + x)
    return total


def _smooth(p: np.ndarray, eps: float = 1e-4) -> np.ndarray | None:
    """eps for each empty bin, taken evenly from the others (float32); None if it cannot."""
    zeros = int((p == 0).sum())
    if zeros == p.size:
        return None
    taken = np.float32(np.float32(eps) * np.float32(zeros)) / np.float32(p.size - zeros)
    if taken >= 1:
        return None
    return (p + np.where(p == 0, np.float32(eps), -taken)).astype(np.float32)


def calibrate_ref(hist: np.ndarray, edges: np.ndarray, **p: Any) -> list[np.ndarray]:
    """Every candidate width, as MXNet 1.9.1's calibrate_entropy computes it: p is the
    middle 2i+1 bins with the outliers in its end bins; q merges the slice's integer
    counts without its first bin into num_quantized_bins groups and spreads each group's
    sum over its non-zero counts, where p is non-empty; KL(p || q) of the smoothed,
    normalised bins, all in float32 (sequential sums)."""
    nq, mid = p["num_quantized_bins"], hist.size // 2
    f32 = np.float32
    best = (edges[-1], np.inf)
    for i in range(nq // 2, hist.size - mid):
        lo, hi = mid - i, mid + i + 1
        ref = hist[lo:hi].astype(f32)
        ref[0] = f32(hist[: lo + 1].sum())
        ref[-1] = f32(hist[hi - 1 :].sum()) if hi - lo > 1 else f32(hist.sum())
        sliced = hist[lo:hi].astype(np.int64)
        sliced[0] = 0
        m = sliced.size // nq
        q = np.zeros(sliced.size, f32)
        for g in range(nq):
            stop = sliced.size if g == nq - 1 else (g + 1) * m
            norm = np.count_nonzero(sliced[g * m : stop])
            if norm:
                share = f32(f32(sliced[g * m : stop].sum()) / f32(norm))
                q[g * m : stop] = np.where(ref[g * m : stop] != 0, share, f32(0))
        a, b = _smooth(ref), _smooth(q)
        if a is None or b is None or (a <= 0).any() or (b <= 0).any():
            continue
        a, b = a / _sum32(a), b / _sum32(b)
        kl = f32(0)
        for x, y in zip(a, b):
            kl = f32(kl + f32(x * f32(np.log(f32(x / y)))))
        if kl < best[1]:
            best = (edges[hi], kl)
    return [np.array([best[0]]), np.array([best[1]])]


def _hist_inputs(rng: np.random.Generator, dtype: Any) -> list[np.ndarray]:
    hist, edges = np.histogram(rng.normal(size=2000), bins=21, range=(-4.0, 4.0))
    return [hist.astype(np.float32), edges.astype(np.float32)]


_NO_CHECK = {"dtypes": (np.float32,), "grad": False, "check_op": False}

CASES = [
    OpCase("_contrib_quantize_v2", shapes=[(3, 5)], reference=quantize_v2_int8_ref,
           low=-1.5, high=2.5, dtypes=(np.float32,), grad=False),
    OpCase("_contrib_quantize_v2", shapes=[(3, 5)], reference=quantize_v2_uint8_calib_ref,
           params={"out_type": "uint8", "min_calib_range": -0.5, "max_calib_range": 1.0},
           low=-1.0, high=1.5, dtypes=(np.float32,), grad=False, id="uint8-calib"),
    OpCase("_contrib_requantize", shapes=[(4, 6), (1,), (1,)], reference=requantize_ref,
           inputs=_requantize_inputs, rtol=1e-5, **_NO_CHECK),
    OpCase("_contrib_requantize", shapes=[(4, 6), (1,), (1,)], reference=requantize_ref,
           params={"min_calib_range": -134.349, "max_calib_range": 523.43},
           inputs=_requantize_inputs, rtol=1e-5, id="calib", **_NO_CHECK),
    OpCase("_contrib_quantized_flatten", shapes=[(2, 3, 4), (1,), (1,)],
           reference=flatten_ref, inputs=_codes(np.int8, (2, 3, 4)), **_NO_CHECK),
    OpCase("_contrib_quantized_act", shapes=[(3, 4), (1,), (1,)], reference=relu_ref,
           params={"act_type": "relu"}, inputs=_codes(np.int8, (3, 4)), **_NO_CHECK),
    OpCase("_contrib_quantized_pooling", shapes=[(2, 3, 7, 8), (1,), (1,)],
           reference=pool_max_ref, params={"kernel": (3, 3), "stride": (2, 2), "pool_type": "max"},
           inputs=_codes(np.int8, (2, 3, 7, 8)), **_NO_CHECK),
    OpCase("_contrib_quantized_pooling", shapes=[(2, 3, 7, 8), (1,), (1,)],
           reference=pool_avg_pad_ref,
           params={"kernel": (3, 3), "stride": (2, 2), "pad": (1, 1), "pool_type": "avg"},
           inputs=_codes(np.uint8, (2, 3, 7, 8)), id="avg-uint8", **_NO_CHECK),
    OpCase("_contrib_quantized_fully_connected", shapes=[(3, 2, 4), (5, 8), (5,)] + [(1,)] * 6,
           reference=_int32_ref(127.0, True, _fc_product), params={"num_hidden": 5},
           inputs=_fc_inputs(np.int8, True), rtol=1e-6, **_NO_CHECK),
    OpCase("_contrib_quantized_fully_connected", shapes=[(3, 2, 4), (5, 8)] + [(1,)] * 4,
           reference=_int32_ref(255.0, False, _fc_product),
           params={"num_hidden": 5, "no_bias": True}, inputs=_fc_inputs(np.uint8, False),
           rtol=1e-6, id="uint8-nobias", **_NO_CHECK),
    OpCase("_contrib_quantized_conv", shapes=[(2, 3, 5, 6), (4, 3, 3, 3), (4,)] + [(1,)] * 6,
           reference=_int32_ref(127.0, True, _conv_product),
           params={"kernel": (3, 3), "num_filter": 4, "pad": (1, 1), "stride": (2, 2)},
           inputs=_conv_inputs, rtol=1e-6, **_NO_CHECK),
    OpCase("_contrib_quantized_concat", shapes=[(2, 3), (2, 2)] + [(1,)] * 4,
           reference=concat_ref, params={"num_args": 2, "dim": 1}, inputs=_concat_inputs,
           **_NO_CHECK),
    OpCase("_contrib_quantized_elemwise_add", shapes=[(3, 4), (3, 4)] + [(1,)] * 4,
           reference=add_ref, inputs=_add_inputs, rtol=1e-6, **_NO_CHECK),
    OpCase("_contrib_quantized_elemwise_add", shapes=[(3, 4), (3, 4)] + [(1,)] * 4,
           reference=add_ref, params={"min_calib_range": -1.0, "max_calib_range": 2.0},
           inputs=_add_inputs, id="calib", **_NO_CHECK),
    OpCase("_contrib_quantized_embedding", shapes=[(2, 3), (5, 3), (1,), (1,)],
           reference=embedding_ref, params={"input_dim": 5, "output_dim": 3},
           inputs=_embedding_inputs, **_NO_CHECK),
    OpCase("_contrib_calibrate_entropy", shapes=[(21,), (22,)], reference=calibrate_ref,
           params={"num_quantized_bins": 5}, inputs=_hist_inputs, rtol=1e-4, atol=1e-5,
           **_NO_CHECK),
]  # fmt: skip
