"""The LSTM step kernels of _rnn_cpu.py (numba, compiled on first use and cached on disk).

A module of their own so that importing nnvmpy does not import numba (_rnn_cpu imports
this one inside the functions that run a step).
"""

from __future__ import annotations

from ...kernel.cpu import cached_njit


@cached_njit(nogil=True)
def lstm_pre(g, hh_t, bias, scale):  # pragma: no cover - numba
    """g (N, 4H) = (g + hh_t.T + b) * scale: the recurrent product (computed transposed,
    see forward_direction) added in fixed blocks of 16 gates, so each cache line of hh_t
    is used 16 times while in L1 and the block loop unrolls (33 us against NumPy's 64 us
    for the strided add and bias, (32, 2048) float32), and i, f, o halved so that one
    tanh over the row gives all four activations (sigmoid(a) = (tanh(a / 2) + 1) / 2)."""
    n, gh = g.shape
    full = gh - gh % 16
    for k0 in range(0, full, 16):
        hb, bb, sb = hh_t[k0 : k0 + 16], bias[k0 : k0 + 16], scale[k0 : k0 + 16]
        for b in range(n):
            gb = g[b, k0 : k0 + 16]
            for k in range(16):
                gb[k] = (gb[k] + hb[k, b] + bb[k]) * sb[k]
    for b in range(n):
        for k in range(full, gh):
            g[b, k] = (g[b, k] + hh_t[k, b] + bias[k]) * scale[k]


@cached_njit(nogil=True, fastmath={"contract"})
def lstm_post(g, c, new_c):  # pragma: no cover - numba
    """After np.tanh(g): i, f, o = (t + 1) / 2 written back (the reserve keeps activated
    gates) and new_c = f c + i g, in one pass over 1-D row slices (vectorised)."""
    n, hid = c.shape
    for b in range(n):
        gi, gf = g[b, :hid], g[b, hid : 2 * hid]
        gg, go = g[b, 2 * hid : 3 * hid], g[b, 3 * hid :]
        cb, nb = c[b], new_c[b]
        for j in range(hid):
            i = gi[j] * 0.5 + 0.5
            f = gf[j] * 0.5 + 0.5
            gi[j] = i
            gf[j] = f
            go[j] = go[j] * 0.5 + 0.5
            nb[j] = f * cb[j] + i * gg[j]


@cached_njit(nogil=True, fastmath={"contract"})
def lstm_step_back(g, tc, cprev, dcand, dc, m, d, new_dc):  # pragma: no cover - numba
    """d (N, 4H) and new_dc (N, H) of one LSTM step in ONE pass over its rows, where
    NumPy took ~25 passes (each a trip through L2 for 16k elements; ~5x slower):

        dcc = dc m + dcand o (1 - tc^2)          (tc = tanh(c_t), m the step's 0/1 mask)
        d_i = dcc g i (1 - i)   d_f = dcc c_prev f (1 - f)   d_g = dcc i (1 - g^2)
        d_o = dcand tc o (1 - o)                 new_dc = dcc f + dc (1 - m)

    Only products and sums (the tanh stays NumPy's SIMD ufunc), written as x - x y
    rather than x (1 - y) so no integer constant promotes float32 to float64, over 1-D
    row slices: both keep LLVM's vectoriser on (measured 16 us against 77 us per step
    for 2-D indexing with constants, (32, 512) float32)."""
    n, hid = tc.shape
    for b in range(n):
        mb = m[b]
        gi, gf = g[b, :hid], g[b, hid : 2 * hid]
        gg, go = g[b, 2 * hid : 3 * hid], g[b, 3 * hid :]
        di, df = d[b, :hid], d[b, hid : 2 * hid]
        dgg, do = d[b, 2 * hid : 3 * hid], d[b, 3 * hid :]
        tb, hb, cb, pb, nb = tc[b], dcand[b], dc[b], cprev[b], new_dc[b]
        for j in range(hid):
            i, f, gj, o, t, dh, dcj = gi[j], gf[j], gg[j], go[j], tb[j], hb[j], cb[j]
            dcc = dcj * mb + dh * (o - o * t * t)
            di[j] = dcc * gj * (i - i * i)
            df[j] = dcc * pb[j] * (f - f * f)
            dgg[j] = dcc * (i - i * gj * gj)
            do[j] = dh * t * (o - o * o)
            nb[j] = dcc * f + (dcj - dcj * mb)
