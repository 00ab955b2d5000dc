"""CPU launcher: a numba parallel loop around the njit'ed scalar function.

How a variant is made (once per kernel, mode and size class, on the first launch):

    scalar = numba.njit(nogil=True)(py_func)               # compiled into the loop
    loop   = _write_loop(scalar) or _add_loop(scalar)     # closures, no exec
    numba.njit(parallel=n >= SERIAL_CUTOFF, nogil=True)(loop) + _KernelCache
                                                           # (= cache=True, see below)

Serial and parallel variants. Below SERIAL_CUTOFF elements a launch runs the loop
compiled without parallel=True (its prange is a range); from there, the one compiled
with it. They are two variants (the second's key ends in "parallel"), each compiled on
first need: numba's parfor passes made a kernel's compile ~4x slower (0.15 -> 0.6 s), and
most kernels of a small model or a test never see a large array.

One loop serves every arity: `_gather(out, args, i)` is a numba overload that turns
the star-args tuple into (args[0][i] or args[0], args[1][i] or args[1], ...), so arrays
are indexed and scalars broadcast, and `f(*...)` calls the scalar function. The
dispatcher then specialises on the dtype signature.

Scalar parameters. A Python float arrives as float64; when out is float32 the loop
hands it to the scalar function as float32 (`_at`), as MXNet computes `x op
DType(scalar)` and as fusion passes parameters to float32 groups: numba would otherwise
promote `x * s` to float64 (half the vector width, float64 division, and kernel.vmath's
float32 bodies skipped), and `x % 0.1` would differ from MXNet's and NumPy's
`x % float32(0.1)`. The conversion is compiled into the loop, so a launch costs the
same as before (an np.float32 made in Python would cost ~30 ns per call in numba's
dispatcher, which types Python floats faster than NumPy scalars).
float16 arrays compute in float32 copies with the scalar rounded to float16 first
(MXNet's half_t(scalar)); integer outputs get the scalar as it is.

Disk caching. numba's own cache=True keys a closure by pickling its cells; a captured
dispatcher pickles with a random uuid, so the key differs in every process and the
cache only grows. _KernelCache keys the entry by the loop's and the scalar function's
code instead, and by the code of every function they reach in any file (callee_key),
and stores it next to the scalar function's module. Each entry's machine code has a
file named by its key (_keyed_cache_file): numba's numbered entries could be swapped
by two processes saving at once. Device functions, hand-written kernels and nnvmpy's
other numba functions (cached_njit) are cached the same way; the keys and the cache
file are kernel/disk_cache.py's, which keys GPU kernels too.
"""

from __future__ import annotations

import hashlib
import inspect
import math
import threading
from typing import Any

import numba
import numpy as np
from numba import prange, types
from numba.extending import overload

from .. import config
from .. import threads as _threads
from ..base import Context, NNVMError
from . import fork_safe, half
from .disk_cache import _code_key as _code_key
from .disk_cache import callee_key as callee_key
from .disk_cache import function_digest as _function_digest
from .disk_cache import keyed_cache_file
from .elementwise import _FLOATS, NUMPY_MIN_SIZE, ElementwiseKernel

# Below this many elements the loop runs serially: waking the team costs more than the
# work (NNVMPY_CPU_PARALLEL_SIZE, see nnvmpy.threads.parallel_size).
SERIAL_CUTOFF = _threads.parallel_size()
# Bump when the loop templates change meaning (it is part of the disk-cache key).
_TEMPLATE_VERSION = "5"

NATIVE_DTYPES = frozenset(
    np.dtype(t) for t in (np.float32, np.float64, np.int8, np.int32, np.int64, np.uint8)
)
# numba has no float16 arithmetic on the CPU: such arrays go through float32 copies.
_HALF = np.dtype(np.float16)
_SCALARS = (int, float, np.integer, np.floating)
THREADSAFE_LAYERS = ("threadsafe", "tbb", "omp")


