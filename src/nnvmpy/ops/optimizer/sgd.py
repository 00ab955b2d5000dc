"""SGD-family update ops: sgd, sgd_mom, nag_mom, signsgd, signum and the mp_* versions.

With g = clip(rescale_grad * grad, clip_gradient) (no clipping when clip_gradient < 0):

    sgd_update:      weight = weight - lr * (g + wd * weight)
    sgd_mom_update:  mom = momentum * mom - lr * (g + wd * weight);  weight = weight + mom
    nag_mom_update:  mom = momentum * mom - lr * (g + wd * weight)
                     weight = weight + momentum * mom - lr * (g + wd * weight)
    signsgd_update:  weight = (1 - lr * wd) * weight - lr * sign(grad)
    signum_update:   mom = momentum * mom - (1 - momentum) * (g + wd * weight)
                     weight = (1 - lr * wd_lh) * weight + lr * sign(mom)

nag_mom_update is MXNet's documented rule (state = momentum * state + G;
weight -= lr * (G + momentum * state), G = g + wd * weight) with the state kept as
-lr * state, as sgd_mom_update keeps it. The mp_* ops take float16 weight and grad plus a
float32 master copy `weight32` (and float32 states): the update runs on weight32, which is
written back, and the output is weight32 rounded to the weight's dtype.
"""

from __future__ import annotations

from typing import Any

from ...kernel import device_function, like, parallel_for
from ...kernel.launch import uindex
from ...param import field
from ...registry import NodeAttrs
from ._common import (
    LAZY_DESCRIPTION,
    WD_DESCRIPTION,
    ClipParam,
    Group,
    assign,
    clip,
    launch,
    mp_type,
    register_update,
    req_code,
    sign,
    size_of,
)


@device_function
def sgd_step(
    i, out, mom, master, grad, mode, has_mom, has_master, lr, momentum, wd, rescale, bound
):
    """One element of (mp_)(multi_)sgd(_mom)_update; `master` holds the weight read."""
    w = master[i]
    step = clip(rescale * grad[i], bound) + wd * w
    if has_mom:
        m = momentum * mom[i] - lr * step
        mom[i] = m
        new = w + m
    else:
        new = w - lr * step
    if has_master:
        master[i] = new
    assign(out, i, mode, new)


@parallel_for
def sgd_loop(
    t, out, mom, master, grad, mode, has_mom, has_master, lr, momentum, wd, rescale, bound
):
    i = uindex(t)  # unsigned: no wraparound checks, so the loop vectorises
    sgd_step(i, out, mom, master, grad, mode, has_mom, has_master, lr, momentum, wd, rescale, bound)


def sgd_group(
    req: Any, out: Any, weight: Any, grad: Any, mom: Any, master: Any,
    lr: float, momentum: float, wd: float, rescale: float, bound: float,
) -> Group:  # fmt: skip
    """sgd_loop's (items, arguments, written positions); mom and master may be None
    (plain SGD, no master copy)."""
    has_mom, has_master = mom is not None, master is not None
    src = master if has_master else weight
    args = (out, mom if has_mom else src, src, grad, req_code("sgd_update", req), has_mom,
            has_master, lr, momentum, wd, rescale, bound)  # fmt: skip
    written = [0] + [1] * has_mom + [2] * has_master  # never the weight: out may alias it
    return size_of(out), args, written


def run_sgd(ctx: Any, *args: Any) -> None:
    """Launch sgd_loop on sgd_group(*args)."""
    launch(ctx, sgd_loop, *sgd_group(*args))


MOMENTUM_DESCRIPTION = "The decay rate of momentum estimates at each epoch."


class SGDParam(ClipParam):
    # MXNet's argument order
    field_order = ("lr", "wd", "rescale_grad", "clip_gradient", "lazy_update")
    lr = field(float, describe="Learning rate")
    wd = field(float, default=0.0, describe=WD_DESCRIPTION)
    lazy_update = field(bool, default=True, describe=LAZY_DESCRIPTION)


