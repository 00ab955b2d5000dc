"""One kernel body for both devices: device functions and parallel-for loops.

    @kernel.device_function
    def _sq(x):
        return x * x

    @kernel.parallel_for
    def _scale_sq(i, out, x, a):        # the body of one work item
        out[i] = a * _sq(x[i])

    _scale_sq.launch(ctx, out.size, out, x, 2.0)   # for i in range(n): body(i, *args)

On the CPU a device function is `numba.njit(inline='always')` and the loop a numba
`prange` loop with the body inlined (a serial loop below SERIAL_CUTOFF items of `work`,
default n); on the GPU a device function is
`numba.cuda.jit(device=True)` and the loop a grid-stride numba.cuda kernel on ctx's
stream. Calling either object from plain Python calls the Python function.

How one body becomes two: a function is compiled from a *copy* of itself whose globals
(and closure cells) map every DeviceFunction it names to that device's build, so the
same `_sq` is an inlined njit function in the CPU body and a CUDA device function in the
GPU one. The copy's `cuda` global is numba.cuda itself, which the simulator swaps for its
fake per-thread module. Name device functions as plain globals (not `module.fn`): only
those are rebound. Nothing is compiled, and numba is not imported, before the first
launch; CPU and GPU builds are cached on disk under a key of their code and of every
function they reach (kernel/disk_cache.py), so an edit to a device function in another
file recompiles what calls it, which numba's own cache=True (keyed by the caller's file)
did not.
(Hand-written kernels, kernel.cpu_kernel and kernel.cuda_kernel, are built from the same
copy and cached the same way.) `fmax` below is a device function whose
CPU build is one LLVM intrinsic.
"""

from __future__ import annotations

import functools
import threading
import types as pytypes
from collections.abc import Callable
from typing import Any

import numpy as np

from ..base import Context, NNVMError
from ..threads import parallel_size
from .elementwise import array_device, is_gpu_array

#: below this many items of work a CPU loop runs on the calling thread: waking the
#: thread pool costs more than the work (the element-wise kernels' cutoff, kernel/cpu.py)
SERIAL_CUTOFF = parallel_size()  # NNVMPY_CPU_PARALLEL_SIZE (nnvmpy.threads)
# Bump when the loop template changes meaning (part of the disk-cache key).
_LOOP_VERSION = "5"
_SCALARS = (int, float, bool, np.number, np.bool_)


