"""MXNet's symbolic RNN cells (mxnet.rnn): one step of a recurrence as a symbol graph.

A cell maps (input, states) -> (output, new states) for one time step; `unroll` chains
it over a sequence. Cells name their weights '<prefix>i2h_weight', '<prefix>h2h_bias',
... (shared through an RNNParams), and their step nodes '<prefix>t<step>_...', as MXNet
does, so parameter files and the `unpack_weights` / `pack_weights` round trip with the
fused op (fused_cell.py) match MXNet's names.
"""

from __future__ import annotations

from typing import Any

from .. import symbol
from ..base import NNVMError


class RNNParams:
    """The weight variables of cells, by name, created once (so cells can share them)."""

    def __init__(self, prefix: str = "") -> None:
        self._prefix = prefix
        self._params: dict[str, Any] = {}

    def get(self, name: str, **kwargs: Any) -> Any:
        name = self._prefix + name
        if name not in self._params:
            self._params[name] = symbol.Variable(name, **kwargs)
        return self._params[name]


def _normalize_sequence(
    length: int | None, inputs: Any, layout: str, merge: bool | None, in_layout: str | None = None
) -> tuple[Any, int]:
    """inputs as one symbol (merge True), a list of per-step symbols (False), or as given."""
    if inputs is None:
        raise NNVMError("rnn: unroll needs inputs (a symbol or a list of symbols)")
    axis = layout.find("T")
    in_axis = in_layout.find("T") if in_layout is not None else axis
    if isinstance(inputs, symbol.Symbol):
        if merge is False:
            if len(inputs.list_outputs()) != 1:
                raise NNVMError("rnn: unroll needs a single-output symbol as inputs")
            if length is None:
                raise NNVMError("rnn: unroll of one symbol needs length= (the time steps)")
            inputs = list(symbol.split(inputs, axis=in_axis, num_outputs=length, squeeze_axis=1))
    else:
        if length is not None and len(inputs) != length:
            raise NNVMError(f"rnn: unroll got {len(inputs)} inputs for length={length}")
        if merge is True:
            inputs = symbol.Concat(*[symbol.expand_dims(i, axis=axis) for i in inputs], dim=axis)
            in_axis = axis
    if isinstance(inputs, symbol.Symbol) and axis != in_axis:
        inputs = symbol.swapaxes(inputs, dim1=axis, dim2=in_axis)
    return inputs, axis


