"""MXNet's `mx.runtime`: which features this build has, under MXNet's feature names.

MXNet reports compile-time flags of libmxnet. nnvmpy has no native library, so each flag
is answered for what actually runs here:

- CUDA: numba.cuda imports and can run kernels (a GPU, or NUMBA_ENABLE_CUDASIM=1);
- CPU_SSE* / CPU_AVX* / SSE / F16C: numba compiles every CPU kernel for the host CPU, so
  these are the host's instruction sets (from /proc/cpuinfo where available);
- BLAS_* / LAPACK: the BLAS NumPy was built with (dot, FullyConnected and convolution
  call it through NumPy), LAPACK through numpy.linalg;
- INT64_TENSOR_SIZE: shapes and indices are int64 everywhere (NumPy, numba kernels);
- everything else (CUDNN, NCCL, TensorRT, MKLDNN, OpenCV, profiler, dist kvstore, ...)
  is absent.

Nothing is computed at `import nnvmpy`; `Features()` computes the table once.
"""

from __future__ import annotations

import collections
import sys
from typing import Any, NamedTuple

from .base import NNVMError

# MXNet 1.9.1's feature names, in its order (libinfo.h).
FEATURE_NAMES = (
    "CUDA",
    "CUDNN",
    "NCCL",
    "CUDA_RTC",
    "TENSORRT",
    "CPU_SSE",
    "CPU_SSE2",
    "CPU_SSE3",
    "CPU_SSE4_1",
    "CPU_SSE4_2",
    "CPU_SSE4A",
    "CPU_AVX",
    "CPU_AVX2",
    "OPENMP",
    "SSE",
    "F16C",
    "JEMALLOC",
    "BLAS_OPEN",
    "BLAS_ATLAS",
    "BLAS_MKL",
    "BLAS_APPLE",
    "LAPACK",
    "MKLDNN",
    "OPENCV",
    "CAFFE",
    "PROFILER",
    "DIST_KVSTORE",
    "CXX14",
    "INT64_TENSOR_SIZE",
    "SIGNAL_HANDLER",
    "DEBUG",
    "TVM_OP",
)

# MXNet feature -> /proc/cpuinfo flag of the host CPU
_CPU_FLAGS = {
    "CPU_SSE": "sse",
    "CPU_SSE2": "sse2",
    "CPU_SSE3": "pni",  # the kernel's name for SSE3
    "CPU_SSE4_1": "sse4_1",
    "CPU_SSE4_2": "sse4_2",
    "CPU_SSE4A": "sse4a",
    "CPU_AVX": "avx",
    "CPU_AVX2": "avx2",
    "SSE": "sse",
    "F16C": "f16c",
}


class FeatureError(NNVMError, RuntimeError):
    """An unknown feature name (a RuntimeError, as MXNet raises)."""


class Feature(NamedTuple):
    """One feature and whether this build has it; prints as MXNet does (✔ NAME / ✖ NAME)."""

    name: str
    enabled: bool

    def __repr__(self) -> str:
        return f"{'✔' if self.enabled else '✖'} {self.name}"


def _cpu_flags() -> set[str]:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def _blas_name() -> str:
    """The BLAS NumPy links ('openblas', 'mkl', 'accelerate', ...), lower-case; '' if unknown."""
    import numpy as np

    try:
        config: Any = np.show_config(mode="dicts")
        return str(config["Build Dependencies"]["blas"]["name"]).lower()
    except Exception:  # NumPy < 1.25 has no mode='dicts'
        return ""


def _cuda_usable() -> bool:
    try:
        from numba import cuda
    except ImportError:
        return False
    try:
        return bool(cuda.is_available())
    except Exception:
        return False


def _detect() -> dict[str, bool]:
    enabled = dict.fromkeys(FEATURE_NAMES, False)
    enabled["CUDA"] = _cuda_usable()
    flags = _cpu_flags()
    for feature, flag in _CPU_FLAGS.items():
        enabled[feature] = flag in flags
    blas = _blas_name()
    enabled["BLAS_OPEN"] = "openblas" in blas
    enabled["BLAS_MKL"] = "mkl" in blas
    enabled["BLAS_APPLE"] = "accelerate" in blas
    enabled["BLAS_ATLAS"] = "atlas" in blas
    enabled["LAPACK"] = True  # numpy.linalg always ships LAPACK (its own lapack_lite at least)
    enabled["INT64_TENSOR_SIZE"] = True
    enabled["DEBUG"] = bool(sys.flags.dev_mode)
    return enabled


def feature_list() -> list[Feature]:
    """Every feature MXNet names, each with whether this build has it."""
    return [Feature(name, on) for name, on in _detect().items()]


class Features(collections.OrderedDict):
    """name -> Feature for this build; one instance per process, as in MXNet."""

    instance: Features | None = None

    def __new__(cls) -> Features:
        if cls.instance is None:
            cls.instance = super().__new__(cls)
            super().__init__(cls.instance, [(f.name, f) for f in feature_list()])
        return cls.instance

    def __init__(self) -> None:  # filled once, in __new__
        pass

    def __repr__(self) -> str:
        return str(list(self.values()))

    def is_enabled(self, feature_name: str) -> bool:
        """Whether the feature is on; an unknown name raises FeatureError (a RuntimeError)."""
        if not isinstance(feature_name, str):
            raise FeatureError(
                "Features.is_enabled: feature_name expects a str, got "
                f"{type(feature_name).__name__}"
            )
        name = feature_name.upper()
        if name not in self:
            raise FeatureError(
                f"Features.is_enabled: unknown feature {feature_name!r}; "
                f"known features are {list(self.keys())}"
            )
        feature: Feature = self[name]
        return feature.enabled


__all__ = ["Feature", "FeatureError", "Features", "feature_list"]
