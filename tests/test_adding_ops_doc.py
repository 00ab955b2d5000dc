"""docs/adding_ops.md: its ```python blocks run, in order, so the guide cannot drift.

The blocks are written to one script in the temp directory (rewritten only when the guide
changes) and run from there: Numba caches compiled kernels only for functions that live
in a file, so a second run does not compile the guide's kernels again.
"""

from __future__ import annotations

import os
import re
import runpy
import tempfile
import traceback
from pathlib import Path

import pytest

import nnvmpy.operator  # noqa: F401 - registers Custom before the registry is scoped

DOC = Path(__file__).resolve().parents[1] / "docs" / "adding_ops.md"
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def _blocks() -> list[tuple[int, str]]:
    """(line of the block in the guide, code) for every ```python block."""
    text = DOC.read_text()
    return [(text.count("\n", 0, m.start()) + 2, m.group(1)) for m in BLOCK.finditer(text)]


def _script() -> tuple[Path, str]:
    parts = [f"# {DOC.name} line {line}\n{code}" for line, code in _blocks()]
    source = "\n".join(parts)
    path = Path(tempfile.gettempdir()) / "nnvmpy_doc" / "adding_ops_doc_blocks.py"
    path.parent.mkdir(exist_ok=True)
    if not path.exists() or path.read_text() != source:  # keep the mtime Numba's cache checks
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(source)
        os.replace(tmp, path)
    return path, source


def test_the_guide_shows_all_four_ways() -> None:
    text = DOC.read_text()
    for api in ("register_op(", "register_simple_op(", "register_op_property(", "@register("):
        assert api in text
    assert len(_blocks()) >= 4  # one per way, plus the one-body kernel example


@pytest.mark.usefixtures("scoped_registry")
@pytest.mark.timeout(120)
def test_every_python_block_runs() -> None:
    path, source = _script()
    try:
        runpy.run_path(str(path), run_name="adding_ops_doc")
    except Exception as e:
        frames = [f for f in traceback.extract_tb(e.__traceback__) if f.filename == str(path)]
        line = frames[-1].lineno if frames and frames[-1].lineno else 1
        block = [s for s in source.splitlines()[:line] if s.startswith(f"# {DOC.name} line ")]
        where = f"the block at {block[-1][2:]}, its line {line - _last_header(source, line)}"
        raise AssertionError(f"{where} failed: {type(e).__name__}: {e}") from e


def _last_header(source: str, line: int) -> int:
    """The script line of the header above script line `line`."""
    lines = source.splitlines()[:line]
    return max(i for i, s in enumerate(lines, 1) if s.startswith(f"# {DOC.name} line "))
