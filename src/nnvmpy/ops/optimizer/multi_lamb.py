"""LAMB over many weights in one op: _multi_lamb_update and _multi_mp_lamb_update.

What MXNet's LAMB optimizer runs with `aggregate_num` > 1. Inputs come in groups, one per
tensor: (weight_i, grad_i, mean_i, var_i[, weight32_i]); output i is the new weight_i
(pass out=[weights] to update in place); mean_i, var_i (and weight32_i) are updated in place.
Tensor i takes its own learning rate, weight decay and step count (`learning_rates`, `wds`,
`step_count`). The math is lamb.py's two phases, run back to back per tensor:

    g_i = lamb_update_phase1(weight_i, grad_i, mean_i, var_i, t=step_count[i], wd=wds[i])
    r1 = ||weight_i||, r2 = ||g_i||  (gradient_stats.reduce_arrays, then a square root)
    weight_i = lamb_update_phase2(weight_i, g_i, r1, r2, lr=learning_rates[i])

The directions g_i (float32 for the mp version, else the weight's dtype) and the norms
(float32 as MXNet's, float64 for float64 weights) live in the op's temp space, so nothing
leaves the device.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from ...attrs import (
    FCompute_cpu,
    FCompute_gpu,
    FInferShape,
    FInferType,
    FInplaceOption,
    FListInputNames,
    FMutateInputs,
    FResourceRequest,
)
from ...infer import elemwise_shape, elemwise_type, shape_is_known
from ...kernel import parallel_for
from ...kernel.launch import uindex
from ...param import FloatTuple, Shape, field
from ...registry import NodeAttrs, register_op
from ...resource import ResourceRequest
from ._common import (
    WD_DESCRIPTION,
    ClipParam,
    check_per_weight,
    infer_groups,
    launch,
    launch_groups,
    mp_type,
    req_code,
    size_of,
)
from .gradient_stats import SUM_SQ, partial_count, reduce_arrays
from .lamb import phase1_loop, phase2_loop

_F32 = np.dtype(np.float32)
_ALIGN = 64  # bytes: each scratch piece starts on a boundary any dtype accepts


class MultiLambParam(ClipParam):
    field_order = (  # MXNet's argument order
        "learning_rates",
        "beta1",
        "beta2",
        "epsilon",
        "wds",
        "rescale_grad",
        "lower_bound",
        "upper_bound",
        "clip_gradient",
        "bias_correction",
        "step_count",
        "num_tensors",
    )
    learning_rates = field(FloatTuple, describe="List of learning rates")
    beta1 = field(
        float, default=0.9, describe="Exponential decay rate for the first moment estimates."
    )
    beta2 = field(
        float, default=0.999, describe="Exponential decay rate for the second moment estimates."
    )
    epsilon = field(float, default=1e-6, describe="Small value to avoid division by 0.")
    wds = field(FloatTuple, describe="List of Weight decays." + WD_DESCRIPTION)
    lower_bound = field(
        float,
        default=-1.0,
        describe="Lower limit of norm of weight. If lower_bound <= 0, Lower limit is not set",
    )
    upper_bound = field(
        float,
        default=-1.0,
        describe="Upper limit of norm of weight. If upper_bound <= 0, Upper limit is not set",
    )
    bias_correction = field(bool, default=True, describe="Whether to use bias correction.")
    step_count = field(Shape, describe="Step count for each tensor")
    num_tensors = field(int, default=1, lower_bound=1, describe="Number of tensors")


@parallel_for
def sqrt_loop(t, x):
    i = uindex(t)
    x[i] = math.sqrt(x[i])


class _ScratchResource:
    """Hands out the tail of the op's temp space (reduce_arrays asks for its chunk sums)."""

    def __init__(self, tail: Any) -> None:
        self.tail = tail

    def get_space(self, shape: tuple[int, ...], dtype: Any = np.float32) -> Any:
        dtype = np.dtype(dtype)
        n = math.prod(shape) * dtype.itemsize
        return self.tail[:n].view(dtype).reshape(shape)


