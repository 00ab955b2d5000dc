"""Pack files into numbered .tgz parts small enough for the device tool to send back.

    python3 tools/pack_parts.py ROOT PREFIX [--part-bytes N] [--parts K] [--match REGEX]

The device tool returns at most 8 files from $OUT, 16 MiB each: gpu_check.sh's kernel
cache (every compiled GPU kernel of a run) is larger than one such file. Here the files
under ROOT whose relative path matches REGEX go into PREFIX.0.tgz, PREFIX.1.tgz, ...,
a part closed once its compressed size nears N bytes, at most K parts. A numba cache
index (.nbi) goes into the same part as its data files (.nbc), which follow it, and the
smallest groups go first, so that the kernels left out, when all do not fit, are the
fewest. Prints one line per part and one for what was left out.
"""

from __future__ import annotations

import argparse
import io
import os
import re
import tarfile
import zlib
from pathlib import Path

MIB = 1 << 20
#: kernel/disk_cache.py's GPU entries: its GPU_ENTRY_MARK follows the Python tag in their
#: names (numba's CPU entries, which a GPU machine compiles anyway, are left behind)
GPU_ENTRIES = r"\.py3[0-9]+\.gpu\."


def cache_groups(root: Path, pattern: str) -> list[list[str]]:
    """Relative paths under root matching pattern, grouped by numba cache entry (an index
    `name.nbi` first, then its `name.<digest>.nbc` data files), smallest group first."""
    match = re.compile(pattern)
    groups: dict[str, list[str]] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if not path.is_file() or not match.search(rel):
            continue
        stem = rel.removesuffix(".nbi") if rel.endswith(".nbi") else rel.rsplit(".", 2)[0]
        groups.setdefault(stem, []).append(rel)
    for files in groups.values():
        files.sort(key=lambda rel: not rel.endswith(".nbi"))  # the index before its data
    return sorted(groups.values(), key=lambda g: sum((root / f).stat().st_size for f in g))


def _packed_size(root: Path, files: list[str]) -> int:
    """A group's bytes in a .tgz, estimated from above: its tar members (512-byte header,
    data padded to 512) compressed on their own, as gzip would in a stream."""
    stream = io.BytesIO()
    with tarfile.open(fileobj=stream, mode="w") as tar:
        for rel in files:
            tar.add(root / rel, arcname=rel)
    return len(zlib.compress(stream.getvalue(), 6)) + 64


def _write(root: Path, path: Path, groups: list[list[str]]) -> int:
    with tarfile.open(path, mode="w:gz") as tar:
        for files in groups:
            for rel in files:
                tar.add(root / rel, arcname=rel)
    return path.stat().st_size


def pack(
    root: Path, prefix: str, groups: list[list[str]], part_bytes: int, parts: int
) -> tuple[list[Path], int]:
    """Write the parts; (their paths, how many groups did not fit). Groups fill a part in
    turn while their estimated packed sizes fit part_bytes; a group over part_bytes on
    its own is left out, and a part that still came out over (the estimate is from
    above, so only in theory) gives back its last group."""
    sizes = [_packed_size(root, files) for files in groups]
    queue = [i for i, size in enumerate(sizes) if size <= part_bytes]
    written: list[Path] = []
    packed = 0
    while queue and len(written) < parts:
        path = Path(f"{prefix}.{len(written)}.tgz")
        take, total = 0, 0
        while take < len(queue) and total + sizes[queue[take]] <= part_bytes:
            total += sizes[queue[take]]
            take += 1
        while _write(root, path, [groups[i] for i in queue[:take]]) > part_bytes and take > 1:
            take -= 1
        queue = queue[take:]
        packed += take
        written.append(path)
    return written, len(groups) - packed


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("root", type=Path)
    parser.add_argument("prefix")
    parser.add_argument("--part-bytes", type=int, default=15 * MIB)
    parser.add_argument("--parts", type=int, default=4)
    parser.add_argument("--match", default=GPU_ENTRIES)
    args = parser.parse_args(argv)
    groups = cache_groups(args.root, args.match)
    written, missing = pack(args.root, args.prefix, groups, args.part_bytes, args.parts)
    for path in written:
        print(f"{path.name}: {os.path.getsize(path)} bytes")
    print(f"{len(groups) - missing} of {len(groups)} cache entries packed, {missing} left out")


if __name__ == "__main__":
    main()
