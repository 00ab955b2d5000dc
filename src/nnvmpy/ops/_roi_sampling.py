"""The sampling loop ROIAlign and RROIAlign share: bilinear samples averaged per bin.

Each roi comes as one row of `geometry` (see GEOMETRY): its batch index, the top-left
corner and bin size of its (unrotated) grid, the sample grid per bin, and a rotation
(cos, sin) about a centre (cx, cy). Sample (xx, yy) of the grid lands on the map at

    x = xx cos + yy sin + cx,    y = yy cos - xx sin + cy

(ROIAlign: cos 1, sin 0, centre 0). A sample more than one pixel outside the map counts
0; otherwise it is clamped onto the map and blends its four neighbouring pixels. Bins
average their samples. The backward pass spreads dy / count onto the same pixels with
the same weights; it runs sequentially, since bins share pixels.
"""

from __future__ import annotations

import numpy as np

from .. import kernel

GEOMETRY = ("batch", "x0", "y0", "bin_w", "bin_h", "grid_w", "grid_h", "cos", "sin", "cx", "cy")


@kernel.cpu_kernel(parallel=False)
def roi_bins(data, geometry, dy, out, sensitive, backward):  # pragma: no cover - compiled
    """Forward (backward False): out (R, C', PH, PW) from data. Backward: data += spread dy.

    With `sensitive`, bin (ph, pw) of output channel c reads channel (c PH + ph) PW + pw.
    """
    n_batch, _, height, width = data.shape
    n_rois, c_out, ph_n, pw_n = dy.shape if backward else out.shape
    for r in range(n_rois):
        b = int(geometry[r, 0])
        if b < 0 or b >= n_batch:
            continue
        x0, y0 = geometry[r, 1], geometry[r, 2]
        bin_w, bin_h = geometry[r, 3], geometry[r, 4]
        grid_w, grid_h = int(geometry[r, 5]), int(geometry[r, 6])
        cos, sin, cx, cy = geometry[r, 7], geometry[r, 8], geometry[r, 9], geometry[r, 10]
        count = max(grid_h * grid_w, 1)
        for c in range(c_out):
            for ph in range(ph_n):
                for pw in range(pw_n):
                    ci = (c * ph_n + ph) * pw_n + pw if sensitive else c
                    g = dy[r, c, ph, pw] / count if backward else 0.0
                    total = 0.0
                    for iy in range(grid_h):
                        yy = y0 + ph * bin_h + (iy + 0.5) * bin_h / grid_h
                        for ix in range(grid_w):
                            xx = x0 + pw * bin_w + (ix + 0.5) * bin_w / grid_w
                            x = xx * cos + yy * sin + cx
                            y = yy * cos - xx * sin + cy
                            if y < -1.0 or y > height or x < -1.0 or x > width:
                                continue
                            y = min(max(y, 0.0), height - 1.0)
                            x = min(max(x, 0.0), width - 1.0)
                            yl = min(int(y), height - 1)
                            xl = min(int(x), width - 1)
                            yh = min(yl + 1, height - 1)
                            xh = min(xl + 1, width - 1)
                            ly = y - yl
                            lx = x - xl
                            w1 = (1 - ly) * (1 - lx)
                            w2 = (1 - ly) * lx
                            w3 = ly * (1 - lx)
                            w4 = ly * lx
                            if backward:
                                data[b, ci, yl, xl] += g * w1
                                data[b, ci, yl, xh] += g * w2
                                data[b, ci, yh, xl] += g * w3
                                data[b, ci, yh, xh] += g * w4
                            else:
                                total += (
                                    w1 * data[b, ci, yl, xl]
                                    + w2 * data[b, ci, yl, xh]
                                    + w3 * data[b, ci, yh, xl]
                                    + w4 * data[b, ci, yh, xh]
                                )
                    if not backward:
                        out[r, c, ph, pw] = total / count


def sample_forward(data: np.ndarray, geometry: np.ndarray, out_shape: tuple, sensitive: bool):
    """out (float64) of roi_bins for host arrays."""
    out = np.zeros(out_shape)
    x = np.ascontiguousarray(data, np.float64)
    geo = np.ascontiguousarray(geometry, np.float64)
    roi_bins(x, geo, out, out, sensitive, False)
    return out


def sample_backward(dy: np.ndarray, geometry: np.ndarray, data_shape: tuple, sensitive: bool):
    """d data (float64) of roi_bins for host arrays."""
    dx = np.zeros(data_shape)
    geo = np.ascontiguousarray(geometry, np.float64)
    roi_bins(dx, geo, np.ascontiguousarray(dy, np.float64), dx, sensitive, True)
    return dx
