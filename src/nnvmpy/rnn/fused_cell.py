"""FusedRNNCell: the whole multi-layer recurrence as one `RNN` op, with MXNet's packing.

Its single weight variable '<prefix>parameters' is the op's packed vector; unpack_weights
cuts it into the per-gate arrays the unfused cells' unpack_weights produce
('<prefix>l0_i2h_i_weight', '<prefix>r1_h2h_z_bias', ...: direction l/r, layer, gate),
and pack_weights joins them again, so parameters move between the two forms.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import symbol
from ..base import NNVMError
from .rnn_cell import BaseRNNCell, _normalize_sequence

_GATE_NAMES = {
    "rnn_relu": ("",),
    "rnn_tanh": ("",),
    "lstm": ("_i", "_f", "_c", "_o"),
    "gru": ("_r", "_z", "_o"),
}


class FusedRNNCell(BaseRNNCell):
    """Several layers of one kind of cell run by the fused `RNN` op."""

    def __init__(
        self,
        num_hidden: int,
        num_layers: int = 1,
        mode: str = "lstm",
        bidirectional: bool = False,
        dropout: float = 0.0,
        get_next_state: bool = False,
        forget_bias: float = 1.0,
        prefix: str | None = None,
        params: Any = None,
    ) -> None:
        if mode not in _GATE_NAMES:
            raise NNVMError(
                f"FusedRNNCell: mode must be one of {sorted(_GATE_NAMES)}, got {mode!r}"
            )
        if prefix is None:
            prefix = f"{mode}_"
        super().__init__(prefix=prefix, params=params)
        self._num_hidden = num_hidden
        self._num_layers = num_layers
        self._mode = mode
        self._bidirectional = bidirectional
        self._dropout = dropout
        self._get_next_state = get_next_state
        self._directions = ["l", "r"] if bidirectional else ["l"]
        self._forget_bias = forget_bias
        from nnvmpy.rnn.fused_init import FusedRNN

        init = FusedRNN(None, num_hidden, num_layers, mode, bidirectional, forget_bias)
        self._parameter = self.params.get("parameters", init=init)

    @property
    def state_info(self) -> list[dict[str, Any]]:
        b = len(self._directions)
        n = 2 if self._mode == "lstm" else 1
        return [{"shape": (b * self._num_layers, 0, self._num_hidden), "__layout__": "LNC"}] * n

    @property
    def _gate_names(self) -> tuple[str, ...]:
        return _GATE_NAMES[self._mode]

    @property
    def _num_gates(self) -> int:
        return len(self._gate_names)

    def _slices(self, num_input: int) -> list[tuple[str, int, tuple[int, ...]]]:
        """(name, offset, shape) of every per-gate array in the packed vector, in order."""
        b, h, p = len(self._directions), self._num_hidden, 0
        out: list[tuple[str, int, tuple[int, ...]]] = []
        for layer in range(self._num_layers):
            for d in self._directions:
                cols = num_input if layer == 0 else b * h
                for group, width in (("i2h", cols), ("h2h", h)):
                    for gate in self._gate_names:
                        name = f"{self._prefix}{d}{layer}_{group}{gate}_weight"
                        out.append((name, p, (h, width)))
                        p += h * width
        for layer in range(self._num_layers):
            for d in self._directions:
                for group in ("i2h", "h2h"):
                    for gate in self._gate_names:
                        out.append((f"{self._prefix}{d}{layer}_{group}{gate}_bias", p, (h,)))
                        p += h
        return out

    def _total(self, num_input: int) -> int:
        b, m, h = len(self._directions), self._num_gates, self._num_hidden
        first = (num_input + h + 2) * h * m * b
        return first + (self._num_layers - 1) * m * h * (h + b * h + 2) * b

    def _num_input(self, size: int) -> int:
        b, m, h = len(self._directions), self._num_gates, self._num_hidden
        num_input = size // b // h // m - (self._num_layers - 1) * (h + b * h + 2) - h - 2
        if num_input <= 0 or self._total(num_input) != size:
            raise NNVMError(
                f"FusedRNNCell: {size} parameters fit no input size for mode={self._mode!r}, "
                f"num_hidden={h}, num_layers={self._num_layers}, bidirectional="
                f"{self._bidirectional}"
            )
        return num_input

    def unpack_weights(self, args: dict[str, Any]) -> dict[str, Any]:
        from nnvmpy import nd

        args = dict(args)
        packed = args.pop(self._parameter.name)
        arr = packed.asnumpy() if hasattr(packed, "asnumpy") else np.asarray(packed)
        ctx = getattr(packed, "context", None)
        for name, p, shape in self._slices(self._num_input(arr.size)):
            piece = arr[p : p + int(np.prod(shape))].reshape(shape)
            args[name] = nd.array(piece, ctx=ctx, dtype=arr.dtype)
        return args

    def pack_weights(self, args: dict[str, Any]) -> dict[str, Any]:
        from nnvmpy import nd

        args = dict(args)
        w0 = args[f"{self._prefix}l0_i2h{self._gate_names[0]}_weight"]
        num_input = int(w0.shape[1])
        arr = np.zeros(self._total(num_input), dtype=w0.dtype)
        for name, p, shape in self._slices(num_input):
            value = args.pop(name)
            value = value.asnumpy() if hasattr(value, "asnumpy") else np.asarray(value)
            if tuple(value.shape) != shape:
                raise NNVMError(
                    f"FusedRNNCell.pack_weights: {name!r} has shape {tuple(value.shape)}, "
                    f"expected {shape}"
                )
            arr[p : p + value.size] = value.ravel()
        args[self._parameter.name] = nd.array(
            arr, ctx=getattr(w0, "context", None), dtype=arr.dtype
        )
        return args

    def __call__(self, inputs: Any, states: Any) -> tuple[Any, list[Any]]:
        raise NNVMError("FusedRNNCell cannot be stepped; call unroll (or unfuse it)")

    def unroll(
        self,
        length: int,
        inputs: Any,
        begin_state: Any = None,
        layout: str = "NTC",
        merge_outputs: bool | None = None,
    ) -> tuple[Any, list[Any]]:
        self.reset()
        inputs, axis = _normalize_sequence(length, inputs, layout, True)
        if axis == 1:  # the op wants TNC
            inputs = symbol.swapaxes(inputs, dim1=0, dim2=1)
        elif axis != 0:
            raise NNVMError(f"FusedRNNCell: unsupported layout {layout!r}")
        states = self.begin_state() if begin_state is None else begin_state
        named = {"state": states[0]}
        if self._mode == "lstm":
            named["state_cell"] = states[1]
        rnn = symbol.RNN(
            data=inputs,
            parameters=self._parameter,
            state_size=self._num_hidden,
            num_layers=self._num_layers,
            bidirectional=self._bidirectional,
            p=self._dropout,
            state_outputs=self._get_next_state,
            mode=self._mode,
            name=f"{self._prefix}rnn",
            **named,
        )
        if not self._get_next_state:
            outputs, next_states = rnn, []
        elif self._mode == "lstm":
            outputs, next_states = rnn[0], [rnn[1], rnn[2]]
        else:
            outputs, next_states = rnn[0], [rnn[1]]
        if axis == 1:
            outputs = symbol.swapaxes(outputs, dim1=0, dim2=1)
        outputs, _ = _normalize_sequence(length, outputs, layout, merge_outputs)
        return outputs, next_states

    def unfuse(self) -> Any:
        """The same network as a SequentialRNNCell of unfused cells (same weight names)."""
        from nnvmpy.rnn.composite_cell import BidirectionalCell, DropoutCell, SequentialRNNCell
        from nnvmpy.rnn.rnn_cell import GRUCell, LSTMCell, RNNCell

        def make(prefix: str) -> BaseRNNCell:
            if self._mode == "lstm":
                return LSTMCell(self._num_hidden, prefix=prefix, forget_bias=self._forget_bias)
            if self._mode == "gru":
                return GRUCell(self._num_hidden, prefix=prefix)
            act = "relu" if self._mode == "rnn_relu" else "tanh"
            return RNNCell(self._num_hidden, activation=act, prefix=prefix)

        stack = SequentialRNNCell()
        for i in range(self._num_layers):
            if self._bidirectional:
                stack.add(
                    BidirectionalCell(
                        make(f"{self._prefix}l{i}_"),
                        make(f"{self._prefix}r{i}_"),
                        output_prefix=f"{self._prefix}bi_l{i}_",
                    )
                )
            else:
                stack.add(make(f"{self._prefix}l{i}_"))
            if self._dropout > 0 and i != self._num_layers - 1:
                stack.add(DropoutCell(self._dropout, prefix=f"{self._prefix}_dropout{i}_"))
        return stack