# ---------------------------------------------------------------- the loop templates
def _at(out: Any, a: Any, i: int) -> Any:
    """a[i] for an array, a for a scalar, a float scalar in float32 for a float32 out
    (the Python body documents the overload)."""
    if isinstance(a, np.ndarray):
        return a[i]
    return np.float32(a) if out.dtype == np.float32 and isinstance(a, float) else a


def _gather(out: Any, args: tuple[Any, ...], i: int) -> tuple[Any, ...]:
    """The scalar arguments of element i: (_at(out, args[0], i), _at(out, args[1], i), ...)."""
    return tuple(_at(out, a, i) for a in args)


def _cast(out: Any, v: Any) -> Any:
    """v converted to out's dtype (the Python body documents the overload)."""
    return out.dtype.type(v)


@overload(_at)
def _at_impl(out, a, i):  # numba: same names, no hints
    if isinstance(a, types.Array):
        return lambda out, a, i: a[i]
    if out.dtype == types.float32 and isinstance(a, types.Float) and a != types.float32:
        return lambda out, a, i: np.float32(a)  # loop-invariant: LLVM hoists it
    return lambda out, a, i: a


@overload(_gather)
def _gather_impl(out, args, i):
    if len(args) == 0:
        return lambda out, args, i: ()
    # Recursion on the tuple's type: each shorter tuple is its own specialisation.
    return lambda out, args, i: (_at(out, args[0], i),) + _gather(out, args[1:], i)  # noqa: RUF005


@overload(_cast)
def _cast_impl(out, v):
    dtype = out.dtype
    return lambda out, v: dtype(v)


def _write_loop(f: Any) -> Any:
    def loop(out: Any, *args: Any) -> None:  # out[i] = f(...)
        for i in prange(out.size):
            out[i] = f(*_gather(out, args, i))

    return loop


def _add_loop(f: Any) -> Any:
    # MXNet's KERNEL_ASSIGN converts f(...) to out's dtype before adding: adding in float
    # first would make an int32 `out += 2.7` add 2.7 and truncate the sum, not add 2
    def loop(out: Any, *args: Any) -> None:  # out[i] += DType(f(...))
        for i in prange(out.size):
            out[i] += _cast(out, f(*_gather(out, args, i)))

    return loop


_TEMPLATES = {"write": _write_loop, "add": _add_loop}

# The same loops with one named parameter per argument: numba inlines a body into its
# caller (inline='always') only when the call has no star-args.
_FIXED_LOOP = """
def loop(out{params}):
    for i in prange(out.size):
        {store}
"""
_STORES = {"write": "out[i] = f({items})", "add": "out[i] += _cast(out, f({items}))"}


def _fixed_arity_loop(mode: str, f: Any, arity: int, aliased: tuple[int, ...] = ()) -> Any:
    """The loop for a body of `arity` arguments; those in `aliased` are `out` itself (an
    in-place launch) and are read from `out` (see `_in_place_arguments`)."""
    params = "".join(f", a{k}" for k in range(arity))
    items = ", ".join("out[i]" if k in aliased else f"_at(out, a{k}, i)" for k in range(arity))
    source = _FIXED_LOOP.format(params=params, store=_STORES[mode].format(items=items))
    namespace = {
        "__name__": __name__,
        "f": f,
        "prange": prange,
        "_at": _at,
        "_cast": _cast,
    }
    exec(compile(source, f"<nnvmpy.kernel.cpu {mode} loop/{arity}>", "exec"), namespace)
    return namespace["loop"]


# ---------------------------------------------------------------- threading layer
_layer_lock = threading.Lock()
_layer_checked = False


def check_threading_layer(layer: str) -> str:
    """The layer name if it is safe for concurrent launches from engine threads."""
    if layer not in THREADSAFE_LAYERS:
        raise NNVMError(
            f"{config.NUMBA_THREADING_LAYER.name}={layer!r} is not allowed: engine threads "
            f"launch parallel kernels concurrently, which needs one of {THREADSAFE_LAYERS}"
            + (" ('workqueue' is not thread-safe)" if layer == "workqueue" else "")
        )
    return layer


def _has_omp() -> bool:
    """numba's omp layer can load (its libgomp is present)."""
    try:
        from numba.np.ufunc import omppool  # noqa: F401
    except ImportError:
        return False
    return True


