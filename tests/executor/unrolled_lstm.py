"""An LSTM unrolled by hand from symbols, the graph bucketing binds once per bucket: its
`zeros` states merge (EliminateCommonExpr copies their readers) and its gates fuse
forward and backward (recomputed in backward). Shared by the bind tests."""

from __future__ import annotations

from typing import Any

from nnvmpy import sym


def unrolled_lstm(
    steps: int = 3, hidden: int = 4, batch: int = 2, layers: int = 1
) -> tuple[Any, dict[str, Any]]:
    """(MakeLoss of the concatenated last layer's states, {'data': its shape})."""
    xs = sym.SliceChannel(sym.var("data"), num_outputs=steps, axis=1, squeeze_axis=True)
    outs = [xs[t] for t in range(steps)]
    for layer in range(layers):
        names = ("i2h_w", "i2h_b", "h2h_w", "h2h_b")
        wi, bi, wh, bh = (sym.var(f"l{layer}_{n}") for n in names)
        h, c, new = sym.zeros((batch, hidden)), sym.zeros((batch, hidden)), []
        for t in range(steps):
            g = sym.FullyConnected(outs[t], wi, bi, num_hidden=4 * hidden)
            g = g + sym.FullyConnected(h, wh, bh, num_hidden=4 * hidden)
            s = sym.SliceChannel(g, num_outputs=4)
            i, f, o = (sym.Activation(s[k], act_type="sigmoid") for k in (0, 1, 3))
            c = f * c + i * sym.Activation(s[2], act_type="tanh")
            h = o * sym.Activation(c, act_type="tanh")
            new.append(h)
        outs = new
    return sym.MakeLoss(sym.sum(sym.Concat(*outs, dim=1))), {"data": (batch, steps, 5)}
