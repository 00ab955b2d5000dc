"""CTC's forward-backward algorithm in log space, one body for CPU and GPU (see ctc.py).

Sequence b has T_b steps of activations x[t, b, :] (A classes, log-softmax taken per
step) and a label l of length L_b. Its extended label l' puts a blank before, between
and after the labels: S_b = 2 L_b + 1 states, l'_s = blank for even s, l_{(s-1)/2} for
odd s. With y_t(c) = log softmax(x[t, b])[c]:

    alpha_0(0) = y_0(blank), alpha_0(1) = y_0(l_0), others -inf
    alpha_t(s) = logsumexp(alpha_{t-1}(s), alpha_{t-1}(s-1),
                           alpha_{t-1}(s-2) if l'_s != blank and l'_s != l'_{s-2}) + y_t(l'_s)
    log p(l | x) = logsumexp(alpha_{T-1}(S-1), alpha_{T-1}(S-2))

beta runs the same recursion backwards without the emission of its own step, so
alpha_t(s) + beta_t(s) - log p is the posterior of being in state s at step t, and

    d(-log p) / d x[t, b, c] = softmax(x[t, b])[c]
                               - sum_{s: l'_s = c} exp(alpha_t(s) + beta_t(s) - log p)

Work items: a row (t, b) for the log-sum-exp and the gradient, a sequence b for alpha and
beta. alpha and beta live in (N, T, S_max) float64 scratch; indices are flat. One state's
step of either recursion is a device function (_alpha_at, _beta_at), so that the GPU's
schedule (_ctc_cuda.py: a thread block per sequence, its threads over the states) runs
the same arithmetic as the loops here.
"""

from __future__ import annotations

import math

from ...kernel import device_function, parallel_for
from ...kernel.launch import store


@device_function
def _log_add(a, b):
    """log(exp(a) + exp(b)) without overflow; -inf is the log of 0."""
    if a == -math.inf:
        return b
    if b == -math.inf:
        return a
    if a > b:
        return a + math.log1p(math.exp(b - a))
    return b + math.log1p(math.exp(a - b))