class SGDMomParam(SGDParam):
    # MXNet's argument order
    field_order = ("lr", "momentum", "wd", "rescale_grad", "clip_gradient", "lazy_update")
    momentum = field(float, default=0.0, describe=MOMENTUM_DESCRIPTION)


class NAGMomParam(ClipParam):
    # MXNet's argument order
    field_order = ("lr", "momentum", "wd", "rescale_grad", "clip_gradient")
    lr = field(float, describe="Learning rate")
    momentum = field(float, default=0.0, describe=MOMENTUM_DESCRIPTION)
    wd = field(float, default=0.0, describe=WD_DESCRIPTION)


class SignSGDParam(ClipParam):
    field_order = (
        "lr",
        "wd",
        "rescale_grad",
        "clip_gradient",
    )  # MXNet's argument order
    lr = field(float, describe="Learning rate")
    wd = field(float, default=0.0, describe=WD_DESCRIPTION)


class SignumParam(NAGMomParam):
    # MXNet's argument order
    field_order = ("lr", "momentum", "wd", "rescale_grad", "clip_gradient", "wd_lh")
    wd_lh = field(
        float,
        default=0.0,
        describe="The amount of weight decay that does not go into gradient/momentum "
        "calculations otherwise do weight decay algorithmically only.",
    )


# -- sgd -----------------------------------------------------------------------------------------


def _sgd_compute(has_mom: bool, has_master: bool) -> Any:
    """FCompute of sgd_update (False, False) ... mp_sgd_mom_update (True, True)."""

    def compute(
        attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
    ) -> None:
        p = attrs.parsed
        weight, grad = inputs[0], inputs[1]
        mom = inputs[2] if has_mom else None
        master = inputs[-1] if has_master else None
        momentum = p.momentum if has_mom else 0.0
        run_sgd(ctx, req[0], outputs[0], weight, grad, mom, master, p.lr, momentum, p.wd,
                p.rescale_grad, p.clip_gradient)  # fmt: skip

    return compute


_SGD_DOC = """Update function for Stochastic Gradient Descent (SGD) optimizer.

    weight = weight - lr * (clip(rescale_grad * grad, clip_gradient) + wd * weight)

Returns the new weight; call with out=weight to update in place."""
_SGD_MOM_DOC = """Momentum update function for Stochastic Gradient Descent (SGD) optimizer.

    mom = momentum * mom - lr * (clip(rescale_grad * grad, clip_gradient) + wd * weight)
    weight = weight + mom

`mom` is updated in place; returns the new weight (call with out=weight)."""
_MP = "\n\nMixed precision: the update runs on the float32 master copy `weight32`, which is " \
      "updated in place; the output is weight32 cast to weight's dtype."  # fmt: skip

register_update("sgd_update", SGDParam, ["weight", "grad"], _sgd_compute(False, False), _SGD_DOC)
register_update(
    "sgd_mom_update", SGDMomParam, ["weight", "grad", "mom"], _sgd_compute(True, False),
    _SGD_MOM_DOC, mutate=[2],
)  # fmt: skip
register_update(
    "mp_sgd_update", SGDParam, ["weight", "grad", "weight32"], _sgd_compute(False, True),
    "Updater function for multi-precision sgd optimizer.\n\n" + _SGD_DOC + _MP,
    mutate=[2], infer_type=mp_type(2),
)  # fmt: skip
register_update(
    "mp_sgd_mom_update", SGDMomParam, ["weight", "grad", "mom", "weight32"],
    _sgd_compute(True, True),
    "Updater function for multi-precision sgd optimizer.\n\n" + _SGD_MOM_DOC + _MP,
    mutate=[2, 3], infer_type=mp_type(2),
)  # fmt: skip


# -- nag ------------------------------------------------------------------------------------------