class BaseRNNCell:
    """A recurrent cell: call it on (inputs, states) for one step, or `unroll` it."""

    def __init__(self, prefix: str = "", params: RNNParams | None = None) -> None:
        if params is None:
            params = RNNParams(prefix)
            self._own_params = True
        else:
            self._own_params = False
        self._prefix = prefix
        self._params = params
        self._modified = False
        self.reset()

    def reset(self) -> None:
        """Restart the step counters (names of step nodes and begin states)."""
        self._init_counter = -1
        self._counter = -1
        for cell in getattr(self, "_cells", []):
            cell.reset()

    def __call__(self, inputs: Any, states: Any) -> tuple[Any, list[Any]]:
        raise NotImplementedError

    @property
    def params(self) -> RNNParams:
        self._own_params = False
        return self._params

    @property
    def state_info(self) -> list[dict[str, Any]]:
        raise NotImplementedError

    @property
    def state_shape(self) -> list[Any]:
        return [ele["shape"] for ele in self.state_info]

    @property
    def _gate_names(self) -> tuple[str, ...]:
        return ()

    def begin_state(self, func: Any = None, **kwargs: Any) -> list[Any]:
        """The initial states, made by `func` (symbol.zeros by default) with each state's info."""
        if self._modified:
            raise NNVMError(
                "rnn: after applying a modifier cell, call begin_state of the modifier cell"
            )
        func = symbol.zeros if func is None else func
        states = []
        for info in self.state_info:
            self._init_counter += 1
            kw = dict(kwargs)
            if info is not None:
                kw.update(info)
            name = f"{self._prefix}begin_state_{self._init_counter}"
            if func is symbol.zeros or getattr(func, "__name__", "") == "zeros":
                kw.pop("__layout__", None)
            states.append(func(name=name, **kw))
        return states

    def unpack_weights(self, args: dict[str, Any]) -> dict[str, Any]:
        """Split the fused i2h/h2h weights and biases into one array per gate."""
        args = dict(args)
        if not self._gate_names:
            return args
        h = self._num_hidden  # type: ignore[attr-defined]
        for group in ("i2h", "h2h"):
            weight = args.pop(f"{self._prefix}{group}_weight")
            bias = args.pop(f"{self._prefix}{group}_bias")
            for j, gate in enumerate(self._gate_names):
                args[f"{self._prefix}{group}{gate}_weight"] = weight[j * h : (j + 1) * h].copy()
                args[f"{self._prefix}{group}{gate}_bias"] = bias[j * h : (j + 1) * h].copy()
        return args

    def pack_weights(self, args: dict[str, Any]) -> dict[str, Any]:
        """Join per-gate weights and biases (unpack_weights' output) back into i2h/h2h."""
        from nnvmpy import nd

        args = dict(args)
        if not self._gate_names:
            return args
        for group in ("i2h", "h2h"):
            for kind in ("weight", "bias"):
                parts = [args.pop(f"{self._prefix}{group}{g}_{kind}") for g in self._gate_names]
                args[f"{self._prefix}{group}_{kind}"] = nd.concat(*parts, dim=0)
        return args

    def unroll(
        self,
        length: int,
        inputs: Any,
        begin_state: Any = None,
        layout: str = "NTC",
        merge_outputs: bool | None = None,
    ) -> tuple[Any, list[Any]]:
        """(outputs, states) of `length` steps; outputs merged into one symbol or a list."""
        self.reset()
        inputs, _ = _normalize_sequence(length, inputs, layout, False)
        states = self.begin_state() if begin_state is None else begin_state
        outputs = []
        for i in range(length):
            output, states = self(inputs[i], states)
            outputs.append(output)
        outputs, _ = _normalize_sequence(length, outputs, layout, merge_outputs)
        return outputs, states

    def _get_activation(self, inputs: Any, activation: Any, **kwargs: Any) -> Any:
        if isinstance(activation, str):
            return symbol.Activation(inputs, act_type=activation, **kwargs)
        return activation(inputs, **kwargs)


class RNNCell(BaseRNNCell):
    """Elman cell: h' = act(W_i x + b_i + W_h h + b_h)."""

    def __init__(
        self, num_hidden: int, activation: Any = "tanh", prefix: str = "rnn_", params: Any = None
    ) -> None:
        super().__init__(prefix=prefix, params=params)
        self._num_hidden = num_hidden
        self._activation = activation
        self._iW = self.params.get("i2h_weight")
        self._iB = self.params.get("i2h_bias")
        self._hW = self.params.get("h2h_weight")
        self._hB = self.params.get("h2h_bias")

    @property
    def state_info(self) -> list[dict[str, Any]]:
        return [{"shape": (0, self._num_hidden), "__layout__": "NC"}]

    @property
    def _gate_names(self) -> tuple[str, ...]:
        return ("",)

    def __call__(self, inputs: Any, states: Any) -> tuple[Any, list[Any]]:
        self._counter += 1
        name = f"{self._prefix}t{self._counter}_"
        h = self._num_hidden
        i2h = symbol.FullyConnected(inputs, self._iW, self._iB, num_hidden=h, name=f"{name}i2h")
        h2h = symbol.FullyConnected(states[0], self._hW, self._hB, num_hidden=h, name=f"{name}h2h")
        output = self._get_activation(i2h + h2h, self._activation, name=f"{name}out")
        return output, [output]


