"""The fused RNN on either device with the device's own GEMM and the gate kernels.

The same schedule as _rnn_cpu.py / _rnn_stack.py (one input GEMM per layer and
direction, then per step a recurrent GEMM and one gate kernel; backward collects the
weight gradients in one GEMM each), written with ops/matrix.gemm and the one-body
kernels of _rnn_kernels.py, so on the GPU everything stays in device memory:

- an LSTM projection is one more GEMM per step (h = W_r (o * tanh c)), and two in
  backward (the step's gradient through W_r, and dW_r once at the end);
- sequence lengths are a per-row test inside the step kernels (_rnn_kernels.py): past
  its length a row's output is 0 and its states are carried, so the final states are
  each row's last valid step's and the reverse direction starts at it;
- float16 runs in float32 device buffers (`in_float32`: cast kernels in and out), as
  the CPU computes it in float32 on the host.

The only values read back to the host are the sequence lengths, once in forward, to
raise a named error when one is out of range (MXNet's GPU RNN copies them to the host
too, for cuDNN). The CPU keeps the NumPy schedule (no compile, same GEMMs).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ...base import OpReqType
from ...kernel import scratch
from ...kernel.elementwise import req_mode
from ...kernel.launch import run_rows
from ..matrix import gemm, is_cpu, view
from . import _rnn_kernels as K
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
    """The CPU's NumPy compute(attrs, ctx, inputs, req, outputs), float16 in float32.

    NumPy arrays only: the GPU never comes here (float16 there is `in_float32`).
    """
    host_in = [_compute_dtype(a) for a in inputs]
    if all(o.dtype != _HALF for o in outputs):
        compute(attrs, ctx, host_in, req, outputs)
        return
    host_out = [np.array(_compute_dtype(o)) for o in outputs]
    compute(attrs, ctx, host_in, req, host_out)
    for dst, src in zip(outputs, host_out):
        dst[...] = src


class Device:
    """Allocation, kernel launches and GEMMs where the op runs."""

    def __init__(self, ctx: Any, like: Any) -> None:
        self.ctx, self.dtype, self.cpu = ctx, like.dtype, is_cpu(like)
        if not self.cpu:
            from nnvmpy.ops.matrix import bind_cuda

            bind_cuda(_OP)  # a clear error where CUDA is unusable

    def empty(self, *shape: int, dtype: Any = None) -> Any:
        dtype = self.dtype if dtype is None else dtype
        if self.cpu:
            return scratch.host_empty(shape, dtype)
        return scratch.empty(self.ctx, shape, dtype)

    def full(self, shape: tuple[int, ...], value: float) -> Any:
        """A new array of `value` (filled by a kernel: nothing is uploaded)."""
        out = self.empty(*shape)
        self.run(K.fill, out.size, out, value)
        return out

    def to_device(self, a: np.ndarray) -> Any:
        a = np.ascontiguousarray(a, dtype=self.dtype)
        if self.cpu:
            return a
        return scratch.upload(self.ctx, a)

    def run(self, kernel: Any, items: int, *args: Any) -> None:
        run_rows(self.ctx, _OP, kernel, items, *args)

    def gemm(
        self, out: Any, req: str, a: Any, ta: bool, b: Any, tb: bool, bias: Any = None
    ) -> None:
        gemm(self.ctx, out, req, a, ta, b, tb, bias)

    def combine(self, out: Any, a: Any, b: Any, mode: int) -> None:
        self.run(K.combine, out.size, out, a, a if b is None else b, mode)


def _shape(a: Any) -> tuple[int, ...]:
    return tuple(int(s) for s in a.shape)


def in_float32(
    compute: Callable[..., None],
    attrs: Any,
    ctx: Any,
    inputs: list[Any],
    req: list[Any],
    outputs: list[Any],
) -> None:
    """compute(...) with every float16 array as a float32 device copy (cast kernels).

    The float16 outputs are computed into float32 buffers and cast into place (added for
    kAddTo), so the arithmetic is float32 as on the CPU, and nothing leaves the device.
    """
    half = next(a for a in (*inputs, *outputs) if a.dtype == _HALF)
    dev = Device(ctx, half)

    def widen(a: Any) -> Any:
        if a.dtype != _HALF:
            return a
        wide = dev.empty(*_shape(a), dtype=np.float32)
        dev.run(K.cast, wide.size, wide, a, False)
        return wide

    wide_in = [widen(a) for a in inputs]
    wide_out, wide_req = [], []
    for o, r in zip(outputs, req):
        mode = req_mode(_OP, r)
        if o.dtype != _HALF or mode is None:
            wide_out.append(o)
            wide_req.append(r)
        else:
            wide_out.append(dev.empty(*_shape(o), dtype=np.float32))
            wide_req.append(OpReqType.kWriteTo)
    compute(attrs, ctx, wide_in, wide_req, wide_out)
    for o, w, r in zip(outputs, wide_out, req):
        if w is not o:
            dev.run(K.cast, o.size, o, w, req_mode(_OP, r) == "add")


def _mat(a: Any) -> Any:
    """(T, N, F) -> (T*N, F)."""
    return view(a, (a.shape[0] * a.shape[1], a.shape[2]))


def _order(steps: int, reverse: bool) -> range:
    return range(steps - 1, -1, -1) if reverse else range(steps)


def _forward_direction(
    dev: Device, lay: RnnLayout, x: Any, w: dict[str, Any], h: Any, c: Any, lens: Any,
    reverse: bool, res: dict[str, Any], y: Any, clip: Any,
) -> None:  # fmt: skip
    """Fills y (T, N, out) and res; h and c hold the initial states and end as the final
    ones (each row's state at its last valid step)."""
    steps, batch = x.shape[0], x.shape[1]
    hid, mode, proj = lay.hidden, lay.mode, lay.proj
    gh = lay.gates * hid
    bias = dev.empty(gh)
    dev.run(K.fold_bias, gh, bias, w["bx"], w["bh"], 2 * hid if mode == "gru" else gh)
    gates, extra = res["gates"], res["extra"]
    dev.gemm(_mat(gates), "write", _mat(x), False, w["wx"], True, bias)
    hh = dev.empty(batch, gh) if mode == "gru" else None
    hr = dev.empty(batch, hid) if proj else None  # o * tanh(c), before W_r
    hproj = dev.empty(batch, proj) if proj else None  # W_r (o * tanh(c)), before masking
    cs = 2 * hid if proj else hid
    items = batch * hid
    for t in _order(steps, reverse):
        g, yt = gates[t], y[t]
        if mode == "gru":
            dev.gemm(hh, "write", h, False, w["wh"], True)
            dev.run(K.gru_forward_step, items, g, hh, w["bh"][2 * hid :], h, yt, extra[t],
                    lens, t, hid)  # fmt: skip
            continue
        dev.gemm(g, "add", h, False, w["wh"], True)
        if mode != "lstm":
            dev.run(K.rnn_forward_step, items, g, h, yt, lens, t, hid, mode == "rnn_relu")
        elif not proj:
            dev.run(K.lstm_forward_step, items, g, c, extra[t], cs, yt, h, lens, t, hid, *clip)
        else:
            dev.run(K.lstm_forward_step, items, g, c, extra[t], cs, hr, hr, lens, t, hid, *clip)
            dev.gemm(hproj, "write", hr, False, w["wr"], True)
            dev.run(K.carry_step, batch * proj, yt, h, hproj, lens, t, proj)


def sequence_lengths(dev: Device, lengths: Any, steps: int, batch: int) -> Any:
    """The lengths as the kernels read them: as given (float16 widened by in_float32
    already), or every row the whole sequence."""
    return dev.full((batch,), steps) if lengths is None else lengths


def forward(
    dev: Device, lay: RnnLayout, x: Any, params: Any, hx: Any, cx: Any, lens: Any,
    reserve: Any, draw_mask: Callable[[Any], None] | None, clip: Any,
) -> tuple[Any, Any, Any]:  # fmt: skip
    """(out, hy, cy) as device arrays; draw_mask(mask) writes a dropout mask (training)."""
    steps, batch = x.shape[0], x.shape[1]
    weights = lay.param_views(params)
    kept = lay.reserve_views(reserve, steps, batch)
    d_count = lay.dirs
    hy = dev.empty(*_shape(hx))
    cy = None if cx is None else dev.empty(*_shape(cx))
    inp = x
    for layer in range(lay.layers):
        ys = [dev.empty(steps, batch, lay.out_size) for _ in range(d_count)]
        for d in range(d_count):
            k = layer * d_count + d
            dev.combine(hy[k], hx[k], None, 0)  # the carried states, final in place
            if cy is not None:
                dev.combine(cy[k], cx[k], None, 0)
            _forward_direction(
                dev, lay, inp, weights[k], hy[k], None if cy is None else cy[k], lens,
                d == 1, kept[layer]["dirs"][d], ys[d], clip,
            )  # fmt: skip
        out = ys[0] if d_count == 1 else _join(dev, ys)
        view_ = kept[layer]
        if view_["out"] is not None:
            dev.combine(view_["out"], out, None, 0)
            if view_["mask"] is not None:
                shape = _shape(out)
                if draw_mask is None:
                    dev.run(K.fill, view_["mask"].size, view_["mask"], 1.0)
                else:  # kRandom's Philox stream, drawn on the device
                    draw_mask(view_["mask"])
                dropped = dev.empty(*shape)
                dev.combine(dropped, out, view_["mask"], 2)
                out = dropped
        inp = out
    return inp, hy, cy


def _join(dev: Device, ys: list[Any]) -> Any:
    steps, batch, hid = _shape(ys[0])
    out = dev.empty(steps, batch, len(ys) * hid)
    for d, y in enumerate(ys):
        dev.run(K.to_columns, y.size, out, y, hid, len(ys) * hid, d * hid)
    return out


def _column(dev: Device, a: Any, d: int, dirs: int, offset: int = 0) -> Any:
    """Direction d's contiguous (T, N, W) part of a (T, N, dirs*W + offset) array, from
    feature `offset` on (a reserve row's o*tanh(c) after the cell)."""
    if dirs == 1 and offset == 0:
        return a
    steps, batch, total = _shape(a)
    width = (total - offset) // dirs
    part = dev.empty(steps, batch, width)
    dev.run(K.from_columns, part.size, part, a, width, total, offset + d * width, False)
    return part


def _previous(dev: Device, seq: Any, first: Any, lens: Any, width: int, reverse: bool) -> Any:
    """(T, N, width): the state each step started from (seq's rows may be wider)."""
    steps, batch, stride = _shape(seq)
    out = dev.empty(steps, batch, width)
    dev.run(K.previous_states, out.size, out, seq, first, lens, steps, batch, width, stride,
            reverse)  # fmt: skip
    return out


def _backward_direction(
    dev: Device, lay: RnnLayout, x: Any, w: dict[str, Any], gw: dict[str, Any], wreq: str | None,
    h0: Any, c0: Any, y: Any, res: dict[str, Any], dy: Any, dh_last: Any, dc_last: Any,
    lens: Any, reverse: bool, dx: Any, dx_req: str | None,
) -> tuple[Any, Any]:  # fmt: skip
    steps, batch = int(x.shape[0]), int(x.shape[1])
    hid, mode, proj, width = lay.hidden, lay.mode, lay.proj, lay.out_size
    gh = lay.gates * hid
    cs = 2 * hid if proj else hid
    items = batch * hid
    gates, extra = res["gates"], res["extra"]
    dg = dev.empty(steps, batch, gh)
    e = dev.empty(steps, batch, gh) if mode == "gru" else dg
    hp = _previous(dev, y, h0, lens, width, reverse)
    dh = dev.empty(batch, width)
    dev.combine(dh, dh_last, None, 0)
    carry = dev.full((batch, width), 0.0)  # the state gradient kept over rows' past ends
    cp: Any = None
    dc: Any = None
    dproj: Any = None
    dhr: Any = None
    zeros: Any = None
    if mode == "lstm":
        cp = _previous(dev, extra, c0, lens, hid, reverse)
        dc = dev.empty(batch, hid)
        dev.combine(dc, dc_last, None, 0)
    if proj:
        dproj, dhr = dev.empty(steps, batch, proj), dev.empty(batch, hid)
        zeros = dev.full((batch, hid), 0.0)
    for t in reversed(_order(steps, reverse)):
        if mode == "lstm":
            if proj:
                dev.run(K.step_gradient, batch * proj, dproj[t], dy[t], dh, carry, lens, t, proj)
                dev.gemm(dhr, "write", dproj[t], False, w["wr"], False)
                dev.run(K.lstm_backward_step, items, dhr, zeros, zeros, gates[t], extra[t], cs,
                        cp[t], dc, dg[t], lens, t, hid)  # fmt: skip
            else:
                dev.run(K.lstm_backward_step, items, dy[t], dh, carry, gates[t], extra[t], cs,
                        cp[t], dc, dg[t], lens, t, hid)  # fmt: skip
        elif mode == "gru":
            dev.run(K.gru_backward_step, items, dy[t], dh, carry, gates[t], extra[t], hp[t],
                    dg[t], e[t], lens, t, hid)  # fmt: skip
            dev.gemm(dh, "write", e[t], False, w["wh"], False)
            continue
        else:
            dev.run(K.rnn_backward_step, items, dy[t], dh, carry, gates[t], dg[t], lens, t, hid,
                    mode == "rnn_relu")  # fmt: skip
        dev.gemm(dh, "write", dg[t], False, w["wh"], False)
    dev.combine(dh, carry, None, 3)
    if wreq is not None:
        flat_g, flat_e = _mat(dg), _mat(e)
        dev.gemm(gw["wx"], wreq, flat_g, True, _mat(x), False)
        ones = dev.full((1, steps * batch), 1.0)
        dev.gemm(view(gw["bx"], (1, gh)), wreq, ones, False, flat_g, False)
        dev.gemm(view(gw["bh"], (1, gh)), wreq, ones, False, flat_e, False)
        dev.gemm(gw["wh"], wreq, flat_e, True, _mat(hp), False)  # sum_t e[t]^T h_prev[t]
        if proj:  # dW_r = sum_t dproj[t]^T (o * tanh c)[t]
            hrs = _column(dev, extra, 0, 1, offset=hid)
            dev.gemm(gw["wr"], wreq, _mat(dproj), True, _mat(hrs), False)
    if dx_req is not None:
        dev.gemm(_mat(dx), dx_req, _mat(dg), False, w["wx"], False)
    return dh, dc


def backward(
    dev: Device, lay: RnnLayout, x: Any, params: Any, hx: Any, cx: Any, lens: Any, out: Any,
    reserve: Any, dout: Any, dhy: Any, dcy: Any, outputs: list[Any], modes: list[str | None],
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
                inp = dev.empty(*_shape(below["out"]))
                dev.combine(inp, below["out"], below["mask"], 2)
        y_all = out if layer == lay.layers - 1 else kept[layer]["out"]
        if layer == 0:
            dinp, dinp_mode = outputs[0], modes[0]
        else:
            dinp, dinp_mode = dev.empty(*_shape(inp)), "write"
        for d in range(d_count):
            k = layer * d_count + d
            c0 = None if cx is None else cx[k]
            dc_last = None if dcy is None else dcy[k]
            dh, dc = _backward_direction(
                dev, lay, inp, weights[k], grads[k], modes[1], hx[k], c0,
                _column(dev, y_all, d, d_count), kept[layer]["dirs"][d],
                _column(dev, dy, d, d_count), dhy[k], dc_last, lens, d == 1, dinp,
                None if dinp_mode is None else (dinp_mode if d == 0 else "add"),
            )  # fmt: skip
            _store(dev, outputs[2], modes[2], k, dh)
            if dc is not None:
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
