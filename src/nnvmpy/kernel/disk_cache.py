"""Disk caches keyed by code, shared by the CPU and GPU launchers.

Why. numba's own cache=True (and numba-cuda's CUDACache) key an entry by the signature
and the compiled function's own file, and a closure by pickling its cells; a captured
dispatcher pickles with a random uuid, so the key differs in every process and the cache
only grows. It also checks only that one file: an edited device function or vmath body
in another file left stale machine code in the cache. nnvmpy's caches key an entry by
the code of the function compiled and of every function it reaches in any file
(callee_key), and give each entry's code a file named by its key (keyed_cache_file):
numba's numbered entries could be swapped by two processes saving at once.

kernel/cpu.py builds its numba caches from these pieces; `enable_cuda_cache` gives a
numba-cuda dispatcher (element-wise loops, parallel_for loops, hand-written kernels) the
same kind of key. A GPU entry is what numba-cuda pickles of a compiled kernel: its LLVM
IR, and the PTX and cubin where they were made before the save (on a GPU they are: the
kernel is linked and loaded before numba-cuda saves it), so a later process loads the
cubin and neither types, lowers, runs NVVM nor links. Nothing here imports numba.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import os
import types as pytypes
from typing import Any

import numpy as np

from .. import config


# ---------------------------------------------------------------- keys
def _code_key(code: pytypes.CodeType) -> tuple[Any, ...]:
    consts = tuple(
        _code_key(c) if isinstance(c, pytypes.CodeType) else repr(c) for c in code.co_consts
    )
    return (code.co_code, consts, code.co_names)


_PLAIN = (int, float, complex, bool, str, bytes, type(None))


def _is_plain(value: Any) -> bool:
    """Data whose repr names it in every process: plain scalars, NumPy scalars and scalar
    types (a kernel template's accumulator type, matrix.py's GEMM)."""
    if isinstance(value, type):
        return issubclass(value, np.generic)
    return isinstance(value, (*_PLAIN, np.generic))


def function_digest(fn: Any) -> str | None:
    """A stable hash of fn's code, closure and defaults, and of what it calls; None if
    its closure or defaults are not plain data."""
    cells = [c.cell_contents for c in fn.__closure__ or ()]
    extra = [*cells, *(fn.__defaults__ or ())]
    if not all(_is_plain(v) for v in extra):
        return None  # e.g. a captured dispatcher: no stable key, so no disk cache
    key = (_code_key(fn.__code__), extra, callee_key(fn))
    return hashlib.sha256(repr(key).encode()).hexdigest()


def _names(code: pytypes.CodeType) -> set[str]:
    names = set(code.co_names)
    for c in code.co_consts:
        if isinstance(c, pytypes.CodeType):
            names |= _names(c)
    return names


def _functions_of(obj: Any) -> list[pytypes.FunctionType]:
    """The Python functions behind a global: itself, a DeviceFunction's or dispatcher's
    py_func, a vmath VectorFunction's float32 body."""
    found = [obj] if isinstance(obj, pytypes.FunctionType) else []
    for attr in ("py_func", "f32_body"):
        f = getattr(obj, attr, None)
        if isinstance(f, pytypes.FunctionType):
            found.append(f)
    return found


def callee_key(fn: Any, seen: set[int] | None = None) -> list[Any]:
    """The code of every function fn reaches through its globals (module attributes
    included: `vmath.exp`), transitively, and the plain constants it reads there.

    numba bakes callees and global constants into a compiled loop, but its disk cache
    checks only the file of the function it compiled: without this key an edited vmath
    body or device function in another file left stale machine code in the cache.
    """
    seen = set() if seen is None else seen
    names = _names(fn.__code__)
    fn_globals = getattr(fn, "__globals__", {})
    key: list[Any] = []
    for name in sorted(names):
        value = fn_globals.get(name)
        if isinstance(value, pytypes.ModuleType):
            targets = [getattr(value, n, None) for n in sorted(names)]
        else:
            targets = [value]
        for target in targets:
            if target is not None and isinstance(target, (*_PLAIN, np.generic)):
                key.append((name, repr(target)))
            if getattr(target, "cpu_inline", True) is False:  # a called device function
                key.append((name, "cpu_inline", False))
            for f in _functions_of(target):
                if id(f) not in seen:
                    seen.add(id(f))
                    key.append((f.__module__, f.__qualname__, _code_key(f.__code__)))
                    key.extend(callee_key(f, seen))
    return key


def kernel_key(loop: Any, body: Any, tag: str) -> tuple[str, str, str] | None:
    """(tag, hash of loop's code, digest of body and all it calls), or None where body
    has no stable key. loop is the function compiled, body what it runs (they may be
    one function); the tag names the template and its version."""
    digest = function_digest(body)
    if digest is None:
        return None
    code = hashlib.sha256(repr(_code_key(loop.__code__)).encode()).hexdigest()
    return (tag, code, digest)


