"""Convolutional recurrent cells (mxnet.rnn.ConvRNNCell, ConvLSTMCell, ConvGRUCell).

The same recurrences as rnn_cell.py with the two FullyConnected layers replaced by
convolutions, so the state is a feature map: input-to-state uses the caller's kernel,
stride, pad and dilation; state-to-state always keeps the spatial size (stride 1, the
pad that a dilated odd kernel needs). The state's shape is what the input-to-state
convolution makes of `input_shape`, with the batch left open (0), as MXNet reports it.
"""

from __future__ import annotations

from typing import Any

from .. import symbol
from ..base import NNVMError
from .rnn_cell import BaseRNNCell

Pair = tuple[int, int]


def _leaky_relu(inputs: Any, **kwargs: Any) -> Any:
    """MXNet's default activation of these cells: LeakyReLU with slope 0.2."""
    return symbol.LeakyReLU(inputs, act_type="leaky", slope=0.2, **kwargs)


_LEAKY = _leaky_relu


class BaseConvRNNCell(BaseRNNCell):
    """Weights, state shape and the two convolutions shared by the convolutional cells."""

    _num_gates = 1

    def __init__(
        self,
        input_shape: tuple[int, ...],
        num_hidden: int,
        h2h_kernel: Pair,
        h2h_dilate: Pair,
        i2h_kernel: Pair,
        i2h_stride: Pair,
        i2h_pad: Pair,
        i2h_dilate: Pair,
        i2h_weight_initializer: Any,
        h2h_weight_initializer: Any,
        i2h_bias_initializer: Any,
        h2h_bias_initializer: Any,
        activation: Any,
        prefix: str = "",
        params: Any = None,
        conv_layout: str = "NCHW",
    ) -> None:
        super().__init__(prefix=prefix, params=params)
        name = type(self).__name__
        if any(k % 2 == 0 for k in h2h_kernel):
            raise NNVMError(
                f"{name}: h2h_kernel must be odd in every dimension (the state keeps its "
                f"size), got {tuple(h2h_kernel)}"
            )
        self._num_hidden = num_hidden
        self._input_shape = tuple(input_shape)
        self._conv_layout = conv_layout
        self._activation = activation
        self._h2h_kernel = tuple(h2h_kernel)
        self._h2h_dilate = tuple(h2h_dilate)
        self._h2h_pad = tuple(d * (k - 1) // 2 for k, d in zip(h2h_kernel, h2h_dilate))
        self._i2h_kernel = tuple(i2h_kernel)
        self._i2h_stride = tuple(i2h_stride)
        self._i2h_pad = tuple(i2h_pad)
        self._i2h_dilate = tuple(i2h_dilate)
        probe = symbol.Convolution(
            symbol.Variable("data"),
            num_filter=num_hidden,
            kernel=self._i2h_kernel,
            stride=self._i2h_stride,
            pad=self._i2h_pad,
            dilate=self._i2h_dilate,
            layout=conv_layout,
            no_bias=True,
        )
        out_shape = probe.infer_shape(data=self._input_shape)[1][0]
        self._state_shape = (0, *out_shape[1:])
        self._iW = self._weight("i2h_weight", i2h_weight_initializer)
        self._hW = self._weight("h2h_weight", h2h_weight_initializer)
        self._iB = self._weight("i2h_bias", i2h_bias_initializer)
        self._hB = self._weight("h2h_bias", h2h_bias_initializer)

    def _weight(self, name: str, init: Any) -> Any:
        return self.params.get(name) if init is None else self.params.get(name, init=init)

    @property
    def state_info(self) -> list[dict[str, Any]]:
        return [{"shape": self._state_shape, "__layout__": self._conv_layout}]

    def _conv_forward(self, inputs: Any, states: Any, name: str) -> tuple[Any, Any]:
        filters = self._num_hidden * self._num_gates
        i2h = symbol.Convolution(
            inputs, self._iW, self._iB, num_filter=filters, kernel=self._i2h_kernel,
            stride=self._i2h_stride, pad=self._i2h_pad, dilate=self._i2h_dilate,
            layout=self._conv_layout, name=f"{name}i2h",
        )  # fmt: skip
        h2h = symbol.Convolution(
            states[0], self._hW, self._hB, num_filter=filters, kernel=self._h2h_kernel,
            stride=(1, 1), pad=self._h2h_pad, dilate=self._h2h_dilate,
            layout=self._conv_layout, name=f"{name}h2h",
        )  # fmt: skip
        return i2h, h2h

    def _slice_gates(self, x: Any, name: str) -> Any:
        axis = self._conv_layout.find("C")
        return symbol.SliceChannel(x, num_outputs=self._num_gates, axis=axis, name=name)

    def _step_name(self) -> str:
        self._counter += 1
        return f"{self._prefix}t{self._counter}_"


class ConvRNNCell(BaseConvRNNCell):
    """h' = act(conv_i(x) + conv_h(h))."""

    def __init__(
        self,
        input_shape: tuple[int, ...],
        num_hidden: int,
        h2h_kernel: Pair = (3, 3),
        h2h_dilate: Pair = (1, 1),
        i2h_kernel: Pair = (3, 3),
        i2h_stride: Pair = (1, 1),
        i2h_pad: Pair = (1, 1),
        i2h_dilate: Pair = (1, 1),
        i2h_weight_initializer: Any = None,
        h2h_weight_initializer: Any = None,
        i2h_bias_initializer: Any = "zeros",
        h2h_bias_initializer: Any = "zeros",
        activation: Any = _LEAKY,
        prefix: str = "ConvRNN_",
        params: Any = None,
        conv_layout: str = "NCHW",
    ) -> None:
        super().__init__(
            input_shape, num_hidden, h2h_kernel, h2h_dilate, i2h_kernel, i2h_stride, i2h_pad,
            i2h_dilate, i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
            h2h_bias_initializer, activation, prefix, params, conv_layout,
        )  # fmt: skip

    @property
    def _gate_names(self) -> tuple[str, ...]:
        return ("",)

    def __call__(self, inputs: Any, states: Any) -> tuple[Any, list[Any]]:
        name = self._step_name()
        i2h, h2h = self._conv_forward(inputs, states, name)
        output = self._get_activation(i2h + h2h, self._activation, name=f"{name}out")
        return output, [output]


class ConvLSTMCell(BaseConvRNNCell):
    """Convolutional LSTM (Shi et al., NIPS 2015); gates i, f, c, o as LSTMCell's."""

    _num_gates = 4

    def __init__(
        self,
        input_shape: tuple[int, ...],
        num_hidden: int,
        h2h_kernel: Pair = (3, 3),
        h2h_dilate: Pair = (1, 1),
        i2h_kernel: Pair = (3, 3),
        i2h_stride: Pair = (1, 1),
        i2h_pad: Pair = (1, 1),
        i2h_dilate: Pair = (1, 1),
        i2h_weight_initializer: Any = None,
        h2h_weight_initializer: Any = None,
        i2h_bias_initializer: Any = "zeros",
        h2h_bias_initializer: Any = "zeros",
        activation: Any = _LEAKY,
        prefix: str = "ConvLSTM_",
        params: Any = None,
        conv_layout: str = "NCHW",
    ) -> None:
        super().__init__(
            input_shape, num_hidden, h2h_kernel, h2h_dilate, i2h_kernel, i2h_stride, i2h_pad,
            i2h_dilate, i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
            h2h_bias_initializer, activation, prefix, params, conv_layout,
        )  # fmt: skip

    @property
    def state_info(self) -> list[dict[str, Any]]:
        return super().state_info * 2

    @property
    def _gate_names(self) -> tuple[str, ...]:
        return ("_i", "_f", "_c", "_o")

    def __call__(self, inputs: Any, states: Any) -> tuple[Any, list[Any]]:
        name = self._step_name()
        i2h, h2h = self._conv_forward(inputs, states, name)
        gates = self._slice_gates(i2h + h2h, f"{name}slice")
        in_gate = symbol.Activation(gates[0], act_type="sigmoid", name=f"{name}i")
        forget_gate = symbol.Activation(gates[1], act_type="sigmoid", name=f"{name}f")
        in_transform = self._get_activation(gates[2], self._activation, name=f"{name}c")
        out_gate = symbol.Activation(gates[3], act_type="sigmoid", name=f"{name}o")
        next_c = symbol.elemwise_add(
            forget_gate * states[1], in_gate * in_transform, name=f"{name}state"
        )
        next_h = symbol.elemwise_mul(
            out_gate, self._get_activation(next_c, self._activation), name=f"{name}out"
        )
        return next_h, [next_h, next_c]


class ConvGRUCell(BaseConvRNNCell):
    """Convolutional GRU; the reset gate scales conv_h(h) of the candidate, as GRUCell's."""

    _num_gates = 3

    def __init__(
        self,
        input_shape: tuple[int, ...],
        num_hidden: int,
        h2h_kernel: Pair = (3, 3),
        h2h_dilate: Pair = (1, 1),
        i2h_kernel: Pair = (3, 3),
        i2h_stride: Pair = (1, 1),
        i2h_pad: Pair = (1, 1),
        i2h_dilate: Pair = (1, 1),
        i2h_weight_initializer: Any = None,
        h2h_weight_initializer: Any = None,
        i2h_bias_initializer: Any = "zeros",
        h2h_bias_initializer: Any = "zeros",
        activation: Any = _LEAKY,
        prefix: str = "ConvGRU_",
        params: Any = None,
        conv_layout: str = "NCHW",
    ) -> None:
        super().__init__(
            input_shape, num_hidden, h2h_kernel, h2h_dilate, i2h_kernel, i2h_stride, i2h_pad,
            i2h_dilate, i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
            h2h_bias_initializer, activation, prefix, params, conv_layout,
        )  # fmt: skip

    @property
    def _gate_names(self) -> tuple[str, ...]:
        return ("_r", "_z", "_o")

    def __call__(self, inputs: Any, states: Any) -> tuple[Any, list[Any]]:
        name = self._step_name()
        prev = states[0]
        i2h, h2h = self._conv_forward(inputs, states, name)
        i_r, i_z, i_n = self._slice_gates(i2h, f"{name}i2h_slice")
        h_r, h_z, h_n = self._slice_gates(h2h, f"{name}h2h_slice")
        reset = symbol.Activation(i_r + h_r, act_type="sigmoid", name=f"{name}r_act")
        update = symbol.Activation(i_z + h_z, act_type="sigmoid", name=f"{name}z_act")
        cand = self._get_activation(i_n + reset * h_n, self._activation, name=f"{name}h_act")
        next_h = symbol.elemwise_add((1.0 - update) * cand, update * prev, name=f"{name}out")
        return next_h, [next_h]
