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

Each sample is a sequential walk over its events: one item per sample of a
kernel.parallel_for body (the same on both devices), in float64 whatever the input dtype,
with its per-process and per-event state in scratch rows. Out-of-range lengths and marks
are found by a flag kernel; only then are they read back, to name the culprit.
"""

from __future__ import annotations

import math
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
from ..kernel.launch import NULL, is_gpu, log_ieee, req_code, run_rows, store
from ..registry import NodeAttrs, register_op
from ._host_staged import to_host
from ._index_kernels import device_empty, half_as_float32, to_ctx
from .contrib_bbox import float_type

OP = "_contrib_hawkesll"
INPUTS = ["lda", "alpha", "beta", "state", "lags", "marks", "valid_length", "max_time"]
OUTPUTS = ["output", "out_state"]
# the dimensions of each input, then of each output: N samples, K processes, T steps
_INPUT_DIMS = ["NK", "K", "K", "NK", "NT", "NT", "N", "N"]
_OUTPUT_DIMS = ["N", "NK"]
_MARKS = INPUTS.index("marks")


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


# --- kernels: one item per sample, the same bodies on both devices ---------------------------


@kernel.parallel_for
def _check_sample(n, flag, marks, length, k_procs, steps):
    """flag[0] = 1 when sample n's valid_length or one of its valid marks is out of range."""
    size = length[n]
    if not (size > -1.0 and size < steps + 1.0):  # as cast to int: [0, T]; NaN fails too
        flag[0] = 1
        return
    for j in range(int(size)):
        k = marks[n * steps + j]
        if k < 0 or k >= k_procs:
            flag[0] = 1


@kernel.parallel_for
def _forward_sample(n, ll, out_state, lda, alpha, beta, state, lags, marks, length, tmax,
                    mem, last, count, k_procs, steps, ll_mode, state_mode):  # fmt: skip
    """Sample n: walk its events keeping each process's memory at its last event (mem,
    last, count: this sample's K-entry rows of scratch), in float64."""
    base = n * k_procs
    for k in range(k_procs):
        mem[base + k] = float(state[base + k])
        last[base + k] = 0.0
        count[base + k] = 0.0
    t = 0.0
    total = 0.0
    for j in range(int(length[n])):
        k = int(marks[n * steps + j])
        t += float(lags[n * steps + j])
        b = float(beta[k])
        r = mem[base + k] * math.exp(-b * (t - last[base + k]))
        total += log_ieee(float(lda[base + k]) + float(alpha[k]) * b * r)
        mem[base + k] = r + 1.0
        last[base + k] = t
        count[base + k] += 1.0
    end = float(tmax[n])
    for k in range(k_procs):
        b = float(beta[k])
        s_end = mem[base + k] * math.exp(-b * (end - last[base + k]))
        rest = float(state[base + k]) + count[base + k] - s_end
        total -= float(lda[base + k]) * end + float(alpha[k]) * rest
        store(out_state, base + k, s_end, state_mode)
    store(ll, n, total, ll_mode)


