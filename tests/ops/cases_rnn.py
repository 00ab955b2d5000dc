"""OpCase rows of the fused RNN (issue 12); the reference is tests/ops/rnn_reference.py,
a step-by-step NumPy RNN written from the gate formulas. tests/ops/test_rnn.py covers
sequence lengths, clipping and errors."""

from __future__ import annotations

from op_db import OpCase
from rnn_reference import param_size, rnn_reference


def _ref(mode: str, outputs: bool):
    def ref(data, params, state, *cell, **p):
        out, hy, cy = rnn_reference(
            data, params, state, *cell, mode=mode, state_size=p["state_size"],
            num_layers=p["num_layers"], bidirectional=p.get("bidirectional", False),
        )  # fmt: skip
        if not outputs:
            return out
        return [out, hy] + ([cy] if cy is not None else [])

    return ref


def _row(mode: str, bidir: bool, layers: int, outputs: bool) -> OpCase:
    steps, batch, inp, hidden = 3, 2, 3, 2
    dirs = 2 if bidir else 1
    shapes = [(steps, batch, inp), (param_size(mode, layers, inp, hidden, bidir),)]
    shapes += [(layers * dirs, batch, hidden)] * (2 if mode == "lstm" else 1)
    params = {"mode": mode, "state_size": hidden, "num_layers": layers, "bidirectional": bidir,
              "state_outputs": outputs}  # fmt: skip
    return OpCase(
        "RNN",
        shapes,
        _ref(mode, outputs),
        params=params,
        low=0.1 if mode == "rnn_relu" else -1.0,  # relu: pre-activations away from the kink
        rtol=1e-4,
        atol=1e-5,
        grad_rtol=1e-2,
        id=f"{mode}-{'bi' if bidir else 'uni'}{layers}{'-states' if outputs else ''}",
    )


CASES = [
    _row("lstm", False, 1, False),
    _row("lstm", True, 2, True),
    _row("gru", True, 1, True),
    _row("gru", False, 2, False),
    _row("rnn_tanh", True, 2, True),
    _row("rnn_relu", False, 1, True),
]
