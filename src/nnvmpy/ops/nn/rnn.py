"""RNN: MXNet's fused multi-layer (bi)directional rnn_relu / rnn_tanh / lstm / gru.

    inputs   data (T, N, C), parameters (packed: _rnn_layout.py), state (L*D, N, H or P),
             state_cell (L*D, N, H; lstm), sequence_length (N,; use_sequence_length)
    outputs  out (T, N, D*H or D*P), [hy like state, cy like state_cell] (state_outputs),
             then the hidden reserve (what backward reads: gates, cells, layer outputs)

The parameter vector's size follows from data and state_size (FInferShape is mutual:
the data's C is solved from a known parameter size). On the CPU the math is _rnn_cpu.py
(one input GEMM per layer and direction for all steps, then the recurrent steps, in
NumPy) driven by _rnn_stack.py; on the GPU _rnn_device.py runs the same schedule with
the device GEMM and the gate kernels of _rnn_kernels.py, projection, sequence lengths
and float16 (in float32 device buffers) included, without host copies of the data.
Dropout p between layers draws its masks from the op's kRandom Philox stream while
training, as the Dropout op does, on the device the data is on.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ...attrs import (
    FCompute_cpu,
    FCompute_gpu,
    FGradient,
    FInferShape,
    FInferType,
    FListInputNames,
    FListOutputNames,
    FNumVisibleOutputs,
    FResourceRequest,
    TIsBackward,
)
from ...base import InferError
from ...graph.grad import make_grad_node
from ...graph.node import NodeEntry
from ...infer import shape_assign, shape_is_known, shape_str, type_assign
from ...kernel.elementwise import req_mode
from ...kernel.launch import is_gpu
from ...param import Parameter, field
from ...registry import NodeAttrs, register_op
from ...resource import ResourceRequest
from . import _rnn_device, _rnn_kernels
from ._layer_util import host_copy
from ._rnn_cpu import Clip
from ._rnn_device import run_on_host
from ._rnn_layout import GATES, RnnLayout
from ._rnn_stack import rnn_backward, rnn_forward
from .dropout import draw_mask

_OP = "RNN"


class RNNParam(Parameter):
    state_size = field(int, lower_bound=1, describe="size of the state for each layer")
    num_layers = field(int, lower_bound=1, describe="number of stacked layers")
    bidirectional = field(
        bool, default=False, describe="whether to use bidirectional recurrent layers"
    )
    mode = field(
        str,
        enum={"rnn_relu": 0, "rnn_tanh": 1, "lstm": 2, "gru": 3},
        describe="the type of RNN to compute",
    )
    p = field(
        float, default=0.0, lower_bound=0.0, upper_bound=1.0,
        describe="drop rate of the dropout on the outputs of each RNN layer, except the last "
        "layer.",
    )  # fmt: skip
    state_outputs = field(
        bool, default=False, describe="Whether to have the states as symbol outputs."
    )
    projection_size = field(int, default=None, describe="size of project size")
    lstm_state_clip_min = field(
        float, default=None,
        describe="Minimum clip value of LSTM states. This option must be used together with "
        "lstm_state_clip_max.",
    )  # fmt: skip
    lstm_state_clip_max = field(
        float, default=None,
        describe="Maximum clip value of LSTM states. This option must be used together with "
        "lstm_state_clip_min.",
    )  # fmt: skip
    lstm_state_clip_nan = field(
        bool, default=False,
        describe="Whether to stop NaN from propagating in state by clipping it to min/max. "
        "If clipping range is not specified, this option is ignored.",
    )  # fmt: skip
    use_sequence_length = field(
        bool, default=False,
        describe="If set to true, this layer takes in an extra input parameter "
        "`sequence_length` to specify variable length sequence",
    )  # fmt: skip


def _is_lstm(attrs: NodeAttrs) -> bool:
    return bool(attrs.parsed.mode == "lstm")


def _input_names(attrs: NodeAttrs) -> list[str]:
    names = ["data", "parameters", "state"]
    if _is_lstm(attrs):
        names.append("state_cell")
    if attrs.parsed.use_sequence_length:
        names.append("sequence_length")
    return names


def _visible(attrs: NodeAttrs) -> int:
    if not attrs.parsed.state_outputs:
        return 1
    return 3 if _is_lstm(attrs) else 2


def _output_names(attrs: NodeAttrs) -> list[str]:
    names = ["output", "state_output", "statecell_output"][: _visible(attrs)]
    return [*names, "reserve"]


def layout_of(attrs: NodeAttrs, input_size: int) -> RnnLayout:
    p = attrs.parsed
    if p.projection_size is not None and p.mode != "lstm":
        raise InferError(
            f"{_OP}: projection_size is only supported with mode='lstm', got {p.mode!r}"
        )
    if p.projection_size is not None and not 0 < p.projection_size < p.state_size:
        raise InferError(
            f"{_OP}: projection_size must be in (0, state_size={p.state_size}), got "
            f"{p.projection_size}"
        )
    clips = (p.lstm_state_clip_min, p.lstm_state_clip_max)
    clipping = any(c is not None for c in clips)
    if clipping and (p.mode != "lstm" or None in clips or clips[0] > clips[1]):
        raise InferError(
            f"{_OP}: lstm_state_clip_min and lstm_state_clip_max go together, with "
            f"mode='lstm' and min <= max; got min={clips[0]}, max={clips[1]}, mode={p.mode!r}"
        )
    return RnnLayout(
        mode=p.mode,
        layers=p.num_layers,
        dirs=2 if p.bidirectional else 1,
        input_size=input_size,
        hidden=p.state_size,
        proj=p.projection_size or 0,
        dropout=p.p > 0,
    )


def _solve_input_size(attrs: NodeAttrs, size: int) -> int:
    """The data's C for a parameter vector of `size` (the size is linear in C)."""
    base = layout_of(attrs, 0).param_size()
    per = layout_of(attrs, 1).param_size() - base
    if size < base or (size - base) % per:
        raise InferError(
            f"{_OP}: input 'parameters' has {size} elements, which fits no input size for "
            f"mode={attrs.parsed.mode!r}, state_size={attrs.parsed.state_size}, "
            f"num_layers={attrs.parsed.num_layers}"
        )
    return (size - base) // per


