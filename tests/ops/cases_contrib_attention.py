"""OpCase rows for contrib_attention.py: the interleaved multi-head attention matmuls.

The NumPy references split the interleaved projections into per-head q/k/v stacks
(B*H, L, D) by reshape/transpose, multiply with matmul and interleave the result back:
an independent route to the strided products of the op.
"""

from __future__ import annotations

import numpy as np
from op_db import OpCase

L, LQ, B, H, D = 4, 3, 2, 3, 2  # key/self sequence, query sequence, batch, heads, head dim


def _heads(x: np.ndarray, slots: int, slot: int) -> np.ndarray:
    """(seq, B, H*slots*D) -> (B*H, seq, D) of one slot."""
    seq = x.shape[0]
    part = x.reshape(seq, B, H, slots, D)[:, :, :, slot]
    return part.transpose(1, 2, 0, 3).reshape(B * H, seq, D)


def _interleave(y: np.ndarray) -> np.ndarray:
    """(B*H, seq, D) -> (seq, B, H*D)."""
    seq = y.shape[1]
    return y.reshape(B, H, seq, D).transpose(2, 0, 1, 3).reshape(seq, B, H * D)


def _qk(q: np.ndarray, k: np.ndarray) -> np.ndarray:
    return q @ k.transpose(0, 2, 1) / np.sqrt(D)


CASES = [
    OpCase(
        "_contrib_interleaved_matmul_selfatt_qk",
        shapes=[(L, B, H * 3 * D)],
        params={"heads": H},
        reference=lambda qkv, heads: _qk(_heads(qkv, 3, 0), _heads(qkv, 3, 1)),
    ),
    OpCase(
        "_contrib_interleaved_matmul_selfatt_valatt",
        shapes=[(L, B, H * 3 * D), (B * H, L, L)],
        params={"heads": H},
        reference=lambda qkv, att, heads: _interleave(att @ _heads(qkv, 3, 2)),
    ),
    OpCase(
        "_contrib_interleaved_matmul_encdec_qk",
        shapes=[(LQ, B, H * D), (L, B, H * 2 * D)],
        params={"heads": H},
        reference=lambda q, kv, heads: _qk(_heads(q, 1, 0), _heads(kv, 2, 0)),
    ),
    OpCase(
        "_contrib_interleaved_matmul_encdec_valatt",
        shapes=[(L, B, H * 2 * D), (B * H, LQ, L)],
        params={"heads": H},
        reference=lambda kv, att, heads: _interleave(att @ _heads(kv, 2, 1)),
    ),
]