def _aligned(nbytes: int) -> int:
    return -(-nbytes // _ALIGN) * _ALIGN


class _Variant:
    """_multi_lamb_update (mp=False) or _multi_mp_lamb_update (mp=True)."""

    def __init__(self, mp: bool) -> None:
        self.mp = mp
        self.name = "_multi_mp_lamb_update" if mp else "_multi_lamb_update"
        self.slots = ["weight", "grad", "mean", "var"] + ["weight32"] * mp
        self.stride = len(self.slots)

    def n_in(self, attrs: NodeAttrs) -> int:
        return self.stride * attrs.parsed.num_tensors

    def input_names(self, attrs: NodeAttrs) -> list[str]:
        n = attrs.parsed.num_tensors if attrs.parsed is not None else 1
        return [f"{slot}_{i}" for i in range(n) for slot in self.slots]

    def mutated(self, attrs: NodeAttrs) -> list[int]:
        return [
            self.stride * i + j
            for i in range(attrs.parsed.num_tensors)
            for j in range(2, self.stride)
        ]

    def inplace(self, attrs: NodeAttrs) -> list[tuple[int, int]]:
        return [(self.stride * i, i) for i in range(attrs.parsed.num_tensors)]

    def infer_shape(self, attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
        p = attrs.parsed
        n = p.num_tensors
        check_per_weight(
            self.name, p, ("learning_rates", "wds", "step_count"), n, "num_tensors", "tensor"
        )
        rule = elemwise_shape(self.stride, 1)
        done = infer_groups(rule, attrs, self.stride, n, in_shapes, out_shapes)
        return done and all(shape_is_known(s) for s in in_shapes)

    def infer_type(self, attrs: NodeAttrs, in_types: list[Any], out_types: list[Any]) -> bool:
        # mp: weight, grad and the output share the low precision; mean, var, weight32 float32
        rule = mp_type(2) if self.mp else elemwise_type(self.stride, 1)
        n = attrs.parsed.num_tensors
        return infer_groups(rule, attrs, self.stride, n, in_types, out_types)

    def compute(
        self, attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
    ) -> None:
        p = attrs.parsed
        n = p.num_tensors
        groups = [inputs[self.stride * i : self.stride * (i + 1)] for i in range(n)]
        masters = [g[4] if self.mp else g[0] for g in groups]
        g_type = _F32 if self.mp else np.dtype(inputs[0].dtype)
        sizes = [size_of(w) for w in masters]
        # temp space: the directions g_i, then 2n float32 norms, then reduce_arrays' chunk sums
        g_bytes = [_aligned(s * g_type.itemsize) for s in sizes]
        norm_at = sum(g_bytes)
        # float32 norms, as MXNet's multi_sum_sq, unless the update runs in float64
        n_type = np.dtype(np.float64) if g_type == np.float64 else _F32
        partial_at = norm_at + _aligned(2 * n * n_type.itemsize)
        partial = partial_count(ctx, sizes * 2)
        space = ctx.requested[0].get_space((partial_at + partial * 8,), np.uint8)
        directions, at = [], 0
        for w, s, nb in zip(masters, sizes, g_bytes, strict=True):
            directions.append(space[at : at + s * g_type.itemsize].view(g_type).reshape(w.shape))
            at += nb
        norms = space[norm_at : norm_at + 2 * n * n_type.itemsize].view(n_type)
        phase1 = []  # on a GPU, several tensors a launch in each phase
        for i, (_, grad, mean, var, *_) in enumerate(groups):
            t = p.step_count[i]
            c1 = 1.0 / (1.0 - p.beta1**t) if p.bias_correction else 1.0
            c2 = 1.0 / (1.0 - p.beta2**t) if p.bias_correction else 1.0
            args = (directions[i], mean, var, masters[i], grad, req_code(self.name, "write"),
                    p.beta1, p.beta2, 1.0 - p.beta1, 1.0 - p.beta2, c1, c2, p.epsilon, p.wds[i],
                    p.rescale_grad, p.clip_gradient)  # fmt: skip
            phase1.append((sizes[i], args, (0, 1, 2)))
        launch_groups(ctx, phase1_loop, phase1)
        sub = dataclasses.replace(ctx, requested=[_ScratchResource(space[partial_at:])])
        write = req_code(self.name, "write")
        reduce_arrays(sub, [*masters, *directions], SUM_SQ, norms, write, per_array=True,
                      init=True, name=self.name)  # fmt: skip
        launch(ctx, sqrt_loop, 2 * n, (norms,), written=(0,))
        phase2 = []
        for i in range(n):
            args = (outputs[i], masters[i], directions[i], norms[i : i + 1],
                    norms[n + i : n + i + 1], req_code(self.name, req[i]), self.mp,
                    p.learning_rates[i], p.lower_bound, p.upper_bound)  # fmt: skip
            phase2.append((sizes[i], args, (0, 1) if self.mp else (0,)))
        launch_groups(ctx, phase2_loop, phase2)

    def doc(self) -> str:
        mp = (
            " Mixed precision: weight_i and grad_i are float16 (or any float), mean_i, var_i "
            "and the master copy weight32_i float32; the step is applied to weight32_i (updated "
            "in place) and output i is weight32_i in weight_i's dtype."
            if self.mp
            else ""
        )
        return (
            "Update multiple weights with LAMB (https://arxiv.org/abs/1904.00962) in one op. "
            "For each tensor i, with t = step_count[i], lr = learning_rates[i], wd = wds[i]:\n\n"
            "    grad = clip(rescale_grad * grad_i, clip_gradient)\n"
            "    mean_i = beta1 * mean_i + (1 - beta1) * grad\n"
            "    var_i = beta2 * var_i + (1 - beta2) * grad^2\n"
            "    if bias_correction: m = mean_i / (1 - beta1^t), v = var_i / (1 - beta2^t)\n"
            "    g = m / (sqrt(v) + epsilon) + wd * weight_i\n"
            "    r1 = ||weight_i|| clamped to [lower_bound, upper_bound] (each when >= 0)\n"
            "    r2 = ||g||; ratio = r1 / r2, or 1 when either is 0\n"
            "    weight_i = weight_i - lr * ratio * g\n\n"
            f"Inputs are groups ({', '.join(self.slots)}) per tensor; mean_i and var_i are "
            f"updated in place.{mp}"
        )

    def register(self) -> None:
        (
            register_op(self.name)
            .describe(self.doc())
            .set_attr_parser(MultiLambParam)
            .set_num_inputs(self.n_in)
            .set_num_outputs(lambda attrs: attrs.parsed.num_tensors)
            .set_attr(FListInputNames, self.input_names)
            .set_attr(FInferShape, self.infer_shape)
            .set_attr(FInferType, self.infer_type)
            .set_attr(FInplaceOption, self.inplace)
            .set_attr(FMutateInputs, self.mutated)
            .set_attr(FResourceRequest, lambda attrs: [ResourceRequest.kTempSpace])
            .set_attr(FCompute_cpu, self.compute)
            .set_attr(FCompute_gpu, self.compute)
            .add_argument(
                "data",
                "NDArray-or-Symbol[]",
                "Weights, gradients, means, variances" + ", float32 master weights" * self.mp,
            )
            .add_arguments(MultiLambParam.fields())
        )


for _mp in (False, True):
    _Variant(_mp).register()
del _mp
