"""Hand-written kernels for ops that are not element-wise, compiled on first use.

    @kernel.cpu_kernel
    def _pool_cpu(out, x, k): ...            # numba.njit(parallel=True, nogil=True), cached

    @kernel.cuda_kernel
    def _pool_cuda(out, x, k): ...           # numba.cuda.jit
    _pool_cuda[blocks, threads, stream](out, x, k)
    _pool_cuda.launch(ctx, n, out, x, k)     # enough threads for n items, on ctx's stream

Decorating compiles nothing and imports neither numba nor numba.cuda, so an op file
can define its GPU kernel and still import on a machine without the `gpu` extra.

Both may call device functions (kernel.device_function), named as plain globals, as
parallel_for bodies do: each is built from the copy kernel.device.for_device makes, so a
rule written once (a pooling window, an index clamp) serves the hand-written kernels of
both devices and the parallel_for ones. The CUDA copy also gets the GPU's `np`
(kernel/_gpu_numpy.py: np.floor and friends, which numba-cuda lacks).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, overload

from ..base import NNVMError
from .device import for_device


class _Lazy:
    """Builds a numba dispatcher from `py_func` on first use, once, thread-safely."""

    def __init__(self, py_func: Callable[..., Any]) -> None:
        self.py_func = py_func
        self.__name__ = getattr(py_func, "__name__", "kernel")
        self.__doc__ = py_func.__doc__
        self._dispatcher: Any = None
        self._lock = threading.Lock()

    def _build(self) -> Any:
        raise NotImplementedError

    @property
    def dispatcher(self) -> Any:
        """The numba dispatcher (created on first access; it compiles per signature)."""
        if self._dispatcher is None:
            with self._lock:
                if self._dispatcher is None:
                    self._dispatcher = self._build()
        return self._dispatcher

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.__name__}>"


class CPUKernel(_Lazy):
    """A numba CPU kernel: `numba.njit(parallel=..., nogil=True)` on first call, cached on
    disk as kernel.cpu caches (keyed by callees)."""

    def __init__(
        self, py_func: Callable[..., Any], parallel: bool = True, reassociate: bool = False
    ) -> None:
        super().__init__(py_func)
        self.parallel = parallel
        self.reassociate = reassociate  # float sums may be reordered (vector reductions)

    def _build(self) -> Any:
        from nnvmpy.kernel import cpu

        cpu.configure_threading_layer()

        options: dict[str, Any] = {"parallel": self.parallel, "nogil": True, "error_model": "numpy"}
        if self.reassociate:
            options["fastmath"] = {"reassoc", "contract"}
        fn = for_device(self.py_func, "cpu")
        # keyed by callees: numba's own cache checks this file only and kept stale code
        # after an edit to a callee elsewhere
        return cpu.cached_njit(cache_tag="cpuk1", **options)(fn)

    def __call__(self, *args: Any) -> Any:
        return self.dispatcher(*args)


class CUDAKernel(_Lazy):
    """A numba.cuda kernel compiled on first launch: `k[grid, block](...)` or `k.launch`."""

    def _build(self) -> Any:
        from nnvmpy.kernel.cuda import get_cuda
        from nnvmpy.kernel.disk_cache import enable_cuda_cache

        fn = for_device(self.py_func, "gpu")
        dispatcher = get_cuda(self.__name__).jit(fn)
        enable_cuda_cache(dispatcher, fn, "cudak1")  # keyed by its code and callees
        return dispatcher

    def __getitem__(self, config: Any) -> Any:
        return self.dispatcher[config]

    def launch(self, ctx: Any, n: int, *args: Any) -> None:
        """Run with enough threads for `n` work items (grid-stride kernels may use fewer).

        Args:
            ctx: an OpContext (its GPU and stream are used), a Context, or None (gpu(0)).
            n: number of work items.
        """
        from nnvmpy.kernel.cuda import launch_config, launch_kernel

        if n < 0:
            raise NNVMError(f"{self.__name__}: n must be >= 0, got {n}")
        if n == 0:
            return
        blocks, threads, stream, device = launch_config(self.__name__, ctx, n)
        with device:
            launch_kernel(self.dispatcher, blocks, threads, stream, args)


@overload
def cpu_kernel(
    py_func: Callable[..., Any], *, parallel: bool = True, reassociate: bool = False
) -> CPUKernel: ...
@overload
def cpu_kernel(
    py_func: None = None, *, parallel: bool = True, reassociate: bool = False
) -> Callable[[Callable[..., Any]], CPUKernel]: ...
def cpu_kernel(
    py_func: Callable[..., Any] | None = None, parallel: bool = True, reassociate: bool = False
) -> Any:
    """Lazy numba CPU kernel; use as `@cpu_kernel` or `@cpu_kernel(parallel=False)`.

    reassociate=True lets LLVM reorder float sums (numba's fastmath reassoc + contract):
    a dot product then runs as vector partial sums, not one serial chain.
    """
    if py_func is None:
        return lambda f: CPUKernel(f, parallel, reassociate)
    return CPUKernel(py_func, parallel, reassociate)


def cuda_kernel(py_func: Callable[..., Any]) -> CUDAKernel:
    """Lazy numba.cuda kernel: nothing is imported or compiled until the first launch."""
    return CUDAKernel(py_func)
