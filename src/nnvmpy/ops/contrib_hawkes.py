"""hawkesll: the log likelihood of K independent exponential-kernel Hawkes processes.

Served as nd.contrib.hawkesll / sym.contrib.hawkesll (`_contrib_hawkesll`), as MXNet 1.x.
For sample n, the events are given as a left-aligned ragged row: interarrival times
`lags[n, :L]` and process ids `marks[n, :L]` (L = valid_length[n]), observed on
(0, max_time[n]]. Process k has the conditional intensity

    lambda*_k(t) = lda[n, k] + alpha[k] * beta[k] * s_k(t),
    s_k(t) = state[n, k] * exp(-beta[k] t) + sum_{t_i < t, y_i = k} exp(-beta[k] (t - t_i))

where `state` is the memory of events before the window (s_k(0)). Outputs:

- output (N,): sum_i log lambda*_{y_i}(t_i) - sum_k integral_0^T lambda*_k, where the
  integral is lda T + alpha (state + n_k - s_k(T)) and n_k counts process k's events;
- out_state (N, K): s_k(T), the memory to carry into the next window.

The gradient is exact for every real-valued input (lda, alpha, beta, state, lags,
max_time) and for both outputs; marks and valid_length are discrete and get zeros. (MXNet
refuses gradients for lags and max_time, returns zeros for state and ignores the head
gradient of out_state: here the calculus is carried through.)

Each sample is a sequential walk over its events: one numba loop per sample (samples in
parallel), in float64 whatever the input dtype. On the GPU the inputs are copied to the
host and the results back (_host_staged.host_compute).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import kernel
from ..attrs import (
    FCompute_cpu,
    FCompute_gpu,
    FGradient,
    FInferShape,
    FInferType,
    FListInputNames,
    FListOutputNames,
    TIsBackward,
)
from ..base import InferError, NNVMError
from ..graph.grad import make_grad_node
from ..infer import shape_assign, shape_is_known, shape_str, type_assign
from ..registry import NodeAttrs, register_op
from ._host_staged import host_compute
from .contrib_bbox import float_type

OP = "_contrib_hawkesll"
INPUTS = ["lda", "alpha", "beta", "state", "lags", "marks", "valid_length", "max_time"]
OUTPUTS = ["output", "out_state"]
# the dimensions of each input, then of each output: N samples, K processes, T steps
_INPUT_DIMS = ["NK", "K", "K", "NK", "NT", "NT", "N", "N"]
_OUTPUT_DIMS = ["N", "NK"]
_MARKS = INPUTS.index("marks")
prange = range  # numba.prange once a kernel is first used (see _use_numba_prange)


# --- shape and type inference ----------------------------------------------------------------


def _hawkes_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    """Mutual inference of N, K and T over every input and output."""
    slots = [(in_shapes, i, d, f"input '{n}'") for i, (n, d) in enumerate(zip(INPUTS, _INPUT_DIMS))]
    slots += [
        (out_shapes, j, d, f"output '{n}'") for j, (n, d) in enumerate(zip(OUTPUTS, _OUTPUT_DIMS))
    ]
    size: dict[str, int] = {}
    for shapes, i, dims, what in slots:
        s = shapes[i]
        if s is None:
            continue
        if len(s) != len(dims):
            raise InferError(
                f"{OP}: {what} has shape {shape_str(s)}; expected {len(dims)} dimensions "
                f"({', '.join(dims)})"
            )
        for letter, v in zip(dims, s):
            if v is None:
                continue
            if size.setdefault(letter, v) != v:
                raise InferError(
                    f"{OP}: {what} has shape {shape_str(s)}, but its {letter} = {v} disagrees "
                    f"with {letter} = {size[letter]} of another argument"
                )
    for shapes, i, dims, what in slots:
        shape_assign(shapes, i, tuple(size.get(letter) for letter in dims), f"{OP}: {what}")
    return all(shape_is_known(s) for s in [*in_shapes, *out_shapes])


def _hawkes_type(attrs: NodeAttrs, in_types: list[Any], out_types: list[Any]) -> bool:
    """marks is int32; every other input and both outputs share one float dtype."""
    type_assign(in_types, _MARKS, np.int32, f"{OP}: input 'marks'")
    floats = [i for i in range(len(INPUTS)) if i != _MARKS]
    known = next((t for t in [*(in_types[i] for i in floats), *out_types] if t is not None), None)
    if known is None:
        return False
    float_type(OP, f"input '{INPUTS[0]}'", known)
    for i in floats:
        type_assign(in_types, i, known, f"{OP}: input '{INPUTS[i]}'")
    for j, name in enumerate(OUTPUTS):
        type_assign(out_types, j, known, f"{OP}: output '{name}'")
    return True


# --- kernels ---------------------------------------------------------------------------------


@kernel.cpu_kernel
def _forward_kernel(  # pragma: no cover - compiled
    lda, alpha, beta, state, lags, marks, length, tmax, ll, out_state
):
    """Per sample: walk the events, keeping each process's memory at its last event."""
    n_samples, k_procs = lda.shape
    for n in prange(n_samples):
        mem = state[n].copy()  # s_k at the process's last event (or at 0)
        last = np.zeros(k_procs)
        count = np.zeros(k_procs)
        t = 0.0
        total = 0.0
        for j in range(length[n]):
            k = marks[n, j]
            t += lags[n, j]
            r = mem[k] * np.exp(-beta[k] * (t - last[k]))
            total += np.log(lda[n, k] + alpha[k] * beta[k] * r)
            mem[k] = r + 1.0
            last[k] = t
            count[k] += 1.0
        end = tmax[n]
        for k in range(k_procs):
            s_end = mem[k] * np.exp(-beta[k] * (end - last[k]))
            total -= lda[n, k] * end + alpha[k] * (state[n, k] + count[k] - s_end)
            out_state[n, k] = s_end
        ll[n] = total


