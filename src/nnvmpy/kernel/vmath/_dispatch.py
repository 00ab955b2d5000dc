"""Per-type device functions for vmath: float32 bodies on the CPU, libm elsewhere."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from ..device import DeviceFunction, _njit, for_device

F = np.float32

# ---------------------------------------------------------------- bit casts (numba only)
_casts: dict[str, Any] = {}
_casts_lock = threading.Lock()


def _bit_casts() -> dict[str, Any]:
    """f32 <-> i32 and f64 <-> i64 bit casts as numba intrinsics (built on first use)."""
    if _casts:
        return _casts
    with _casts_lock:
        if _casts:
            return _casts
        import llvmlite.ir as ir
        from numba import types
        from numba.extending import intrinsic

        def to_int(bits: int, float_type: Any) -> Any:
            int_type = types.int32 if bits == 32 else types.int64

            @intrinsic
            def cast(typingctx: Any, x: Any) -> Any:
                if x != float_type:
                    return None

                def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
                    return builder.bitcast(args[0], ir.IntType(bits))

                return int_type(x), codegen

            return cast

        def to_float(bits: int, float_type: Any) -> Any:
            llvm_float = ir.FloatType() if bits == 32 else ir.DoubleType()

            @intrinsic
            def cast(typingctx: Any, x: Any) -> Any:
                if not isinstance(x, types.Integer):
                    return None

                def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
                    value, width = args[0], x.bitwidth  # type: ignore[attr-defined]
                    if width > bits:
                        value = builder.trunc(value, ir.IntType(bits))
                    elif width < bits:
                        value = builder.sext(value, ir.IntType(bits))
                    return builder.bitcast(value, llvm_float)

                return float_type(x), codegen

            return cast

        @intrinsic
        def pick(typingctx: Any, cond: Any, a: Any, b: Any) -> Any:
            if not isinstance(cond, types.Boolean) or a != b:
                return None

            def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
                return builder.select(args[0], args[1], args[2])

            return a(cond, a, b), codegen

        @intrinsic
        def madd(typingctx: Any, a: Any, b: Any, c: Any) -> Any:
            if not isinstance(a, types.Float) or not (a == b == c):
                return None

            def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
                t = args[0].type
                fn = builder.module.declare_intrinsic(
                    "llvm.fmuladd", [t], ir.FunctionType(t, [t, t, t])
                )
                return builder.call(fn, args)

            return a(a, b, c), codegen

        @intrinsic
        def fma(typingctx: Any, a: Any, b: Any, c: Any) -> Any:
            if not isinstance(a, types.Float) or not (a == b == c):
                return None

            def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
                t = args[0].type
                fn = builder.module.declare_intrinsic(
                    "llvm.fma", [t], ir.FunctionType(t, [t, t, t])
                )
                return builder.call(fn, args)

            return a(a, b, c), codegen

        @intrinsic
        def fmax(typingctx: Any, a: Any, b: Any) -> Any:
            if not isinstance(a, types.Float) or not isinstance(b, types.Float):
                return None
            wide = a if a.bitwidth >= b.bitwidth else b  # float32 meets float64: float64

            def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
                x, y = (context.cast(builder, v, s, wide) for v, s in zip(args, (a, b)))
                t = x.type
                fn = builder.module.declare_intrinsic(
                    "llvm.maxnum", [t], ir.FunctionType(t, [t, t])
                )
                return builder.call(fn, [x, y])

            return wide(a, b), codegen

        @intrinsic
        def prefetch(typingctx: Any, array: Any, index: Any) -> Any:
            if not isinstance(array, types.Array) or not isinstance(index, types.Integer):
                return None

            def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
                from numba.core import cgutils

                arraytype = signature.args[0]
                values = context.make_array(arraytype)(context, builder, args[0])
                at = cgutils.get_item_pointer(
                    context, builder, arraytype, values, [args[1]], wraparound=False
                )
                byte = ir.IntType(8).as_pointer()
                i32 = ir.IntType(32)
                fn = builder.module.declare_intrinsic(
                    "llvm.prefetch", [byte], ir.FunctionType(ir.VoidType(), [byte, i32, i32, i32])
                )
                # read, locality 3 (every cache level), data
                flags = [ir.Constant(i32, k) for k in (0, 3, 1)]
                builder.call(fn, [builder.bitcast(at, byte), *flags])
                return context.get_dummy_value()

            return types.none(array, index), codegen

        def int32_op(build: Callable[[Any, Any, Any], Any]) -> Any:
            @intrinsic
            def op(typingctx: Any, a: Any, b: Any) -> Any:
                if a != types.int32 or not isinstance(b, types.Integer):
                    return None

                def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
                    other = context.cast(builder, args[1], b, types.int32)
                    return build(builder, args[0], other)

                return types.int32(a, b), codegen

            return op

        _casts.update(
            add32=int32_op(lambda builder, x, y: builder.add(x, y)),
            sub32=int32_op(lambda builder, x, y: builder.sub(x, y)),
            and32=int32_op(lambda builder, x, y: builder.and_(x, y)),
            or32=int32_op(lambda builder, x, y: builder.or_(x, y)),
            xor32=int32_op(lambda builder, x, y: builder.xor(x, y)),
            sra32=int32_op(lambda builder, x, y: builder.ashr(x, y)),
            shl32=int32_op(lambda builder, x, y: builder.shl(x, y)),
            fma=fma,
            fmax=fmax,
            madd=madd,
            pick=pick,
            prefetch=prefetch,
            f32_bits=to_int(32, types.float32),
            bits_f32=to_float(32, types.float32),
            f64_bits=to_int(64, types.float64),
            bits_f64=to_float(64, types.float64),
        )
    return _casts


# Python versions of the casts (a call from Python); in numba bodies _with_casts swaps in
# the intrinsics by these names.
def f32_bits(x: Any) -> int:
    return int(np.float32(x).view(np.int32))


def bits_f32(i: Any) -> Any:
    return np.int32(np.int64(i).astype(np.int32)).view(np.float32)


def f64_bits(x: Any) -> int:
    return int(np.float64(x).view(np.int64))


def bits_f64(i: Any) -> Any:
    return np.int64(i).view(np.float64)


# int32 arithmetic that stays 32 bits wide. numba types int32 - int32 (and +, >>, <<) as
# int64, so bit-level code on a float32's bits ran in 64-bit lanes: each 16-lane vector
# was split into two halves, widened, shifted, narrowed and converted back (vpmovsxdq,
# vpaddq, vpsraq, vcvtqq2ps), a third of the vectorised log's time (0.33 -> 0.21 ns per
# element in cache). These wrap around as C's int32 does; the right operand is cast.
def _wrap32(v: Any) -> np.int32:
    return np.int64(v).astype(np.int32)


def add32(a: Any, b: Any) -> np.int32:
    return _wrap32(int(a) + int(b))


def sub32(a: Any, b: Any) -> np.int32:
    return _wrap32(int(a) - int(b))


def and32(a: Any, b: Any) -> np.int32:
    return _wrap32(int(a) & int(b))


def or32(a: Any, b: Any) -> np.int32:
    return _wrap32(int(a) | int(b))


def xor32(a: Any, b: Any) -> np.int32:
    return _wrap32(int(a) ^ int(b))


def sra32(a: Any, b: Any) -> np.int32:
    return _wrap32(int(a) >> int(b))


def shl32(a: Any, b: Any) -> np.int32:
    return _wrap32((int(a) << int(b)) & 0xFFFFFFFF)


def madd(a: Any, b: Any, c: Any) -> Any:
    """a * b + c, one FMA instruction where the CPU has one (llvm.fmuladd): Horner's rule
    at half the instructions, and one rounding per step."""
    return a * b + c


def fma(a: Any, b: Any, c: Any) -> Any:
    """a * b + c rounded once (llvm.fma: always fused, where madd only may be): for bodies
    whose exactness argument needs the single rounding. This Python version is not fused;
    bodies run it compiled only (Python calls take a VectorFunction's reference)."""
    return a * b + c


def pick(cond: Any, a: Any, b: Any) -> Any:
    """`a if cond else b` as one select instruction: both sides are computed, and a loop
    of selects has no branches to stop the vectoriser (numba lowers `if` expressions and
    `and`/`or` to branches)."""
    return a if cond else b


def prefetch(array: Any, index: Any) -> None:
    """Ask the CPU to bring the cache line holding array[index] in (llvm.prefetch), without
    waiting for it; index must lie inside the array. Python calls do nothing."""


# ---------------------------------------------------------------- the dispatching function
class VectorFunction(DeviceFunction):
    """A device function whose CPU build runs `f32_body` for float32 arguments.

    `reference` (plain Python with math.*) is what Python calls, the GPU and the CPU for
    every other type run; `f32_body` is a numba body over float32 that calls only
    arithmetic, other f32 bodies and the bit casts.
    """

    def __init__(
        self, reference: Callable[..., Any], f32_body: Callable[..., Any], inline: bool = False
    ) -> None:
        super().__init__(reference)
        self.f32_body = f32_body
        self.inline = inline

    def _build(self, device: str) -> Any:
        if device == "gpu":
            return super()._build(device)
        from numba import types
        from numba.extending import overload

        # Compiled on their own (and cached on disk): LLVM inlines these branch-free bodies
        # into the loop and vectorises them. Inlining them at numba's IR level instead
        # re-typed every body in every caller: a fused sigmoid+tanh group took 3.2 s to
        # compile instead of 1.2 s.
        options = {"inline": "always"} if self.inline else {}
        f32 = _njit(_with_casts(for_device(self.f32_body, "cpu")), **options)
        generic = _njit(for_device(self.py_func, "cpu"))  # libm: nothing to vectorise
        arity = self.py_func.__code__.co_argcount
        names = ", ".join(f"a{k}" for k in range(arity))
        namespace: dict[str, Any] = {"f32": f32, "generic": generic, "F": F}
        exec(
            f"def stub({names}):\n    pass\n"
            f"def to_f32({names}):\n    return f32({', '.join(f'F(a{k})' for k in range(arity))})\n"
            f"def to_generic({names}):\n    return generic({names})\n",
            namespace,
        )
        stub = namespace["stub"]
        stub.__name__ = f"vmath_{self.__name__}"

        def choose(*args: Any) -> Any:
            floats = [a for a in args if isinstance(a, types.Float)]
            if floats and all(a == types.float32 for a in floats):
                return namespace["to_f32"]
            return namespace["to_generic"]

        namespace["choose"] = choose
        exec(f"def typed({names}):\n    return choose({names})\n", namespace)
        overload(stub, inline="always")(namespace["typed"])
        return stub


_SWAPPED = {"f32_bits", "bits_f32", "f64_bits", "bits_f64", "pick", "madd", "fma", "prefetch"} | {
    "add32",
    "sub32",
    "and32",
    "or32",
    "xor32",
    "sra32",
    "shl32",
}


def _with_casts(fn: Callable[..., Any]) -> Callable[..., Any]:
    """fn with the numba bit-cast intrinsics in place of the Python fallbacks."""
    import types as pytypes

    casts = _bit_casts()
    names = _SWAPPED & _all_names(fn.__code__)
    if not names:
        return fn
    copy = pytypes.FunctionType(
        fn.__code__,
        {**fn.__globals__, **{n: casts[n] for n in names}},
        fn.__name__,
        fn.__defaults__,
        fn.__closure__,
    )
    copy.__qualname__, copy.__module__ = fn.__qualname__, fn.__module__
    return copy


def _all_names(code: Any) -> set[str]:
    names = set(code.co_names)
    for const in code.co_consts:
        if hasattr(const, "co_names"):
            names |= _all_names(const)
    return names


class _Helper(DeviceFunction):
    """A numba function that only f32 bodies call (CPU only), bit casts allowed."""

    inline = False

    def _build(self, device: str) -> Any:
        if device != "cpu":
            raise NotImplementedError(f"vmath helper {self.__name__} is CPU-only")
        options = {"inline": "always"} if self.inline else {}
        return _njit(_with_casts(for_device(self.py_func, "cpu")), **options)


def _helper(fn: Callable[..., Any] | None = None, *, inline: bool = False) -> Any:
    """Decorator for a helper of f32 bodies: `@_helper` or `@_helper(inline=True)`.

    inline=True inlines it at numba's IR level. LLVM inlines small helpers by itself and
    then vectorises the caller's loop; a large one (gamma's pieces) stays a call, and a
    loop with a call in it runs one element at a time (gammaln: 35 ns per element
    instead of ~1). IR-level inlining costs compile time in every caller, so only the
    large bodies ask for it."""

    def wrap(f: Callable[..., Any]) -> _Helper:
        helper = _Helper(f)
        helper.inline = inline
        return helper

    return wrap if fn is None else wrap(fn)


def calls_vector_math(fn: Callable[..., Any]) -> bool:
    """Whether fn names a VectorFunction among its globals or closure cells."""
    g = fn.__globals__
    if any(isinstance(g.get(n), VectorFunction) for n in _all_names(fn.__code__)):
        return True
    return any(isinstance(c.cell_contents, VectorFunction) for c in fn.__closure__ or ())


def vector_function(
    reference: Callable[..., Any], *, inline: bool = False
) -> Callable[[Callable[..., Any]], VectorFunction]:
    """Decorator for an f32 body: `@vector_function(reference)`; inline=True for a body
    too large for LLVM to inline into the kernel loop by itself (see _helper)."""

    def wrap(f32_body: Callable[..., Any]) -> VectorFunction:
        fn = VectorFunction(reference, f32_body, inline)
        fn.__name__ = f32_body.__name__.removesuffix("_f32")
        return fn

    return wrap