def configure_threading_layer() -> None:
    """Set numba's threading layer from the config knob, before the first compile."""
    global _layer_checked
    if _layer_checked:
        return
    with _layer_lock:
        if _layer_checked:
            return
        # Each engine worker that launches a parallel kernel gets its own OpenMP team;
        # with GNU OpenMP's default wait (a long spin) the idle teams burn the cores the
        # running one needs: 10M-element relu took 8 ms instead of 2.3 ms on 2 cores.
        # Before _has_omp(): importing numba's omp layer loads libgomp, which reads it.
        _threads.openmp_wait()
        layer = check_threading_layer(config.NUMBA_THREADING_LAYER.get())
        from numba.np.ufunc import parallel

        if getattr(parallel, "_is_initialized", False):
            # Someone launched a parallel numba function first; it fixed the layer.
            if parallel.threading_layer() == "workqueue":
                check_threading_layer("workqueue")
        else:
            if layer == "threadsafe" and _has_omp():
                # numba's 'threadsafe' tries tbb first; the `mkl` extra installs tbb, and MKL
                # runs on GNU OpenMP (ops/nn/_blas.py): pin omp, one OpenMP runtime.
                layer = "omp"
            numba.config.THREADING_LAYER = layer  # type: ignore[attr-defined]
        _prefer_512_bit_vectors()
        # Starts the layer now, so that every parallel region compiled or loaded from here
        # on survives a fork (GNU OpenMP's regions run serially in a forked child).
        fork_safe.install()
        _layer_checked = True


def numba_layer() -> str:
    """numba's threading layer: the one running, or the one its first parallel launch
    will start (configure_threading_layer's choice)."""
    configure_threading_layer()
    from numba.np.ufunc import parallel

    if getattr(parallel, "_is_initialized", False):
        return str(parallel.threading_layer())
    return str(numba.config.THREADING_LAYER)  # type: ignore[attr-defined]


def _prefer_512_bit_vectors() -> None:
    """Drop LLVM's 256-bit preference on AVX-512 CPUs (NNVMPY_CPU_512BIT, config.py).

    LLVM tunes Skylake-and-later servers for 256-bit vectors (early parts lowered their
    clock for 512-bit code); kernel.vmath's float32 exp/asin/erf are compute-bound and run
    ~1.7x faster with 16 lanes. numba reads its feature string when its CPU target is
    first built, so this only takes effect before numba's first compile in the process.
    """
    if config.CPU_512BIT.get() != "1" or getattr(numba.config, "CPU_FEATURES", None) is not None:
        return
    import llvmlite.binding as llvm

    features = llvm.get_host_cpu_features().flatten()
    if "+avx512f" in features.split(","):
        numba.config.CPU_FEATURES = features + ",-prefer-256-bit"  # type: ignore[attr-defined]


# ---------------------------------------------------------------- disk cache
# (the keys and the cache file are shared with the GPU's: kernel/disk_cache.py)
def _keyed_cache_file() -> type:
    """numba's IndexDataCacheFile with one data file per key (disk_cache.keyed_cache_file)."""
    from numba.core.caching import IndexDataCacheFile

    return keyed_cache_file(IndexDataCacheFile)


