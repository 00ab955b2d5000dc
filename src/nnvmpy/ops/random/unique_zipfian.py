"""_sample_unique_zipfian: per row, `num_sampled` distinct classes from an approximately
log-uniform (Zipfian) distribution over [0, range_max), and how many draws that took.

    classes, trials = nd._internal._sample_unique_zipfian(range_max, shape=(batch, num_sampled))

A draw is floor(exp(u log(range_max + 1))) - 1 for u uniform on [0, 1), so

    P(class) = (log(class + 2) - log(class + 1)) / log(range_max + 1);

a row draws until it holds num_sampled different classes (kept in the order first drawn)
and `trials` counts every draw, repeats included: the candidate sampler of sampled softmax,
whose expected counts need the number of trials. Row r walks the Philox blocks 0, 1, 2, ...
of stream counter first + r (two draws a block), so it depends only on the seed and the
ops run before, not on the thread. As in MXNet the op runs on the CPU only, and both
outputs are int64.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...attrs import FCompute_cpu, FInferShape, FInferType, FResourceRequest
from ...base import InferError, ParamError
from ...infer import shape_assign, shape_str, type_assign
from ...kernel import parallel_for
from ...kernel.launch import NULL, req_code, store, uindex
from ...kernel.philox import uniform_pair
from ...param import Parameter, Shape, field
from ...registry import NodeAttrs, register_op
from ._common import launch, random_resource

_OP = "_sample_unique_zipfian"
_U0 = np.uint64(0)
_U1 = np.uint64(1)
_MAX_BLOCKS = np.uint64(1 << 32)  # the block index is one 32-bit counter word
_EMPTY = np.int64(-1)


class SampleUniqueZipfianParam(Parameter):
    range_max = field(int, describe="The number of possible classes.")
    shape = field(
        Shape,
        default=(),
        describe="2-D shape of the output, where shape[0] is the batch size, and shape[1] "
        "is the number of candidates to sample for each batch.",
    )


@parallel_for
def _rows_loop(r, out, mode, trials, trials_mode, table, size, per_row, range_max, log_range,
               k0, k1, first):  # fmt: skip
    """Row r: draw until `per_row` distinct classes, remembered in an open-addressing set
    (table[r * size:(r + 1) * size], all -1 on entry, size a power of two > per_row)."""
    base = r * size
    mask = size - 1
    counter = first + uindex(r)
    found = 0
    tries = 0
    j = _U0
    while found < per_row and j < _MAX_BLOCKS:
        u, v = uniform_pair(k0, k1, counter, j, _U0)
        j += _U1
        for h in range(2):
            if found == per_row:
                break
            x = u if h == 0 else v
            c = np.int64(math.exp(x * log_range)) - 1
            if c >= range_max:  # exp rounded up to range_max + 1
                c = range_max - 1
            tries += 1
            slot = c & mask
            while table[base + slot] != _EMPTY and table[base + slot] != c:
                slot = (slot + 1) & mask
            if table[base + slot] == _EMPTY:
                table[base + slot] = c
                store(out, r * per_row + found, c, mode)
                found += 1
    store(trials, r, tries, trials_mode)


def _batch_and_count(attrs: NodeAttrs) -> tuple[int, int]:
    shape = tuple(attrs.parsed.shape)
    if len(shape) != 2 or any(d < 0 for d in shape):
        raise InferError(
            f"{_OP}: parameter 'shape' must be 2-D (batch_size, num_sampled) with sizes >= 0, "
            f"got {shape_str(shape)}"
        )
    return shape[0], shape[1]


def _shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    batch, count = _batch_and_count(attrs)
    shape_assign(out_shapes, 0, (batch, count), f"{_OP}: output 0 (classes)")
    shape_assign(out_shapes, 1, (batch,), f"{_OP}: output 1 (trials)")
    return True


def _type(attrs: NodeAttrs, in_types: list[Any], out_types: list[Any]) -> bool:
    type_assign(out_types, 0, np.dtype(np.int64), f"{_OP}: output 0 (classes)")
    type_assign(out_types, 1, np.dtype(np.int64), f"{_OP}: output 1 (trials)")
    return True


def _forward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    out, trials = outputs
    mode, trials_mode = req_code(_OP, req[0]), req_code(_OP, req[1])
    batch, count = _batch_and_count(attrs)
    range_max = int(attrs.parsed.range_max)
    if count > range_max:  # checked when it runs, as MXNet's Forward does
        raise ParamError(
            f"{_OP}: parameter 'shape' asks for {count} distinct classes per row, more than "
            f"range_max ({range_max}) possible classes; expected shape[1] <= range_max"
        )
    if (mode == NULL and trials_mode == NULL) or batch == 0:
        return
    size = 1 << max(count, 1).bit_length()  # a power of two above count: probes stay short
    table = np.full(batch * size, _EMPTY, dtype=np.int64)
    k0, k1, first = ctx.requested[0].take_counters(batch)
    log_range = math.log(range_max + 1.0)
    launch(ctx, _rows_loop, out, mode, trials, trials_mode, table, size, count, range_max,
           log_range, k0, k1, first, n=batch)  # fmt: skip


(
    register_op(_OP)
    .describe(
        "Draw random samples from an approximately log-uniform or Zipfian distribution "
        "without replacement.\n\n"
        "Takes a 2-D shape (batch_size, num_sampled) and draws, for each row, num_sampled "
        "distinct integers from [0, range_max), from the base distribution\n\n"
        "    P(class) = (log(class + 2) - log(class + 1)) / log(range_max + 1)\n\n"
        "Returns the samples and, per row, the number of draws (trials) it took to get "
        "num_sampled distinct ones. Both outputs are int64."
    )
    .set_attr_parser(SampleUniqueZipfianParam)
    .set_num_inputs(0)
    .set_num_outputs(2)
    .set_attr(FInferShape, _shape)
    .set_attr(FInferType, _type)
    .set_attr(FResourceRequest, random_resource)
    .set_attr(FCompute_cpu, _forward)
    .add_arguments(SampleUniqueZipfianParam.fields())
)
