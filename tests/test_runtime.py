"""nv.runtime.Features: MXNet's feature names, answered truthfully for this process."""

from __future__ import annotations

import os

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy.runtime import Feature, FeatureError, Features, feature_list

# MXNet 1.9.1's libinfo feature names
MXNET_FEATURES = [
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
]


def test_features_is_a_singleton_dict_of_every_mxnet_feature() -> None:
    features = Features()
    assert features is Features()
    assert list(features) == MXNET_FEATURES
    assert all(isinstance(f, Feature) and f.name == name for name, f in features.items())
    assert [f.name for f in feature_list()] == MXNET_FEATURES
    assert nv.runtime.Features is Features


def test_is_enabled_agrees_with_each_feature() -> None:
    features = Features()
    for name, feature in features.items():
        assert features.is_enabled(name) is feature.enabled
        assert features.is_enabled(name.lower()) is feature.enabled


def test_features_print_as_mxnet_prints_them() -> None:
    assert repr(Feature("CUDA", True)) == "✔ CUDA"
    assert repr(Feature("CUDA", False)) == "✖ CUDA"
    assert repr(Features()).startswith("[")
    assert "INT64_TENSOR_SIZE" in repr(Features())


def test_unknown_feature_is_a_runtime_error_naming_it() -> None:
    with pytest.raises(RuntimeError, match="unknown feature 'this girl is on fire'"):
        Features().is_enabled("this girl is on fire")
    with pytest.raises(nv.NNVMError, match="feature_name expects a str, got int"):
        Features().is_enabled(3)  # type: ignore[arg-type]
    assert issubclass(FeatureError, nv.NNVMError)
    assert Features().is_enabled("LAPACK")  # still answers afterwards


def test_features_nnvmpy_lacks_are_off() -> None:
    features = Features()
    for name in (
        "CUDNN",
        "NCCL",
        "TENSORRT",
        "MKLDNN",
        "OPENCV",
        "CAFFE",
        "DIST_KVSTORE",
        "TVM_OP",
    ):
        assert not features.is_enabled(name)
    assert features.is_enabled("INT64_TENSOR_SIZE")
    big = np.iinfo(np.int32).max + 10  # shapes are int64: no 32-bit size limit
    assert nv.nd.empty((0, big)).shape == (0, big)


def test_cuda_means_numba_cuda_can_run_kernels() -> None:
    try:
        from numba import cuda

        usable = bool(cuda.is_available())
    except ImportError:
        usable = False
    assert Features().is_enabled("CUDA") is usable


def test_cpu_features_are_the_hosts_instruction_sets() -> None:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            text = f.read()
    except OSError:
        pytest.skip("no /proc/cpuinfo on this system")
    flags = next(line for line in text.splitlines() if line.startswith("flags")).split()
    features = Features()
    assert features.is_enabled("CPU_AVX2") == ("avx2" in flags)
    assert features.is_enabled("CPU_SSE4_2") == ("sse4_2" in flags)
    assert features.is_enabled("F16C") == ("f16c" in flags)


def test_debug_follows_python_dev_mode() -> None:
    import subprocess
    import sys

    code = "from nnvmpy.runtime import Features; print(Features().is_enabled('DEBUG'))"
    env = {**os.environ, "PYTHONDEVMODE": "1"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, check=True)
    assert out.stdout.decode().strip() == "True"
