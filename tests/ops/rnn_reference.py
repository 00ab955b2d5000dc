"""A plain NumPy fused RNN, written from the formulas (not from the op's code).

Unpacks MXNet's packed parameter vector gate by gate (as MXNet's FusedRNNCell does) and
runs every cell step by step, one sequence element at a time when lengths are given.
"""

from __future__ import annotations

import numpy as np

NGATES = {"rnn_relu": 1, "rnn_tanh": 1, "lstm": 4, "gru": 3}


def unpack(params, mode, num_layers, input_size, hidden, bidirectional, proj=0):
    """[(Wx, Wh, Wr, bx, bh)] per layer*dirs + d, read in MXNet's order."""
    g, dirs = NGATES[mode], 2 if bidirectional else 1
    out_size = proj or hidden
    pos, weights = 0, []

    def take(n, shape):
        nonlocal pos
        a = params[pos : pos + n].reshape(shape)
        pos += n
        return a

    for layer in range(num_layers):
        ins = input_size if layer == 0 else dirs * out_size
        for _ in range(dirs):
            wx = take(g * hidden * ins, (g * hidden, ins))
            wh = take(g * hidden * out_size, (g * hidden, out_size))
            wr = take(proj * hidden, (proj, hidden)) if proj else None
            weights.append([wx, wh, wr])
    for w in weights:
        w.append(take(g * hidden, (g * hidden,)))
        w.append(take(g * hidden, (g * hidden,)))
    assert pos == params.size
    return weights


def _sig(a):
    return 1.0 / (1.0 + np.exp(-a))


def _cell(mode, x, h, c, w, hidden, clip):
    wx, wh, wr, bx, bh = w
    if mode == "gru":
        gx, gh = wx @ x + bx, wh @ h + bh
        r = _sig(gx[:hidden] + gh[:hidden])
        z = _sig(gx[hidden : 2 * hidden] + gh[hidden : 2 * hidden])
        n = np.tanh(gx[2 * hidden :] + r * gh[2 * hidden :])
        return (1 - z) * n + z * h, None
    pre = wx @ x + bx + wh @ h + bh
    if mode == "rnn_tanh":
        return np.tanh(pre), None
    if mode == "rnn_relu":
        return np.maximum(pre, 0), None
    i, f = _sig(pre[:hidden]), _sig(pre[hidden : 2 * hidden])
    gg, o = np.tanh(pre[2 * hidden : 3 * hidden]), _sig(pre[3 * hidden :])
    c = f * c + i * gg
    if clip is not None:
        c = np.clip(c, *clip)
    h = o * np.tanh(c)
    return (wr @ h if wr is not None else h), c


def rnn_reference(
    data, params, state, state_cell=None, lengths=None, *, mode, state_size, num_layers,
    bidirectional=False, projection_size=0, clip=None, masks=None,
):  # fmt: skip
    """(out, hy, cy) of the fused RNN, float64; masks[l] (training's dropout) multiplies
    layer l's output before layer l + 1 reads it."""
    steps, batch, input_size = data.shape
    dirs = 2 if bidirectional else 1
    weights = unpack(
        params, mode, num_layers, input_size, state_size, bidirectional, projection_size
    )
    out_size = projection_size or state_size
    hy, cy = np.array(state, dtype=np.float64), None
    if state_cell is not None:
        cy = np.array(state_cell, dtype=np.float64)
    inp = np.asarray(data, dtype=np.float64)
    for layer in range(num_layers):
        out = np.zeros((steps, batch, dirs * out_size))
        for d in range(dirs):
            k = layer * dirs + d
            for b in range(batch):
                n_steps = steps if lengths is None else int(lengths[b])
                order = range(n_steps) if d == 0 else range(n_steps - 1, -1, -1)
                h = hy[k, b].copy()
                c = None if cy is None else cy[k, b].copy()
                for t in order:
                    h, c = _cell(mode, inp[t, b], h, c, weights[k], state_size, clip)
                    out[t, b, d * out_size : (d + 1) * out_size] = h
                hy[k, b] = h
                if cy is not None:
                    cy[k, b] = c
        inp = out if masks is None or layer == num_layers - 1 else out * masks[layer]
    return inp, hy, cy


def param_size(mode, num_layers, input_size, hidden, bidirectional, proj=0):
    g, dirs = NGATES[mode], 2 if bidirectional else 1
    out_size = proj or hidden
    total = 0
    for layer in range(num_layers):
        ins = input_size if layer == 0 else dirs * out_size
        total += dirs * (g * hidden * (ins + out_size) + proj * hidden + 2 * g * hidden)
    return total