@kernel.parallel_for
def _backward_sample(n, g, h, lda, alpha, beta, state, lags, marks, length, tmax,
                     d_lda, d_alpha, d_beta, d_state, d_lags, d_tmax,
                     times, lam, excite, mem, mem_b, last, count, k_procs, steps):  # fmt: skip
    """Sample n's gradient of g . output + h . out_state (float64 rows of d_*; alpha and
    beta per sample, summed over samples afterwards).

    A forward sweep keeps, per process, the memory m and its beta-derivative mb; a reverse
    sweep accumulates d/dt_j of every event time (t_j moves every later intensity of its
    process) and turns them into lag gradients by suffix sums (t_j = sum_{i<=j} lags_i).
    times / lam / excite are the sample's T-entry rows of scratch; mem, mem_b, last and
    count its K-entry rows (the reverse sweep reuses mem_b as `later`, last as `t_next`).
    """
    base = n * k_procs
    row = n * steps
    size = int(length[n])
    gn = float(g[n])
    for k in range(k_procs):
        mem[base + k] = float(state[base + k])
        mem_b[base + k] = 0.0
        last[base + k] = 0.0
        count[base + k] = 0.0
        d_lda[base + k] = 0.0
        d_alpha[base + k] = 0.0
        d_beta[base + k] = 0.0
        d_state[base + k] = 0.0
    t = 0.0
    for j in range(size):
        k = int(marks[row + j])
        q = base + k
        t += float(lags[row + j])
        a = float(alpha[k])
        b = float(beta[k])
        gap = t - last[q]
        decay = math.exp(-b * gap)
        r = mem[q] * decay
        r_b = (mem_b[q] - gap * mem[q]) * decay
        lj = float(lda[q]) + a * b * r
        d_lda[q] += gn / lj
        d_alpha[q] += gn * b * r / lj
        d_beta[q] += gn * a * (r + b * r_b) / lj
        d_state[q] += gn * a * b * math.exp(-b * t) / lj
        times[row + j] = t
        lam[row + j] = lj
        excite[row + j] = r
        mem[q] = r + 1.0
        mem_b[q] = r_b
        last[q] = t
        count[q] += 1.0
    end = float(tmax[n])
    dt_end = 0.0
    for k in range(k_procs):
        q = base + k
        a = float(alpha[k])
        b = float(beta[k])
        gap = end - last[q]
        decay = math.exp(-b * gap)
        s_end = mem[q] * decay
        s_end_b = (mem_b[q] - gap * mem[q]) * decay
        decay_all = math.exp(-b * end)
        hk = float(h[q])
        d_lda[q] -= gn * end
        d_alpha[q] -= gn * (float(state[q]) + count[q] - s_end)
        d_beta[q] += (gn * a + hk) * s_end_b
        d_state[q] += -gn * a * (1.0 - decay_all) + hk * decay_all
        dt_end -= gn * (float(lda[q]) + a * b * s_end) + hk * b * s_end
    d_tmax[n] = dt_end
    # reverse sweep: later[k] = sum over process k's events after the current one of
    # exp(-b (t_m - t_next)) / lam_m, relative to the next event's time t_next
    for k in range(k_procs):
        mem_b[base + k] = 0.0  # later
        last[base + k] = 0.0  # t_next
    suffix = 0.0
    for j in range(size - 1, -1, -1):
        k = int(marks[row + j])
        q = base + k
        a = float(alpha[k])
        b = float(beta[k])
        tj = times[row + j]
        after = mem_b[q] * math.exp(-b * (last[q] - tj))
        to_end = math.exp(-b * (end - tj))
        dtj = gn * a * b * (b * (after - excite[row + j] / lam[row + j]) + to_end)
        dtj += float(h[q]) * b * to_end
        mem_b[q] = 1.0 / lam[row + j] + after
        last[q] = tj
        suffix += dtj
        d_lags[row + j] = suffix
    for j in range(size, steps):
        d_lags[row + j] = 0.0


@kernel.parallel_for
def _sum_samples(k, total, per_sample, n_samples, k_procs):
    """total[k] = sum over samples of per_sample[n, k]."""
    acc = 0.0
    for n in range(n_samples):
        acc += per_sample[n * k_procs + k]
    total[k] = acc


@kernel.parallel_for
def _emit(i, out, value, mode):
    store(out, i, value[i], mode)


@kernel.parallel_for
def _emit_zero(i, out, mode):
    store(out, i, 0, mode)


# --- the computes ----------------------------------------------------------------------------


def _sizes(inputs: list[Any]) -> tuple[int, int, int]:
    n_samples, k_procs = (int(d) for d in inputs[0].shape)
    return n_samples, k_procs, int(inputs[4].shape[1])


