"""Cells made of cells: stacks, both directions, and modifiers (dropout, zoneout, residual)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from .. import symbol
from ..base import NNVMError
from .rnn_cell import BaseRNNCell, RNNParams, _normalize_sequence


class _Container(BaseRNNCell):
    """A cell over child cells: states are the children's, in order."""

    _cells: list[BaseRNNCell]
    _override_cell_params: bool = False

    def _adopt(self, cell: BaseRNNCell) -> None:
        """Collect the child's weights, so `container.params` lists every weight in it."""
        if self._override_cell_params:  # one RNNParams shared by all children
            cell.params._params.update(self.params._params)
        self.params._params.update(cell.params._params)

    @property
    def state_info(self) -> list[dict[str, Any]]:
        return [info for c in self._cells for info in c.state_info]

    def begin_state(self, func: Any = None, **kwargs: Any) -> list[Any]:
        if self._modified:
            raise NNVMError(
                "rnn: after applying a modifier cell, call begin_state of the modifier cell"
            )
        return [s for c in self._cells for s in c.begin_state(func=func, **kwargs)]

    def unpack_weights(self, args: dict[str, Any]) -> dict[str, Any]:
        for cell in self._cells:
            args = cell.unpack_weights(args)
        return args

    def pack_weights(self, args: dict[str, Any]) -> dict[str, Any]:
        for cell in self._cells:
            args = cell.pack_weights(args)
        return args


class SequentialRNNCell(_Container):
    """Cells stacked: each one's output is the next one's input."""

    def __init__(self, params: RNNParams | None = None) -> None:
        self._cells = []
        super().__init__(prefix="", params=params)
        self._override_cell_params = params is not None

    def add(self, cell: BaseRNNCell) -> None:
        self._cells.append(cell)
        self._adopt(cell)

    def __call__(self, inputs: Any, states: Any) -> tuple[Any, list[Any]]:
        self._counter += 1
        next_states: list[Any] = []
        p = 0
        for cell in self._cells:
            n = len(cell.state_info)
            inputs, state = cell(inputs, states[p : p + n])
            p += n
            next_states.extend(state)
        return inputs, next_states

    def unroll(
        self,
        length: int,
        inputs: Any,
        begin_state: Any = None,
        layout: str = "NTC",
        merge_outputs: bool | None = None,
    ) -> tuple[Any, list[Any]]:
        self.reset()
        last = len(self._cells) - 1
        begin_state = self.begin_state() if begin_state is None else begin_state
        p, next_states = 0, []
        for i, cell in enumerate(self._cells):
            n = len(cell.state_info)
            inputs, states = cell.unroll(
                length,
                inputs=inputs,
                begin_state=begin_state[p : p + n],
                layout=layout,
                merge_outputs=None if i < last else merge_outputs,
            )
            p += n
            next_states.extend(states)
        return inputs, next_states


class BidirectionalCell(_Container):
    """Two cells over the sequence, forwards and backwards; outputs side by side."""

    def __init__(
        self,
        l_cell: BaseRNNCell,
        r_cell: BaseRNNCell,
        params: RNNParams | None = None,
        output_prefix: str = "bi_",
    ) -> None:
        self._cells = [l_cell, r_cell]
        super().__init__("", params=params)
        self._output_prefix = output_prefix
        self._override_cell_params = params is not None
        for cell in self._cells:
            self._adopt(cell)

    def __call__(self, inputs: Any, states: Any) -> tuple[Any, list[Any]]:
        raise NNVMError("BidirectionalCell cannot be stepped; call unroll")

    def unroll(
        self,
        length: int,
        inputs: Any,
        begin_state: Any = None,
        layout: str = "NTC",
        merge_outputs: bool | None = None,
    ) -> tuple[Any, list[Any]]:
        self.reset()
        inputs, axis = _normalize_sequence(length, inputs, layout, False)
        states = self.begin_state() if begin_state is None else begin_state
        l_cell, r_cell = self._cells
        n_l = len(l_cell.state_info)
        l_out, l_states = l_cell.unroll(
            length, inputs=inputs, begin_state=states[:n_l], layout=layout,
            merge_outputs=merge_outputs,
        )  # fmt: skip
        r_out, r_states = r_cell.unroll(
            length, inputs=list(reversed(inputs)), begin_state=states[n_l:], layout=layout,
            merge_outputs=merge_outputs,
        )  # fmt: skip
        if merge_outputs is None:
            merge_outputs = isinstance(l_out, symbol.Symbol) and isinstance(r_out, symbol.Symbol)
            if not merge_outputs:
                l_out, r_out = (
                    list(symbol.SliceChannel(o, axis=axis, num_outputs=length, squeeze_axis=1))
                    if isinstance(o, symbol.Symbol)
                    else o
                    for o in (l_out, r_out)
                )
        outputs: Any
        if merge_outputs:
            rev = symbol.reverse(r_out, axis=axis)
            outputs = symbol.Concat(l_out, rev, dim=2, name=f"{self._output_prefix}out")
        else:
            outputs = [
                symbol.Concat(lo, ro, dim=1, name=f"{self._output_prefix}t{i}")
                for i, (lo, ro) in enumerate(zip(l_out, reversed(r_out)))
            ]
        return outputs, l_states + r_states


