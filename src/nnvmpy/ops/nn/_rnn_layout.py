"""Where things live in the RNN op's flat arrays: MXNet's packed parameters and the reserve.

MXNet (and cuDNN) pack every weight of a fused RNN in one vector, all weights first,
then all biases, layer-major with the direction inner:

    for layer, for direction:  W_x (G*H, in)   W_h (G*H, P or H)   [W_r (P, H) projection]
    for layer, for direction:  b_x (G*H,)      b_h (G*H,)

G is the number of gates (rnn 1; lstm 4: i, f, g, o; gru 3: r, z, n), H state_size,
P projection_size, `in` the layer's input size (the data's C for layer 0, D*H or D*P
after it). So weights trained in MXNet load unchanged.

The reserve (the op's hidden output) keeps what backward needs from the forward pass:
per layer the layer's output when another layer reads it (and the dropout mask applied
to it), and per layer and direction the activated gates and, for lstm, the cell states
(gru: the recurrent candidate W_hn h + b_hn; lstm with projection: o * tanh(c)).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

GATES = {"rnn_relu": 1, "rnn_tanh": 1, "lstm": 4, "gru": 3}


@dataclass(frozen=True)
class RnnLayout:
    mode: str
    layers: int
    dirs: int
    input_size: int
    hidden: int
    proj: int  # projection size, 0 without projection
    dropout: bool  # a mask between layers is kept

    @property
    def gates(self) -> int:
        return GATES[self.mode]

    @property
    def out_size(self) -> int:
        """Features of one direction's output and state: P with projection, else H."""
        return self.proj or self.hidden

    def layer_input(self, layer: int) -> int:
        return self.input_size if layer == 0 else self.dirs * self.out_size

    # -- the packed parameters ------------------------------------------------------------

    def _weight_sizes(self, layer: int) -> tuple[int, int, int]:
        gh = self.gates * self.hidden
        wr = self.proj * self.hidden if self.proj else 0
        return gh * self.layer_input(layer), gh * self.out_size, wr

    def param_size(self) -> int:
        # layers after the first all have the same sizes: a product, not a loop, so that
        # num_layers=10**9 is answered at once (and then refused for its size) instead of
        # hanging shape inference
        first = sum(self._weight_sizes(0))
        weights = first + (self.layers - 1) * sum(self._weight_sizes(1)) if self.layers else 0
        biases = self.layers * 2 * self.gates * self.hidden
        return self.dirs * (weights + biases)

    def param_views(self, params: Any) -> list[dict[str, Any]]:
        """Per (layer, direction), index layer*dirs + d: views wx, wh, [wr], bx, bh."""
        gh, out = self.gates * self.hidden, []
        pos = 0
        for layer in range(self.layers):
            nx, nh, nr = self._weight_sizes(layer)
            for _ in range(self.dirs):
                v: dict[str, Any] = {}
                v["wx"] = params[pos : pos + nx].reshape(gh, self.layer_input(layer))
                pos += nx
                v["wh"] = params[pos : pos + nh].reshape(gh, self.out_size)
                pos += nh
                if nr:
                    v["wr"] = params[pos : pos + nr].reshape(self.proj, self.hidden)
                    pos += nr
                out.append(v)
        for v in out:
            v["bx"] = params[pos : pos + gh]
            v["bh"] = params[pos + gh : pos + 2 * gh]
            pos += 2 * gh
        return out

    # -- the reserve ------------------------------------------------------------------------

    def _extra(self) -> int:
        """Per-step features kept besides the gates: c (and o*tanh c), or gru's W_hn h."""
        if self.mode == "lstm":
            return 2 * self.hidden if self.proj else self.hidden
        return self.hidden if self.mode == "gru" else 0

    def _per_layer(self, layer: int, steps: int) -> tuple[int, int]:
        """(layer output + mask, per-direction gates + extra) sizes of one layer, per step."""
        keep = self.dirs * self.out_size if layer < self.layers - 1 else 0
        kept = keep * (2 if self.dropout else 1)
        return kept * steps, (self.gates * self.hidden + self._extra()) * steps

    def reserve_size(self, steps: int, batch: int) -> int:
        # every layer but the last keeps its output (and mask): a product, not a loop over
        # the layers (see param_size)
        if self.layers == 0:
            return 0
        kept, per_dir = self._per_layer(0, steps * batch)
        return (self.layers - 1) * kept + self.layers * self.dirs * per_dir

    def reserve_views(self, reserve: Any, steps: int, batch: int) -> list[dict[str, Any]]:
        """Per layer: 'out' and 'mask' (T, N, D*out) or None, 'dirs': [{'gates', 'extra'}]."""
        pos, views = 0, []
        gh, extra = self.gates * self.hidden, self._extra()
        tn = steps * batch
        for layer in range(self.layers):
            v: dict[str, Any] = {"out": None, "mask": None, "dirs": []}
            if layer < self.layers - 1:
                width = self.dirs * self.out_size
                v["out"] = reserve[pos : pos + tn * width].reshape(steps, batch, width)
                pos += tn * width
                if self.dropout:
                    v["mask"] = reserve[pos : pos + tn * width].reshape(steps, batch, width)
                    pos += tn * width
            for _ in range(self.dirs):
                d = {"gates": reserve[pos : pos + tn * gh].reshape(steps, batch, gh)}
                pos += tn * gh
                d["extra"] = (
                    reserve[pos : pos + tn * extra].reshape(steps, batch, extra) if extra else None
                )
                pos += tn * extra
                v["dirs"].append(d)
            views.append(v)
        return views