@parallel_for
def nag_loop(t, out, mom, master, grad, mode, has_master, lr, momentum, wd, rescale, bound):
    i = uindex(t)  # unsigned: no wraparound checks, so the loop vectorises
    w = master[i]
    step = clip(rescale * grad[i], bound) + wd * w
    m = momentum * mom[i] - lr * step
    mom[i] = m
    new = w + momentum * m - lr * step
    if has_master:
        master[i] = new
    assign(out, i, mode, new)


def _nag_compute(has_master: bool) -> Any:
    def compute(
        attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
    ) -> None:
        p = attrs.parsed
        weight, grad, mom = inputs[:3]
        src = inputs[3] if has_master else weight
        args = (outputs[0], mom, src, grad, req_code("nag_mom_update", req[0]), has_master, p.lr,
                p.momentum, p.wd, p.rescale_grad, p.clip_gradient)  # fmt: skip
        launch(ctx, nag_loop, size_of(weight), args, (0, 1, 2) if has_master else (0, 1))

    return compute


_NAG_DOC = """Update function for Nesterov Accelerated Gradient (NAG) optimizer.

    state = momentum * state + grad + wd * weight
    weight = weight - lr * (grad + momentum * state)

with grad = clip(rescale_grad * grad, clip_gradient). `mom` holds -lr * state and is
updated in place; returns the new weight (call with out=weight)."""

register_update(
    "nag_mom_update", NAGMomParam, ["weight", "grad", "mom"], _nag_compute(False), _NAG_DOC,
    mutate=[2],
)  # fmt: skip
register_update(
    "mp_nag_mom_update", NAGMomParam, ["weight", "grad", "mom", "weight32"], _nag_compute(True),
    "Update function for multi-precision Nesterov Accelerated Gradient (NAG) optimizer.\n\n"
    + _NAG_DOC + _MP,
    mutate=[2, 3], infer_type=mp_type(2),
)  # fmt: skip


# -- signsgd / signum -------------------------------------------------------------------------


@parallel_for
def signum_loop(t, out, mom, weight, grad, mode, has_mom, lr, momentum, wd, rescale, bound, wd_lh):
    i = uindex(t)  # unsigned: no wraparound checks, so the loop vectorises
    w = weight[i]
    one = like(w, 1.0)  # a Python 1.0 made the float32 update float64
    if has_mom:
        m = momentum * mom[i] - (one - momentum) * (wd * w + clip(rescale * grad[i], bound))
        mom[i] = m
        assign(out, i, mode, (one - lr * wd_lh) * w + lr * sign(m))
    else:  # signsgd: clip_gradient cannot change a sign
        assign(out, i, mode, (one - lr * wd) * w - lr * sign(grad[i]))


def _signsgd(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    p = attrs.parsed
    weight, grad = inputs
    args = (outputs[0], weight, weight, grad, req_code("signsgd_update", req[0]), False, p.lr,
            0.0, p.wd, p.rescale_grad, p.clip_gradient, 0.0)  # fmt: skip
    launch(ctx, signum_loop, size_of(weight), args, written=(0,))


def _signum(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    p = attrs.parsed
    weight, grad, mom = inputs
    args = (outputs[0], mom, weight, grad, req_code("signum_update", req[0]), True, p.lr,
            p.momentum, p.wd, p.rescale_grad, p.clip_gradient, p.wd_lh)  # fmt: skip
    launch(ctx, signum_loop, size_of(weight), args, written=(0, 1))


register_update(
    "signsgd_update", SignSGDParam, ["weight", "grad"], _signsgd,
    """Update function for SignSGD optimizer.

    weight = (1 - lr * wd) * weight - lr * sign(grad)

clip_gradient has no effect on a sign. Returns the new weight (call with out=weight).""",
)  # fmt: skip
register_update(
    "signum_update", SignumParam, ["weight", "grad", "mom"], _signum,
    """SIGN momentUM (Signum) optimizer.

    mom = momentum * mom - (1 - momentum) * (clip(rescale_grad * grad) + wd * weight)
    weight = (1 - lr * wd_lh) * weight + lr * sign(mom)

`mom` is updated in place; returns the new weight (call with out=weight).""",
    mutate=[2],
)  # fmt: skip
