"""The fused RNN's per-step gate kernels: one body each for the CPU and the GPU.

Each item is one (batch row n, hidden unit j) of one step; `g` holds the step's gate
pre-activations (x-side GEMM + h-side GEMM, biases folded in) as rows of G*H, and the
forward kernels overwrite them with the activated gates, which backward reads back.
Formulas: see _rnn_cpu.py. The GEMMs around these run through ops/matrix.gemm.

Sequence lengths live in the kernels, so a step is one launch with or without them:
row n runs step t only while t < lengths[n] (the op passes the data's seq_len for every
row when it has no lengths). Past it, forward writes a zero output and leaves the
carried states (updated in place) alone; backward writes zero gate gradients and moves
the incoming state gradient into `carry`, which the next (earlier) step adds back.
"""

from __future__ import annotations

from ...kernel import device_function, like, parallel_for, vmath

# Gates in the data's type: vmath's sigmoid and tanh, and constants as like(x, c). Python
# float constants (1.0 / (1.0 + exp(-x)), 1.0 - z) made the float32 GPU steps compute in
# float64 (tanh's double-precision body alone ~45 instructions an item).
v_sigmoid, v_tanh = vmath.sigmoid, vmath.tanh


@device_function
def runs(t, lengths, n):
    """Whether row n runs step t (t < lengths[n]), compared in the lengths' type."""
    return like(lengths[n], t) < lengths[n]


@parallel_for
def lstm_forward_step(i, g, c, cells, cs, y, h, lengths, t, hid, clip, lo, hi, clip_nan):
    """c, h: the carried cell and hidden state (in place); y: the step's output.

    cells: the reserve's row of step t, `cs` features per batch row: the new cell
    (before masking: backward recomputes nothing) and, with a projection (cs = 2*hid),
    o*tanh(c) after it, which dW_r needs.
    """
    n = i // hid
    j = i - n * hid
    b = n * 4 * hid + j
    gi = v_sigmoid(g[b])
    gf = v_sigmoid(g[b + hid])
    gg = v_tanh(g[b + 2 * hid])
    go = v_sigmoid(g[b + 3 * hid])
    g[b] = gi
    g[b + hid] = gf
    g[b + 2 * hid] = gg
    g[b + 3 * hid] = go
    cn = gf * c[i] + gi * gg
    if clip:
        low, high = like(cn, lo), like(cn, hi)
        if clip_nan and cn != cn:
            cn = low
        cn = min(max(cn, low), high)
    hv = go * v_tanh(cn)
    cells[n * cs + j] = cn
    if cs > hid:
        cells[n * cs + hid + j] = hv
    if runs(t, lengths, n):
        c[i] = cn
        h[i] = hv
        y[i] = hv
    else:
        y[i] = 0.0


@parallel_for
def gru_forward_step(i, g, hh, bhn, h, y, hn_out, lengths, t, hid):
    """h: the carried state (read, then updated in place); hh = h W_h^T, b_hn apart."""
    n = i // hid
    j = i - n * hid
    b = n * 3 * hid + j
    r = v_sigmoid(g[b] + hh[b])
    z = v_sigmoid(g[b + hid] + hh[b + hid])
    hn = hh[b + 2 * hid] + bhn[j]
    cand = v_tanh(g[b + 2 * hid] + r * hn)
    g[b] = r
    g[b + hid] = z
    g[b + 2 * hid] = cand
    hn_out[i] = hn
    v = cand + z * (h[i] - cand)
    if runs(t, lengths, n):
        h[i] = v
        y[i] = v
    else:
        y[i] = 0.0