class DropoutCell(BaseRNNCell):
    """Dropout on the sequence (no state)."""

    def __init__(self, dropout: float, prefix: str = "dropout_", params: Any = None) -> None:
        super().__init__(prefix, params)
        self.dropout = dropout

    @property
    def state_info(self) -> list[dict[str, Any]]:
        return []

    def __call__(self, inputs: Any, states: Any) -> tuple[Any, list[Any]]:
        if self.dropout > 0:
            inputs = symbol.Dropout(data=inputs, p=self.dropout)
        return inputs, states

    def unroll(
        self,
        length: int,
        inputs: Any,
        begin_state: Any = None,
        layout: str = "NTC",
        merge_outputs: bool | None = None,
    ) -> tuple[Any, list[Any]]:
        self.reset()
        inputs, _ = _normalize_sequence(length, inputs, layout, merge_outputs)
        if isinstance(inputs, symbol.Symbol):
            return self(inputs, [])
        return super().unroll(length, inputs, begin_state, layout, merge_outputs)


class ModifierCell(BaseRNNCell):
    """Wraps a cell and changes what it computes; the states and weights stay the base's."""

    def __init__(self, base_cell: BaseRNNCell) -> None:
        super().__init__()
        base_cell._modified = True
        self.base_cell = base_cell

    @property
    def params(self) -> RNNParams:
        self._own_params = False
        return self.base_cell.params

    @property
    def state_info(self) -> list[dict[str, Any]]:
        return self.base_cell.state_info

    @contextlib.contextmanager
    def _base_unmodified(self) -> Iterator[BaseRNNCell]:
        """The base cell, allowed to run as itself (modified, it refuses begin_state)."""
        self.base_cell._modified = False
        try:
            yield self.base_cell
        finally:
            self.base_cell._modified = True

    def begin_state(self, func: Any = None, **kwargs: Any) -> list[Any]:
        with self._base_unmodified() as base:
            return base.begin_state(func=func, **kwargs)

    def unpack_weights(self, args: dict[str, Any]) -> dict[str, Any]:
        return self.base_cell.unpack_weights(args)

    def pack_weights(self, args: dict[str, Any]) -> dict[str, Any]:
        return self.base_cell.pack_weights(args)


class ZoneoutCell(ModifierCell):
    """Zoneout: each output / state unit keeps its previous value with probability p."""

    def __init__(
        self, base_cell: BaseRNNCell, zoneout_outputs: float = 0.0, zoneout_states: float = 0.0
    ) -> None:
        from nnvmpy.rnn.fused_cell import FusedRNNCell

        if isinstance(base_cell, FusedRNNCell):
            raise NNVMError("ZoneoutCell: FusedRNNCell does not support zoneout; unfuse it first")
        if isinstance(base_cell, BidirectionalCell):
            raise NNVMError("ZoneoutCell: BidirectionalCell does not support zoneout")
        super().__init__(base_cell)
        self.zoneout_outputs = zoneout_outputs
        self.zoneout_states = zoneout_states
        self.prev_output: Any = None

    def reset(self) -> None:
        super().reset()
        self.prev_output = None

    def __call__(self, inputs: Any, states: Any) -> tuple[Any, list[Any]]:
        p_out, p_states = self.zoneout_outputs, self.zoneout_states
        next_output, next_states = self.base_cell(inputs, states)

        def mask(p: float, like: Any) -> Any:
            return symbol.Dropout(symbol.ones_like(like), p=p)

        prev = self.prev_output if self.prev_output is not None else symbol.zeros(shape=(0, 0))
        output = next_output
        if p_out != 0.0:
            output = symbol.where(mask(p_out, next_output), next_output, prev)
        if p_states != 0.0:
            next_states = [
                symbol.where(mask(p_states, new), new, old) for new, old in zip(next_states, states)
            ]
        self.prev_output = output
        return output, next_states


class ResidualCell(ModifierCell):
    """The base cell's output plus its input (a residual connection)."""

    def __call__(self, inputs: Any, states: Any) -> tuple[Any, list[Any]]:
        output, states = self.base_cell(inputs, states)
        output = symbol.elemwise_add(output, inputs, name=f"{output.name}_plus_residual")
        return output, states

    def unroll(
        self,
        length: int,
        inputs: Any,
        begin_state: Any = None,
        layout: str = "NTC",
        merge_outputs: bool | None = None,
    ) -> tuple[Any, list[Any]]:
        self.reset()
        with self._base_unmodified() as base:
            outputs, states = base.unroll(
                length, inputs=inputs, begin_state=begin_state, layout=layout,
                merge_outputs=merge_outputs,
            )  # fmt: skip
        merge = isinstance(outputs, symbol.Symbol) if merge_outputs is None else merge_outputs
        inputs, _ = _normalize_sequence(length, inputs, layout, merge)
        if merge:
            outputs = symbol.elemwise_add(outputs, inputs, name=f"{outputs.name}_plus_residual")
        else:
            outputs = [
                symbol.elemwise_add(o, i, name=f"{o.name}_plus_residual")
                for o, i in zip(outputs, inputs)
            ]
        return outputs, states