def _global_names(code: pytypes.CodeType) -> set[str]:
    """The global names `code` (and the code objects nested in it) may load."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, pytypes.CodeType):
            names |= _global_names(const)
    return names


def for_device(fn: Callable[..., Any], device: str) -> Callable[..., Any]:
    """A copy of fn whose DeviceFunction globals/cells are their `device` builds."""
    names = _global_names(fn.__code__)
    fn_globals = fn.__globals__
    rebound = {
        name: fn_globals[name].compiled(device)
        for name in names
        if isinstance(fn_globals.get(name), DeviceFunction)
    }
    if device == "gpu" and "cuda" in names:
        from nnvmpy.kernel.cuda import cuda

        rebound["cuda"] = cuda  # the module: the simulator swaps it in the copy's globals
    if device == "gpu" and fn_globals.get("np") is np and "np" in names:
        from nnvmpy.kernel import _gpu_numpy
        from nnvmpy.kernel.cuda import _state

        if not _state.get("simulator", True):  # numba-cuda lacks some ufuncs: _gpu_numpy
            rebound["np"] = _gpu_numpy.module()
    cells = fn.__closure__
    if cells is not None and any(isinstance(c.cell_contents, DeviceFunction) for c in cells):
        cells = tuple(
            pytypes.CellType(c.cell_contents.compiled(device))
            if isinstance(c.cell_contents, DeviceFunction)
            else c
            for c in cells
        )
    if not rebound and cells is fn.__closure__:
        return fn
    copy = pytypes.FunctionType(
        fn.__code__, {**fn_globals, **rebound}, fn.__name__, fn.__defaults__, cells
    )
    copy.__qualname__ = fn.__qualname__
    copy.__module__ = fn.__module__
    copy.__doc__ = fn.__doc__
    return copy


def _njit(fn: Callable[..., Any], **options: Any) -> Any:
    from nnvmpy.kernel import cpu

    cpu.configure_threading_layer()  # numba's settings before its first compile

    # cached_njit, not numba's cache=True, which checks only fn's own file: a helper
    # whose callee in another file was edited (a vmath.blocks loop calling a gamma.py
    # body) came back with the old callee compiled in
    return cpu.cached_njit(cache_tag="dev1", nogil=True, error_model="numpy", **options)(fn)


class DeviceFunction:
    """A numba-compatible function callable from kernel bodies on both devices.

    cpu_inline: the CPU build is inlined into its callers at numba's IR level (so loops
    around it vectorise); False compiles it once as a function its callers call, for
    large bodies called once per item: each inlined call site is typed and lowered again,
    and the random samplers' loop (Philox at a dozen call sites) took 24 s to compile.
    """

    def __init__(self, py_func: Callable[..., Any], cpu_inline: bool = True) -> None:
        self.py_func = py_func
        self.cpu_inline = cpu_inline
        self.__name__: str = getattr(py_func, "__name__", "device_function")
        functools.update_wrapper(self, py_func)
        self._builds: dict[str, Any] = {}
        self._lock = threading.RLock()  # a build builds the device functions it calls

    def __call__(self, *args: Any) -> Any:
        return self.py_func(*args)

    def __repr__(self) -> str:
        return f"<DeviceFunction {self.__name__}>"

    def compiled(self, device: str) -> Any:
        """The numba object for `device` ('cpu' or 'gpu'); it compiles per signature."""
        build = self._builds.get(device)
        if build is None:
            with self._lock:
                build = self._builds.get(device)
                if build is None:
                    build = self._builds[device] = self._build(device)
        return build

    def _build(self, device: str) -> Any:
        fn = for_device(self.py_func, device)
        if device == "gpu":
            from nnvmpy.kernel.cuda import get_cuda

            return get_cuda(self.__name__).jit(device=True)(fn)
        return _njit(fn, inline="always" if self.cpu_inline else "never")


class _Intrinsic(DeviceFunction):
    """A device function whose CPU build is one LLVM intrinsic (kernel.vmath's table,
    named as the function) and whose GPU build is its Python body."""

    def _build(self, device: str) -> Any:
        if device == "cpu":
            from nnvmpy.kernel.vmath._dispatch import _bit_casts

            return _bit_casts()[self.__name__]
        return super()._build(device)


def fmax(a: Any, b: Any) -> Any:
    """C's fmax: the larger of two floats, skipping NaN (NaN only when both are)."""
    return b if (b > a) | (a != a) else a


#: C's fmax for kernel bodies: on the CPU LLVM's maxnum, which vectorises to a max, a
#: compare and a blend; the same rule as a Python conditional is a branch to numba and
#: kept loops from vectorising (LeNet's 2x2 max pooling 2.9x slower; a select of the
#: compound condition still 1.5x)
fmax = _Intrinsic(fmax)  # type: ignore[assignment]


def like(x: Any, c: Any) -> Any:
    """The constant c in x's type where x is float32 or float64, else c as it is.

    numba types a Python float constant as float64, and float32 meeting float64 computes
    in float64: `0.5 * x`, or a branch returning math.inf beside one returning float32,
    made float32 GPU kernels run double-precision arithmetic (1/2 to 1/64 of the float32
    rate). `like(x, 0.5) * x` stays float32 for a float32 x; a float64 x gets c exactly,
    and float16 and integers meet c as before (float16 is not narrowed further)."""
    return type(x)(c) if isinstance(x, (np.float32, np.float64)) else c


class _Like(DeviceFunction):
    """`like` as a numba intrinsic on both devices: a compile-time cast of the constant."""

    def _build(self, device: str) -> Any:
        if device == "gpu":
            from nnvmpy.kernel.cuda import _state, get_cuda

            get_cuda(self.__name__)
            if _state["simulator"]:  # kernels run as Python there
                return super()._build(device)
            from numba.cuda.extending import intrinsic
        else:
            from numba.extending import intrinsic
        from numba import types

        @intrinsic
        def like(typingctx: Any, x: Any, c: Any) -> Any:
            c = types.unliteral(c)
            wanted = x if x in (types.float32, types.float64) else c

            def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
                return context.cast(builder, args[1], c, wanted)

            return wanted(x, c), codegen

        return like


#: like for kernel bodies: a global of a body, rebound per device as fmax is
like = _Like(like)  # type: ignore[assignment]


