"""OpCase rows for contrib_modulated_deformable_conv.py: the reference loops over every tap
of every output position, samples it with a scalar bilinear lookup and scales it by its
mask value (the op's kernels scale the column matrices' entries)."""

from __future__ import annotations

from typing import Any

import numpy as np
from cases_contrib_deformable_conv import _sample
from op_db import OpCase


def modulated_deformable_conv_ref(
    data: np.ndarray,
    offset: np.ndarray,
    mask: np.ndarray,
    weight: np.ndarray,
    bias: Any = None,
    kernel: Any = (3, 3),
    stride: Any = (1, 1),
    dilate: Any = (1, 1),
    pad: Any = (0, 0),
    num_filter: int = 1,
    num_group: int = 1,
    num_deformable_group: int = 1,
    no_bias: bool = False,
) -> np.ndarray:
    n, c, _, _ = data.shape
    kh, kw = kernel
    oh, ow = offset.shape[2:]
    out = np.zeros((n, num_filter, oh, ow))
    cpg, fpg, cpdg = c // num_group, num_filter // num_group, c // num_deformable_group
    for b in range(n):
        for f in range(num_filter):
            grp = f // fpg
            for p in range(oh):
                for q in range(ow):
                    total = 0.0 if bias is None else float(bias[f])
                    for cc in range(cpg):
                        ch = grp * cpg + cc
                        dg = ch // cpdg
                        for i in range(kh):
                            for j in range(kw):
                                k = i * kw + j
                                y = p * stride[0] - pad[0] + i * dilate[0]
                                x = q * stride[1] - pad[1] + j * dilate[1]
                                y += offset[b, dg * 2 * kh * kw + 2 * k, p, q]
                                x += offset[b, dg * 2 * kh * kw + 2 * k + 1, p, q]
                                m = mask[b, dg * kh * kw + k, p, q]
                                total += (
                                    weight[f, cc, i, j] * m * _sample(data[b, ch], y, x, v1=False)
                                )
                    out[b, f, p, q] = total
    return out


def _inputs(n: int, c: int, hw: tuple[int, int], ohw: tuple[int, int], f: int, g: int, dg: int):
    def make(rng: np.random.Generator, dtype: Any) -> list[np.ndarray]:
        return [
            rng.uniform(-1, 1, (n, c, *hw)).astype(dtype),
            rng.uniform(-1.4, 1.4, (n, dg * 18, *ohw)).astype(dtype),  # crosses the border
            rng.uniform(0, 1, (n, dg * 9, *ohw)).astype(dtype),
            rng.uniform(-1, 1, (f, c // g, 3, 3)).astype(dtype),
            rng.uniform(-1, 1, (f,)).astype(dtype),
        ]

    return make


CASES = [
    OpCase(
        "_contrib_ModulatedDeformableConvolution",
        shapes=[(2, 2, 5, 4), (2, 18, 5, 4), (2, 9, 5, 4), (3, 2, 3, 3), (3,)],
        params={"kernel": (3, 3), "pad": (1, 1), "num_filter": 3},
        reference=modulated_deformable_conv_ref,
        inputs=_inputs(2, 2, (5, 4), (5, 4), 3, 1, 1),
        grad_rtol=2e-2,
    ),
    OpCase(
        "_contrib_ModulatedDeformableConvolution",
        shapes=[(1, 4, 7, 5), (1, 36, 2, 2), (1, 18, 2, 2), (4, 2, 3, 3), (4,)],
        params={
            "kernel": (3, 3),
            "stride": (2, 2),
            "dilate": (2, 1),
            "num_filter": 4,
            "num_group": 2,
            "num_deformable_group": 2,
        },
        reference=modulated_deformable_conv_ref,
        inputs=_inputs(1, 4, (7, 5), (2, 2), 4, 2, 2),
        grad_rtol=2e-2,
        id="groups",
    ),
]
