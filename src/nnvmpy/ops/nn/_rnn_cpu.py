"""The fused RNN's CPU math: one layer and direction at a time, time in GEMMs.

Per layer and direction the input projection of all T steps is ONE GEMM
(T*N, in) @ W_x^T; the loop over steps then does the recurrent GEMM h @ W_h^T and the
gate arithmetic in place on NumPy rows. Backward keeps the pre-activation gradients of
all steps and turns them into dW_x, dW_h, db and d(input) with one GEMM each.
The LSTM's gate arithmetic (the common case, and a third of the time when written as
NumPy expressions: single-threaded, ~20 passes over L2 per step) runs in small numba
kernels, one pass per step, around NumPy's SIMD tanh.

Gate formulas (cuDNN's, which MXNet follows), x-side a = W_x x + b_x, h-side W_h h + b_h:
    rnn:  h' = act(a + W_h h + b_h)
    lstm: i, f, g, o = sig, sig, tanh, sig of (a + W_h h + b_h);  c' = f c + i g;
          h' = o tanh(c')  (times W_r^T with a projection)
    gru:  r, z = sig of (a + W_h h + b_h)[r, z];  n = tanh(a_n + r (W_hn h + b_hn));
          h' = (1 - z) n + z h
With sequence lengths, step t of sequence b runs only when t < len_b: its state is carried
unchanged and its output is 0 otherwise (the reverse direction thus starts at len_b - 1).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ._rnn_layout import RnnLayout


@dataclass
class Clip:
    low: float | None
    high: float | None
    nan: bool

    def apply(self, c: np.ndarray) -> None:
        if self.low is None and self.high is None:
            return
        if self.nan:  # NaN stops here: cuDNN's fmax/fmin clipping sends it to the minimum
            fill = self.low if self.low is not None else self.high
            np.copyto(c, np.asarray(fill, c.dtype), where=np.isnan(c))
        np.clip(c, self.low, self.high, out=c)


def _sigmoid(a: np.ndarray) -> None:
    """In place, as (tanh(a / 2) + 1) / 2: NumPy's SIMD tanh without a division is ~15%
    faster than 1 / (1 + exp(-a)), cannot overflow, and is as accurate (~6e-8)."""
    a *= 0.5
    np.tanh(a, out=a)
    a *= 0.5
    a += 0.5


def _lstm_cell(
    g: np.ndarray,
    hh_t: np.ndarray,
    bias: np.ndarray,
    scale: np.ndarray,
    c: np.ndarray,
    new_c: np.ndarray,
    hr: np.ndarray,
    clip: Clip,
) -> None:
    """One LSTM step after its GEMM, in the caller's buffers: g (N, 4H) the step's input
    projection -> its activated gates, new_c = f c + i g (clipped), hr = o tanh(new_c).
    Two numba passes and three NumPy ufuncs where the expression form took ~17 passes
    and temporaries; the gate arithmetic is single-threaded, so it is wall time."""
    hid = c.shape[1]
    from nnvmpy.ops.nn._lstm_cpu_kernels import lstm_post, lstm_pre  # numba: imported on first use

    lstm_pre(g, hh_t, bias, scale)
    np.tanh(g, out=g)
    lstm_post(g, c, new_c)
    clip.apply(new_c)
    np.tanh(new_c, out=hr)
    hr *= g[:, 3 * hid :]


def _order(steps: int, reverse: bool) -> range:
    return range(steps - 1, -1, -1) if reverse else range(steps)


def forward_direction(
    lay: RnnLayout,
    x: np.ndarray,
    w: dict[str, Any],
    h0: np.ndarray,
    c0: np.ndarray | None,
    active: np.ndarray | None,
    reverse: bool,
    res: dict[str, Any],
    clip: Clip,
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """One direction of one layer: (y (T, N, out), h_T, c_T); fills res['gates'/'extra']."""
    steps, batch = x.shape[:2]
    hid, mode = lay.hidden, lay.mode
    gh = lay.gates * hid
    gates, extra = res["gates"], res["extra"]
    xw = gates  # the steps overwrite their pre-activations with the activated gates
    np.matmul(x.reshape(steps * batch, -1), w["wx"].T, out=gates.reshape(steps * batch, gh))
    bias = w["bx"] + w["bh"]
    if mode == "gru":  # b_hn stays inside r * (W_hn h + b_hn)
        xw += w["bx"]
        xw[:, :, : 2 * hid] += w["bh"][: 2 * hid]
    elif mode != "lstm":  # lstm adds it step by step in lstm_pre (saves a pass over xw)
        xw += bias
    y = np.empty((steps, batch, lay.out_size), x.dtype)
    # The recurrent product as W_h @ h^T (gates, batch), added to the step's rows through
    # a transposed view (lstm: inside lstm_pre): OpenBLAS runs a small batch against the
    # long gate axis ~1.35x faster this way round than h @ W_h^T ((32, 512) x (512, 2048))
    hh_t = np.empty((gh, batch), x.dtype)
    tmp = np.empty((batch, hid), x.dtype)
    scale = np.full(gh, 0.5, x.dtype)
    scale[2 * hid : 3 * hid] = 1
    h, c = h0, c0  # type: Any, Any
    for t in _order(steps, reverse):
        g, yt = xw[t], y[t]
        if mode == "gru":
            hh = np.matmul(w["wh"], h.T, out=hh_t).T
            g[:, : 2 * hid] += hh[:, : 2 * hid]
            _sigmoid(g[:, : 2 * hid])
            hn = hh[:, 2 * hid :]
            hn += w["bh"][2 * hid :]
            r, z, n = g[:, :hid], g[:, hid : 2 * hid], g[:, 2 * hid :]
            n += r * hn
            np.tanh(n, out=n)
            new_h = n + z * (h - n)
            extra[t] = hn
            new_c = None
        else:
            np.matmul(w["wh"], h.T, out=hh_t)
            if mode == "lstm":
                new_c = extra[t, :, :hid]
                hr = extra[t, :, hid:] if lay.proj else yt if active is None else tmp
                _lstm_cell(g, hh_t, bias, scale, c, new_c, hr, clip)
                new_h = hr @ w["wr"].T if lay.proj else hr
            else:
                g += hh_t.T
                new_c = None
                if mode == "rnn_tanh":
                    np.tanh(g, out=g)
                else:
                    np.maximum(g, 0, out=g)
                new_h = g
        if active is not None:
            m = active[t][:, None]
            np.multiply(new_h, m, out=yt)
            h = np.where(m, new_h, h)
            if new_c is not None:
                c = np.where(m, new_c, c)
        else:
            if new_h is not yt:  # lstm wrote h straight into y[t]
                yt[...] = new_h
            h, c = yt, new_c
    return y, np.array(h, copy=True), None if c is None else np.array(c, copy=True)


def _previous(seq: np.ndarray, first: np.ndarray, active: Any, reverse: bool) -> np.ndarray:
    """prev[t]: the state step t started from (carried over inactive steps)."""
    prev = np.empty_like(seq)
    state = first
    for t in _order(seq.shape[0], reverse):
        prev[t] = state
        state = seq[t] if active is None else np.where(active[t][:, None], seq[t], state)
    return prev


def backward_direction(
    lay: RnnLayout,
    x: np.ndarray,
    w: dict[str, Any],
    h0: np.ndarray,
    c0: np.ndarray | None,
    y: np.ndarray,
    res: dict[str, Any],
    dy: np.ndarray,
    dh_last: np.ndarray,
    dc_last: np.ndarray | None,
    active: np.ndarray | None,
    reverse: bool,
    gw: dict[str, Any],
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """(dx, dh0, dc0) of one direction; writes the weight gradients into gw's views
    (each view belongs to this layer and direction alone, so the caller need not zero
    them: the GEMMs write the parameter gradient in place, no temporaries)."""
    from nnvmpy.ops.nn._lstm_cpu_kernels import lstm_step_back  # numba: imported on first use

    steps, batch = x.shape[:2]
    hid, mode = lay.hidden, lay.mode
    gh = lay.gates * hid
    gates, extra = res["gates"], res["extra"]
    hp = _previous(y, h0, active, reverse) if active is not None else None
    if hp is None:
        hp = np.empty_like(y)
        if reverse:
            hp[-1], hp[:-1] = h0, y[1:]
        else:
            hp[0], hp[1:] = h0, y[:-1]
    dg = np.empty((steps, batch, gh), x.dtype)
    if mode == "lstm":
        cells = extra[:, :, :hid]
        cp = None  # without lengths c_prev is a view: c0 or the neighbouring step's cell
        if active is not None:
            cp = _previous(np.ascontiguousarray(cells), c0, active, reverse)  # type: ignore[arg-type]
        tc = np.empty((batch, hid), x.dtype)
        dcs = [np.empty((batch, hid), x.dtype) for _ in range(2)]
        ones = np.ones(batch, x.dtype)
    dgh = np.empty_like(dg) if mode == "gru" else dg
    dproj = np.empty_like(y) if lay.proj else None
    dh = np.array(dh_last, copy=True)
    dh_t = np.empty((2, dh.shape[1], batch), x.dtype)  # two: dh is read while new_dh is written
    dc = None if dc_last is None else np.array(dc_last, copy=True)
    for t in reversed(_order(steps, reverse)):
        m = None if active is None else active[t][:, None]
        dcand = dy[t] + dh
        if m is not None:
            dcand *= m
        g = gates[t]
        if mode == "lstm":
            if dproj is not None:
                dproj[t] = dcand
                dcand = dcand @ w["wr"]
            if cp is not None:
                c_prev = cp[t]
            else:
                first = t == (steps - 1 if reverse else 0)
                c_prev = c0 if first else cells[t + 1 if reverse else t - 1]
            np.tanh(cells[t], out=tc)
            new_dc = dcs[t % 2]  # two buffers: dc (the other one) is read while this is written
            mrow = ones if m is None else active[t].astype(x.dtype)  # type: ignore[index]
            d = dg[t]
            lstm_step_back(g, tc, c_prev, dcand, dc, mrow, d, new_dc)
            dc = new_dc
            # (W_h^T d^T)^T: the small batch against the long gate axis runs ~10% faster
            # this way round (as in forward); dh becomes a transposed view of its buffer
            new_dh = np.matmul(w["wh"].T, d.T, out=dh_t[t % 2]).T
        elif mode == "gru":
            r, z, n = g[:, :hid], g[:, hid : 2 * hid], g[:, 2 * hid :]
            dnp = dcand * (1 - z) * (1 - n * n)
            d, e = dg[t], dgh[t]
            d[:, :hid] = dnp * extra[t] * r * (1 - r)
            d[:, hid : 2 * hid] = dcand * (hp[t] - n) * z * (1 - z)
            d[:, 2 * hid :] = dnp
            e[:, : 2 * hid] = d[:, : 2 * hid]
            e[:, 2 * hid :] = dnp * r
            new_dh = dcand * z + e @ w["wh"]
        else:
            d = dg[t]
            if mode == "rnn_tanh":
                np.multiply(dcand, 1 - g * g, out=d)
            else:
                np.multiply(dcand, g > 0, out=d)
            new_dh = d @ w["wh"]
        if m is not None:
            new_dh += dh * (1 - m)
        dh = new_dh
    flat_g = dg.reshape(steps * batch, gh)
    flat_gh = dgh.reshape(steps * batch, gh)
    np.matmul(flat_g.T, x.reshape(steps * batch, -1), out=gw["wx"])
    np.matmul(flat_gh.T, hp.reshape(steps * batch, -1), out=gw["wh"])
    np.sum(flat_g, axis=0, out=gw["bx"])
    if dgh is dg:
        gw["bh"][...] = gw["bx"]
    else:
        np.sum(flat_gh, axis=0, out=gw["bh"])
    if dproj is not None:
        hr = extra[:, :, hid:].reshape(steps * batch, hid)
        np.matmul(dproj.reshape(steps * batch, -1).T, hr, out=gw["wr"])
    dx = (flat_g @ w["wx"]).reshape(steps, batch, -1)
    return dx, np.ascontiguousarray(dh), dc