@kernel.cpu_kernel
def _backward_kernel(  # pragma: no cover - compiled
    g,
    h,
    lda,
    alpha,
    beta,
    state,
    lags,
    marks,
    length,
    tmax,
    d_lda,
    d_alpha,
    d_beta,
    d_state,
    d_lags,
    d_tmax,
):
    """Per sample, the gradient of g . output + h . out_state; alpha/beta per sample.

    A forward sweep keeps, per process, the memory m and its beta-derivative mb; a reverse
    sweep accumulates d/dt_j of every event time (t_j moves every later intensity of its
    process) and turns them into lag gradients by suffix sums (t_j = sum_{i<=j} lags_i).
    """
    n_samples, k_procs = lda.shape
    for n in prange(n_samples):
        steps = length[n]
        times = np.empty(steps)
        lam = np.empty(steps)
        excite = np.empty(steps)  # s_k(t_j) just before event j
        mem = state[n].copy()
        mem_b = np.zeros(k_procs)  # d mem / d beta
        last = np.zeros(k_procs)
        count = np.zeros(k_procs)
        gn = g[n]
        t = 0.0
        for j in range(steps):
            k = marks[n, j]
            t += lags[n, j]
            a, b = alpha[k], beta[k]
            gap = t - last[k]
            decay = np.exp(-b * gap)
            r = mem[k] * decay
            r_b = (mem_b[k] - gap * mem[k]) * decay
            lj = lda[n, k] + a * b * r
            d_lda[n, k] += gn / lj
            d_alpha[n, k] += gn * b * r / lj
            d_beta[n, k] += gn * a * (r + b * r_b) / lj
            d_state[n, k] += gn * a * b * np.exp(-b * t) / lj
            times[j], lam[j], excite[j] = t, lj, r
            mem[k] = r + 1.0
            mem_b[k] = r_b
            last[k] = t
            count[k] += 1.0
        end = tmax[n]
        dt_end = 0.0
        for k in range(k_procs):
            a, b = alpha[k], beta[k]
            gap = end - last[k]
            decay = np.exp(-b * gap)
            s_end = mem[k] * decay
            s_end_b = (mem_b[k] - gap * mem[k]) * decay
            decay_all = np.exp(-b * end)
            hk = h[n, k]
            d_lda[n, k] -= gn * end
            d_alpha[n, k] -= gn * (state[n, k] + count[k] - s_end)
            d_beta[n, k] += (gn * a + hk) * s_end_b
            d_state[n, k] += -gn * a * (1.0 - decay_all) + hk * decay_all
            dt_end -= gn * (lda[n, k] + a * b * s_end) + hk * b * s_end
        d_tmax[n] = dt_end
        # reverse sweep: later[k] = sum over process k's events after the current one of
        # exp(-b (t_m - t_next)) / lam_m, relative to the next event's time t_next
        later = np.zeros(k_procs)
        t_next = np.zeros(k_procs)
        suffix = 0.0
        for j in range(steps - 1, -1, -1):
            k = marks[n, j]
            a, b = alpha[k], beta[k]
            tj = times[j]
            after = later[k] * np.exp(-b * (t_next[k] - tj))
            to_end = np.exp(-b * (end - tj))
            dtj = gn * a * b * (b * (after - excite[j] / lam[j]) + to_end) + h[n, k] * b * to_end
            later[k] = 1.0 / lam[j] + after
            t_next[k] = tj
            suffix += dtj
            d_lags[n, j] = suffix
        for j in range(steps, d_lags.shape[1]):
            d_lags[n, j] = 0.0


