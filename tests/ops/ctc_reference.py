"""CTC's loss by brute force: every alignment of a tiny problem, summed (a reference)."""

from __future__ import annotations

import itertools

import numpy as np


def ctc_brute_force(acts: np.ndarray, labels: np.ndarray, blank: int) -> np.ndarray:
    """-log p(label | acts) per batch item, summing every alignment (tiny sizes only):
    a path collapses by merging repeats then dropping blanks. Labels end at padding 0
    (blank 'first': classes 1..C-1) or -1 (blank 'last')."""
    T, N, C = acts.shape
    e = np.exp(acts - acts.max(axis=2, keepdims=True))
    p = e / e.sum(axis=2, keepdims=True)
    losses = np.zeros(N)
    for n in range(N):
        pad = 0 if blank == 0 else -1
        target = [int(v) for v in labels[n] if int(v) != pad]
        total = 0.0
        for path in itertools.product(range(C), repeat=T):
            merged = [k for k, _ in itertools.groupby(path)]
            if [k for k in merged if k != blank] == target:
                total += float(np.prod([p[t, n, path[t]] for t in range(T)]))
        losses[n] = -np.log(total)
    return losses