def _disk_cache(loop: Any, scalar: Any, tag: str, lazy: bool = False) -> Any:
    """A numba cache for `loop` keyed by code, stored beside `scalar`'s module, or None.

    lazy: the key's digest of what scalar calls is taken at the first compile or load,
    not now (a module-level decorator runs before the functions below it exist)."""
    scalar_digest = None if lazy else _function_digest(scalar)
    if scalar_digest is None and not lazy:
        return None
    try:
        from numba.core.caching import FunctionCache

        cache_file = _keyed_cache_file()

        class _KernelCache(FunctionCache):
            def __init__(self) -> None:
                super().__init__(scalar)  # locator, file stamp and name from the scalar fn
                self._cache_file = cache_file(
                    cache_path=self._cache_path,
                    filename_base=f"{self._impl.filename_base}.{tag}",
                    source_stamp=self._impl.locator.get_source_stamp(),
                )
                self._digest: tuple[Any, ...] | None = None
                self._keyable = True

            def _key_digest(self) -> tuple[Any, ...] | None:
                if self._digest is None and self._keyable:
                    digest = scalar_digest or _function_digest(scalar)
                    if digest is None:  # (lazy) a closure over objects with no stable key
                        self._keyable = False
                        return None
                    self._digest = (
                        _TEMPLATE_VERSION,
                        tag,
                        _code_key(loop.__code__),
                        digest,
                    )
                return self._digest

            def load_overload(self, sig: Any, target_context: Any) -> Any:
                if self._key_digest() is None:
                    return None  # compiled in memory, as without a cache
                return super().load_overload(sig, target_context)

            def save_overload(self, sig: Any, data: Any) -> None:
                if self._key_digest() is not None:
                    super().save_overload(sig, data)

            def _index_key(self, sig: Any, codegen: Any) -> Any:
                return (sig, codegen.magic_tuple(), self._key_digest())

        return _KernelCache()
    except Exception:  # no file (REPL, exec), unwritable dirs, numba internals moved
        return None


def _options_tag(options: dict[str, Any]) -> str:
    """A stable short name for numba.njit options ('' for none): sets sorted, as their
    order changes between processes."""
    if not options:
        return ""
    items = sorted(
        (k, sorted(v) if isinstance(v, set | frozenset) else v) for k, v in options.items()
    )
    return "-" + hashlib.sha256(repr(items).encode()).hexdigest()[:8]


def cached_njit(*, cache_tag: str = "njit1", **options: Any) -> Any:
    """Decorator: numba.njit(**options) cached on disk as kernels are (one data file per
    key; the key covers the code of every function it reaches), for numba functions of
    nnvmpy's own. numba's cache=True keys an entry by its own file only and numbers the
    entries in a way two processes saving at once can swap (_keyed_cache_file).
    cache_tag names the cache files of one way of compiling (device functions, kernels);
    the options are part of the key too. numba's own key has only the signature, so a
    function compiled twice, parallel and not, loaded one build for both: the serial
    _top_rows ran the parallel code (an OpenMP team on the calling thread)."""

    def wrap(fn: Any) -> Any:
        if options.get("parallel"):
            configure_threading_layer()
        dispatcher = numba.njit(**options)(fn)
        cache = _disk_cache(fn, fn, f"{cache_tag}{_options_tag(options)}", lazy=True)
        if cache is not None:
            dispatcher._cache = cache  # = enable_caching(), with this key
        return dispatcher

    return wrap


# ---------------------------------------------------------------- building variants
def _jit_scalar(py_func: Any, **options: Any) -> Any:
    # Not cached on disk by itself: numba would key it by its own file only, and keep it
    # when a function it calls (in another file) changed. The loop around it is cached
    # with callee_key, and a loop loaded from the cache needs no compiled scalar.
    return numba.njit(nogil=True, error_model="numpy", **options)(py_func)


def build_loop(
    kernel: ElementwiseKernel, mode: str, aliased: tuple[int, ...] = (), parallel: bool = False
) -> Any:
    """The numba dispatcher for one (kernel, mode) variant; compiles on first call.
    aliased: the arguments that are `out` itself (`_in_place_arguments`); parallel: the
    loop is a prange over a thread team (for SERIAL_CUTOFF elements and more)."""
    configure_threading_layer()
    from nnvmpy.kernel.device import for_device  # device functions it calls: their CPU builds

    body = for_device(kernel.py_func, "cpu")
    if _vector_math(kernel) or aliased:
        # vector math is inlined into the loop at numba's IR level: LLVM's inliner gives up
        # on large bodies (gamma's), and a call per element is not vectorised
        options = {"inline": "always"} if _vector_math(kernel) else {}
        scalar = _jit_scalar(body, **options)
        loop = _fixed_arity_loop(mode, scalar, kernel.py_func.__code__.co_argcount, aliased)
    else:
        loop = _TEMPLATES[mode](_jit_scalar(body))
    dispatcher = numba.njit(parallel=parallel, nogil=True, error_model="numpy")(loop)
    tag = f"cpu-{mode}" + "".join(f"-in{k}" for k in aliased) + ("-par" if parallel else "")
    cache = _disk_cache(loop, kernel.py_func, tag)
    if cache is not None:
        dispatcher._cache = cache  # type: ignore[attr-defined]  # = enable_caching()
    return dispatcher