def _infer_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    p = attrs.parsed
    names = _input_names(attrs)
    if len(in_shapes) != len(names):
        raise InferError(f"{_OP}: expects {len(names)} inputs {names}, got {len(in_shapes)}")
    data = in_shapes[0]
    if data is not None and len(data) != 3:
        raise InferError(
            f"{_OP}: input 'data' must be 3-D (seq_len, batch, input_size), got {shape_str(data)}"
        )
    params = in_shapes[1]
    if (data is None or data[2] is None) and params is not None and params[0] is not None:
        shape_assign(
            in_shapes, 0, (None, None, _solve_input_size(attrs, params[0])), f"{_OP}: input 'data'"
        )
    state = in_shapes[2]  # the batch from the state
    if (data is None or data[1] is None) and state is not None and len(state) == 3:
        shape_assign(in_shapes, 0, (None, state[1], None), f"{_OP}: input 'data'")
    if out_shapes[0] is not None:
        shape_assign(in_shapes, 0, (*out_shapes[0][:2], None), f"{_OP}: input 'data'")
    data = in_shapes[0]
    if data is None:
        return False
    steps, batch, inp = data
    if inp is not None:
        lay = layout_of(attrs, inp)
        shape_assign(
            in_shapes,
            1,
            (lay.param_size(),),
            f"{_OP}: input 'parameters' (state_size={p.state_size})",
        )
    lay = layout_of(attrs, inp or 0)
    slots = lay.layers * lay.dirs
    state_shape = (slots, batch, lay.out_size)
    shape_assign(in_shapes, 2, state_shape, f"{_OP}: input 'state'")
    at = 3
    if _is_lstm(attrs):
        shape_assign(in_shapes, 3, (slots, batch, p.state_size), f"{_OP}: input 'state_cell'")
        at = 4
    if p.use_sequence_length:
        shape_assign(in_shapes, at, (batch,), f"{_OP}: input 'sequence_length'")
    shape_assign(out_shapes, 0, (steps, batch, lay.dirs * lay.out_size), f"{_OP}: output 'output'")
    if _visible(attrs) > 1:
        shape_assign(out_shapes, 1, state_shape, f"{_OP}: output 'state_output'")
    if _visible(attrs) > 2:
        shape_assign(out_shapes, 2, in_shapes[3], f"{_OP}: output 'statecell_output'")
    if steps is not None and batch is not None:
        shape_assign(
            out_shapes, len(out_shapes) - 1, (lay.reserve_size(steps, batch),), f"{_OP}: reserve"
        )
    return all(shape_is_known(s) for s in (*in_shapes, *out_shapes))


