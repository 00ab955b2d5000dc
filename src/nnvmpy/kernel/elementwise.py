"""ElementwiseKernel: one scalar function, compiled per device and write request.

    @kernel.elementwise
    def _quadratic(x, a, b, c):
        return a * x * x + b * x + c

    _quadratic.launch(ctx, out, req, x, 2.0, 3.0, 1.0)   # out[i] = f(x[i], 2.0, 3.0, 1.0)

Nothing is compiled (and numba is not even imported) until the first launch. A
variant is one numba dispatcher per (device, mode), mode 'write' or 'add' (on the GPU
also per pattern of array/scalar arguments); the dispatcher keeps one machine-code
specialisation per dtype signature, so compiled code is cached per (device, dtype
signature, req). The device launchers live in cpu.py and cuda.py and are imported on
first use.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Hashable
from typing import Any, NamedTuple

import numpy as np

from ..base import Context, NNVMError, OpReqType

# The write mode for each request; None means kNullOp (do nothing). Keys are the enum
# members (equal to their ints) and every string alias OpReqType.parse accepts.
_REQ_MODES: dict[Hashable, str | None] = {
    OpReqType.kNullOp: None,
    OpReqType.kWriteTo: "write",
    OpReqType.kWriteInplace: "write",
    OpReqType.kAddTo: "add",
}
_REQ_MODES.update(
    {alias: _REQ_MODES[OpReqType.parse(alias)] for alias in ("null", "write", "inplace", "add")}
)
_REQ_MODES.update({m.name: _REQ_MODES[m] for m in OpReqType})
# the spellings of kWriteInplace: a CPU launch then looks for out among the arguments
_IN_PLACE_REQS = frozenset({OpReqType.kWriteInplace, "inplace", "kWriteInplace"})

# launch(kernel, device, ctx as given (for the stream), out, mode, args, in_place)
Launcher = Callable[["ElementwiseKernel", Context, Any, Any, str, tuple[Any, ...], bool], None]
_launchers: dict[str, Launcher] = {}


def req_mode(kernel_name: str, req: Any) -> str | None:
    """'write', 'add' or None (kNullOp) for an OpReqType, its int or its string alias."""
    try:
        return _REQ_MODES[req]
    except (KeyError, TypeError):
        pass
    try:
        return _REQ_MODES[OpReqType.parse(req)]
    except NNVMError as e:
        raise NNVMError(f"{kernel_name}: {e}") from None


def is_gpu_array(x: Any) -> bool:
    """A CUDA array: anything with __cuda_array_interface__, or a simulator device array."""
    return hasattr(x, "__cuda_array_interface__") or (
        hasattr(x, "copy_to_host") and hasattr(x, "shape") and hasattr(x, "dtype")
    )


def array_device(x: Any) -> str | None:
    """'cpu' for a NumPy array, 'gpu' for a CUDA array, None for anything else."""
    if isinstance(x, np.ndarray):
        return "cpu"
    return "gpu" if is_gpu_array(x) else None


def launch_context(kernel_name: str, ctx: Any, out: Any) -> Context:
    """The device a launch runs on: from an OpContext, a Context, or (None) from `out`."""
    if isinstance(ctx, Context):
        return ctx
    if ctx is None:
        device = array_device(out)
        if device is None:
            raise NNVMError(
                f"{kernel_name}: out must be a NumPy array or a CUDA array, "
                f"got {type(out).__name__}"
            )
        return Context(device, 0)
    dev = getattr(ctx, "ctx", None)
    if not isinstance(dev, Context):
        raise NNVMError(
            f"{kernel_name}: ctx must be an OpContext, a Context or None, got {type(ctx).__name__}"
        )
    return dev


def _launcher(device_type: str) -> Launcher:
    if device_type == "gpu":
        from nnvmpy.kernel import cuda

        launch = cuda.launch
    else:
        from nnvmpy.kernel import cpu

        launch = cpu.launch
    _launchers[device_type] = launch
    return launch


class ElementwiseKernel:
    """A scalar function lifted to arrays: out[i] = f(args[0][i], ..., scalar, ...).

    Calling the kernel object calls the plain Python scalar function, which is handy
    in tests and for computing a reference value.
    """

    def __init__(
        self, py_func: Callable[..., Any], numpy_impl: Callable[..., Any] | None = None
    ) -> None:
        self.py_func = py_func
        # f(x, out=...) computing the same thing with NumPy's SIMD loops: numba calls libm
        # once per element for tanh/exp/log/sin (tanh on 737k float32: 6.6 ms vs 0.3 ms)
        self.numpy_impl = numpy_impl
        self.name: str = getattr(py_func, "__name__", "kernel")
        functools.update_wrapper(self, py_func)
        # (device, mode) on cpu; (device, mode, which args are arrays) on gpu
        self._variants: dict[tuple[str, ...], Any] = {}
        self._lock = threading.RLock()  # a build may ask for another variant

    def __call__(self, *args: Any) -> Any:
        return self.py_func(*args)

    def __repr__(self) -> str:
        return f"<ElementwiseKernel {self.name}>"

    def launch(self, ctx: Any, out: Any, req: Any, *args: Any) -> None:
        """Apply the kernel element-wise into `out` according to `req`.

        Args:
            ctx: an OpContext (its device and stream are used), a Context, or None to
                take the device from `out` (NumPy -> cpu, CUDA array -> gpu).
            out: C-contiguous output array; its dtype is the dtype of the result.
            req: OpReqType or 'write' / 'inplace' / 'add' / 'null'.
            *args: arrays with out's shape (same device, C-contiguous) or scalars.

        Raises:
            NNVMError: bad req, unsupported dtype, shape mismatch, non-contiguous or
                mixed-device arrays; the message names the kernel and the argument.
        """
        try:
            mode = _REQ_MODES[req]
            in_place = req in _IN_PLACE_REQS
        except (KeyError, TypeError):  # an int or a spelling not in the table: parse it
            mode = req_mode(self.name, req)
            in_place = False
        if mode is None:
            return
        run_ctx = getattr(ctx, "run_ctx", None)  # an OpContext: the common case, inline
        dev = run_ctx.ctx if run_ctx is not None else launch_context(self.name, ctx, out)
        device_type = "gpu" if dev.device_type == "gpu" else "cpu"
        if device_type == "cpu" and self.numpy_impl is not None and _numpy_ok(out, args):
            if mode == "add":
                out += self.numpy_impl(args[0], out=np.empty_like(out))
            else:
                self.numpy_impl(args[0], out=out)
            return
        launch = _launchers.get(device_type) or _launcher(device_type)
        launch(self, dev, ctx, out, mode, args, in_place)

    def cpu_launcher(
        self,
        req: Any,
        out_sig: tuple[tuple[int, ...], np.dtype],
        in_sigs: list[tuple[tuple[int, ...], np.dtype]],
        scalars: tuple[Any, ...] = (),
    ) -> Callable[[list[Any], list[Any]], None] | None:
        """launch() for one CPU signature checked once: a call `(inputs, outputs)`.

        An imperative call plan runs one signature millions of times on a few elements,
        where launch()'s per-call checks cost more than the loop. The returned function
        takes C-contiguous arrays of exactly these shapes and dtypes (`scalars` follow the
        inputs); None when the signature is off launch()'s plain path (use launch).
        """
        from nnvmpy.kernel.cpu import plain_launcher

        return plain_launcher(self, _REQ_MODES.get(req), out_sig, in_sigs, scalars)

    def gpu_launcher(
        self,
        req: Any,
        device_id: int,
        out_sig: tuple[tuple[int, ...], np.dtype],
        in_sigs: list[tuple[tuple[int, ...], np.dtype]],
        scalars: tuple[Any, ...] = (),
    ) -> Callable[[list[Any], list[Any], Any], None] | None:
        """launch() for one signature on GPU `device_id`, checked once: a call
        `(inputs, outputs, run_ctx)` launching on run_ctx's stream (see cpu_launcher)."""
        from nnvmpy.kernel.cuda import plain_launcher

        return plain_launcher(self, _REQ_MODES.get(req), device_id, out_sig, in_sigs, scalars)

    def variant(self, key: tuple[str, ...], build: Callable[[], Any]) -> Any:
        """The loop for `key` = (device, mode, ...), built once by `build` (thread-safe)."""
        loop = self._variants.get(key)
        if loop is None:
            with self._lock:
                loop = self._variants.get(key)
                if loop is None:
                    loop = self._variants[key] = build()
        return loop

    def signatures(self) -> list[tuple[str, str, Any]]:
        """(device, mode, dtype signature) of every specialisation compiled so far."""
        return [
            (key[0], key[1], sig)
            for key, loop in sorted(self._variants.items())
            if key[1] in ("write", "add")
            for sig in getattr(loop, "signatures", ())
        ]


