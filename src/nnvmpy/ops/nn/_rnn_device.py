"""The fused RNN on either device with the device's own GEMM and the gate kernels.

The same schedule as _rnn_cpu.py / _rnn_stack.py (one input GEMM per layer and
direction, then per step a recurrent GEMM and one gate kernel; backward collects the
weight gradients in one GEMM each), written with ops/matrix.gemm and the one-body
kernels of _rnn_kernels.py, so on the GPU everything stays in device memory. This is
the GPU path; the CPU keeps the NumPy schedule (no compile, same GEMMs). What the GPU
path does not cover — projection_size, sequence lengths, float16 — goes through the
host (`run_on_host`): the arrays are copied there, computed and copied back.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ...kernel.elementwise import req_mode
from ...kernel.launch import is_gpu, run_rows
from ..matrix import gemm, is_cpu, view
from . import _rnn_kernels as K
from ._layer_util import host_copy
from ._rnn_layout import RnnLayout

_HALF = np.dtype(np.float16)
_OP = "RNN"


def _compute_dtype(a: np.ndarray) -> np.ndarray:
    return a.astype(np.float32) if a.dtype == _HALF else a


def run_on_host(
    compute: Callable[..., None],
    attrs: Any,
    ctx: Any,
    inputs: list[Any],
    req: list[Any],
    outputs: list[Any],
) -> None:
    """compute(attrs, ctx, inputs, req, outputs) on NumPy arrays of a float dtype >= 32 bits."""
    gpu = is_gpu(ctx)
    host_in = [_compute_dtype(host_copy(ctx, a) if gpu else a) for a in inputs]
    if not gpu and all(o.dtype != _HALF for o in outputs):
        compute(attrs, ctx, host_in, req, outputs)
        return
    host_out = [np.array(_compute_dtype(host_copy(ctx, o) if gpu else o)) for o in outputs]
    compute(attrs, ctx, host_in, req, host_out)
    stream = getattr(getattr(ctx, "run_ctx", None), "stream", None) or 0
    for dst, src in zip(outputs, host_out):
        if gpu:
            dst.copy_to_device(np.ascontiguousarray(src.astype(dst.dtype)), stream=stream)
        else:
            dst[...] = src


class Device:
    """Allocation, kernel launches and GEMMs where the op runs."""

    def __init__(self, ctx: Any, like: Any) -> None:
        self.ctx, self.dtype, self.cpu = ctx, like.dtype, is_cpu(like)
        self.cuda = None
        if not self.cpu:
            from ..matrix import bind_cuda

            self.cuda = bind_cuda(_OP)
        self.stream = getattr(getattr(ctx, "run_ctx", None), "stream", None) or 0

    def empty(self, *shape: int) -> Any:
        if self.cpu:
            return np.empty(shape, self.dtype)
        return self.cuda.device_array(shape, self.dtype, stream=self.stream)  # type: ignore[union-attr]

    def to_device(self, a: np.ndarray) -> Any:
        a = np.ascontiguousarray(a, dtype=self.dtype)
        if self.cpu:
            return a
        return self.cuda.to_device(a, stream=self.stream)  # type: ignore[union-attr]

    def run(self, kernel: Any, items: int, *args: Any) -> None:
        run_rows(self.ctx, _OP, kernel, items, *args)

    def gemm(
        self, out: Any, req: str, a: Any, ta: bool, b: Any, tb: bool, bias: Any = None
    ) -> None:
        gemm(self.ctx, out, req, a, ta, b, tb, bias)

    def combine(self, out: Any, a: Any, b: Any, mode: int) -> None:
        self.run(K.combine, out.size, out, a, a if b is None else b, mode)


def _mat(a: Any) -> Any:
    """(T, N, F) -> (T*N, F)."""
    return view(a, (a.shape[0] * a.shape[1], a.shape[2]))


def _forward_direction(
    dev: Device, lay: RnnLayout, x: Any, w: dict[str, Any], h0: Any, c0: Any,
    reverse: bool, res: dict[str, Any], y: Any, clip: Any,
) -> tuple[Any, Any]:  # fmt: skip
    """Fills y (T, N, H) and res; returns the last (h, c)."""
    steps, batch = x.shape[0], x.shape[1]
    hid, mode = lay.hidden, lay.mode
    gh = lay.gates * hid
    bias = dev.empty(gh)
    dev.run(K.fold_bias, gh, bias, w["bx"], w["bh"], 2 * hid if mode == "gru" else gh)
    gates = res["gates"]
    dev.gemm(_mat(gates), "write", _mat(x), False, w["wx"], True, bias)
    hh = dev.empty(batch, gh) if mode == "gru" else None
    h, c = h0, c0
    items = batch * hid
    for t in range(steps - 1, -1, -1) if reverse else range(steps):
        g, yt = gates[t], y[t]
        if mode == "gru":
            dev.gemm(hh, "write", h, False, w["wh"], True)
            dev.run(
                K.gru_forward_step, items, g, hh, w["bh"][2 * hid :], h, yt, res["extra"][t], hid
            )
        else:
            dev.gemm(g, "add", h, False, w["wh"], True)
            if mode == "lstm":
                ct = res["extra"][t]
                dev.run(K.lstm_forward_step, items, g, c, ct, yt, hid, *clip)
                c = ct
            else:
                dev.run(K.rnn_forward_step, items, g, yt, mode == "rnn_relu")
        h = yt
    return h, c


def forward(
    dev: Device, lay: RnnLayout, x: Any, params: Any, hx: Any, cx: Any, reserve: Any,
    mask_draw: Callable[[tuple[int, ...]], np.ndarray] | None, clip: Any,
) -> tuple[Any, Any, Any]:  # fmt: skip
    """(out, hy, cy) as device arrays; mask_draw(shape) gives a dropout mask (training)."""
    steps, batch = x.shape[0], x.shape[1]
    weights = lay.param_views(params)
    kept = lay.reserve_views(reserve, steps, batch)
    hid, d_count = lay.hidden, lay.dirs
    hy = dev.empty(*hx.shape)
    cy = None if cx is None else dev.empty(*cx.shape)
    inp = x
    for layer in range(lay.layers):
        ys = [dev.empty(steps, batch, hid) for _ in range(d_count)]
        for d in range(d_count):
            k = layer * d_count + d
            h, c = _forward_direction(
                dev, lay, inp, weights[k], hx[k], None if cx is None else cx[k], d == 1,
                kept[layer]["dirs"][d], ys[d], clip,
            )  # fmt: skip
            dev.combine(hy[k], h, None, 0)
            if cy is not None:
                dev.combine(cy[k], c, None, 0)
        out = ys[0] if d_count == 1 else _join(dev, ys)
        view_ = kept[layer]
        if view_["out"] is not None:
            dev.combine(view_["out"], out, None, 0)
            if view_["mask"] is not None:
                shape = tuple(int(s) for s in out.shape)
                mask = np.ones(shape) if mask_draw is None else mask_draw(shape)
                dev.combine(view_["mask"], dev.to_device(mask), None, 0)
                dropped = dev.empty(*shape)
                dev.combine(dropped, out, view_["mask"], 2)
                out = dropped
        inp = out
    return inp, hy, cy


def _join(dev: Device, ys: list[Any]) -> Any:
    steps, batch, hid = (int(s) for s in ys[0].shape)
    out = dev.empty(steps, batch, len(ys) * hid)
    for d, y in enumerate(ys):
        dev.run(K.to_columns, y.size, out, y, hid, len(ys) * hid, d * hid)
    return out


def _column(dev: Device, a: Any, d: int, dirs: int) -> Any:
    """Direction d's contiguous (T, N, H) part of a (T, N, D*H) array."""
    if dirs == 1:
        return a
    steps, batch, total = (int(s) for s in a.shape)
    width = total // dirs
    part = dev.empty(steps, batch, width)
    dev.run(K.from_columns, part.size, part, a, width, total, d * width, False)
    return part


