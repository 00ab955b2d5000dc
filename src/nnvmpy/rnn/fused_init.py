"""FusedRNN: initialise a fused RNN's packed parameter vector gate by gate.

The vector is cut into the per-gate arrays (FusedRNNCell.unpack_weights), each filled
by `init` (or the global initializer, by its name's rule: weights random, biases 0),
the LSTM forget-gate biases set to forget_bias, and packed back, as MXNet's
mx.init.FusedRNN does. Registered as 'fusedrnn', so the '__init__' attribute that
FusedRNNCell puts on its 'parameters' variable finds it.
"""

from __future__ import annotations

from typing import Any

from ..base import NNVMError
from ..initializer.base import InitDesc, Initializer, create, register


@register
class FusedRNN(Initializer):
    """Initialise the packed parameters of a FusedRNNCell / RNN op."""

    def __init__(
        self,
        init: Any,
        num_hidden: int,
        num_layers: int,
        mode: str,
        bidirectional: bool = False,
        forget_bias: float = 1.0,
    ) -> None:
        if isinstance(init, str):
            init = create(init)
        super().__init__(
            init=init.dumps() if init is not None else None,
            num_hidden=num_hidden,
            num_layers=num_layers,
            mode=mode,
            bidirectional=bidirectional,
            forget_bias=forget_bias,
        )
        self._init = init
        self._num_hidden = num_hidden
        self._num_layers = num_layers
        self._mode = mode
        self._bidirectional = bidirectional
        self._forget_bias = forget_bias

    def _init_weight(self, desc: Any, arr: Any) -> None:
        from nnvmpy.rnn.fused_cell import FusedRNNCell

        cell = FusedRNNCell(
            self._num_hidden, self._num_layers, self._mode, self._bidirectional,
            forget_bias=self._forget_bias, prefix="",
        )  # fmt: skip
        args = cell.unpack_weights({"parameters": arr})
        global_init = getattr(desc, "global_init", None)
        for name, piece in args.items():
            piece_desc = InitDesc(name, global_init=global_init)
            if self._mode == "lstm" and name.endswith("_f_bias"):
                piece[:] = self._forget_bias
            elif self._init is not None:
                self._init(piece_desc, piece)
            elif global_init is not None:
                global_init(piece_desc, piece)
            else:
                raise NNVMError(
                    f"FusedRNN: no initializer for {name!r}: give `init` or call it through "
                    "a global initializer"
                )
        arr[:] = cell.pack_weights(args)["parameters"]
