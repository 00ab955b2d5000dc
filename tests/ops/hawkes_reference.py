"""A direct NumPy evaluation of the Hawkes log likelihood, for checking contrib_hawkes.

Written from the definition, not from the op's recursions: every intensity sums the
kernels of all earlier events of its process explicitly, and the compensator is the
closed-form integral of each kernel over (t_i, T].
"""

from __future__ import annotations

import numpy as np


def hawkesll_ref(
    lda: np.ndarray,
    alpha: np.ndarray,
    beta: np.ndarray,
    state: np.ndarray,
    lags: np.ndarray,
    marks: np.ndarray,
    valid_length: np.ndarray,
    max_time: np.ndarray,
) -> list[np.ndarray]:
    """(log likelihood (N,), memory at max_time (N, K)) in float64."""
    n_samples, k_procs = lda.shape
    ll = np.zeros(n_samples)
    out = np.zeros((n_samples, k_procs))
    for n in range(n_samples):
        steps = int(valid_length[n])
        times = np.cumsum(lags[n, :steps].astype(np.float64))
        ks = marks[n, :steps].astype(np.int64)
        end = float(max_time[n])
        total = 0.0
        for i in range(steps):
            k, t = ks[i], times[i]
            earlier = times[:i][ks[:i] == k]
            memory = state[n, k] * np.exp(-beta[k] * t) + np.exp(-beta[k] * (t - earlier)).sum()
            total += np.log(lda[n, k] + alpha[k] * beta[k] * memory)
        for k in range(k_procs):
            own = times[ks == k]
            kernels = state[n, k] * (1 - np.exp(-beta[k] * end))
            kernels += (1 - np.exp(-beta[k] * (end - own))).sum()
            total -= lda[n, k] * end + alpha[k] * kernels
            out[n, k] = state[n, k] * np.exp(-beta[k] * end) + np.exp(-beta[k] * (end - own)).sum()
        ll[n] = total
    return [ll, out]


def hawkes_inputs(
    rng: np.random.Generator, dtype: object, n: int = 3, k: int = 2, steps: int = 6
) -> list[np.ndarray]:
    """Valid random inputs: positive rates, ragged rows, max_time past the last event."""
    lags = rng.uniform(0.1, 1.5, (n, steps))
    valid_length = rng.integers(0, steps + 1, n)
    valid_length[0] = steps
    max_time = lags.sum(axis=1) + rng.uniform(0.5, 2.0, n)
    return [
        rng.uniform(0.5, 2.0, (n, k)).astype(dtype),
        rng.uniform(0.1, 0.8, k).astype(dtype),
        rng.uniform(0.5, 2.5, k).astype(dtype),
        rng.uniform(0.0, 1.5, (n, k)).astype(dtype),
        lags.astype(dtype),
        rng.integers(0, k, (n, steps)).astype(np.int32),
        valid_length.astype(dtype),
        max_time.astype(dtype),
    ]