def _previous(seq: Any, first: Any, t: int, reverse: bool) -> Any:
    last = seq.shape[0] - 1
    if reverse:
        return first if t == last else seq[t + 1]
    return first if t == 0 else seq[t - 1]


def _backward_direction(
    dev: Device, lay: RnnLayout, x: Any, w: dict[str, Any], gw: dict[str, Any], wreq: str | None,
    h0: Any, c0: Any, y: Any, res: dict[str, Any], dy: Any, dh_last: Any, dc_last: Any,
    reverse: bool, dx: Any, dx_req: str | None,
) -> tuple[Any, Any]:  # fmt: skip
    steps, batch = int(x.shape[0]), int(x.shape[1])
    hid, mode = lay.hidden, lay.mode
    gh = lay.gates * hid
    items = batch * hid
    gates, extra = res["gates"], res["extra"]
    dg = dev.empty(steps, batch, gh)
    e = dev.empty(steps, batch, gh) if mode == "gru" else dg
    dh = dev.empty(batch, hid)
    dev.combine(dh, dh_last, None, 0)
    dc = direct = None
    if mode == "lstm":
        dc = dev.empty(batch, hid)
        dev.combine(dc, dc_last, None, 0)
    if mode == "gru":
        direct = dev.to_device(np.zeros((batch, hid)))
    order = range(steps - 1, -1, -1) if reverse else range(steps)
    for t in reversed(order):
        if mode == "lstm":
            cp = _previous(extra, c0, t, reverse)
            dev.run(K.lstm_backward_step, items, dy[t], dh, gates[t], extra[t], cp, dc, dg[t], hid)
            dev.gemm(dh, "write", dg[t], False, w["wh"], False)
        elif mode == "gru":
            hp = _previous(y, h0, t, reverse)
            dev.run(K.gru_backward_step, items, dy[t], dh, direct, gates[t], extra[t], hp,
                    dg[t], e[t], hid)  # fmt: skip
            dev.gemm(dh, "write", e[t], False, w["wh"], False)
        else:
            dev.run(K.rnn_backward_step, items, dy[t], dh, gates[t], dg[t], mode == "rnn_relu")
            dev.gemm(dh, "write", dg[t], False, w["wh"], False)
    if direct is not None:
        dev.combine(dh, direct, None, 3)
    if wreq is not None:
        flat_g, flat_e = _mat(dg), _mat(e)
        dev.gemm(gw["wx"], wreq, flat_g, True, _mat(x), False)
        ones = dev.to_device(np.ones((1, steps * batch)))
        dev.gemm(view(gw["bx"], (1, gh)), wreq, ones, False, flat_g, False)
        dev.gemm(view(gw["bh"], (1, gh)), wreq, ones, False, flat_e, False)
        # dW_h = sum_t e[t]^T h_prev[t]: the steps that start from y, then the first one
        first = 0 if not reverse else steps - 1
        dev.gemm(gw["wh"], wreq, e[first], True, h0, False)
        if steps > 1:
            rows = (steps - 1) * batch
            if reverse:
                es, ys = e[: steps - 1], y[1:]
            else:
                es, ys = e[1:], y[: steps - 1]
            dev.gemm(gw["wh"], "add", view(es, (rows, gh)), True, view(ys, (rows, hid)), False)
    if dx_req is not None:
        dev.gemm(_mat(dx), dx_req, _mat(dg), False, w["wx"], False)
    return dh, dc


