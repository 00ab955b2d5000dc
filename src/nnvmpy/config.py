"""Every NNVMPY_* environment knob in one place: name, type, default, and what it does.

Values are read when first used, so tests may set os.environ before touching the engine.
"""

from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(frozen=True)
class Knob:
    name: str
    default: str
    doc: str
    mxnet_name: str = ""  # MXNet's spelling of the same knob, read when ours is unset

    def get(self) -> str:
        value = os.environ.get(self.name)
        if value is None and self.mxnet_name:
            value = os.environ.get(self.mxnet_name)
        return self.default if value is None else value

    def get_int(self) -> int:
        return int(self.get())


ENGINE_TYPE = Knob(
    "NNVMPY_ENGINE_TYPE",
    "ThreadedEnginePerDevice",
    "NaiveEngine (synchronous, for debugging ordering), ThreadedEngine, or "
    "ThreadedEnginePerDevice (default: a worker pool per device).",
)
CPU_WORKER_NTHREADS = Knob(
    "NNVMPY_CPU_WORKER_NTHREADS",
    "1",
    "Engine worker threads per CPU device (MXNET_CPU_WORKER_NTHREADS, same default): the "
    "operators parallelise inside (numba and MKL teams), and one worker keeps one team "
    "warm between operators instead of two teams that each go cold.",
)
OMP_SPINCOUNT = Knob(
    "NNVMPY_OMP_SPINCOUNT",
    "30000",
    "How long an idle OpenMP team thread spins before it sleeps (GNU OpenMP's "
    "GOMP_SPINCOUNT, set from this when neither it nor OMP_WAIT_POLICY is set): long "
    "enough to bridge the gap between two operators, short enough not to hold a core "
    "others need; 0: sleep at once (OMP_WAIT_POLICY=PASSIVE).",
)
NUM_THREADS = Knob(
    "NNVMPY_NUM_THREADS",
    "0",
    "Most CPU threads the process computes with at once, shared by OpenBLAS, numba's "
    "parallel kernels and the ufunc pool (nnvmpy.threads); 0: the cores the process may "
    "run on.",
)
CPU_PARALLEL_SIZE = Knob(
    "NNVMPY_CPU_PARALLEL_SIZE",
    "200000",
    "Element-wise, broadcast and other CPU loops over fewer items than this run on the "
    "calling thread; from this size on they start a parallel team (MXNet's "
    "MXNET_CPU_PARALLEL_SIZE, also read, same default). Read once, at import.",
    mxnet_name="MXNET_CPU_PARALLEL_SIZE",
)
THREADS_ADAPT = Knob(
    "NNVMPY_THREADS_ADAPT",
    "1",
    "1: a daemon thread follows the machine's load (other processes' running threads, "
    "every 0.1 s) and narrows parallel regions and OpenBLAS to the cores left, at least 1, "
    "so a busy machine does not leave teams waiting for a core; 0: always NNVMPY_NUM_THREADS.",
)
GPU_WORKER_NTHREADS = Knob(
    "NNVMPY_GPU_WORKER_NTHREADS",
    "2",
    "Engine worker threads per GPU device (MXNET_GPU_WORKER_NTHREADS).",
)
GPU_COPY_NTHREADS = Knob(
    "NNVMPY_GPU_COPY_NTHREADS",
    "2",
    "Engine copy threads per GPU device, each with its own CUDA stream: host<->GPU and "
    "cross-GPU copies (FnProperty.COPY_TO_GPU / COPY_FROM_GPU) run there, so they overlap "
    "the device's kernels instead of queueing behind them. MXNet's MXNET_GPU_COPY_NTHREADS "
    "is read too.",
    mxnet_name="MXNET_GPU_COPY_NTHREADS",
)
GPU_STREAMS = Knob(
    "NNVMPY_GPU_STREAMS",
    "1",
    "1: each GPU engine worker launches on its own CUDA stream and a GPU function completes "
    "when that stream has run it (engine/streams.py); 0: the device's default stream. Read "
    "by each worker thread when it first runs a GPU function.",
)
GPU_STREAM_ORDER = Knob(
    "NNVMPY_GPU_STREAM_ORDER",
    "0",
    "1: a GPU compute function completes when its kernels are queued, and whoever takes its "
    "variables over is ordered after them on the device (engine/fences.py): dependent GPU "
    "ops launch without waiting for each other; 0 (default until it has passed on "
    "hardware): when its stream has run it.",
)
NUMBA_THREADING_LAYER = Knob(
    "NNVMPY_NUMBA_THREADING_LAYER",
    "threadsafe",
    "numba threading layer for parallel=True kernels. Engine threads launch kernels "
    "concurrently, so it must be thread-safe: 'threadsafe' (omp where numba has it, else "
    "tbb: MKL shares omp's libgomp), 'tbb' or 'omp'. "
    "'workqueue' is refused.",
)
CPU_512BIT = Knob(
    "NNVMPY_CPU_512BIT",
    "1",
    "1: on CPUs with AVX-512, numba code is vectorised with 512-bit registers (LLVM's "
    "tuning prefers 256-bit; the compute-bound float32 math of kernel.vmath runs ~1.7x "
    "faster with 16 lanes), set before numba's first compile; 0: LLVM's choice. A "
    "NUMBA_CPU_FEATURES set by the user wins.",
)
ELIMINATE_COMMON_EXPR = Knob(
    "NNVMPY_ELIMINATE_COMMON_EXPR",
    "1",
    "1: bound graphs merge duplicate pure computations (the EliminateCommonExpr pass), "
    "0: they run as written. MXNet's MXNET_ELIMINATE_COMMON_EXPR is read too.",
    mxnet_name="MXNET_ELIMINATE_COMMON_EXPR",
)
FUSION = Knob(
    "NNVMPY_FUSION",
    "1",
    "1: bound graphs run each group of connected element-wise nodes (forward and backward) "
    "as one generated kernel (the FusePointwise pass, docs/fusion.md), 0: one kernel per "
    "node. MXNet's MXNET_USE_FUSION is read too.",
    mxnet_name="MXNET_USE_FUSION",
)
SIMPLIFY_INFERENCE = Knob(
    "NNVMPY_SIMPLIFY_INFERENCE",
    "1",
    "1: executors bound without gradients run the SimplifyInference pass (BatchNorm "
    "folded into the Convolution/FullyConnected before it, Dropout removed; "
    "docs/inference.md), 0: they run the graph as written.",
)
MEMORY_PLAN = Knob(
    "NNVMPY_MEMORY_PLAN",
    "arena",
    "arena: an executor's planned blocks are byte ranges of one buffer packed by lifetime "
    "(ResNet-18 training at batch 32: 619 MiB), blocks: NNVM's one buffer per block, "
    "reused whole (732 MiB); docs/memory.md.",
)
FUSE_EPILOGUE = Knob(
    "NNVMPY_FUSE_EPILOGUE",
    "1",
    "1: executors bound without gradients run the FuseEpilogue pass (a convolution's "
    "residual add and relu applied in its output loop; docs/inference.md), 0: separate "
    "nodes.",
)
FUSE_BN_RELU = Knob(
    "NNVMPY_FUSE_BN_RELU",
    "1",
    "1: executors bound for training rewrite each BatchNorm whose output only a relu reads "
    "into one _contrib_BatchNormWithReLU node, and each BatchNorm -> add -> relu chain into "
    "one _BatchNormAddReLU node, before building the gradient (the FuseBatchNormReLU pass: "
    "relu and the add inside BatchNorm's kernels, forward and backward), 0: separate nodes.",
)
CHANNELS_LAST = Knob(
    "NNVMPY_CHANNELS_LAST",
    "1",
    "1: CPU executors bound without gradients run the ChannelsLast pass (the layers that "
    "are faster on (N, H, W, C) data, strided and 1x1 convolutions, run in that layout, "
    "kept between them; docs/inference.md), 0: every layer channels-first.",
)
INFER_BF16 = Knob(
    "NNVMPY_INFER_BF16",
    "0",
    "1: CPU executors bound without gradients run every Convolution (1-D/2-D) and "
    "FullyConnected whose data is float32 in bfloat16 with float32 accumulation (the "
    "AmpBFloat16 pass; MKL's bfloat16 GEMM, else an emulation; docs/inference.md), except "
    "nodes marked __amp_dtype__='float32'; 0: only the nodes nv.contrib.amp.convert_symbol "
    "marked.",
)
EXEC_BULK_EXEC_INFERENCE = Knob(
    "NNVMPY_EXEC_BULK_EXEC_INFERENCE",
    "1",
    "1: an executor without backward nodes pushes its whole forward graph to the engine "
    "as one operation (Custom/legacy ops apart; executor/bulk.py), 0: one push per node. "
    "MXNet's MXNET_EXEC_BULK_EXEC_INFERENCE is read too.",
    mxnet_name="MXNET_EXEC_BULK_EXEC_INFERENCE",
)
EXEC_BULK_EXEC_TRAIN = Knob(
    "NNVMPY_EXEC_BULK_EXEC_TRAIN",
    "1",
    "1: an executor with backward nodes pushes runs of consecutive forward (backward) "
    "nodes as one operation each, at most ..._MAX_NODE_TRAIN_FWD (_BWD) nodes, 0: one push "
    "per node. MXNet's MXNET_EXEC_BULK_EXEC_TRAIN is read too.",
    mxnet_name="MXNET_EXEC_BULK_EXEC_TRAIN",
)
EXEC_BULK_EXEC_MAX_NODE_TRAIN_FWD = Knob(
    "NNVMPY_EXEC_BULK_EXEC_MAX_NODE_TRAIN_FWD",
    "15",
    "Most forward nodes per bulk segment of a training executor (MXNet's "
    "MXNET_EXEC_BULK_EXEC_MAX_NODE_TRAIN_FWD, also read); 0 or 1: no forward bulking.",
    mxnet_name="MXNET_EXEC_BULK_EXEC_MAX_NODE_TRAIN_FWD",
)
EXEC_BULK_EXEC_MAX_NODE_TRAIN_BWD = Knob(
    "NNVMPY_EXEC_BULK_EXEC_MAX_NODE_TRAIN_BWD",
    "15",
    "Most backward nodes per bulk segment of a training executor (MXNet's "
    "MXNET_EXEC_BULK_EXEC_MAX_NODE_TRAIN_BWD, also read); 0 or 1: no backward bulking.",
    mxnet_name="MXNET_EXEC_BULK_EXEC_MAX_NODE_TRAIN_BWD",
)
FUSION_CACHE_DIR = Knob(
    "NNVMPY_FUSION_CACHE_DIR",
    "~/.cache/nnvmpy/fusion",
    "Where generated fused kernels are written (with numba's compiled code beside them), "
    "so a later process loads them instead of compiling; empty: compile in memory only.",
)
CONV_ALGO = Knob(
    "NNVMPY_CONV_ALGO",
    "auto",
    "CPU algorithm of 3x3 stride-1 convolutions: 'auto' (time the GEMM paths and Winograd "
    "once per layer shape, remember the fastest; docs/convolution.md), 'gemm', 'winograd' "
    "(F(2x2,3x3)), 'winograd2' or 'winograd4' (F(4x4,3x3)).",
)
CONV_ALGO_CACHE = Knob(
    "NNVMPY_CONV_ALGO_CACHE",
    "~/.cache/nnvmpy/conv_algo.json",
    "JSON file where measured convolution algorithm choices are kept for later processes; "
    "empty: measure in every process.",
)
BLAS = Knob(
    "NNVMPY_BLAS",
    "auto",
    "cblas library of the convolution and FullyConnected GEMMs: 'auto' (Intel MKL when the "
    "optional `mkl` wheel is installed, pip install 'nnvmpy[mkl]', else NumPy's OpenBLAS), "
    "'mkl' or 'openblas'. MKL runs on GNU OpenMP threads (MKL_THREADING_LAYER=SEQUENTIAL: "
    "one thread per call); both follow NNVMPY_NUM_THREADS and the load governor.",
)
CUPY = Knob(
    "NNVMPY_CUPY",
    "1",
    "1 (default; the whole gpu suite passed with it on an H200): on a real GPU with CuPy "
    "installed, GEMMs run on cuBLAS and device memory comes from CuPy's pool "
    "(kernel/gpu_lib.py); 0: numba.cuda kernels and allocations only.",
)
GPU_TF32 = Knob(
    "NNVMPY_GPU_TF32",
    "0",
    "float32 GEMMs on cuBLAS's TF32 tensor-core path (inputs rounded to 10 mantissa bits, "
    "float32 sums, ~1e-3 relative error): 'conv' for convolution and deconvolution GEMMs "
    "(what cuDNN, so MXNet and PyTorch, do by default on Ampere and later GPUs), 'all' for "
    "every GEMM (dot, batch_dot, FullyConnected too: PyTorch's matmul.allow_tf32), '0' "
    "(default) for none: float32 results agree with the CPU's to rounding. NVIDIA's "
    "NVIDIA_TF32_OVERRIDE=0 turns TF32 off inside cuBLAS whatever this says.",
)
GPU_SPLIT_K = Knob(
    "NNVMPY_GPU_SPLIT_K",
    "1",
    "1 (default): a float32/float64 GPU GEMM whose output has fewer tiles than the device "
    "has multiprocessors and whose inner size is long (a convolution's weight gradient) "
    "runs as a batch of GEMMs over slices of the inner size plus a sum of their partial "
    "products (ops/_gemm_split.py); 0: one GEMM however small its output.",
)
GPU_FAST_LAUNCH = Knob(
    "NNVMPY_GPU_FAST_LAUNCH",
    "1",
    "1 (default; the whole gpu suite passed with it on an H200): GPU kernels launch "
    "through kernel/cuda_fast.py (each kernel's loaded function and argument types kept "
    "per thread after its first launch, arguments marshalled directly) instead of "
    "numba-cuda's per-launch resolution; 0: numba-cuda's.",
)
GPU_DISK_CACHE = Knob(
    "NNVMPY_GPU_DISK_CACHE",
    "1",
    "1: compiled GPU kernels (element-wise, parallel_for, hand-written, broadcast and "
    "fused) are cached on disk as CPU kernels are, keyed by their code and every function "
    "they call, beside their module's file (fused: NNVMPY_FUSION_CACHE_DIR) or under "
    "NUMBA_CACHE_DIR (kernel/disk_cache.py); 0: every process compiles them again.",
)
POISON_MEMORY = Knob(
    "NNVMPY_POISON_MEMORY",
    "0",
    "1: every block the storage pool hands out, and every scratch space, is first filled "
    "with 0xFF bytes (NaN for floats), so a kernel that reads memory it never wrote shows "
    "up as NaNs instead of passing on fresh zeroed pages (a debugging aid; slower).",
)
PROFILER_AUTOSTART = Knob(
    "NNVMPY_PROFILER_AUTOSTART",
    "0",
    "1: `import nnvmpy` starts nv.profiler with profile_all and aggregate_stats, and the "
    "trace is dumped to profile.json at exit (MXNet's MXNET_PROFILER_AUTOSTART, also read).",
    mxnet_name="MXNET_PROFILER_AUTOSTART",
)

ALL_KNOBS = [
    ENGINE_TYPE,
    CPU_WORKER_NTHREADS,
    OMP_SPINCOUNT,
    GPU_WORKER_NTHREADS,
    GPU_COPY_NTHREADS,
    GPU_STREAMS,
    GPU_STREAM_ORDER,
    NUM_THREADS,
    CPU_PARALLEL_SIZE,
    THREADS_ADAPT,
    NUMBA_THREADING_LAYER,
    ELIMINATE_COMMON_EXPR,
    FUSION,
    SIMPLIFY_INFERENCE,
    FUSE_EPILOGUE,
    FUSE_BN_RELU,
    EXEC_BULK_EXEC_INFERENCE,
    EXEC_BULK_EXEC_TRAIN,
    EXEC_BULK_EXEC_MAX_NODE_TRAIN_FWD,
    EXEC_BULK_EXEC_MAX_NODE_TRAIN_BWD,
    FUSION_CACHE_DIR,
    CONV_ALGO,
    CONV_ALGO_CACHE,
    BLAS,
    CUPY,
    GPU_TF32,
    GPU_SPLIT_K,
    GPU_FAST_LAUNCH,
    GPU_DISK_CACHE,
    POISON_MEMORY,
    PROFILER_AUTOSTART,
]
