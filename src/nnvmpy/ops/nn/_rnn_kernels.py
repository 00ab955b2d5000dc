"""The fused RNN's per-step gate kernels: one body each for the CPU and the GPU.

Each item is one (batch row n, hidden unit j) of one step; `g` holds the step's gate
pre-activations (x-side GEMM + h-side GEMM, biases folded in) as rows of G*H, and the
forward kernels overwrite them with the activated gates, which backward reads back.
Formulas: see _rnn_cpu.py. The GEMMs around these run through ops/matrix.gemm.
"""

from __future__ import annotations

import math

from ...kernel import parallel_for


@parallel_for
def lstm_forward_step(i, g, cp, c_out, h_out, hid, clip, lo, hi, clip_nan):
    n = i // hid
    b = n * 4 * hid + (i - n * hid)
    gi = 1.0 / (1.0 + math.exp(-g[b]))
    gf = 1.0 / (1.0 + math.exp(-g[b + hid]))
    gg = math.tanh(g[b + 2 * hid])
    go = 1.0 / (1.0 + math.exp(-g[b + 3 * hid]))
    g[b] = gi
    g[b + hid] = gf
    g[b + 2 * hid] = gg
    g[b + 3 * hid] = go
    c = gf * cp[i] + gi * gg
    if clip:
        if clip_nan and c != c:
            c = lo
        c = min(max(c, lo), hi)
    c_out[i] = c
    h_out[i] = go * math.tanh(c)


@parallel_for
def gru_forward_step(i, g, hh, bhn, hp, h_out, hn_out, hid):
    n = i // hid
    j = i - n * hid
    b = n * 3 * hid + j
    r = 1.0 / (1.0 + math.exp(-(g[b] + hh[b])))
    z = 1.0 / (1.0 + math.exp(-(g[b + hid] + hh[b + hid])))
    hn = hh[b + 2 * hid] + bhn[j]
    cand = math.tanh(g[b + 2 * hid] + r * hn)
    g[b] = r
    g[b + hid] = z
    g[b + 2 * hid] = cand
    hn_out[i] = hn
    h_out[i] = cand + z * (hp[i] - cand)


@parallel_for
def rnn_forward_step(i, g, h_out, relu):
    v = max(g[i], 0.0) if relu else math.tanh(g[i])
    g[i] = v
    h_out[i] = v


@parallel_for
def lstm_backward_step(i, dy, dh, g, c, cp, dc, d, hid):
    """d: the step's pre-activation gradients; dc: the cell gradient, carried in place."""
    n = i // hid
    b = n * 4 * hid + (i - n * hid)
    dcand = dy[i] + dh[i]
    gi = g[b]
    gf = g[b + hid]
    gg = g[b + 2 * hid]
    go = g[b + 3 * hid]
    tc = math.tanh(c[i])
    dcc = dc[i] + dcand * go * (1.0 - tc * tc)
    d[b] = dcc * gg * gi * (1.0 - gi)
    d[b + hid] = dcc * cp[i] * gf * (1.0 - gf)
    d[b + 2 * hid] = dcc * gi * (1.0 - gg * gg)
    d[b + 3 * hid] = dcand * tc * go * (1.0 - go)
    dc[i] = dcc * gf


@parallel_for
def gru_backward_step(i, dy, dh, direct, g, hn, hp, d, e, hid):
    """d: x-side gradients, e: h-side ones; direct (in place): dh_prev's z * dh term."""
    n = i // hid
    b = n * 3 * hid + (i - n * hid)
    dcand = dy[i] + dh[i] + direct[i]
    r = g[b]
    z = g[b + hid]
    cand = g[b + 2 * hid]
    dnp = dcand * (1.0 - z) * (1.0 - cand * cand)
    d[b] = dnp * hn[i] * r * (1.0 - r)
    d[b + hid] = dcand * (hp[i] - cand) * z * (1.0 - z)
    d[b + 2 * hid] = dnp
    e[b] = d[b]
    e[b + hid] = d[b + hid]
    e[b + 2 * hid] = dnp * r
    direct[i] = dcand * z


@parallel_for
def rnn_backward_step(i, dy, dh, g, d, relu):
    dcand = dy[i] + dh[i]
    v = g[i]
    if relu:
        d[i] = dcand if v > 0 else 0.0 * dcand
    else:
        d[i] = dcand * (1.0 - v * v)


@parallel_for
def fold_bias(i, out, bx, bh, keep):
    """out = bx + bh on the first `keep` entries, bx alone after (gru keeps b_hn apart)."""
    if i < keep:
        out[i] = bx[i] + bh[i]
    else:
        out[i] = bx[i]


@parallel_for
def to_columns(i, dst, src, width, total, offset):
    """Row-major src (rows, width) into columns [offset, offset + width) of dst (rows, total)."""
    row = i // width
    dst[row * total + offset + (i - row * width)] = src[i]


@parallel_for
def from_columns(i, dst, src, width, total, offset, add):
    row = i // width
    v = src[row * total + offset + (i - row * width)]
    if add:
        dst[i] += v
    else:
        dst[i] = v


@parallel_for
def combine(i, out, a, b, mode):
    """mode 0: out = a; 1: out = a + b; 2: out = a * b; 3: out += a; 4: out += a + b."""
    if mode == 0:
        out[i] = a[i]
    elif mode == 1:
        out[i] = a[i] + b[i]
    elif mode == 2:
        out[i] = a[i] * b[i]
    elif mode == 3:
        out[i] += a[i]
    else:
        out[i] += a[i] + b[i]