def _infer_type(attrs: NodeAttrs, in_types: list[Any], out_types: list[Any]) -> bool:
    n_float = 4 if _is_lstm(attrs) else 3
    dtype = next((t for t in (*in_types[:n_float], *out_types) if t is not None), None)
    if dtype is None:
        return False
    for i in range(n_float):
        type_assign(in_types, i, dtype, f"{_OP}: input {_input_names(attrs)[i]!r}")
    for i in range(len(out_types)):
        type_assign(out_types, i, dtype, f"{_OP}: output {_output_names(attrs)[i]!r}")
    if len(in_types) > n_float and in_types[n_float] is None:  # lengths: any numeric type
        type_assign(in_types, n_float, dtype)
    return all(t is not None for t in (*in_types, *out_types))


def _check_lengths(lengths: np.ndarray, steps: int) -> None:
    bad = np.flatnonzero((lengths < 1) | (lengths > steps))
    if bad.size:
        i = int(bad[0])
        raise InferError(
            f"{_OP}: sequence_length[{i}] = {lengths[i]} is out of range; expected "
            f"1 <= sequence_length <= {steps} (the data's seq_len)"
        )


def _split_inputs(
    attrs: NodeAttrs, inputs: list[Any], check: bool = True
) -> tuple[Any, Any, Any, Any, Any]:
    """(x, params, hx, cx, lengths); check: the lengths are NumPy, check their range."""
    x, params, hx = inputs[:3]
    cx = inputs[3] if _is_lstm(attrs) else None
    lengths = None
    if attrs.parsed.use_sequence_length:
        lengths = inputs[4 if _is_lstm(attrs) else 3]
        if check:
            _check_lengths(np.asarray(lengths), x.shape[0])
    return x, params, hx, cx, lengths


def _clip(attrs: NodeAttrs) -> Clip:
    p = attrs.parsed
    return Clip(p.lstm_state_clip_min, p.lstm_state_clip_max, bool(p.lstm_state_clip_nan))


def _assign(out: np.ndarray, req: Any, value: Any) -> None:
    mode = req_mode(_OP, req)
    if value is None or mode is None:
        return
    if mode == "add":
        out += value
    else:
        out[...] = value


def _mask_drawer(attrs: NodeAttrs, ctx: Any, layers: int) -> Callable[[Any], None] | None:
    """What writes the dropout mask between layers while training: draws from the op's
    kRandom Philox stream (Dropout's), made on the mask's device."""
    p = attrs.parsed.p
    if p <= 0 or not ctx.is_train or layers < 2:
        return None
    return lambda mask: draw_mask(ctx, mask, p)