def device_function(py_func: Callable[..., Any] | None = None, *, cpu_inline: bool = True) -> Any:
    """Decorator: a function kernel bodies (and other device functions) may call.

    Compiled lazily, per device: `numba.njit(inline='always')` on the CPU (cached on disk,
    keyed by what it calls), `numba.cuda.jit(device=True)` on the GPU. Called from Python
    it is `py_func`. `@device_function(cpu_inline=False)` makes the CPU build a called
    function instead (see DeviceFunction): for large bodies, such as rejection samplers,
    whose inlined copies cost seconds of compiling each and gain nothing.
    """
    if py_func is None:
        return functools.partial(DeviceFunction, cpu_inline=cpu_inline)
    return DeviceFunction(py_func, cpu_inline)


# ---------------------------------------------------------------- loops
# One loop per arity, made from these templates: numba.cuda kernels take no star-args,
# and numba inlines a body into the CPU loop (inline='always', at the IR level) only when
# it is called with plain arguments; otherwise the body stayed an indirect call per item
# (softmax rows along axis 1 ran ~10% slower). `i + 0`: an inlined body may reassign its
# index parameter, which must not be prange's own variable. The CPU has a serial and a
# parallel loop, compiled separately: in a parallel=True function even the body's slice
# assignments would become thread-pool work. `cuda` must be a global of the GPU loop (the
# simulator swaps a global, not a closure cell).
_CPU_LOOP = """
def loop(n{params}):
    for i in {range}(n):
        body(i + 0{params})
"""
_GPU_LOOP = """
def loop(n{params}):
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        body(i{params})
"""


def _make_loop(template: str, namespace: dict[str, Any], arity: int, name: str, **fmt: str) -> Any:
    # a real module name: numba's cache rebuilds a loaded function's environment from it
    namespace.setdefault("__name__", __name__)
    params = "".join(f", a{k}" for k in range(arity))
    source = template.format(params=params, **fmt)
    exec(compile(source, f"<nnvmpy.kernel.device loop {name}/{arity}>", "exec"), namespace)
    return namespace["loop"]


