"""OpCase rows for contrib_attention.py: the interleaved multi-head attention matmuls.

The NumPy references split the interleaved projections into per-head q/k/v stacks
(B*H, L, D) by reshape/transpose, multiply with matmul and interleave the result back:
an independent route to the op's copies and batched GEMMs. Each op has two rows: several
batch rows and heads, and one batch row of four heads whose head_dim (3) makes
1/sqrt(head_dim) no power of two.
"""

from __future__ import annotations

import numpy as np
from op_db import OpCase

L, LQ, B, H, D = 4, 3, 2, 3, 2  # key/self sequence, query sequence, batch, heads, head dim


def _heads(x: np.ndarray, slots: int, slot: int, heads: int) -> np.ndarray:
    """(seq, batch, heads*slots*d) -> (batch*heads, seq, d) of one slot."""
    seq, batch = x.shape[:2]
    part = x.reshape(seq, batch, heads, slots, -1)[:, :, :, slot]
    return part.transpose(1, 2, 0, 3).reshape(batch * heads, seq, -1)


def _interleave(y: np.ndarray, heads: int) -> np.ndarray:
    """(batch*heads, seq, d) -> (seq, batch, heads*d)."""
    z, seq, d = y.shape
    return y.reshape(z // heads, heads, seq, d).transpose(2, 0, 1, 3).reshape(seq, -1, heads * d)


def _qk(q: np.ndarray, k: np.ndarray) -> np.ndarray:
    return q @ k.transpose(0, 2, 1) / np.sqrt(q.shape[2])


def _selfatt_qk(qkv: np.ndarray, heads: int) -> np.ndarray:
    return _qk(_heads(qkv, 3, 0, heads), _heads(qkv, 3, 1, heads))


def _selfatt_valatt(qkv: np.ndarray, att: np.ndarray, heads: int) -> np.ndarray:
    return _interleave(att @ _heads(qkv, 3, 2, heads), heads)


def _encdec_qk(q: np.ndarray, kv: np.ndarray, heads: int) -> np.ndarray:
    return _qk(_heads(q, 1, 0, heads), _heads(kv, 2, 0, heads))


def _encdec_valatt(kv: np.ndarray, att: np.ndarray, heads: int) -> np.ndarray:
    return _interleave(att @ _heads(kv, 2, 1, heads), heads)


def _rows(lk: int, lq: int, b: int, h: int, d: int, id: str = "") -> list[OpCase]:
    """The four ops on one geometry: key/self length lk, query length lq."""
    op, p = "_contrib_interleaved_matmul_", {"heads": h}
    return [
        OpCase(f"{op}selfatt_qk", [(lk, b, h * 3 * d)], _selfatt_qk, p, id=id),
        OpCase(
            f"{op}selfatt_valatt", [(lk, b, h * 3 * d), (b * h, lk, lk)], _selfatt_valatt, p, id=id
        ),
        OpCase(f"{op}encdec_qk", [(lq, b, h * d), (lk, b, h * 2 * d)], _encdec_qk, p, id=id),
        OpCase(
            f"{op}encdec_valatt", [(lk, b, h * 2 * d), (b * h, lq, lk)], _encdec_valatt, p, id=id
        ),
    ]


CASES = [*_rows(L, LQ, B, H, D), *_rows(5, 2, 1, 4, 3, id="heads4")]