def _use_numba_prange() -> None:
    """Make the kernels' sample loops numba.prange (numba is imported only here, lazily)."""
    global prange
    import numba

    prange = numba.prange


# --- host computations -----------------------------------------------------------------------


def _prepared(*inputs: np.ndarray) -> list[np.ndarray]:
    """float64 copies of the real inputs, int64 marks and lengths, after checking them."""
    lda, _, _, _, lags, marks, valid_length, max_time = inputs
    k_procs = lda.shape[1]
    steps = lags.shape[1]
    length = np.asarray(valid_length).astype(np.int64)
    if np.any(length < 0) or np.any(length > steps):
        raise NNVMError(
            f"{OP}: valid_length must lie in [0, {steps}] (the length of 'lags'); "
            f"got {np.asarray(valid_length).tolist()}"
        )
    mk = np.asarray(marks).astype(np.int64)
    valid = np.arange(steps)[None, :] < length[:, None]
    bad = valid & ((mk < 0) | (mk >= k_procs))
    if bad.any():
        n, j = np.argwhere(bad)[0]
        raise NNVMError(
            f"{OP}: marks[{n}, {j}] = {mk[n, j]} is not a process id in [0, {k_procs}) "
            f"(K = {k_procs}, the last dimension of 'lda')"
        )
    mk = np.where(valid, mk, 0)
    f64 = [np.ascontiguousarray(x, dtype=np.float64) for x in inputs[:5]]
    return [*f64, np.ascontiguousarray(mk), length, np.ascontiguousarray(max_time, np.float64)]


def hawkesll_np(params: Any, *inputs: np.ndarray) -> list[np.ndarray]:
    """(output, out_state) for host inputs in the op's order."""
    args = _prepared(*inputs)
    n_samples, k_procs = args[0].shape
    ll = np.empty(n_samples)
    out_state = np.empty((n_samples, k_procs))
    _use_numba_prange()
    _forward_kernel(*args, ll, out_state)
    return [ll, out_state]


def hawkesll_grad_np(params: Any, *inputs: np.ndarray) -> list[np.ndarray]:
    """Input gradients for host inputs (d output, d out_state, then the op's inputs)."""
    g = np.ascontiguousarray(inputs[0], dtype=np.float64)
    h = np.ascontiguousarray(inputs[1], dtype=np.float64)
    args = _prepared(*inputs[2:])
    marks, valid_length = inputs[2 + _MARKS], inputs[2 + _MARKS + 1]
    n_samples, k_procs = args[0].shape
    d_lda = np.zeros((n_samples, k_procs))
    d_alpha = np.zeros((n_samples, k_procs))
    d_beta = np.zeros((n_samples, k_procs))
    d_state = np.zeros((n_samples, k_procs))
    d_lags = np.zeros(args[4].shape)
    d_tmax = np.zeros(n_samples)
    _use_numba_prange()
    _backward_kernel(g, h, *args, d_lda, d_alpha, d_beta, d_state, d_lags, d_tmax)
    return [
        d_lda,
        d_alpha.sum(axis=0),
        d_beta.sum(axis=0),
        d_state,
        d_lags,
        np.zeros(np.shape(marks)),
        np.zeros(np.shape(valid_length)),
        d_tmax,
    ]