def _forward_host(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    x, params, hx, cx, lengths = _split_inputs(attrs, inputs)
    lay = layout_of(attrs, x.shape[2])
    dropout = _mask_drawer(attrs, ctx, lay.layers)
    direct = req_mode(_OP, req[-1]) == "write" and outputs[-1].flags.c_contiguous
    reserve = outputs[-1] if direct else np.empty(lay.reserve_size(*x.shape[:2]), x.dtype)
    out, hy, cy = rnn_forward(lay, x, params, hx, cx, lengths, reserve, dropout, _clip(attrs))
    if not direct:
        _assign(outputs[-1], req[-1], reserve)
    _assign(outputs[0], req[0], out)
    if _visible(attrs) > 1:
        _assign(outputs[1], req[1], hy)
    if _visible(attrs) > 2:
        _assign(outputs[2], req[2], cy)


def _backward_host(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    vis = _visible(attrs)
    douts = inputs[:vis]
    n_in = len(_input_names(attrs))
    fwd_inputs, out, reserve = inputs[vis : vis + n_in], inputs[vis + n_in], inputs[vis + n_in + 1]
    x, params, hx, cx, lengths = _split_inputs(attrs, fwd_inputs)
    lay = layout_of(attrs, x.shape[2])
    dhy = douts[1] if vis > 1 else np.zeros_like(hx)
    dcy = None if cx is None else (douts[2] if vis > 2 else np.zeros_like(cx))
    dp = outputs[1]  # the parameter gradient straight into its output (17 MB at H=512)
    direct = (
        req_mode(_OP, req[1]) == "write"
        and dp.flags.c_contiguous
        and (dp.shape, dp.dtype) == (params.shape, params.dtype)
    )
    grads = rnn_backward(
        lay, x, params, hx, cx, lengths, out, reserve, douts[0], dhy, dcy, dp if direct else None
    )
    for k, g in enumerate(grads):
        if g is not None and not (k == 1 and direct):
            _assign(outputs[k], req[k], g)
    if lengths is not None:
        _assign(outputs[-1], req[-1], 0)


def _on_device(ctx: Any, x: Any) -> bool:
    """The device schedule (_rnn_device.py) runs it: always on the GPU; on the CPU only
    when a test forces it (and not float16, which numba cannot compute on the CPU)."""
    if is_gpu(ctx):
        return True
    return bool(FORCE_DEVICE_PATH and x.dtype != np.float16)


#: tests set this to run the device schedule (the GPU's) on the CPU as well
FORCE_DEVICE_PATH = False


def _device_lengths(ctx: Any, lengths: Any, steps: int) -> None:
    """The named range error; reads the (N,) lengths back to the host, the one device
    read of the GPU path (MXNet's GPU RNN copies them to the host as well)."""
    if lengths is not None:
        _check_lengths(host_copy(ctx, lengths), steps)


def _device_forward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    x, params, hx, cx, lengths = _split_inputs(attrs, inputs, check=False)
    steps, batch = int(x.shape[0]), int(x.shape[1])
    _device_lengths(ctx, lengths, steps)
    lay = layout_of(attrs, int(x.shape[2]))
    dev = _rnn_device.Device(ctx, x)
    draw = _mask_drawer(attrs, ctx, lay.layers)
    modes = _rnn_device.modes_of(req)
    reserve = outputs[-1] if modes[-1] == "write" else dev.empty(lay.reserve_size(steps, batch))
    clip = _clip(attrs)
    clip_args = (clip.low is not None, clip.low or 0.0, clip.high or 0.0, clip.nan)
    lens = _rnn_device.sequence_lengths(dev, lengths, steps, batch)
    results = _rnn_device.forward(dev, lay, x, params, hx, cx, lens, reserve, draw, clip_args)
    for k in range(_visible(attrs)):
        if modes[k] is not None:
            dev.combine(outputs[k], results[k], None, 3 if modes[k] == "add" else 0)
    if modes[-1] == "add":
        dev.combine(outputs[-1], reserve, None, 3)


def _device_backward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    vis = _visible(attrs)
    n_in = len(_input_names(attrs))
    fwd_inputs, out, reserve = inputs[vis : vis + n_in], inputs[vis + n_in], inputs[vis + n_in + 1]
    x, params, hx, cx, lengths = _split_inputs(attrs, fwd_inputs, check=False)
    lay = layout_of(attrs, int(x.shape[2]))
    dev = _rnn_device.Device(ctx, x)
    steps, batch = int(x.shape[0]), int(x.shape[1])
    zeros = dev.full(tuple(int(s) for s in hx.shape), 0.0)
    dhy = inputs[1] if vis > 1 else zeros
    dcy = None
    if cx is not None:
        dcy = inputs[2] if vis > 2 else dev.full(tuple(int(s) for s in cx.shape), 0.0)
    modes = _rnn_device.modes_of(req)
    lens = _rnn_device.sequence_lengths(dev, lengths, steps, batch)
    _rnn_device.backward(
        dev, lay, x, params, hx, cx, lens, out, reserve, inputs[0], dhy, dcy, outputs, modes
    )
    if lengths is not None and modes[-1] == "write":  # the lengths get no gradient
        dev.run(_rnn_kernels.fill, outputs[-1].size, outputs[-1], 0)


def _on_device_run(
    compute: Any, attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    if is_gpu(ctx) and any(a.dtype == np.float16 for a in (*inputs, *outputs)):
        _rnn_device.in_float32(compute, attrs, ctx, inputs, req, outputs)
    else:
        compute(attrs, ctx, inputs, req, outputs)


def _forward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    if _on_device(ctx, inputs[0]):
        _on_device_run(_device_forward, attrs, ctx, inputs, req, outputs)
    else:
        run_on_host(_forward_host, attrs, ctx, inputs, req, outputs)


def _backward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    if _on_device(ctx, inputs[_visible(attrs)]):
        _on_device_run(_device_backward, attrs, ctx, inputs, req, outputs)
    else:
        run_on_host(_backward_host, attrs, ctx, inputs, req, outputs)


def _gradient(node: Any, ograds: list[Any]) -> list[Any]:
    vis = _visible(node.attrs)
    out = NodeEntry(node, 0)
    reserve = NodeEntry(node, node.num_outputs() - 1)
    return make_grad_node("_backward_RNN", node, [*ograds[:vis], *node.inputs, out, reserve])


def _resources(attrs: NodeAttrs) -> list[ResourceRequest]:
    return [ResourceRequest.kRandom] if attrs.parsed.p > 0 else []


(
    register_op(_OP)
    .describe(
        "Applies recurrent layers to input data. Currently, vanilla RNN, LSTM and GRU are "
        "implemented, with both multi-layer and bidirectional support.\n\n"
        "data is (seq_len, batch, input_size); parameters is MXNet's packed vector (all "
        "weights, layer by layer and direction by direction, then all biases); gates are "
        "ordered i, f, g, o (lstm) and r, z, n (gru)."
    )
    .set_attr_parser(RNNParam)
    .set_num_inputs(lambda attrs: len(_input_names(attrs)))
    .set_num_outputs(lambda attrs: _visible(attrs) + 1)
    .set_attr(FListInputNames, _input_names)
    .set_attr(FListOutputNames, _output_names)
    .set_attr(FNumVisibleOutputs, _visible)
    .set_attr(FInferShape, _infer_shape)
    .set_attr(FInferType, _infer_type)
    .set_attr(FResourceRequest, _resources)
    .set_attr(FCompute_cpu, _forward)
    .set_attr(FCompute_gpu, _forward)
    .set_attr(FGradient, _gradient)
    .add_argument("data", "NDArray-or-Symbol", "Input data to RNN")
    .add_argument(
        "parameters", "NDArray-or-Symbol", "Vector of all RNN trainable parameters concatenated"
    )
    .add_argument("state", "NDArray-or-Symbol", "initial hidden state of the RNN")
    .add_argument(
        "state_cell", "NDArray-or-Symbol", "initial cell state for LSTM networks (only for LSTM)"
    )
    .add_argument(
        "sequence_length",
        "NDArray-or-Symbol",
        "Vector of valid sequence lengths for each element in batch. (Only used if "
        "use_sequence_length kwarg is True)",
    )
    .add_arguments(RNNParam.fields())
)
(  # inputs: d(visible outputs), the forward inputs, out, reserve -> d(forward inputs)
    register_op("_backward_RNN")
    .set_attr_parser(RNNParam)
    .set_num_inputs(lambda attrs: _visible(attrs) + len(_input_names(attrs)) + 2)
    .set_num_outputs(lambda attrs: len(_input_names(attrs)))
    .set_attr(TIsBackward, True)
    .set_attr(FCompute_cpu, _backward)
    .set_attr(FCompute_gpu, _backward)
)

__all__ = ["GATES", "RNNParam", "layout_of"]
