"""The fused RNN over its layers and directions (NumPy arrays; the op casts and copies).

Layer l's input is the data (l = 0) or layer l-1's output, both directions side by side
along the features ([forward, backward]), times the dropout mask while training. State
slot l*D + d holds layer l, direction d.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ._rnn_cpu import Clip, backward_direction, forward_direction
from ._rnn_layout import RnnLayout


def _active(lengths: Any, steps: int) -> np.ndarray | None:
    if lengths is None:
        return None
    return np.arange(steps)[:, None] < np.asarray(lengths).astype(np.int64)[None, :]


def rnn_forward(
    lay: RnnLayout,
    x: np.ndarray,
    params: np.ndarray,
    hx: np.ndarray,
    cx: np.ndarray | None,
    lengths: Any,
    reserve: np.ndarray,
    draw_mask: Callable[[np.ndarray], None] | None,
    clip: Clip,
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """(out, hy, cy); draw_mask(mask) writes a dropout mask between layers while training
    (None otherwise)."""
    steps, batch = x.shape[:2]
    weights = lay.param_views(params)
    kept = lay.reserve_views(reserve, steps, batch)
    active = _active(lengths, steps)
    hy = np.empty_like(hx)
    cy = None if cx is None else np.empty_like(cx)
    inp = x
    for layer in range(lay.layers):
        outs = []
        for d in range(lay.dirs):
            k = layer * lay.dirs + d
            c0 = None if cx is None else cx[k]
            y, h, c = forward_direction(
                lay, inp, weights[k], hx[k], c0, active, d == 1, kept[layer]["dirs"][d], clip
            )
            outs.append(y)
            hy[k] = h
            if cy is not None:
                cy[k] = c
        out = outs[0] if lay.dirs == 1 else np.concatenate(outs, axis=2)
        view = kept[layer]
        if view["out"] is not None:
            view["out"][...] = out
            if view["mask"] is not None:
                if draw_mask is None:
                    view["mask"][...] = 1
                else:
                    draw_mask(view["mask"])
                    out = out * view["mask"]
        inp = out
    return inp, hy, cy


def rnn_backward(
    lay: RnnLayout,
    x: np.ndarray,
    params: np.ndarray,
    hx: np.ndarray,
    cx: np.ndarray | None,
    lengths: Any,
    out: np.ndarray,
    reserve: np.ndarray,
    dout: np.ndarray,
    dhy: np.ndarray,
    dcy: np.ndarray | None,
    dparams: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
    """(dx, dparams, dhx, dcx) from the saved forward (out, reserve) and output gradients.

    dparams, when given (C-contiguous, params' shape and dtype), receives the parameter
    gradient in place: every element is written, so it need not be zeroed."""
    steps, batch = x.shape[:2]
    weights = lay.param_views(params)
    if dparams is None:
        dparams = np.empty(params.shape, params.dtype)
    grads = lay.param_views(dparams)
    kept = lay.reserve_views(reserve, steps, batch)
    active = _active(lengths, steps)
    dhx = np.empty_like(hx)
    dcx = None if cx is None else np.empty_like(cx)
    width = lay.out_size
    dy: Any = dout
    for layer in reversed(range(lay.layers)):
        if layer == 0:
            inp = x
        else:
            below = kept[layer - 1]
            inp = below["out"] if below["mask"] is None else below["out"] * below["mask"]
        y_all = out if layer == lay.layers - 1 else kept[layer]["out"]
        dinp: Any = None
        for d in range(lay.dirs):
            k = layer * lay.dirs + d
            part = slice(d * width, (d + 1) * width)
            y = np.ascontiguousarray(y_all[:, :, part])
            c0 = None if cx is None else cx[k]
            dc_last = None if cx is None else dcy[k]  # type: ignore[index]
            dx, dh, dc = backward_direction(
                lay, inp, weights[k], hx[k], c0, y, kept[layer]["dirs"][d],
                np.ascontiguousarray(dy[:, :, part]), dhy[k], dc_last, active, d == 1, grads[k],
            )  # fmt: skip
            dinp = dx if dinp is None else dinp + dx
            dhx[k] = dh
            if dcx is not None:
                dcx[k] = dc
        if layer > 0:
            mask = kept[layer - 1]["mask"]
            dy = dinp if mask is None else dinp * mask
    return dinp, dparams, dhx, dcx
