"""GridGenerator's affine gradient on the CPU: the six sums of an image in one pass.

grid_generator._affine_grad_loop gives each entry of dtheta its own item: three passes
over each channel of dgrid per image, each a serial float64 chain with a branch per
element (9.4 ms for 32 grids of 224 x 224, forward + backward; MXNet 1.9.1: 5.0). Here a
task takes one channel i of one image and keeps its three sums

    dtheta[n, 3i] = sum dgrid[n, i] * xt,  dtheta[n, 3i + 1] = sum dgrid[n, i] * yt,
    dtheta[n, 3i + 2] = sum dgrid[n, i]

over one read of the channel, row by row, in float64. LLVM may reassociate the sums
(vector lanes), so the last bits depend on the build's vector width, not on threads.
Imported on the first CPU launch (it imports numba).
"""

from __future__ import annotations

import numpy as np
from numba import prange

from ... import kernel
from ._uindex import u as _u


@kernel.cpu_kernel(reassociate=True)
def affine_grad(dtheta, dgrid, H, W, sx, sy, add):
    # dtheta: (N, 6) flat; dgrid: (N, 2, H, W) flat
    HW = H * W
    for q in prange(dtheta.size // 3):  # q = 2n + i: channel i of image n
        base = q * HW
        sum_x = 0.0
        sum_y = 0.0
        total = 0.0
        for h in range(H):
            row = base + h * W
            along = 0.0
            weighted = 0.0
            for w in range(W):
                g = np.float64(dgrid[_u(row + w)])
                along += g
                weighted += g * (-1.0 + w * sx)
            sum_x += weighted
            sum_y += along * (-1.0 + h * sy)
            total += along
        t = 3 * q
        if add:
            dtheta[_u(t)] += sum_x
            dtheta[_u(t + 1)] += sum_y
            dtheta[_u(t + 2)] += total
        else:
            dtheta[_u(t)] = sum_x
            dtheta[_u(t + 1)] = sum_y
            dtheta[_u(t + 2)] = total
