"""`nnvmpy demo`: MXNet's quadratic-op tutorial end to end, as a readable report.

The steps are the tutorial's: call the op imperatively, compose it symbolically (with
the auto-created `quadratic0_data` input), show mutual shape inference, bind, run forward
and backward, and run the three checks (numeric gradient, symbolic forward and
backward). `examples/quadratic_op.py` registers its own copy of the op and runs the same
steps on it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

Report = Callable[[str], None]


def _quadratic(x: np.ndarray, a: float, b: float, c: float) -> np.ndarray:
    return a * x * x + b * x + c


def tutorial_steps(op_name: str = "quadratic", report: Report = print) -> dict[str, Any]:
    """Run every step of the tutorial on `op_name`; returns what each step produced."""
    import nnvmpy as nv
    from nnvmpy import test_utils

    results: dict[str, Any] = {}
    nd_op = getattr(nv.nd, op_name)
    sym_op = getattr(nv.sym, op_name)

    report(f"== 1. imperative: nv.nd.{op_name}(x, a=1, b=2, c=3)")
    x = np.array([[1, 2], [3, 4]], dtype=np.float32)
    y = nd_op(nv.nd.array(x), a=1, b=2, c=3).asnumpy()
    report(f"x = {x.tolist()}\ny = {y.tolist()}   (expected [[6, 11], [18, 27]])")
    np.testing.assert_allclose(y, _quadratic(x, 1, 2, 3))
    results["nd"] = y

    report(f"\n== 2. symbolic: nv.sym.{op_name}() adds its missing input")
    with nv.name.NameManager():  # names counted afresh: quadratic0, whatever ran before
        quad = sym_op(a=1, b=2, c=3)
    report(f"arguments: {quad.list_arguments()}   outputs: {quad.list_outputs()}")
    results["arguments"] = quad.list_arguments()

    report("\n== 3. mutual shape inference: a=(2,0), c=(0,3), d = a*b + b*c")
    a, b, c = (nv.sym.Variable(n) for n in "abc")
    d = a * b + b * c
    arg_shapes, out_shapes, aux_shapes = d.infer_shape(a=(2, 0), c=(0, 3))
    report(
        f"arg shapes {dict(zip(d.list_arguments(), arg_shapes))}, output {out_shapes}, "
        f"aux {aux_shapes}"
    )
    results["mutual"] = (arg_shapes, out_shapes, aux_shapes)

    report("\n== 4. simple_bind, forward, backward")
    data = nv.sym.Variable("data")
    fn = sym_op(data, a=2, b=3, c=1)
    exe = fn.simple_bind(nv.cpu(), data=(3, 4))
    xv = np.random.default_rng(0).uniform(-1, 1, (3, 4)).astype(np.float32)
    out = exe.forward(is_train=True, data=xv)[0].asnumpy()
    dy = np.ones_like(xv)
    exe.backward([nv.nd.array(dy)])
    grad = exe.grad_dict["data"].asnumpy()
    report(f"forward max |error| vs NumPy: {np.abs(out - _quadratic(xv, 2, 3, 1)).max():.2e}")
    report(f"backward max |error| vs 2ax+b: {np.abs(grad - (4 * xv + 3)).max():.2e}")
    results["forward"], results["backward"] = out, grad
    plan = exe.debug_str().splitlines()[-1]
    report(f"memory plan of this executor: {plan}")
    chain = data
    for _ in range(4):
        chain = sym_op(chain, a=0.5, b=1.0, c=0.0)
    chain_exe = chain.simple_bind(nv.cpu(), data=(256, 256))
    report(
        f"memory plan of 4 chained {op_name} ops, training: "
        f"{chain_exe.storage_bytes} bytes planned vs "
        f"{chain_exe.storage_naive_bytes} with one buffer per entry"
    )
    results["plan"] = plan

    report("\n== 5. the tutorial's three checks")
    loc = [np.random.default_rng(1).uniform(-1, 1, (4, 5))]
    started = time.perf_counter()
    test_utils.check_numeric_gradient(fn, loc, dtype=np.float64)
    test_utils.check_symbolic_forward(fn, loc, [_quadratic(loc[0], 2, 3, 1)])
    test_utils.check_symbolic_backward(fn, loc, [np.ones((4, 5))], [4 * loc[0] + 3])
    report(
        f"check_numeric_gradient, check_symbolic_forward, check_symbolic_backward: "
        f"passed ({time.perf_counter() - started:.2f} s)"
    )
    results["checks"] = "passed"
    return results


def autograd_step(op_name: str = "quadratic", report: Report = print) -> np.ndarray:
    """The same op differentiated imperatively: record, backward, read x.grad."""
    import nnvmpy as nv
    from nnvmpy import autograd

    report("\n== 5b. imperative gradient: autograd.record(), y.backward(), x.grad")
    x = nv.nd.array(np.random.default_rng(2).uniform(-1, 1, (2, 3)))
    x.attach_grad()
    with autograd.record():
        y = getattr(nv.nd, op_name)(x, a=2, b=3, c=1)
    y.backward()
    assert x.grad is not None
    grad = x.grad.asnumpy()
    report(f"max |x.grad - (2ax+b)|: {np.abs(grad - (4 * x.asnumpy() + 3)).max():.2e}")
    return grad


def run_demo(quick: bool = False) -> int:
    """The README's main job: the tutorial report (and a short training run when available)."""
    started = time.perf_counter()
    print("nnvmpy demo: MXNet's quadratic-op tutorial on nnvmpy\n")
    tutorial_steps()
    autograd_step()
    training = _training_demo(quick)
    if training is not None:
        print(training)
    print(f"\ndemo finished in {time.perf_counter() - started:.1f} s")
    return 0


def _training_demo(quick: bool) -> str | None:
    """A short MLP training run in both styles: a bound executor, then autograd."""
    import importlib

    try:
        training = importlib.import_module("nnvmpy.training")
        imperative = importlib.import_module("nnvmpy.training_imperative")
    except ImportError:
        return None
    symbolic = str(training.demo(quick=quick))
    hist = imperative.train_mlp_imperative(
        n_train=2000 if quick else 6000, epochs=2 if quick else 3, progress=True
    )
    return (
        f"{symbolic}\n\n== 7. the same MLP trained imperatively (autograd.record, backward, "
        f"sgd_mom_update)\nloss {hist.losses[0]:.3f} -> {hist.losses[-1]:.3f} over "
        f"{hist.steps} steps ({1000 * hist.seconds / max(hist.steps, 1):.1f} ms/step); "
        f"accuracy: train {hist.train_accuracy:.1%}, held-out {hist.test_accuracy:.1%}"
    )