def _check(ctx: Any, inputs: list[Any]) -> None:
    """A named error for a valid_length outside [0, T] or a mark that is no process id:
    one flag on the device, the arrays read back only to name the culprit."""
    n_samples, k_procs, steps = _sizes(inputs)
    marks, valid_length = inputs[_MARKS], inputs[_MARKS + 1]
    flag = to_ctx(ctx, np.zeros(1, np.int64))
    run_rows(ctx, OP, _check_sample, n_samples, flag, marks, valid_length, k_procs, steps)
    if not (to_host(ctx, flag) if is_gpu(ctx) else flag)[0]:
        return
    given = np.asarray(to_host(ctx, valid_length) if is_gpu(ctx) else valid_length)
    with np.errstate(invalid="ignore"):
        length = given.astype(np.int64)  # NaN: far below 0
    if np.any((length < 0) | (length > steps)):
        raise NNVMError(
            f"{OP}: valid_length must lie in [0, {steps}] (the length of 'lags'); "
            f"got {given.tolist()}"
        )
    mk = np.asarray(to_host(ctx, marks) if is_gpu(ctx) else marks).astype(np.int64)
    valid = np.arange(steps)[None, :] < length[:, None]
    n, j = np.argwhere(valid & ((mk < 0) | (mk >= k_procs)))[0]
    raise NNVMError(
        f"{OP}: marks[{n}, {j}] = {mk[n, j]} is not a process id in [0, {k_procs}) "
        f"(K = {k_procs}, the last dimension of 'lda')"
    )


def _forward(attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any],
             outputs: list[Any]) -> None:  # fmt: skip
    modes = [req_code(OP, r) for r in req]
    n_samples, k_procs, steps = _sizes(inputs)
    if all(m == NULL for m in modes) or n_samples == 0:
        return
    mem, last, count = (device_empty(ctx, n_samples * k_procs, np.float64) for _ in range(3))
    with half_as_float32(ctx, outputs, modes, inputs) as (outs, ins):
        _check(ctx, ins)
        run_rows(ctx, OP, _forward_sample, n_samples, *outs, *ins, mem, last, count, k_procs,
                 steps, *modes)  # fmt: skip


def _backward(attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any],
              outputs: list[Any]) -> None:  # fmt: skip
    """inputs: d output, d out_state, the op's 8 inputs; outputs: the 8 input gradients."""
    name = "_backward_contrib_hawkesll"
    modes = [req_code(name, r) for r in req]
    fwd = inputs[2:]
    n_samples, k_procs, steps = _sizes(fwd)
    if all(m == NULL for m in modes):
        return
    nk, nt = n_samples * k_procs, n_samples * steps
    d_lda, d_alpha, d_beta, d_state = (device_empty(ctx, nk, np.float64) for _ in range(4))
    d_lags, times, lam, excite = (device_empty(ctx, nt, np.float64) for _ in range(4))
    d_tmax = device_empty(ctx, n_samples, np.float64)
    mem, mem_b, last, count = (device_empty(ctx, nk, np.float64) for _ in range(4))
    with half_as_float32(ctx, [], [], inputs) as (_, ins):
        if n_samples:
            _check(ctx, ins[2:])
        run_rows(ctx, name, _backward_sample, n_samples, *ins, d_lda, d_alpha, d_beta,
                 d_state, d_lags, d_tmax, times, lam, excite, mem, mem_b, last, count, k_procs,
                 steps)  # fmt: skip
    sums = [device_empty(ctx, k_procs, np.float64) for _ in range(2)]
    for total, per_sample in zip(sums, (d_alpha, d_beta)):
        run_rows(ctx, name, _sum_samples, k_procs, total, per_sample, n_samples, k_procs)
    grads = [d_lda, sums[0], sums[1], d_state, d_lags, None, None, d_tmax]
    for out, mode, value in zip(outputs, modes, grads):
        size = int(out.size)
        if size == 0 or mode == NULL:
            continue
        if value is None:  # marks and valid_length: discrete
            run_rows(ctx, name, _emit_zero, size, out, mode)
        else:
            run_rows(ctx, name, _emit, size, out, value, mode)


# --- registration ----------------------------------------------------------------------------


def _hawkes_gradient(node: Any, ograds: list[Any]) -> list[Any]:
    return make_grad_node("_backward_contrib_hawkesll", node, [*ograds[:2], *node.inputs])


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
(
    register_op("_backward_contrib_hawkesll")
    .describe("Backward of hawkesll: inputs (d output, d out_state, the 8 inputs).")
    .set_num_inputs(2 + len(INPUTS))
    .set_num_outputs(len(INPUTS))
    .set_attr(TIsBackward, True)
    .set_attr(FCompute_cpu, _backward)
    .set_attr(FCompute_gpu, _backward)
)