@parallel_for
def rnn_forward_step(i, g, h, y, lengths, t, hid, relu):
    v = max(g[i], like(g[i], 0.0)) if relu else v_tanh(g[i])
    g[i] = v
    if runs(t, lengths, i // hid):
        h[i] = v
        y[i] = v
    else:
        y[i] = 0.0


@parallel_for
def carry_step(i, y, h, new, lengths, t, width):
    """The projected step: y = new and the state h = new, or past the length y = 0."""
    if runs(t, lengths, i // width):
        v = new[i]
        h[i] = v
        y[i] = v
    else:
        y[i] = 0.0


@parallel_for
def lstm_backward_step(i, dy, dh, carry, g, cells, cs, cp, dc, d, lengths, t, hid):
    """d: the step's pre-activation gradients; dc: the cell gradient, carried in place.

    dy + dh + carry reach h; cells (stride cs) the step's cell, cp the one before it.
    """
    n = i // hid
    j = i - n * hid
    b = n * 4 * hid + j
    if runs(t, lengths, n):
        dcand = dy[i] + dh[i] + carry[i]
        carry[i] = 0.0
        gi = g[b]
        gf = g[b + hid]
        gg = g[b + 2 * hid]
        go = g[b + 3 * hid]
        tc = v_tanh(cells[n * cs + j])
        dcc = dc[i] + dcand * go * (like(tc, 1.0) - tc * tc)
        d[b] = dcc * gg * gi * (like(gi, 1.0) - gi)
        d[b + hid] = dcc * cp[i] * gf * (like(gf, 1.0) - gf)
        d[b + 2 * hid] = dcc * gi * (like(gg, 1.0) - gg * gg)
        d[b + 3 * hid] = dcand * tc * go * (like(go, 1.0) - go)
        dc[i] = dcc * gf
    else:
        carry[i] += dh[i]
        d[b] = 0.0
        d[b + hid] = 0.0
        d[b + 2 * hid] = 0.0
        d[b + 3 * hid] = 0.0


@parallel_for
def gru_backward_step(i, dy, dh, direct, g, hn, hp, d, e, lengths, t, hid):
    """d: x-side gradients, e: h-side ones; direct (in place): dh_prev's z * dh term,
    or past the length the whole incoming state gradient."""
    n = i // hid
    b = n * 3 * hid + (i - n * hid)
    if runs(t, lengths, n):
        dcand = dy[i] + dh[i] + direct[i]
        r = g[b]
        z = g[b + hid]
        cand = g[b + 2 * hid]
        dnp = dcand * (like(z, 1.0) - z) * (like(cand, 1.0) - cand * cand)
        d[b] = dnp * hn[i] * r * (like(r, 1.0) - r)
        d[b + hid] = dcand * (hp[i] - cand) * z * (like(z, 1.0) - z)
        d[b + 2 * hid] = dnp
        e[b] = d[b]
        e[b + hid] = d[b + hid]
        e[b + 2 * hid] = dnp * r
        direct[i] = dcand * z
    else:
        direct[i] += dh[i]
        for k in range(3):
            d[b + k * hid] = 0.0
            e[b + k * hid] = 0.0


@parallel_for
def rnn_backward_step(i, dy, dh, carry, g, d, lengths, t, hid, relu):
    if runs(t, lengths, i // hid):
        dcand = dy[i] + dh[i] + carry[i]
        carry[i] = 0.0
        v = g[i]
        if relu:
            d[i] = dcand if v > 0 else like(dcand, 0.0) * dcand
        else:
            d[i] = dcand * (like(v, 1.0) - v * v)
    else:
        carry[i] += dh[i]
        d[i] = 0.0


@parallel_for
def step_gradient(i, out, dy, dh, carry, lengths, t, width):
    """The gradient reaching step t's (projected) output, or past the length 0 (and the
    incoming state gradient moves into carry)."""
    if runs(t, lengths, i // width):
        out[i] = dy[i] + dh[i] + carry[i]
        carry[i] = 0.0
    else:
        out[i] = 0.0
        carry[i] += dh[i]


@parallel_for
def previous_states(i, out, seq, first, lengths, steps, batch, width, stride, reverse):
    """out (T, N, width)[t]: the state step t started from, for every step at once.

    That is seq's entry (features [0, width) of rows of `stride`) at the step before t
    in the direction's order, t -/+ 1, when that step ran, else `first` (N, width): the
    reverse direction of a row starts from the initial state at its own last step.
    """
    per = batch * width
    t = i // per
    r = i - t * per
    n = r // width
    p = t + 1 if reverse else t - 1
    if 0 <= p < steps and runs(p, lengths, n):
        out[i] = seq[(p * batch + n) * stride + (r - n * width)]
    else:
        out[i] = first[r]


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
def fill(i, out, value):
    out[i] = value


@parallel_for
def cast(i, out, a, add):
    """out (+)= a in out's dtype: float16 to and from the float32 the RNN computes in."""
    if add:
        out[i] += a[i]
    else:
        out[i] = a[i]


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
