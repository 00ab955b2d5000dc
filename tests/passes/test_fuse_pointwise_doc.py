"""docs/fusion.md: its ```python blocks run, so the guide cannot drift."""

from __future__ import annotations

import re
from pathlib import Path

from nnvmpy import registry

DOC = Path(__file__).resolve().parents[2] / "docs" / "fusion.md"
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def test_every_python_block_of_the_fusion_guide_runs() -> None:
    blocks = BLOCK.findall(DOC.read_text())
    assert blocks
    with registry.scoped_registry():
        namespace: dict[str, object] = {"__name__": "fusion_doc"}
        for code in blocks:
            # a name that is no file: numba then compiles in memory instead of caching
            # beside the guide (the cached entry could not be reloaded: its module is gone)
            exec(compile(code, f"<{DOC.name}>", "exec"), namespace)