# ---------------------------------------------------------------- in place
def _vector_math(kernel: ElementwiseKernel) -> bool:
    """Whether the kernel's body calls nnvmpy.kernel.vmath (remembered on the kernel: a
    table keyed by id() would answer for a dead kernel's successor at the same address)."""
    known: bool | None = getattr(kernel, "_calls_vector_math", None)
    if known is None:
        from nnvmpy.kernel.vmath import calls_vector_math

        known = kernel._calls_vector_math = calls_vector_math(kernel.py_func)  # type: ignore[attr-defined]
    return known


def _takes(kernel: ElementwiseKernel, n_args: int) -> bool:
    """The body takes exactly n_args positional arguments (no *args, no defaults left
    out): the fixed-arity loop that reads aliased arguments from out passes each one."""
    code = kernel.py_func.__code__
    return code.co_argcount == n_args and not code.co_flags & _VARARGS


_VARARGS = inspect.CO_VARARGS | inspect.CO_VARKEYWORDS


def _in_place_arguments(flat: list[Any]) -> tuple[int, ...]:
    """The array arguments that are out itself (flat[0]): same start, shape and dtype.

    Why. LLVM vectorises a loop over several arrays behind a run-time check that they
    do not overlap; an in-place launch (the memory planner's FInplaceOption: tanh's
    output in its input's storage) fails the check and runs the scalar loop, where
    vector math costs 10-20x more: tanh on LeNet's 64x500 in place 216 us against 21,
    sigmoid 335 against 19 (exp 147 / 17). Reading such an argument from `out` leaves
    one array in the loop and nothing to check. Kernels without vector math are looked
    at only for the planner's in-place writes (kWriteInplace), where the check pays even
    for a select: relu's gradient on the MLP's 64x512 in place ran 161 us in the
    executor (30 alone, scalar and branchy) against 19 through this loop; elsewhere its
    ~1 us a launch would cost small imperative calls more than it saves."""
    out = flat[0]
    return tuple(k for k, a in enumerate(flat[1:]) if type(a) is np.ndarray and same_array(a, out))


def same_array(a: np.ndarray, b: np.ndarray) -> bool:
    """a and b are one array's elements (same start and dtype; the callers know the shapes
    and layouts match): the cheap overlap test first, the address only when it overlaps."""
    return (
        a.dtype == b.dtype
        and np.may_share_memory(a, b)
        and a.__array_interface__["data"][0] == b.__array_interface__["data"][0]
    )


# ---------------------------------------------------------------- launch
def _bad_array(kernel: str, what: str, a: Any, out_shape: tuple[int, ...]) -> NNVMError:
    if not isinstance(a, np.ndarray):
        where = (
            "a gpu array"
            if hasattr(a, "copy_to_host") or hasattr(a, "__cuda_array_interface__")
            else f"a {type(a).__name__}"
        )
        return NNVMError(
            f"{kernel}: {what} is {where}; a cpu launch expects NumPy arrays "
            "(or numbers for scalar arguments)"
        )
    if a.dtype not in NATIVE_DTYPES and a.dtype != _HALF:
        names = sorted(str(d) for d in NATIVE_DTYPES | {_HALF})
        return NNVMError(
            f"{kernel}: {what} has dtype {a.dtype}, which cpu kernels do not "
            f"support; expected one of {names}"
        )
    if a.shape != out_shape:
        return NNVMError(
            f"{kernel}: {what} has shape {a.shape} but out has shape "
            f"{out_shape}; array arguments must match out element-wise"
        )
    if not a.flags.c_contiguous:
        return NNVMError(
            f"{kernel}: {what} is not C-contiguous (strides {a.strides}); "
            "pass np.ascontiguousarray(...)"
        )
    return NNVMError(f"{kernel}: out is read-only")


