"""OpCase rows for Deconvolution, UpSampling, Crop and the legacy _v1 layers.

References are written from the definitions, not from the kernels:

- Deconvolution scatters: every input element x[n, c, pos] adds x * w[c, f, tap] to
  the output position pos*stride + tap*dilate of a buffer padded by `pad` on each side,
  whose inner part (plus `adj` at the end) is the output. Plain loops over input
  positions and kernel taps (vectorised over images and filters only).
- UpSampling nearest is np.repeat; bilinear is that deconvolution with the FCN filter.
- Crop is a slice; the _v1 layers use cases_conv.py's references (Pooling_v1's average
  divides by the whole kernel).
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
from cases_conv import conv_reference, distinct, pool_reference, with_float16
from op_db import Inputs, OpCase

# -- references --------------------------------------------------------------------------------


def deconv_target_padding(size: int, k: int, s: int, d: int, target: int) -> tuple[int, int]:
    """(pad, adj) that make a deconvolution of `size` produce `target` (MXNet's rule)."""
    total = s * (size - 1) + d * (k - 1) + 1 - target
    return (total + 1) // 2, total % 2


def deconv_reference(
    x: np.ndarray, w: np.ndarray, b: np.ndarray | None = None, **p: Any
) -> np.ndarray:
    """Transposed convolution of (N, C, *S) data with (C, F/g, *k) weights, by scattering."""
    nd = len(p["kernel"])
    kernel = tuple(p["kernel"])
    stride = tuple(p.get("stride") or (1,) * nd)
    dilate = tuple(p.get("dilate") or (1,) * nd)
    pad = list(p.get("pad") or (0,) * nd)
    adj = list(p.get("adj") or (0,) * nd)
    if any(p.get("target_shape") or ()):
        for a, (n, k, s, d, t) in enumerate(
            zip(x.shape[2:], kernel, stride, dilate, p["target_shape"])
        ):
            pad[a], adj[a] = deconv_target_padding(n, k, s, d, t)
    groups = p.get("num_group", 1)
    n, c = x.shape[:2]
    fg = w.shape[1]
    cg = c // groups
    full = [
        s * (i - 1) + d * (k - 1) + 1 for s, i, d, k in zip(stride, x.shape[2:], dilate, kernel)
    ]
    buf = np.zeros((n, fg * groups, *[f + a + q for f, a, q in zip(full, adj, pad)]))
    for ci in range(c):
        g = ci // cg
        for pos in itertools.product(*(range(i) for i in x.shape[2:])):
            for tap in itertools.product(*(range(k) for k in kernel)):
                at = tuple(q * s + t * d for q, s, t, d in zip(pos, stride, tap, dilate))
                buf[(slice(None), slice(g * fg, (g + 1) * fg), *at)] += (
                    x[(slice(None), ci, *pos)][:, None] * w[(ci, slice(None), *tap)][None, :]
                )
    inner = tuple(slice(q, q + f - 2 * q + a) for q, f, a in zip(pad, full, adj))
    out = buf[(slice(None), slice(None), *inner)]
    if b is not None and not p.get("no_bias", True):
        out = out + b.reshape(1, -1, *([1] * nd))
    return out


def bilinear_filter(channels: int, scale: int) -> np.ndarray:
    """The (C, 1, k, k) FCN bilinear upsampling filter (as MXNet's test builds it)."""
    k = 2 * scale - scale % 2
    centre = (2 * scale - 1 - scale % 2) / (2.0 * scale)
    ramp = 1 - np.abs(np.arange(k) / scale - centre)
    return np.broadcast_to(np.outer(ramp, ramp), (channels, 1, k, k)).copy()


def upsampling_reference(*xs: np.ndarray, **p: Any) -> np.ndarray:
    if p["sample_type"] == "bilinear":
        data, weight = xs
        scale, channels = p["scale"], data.shape[1]
        k = 2 * scale - scale % 2
        params = {"kernel": (k, k), "stride": (scale, scale), "pad": (scale // 2,) * 2}
        return deconv_reference(data, weight, num_group=channels, **params)
    oh, ow = xs[0].shape[2] * p["scale"], xs[0].shape[3] * p["scale"]
    big = [x.repeat(oh // x.shape[2], axis=2).repeat(ow // x.shape[3], axis=3) for x in xs]
    if p.get("multi_input_mode", "concat") == "sum":
        return sum(big)
    return np.concatenate(big, axis=1)


def crop_reference(x: np.ndarray, *like: np.ndarray, **p: Any) -> np.ndarray:
    h, w = like[0].shape[2:] if like else p["h_w"]
    oy, ox = p.get("offset", (0, 0))
    if p.get("center_crop", False):
        oy, ox = (x.shape[2] - h) // 2, (x.shape[3] - w) // 2
    return x[:, :, oy : oy + h, ox : ox + w]


def batch_norm_v1_inference(x, gamma, beta, mean, var, eps=1e-3, fix_gamma=True, **_):
    scale = (np.ones_like(gamma) if fix_gamma else gamma) / np.sqrt(var + eps)
    shape = (1, -1) + (1,) * (x.ndim - 2)
    return (x - mean.reshape(shape)) * scale.reshape(shape) + beta.reshape(shape)


def batch_norm_inputs(rng: np.random.Generator, dtype: Any) -> Inputs:
    c = 3
    return [
        rng.normal(0.5, 2.0, size=(2, c, 3, 4)).astype(dtype),
        rng.uniform(0.5, 1.5, size=c).astype(dtype),
        rng.normal(size=c).astype(dtype),
        rng.normal(size=c).astype(dtype),
        rng.uniform(0.5, 2.0, size=c).astype(dtype),  # variances are positive
    ]


# -- rows ----------------------------------------------------------------------------------------


def deconv(id: str, data: tuple[int, ...], num_filter: int, **params: Any) -> OpCase:
    groups = params.get("num_group", 1)
    weight = (data[1], num_filter // groups, *params["kernel"])
    no_bias = params.get("no_bias", True)
    shapes = [data, weight] if no_bias else [data, weight, (num_filter,)]
    params["num_filter"] = num_filter
    return OpCase("Deconvolution", shapes, deconv_reference, params, id=id, atol=1e-4)


def upsampling(id: str, shapes: list[tuple[int, ...]], **params: Any) -> OpCase:
    params.setdefault("num_args", len(shapes))
    make = None
    if params["sample_type"] == "bilinear":
        scale, channels = params["scale"], shapes[0][1]

        def make(rng: np.random.Generator, dtype: Any) -> Inputs:
            data = rng.uniform(-1, 1, size=shapes[0]).astype(dtype)
            return [data, bilinear_filter(channels, scale).astype(dtype)]

    return OpCase("UpSampling", shapes, upsampling_reference, params, id=id, inputs=make)


def crop(id: str, shapes: list[tuple[int, ...]], **params: Any) -> OpCase:
    params.setdefault("num_args", len(shapes))
    return OpCase("Crop", shapes, crop_reference, params, id=id)


def _pool_v1(x: np.ndarray, **p: Any) -> np.ndarray:
    return pool_reference(x, v1=True, **p)


def pool_v1(id: str, data: tuple[int, ...], **params: Any) -> OpCase:
    make = distinct(data) if params.get("pool_type", "max") == "max" else None
    return OpCase("Pooling_v1", [data], _pool_v1, params, id=id, inputs=make)


CASES = [
    deconv("2x-k4s2p1", (2, 3, 4, 5), 4, kernel=(4, 4), stride=(2, 2), pad=(1, 1)),
    deconv("k3s2-adj", (2, 3, 3, 4), 2, kernel=(3, 3), stride=(2, 2), pad=(1, 0), adj=(1, 1)),
    deconv("bias", (2, 2, 3, 3), 3, kernel=(2, 3), stride=(1, 2), no_bias=False),
    deconv("stride1-pad", (1, 3, 5, 4), 2, kernel=(3, 3), pad=(1, 1)),
    deconv("dilate", (1, 2, 4, 4), 2, kernel=(2, 2), dilate=(2, 3), stride=(2, 1)),
    deconv("group2", (2, 4, 3, 3), 6, kernel=(3, 3), stride=(2, 2), num_group=2, no_bias=False),
    deconv("depthwise", (2, 3, 3, 4), 3, kernel=(4, 4), stride=(2, 2), pad=(1, 1), num_group=3),
    deconv("target", (2, 3, 4, 4), 2, kernel=(3, 3), stride=(2, 2), target_shape=(8, 8)),
    deconv("1d", (2, 3, 5), 4, kernel=(3,), stride=(2,), pad=(1,), adj=(1,), no_bias=False),
    deconv("3d", (1, 2, 2, 3, 3), 3, kernel=(2, 3, 2), stride=(2, 1, 2), pad=(0, 1, 1)),
    deconv(
        "3d-target", (1, 2, 3, 2, 2), 2, kernel=(3, 3, 3), stride=(2, 2, 2), target_shape=(5, 4, 4)
    ),
    upsampling("nearest", [(2, 3, 3, 4)], scale=2, sample_type="nearest"),
    upsampling(
        "nearest-concat3",
        [(1, 2, 4, 4), (1, 3, 2, 2), (1, 1, 1, 1)],
        scale=3,
        sample_type="nearest",
    ),
    upsampling(
        "nearest-sum",
        [(2, 2, 4, 2), (2, 2, 2, 1)],
        scale=2,
        sample_type="nearest",
        multi_input_mode="sum",
    ),
    upsampling(
        "bilinear-x2", [(2, 3, 3, 4), (3, 1, 4, 4)], scale=2, sample_type="bilinear", num_filter=3
    ),
    upsampling(
        "bilinear-x3", [(1, 2, 2, 3), (2, 1, 5, 5)], scale=3, sample_type="bilinear", num_filter=2
    ),
    crop("h_w", [(2, 3, 5, 6)], h_w=(2, 3), offset=(1, 2)),
    crop("center", [(2, 2, 5, 6)], h_w=(3, 3), center_crop=True),
    crop("like", [(2, 2, 6, 5), (1, 4, 3, 2)], offset=(2, 1)),
    crop("like-center", [(1, 2, 7, 6), (1, 1, 4, 4)], center_crop=True),
    OpCase(
        "Convolution_v1",
        [(2, 3, 5, 5), (4, 3, 3, 3), (4,)],
        conv_reference,
        {"kernel": (3, 3), "num_filter": 4, "pad": (1, 1), "stride": (2, 1)},
        id="2d",
        atol=1e-4,
    ),
    OpCase(
        "Convolution_v1",
        [(1, 2, 4, 4, 3), (4, 1, 2, 2, 2)],
        conv_reference,
        {"kernel": (2, 2, 2), "num_filter": 4, "num_group": 2, "no_bias": True},
        id="3d-group",
        atol=1e-4,
    ),
    pool_v1("max", (2, 2, 6, 6), kernel=(3, 3), stride=(2, 2), pad=(1, 1)),
    pool_v1(
        "avg-full",
        (1, 2, 5, 5),
        kernel=(2, 2),
        stride=(2, 2),
        pool_type="avg",
        pooling_convention="full",
    ),
    pool_v1("avg-pad", (1, 2, 5, 4), kernel=(3, 3), pad=(1, 1), pool_type="avg"),
    pool_v1("sum-global", (2, 3, 3, 4), kernel=(1, 1), global_pool=True, pool_type="sum"),
    pool_v1("max-3d", (1, 2, 4, 4, 4), kernel=(2, 2, 2), stride=(2, 2, 2)),
    pool_v1(
        "avg-3d-full",
        (1, 1, 3, 4, 5),
        kernel=(2, 2, 2),
        stride=(2, 2, 2),
        pool_type="avg",
        pooling_convention="full",
    ),
    OpCase(
        "BatchNorm_v1",
        [(2, 3, 3, 4), (3,), (3,), (3,), (3,)],
        batch_norm_v1_inference,
        {"fix_gamma": False, "eps": 1e-4},
        inputs=batch_norm_inputs,
        low=0.1,  # check_op draws every input from [low, high]: variances must be > 0
        grad=False,  # moving statistics are auxiliary states: test_legacy_v1.py checks it
        id="infer",
    ),
]
CASES = with_float16(
    CASES,
    {
        "Deconvolution-2x-k4s2p1",
        "Deconvolution-bias",
        "UpSampling-nearest",
        "UpSampling-nearest-sum",
        "UpSampling-bilinear-x2",
    },
)
