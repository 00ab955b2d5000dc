"""tools/pack_parts.py splits gpu_check.sh's kernel cache into parts the device tool
sends back (16 MiB a file): every part under its limit, a cache index beside its data,
and what did not fit counted, not silently dropped."""

from __future__ import annotations

import importlib.util
import os
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("pack_parts", ROOT / "tools" / "pack_parts.py")
pack_parts = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(pack_parts)


def _fake_cache(root: Path, entries: int, data_files: int, size: int) -> dict[str, bytes]:
    """numba-style entries: an index and its data files (random bytes: gzip cannot shrink
    them), plus a CPU entry the GPU pattern must skip."""
    contents: dict[str, bytes] = {}
    folder = root / "nnvmpy_ops_x"
    folder.mkdir(parents=True)
    for e in range(entries):
        base = f"kernel_{e}-12.py312.gpu.loop"
        contents[f"nnvmpy_ops_x/{base}.nbi"] = os.urandom(200)
        for d in range(data_files):
            contents[f"nnvmpy_ops_x/{base}.{d:04x}abcd.nbc"] = os.urandom(size * (e + 1))
    contents["nnvmpy_ops_x/cpu_kernel-3.py312.nbi"] = b"cpu"
    for rel, data in contents.items():
        (root / rel).write_bytes(data)
    return contents


def _unpack(parts: list[Path]) -> dict[str, tuple[int, bytes]]:
    found: dict[str, tuple[int, bytes]] = {}
    for number, part in enumerate(parts):
        with tarfile.open(part) as tar:
            for member in tar.getmembers():
                found[member.name] = (number, tar.extractfile(member).read())
    return found


def test_parts_stay_under_the_limit_and_keep_each_index_with_its_data(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    contents = _fake_cache(cache, entries=6, data_files=3, size=20_000)
    groups = pack_parts.cache_groups(cache, r"\.py3[0-9]+\.gpu\.")
    assert len(groups) == 6
    assert all(g[0].endswith(".nbi") for g in groups)
    limit = 400_000  # the largest entry (360 KB) fits a part alone
    parts, missing = pack_parts.pack(cache, str(tmp_path / "kc"), groups, limit, parts=8)
    assert missing == 0
    assert len(parts) > 1
    assert all(p.stat().st_size <= limit for p in parts)
    found = _unpack(parts)
    gpu = {rel: data for rel, data in contents.items() if ".gpu." in rel}
    assert {rel: data for rel, (_, data) in found.items()} == gpu
    for rel, (number, _) in found.items():  # each data file in its index's part
        if rel.endswith(".nbc"):
            index = rel.rsplit(".", 2)[0] + ".nbi"
            assert found[index][0] == number, rel


def test_what_does_not_fit_is_counted_smallest_entries_first(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    _fake_cache(cache, entries=6, data_files=2, size=30_000)
    groups = pack_parts.cache_groups(cache, r"\.py3[0-9]+\.gpu\.")
    # sizes 60 KB, 120 KB, ... 360 KB: a 200 KB part holds one or two of the small ones,
    # and the largest entries are left out once the two parts are full
    parts, missing = pack_parts.pack(cache, str(tmp_path / "kc"), groups, 200_000, parts=2)
    assert len(parts) == 2
    assert missing > 0
    packed = {rel for rel in _unpack(parts) if rel.endswith(".nbi")}
    assert "nnvmpy_ops_x/kernel_0-12.py312.gpu.loop.nbi" in packed
    assert "nnvmpy_ops_x/kernel_5-12.py312.gpu.loop.nbi" not in packed
    assert len(packed) + missing == 6