class LSTMCell(BaseRNNCell):
    """LSTM cell, gates i, f, c (the candidate), o; the forget bias starts at forget_bias."""

    def __init__(
        self,
        num_hidden: int,
        prefix: str = "lstm_",
        params: Any = None,
        forget_bias: float = 1.0,
    ) -> None:
        from nnvmpy.initializer import LSTMBias

        super().__init__(prefix=prefix, params=params)
        self._num_hidden = num_hidden
        self._iW = self.params.get("i2h_weight")
        self._hW = self.params.get("h2h_weight")
        self._iB = self.params.get("i2h_bias", init=LSTMBias(forget_bias=forget_bias))
        self._hB = self.params.get("h2h_bias")

    @property
    def state_info(self) -> list[dict[str, Any]]:
        return [{"shape": (0, self._num_hidden), "__layout__": "NC"}] * 2

    @property
    def _gate_names(self) -> tuple[str, ...]:
        return ("_i", "_f", "_c", "_o")

    def __call__(self, inputs: Any, states: Any) -> tuple[Any, list[Any]]:
        self._counter += 1
        name = f"{self._prefix}t{self._counter}_"
        h4 = self._num_hidden * 4
        i2h = symbol.FullyConnected(inputs, self._iW, self._iB, num_hidden=h4, name=f"{name}i2h")
        h2h = symbol.FullyConnected(states[0], self._hW, self._hB, num_hidden=h4, name=f"{name}h2h")
        gates = i2h + h2h
        sliced = symbol.SliceChannel(gates, num_outputs=4, name=f"{name}slice")
        in_gate = symbol.Activation(sliced[0], act_type="sigmoid", name=f"{name}i")
        forget_gate = symbol.Activation(sliced[1], act_type="sigmoid", name=f"{name}f")
        in_transform = symbol.Activation(sliced[2], act_type="tanh", name=f"{name}c")
        out_gate = symbol.Activation(sliced[3], act_type="sigmoid", name=f"{name}o")
        next_c = symbol.elemwise_add(
            forget_gate * states[1], in_gate * in_transform, name=f"{name}state"
        )
        next_h = symbol.elemwise_mul(
            out_gate, symbol.Activation(next_c, act_type="tanh"), name=f"{name}out"
        )
        return next_h, [next_h, next_c]


class GRUCell(BaseRNNCell):
    """GRU cell (cuDNN's variant): the reset gate scales W_h h + b_h of the candidate."""

    def __init__(self, num_hidden: int, prefix: str = "gru_", params: Any = None) -> None:
        super().__init__(prefix=prefix, params=params)
        self._num_hidden = num_hidden
        self._iW = self.params.get("i2h_weight")
        self._iB = self.params.get("i2h_bias")
        self._hW = self.params.get("h2h_weight")
        self._hB = self.params.get("h2h_bias")

    @property
    def state_info(self) -> list[dict[str, Any]]:
        return [{"shape": (0, self._num_hidden), "__layout__": "NC"}]

    @property
    def _gate_names(self) -> tuple[str, ...]:
        return ("_r", "_z", "_o")

    def __call__(self, inputs: Any, states: Any) -> tuple[Any, list[Any]]:
        self._counter += 1
        name = f"{self._prefix}t{self._counter}_"
        h3 = self._num_hidden * 3
        prev = states[0]
        i2h = symbol.FullyConnected(inputs, self._iW, self._iB, num_hidden=h3, name=f"{name}i2h")
        h2h = symbol.FullyConnected(prev, self._hW, self._hB, num_hidden=h3, name=f"{name}h2h")
        i_r, i_z, i_n = symbol.SliceChannel(i2h, num_outputs=3, name=f"{name}i2h_slice")
        h_r, h_z, h_n = symbol.SliceChannel(h2h, num_outputs=3, name=f"{name}h2h_slice")
        reset = symbol.Activation(i_r + h_r, act_type="sigmoid", name=f"{name}r_act")
        update = symbol.Activation(i_z + h_z, act_type="sigmoid", name=f"{name}z_act")
        cand = symbol.Activation(i_n + reset * h_n, act_type="tanh", name=f"{name}h_act")
        next_h = symbol.elemwise_add((1.0 - update) * cand, update * prev, name=f"{name}out")
        return next_h, [next_h]