# ---------------------------------------------------------------- cache files
@functools.cache
def keyed_cache_file(base: type) -> type:
    """`base` (numba's or numba-cuda's IndexDataCacheFile) with one data file per key,
    named by the key's hash.

    numba's own save reads the index, takes the first free entry number and writes the
    index and then the data: two processes saving at once (pytest-xdist workers, MPI
    ranks starting together) can both take entry N, and the index one of them leaves
    then names the other's machine code, a loop of another signature ("can't unbox
    array from PyObject", CI of 077ef67). With a name per key the worst a race does is
    drop one process's index entry, and that loop is compiled again next time."""

    class KeyedCacheFile(base):
        def _name_for(self, key: Any) -> str:
            digest = hashlib.sha256(repr(key).encode()).hexdigest()[:16]
            return f"{self._index_name.removesuffix('.nbi')}.{digest}.nbc"

        def save(self, key: Any, data: Any) -> None:
            overloads = self._load_index()
            name = self._name_for(key)
            if overloads.get(key) != name:
                overloads[key] = name
                self._save_index(overloads)
            self._save_data(name, data)

        def load(self, key: Any) -> Any:
            name = self._name_for(key)
            if self._load_index().get(key) != name:  # numba's numbered entries: maybe
                return None  # another key's code (see above): compiled again instead
            try:
                return self._load_data(name)
            except OSError:  # removed since the index was read
                return None

    return KeyedCacheFile


@functools.lru_cache(maxsize=256)
def _content_stamp(path: str, mtime_ns: int, size: int) -> str:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def source_stamp(path: str) -> str:
    """A hash of the file's bytes. numba's stamp is its modification time and size,
    which a copy of the tree (a device machine's) does not keep: every entry missed."""
    st = os.stat(path)
    return _content_stamp(path, st.st_mtime_ns, st.st_size)


# ---------------------------------------------------------------- GPU kernels
#: in every GPU entry's file name after numba's `<module>.<function>-<line>.py3NN`, so
#: tools/gpu_check.sh can send back the GPU entries alone (`\.py3[0-9]+\.gpu\.`)
GPU_ENTRY_MARK = "gpu"


def enable_cuda_cache(dispatcher: Any, body: Any, tag: str, loop: Any = None) -> bool:
    """Give a numba-cuda kernel dispatcher a disk cache keyed by kernel_key(loop, body,
    tag) (loop: the function the dispatcher compiles, default body), stored beside
    body's module (or under NUMBA_CACHE_DIR). Returns whether it did: not under the
    simulator (its dispatchers have no cache), with NNVMPY_GPU_DISK_CACHE=0, or where
    body has no stable key or file; the kernel is then compiled in every process."""
    from nnvmpy.kernel.cuda import _state

    if _state.get("simulator", True) or config.GPU_DISK_CACHE.get() == "0":
        return False
    key = kernel_key(body if loop is None else loop, body, tag)
    if key is None:
        return False
    try:
        cache = _cuda_cache_class()(body, tag, key)
    except Exception:  # no file (REPL, exec), unwritable dirs, numba-cuda internals moved
        return False
    dispatcher._cache = cache  # = enable_caching(), with this key
    return True


@functools.cache
def _cuda_cache_class() -> type:
    from importlib.metadata import version

    from numba.cuda.core.caching import IndexDataCacheFile
    from numba.cuda.dispatcher import CUDACache

    from nnvmpy.kernel.numba_cuda_fixes import REVISION as fixes_revision

    cache_file = keyed_cache_file(IndexDataCacheFile)
    numba_cuda_version = version("numba-cuda")

    class KernelCache(CUDACache):
        """numba-cuda's CUDACache (its pickling of a kernel, its launch-configuration
        marker) with nnvmpy's key, a data file per key and a content stamp."""

        def __init__(self, body: Any, tag: str, key: tuple[str, str, str]) -> None:
            super().__init__(body)  # locator and file name from body's function
            self.key = key
            base = f"{self._impl.filename_base}.{GPU_ENTRY_MARK}.{tag}"
            self._cache_file = cache_file(
                cache_path=self._cache_path,
                filename_base=base,
                source_stamp=source_stamp(inspect.getfile(body)),
            )
            self._launch_config_marker_path = os.path.join(self._cache_path, f"{base}.lcs")

        def _index_key(self, sig: Any, codegen: Any) -> Any:
            # magic_tuple: (NVRTC's version, the device's compute capability); the
            # revision of nnvmpy's corrections to numba-cuda's lowering
            key = (sig, codegen.magic_tuple(), numba_cuda_version, fixes_revision, self.key)
            launch_config = getattr(self, "_launch_config_key", None)  # CUDACache's
            if launch_config is None:
                return key
            return (*key, ("launch_config", launch_config))

        def load_overload(self, sig: Any, target_context: Any) -> Any:
            try:
                return super().load_overload(sig, target_context)
            except Exception:  # an entry another numba-cuda wrote, a truncated file
                return None  # compiled instead

        def save_overload(self, sig: Any, data: Any) -> None:
            try:
                super().save_overload(sig, data)
            except Exception:  # kernels numba-cuda cannot pickle (linked files: float16
                pass  # intrinsics; captured device arrays), full disks: not cached

    return KernelCache
