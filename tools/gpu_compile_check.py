"""Compile every GPU kernel the gpu-marked tests launch to sm_90 PTX, without a GPU.

    python3 tools/gpu_compile_check.py [--list FILE] [--ptx-stats REGEX] [--f64]
                                        [--fast-launch] [pytest args...]
                                          # pytest args by default: -m gpu tests -n 2

The simulator runs kernels as Python, so a kernel numba-cuda cannot type or lower for a
real GPU (an unsupported call, a float16 cast, a dtype mismatch in a shared array) passes
there and fails only on hardware, where device time is scarce (issue 16). This tool runs
the tests on numba-cuda's real CUDA target with the driver faked:

- `numba.cuda` is the real one; `is_available`, the device (compute capability 9.0, 132
  SMs), its context, streams and events are stand-ins;
- device arrays are numba DeviceNDArrays over made-up addresses, so nnvmpy builds its
  views, flattens and marshals them as on hardware; host copies in and out go to host
  bytes behind those addresses (kernels write nothing there);
- a kernel launch types its arguments, compiles for them and asks NVVM for the PTX
  (sm_90a, as numba-cuda builds on a cc 9.0 GPU), then returns without running anything.
  Kernels are cached on disk as on a GPU (kernel/disk_cache.py; NNVMPY_GPU_DISK_CACHE=0
  turns that off): an entry holds the LLVM IR and the PTX, and a later run loads it
  instead of typing, lowering and running NVVM again.

The tests' own assertions fail (every array reads back zeros); only compile outcomes are
collected, and which kernels have no disk-cache key (kernel/disk_cache.py: a closure over
a dispatcher or other non-plain data), so every process compiles them again: each is
printed as NOT CACHED. NVVM and NVRTC come from PyPI (`pip install nvidia-nvvm nvidia-cuda-nvrtc`),
no driver needed. It prints each kernel signature compiled and each one that failed,
with the error and the first test that reached it; exit 1 if any failed. A kernel whose
parameters take more than PARAM_LIMIT bytes (4 KB, what every CUDA setup loads; a
multi-tensor launch, kernel/multi_tensor.py, passes many arrays) counts as failed.

--ptx-stats REGEX prints, for the kernels whose name matches, their PTX's instruction count,
integer divisions by width, double-precision instructions and parameter bytes
(`ptx_stats`): a static look at index arithmetic.
--f64 lists the signatures of float32 (and integer) arrays only whose PTX still computes in
double precision, most first: a Python float constant or a float64 accumulator promotes a
float32 kernel's arithmetic to f64, which runs at 1/2 (H100) to 1/64 (consumer GPUs) of the
float32 rate and doubles the registers. Some are deliberate (float64 sums of long rows,
softmax's exp computed as the CPU computes it); the list says where to look.
--fast-launch also turns kernel/cuda_fast.py's direct launches on and compares each one
with numba-cuda's own marshalling of the same launch (tools/fast_launch_check.py).

About two minutes for the whole gpu suite on two cores.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

CC = (9, 0)
SM_COUNT = 132
_RECORDS_ENV = "NNVMPY_COMPILE_CHECK_DIR"
_FAST_ENV = "NNVMPY_COMPILE_CHECK_FAST_LAUNCH"


# ---------------------------------------------------------------- the faked driver
class _FakeDevice:
    id = 0
    compute_capability = CC
    MULTIPROCESSOR_COUNT = SM_COUNT
    name = b"compile-only sm_90"

    def __enter__(self) -> _FakeDevice:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def get_primary_context(self) -> _FakeContext:
        return _FakeContext()


class _FakeContext:
    device = _FakeDevice()

    def get_memory_info(self) -> tuple[int, int]:
        return (1 << 36, 1 << 37)


class _FakeStream:
    handle = ctypes.c_void_p(0)

    def synchronize(self) -> None:
        pass


class _FakeEvent:
    def record(self, stream: Any = 0) -> None:
        pass

    def query(self) -> bool:
        return True

    def synchronize(self) -> None:
        pass

    def wait(self, stream: Any = 0) -> None:
        pass


class _Memory:
    """Device memory as host bytes: what the host copies in reads back (an op reading
    an uploaded index array, sequence_length or a condition goes on as it would on a GPU);
    kernels run nowhere, so what they would write stays zero."""

    def __init__(self) -> None:
        self.bases: list[int] = []
        self.blocks: dict[int, Any] = {}
        self.next = 1 << 40

    def allocate(self, nbytes: int) -> int:
        import numpy as np

        base = self.next
        self.next += -(-nbytes // 4096) * 4096 + 4096
        self.bases.append(base)  # increasing: bisect finds a block
        self.blocks[base] = np.zeros(nbytes, np.uint8)
        return base

    def _at(self, address: int, nbytes: int) -> Any:
        import bisect

        i = bisect.bisect_right(self.bases, address) - 1
        if i < 0 or nbytes <= 0:
            return None
        block = self.blocks[self.bases[i]]
        start = address - self.bases[i]
        return block[start : start + nbytes] if start + nbytes <= block.size else None

    def write(self, address: int, data: Any) -> None:
        target = self._at(address, data.size)
        if target is not None:
            target[...] = data

    def read(self, address: int, nbytes: int) -> Any:
        import numpy as np

        found = self._at(address, nbytes)
        return found.copy() if found is not None else np.zeros(nbytes, np.uint8)


class _Gpus(list):  # cuda.gpus: indexing gives the device, as a context manager
    def __getitem__(self, i: Any) -> Any:
        return _FakeDevice()


def install(records: list[dict[str, Any]]) -> None:
    """Fake the CUDA driver under the real numba.cuda; launches compile to PTX and append
    {kernel, types, error} to `records`. Call before nnvmpy touches numba.cuda."""
    if os.environ.get("NUMBA_ENABLE_CUDASIM", "0") != "0":
        raise RuntimeError("gpu_compile_check: run without NUMBA_ENABLE_CUDASIM=1")
    os.environ.setdefault("NNVMPY_CUPY", "0")  # CuPy would need the driver
    # direct launches need loaded functions; --fast-launch fakes those (fast_launch_check)
    os.environ.setdefault("NNVMPY_GPU_FAST_LAUNCH", "0")
    import numpy as np
    from numba import cuda
    from numba.cuda import api, dispatcher
    from numba.cuda.cudadrv import devicearray, devices, driver

    memory = _Memory()

    def device_array(
        shape: Any, dtype: Any = np.float64, strides: Any = None, order: str = "C", stream: Any = 0
    ) -> Any:
        dtype = np.dtype(dtype)
        shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(int(s) for s in shape)
        nbytes = max(int(np.prod(shape)) * dtype.itemsize, 1)
        address = memory.allocate(nbytes)
        pointer = driver.MemoryPointer(_FakeContext(), ctypes.c_void_p(address), nbytes)
        c_strides, step = [], dtype.itemsize
        for n in reversed(shape):
            c_strides.append(step)
            step *= n
        return devicearray.DeviceNDArray(shape, tuple(reversed(c_strides)), dtype, stream, pointer)

    def to_device(a: Any, stream: Any = 0, copy: bool = True, to: Any = None) -> Any:
        a = np.asarray(a)
        a = a if a.flags.c_contiguous else a.copy()  # (ascontiguousarray makes 0-d 1-d)
        if to is None:
            to = device_array(a.shape, a.dtype)
        copy_to_device(to, a)
        return to

    def address(a: Any) -> int:
        return int(a.device_ctypes_pointer.value or 0)

    def copy_to_device(self: Any, ary: Any, stream: Any = 0) -> None:
        if hasattr(ary, "device_ctypes_pointer"):  # device to device
            memory.write(address(self), memory.read(address(ary), ary.nbytes))
        else:
            host = np.asarray(ary)
            host = host if host.flags.c_contiguous else host.copy()
            memory.write(address(self), host.reshape(-1).view(np.uint8))

    def copy_to_host(self: Any, ary: Any = None, stream: Any = 0) -> Any:
        data = memory.read(address(self), self.nbytes).view(self.dtype).reshape(self.shape)
        if ary is None:
            return data.copy()
        ary[...] = data
        return ary

    cuda.is_available = lambda: True
    for module in (cuda, api, dispatcher):
        module.get_current_device = lambda: _FakeDevice()
    devices.get_context = lambda devnum=0: _FakeContext()
    devices._runtime.ensure_context = contextlib.nullcontext  # array slicing asks for one
    cuda.gpus = _Gpus([_FakeDevice()])
    cuda.device_array = device_array
    cuda.device_array_like = lambda a, stream=0: device_array(a.shape, a.dtype)
    cuda.to_device = to_device
    cuda.pinned_array = lambda shape, dtype=np.float64, strides=None, order="C": np.zeros(
        shape, dtype
    )
    cuda.stream = lambda: _FakeStream()
    cuda.event = lambda timing=True: _FakeEvent()
    cuda.synchronize = lambda: None
    cuda.current_context = lambda devnum=None: _FakeContext()
    devicearray.DeviceNDArray.copy_to_host = copy_to_host
    devicearray.DeviceNDArray.copy_to_device = copy_to_device
    driver._to_core_stream = lambda s: s
    dispatcher._Kernel.bind = lambda self: None
    seen: set[tuple[int, Any]] = set()

    def compile_only(self: Any, *args: Any) -> None:
        disp = self.dispatcher
        name = _kernel_name(disp.py_func)
        try:
            argtypes = tuple(disp.typeof_pyval(a) for a in args)
        except Exception as e:
            records.append({"kernel": name, "types": "?", "error": f"typeof: {e!r}"[:2000]})
            raise
        key = (id(disp), argtypes)
        if key in seen:
            return
        seen.add(key)
        record = {"kernel": name, "types": ", ".join(map(str, argtypes)), "error": None}
        records.append(record)
        try:
            kernel = disp.compile(argtypes)
            record["cached"] = bool(disp.stats.cache_hits.get(argtypes))
            record["keyed"] = type(disp._cache).__name__ != "NullCache"  # has a disk cache
            # numba-cuda builds sm_90a on a cc 9.0 device (CUDACodeLibrary._ensure_cc): that
            # PTX is made while compiling, and kept in a disk-cache entry (kernel/disk_cache.py)
            record["ptx"] = ptx_stats(kernel.inspect_asm(cc=(*CC, "a")))
            if record["ptx"]["param_bytes"] > PARAM_LIMIT:
                record["error"] = (
                    f"its parameters take {record['ptx']['param_bytes']} bytes, over the "
                    f"{PARAM_LIMIT} every CUDA device and toolkit accepts"
                )
        except Exception as e:
            record["error"] = f"{type(e).__name__}: {e}"[:2000]
            raise

    dispatcher._LaunchConfiguration.__call__ = compile_only


_INSTRUCTION = re.compile(r"^\s+(?:@%p\d+\s+)?([a-z][\w.]*)", re.M)


_PARAM = re.compile(r"\.param\s+(?:\.align\s+\d+\s+)?\.[a-z]+(\d+)\s+\w+(?:\[(\d+)\])?")
#: kernel parameter bytes CUDA takes on every device and toolkit (more needs sm_70, CUDA 12.1)
PARAM_LIMIT = 4096


def param_bytes(ptx: str) -> int:
    """Bytes of the kernel's (.entry) parameters: what its launches pass."""
    start = ptx.find(".entry")
    if start < 0:
        return 0
    head = ptx[start : ptx.find("{", start)]
    return sum(int(bits) // 8 * int(count or 1) for bits, count in _PARAM.findall(head))


def ptx_stats(ptx: str) -> dict[str, int]:
    """What a kernel's PTX costs, counted statically: its instructions, and its integer
    divisions and remainders by width (a 64-bit one is a ~70-instruction subroutine on the
    GPU, a 32-bit one ~20; index arithmetic full of them is ALU-bound, not memory-bound);
    and its parameter bytes (a kernel over PARAM_LIMIT fails to load on older setups)."""
    ops = _INSTRUCTION.findall(ptx)
    divs = [op for op in ops if op.startswith(("div.", "rem.")) and not op.endswith(("f32", "f64"))]
    return {
        "instructions": len(ops),
        "div64": sum(1 for op in divs if op.endswith("64")),
        "div32": sum(1 for op in divs if op.endswith("32")),
        "f64": sum(1 for op in ops if _is_f64_math(op)),
        "param_bytes": param_bytes(ptx),
    }


def _is_f64_math(op: str) -> bool:
    """A double-precision arithmetic or conversion instruction (add.f64, fma.rn.f64,
    cvt.f64.f32, setp.lt.f64, ...), not a load, store or move of 64-bit data."""
    parts = op.split(".")
    return "f64" in parts[1:] and parts[0] not in ("ld", "st", "mov", "atom", "red")


_ARRAY_DTYPE = re.compile(r"array\((\w+)")


def float32_in_f64(
    compiled: dict[tuple[str, str], dict[str, Any]],
) -> list[tuple[int, int, str, str]]:
    """(f64 instructions, instructions, kernel, types) of the signatures whose arrays are
    float32 (integer arrays beside them allowed, no float64 or float16 array) and whose PTX
    has double-precision arithmetic; most f64 instructions first."""
    rows = []
    for (name, types), r in compiled.items():
        dtypes = set(_ARRAY_DTYPE.findall(types))
        if "float32" not in dtypes or dtypes & {"float64", "float16"}:
            continue
        count = (r.get("ptx") or {}).get("f64", 0)
        if count:
            rows.append((count, r["ptx"]["instructions"], name, types))
    return sorted(rows, reverse=True)


def _kernel_name(py_func: Any) -> str:
    """module.qualname, with the body a generated loop calls: `f` in kernel.cuda's
    element-wise loops, `body` in kernel.device's parallel_for loops."""
    where = py_func.__module__ or py_func.__code__.co_filename
    called = py_func.__globals__.get("f") or py_func.__globals__.get("body")
    inner = getattr(getattr(called, "py_func", called), "__qualname__", None)
    if inner and (py_func.__module__ is None or py_func.__qualname__ == "loop"):
        module = getattr(getattr(called, "py_func", called), "__module__", "")
        where = f"{py_func.__module__ or py_func.__code__.co_filename}[{module}.{inner}]"
    return f"{where}.{py_func.__qualname__}"


# ---------------------------------------------------------------- the pytest plugin
class Plugin:
    """Loaded in each test process (-p gpu_compile_check): installs the fake driver and
    writes that process's records, each with the test that first reached it."""

    def __init__(self) -> None:
        self.records: list[dict[str, Any]] = []
        self.direct: dict[str, Any] = {}
        self.test = "?"
        install(self.records)
        _quiet_value_checks()
        if os.environ.get(_FAST_ENV) == "1":
            import fast_launch_check

            fast_launch_check.install(self.direct)

    def pytest_runtest_setup(self, item: Any) -> None:
        self.test = item.nodeid
        self.mark = len(self.records)

    def pytest_runtest_teardown(self, item: Any) -> None:
        for r in self.records[self.mark :]:
            r.setdefault("test", item.nodeid)

    def pytest_sessionfinish(self, session: Any) -> None:
        out = Path(os.environ.get(_RECORDS_ENV, "."))
        path = out / f"records-{os.getpid()}.json"
        path.write_text(json.dumps({"records": self.records, "direct": self.direct}))


def _quiet_value_checks() -> None:
    """NumPy's array comparisons pass: every array reads back zeros here, and a test
    stopped at its first comparison would launch none of the kernels after it."""
    import numpy.testing as npt

    def passes(*args: Any, **kwargs: Any) -> None:
        return None

    for name in (
        "assert_allclose",
        "assert_array_equal",
        "assert_array_almost_equal",
        "assert_almost_equal",
        "assert_equal",
        "assert_array_less",
        "assert_array_max_ulp",
        "assert_array_almost_equal_nulp",
    ):
        setattr(npt, name, passes)
    import nnvmpy.test_utils  # noqa: F401  (its modules, to patch below)

    for module_name, module in list(sys.modules.items()):
        if not module_name.startswith("nnvmpy.test_utils"):
            continue
        for name in ("assert_almost_equal", "assert_allclose", "assert_almost_equal_with_err"):
            if hasattr(module, name):
                setattr(module, name, passes)
        for name in ("almost_equal", "same", "almost_equal_ignore_nan", "same_array"):
            if hasattr(module, name):
                setattr(module, name, lambda *args, **kwargs: True)
        if hasattr(module, "assert_almost_equal_ignore_nan"):
            module.assert_almost_equal_ignore_nan = passes


def pytest_configure(config: Any) -> None:
    if os.environ.get(_RECORDS_ENV) and not config.pluginmanager.has_plugin(
        "gpu_compile_check_plugin"
    ):
        config.pluginmanager.register(Plugin(), "gpu_compile_check_plugin")


def nvvm_missing() -> str | None:
    """Why PTX cannot be made here (NVVM or NVRTC not found), or None."""
    probe = "from cuda.pathfinder import load_nvidia_dynamic_lib as l; l('nvvm'); l('nvrtc')"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    if done.returncode == 0:
        return None
    last = (done.stderr.strip().splitlines() or ["?"])[-1]
    return f"{last[:300]} (pip install nvidia-nvvm nvidia-cuda-nvrtc)"


def main() -> int:
    missing = nvvm_missing()
    if missing:
        print(f"gpu_compile_check: cannot make PTX here: {missing}")
        return 2
    args = sys.argv[1:]
    listing = None
    if args[:1] == ["--list"]:  # --list FILE: every record as JSON, for a closer look
        listing, args = Path(args[1]), args[2:]
    ptx_pattern = None
    if args[:1] == ["--ptx-stats"]:  # --ptx-stats REGEX: the PTX counts of those kernels
        ptx_pattern, args = re.compile(args[1]), args[2:]
    f64 = args[:1] == ["--f64"]  # float32 kernels that compute in double precision
    if f64:
        args = args[1:]
    fast = args[:1] == ["--fast-launch"]  # also check every direct launch (cuda_fast)
    if fast:
        args = args[1:]
    args = args or ["-m", "gpu", "tests", "-n", "2"]
    root = Path(__file__).resolve().parent.parent
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, NUMBA_ENABLE_CUDASIM="0", NNVMPY_CUPY="0")
        env[_RECORDS_ENV] = tmp
        env[_FAST_ENV] = "1" if fast else "0"
        env["PYTHONPATH"] = os.pathsep.join(
            [str(root / "tools"), str(root / "src"), env.get("PYTHONPATH", "")]
        )
        cmd = [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "gpu_compile_check",
            "-p",
            "no:cacheprovider",
            "--timeout",
            "300",
            "-o",
            "addopts=",
            *args,
        ]
        subprocess.run(cmd, cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        records: list[dict[str, Any]] = []
        checked, mismatches = 0, []
        for path in Path(tmp).glob("records-*.json"):
            written = json.loads(path.read_text())
            records += written["records"]
            checked += written["direct"].get("checked", 0)
            mismatches += written["direct"].get("mismatches", [])
    if listing is not None:
        listing.write_text(json.dumps(records, indent=1))
    compiled: dict[tuple[str, str], dict[str, Any]] = {}
    for r in records:
        key = (r["kernel"], r["types"])
        if key not in compiled or (r["error"] and not compiled[key]["error"]):
            compiled[key] = r
    if not compiled:
        print(
            "gpu_compile_check: no kernel was launched; did the tests run? (" + " ".join(args) + ")"
        )
        return 1
    failed = [r for r in compiled.values() if r["error"]]
    kernels = {k for k, _ in compiled}
    cached = sum(1 for r in compiled.values() if r.get("cached"))
    print(
        f"GPU kernels compiled to sm_{CC[0]}{CC[1]} PTX without a GPU: {len(compiled)} signatures "
        f"of {len(kernels)} kernels, {len(failed)} failed ({cached} loaded from the disk cache)"
    )
    if ptx_pattern is not None:
        print(f"{'instr':>6} {'div64':>5} {'div32':>5} {'f64':>5} {'params':>6}  kernel(types)")
        for (name, types), r in sorted(compiled.items()):
            if ptx_pattern.search(name) and r.get("ptx"):
                p = r["ptx"]
                counts = f"{p['instructions']:6d} {p['div64']:5d} {p['div32']:5d}"
                print(
                    f"{counts} {p.get('f64', 0):5d} {p.get('param_bytes', 0):6d}  {name}({types})"
                )
    if f64:
        promoted = float32_in_f64(compiled)
        print(
            f"float32 signatures computing in double precision: {len(promoted)} of "
            f"{sum(1 for types in (t for _, t in compiled) if 'float32' in types)}"
        )
        for count, instructions, name, types in promoted:
            print(f"  {count:5d} f64 of {instructions:6d}  {name}({types[:160]})")
    unkeyed = sorted({r["kernel"] for r in compiled.values() if r.get("keyed") is False})
    if unkeyed:
        print(f"kernels with no disk cache (compiled in every process): {len(unkeyed)}")
        for name in unkeyed[:40]:
            print(f"  NOT CACHED {name}")
    for r in sorted(failed, key=lambda r: r["kernel"]):
        print(f"\nFAILED {r['kernel']}({r['types']})\n  first reached by {r.get('test', '?')}")
        print("  " + r["error"].strip().replace("\n", "\n  ")[:1500])
    if fast:
        print(
            f"direct launches (kernel/cuda_fast.py) checked against numba-cuda's own: {checked}, "
            f"{len(mismatches)} differed"
        )
        for m in sorted(set(mismatches))[:40]:
            print(f"  DIFFERS {m[:600]}")
        if mismatches or not checked:
            return 1
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
