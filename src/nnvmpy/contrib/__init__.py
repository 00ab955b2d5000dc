"""nv.contrib: MXNet's `mx.contrib` front door. `nv.contrib.ndarray` (alias `nd`) is
nv.nd.contrib and `nv.contrib.symbol` (alias `sym`) is nv.sym.contrib: the ops registered
as `_contrib_<name>`, under `<name>`. `nv.contrib.amp` is MXNet's AMP entry point
(convert_symbol to bfloat16, contrib/amp.py); `nv.contrib.autograd` is MXNet's first
autograd interface (train_section, grad_and_loss, ...); `nv.contrib.text` is MXNet's
vocabulary and token-embedding toolkit; `nv.contrib.quantization` (alias `quant`) is
MXNet's post-training int8 quantization (quantize_model). Also importable as modules
(`import nnvmpy.contrib.ndarray`), as MXNet's are."""

from __future__ import annotations

import sys

from ..ndarray import contrib as ndarray
from ..symbol import contrib as symbol
from . import amp, autograd, quantization, text

nd = ndarray
sym = symbol
quant = quantization  # MXNet's alias: mx.contrib.quant
sys.modules[f"{__name__}.ndarray"] = ndarray
sys.modules[f"{__name__}.symbol"] = symbol

__all__ = ["amp", "autograd", "nd", "ndarray", "quant", "quantization", "sym", "symbol", "text"]