class ParallelFor:
    """`launch(ctx, n, *args)` runs `body(i, *args)` for i in range(n) on ctx's device."""

    def __init__(self, body: Callable[..., Any]) -> None:
        self.py_func = body
        self.__name__: str = getattr(body, "__name__", "parallel_for")
        functools.update_wrapper(self, body)
        self._loops: dict[Any, Any] = {}  # (device, arity[, parallel]), ("gpu-body",)
        self._lock = threading.RLock()

    def __call__(self, i: int, *args: Any) -> Any:
        return self.py_func(i, *args)

    def __repr__(self) -> str:
        return f"<ParallelFor {self.__name__}>"

    # -- building
    def _loop(self, key: Any) -> Any:
        loop = self._loops.get(key)
        if loop is None:
            with self._lock:
                loop = self._loops.get(key)
                if loop is None:
                    loop = self._loops[key] = self._build(key)
        return loop

    def _build(self, key: Any) -> Any:
        if key[0] == "gpu-body":
            from nnvmpy.kernel.cuda import get_cuda

            body_fn = for_device(self.py_func, "gpu")
            return body_fn, get_cuda(self.__name__).jit(device=True)(body_fn)
        device, arity = key[0], key[1]
        if device == "cpu":
            import numba

            from nnvmpy.kernel import cpu

            parallel = key[2]
            cpu.configure_threading_layer()
            body = _njit(for_device(self.py_func, "cpu"), inline="always")
            namespace = {"body": body, "prange": numba.prange}
            kind = "prange" if parallel else "range"
            loop = _make_loop(_CPU_LOOP, namespace, arity, self.__name__, range=kind)
            dispatcher = numba.njit(parallel=parallel, nogil=True, error_model="numpy")(loop)
            tag = f"pfor{_LOOP_VERSION}-{kind}{arity}"
            cache = cpu._disk_cache(loop, self.py_func, tag)
            if cache is not None:
                dispatcher._cache = cache  # type: ignore[attr-defined]  # = enable_caching()
            return dispatcher
        from nnvmpy.kernel.cuda import get_cuda
        from nnvmpy.kernel.disk_cache import enable_cuda_cache

        cuda = get_cuda(self.__name__)
        body_fn, body = self.gpu_body()
        namespace = {"cuda": cuda, "body": body}
        loop = _make_loop(_GPU_LOOP, namespace, arity, self.__name__)
        dispatcher = cuda.jit(loop)
        enable_cuda_cache(dispatcher, body_fn, f"gpfor{_LOOP_VERSION}-{arity}", loop)
        return dispatcher

    def gpu_body(self) -> tuple[Any, Any]:
        """(the body's GPU copy, that copy as a CUDA device function), made once: every GPU
        loop calls it (this object's, and kernel/multi_tensor.py's)."""
        return self._loop(("gpu-body",))

    # -- launching
    def launch(self, ctx: Any, n: int, *args: Any, work: int | None = None) -> None:
        """Run body(i, *args) for i in range(n).

        Args:
            ctx: an OpContext (its device and stream are used), a Context, or None to
                take the device from the first array argument.
            n: number of work items (>= 0).
            *args: NumPy arrays (cpu) or CUDA arrays (gpu) of any shape, and scalars.
            work: total work, for the CPU's serial cutoff (default n): pass the element
                count when each item is a long row.

        Raises:
            NNVMError: negative n, a bad ctx, an array on the wrong device, float16 on
                the CPU, or arguments the body cannot be compiled for; the message names
                the kernel and the argument.
        """
        if n <= 0:
            if n < 0 or not isinstance(n, (int, np.integer)):
                raise NNVMError(f"{self.__name__}: n must be an int >= 0, got {n!r}")
            return
        if self._device(ctx, args) == "gpu":
            self._launch_gpu(ctx, n, args)
            return
        for k, a in enumerate(args):  # the hot path: plain arrays and Python numbers
            kind = type(a)
            if kind is np.ndarray:
                if a.dtype.char == "e":
                    raise NNVMError(
                        f"{self.__name__}: arg {k} is float16, which cpu kernels cannot "
                        "compute in (numba); use float32 or float64, or a gpu context"
                    )
            elif (
                kind is not float
                and kind is not int
                and not isinstance(a, _SCALARS)
                and is_gpu_array(a)
            ):
                raise NNVMError(
                    f"{self.__name__}: arg {k} is a gpu array; a cpu launch expects "
                    "NumPy arrays (copy with nnvmpy.kernel.storage.copy)"
                )
        key = ("cpu", len(args), (n if work is None else work) >= SERIAL_CUTOFF)
        loop = self._loops.get(key) or self._loop(key)
        try:
            loop(n, *args)
        except Exception as e:
            if type(e).__module__.startswith("numba"):  # typing/lowering errors
                raise NNVMError(f"{self.__name__}: cannot compile the cpu loop: {e}") from e
            raise

    def _device(self, ctx: Any, args: tuple[Any, ...]) -> str:
        if ctx is None:
            for a in args:
                device = None if isinstance(a, _SCALARS) else array_device(a)
                if device is not None:
                    return device
            raise NNVMError(
                f"{self.__name__}: ctx is None and no argument is an array to take the "
                "device from; pass a Context or an OpContext"
            )
        dev = ctx if isinstance(ctx, Context) else getattr(ctx, "ctx", None)
        if not isinstance(dev, Context):
            raise NNVMError(
                f"{self.__name__}: ctx must be an OpContext, a Context or None, "
                f"got {type(ctx).__name__}"
            )
        return "gpu" if dev.device_type == "gpu" else "cpu"

    def _launch_gpu(self, ctx: Any, n: int, args: tuple[Any, ...]) -> None:
        from nnvmpy.kernel import cuda as gpu

        gpu.get_cuda(self.__name__)
        flat = [
            a
            if isinstance(a, _SCALARS) or not hasattr(a, "shape")
            else gpu.as_device_array(self.__name__, f"arg {k}", a)
            for k, a in enumerate(args)
        ]
        loop = self._loops.get(("gpu", len(flat))) or self._loop(("gpu", len(flat)))
        blocks, threads, stream, device = gpu.launch_config(self.__name__, ctx, n)
        with device:
            gpu.launch_kernel(loop, blocks, threads, stream, (n, *flat))


def parallel_for(body: Callable[..., Any]) -> ParallelFor:
    """Decorator: `body(i, *args)` becomes a loop launched with `.launch(ctx, n, *args)`.

    CPU: a numba prange loop (serial below SERIAL_CUTOFF items of work); GPU: a
    grid-stride numba.cuda kernel. The body may call device functions.
    """
    return ParallelFor(body)