@device_function
def _ext(lab, base, s, blank):
    """The class of extended-label state s: blank for even s, else label (s - 1) / 2."""
    if s % 2 == 0:
        return blank
    return lab[base + (s - 1) // 2]


@parallel_for
def row_lse(r, lse, x, n, a_len, tlen):
    """lse[t, b] = logsumexp(x[t, b, :]) for the steps t < T_b of each sequence."""
    t = r // n
    if t >= tlen[r - t * n]:
        return
    base = r * a_len
    m = x[base]
    for k in range(1, a_len):
        m = max(m, x[base + k])
    s = 0.0
    for k in range(a_len):
        s += math.exp(x[base + k] - m)
    lse[r] = m + math.log(s)


@device_function
def _alpha_first(x, lse, lab, lb, b, a_len, s, blank):
    """alpha_0(s): the first step's emission for states 0 and 1 (row (0, b) is row b)."""
    if s == 0:
        return x[b * a_len + blank] - lse[b]
    if s == 1:
        return x[b * a_len + lab[lb]] - lse[b]
    return -math.inf


@device_function
def _alpha_at(alpha, x, lse, lab, lb, prev, r, a_len, s, blank):
    """alpha_t(s) from step t - 1's column at alpha[prev:]; r is step t's row (t, b)."""
    c = _ext(lab, lb, s, blank)
    v = alpha[prev + s]
    if s >= 1:
        v = _log_add(v, alpha[prev + s - 1])
    if s >= 2 and c != blank and c != _ext(lab, lb, s - 2, blank):
        v = _log_add(v, alpha[prev + s - 2])
    return v + (x[r * a_len + c] - lse[r])


@device_function
def _beta_last(s, n_states):
    """beta_{T-1}(s): 0 (log 1) for the last two states, where a path may end."""
    if s >= n_states - 2:
        return 0.0
    return -math.inf


@device_function
def _beta_at(beta, x, lse, lab, lb, nxt, r, a_len, s, n_states, blank):
    """beta_t(s) from step t + 1's column at beta[nxt:]; r is step t + 1's row, whose
    emissions beta_t adds."""
    c = _ext(lab, lb, s, blank)
    v = beta[nxt + s] + (x[r * a_len + c] - lse[r])
    if s + 1 < n_states:
        c1 = _ext(lab, lb, s + 1, blank)
        v = _log_add(v, beta[nxt + s + 1] + (x[r * a_len + c1] - lse[r]))
    if s + 2 < n_states:
        c2 = _ext(lab, lb, s + 2, blank)
        if c2 != blank and c2 != c:
            v = _log_add(v, beta[nxt + s + 2] + (x[r * a_len + c2] - lse[r]))
    return v


@device_function
def _log_p(alpha, last, n_states):
    """log p(l | x) from the last step's column at alpha[last:]: a path ends in the last
    label or the blank after it."""
    lp = alpha[last + n_states - 1]
    if n_states > 1:
        lp = _log_add(lp, alpha[last + n_states - 2])
    return lp


@parallel_for
def alpha_beta(
    b,
    loss,
    logp,
    alpha,
    beta,
    x,
    lse,
    lab,
    lens,
    tlen,
    n,
    a_len,
    lmax,
    s_max,
    t_max,
    blank,
    need_beta,
    mode,
):
    """alpha (and beta) of sequence b; loss[b] = -log p(l | x), logp[b] = log p. The GPU
    runs the same steps with a thread block per sequence (_ctc_cuda.py)."""
    steps = tlen[b]
    n_states = 2 * lens[b] + 1
    lb = b * lmax
    ab = b * t_max * s_max
    if steps == 0:  # only the empty label fits (checked on the host): p = 1
        logp[b] = 0.0
        store(loss, b, 0.0, mode)
        return
    for s in range(n_states):
        alpha[ab + s] = _alpha_first(x, lse, lab, lb, b, a_len, s, blank)
    for t in range(1, steps):
        prev = ab + (t - 1) * s_max
        for s in range(n_states):
            v = _alpha_at(alpha, x, lse, lab, lb, prev, t * n + b, a_len, s, blank)
            alpha[prev + s_max + s] = v
    last = ab + (steps - 1) * s_max
    lp = _log_p(alpha, last, n_states)
    logp[b] = lp
    store(loss, b, -lp, mode)
    if not need_beta:
        return
    for s in range(n_states):
        beta[last + s] = _beta_last(s, n_states)
    for t in range(steps - 2, -1, -1):
        cur = ab + t * s_max
        r = (t + 1) * n + b
        for s in range(n_states):
            beta[cur + s] = _beta_at(
                beta, x, lse, lab, lb, cur + s_max, r, a_len, s, n_states, blank
            )


@parallel_for
def row_grad(
    r,
    grad,
    x,
    lse,
    alpha,
    beta,
    logp,
    lab,
    lens,
    tlen,
    n,
    a_len,
    lmax,
    s_max,
    t_max,
    blank,
    mode,
):
    """grad[t, b, :] = softmax - state posteriors; zero for the steps t >= T_b."""
    t = r // n
    b = r - t * n
    base = r * a_len
    if t >= tlen[b]:
        for k in range(a_len):
            store(grad, base + k, 0.0, mode)
        return
    for k in range(a_len):
        store(grad, base + k, math.exp(x[base + k] - lse[r]), mode)
    lp = logp[b]
    if lp == -math.inf:  # an impossible label: no posterior to subtract
        return
    ab = (b * t_max + t) * s_max
    lb = b * lmax
    for s in range(2 * lens[b] + 1):
        c = _ext(lab, lb, s, blank)
        grad[base + c] -= math.exp(alpha[ab + s] + beta[ab + s] - lp)


@parallel_for
def scale_grad(i, dx, grad, dloss, n, a_len, mode):
    """dx[t, b, c] = grad[t, b, c] * dloss[b] (the backward op)."""
    store(dx, i, grad[i] * dloss[(i // a_len) % n], mode)