def _ok(a: np.ndarray, shape: tuple[int, ...]) -> bool:
    return a.shape == shape and a.flags.c_contiguous and a.dtype in NATIVE_DTYPES


_VARIANT_KEYS = {"write": ("cpu", "write"), "add": ("cpu", "add")}


def launch(
    kernel: ElementwiseKernel,
    dev: Context,
    ctx: Any,
    out: Any,
    mode: str,
    args: tuple[Any, ...],
    in_place: bool = False,
) -> None:
    """out[i] (+)= f(args[i]...) on the CPU; see ElementwiseKernel.launch. in_place: the
    request was kWriteInplace (out is one of the arguments' storage)."""
    # The hot path: plain C-contiguous arrays of native dtypes and Python numbers, which
    # is every launch from nd and the executor. Anything else takes _launch_checked,
    # which also words the errors. 1-d arrays go to the loop as they are (no reshape).
    # out.flags.carray: C-contiguous, aligned and writeable
    if type(out) is np.ndarray and out.dtype in NATIVE_DTYPES and out.flags.carray:
        shape = out.shape
        flat = [out if len(shape) == 1 else out.reshape(-1)]
        for a in args:
            kind = type(a)
            if kind is float or kind is int:
                flat.append(a)
            elif (
                kind is np.ndarray
                and a.shape == shape
                and a.dtype in NATIVE_DTYPES
                and a.flags.c_contiguous
            ):
                flat.append(a if len(shape) == 1 else a.reshape(-1))
            else:
                break
        else:
            if out.size:
                key = _VARIANT_KEYS[mode]
                aliased = (
                    _in_place_arguments(flat)
                    if (in_place or _vector_math(kernel)) and _takes(kernel, len(args))
                    else ()
                )
                if aliased:
                    key = (*key, *(f"in{k}" for k in aliased))
                if out.size < SERIAL_CUTOFF:
                    loop = kernel._variants.get(key) or kernel.variant(
                        key, lambda aliased=aliased: build_loop(kernel, mode, aliased)
                    )
                    loop(*flat)
                else:
                    key = (*key, "parallel")
                    loop = kernel._variants.get(key) or kernel.variant(
                        key, lambda aliased=aliased: build_loop(kernel, mode, aliased, True)
                    )
                    with _threads.region():  # a team out of the process's thread budget
                        loop(*flat)
            return
    _launch_checked(kernel, out, mode, args)


def _in_region(loop: Any) -> Any:
    """loop run inside nnvmpy.threads.region(): its team width comes out of the budget
    the process's other parallel regions leave (two engine workers launching at once
    do not each start a full-width team)."""

    def run(*args: Any) -> None:
        with _threads.region():
            loop(*args)

    return run


def plain_launcher(
    kernel: ElementwiseKernel,
    mode: str | None,
    out_sig: tuple[tuple[int, ...], np.dtype],
    in_sigs: list[tuple[tuple[int, ...], np.dtype]],
    scalars: tuple[Any, ...],
) -> Any:
    """ElementwiseKernel.cpu_launcher: launch()'s fast path with its checks done here."""
    shape, dtype = out_sig
    if (
        mode not in _VARIANT_KEYS
        or dtype not in NATIVE_DTYPES
        or not math.prod(shape)
        or any(s != shape or d not in NATIVE_DTYPES for s, d in in_sigs)
        or any(type(v) is not float and type(v) is not int for v in scalars)
    ):
        return None
    if (  # launch() hands these to NumPy's vectorised math (see NUMPY_MIN_SIZE)
        kernel.numpy_impl is not None
        and len(in_sigs) == 1
        and not scalars
        and in_sigs[0][1] == dtype
        and dtype in _FLOATS
        and math.prod(shape) >= NUMPY_MIN_SIZE
    ):
        return None
    if math.prod(shape) >= SERIAL_CUTOFF:
        key = (*_VARIANT_KEYS[mode], "parallel")
        loop = _in_region(kernel.variant(key, lambda: build_loop(kernel, mode, parallel=True)))
    else:
        loop = kernel.variant(_VARIANT_KEYS[mode], lambda: build_loop(kernel, mode))
    if len(shape) != 1:
        return lambda ins, outs: loop(outs[0].reshape(-1), *[a.reshape(-1) for a in ins], *scalars)
    if not scalars and len(in_sigs) == 1:
        return lambda ins, outs: loop(outs[0], ins[0])
    if not scalars and len(in_sigs) == 2:
        return lambda ins, outs: loop(outs[0], ins[0], ins[1])
    return lambda ins, outs: loop(outs[0], *ins, *scalars)


