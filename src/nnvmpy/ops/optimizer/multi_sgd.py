"""SGD over many weights in one op: multi_(mp_)sgd(_mom)_update and preloaded_multi_*.

Inputs come in groups, one per weight: (weight_i, grad_i[, mom_i][, weight32_i]); output i
is the new weight_i (pass out=[weights] to update in place). Each weight has its own
learning rate and weight decay: the `lrs` / `wds` parameters, or, for the preloaded_*
ops, two trailing float32 arrays of shape (num_weights,) that stay on the device (a
learning-rate schedule, or LARS, can compute them there). The element math is sgd_step,
the same as sgd_update's and sgd_mom_update's. On a GPU the weights share launches
(kernel/multi_tensor.py: up to 16 weights a kernel), as MXNet's ops launch one kernel for
their weights; the CPU updates them one after another.
"""

from __future__ import annotations

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
)
from ...infer import elemwise_shape, elemwise_type, shape_assign, shape_is_known, type_assign
from ...kernel import parallel_for
from ...kernel.launch import uindex
from ...param import FloatTuple, field
from ...registry import NodeAttrs, register_op
from ._common import (
    WD_DESCRIPTION,
    ClipParam,
    check_per_weight,
    infer_groups,
    launch_groups,
    mp_type,
    req_code,
    size_of,
)
from .sgd import MOMENTUM_DESCRIPTION, sgd_group, sgd_loop, sgd_step

_F32 = np.dtype(np.float32)


class MultiSGDParam(ClipParam):
    # MXNet's argument order
    field_order = ("lrs", "wds", "rescale_grad", "clip_gradient", "num_weights")
    lrs = field(FloatTuple, describe="Learning rates.")
    wds = field(FloatTuple, describe=WD_DESCRIPTION)
    num_weights = field(int, default=1, lower_bound=1, describe="Number of updated weights.")


class MultiSGDMomParam(MultiSGDParam):
    # MXNet's argument order
    field_order = ("lrs", "wds", "momentum", "rescale_grad", "clip_gradient", "num_weights")
    momentum = field(float, default=0.0, describe=MOMENTUM_DESCRIPTION)


class PreloadedMultiSGDParam(ClipParam):
    num_weights = field(int, default=1, lower_bound=1, describe="Number of updated weights.")


class PreloadedMultiSGDMomParam(PreloadedMultiSGDParam):
    # MXNet's argument order
    field_order = ("momentum", "rescale_grad", "clip_gradient", "num_weights")
    momentum = field(float, default=0.0, describe=MOMENTUM_DESCRIPTION)


@parallel_for
def preloaded_loop(
    t, out, mom, master, grad, mode, has_mom, has_master, lrs, wds, k, momentum, rescale, bound
):
    i = uindex(t)  # unsigned: no wraparound checks, so the loop vectorises
    sgd_step(i, out, mom, master, grad, mode, has_mom, has_master, lrs[k], momentum, wds[k],
             rescale, bound)  # fmt: skip