def elementwise(
    py_func: Callable[..., Any] | None = None, *, numpy_impl: Callable[..., Any] | None = None
) -> Any:
    """Decorator: make a scalar Python function an ElementwiseKernel (compiled lazily).

    `@elementwise(numpy_impl=np.tanh)` adds a NumPy function f(x, out=...) used on CPU
    for one float array of out's dtype, where NumPy's vectorised math is much faster.
    """
    if py_func is None:
        return lambda fn: ElementwiseKernel(fn, numpy_impl)
    return ElementwiseKernel(py_func, numpy_impl)


class ScalarBody(NamedTuple):
    """What an element-wise node computes: outputs[k][i] = kernels[k](*inputs[i], *params).

    The value of an op's FScalarFunction for one node; graph passes (fusion) compose the
    kernels' scalar functions instead of launching one kernel per node.
    """

    kernels: tuple[ElementwiseKernel, ...]
    params: tuple[Any, ...] = ()


def scalar_function(
    *kernels: ElementwiseKernel, params: tuple[str, ...] = ()
) -> Callable[[Any], ScalarBody]:
    """FScalarFunction of an op whose FCompute launches `kernels` (one per output) on its
    inputs followed by the parsed parameters named in `params`, in that order:

        op.set_attr("FScalarFunction", nv.kernel.scalar_function(_cube))
    """
    for k in kernels:
        if not isinstance(k, ElementwiseKernel):
            raise NNVMError(
                f"scalar_function: expected nv.kernel.elementwise kernels, got {k!r:.60}"
            )
    if not kernels:
        raise NNVMError("scalar_function: expected at least one kernel (one per output)")
    body = ScalarBody(tuple(kernels))

    def fscalar(attrs: Any) -> ScalarBody:
        if not params:
            return body
        return ScalarBody(body.kernels, tuple(getattr(attrs.parsed, p) for p in params))

    fscalar.__name__ = f"scalar_{'_'.join(k.name for k in kernels)}"
    return fscalar


_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
#: NumPy's SIMD math is used from this many elements on. Its float32 exp/tanh/log may be
#: 1 ulp from the correctly rounded value (np.exp(float32 1) is 2.718282, libm's expf
#: 2.7182817, which MXNet returns); below this size the work is latency-bound, so the libm
#: loop costs nothing and gives MXNet's values. Same as the kernels' serial cutoff.
NUMPY_MIN_SIZE = 1 << 15


def _numpy_ok(out: Any, args: tuple[Any, ...]) -> bool:
    """One plain float array argument shaped and typed like a NumPy `out`, large enough."""
    if len(args) != 1:
        return False
    x = args[0]
    return (
        type(out) is np.ndarray
        and out.size >= NUMPY_MIN_SIZE
        and type(x) is np.ndarray
        and type(out) is np.ndarray
        and x.dtype == out.dtype
        and out.dtype in _FLOATS
        and x.shape == out.shape
    )
