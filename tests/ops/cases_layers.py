"""OpCase rows of the normalisation, activation and spatial layers (issue 12).

References are NumPy formulas written from the math (loops where the op is defined by
loops: ROIPooling, Correlation, bilinear sampling), never the kernels. Inputs that would
put finite differences across a kink are kept away from it: sampling points away from
whole pixels, prelu inputs away from 0, max-pooled values distinct. Rows that cannot go
through the generic gradient check say why; tests/ops/test_norm_layers.py and
test_spatial.py test those specially.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from op_db import OpCase

# -- references: normalisation ------------------------------------------------------------------


def layer_norm_ref(x, gamma, beta, axis=-1, eps=1e-5, output_mean_var=False, **_):
    mean = x.mean(axis=axis, keepdims=True)
    std = np.sqrt(x.var(axis=axis, keepdims=True) + eps)
    shape = [1] * x.ndim
    shape[axis] = -1
    out = (x - mean) / std * gamma.reshape(shape) + beta.reshape(shape)
    return [out, mean, std] if output_mean_var else out


def group_norm_ref(x, gamma, beta, num_groups=1, eps=1e-5, output_mean_var=False, **_):
    n = x.shape[0]
    xg = x.reshape(n, num_groups, -1)
    mean = xg.mean(axis=2, keepdims=True)
    std = np.sqrt(xg.var(axis=2, keepdims=True) + eps)
    out = (xg - mean) / std * gamma.reshape(1, -1, 1) + beta.reshape(1, -1, 1)
    out = out.reshape(x.shape)
    return [out, mean.reshape(n, -1), std.reshape(n, -1)] if output_mean_var else out


def instance_norm_ref(x, gamma, beta, eps=1e-3, **_):
    axes = tuple(range(2, x.ndim))
    shape = (1, -1) + (1,) * (x.ndim - 2)
    xhat = (x - x.mean(axis=axes, keepdims=True)) / np.sqrt(x.var(axis=axes, keepdims=True) + eps)
    return xhat * gamma.reshape(shape) + beta.reshape(shape)


def l2_normalization_ref(x, mode="instance", eps=1e-10, **_):
    axes = {
        "instance": tuple(range(1, x.ndim)),
        "channel": (1,),
        "spatial": tuple(range(2, x.ndim)),
    }
    return x / np.sqrt((x * x).sum(axis=axes[mode], keepdims=True) + eps)


def lrn_ref(x, nsize, alpha=1e-4, beta=0.75, knorm=2.0, **_):
    """Across channels: window [c - nsize//2, c - nsize//2 + nsize) clipped to [0, C)."""
    c = x.shape[1]
    sq = x * x
    out = np.empty_like(x)
    for k in range(c):
        lo, hi = max(k - nsize // 2, 0), min(k - nsize // 2 + nsize, c)
        t = knorm + alpha / nsize * sq[:, lo:hi].sum(axis=1)
        out[:, k] = x[:, k] * t**-beta
    return out


# -- references: softmax family -----------------------------------------------------------------


def softmax_ref(x, axis=-1, temperature=None, **_):
    z = x / (1.0 if temperature is None else temperature)
    e = np.exp(z - z.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def softmax_length_ref(x, length, axis=-1, **_):
    """softmax over each row's first length[r] elements, zeros after."""
    xm = np.moveaxis(x, axis, -1)
    out = np.zeros_like(xm)
    for idx in np.ndindex(*xm.shape[:-1]):
        n = int(length[idx])
        if n:
            out[idx][:n] = softmax_ref(xm[idx][:n])
    return np.moveaxis(out, -1, axis)


def softmax_activation_ref(x, mode="instance", **_):
    return softmax_ref(x, axis=1 if mode == "channel" else -1)


# -- references: LeakyReLU ----------------------------------------------------------------------


def prelu_ref(x, gamma, **_):
    if gamma.ndim == 1 and gamma.size > 1:
        g = gamma.reshape((1, -1) + (1,) * (x.ndim - 2))
    else:
        g = gamma.reshape(gamma.shape + (1,) * (x.ndim - gamma.ndim))
    return np.where(x > 0, x, g * x)


def rrelu_inference_ref(x, lower_bound=0.125, upper_bound=0.334, **_):
    slope = 0.5 * (lower_bound + upper_bound)
    return [np.where(x > 0, x, slope * x), np.full_like(x, slope)]


def away_from_zero(shapes: Any, margin: float = 0.05) -> Any:
    def make(rng: np.random.Generator, dtype: Any) -> list[np.ndarray]:
        x = rng.uniform(-1, 1, size=shapes[0])
        x[np.abs(x) < margin] = margin
        rest = [rng.uniform(0.1, 0.5, size=s) for s in shapes[1:]]
        return [a.astype(dtype) for a in [x, *rest]]

    return make


# -- references: spatial ------------------------------------------------------------------------


def bilinear_sample_ref(data, grid, **_):
    """Loops over the output points: the four corners, zero outside the image."""
    n_, c_, h_, w_ = data.shape
    out = np.zeros((n_, c_, grid.shape[2], grid.shape[3]))
    for n in range(n_):
        for i in range(grid.shape[2]):
            for j in range(grid.shape[3]):
                x = (grid[n, 0, i, j] + 1) * (w_ - 1) / 2
                y = (grid[n, 1, i, j] + 1) * (h_ - 1) / 2
                x0, y0 = math.floor(x), math.floor(y)
                for yy, wy in ((y0, 1 - (y - y0)), (y0 + 1, y - y0)):
                    for xx, wx in ((x0, 1 - (x - x0)), (x0 + 1, x - x0)):
                        if 0 <= yy < h_ and 0 <= xx < w_:
                            out[n, :, i, j] += wy * wx * data[n, :, yy, xx]
    return out


def affine_grid_ref(theta, target_shape, **_):
    h, w = target_shape
    xt, yt = np.meshgrid(np.linspace(-1, 1, w), np.linspace(-1, 1, h))
    base = np.stack([xt.ravel(), yt.ravel(), np.ones(h * w)])  # (3, h*w)
    return (theta.reshape(-1, 2, 3) @ base).reshape(-1, 2, h, w)


def warp_grid_ref(flow, **_):
    _, _, h, w = flow.shape
    xs, ys = np.meshgrid(np.arange(w), np.arange(h))
    gx = (xs + flow[:, 0]) * 2 / (w - 1) - 1
    gy = (ys + flow[:, 1]) * 2 / (h - 1) - 1
    return np.stack([gx, gy], axis=1)


def spatial_transformer_ref(data, loc, target_shape, **_):
    return bilinear_sample_ref(data, affine_grid_ref(loc, target_shape))


def off_pixel_grid(rng: np.random.Generator, shape: Any, size_hw: Any) -> np.ndarray:
    """Grid points in [-1.2, 1.2] at least 0.05 pixel from whole pixels (no kink nearby)."""
    grid = rng.uniform(-1.2, 1.2, size=shape)
    for ch, size in ((0, size_hw[1]), (1, size_hw[0])):
        p = (grid[:, ch] + 1) * (size - 1) / 2
        frac = p - np.floor(p)
        p = np.floor(p) + np.clip(frac, 0.05, 0.95)
        grid[:, ch] = p * 2 / (size - 1) - 1
    return grid


def sampler_inputs(shapes: Any) -> Any:
    def make(rng: np.random.Generator, dtype: Any) -> list[np.ndarray]:
        data = rng.uniform(-1, 1, size=shapes[0])
        grid = off_pixel_grid(rng, shapes[1], shapes[0][2:])
        return [data.astype(dtype), grid.astype(dtype)]

    return make


def transformer_inputs(shapes: Any, target: Any) -> Any:
    """Affine maps near a half-size zoom whose points stay off whole pixels."""

    def make(rng: np.random.Generator, dtype: Any) -> list[np.ndarray]:
        data = rng.uniform(-1, 1, size=shapes[0])
        h, w = shapes[0][2:]
        while True:
            loc = np.array([0.5, 0.0, 0.0, 0.0, 0.5, 0.0]) + rng.uniform(-0.1, 0.1, size=shapes[1])
            g = affine_grid_ref(loc, target)
            px = [(g[:, 0] + 1) * (w - 1) / 2, (g[:, 1] + 1) * (h - 1) / 2]
            if all(np.abs(p - np.round(p)).min() > 0.02 for p in px):
                return [data.astype(dtype), loc.astype(dtype)]

    return make


def _c_round(v: float) -> int:
    return math.floor(v + 0.5) if v >= 0 else -math.floor(-v + 0.5)


def roi_pooling_ref(data, rois, pooled_size, spatial_scale, **_):
    ph_, pw_ = pooled_size
    _, c_, h_, w_ = data.shape
    out = np.zeros((len(rois), c_, ph_, pw_))
    for r, roi in enumerate(rois):
        x1, y1, x2, y2 = (_c_round(v * spatial_scale) for v in roi[1:])
        bh, bw = max(y2 - y1 + 1, 1) / ph_, max(x2 - x1 + 1, 1) / pw_
        for ph in range(ph_):
            h0 = min(max(math.floor(ph * bh) + y1, 0), h_)
            h1 = min(max(math.ceil((ph + 1) * bh) + y1, 0), h_)
            for pw in range(pw_):
                w0 = min(max(math.floor(pw * bw) + x1, 0), w_)
                w1 = min(max(math.ceil((pw + 1) * bw) + x1, 0), w_)
                if h1 > h0 and w1 > w0:
                    out[r, :, ph, pw] = data[int(roi[0]), :, h0:h1, w0:w1].max(axis=(1, 2))
    return out


def roi_inputs(shapes: Any, scale: float = 1.0) -> Any:
    """Distinct data values (a unique maximum per bin) and rois inside the image."""

    def make(rng: np.random.Generator, dtype: Any) -> list[np.ndarray]:
        n, _, h, w = shapes[0]
        h, w = h / scale, w / scale
        data = rng.permutation(np.prod(shapes[0])).reshape(shapes[0]) / np.prod(shapes[0])
        rois = []
        for _ in range(shapes[1][0]):
            x1, y1 = rng.uniform(0, w / 2), rng.uniform(0, h / 2)
            x2, y2 = rng.uniform(x1, w - 1), rng.uniform(y1, h - 1)
            rois.append([rng.integers(0, n), x1, y1, x2, y2])
        return [data.astype(dtype), np.array(rois).astype(dtype)]

    return make


def correlation_ref(a, b, kernel_size=1, max_displacement=1, stride1=1, stride2=1,
                    pad_size=0, is_multiply=True, **_):  # fmt: skip
    k, d, pad = kernel_size, max_displacement, pad_size
    pa = np.pad(a, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    pb = np.pad(b, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    radius = d // stride2
    width = 2 * radius + 1
    border = d + (k - 1) // 2
    th = math.ceil((pa.shape[2] - 2 * border) / stride1)
    tw = math.ceil((pa.shape[3] - 2 * border) / stride1)
    out = np.zeros((a.shape[0], width * width, th, tw))
    for i in range(th):
        for j in range(tw):
            x1, y1 = j * stride1 + d, i * stride1 + d
            for t in range(width * width):
                x2 = x1 + (t % width - radius) * stride2
                y2 = y1 + (t // width - radius) * stride2
                p1 = pa[:, :, y1 : y1 + k, x1 : x1 + k]
                p2 = pb[:, :, y2 : y2 + k, x2 : x2 + k]
                f = p1 * p2 if is_multiply else np.abs(p1 - p2)
                out[:, t, i, j] = f.sum(axis=(1, 2, 3))
    return out / (k * k * a.shape[1])


def kl_sparse_inputs(shapes: Any) -> Any:
    def make(rng: np.random.Generator, dtype: Any) -> list[np.ndarray]:
        return [rng.uniform(0.05, 0.95, size=s).astype(dtype) for s in shapes]

    return make


# -- the rows -----------------------------------------------------------------------------------

CASES: list[OpCase] = [
    OpCase("LayerNorm", [(3, 4, 5), (5,), (5,)], layer_norm_ref),
    OpCase("LayerNorm", [(3, 4, 5), (4,), (4,)], layer_norm_ref, params={"axis": 1}, id="axis1"),
    OpCase(
        "LayerNorm",
        [(6, 2), (6,), (6,)],
        layer_norm_ref,
        params={"axis": 0, "eps": 1e-3},
        id="axis0",
    ),
    OpCase(
        "LayerNorm",
        [(2, 3, 4), (4,), (4,)],
        layer_norm_ref,
        params={"output_mean_var": True},
        id="mean_var",
    ),
    OpCase("GroupNorm", [(2, 4, 3, 2), (2,), (2,)], group_norm_ref, params={"num_groups": 2}),
    OpCase(
        "GroupNorm",
        [(3, 6, 4), (3,), (3,)],
        group_norm_ref,
        params={"num_groups": 3, "eps": 1e-3, "output_mean_var": True},
        id="mean_var",
    ),
    OpCase("InstanceNorm", [(2, 3, 4), (3,), (3,)], instance_norm_ref),
    OpCase(
        "InstanceNorm",
        [(2, 2, 3, 2, 2), (2,), (2,)],
        instance_norm_ref,
        params={"eps": 1e-4},
        id="5d",
    ),
    *(
        OpCase("L2Normalization", [(2, 3, 4, 2)], l2_normalization_ref, params={"mode": m}, id=m)
        for m in ("instance", "channel", "spatial")
    ),
    OpCase("LRN", [(2, 5, 3, 2)], lrn_ref, params={"nsize": 3, "alpha": 0.5, "knorm": 1.5}),
    OpCase("LRN", [(2, 6, 3)], lrn_ref, params={"nsize": 5, "beta": 0.5}, id="nsize5"),
    *(
        OpCase(
            "SoftmaxActivation",
            [(2, 3, 4)],
            softmax_activation_ref,
            params={"mode": m},
            low=-3.0,
            high=3.0,
            id=m,
        )
        for m in ("instance", "channel")
    ),
    *(
        OpCase(
            "softmin",
            [(2, 3, 4)],
            lambda x, **p: softmax_ref(-x, **p),
            params=p,
            low=-3.0,
            high=3.0,
            id=i,
        )
        for p, i in (({}, "last"), ({"axis": 1, "temperature": 2.0}, "axis1-T2"))
    ),
    OpCase(
        "softmax",
        [(2, 3, 4)],
        softmax_ref,
        params={"dtype": "float64"},
        dtypes=(np.float32,),
        low=-3.0,
        high=3.0,
        id="dtype64",
    ),
    OpCase(
        "log_softmax",
        [(2, 5)],
        lambda x, **p: np.log(softmax_ref(x)),
        params={"dtype": "float64"},
        dtypes=(np.float32,),
        low=-3.0,
        high=3.0,
        id="dtype64",
    ),
    # integer lengths: check_op and the generic gradient check draw every input as floats
    OpCase(
        "softmax",
        [(2, 5, 3), (2, 3)],
        softmax_length_ref,
        params={"use_length": True, "axis": 1},
        inputs=lambda rng, dtype: [
            rng.uniform(-3, 3, size=(2, 5, 3)).astype(dtype),
            rng.integers(0, 6, size=(2, 3)).astype(np.int32),
        ],
        check_op=False,
        grad=False,
        id="use_length",
    ),
    *(
        OpCase(
            "LeakyReLU",
            [(3, 4, 2), g],
            prelu_ref,
            params={"act_type": "prelu"},
            inputs=away_from_zero([(3, 4, 2), g]),
            # gamma's shape, when not given, is (C,) as in MXNet: a default, which check_op's
            # "infer a dropped input back" check rightly calls wrong for other gammas
            check_op=g == (4,),
            id=f"prelu-{'x'.join(map(str, g))}",
        )
        for g in ((4,), (3, 4), (1,))
    ),
    # rrelu at inference (nd runs with is_train=False): the mean slope. Training is random
    # and has no finite-difference gradient: test_norm_layers.py
    OpCase(
        "LeakyReLU",
        [(3, 4)],
        rrelu_inference_ref,
        params={"act_type": "rrelu", "lower_bound": 0.1, "upper_bound": 0.3},
        grad=False,
        id="rrelu-infer",
    ),
    OpCase(
        "BilinearSampler",
        [(2, 3, 4, 5), (2, 2, 3, 3)],
        bilinear_sample_ref,
        inputs=sampler_inputs([(2, 3, 4, 5), (2, 2, 3, 3)]),
    ),
    OpCase(
        "GridGenerator",
        [(2, 6)],
        affine_grid_ref,
        params={"transform_type": "affine", "target_shape": (3, 4)},
        id="affine",
    ),
    OpCase(
        "GridGenerator", [(2, 2, 3, 4)], warp_grid_ref, params={"transform_type": "warp"}, id="warp"
    ),
    OpCase(
        "SpatialTransformer",
        [(2, 3, 5, 6), (2, 6)],
        spatial_transformer_ref,
        params={"target_shape": (3, 4), "transform_type": "affine", "sampler_type": "bilinear"},
        inputs=transformer_inputs([(2, 3, 5, 6), (2, 6)], (3, 4)),
    ),
    OpCase(
        "ROIPooling",
        [(2, 3, 8, 7), (4, 5)],
        roi_pooling_ref,
        params={"pooled_size": (3, 2), "spatial_scale": 1.0},
        inputs=roi_inputs([(2, 3, 8, 7), (4, 5)]),
        low=0.0,  # check_op draws every input from [low, high]: batch index 0, rois inside
        high=0.9,
        grad_inputs=[0],
    ),
    OpCase(
        "ROIPooling",
        [(1, 2, 12, 10), (3, 5)],
        roi_pooling_ref,
        params={"pooled_size": (2, 2), "spatial_scale": 0.5},
        inputs=roi_inputs([(1, 2, 12, 10), (3, 5)], scale=0.5),
        low=0.0,
        high=0.9,
        grad_inputs=[0],
        id="scale0.5",
    ),
    OpCase(
        "Correlation",
        [(2, 2, 6, 6), (2, 2, 6, 6)],
        correlation_ref,
        params={"kernel_size": 3, "max_displacement": 1, "pad_size": 1},
    ),
    OpCase(
        "Correlation",
        [(1, 3, 7, 6), (1, 3, 7, 6)],
        correlation_ref,
        params={
            "max_displacement": 2,
            "stride1": 2,
            "stride2": 2,
            "pad_size": 2,
            "is_multiply": False,
        },
        id="abs-strided",
    ),
    # the gradient is dy plus a penalty, not the derivative of the identity: test_norm_layers
    OpCase(
        "IdentityAttachKLSparseReg",
        [(4, 3), (3,)],
        lambda x, avg, **_: x,
        inputs=kl_sparse_inputs([(4, 3), (3,)]),
        low=0.1,
        high=0.9,
        grad=False,
    ),
]