class _Variant:
    """One of the eight ops: with momentum state or not, master copies or not, preloaded."""

    def __init__(self, mom: bool, mp: bool, preloaded: bool) -> None:
        self.mom, self.mp, self.preloaded = mom, mp, preloaded
        self.stride = 2 + mom + mp
        self.slots = ["weight", "grad"] + ["mom"] * mom + ["weight32"] * mp
        self.name = (
            ("preloaded_" if preloaded else "")
            + "multi_"
            + ("mp_" if mp else "")
            + ("sgd_mom_update" if mom else "sgd_update")
        )

    def n_in(self, attrs: NodeAttrs) -> int:
        return self.stride * attrs.parsed.num_weights + 2 * self.preloaded

    def input_names(self, attrs: NodeAttrs) -> list[str]:
        n = attrs.parsed.num_weights if attrs.parsed is not None else 1
        names = [f"{slot}_{i}" for i in range(n) for slot in self.slots]
        return names + ["lrs", "wds"] * self.preloaded

    def mutated(self, attrs: NodeAttrs) -> list[int]:
        first = 2  # mom and/or weight32 follow weight and grad in each group
        return [
            self.stride * i + j
            for i in range(attrs.parsed.num_weights)
            for j in range(first, self.stride)
        ]

    def inplace(self, attrs: NodeAttrs) -> list[tuple[int, int]]:
        return [(self.stride * i, i) for i in range(attrs.parsed.num_weights)]

    def infer_shape(self, attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
        p = attrs.parsed
        n = p.num_weights
        if not self.preloaded:
            check_per_weight(self.name, p, ("lrs", "wds"), n)
        rule = elemwise_shape(self.stride, 1)
        done = infer_groups(rule, attrs, self.stride, n, in_shapes, out_shapes)
        if self.preloaded:
            for k, what in ((-2, "lrs"), (-1, "wds")):
                shape_assign(in_shapes, len(in_shapes) + k, (n,), f"{self.name}: input '{what}'")
        return done and all(shape_is_known(s) for s in in_shapes)

    def infer_type(self, attrs: NodeAttrs, in_types: list[Any], out_types: list[Any]) -> bool:
        n = attrs.parsed.num_weights
        rule = mp_type(2) if self.mp else elemwise_type(self.stride, 1)
        done = infer_groups(rule, attrs, self.stride, n, in_types, out_types)
        if self.preloaded:
            for k, what in ((-2, "lrs"), (-1, "wds")):
                type_assign(in_types, len(in_types) + k, _F32, f"{self.name}: input '{what}'")
        return done

    def compute(
        self, attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
    ) -> None:
        p = attrs.parsed
        momentum = p.momentum if self.mom else 0.0
        groups = []
        for i in range(p.num_weights):
            group = inputs[self.stride * i : self.stride * (i + 1)]
            weight, grad = group[0], group[1]
            mom = group[2] if self.mom else None
            master = group[-1] if self.mp else None
            if not self.preloaded:
                groups.append(sgd_group(req[i], outputs[i], weight, grad, mom, master,
                                        p.lrs[i], momentum, p.wds[i], p.rescale_grad,
                                        p.clip_gradient))  # fmt: skip
                continue
            src = master if self.mp else weight
            args = (outputs[i], mom if self.mom else src, src, grad, req_code(self.name, req[i]),
                    self.mom, self.mp, inputs[-2], inputs[-1], i, momentum, p.rescale_grad,
                    p.clip_gradient)  # fmt: skip
            groups.append((size_of(weight), args, [0] + [1] * self.mom + [2] * self.mp))
        launch_groups(ctx, preloaded_loop if self.preloaded else sgd_loop, groups)

    def register(self) -> None:
        param = {
            (False, False): MultiSGDParam,
            (True, False): MultiSGDMomParam,
            (False, True): PreloadedMultiSGDParam,
            (True, True): PreloadedMultiSGDMomParam,
        }[(self.mom, self.preloaded)]
        op = (
            register_op(self.name)
            .describe(self.doc())
            .set_attr_parser(param)
            .set_num_inputs(self.n_in)
            .set_num_outputs(lambda attrs: attrs.parsed.num_weights)
            .set_attr(FListInputNames, self.input_names)
            .set_attr(FInferShape, self.infer_shape)
            .set_attr(FInferType, self.infer_type)
            .set_attr(FInplaceOption, self.inplace)
            .set_attr(FCompute_cpu, self.compute)
            .set_attr(FCompute_gpu, self.compute)
            .add_argument("data", "NDArray-or-Symbol[]", "Weights, gradients" + self.doc_tail())
        )
        if self.mom or self.mp:
            op.set_attr(FMutateInputs, self.mutated)
        op.add_arguments(param.fields())

    def doc_tail(self) -> str:
        extra = ", momentum states" * self.mom + ", float32 master weights" * self.mp
        return extra + (", then lrs and wds" if self.preloaded else "")

    def doc(self) -> str:
        rule = (
            "mom_i = momentum * mom_i - lr_i * (g_i + wd_i * weight_i); weight_i += mom_i"
            if self.mom
            else "weight_i = weight_i - lr_i * (g_i + wd_i * weight_i)"
        )
        lrs = "the float32 arrays lrs, wds (last inputs)" if self.preloaded else "lrs, wds"
        mp = (
            " The update runs on the float32 master copies weight32_i (updated in place); "
            "output i is weight32_i in weight_i's dtype."
            if self.mp
            else ""
        )
        return (
            f"Update function for multiple {'mixed precision ' * self.mp}SGD"
            f"{' with momentum' * self.mom} in one op. For each weight i, with "
            f"g_i = clip(rescale_grad * grad_i, clip_gradient) and lr_i, wd_i from {lrs}:\n\n"
            f"    {rule}\n\nInputs are groups ({', '.join(self.slots)}) per weight.{mp}"
        )


for _mom in (False, True):
    for _mp in (False, True):
        for _pre in (False, True):
            _Variant(_mom, _mp, _pre).register()
