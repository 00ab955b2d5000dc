"""The quadratic y = a·x² + b·x + c through the front-ends: µs per call, and the ratios.

1. register_op with a Numba kernel (`nv.nd.quadratic`) — the native path;
2. a CustomOp keeping the data in NDArrays (nd ops inside forward);
3. a CustomOp copying out with `.asnumpy()`, computing in NumPy, copying back;
4. for comparison, SimpleOp and a legacy OperatorProperty launching the same kernel.

Each call is pushed and waited for (`wait_to_read`), so the numbers are latency per op
including the engine round trip; the ratios are against the native op in the same run.
Not a test (STYLE §10: no timing in tests). Run:
    .venv/bin/python tools/bench_frontends.py [--sizes 1000 1000000] [--seconds 0.5]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import nnvmpy as nv
from nnvmpy.operator import (
    CustomOp,
    CustomOpProp,
    Operator,
    OperatorProperty,
    register,
    register_op_property,
)
from nnvmpy.ops.quadratic import QuadraticParam, _quadratic
from nnvmpy.simple_op import register_simple_op

A, B, C = 2.0, 3.0, 1.0


class QuadraticND(CustomOp):
    """Forward with nd ops only: the data never leaves the engine."""

    def forward(self, is_train, req, in_data, out_data, aux):  # type: ignore[no-untyped-def]
        x = in_data[0]
        self.assign(out_data[0], req[0], (x * A + B) * x + C)


class QuadraticNumPy(CustomOp):
    """Forward through NumPy: .asnumpy() copies out, nd.array copies back."""

    def forward(self, is_train, req, in_data, out_data, aux):  # type: ignore[no-untyped-def]
        x = in_data[0].asnumpy()
        self.assign(out_data[0], req[0], nv.nd.array((A * x + B) * x + C))


@register("bench_quadratic_nd")
class QuadraticNDProp(CustomOpProp):
    def create_operator(self, ctx, shapes, dtypes):  # type: ignore[no-untyped-def]
        return QuadraticND()


@register("bench_quadratic_numpy")
class QuadraticNumPyProp(CustomOpProp):
    def create_operator(self, ctx, shapes, dtypes):  # type: ignore[no-untyped-def]
        return QuadraticNumPy()


def simple_quadratic(src, env, ret, req, ctx):  # type: ignore[no-untyped-def]
    kw = env.kwargs
    _quadratic.launch(ctx, ret, req, src, float(kw["a"]), float(kw["b"]), float(kw["c"]))


register_simple_op("bench_simple_quadratic").set_function(nv.cpu, simple_quadratic)
register_simple_op("bench_simple_quadratic").set_enable_kwargs(True)


class LegacyQuadratic(Operator):
    def __init__(self, p: QuadraticParam) -> None:
        self.p = p

    def forward(self, ctx, in_data, req, out_data, aux_states):  # type: ignore[no-untyped-def]
        _quadratic.launch(ctx, out_data[0], req[0], in_data[0], self.p.a, self.p.b, self.p.c)


class LegacyQuadraticProp(OperatorProperty):
    def create_operator(self, ctx):  # type: ignore[no-untyped-def]
        return LegacyQuadratic(self.param)


register_op_property("bench_legacy_quadratic", LegacyQuadraticProp, QuadraticParam)


def us_per_call(call: Callable[[], Any], seconds: float) -> float:
    """Median over batches of the time for one call plus the wait for its result."""
    call().wait_to_read()  # warm up: compile kernels, start threads
    batches = []
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline or len(batches) < 5:
        n, t0 = 0, time.perf_counter()
        while n < 3 or time.perf_counter() - t0 < seconds / 20:
            call().wait_to_read()
            n += 1
        batches.append((time.perf_counter() - t0) / n)
    return float(np.median(batches)) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 1000000])
    parser.add_argument("--seconds", type=float, default=0.5, help="per measurement")
    args = parser.parse_args()
    engine = nv.engine.get_engine()
    print(f"engine {type(engine).__name__}, quadratic a={A} b={B} c={C}, float32")
    print(f"{'size':>9} {'front-end':<32} {'us/call':>10} {'ratio':>7}")
    for size in args.sizes:
        x_np = np.random.default_rng(0).uniform(-1, 1, size).astype(np.float32)
        x = nv.nd.array(x_np)
        expected = (A * x_np + B) * x_np + C
        paths: list[tuple[str, Callable[[], Any]]] = [
            ("register_op + Numba kernel", lambda x=x: nv.nd.quadratic(x, a=A, b=B, c=C)),
            ("CustomOp, nd ops inside", lambda x=x: nv.nd.Custom(x, op_type="bench_quadratic_nd")),
            (
                "CustomOp, .asnumpy() inside",
                lambda x=x: nv.nd.Custom(x, op_type="bench_quadratic_numpy"),
            ),
            (
                "SimpleOp + the same kernel",
                lambda x=x: nv.nd.bench_simple_quadratic(x, a=A, b=B, c=C),
            ),
            (
                "OperatorProperty + same kernel",
                lambda x=x: nv.nd.bench_legacy_quadratic(x, a=A, b=B, c=C),
            ),
        ]
        base = None
        for label, call in paths:
            np.testing.assert_allclose(call().asnumpy(), expected, rtol=1e-5, atol=1e-5)
            us = us_per_call(call, args.seconds)
            base = base or us
            print(f"{size:>9} {label:<32} {us:>10.1f} {us / base:>6.1f}x")


if __name__ == "__main__":
    main()