def backward(
    dev: Device, lay: RnnLayout, x: Any, params: Any, hx: Any, cx: Any, out: Any, reserve: Any,
    dout: Any, dhy: Any, dcy: Any, outputs: list[Any], modes: list[str | None],
) -> None:  # fmt: skip
    """Writes (dx, dparams, dhx[, dcx]) into outputs as modes ('write', 'add', None) say."""
    steps, batch = int(x.shape[0]), int(x.shape[1])
    weights = lay.param_views(params)
    kept = lay.reserve_views(reserve, steps, batch)
    grads = lay.param_views(outputs[1])
    d_count = lay.dirs
    dy = dout
    for layer in reversed(range(lay.layers)):
        if layer == 0:
            inp = x
        else:
            below = kept[layer - 1]
            inp = below["out"]
            if below["mask"] is not None:
                inp = dev.empty(*(int(s) for s in below["out"].shape))
                dev.combine(inp, below["out"], below["mask"], 2)
        y_all = out if layer == lay.layers - 1 else kept[layer]["out"]
        if layer == 0:
            dinp, dinp_mode = outputs[0], modes[0]
        else:
            dinp, dinp_mode = dev.empty(*(int(s) for s in inp.shape)), "write"
        for d in range(d_count):
            k = layer * d_count + d
            c0 = None if cx is None else cx[k]
            dc_last = None if dcy is None else dcy[k]
            dh, dc = _backward_direction(
                dev, lay, inp, weights[k], grads[k], modes[1], hx[k], c0,
                _column(dev, y_all, d, d_count), kept[layer]["dirs"][d],
                _column(dev, dy, d, d_count), dhy[k], dc_last, d == 1, dinp,
                None if dinp_mode is None else (dinp_mode if d == 0 else "add"),
            )  # fmt: skip
            _store(dev, outputs[2], modes[2], k, dh)
            if dc is not None and len(outputs) > 3:
                _store(dev, outputs[3], modes[3], k, dc)
        if layer > 0:
            mask = kept[layer - 1]["mask"]
            if mask is not None:
                dev.combine(dinp, dinp, mask, 2)
            dy = dinp


def _store(dev: Device, out: Any, mode: str | None, k: int, value: Any) -> None:
    if mode is not None:
        dev.combine(out[k], value, None, 3 if mode == "add" else 0)


def modes_of(req: list[Any]) -> list[str | None]:
    return [req_mode(_OP, r) for r in req]
