"""What the test is running on: environment variables, the machine, the GPU.

MXNet's tests ask its C runtime for these; nnvmpy's runtime is this Python process, so the
environment is os.environ (what nnvmpy's config and engine read) and the GPU is whatever
numba.cuda sees (imported only when a GPU is asked about).
"""

from __future__ import annotations

import os
import platform

from ..base import Context, NNVMError, current_context


def getenv(name: str) -> str | None:
    """The value of environment variable `name`, or None if it is not set."""
    if not isinstance(name, str):
        raise NNVMError(f"getenv: name expects a str, got {name!r}")
    return os.environ.get(name)


def setenv(name: str, value: str | None) -> None:
    """Set environment variable `name` to `value`; None unsets it."""
    if not isinstance(name, str) or not (value is None or isinstance(value, str)):
        raise NNVMError(
            f"setenv: expects a str name and a str-or-None value, got {name!r}={value!r}"
        )
    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = value


def is_aarch64_run() -> bool:
    """True on an aarch64 (ARM64) machine, where some of MXNet's tests relax tolerances."""
    return platform.machine().lower() in ("aarch64", "arm64")


def has_tvm_ops() -> bool:
    """False: nnvmpy has no TVM-generated operators (its kernels are numba's)."""
    return False


def is_op_runnable() -> bool:
    """True: without TVM operators, every op runs on every device nnvmpy supports (MXNet's
    only exception is TVM ops on GPUs older than compute capability 5.3)."""
    return True


def get_cuda_compute_capability(ctx: Context) -> int:
    """The CUDA compute capability of GPU `ctx` as major * 10 + minor (70 for sm_70)."""
    if not isinstance(ctx, Context) or ctx.device_type != "gpu":
        raise NNVMError(
            f"get_cuda_compute_capability: expects a gpu context, got {ctx!r} "
            f"(current context {current_context()})"
        )
    from nnvmpy.base import num_gpus

    count = num_gpus()
    if ctx.device_id >= count:
        raise NNVMError(
            f"get_cuda_compute_capability: {ctx} is not available ({count} GPU(s) visible)"
        )
    from numba import cuda

    major, minor = cuda.gpus[ctx.device_id].compute_capability
    return int(major) * 10 + int(minor)