def _launch_checked(kernel: ElementwiseKernel, out: Any, mode: str, args: tuple[Any, ...]) -> None:
    """launch() for arguments off its fast path: subclasses, float16, scalars of NumPy
    types, and the errors."""
    name = kernel.name
    if not isinstance(out, np.ndarray):
        raise _bad_array(name, "out", out, ())
    shape = out.shape
    if not (_ok(out, shape) and out.flags.writeable):
        if out.dtype == _HALF and out.flags.c_contiguous and out.flags.writeable:
            return _launch_half(kernel, out, mode, args)
        raise _bad_array(name, "out", out, shape)
    flat: list[Any] = []
    for i, a in enumerate(args):
        kind = type(a)
        if kind is float or kind is int:
            flat.append(a)
        elif kind is np.ndarray and _ok(a, shape):
            flat.append(a.reshape(-1))
        elif isinstance(a, np.ndarray):
            if a.dtype == _HALF and a.shape == shape and a.flags.c_contiguous:
                return _launch_half(kernel, out, mode, args)
            if not _ok(a, shape):
                raise _bad_array(name, f"arg {i}", a, shape)
            flat.append(a.view(np.ndarray).reshape(-1))  # a subclass, e.g. np.matrix
        elif isinstance(a, _SCALARS):
            flat.append(float(a) if kind is np.float16 else a)
        else:
            raise _bad_array(name, f"arg {i}", a, shape)
    if out.size == 0:
        return
    if out.size >= SERIAL_CUTOFF:
        key = ("cpu", mode, "parallel")
        loop = _in_region(kernel.variant(key, lambda: build_loop(kernel, mode, parallel=True)))
    else:
        key = ("cpu", mode)
        loop = kernel._variants.get(key) or kernel.variant(key, lambda: build_loop(kernel, mode))
    loop(out.reshape(-1) if type(out) is np.ndarray else out.view(np.ndarray).reshape(-1), *flat)


def _half_to_float32(a: Any, half_out: bool) -> Any:
    """A float16 array as a float32 copy; for a float16 out, a float scalar rounded to
    float16 (MXNet computes `x op half_t(scalar)`: float16 1.7 % 0.1 is 6.1e-4 there and
    2.0e-4 with float32(0.1))."""
    if isinstance(a, np.ndarray):
        return half.to_float32(a) if a.dtype == _HALF else a
    if half_out and isinstance(a, (float, np.floating)):
        return float(np.float16(a))
    return a


def _launch_half(
    kernel: ElementwiseKernel, out: np.ndarray, mode: str, args: tuple[Any, ...]
) -> None:
    """float16 via float32 copies: numba cannot load or store float16 on the CPU."""
    for i, a in enumerate(args):
        if (
            isinstance(a, np.ndarray)
            and a.dtype == _HALF
            and not (a.shape == out.shape and a.flags.c_contiguous)
        ):
            raise _bad_array(kernel.name, f"arg {i}", a, out.shape)
    up = tuple(_half_to_float32(a, out.dtype == _HALF) for a in args)
    if out.dtype != _HALF:
        return launch(kernel, Context("cpu"), None, out, mode, up)
    tmp = half.to_float32(out) if mode == "add" else np.empty(out.shape, np.float32)
    launch(kernel, Context("cpu"), None, tmp, mode, up)
    half.store(out, tmp)
    return None