# --- registration ----------------------------------------------------------------------------


def _hawkes_gradient(node: Any, ograds: list[Any]) -> list[Any]:
    return make_grad_node("_backward_contrib_hawkesll", node, [*ograds[:2], *node.inputs])


_forward = host_compute(OP, hawkesll_np)
(
    register_op(OP)
    .describe(
        "Computes the log likelihood of a univariate Hawkes process.\n\n"
        "The log likelihood is calculated on point process observations represented as "
        "*ragged* matrices for *lags* (interarrival times w.r.t. the previous point), and "
        "*marks* (identifiers for the process ID). Each mark is an independent process with "
        "the conditional intensity\n\n"
        "  lambda_k^*(t) = lambda_k + alpha_k sum_{t_i < t, y_i = k} beta_k "
        "exp(-beta_k (t - t_i))\n\n"
        "``lags`` and ``marks`` have shape (N, T); ``valid_length`` (N,) gives the number "
        "of valid points of each row; ``max_time`` (N,) the length of the observation "
        "period (0, max_time]. ``state`` (N, K) is the memory s_k(0) of the process, "
        "s_k(t) = sum_{t_i < t} exp(-beta_k (t - t_i)); the second output is s_k(max_time).\n\n"
        "Example::\n\n"
        "  lda = nd.array([1.5, 2.0, 3.0]).tile((N, 1))\n"
        "  alpha = nd.array([0.2, 0.3, 0.4])\n"
        "  beta = nd.array([1.0, 2.0, 3.0])\n"
        "  ia_times = nd.array([[6, 7, 8, 9], [1, 2, 3, 4], [3, 4, 5, 6], [8, 9, 10, 11]])\n"
        "  marks = nd.zeros((N, T)).astype(np.int32)\n"
        "  states = nd.zeros((N, K))\n"
        "  valid_length = nd.array([1, 2, 3, 4])\n"
        "  max_time = nd.ones((N,)) * 100.0\n"
        "  A = nd.contrib.hawkesll(lda, alpha, beta, states, ia_times, marks, valid_length, "
        "max_time)\n"
    )
    .set_num_inputs(len(INPUTS))
    .set_num_outputs(len(OUTPUTS))
    .set_attr(FListInputNames, lambda attrs: list(INPUTS))
    .set_attr(FListOutputNames, lambda attrs: list(OUTPUTS))
    .set_attr(FInferShape, _hawkes_shape)
    .set_attr(FInferType, _hawkes_type)
    .set_attr(FCompute_cpu, _forward)
    .set_attr(FCompute_gpu, _forward)
    .set_attr(FGradient, _hawkes_gradient)
    .add_argument(
        "lda",
        "NDArray-or-Symbol",
        "Shape (N, K) The intensity for each of the K processes, for each sample",
    )
    .add_argument(
        "alpha",
        "NDArray-or-Symbol",
        "Shape (K,) The infectivity factor (branching ratio) for each process",
    )
    .add_argument("beta", "NDArray-or-Symbol", "Shape (K,) The decay parameter for each process")
    .add_argument("state", "NDArray-or-Symbol", "Shape (N, K) the Hawkes state for each process")
    .add_argument("lags", "NDArray-or-Symbol", "Shape (N, T) the interarrival times")
    .add_argument("marks", "NDArray-or-Symbol", "Shape (N, T) the marks (process ids)")
    .add_argument("valid_length", "NDArray-or-Symbol", "The number of valid points in the process")
    .add_argument(
        "max_time",
        "NDArray-or-Symbol",
        "the length of the interval where the processes were sampled",
    )
)
_backward = host_compute("_backward_contrib_hawkesll", hawkesll_grad_np)
(
    register_op("_backward_contrib_hawkesll")
    .describe("Backward of hawkesll: inputs (d output, d out_state, the 8 inputs).")
    .set_num_inputs(2 + len(INPUTS))
    .set_num_outputs(len(INPUTS))
    .set_attr(TIsBackward, True)
    .set_attr(FCompute_cpu, _backward)
    .set_attr(FCompute_gpu, _backward)
)
