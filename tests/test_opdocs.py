"""The op reference pages (docs/ops/): fresh, complete, and saying what the registry says."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import nnvmpy as nv
from nnvmpy import opdocs
from nnvmpy.param import Parameter, Shape, field

DOCS = Path(__file__).resolve().parents[1] / "docs" / "ops"


def test_committed_pages_match_the_registry() -> None:
    # a fresh interpreter: ops other tests register in this process must not count
    run = subprocess.run(
        [sys.executable, "-m", "nnvmpy.cli", "docs", "--check", "-o", str(DOCS)],
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert run.returncode == 0, f"stale pages, run `nnvmpy docs -o docs/ops/`:\n{run.stdout}"


def test_every_public_op_has_a_section_on_its_familys_page() -> None:
    index = (DOCS / "README.md").read_text()
    for family, ops in opdocs.families().items():
        assert f"]({family}.md)" in index
        page = (DOCS / f"{family}.md").read_text()
        for op in ops:
            assert f"`{op.name}`" in page, (family, op.name)


def test_family_is_the_registering_module() -> None:
    assert opdocs.family_of(nv.Op.get("Convolution")) == "nn.convolution"
    assert opdocs.family_of(nv.Op.get("quadratic")) == "quadratic"
    assert opdocs.family_of(nv.Op.get("_linalg_gemm2")) == "linalg"  # ops/linalg/_base.py


class _DocParam(Parameter):
    kernel = field(Shape, describe="Window | size.")
    mode = field(str, default="fast", enum=["fast", "exact"], describe="How.")


def _compute(attrs, ctx, inputs, req, outputs):  # pragma: no cover - never run
    raise AssertionError


def test_op_section_lists_arguments_inputs_and_devices(scoped_registry: None) -> None:
    (
        nv.register_op("doc_test_op")
        .describe("First line.\n\nMore text.")
        .set_attr_parser(_DocParam)
        .set_num_inputs(2)
        .set_num_outputs(1)
        .set_attr("FListInputNames", lambda attrs: ["lhs", "rhs"])
        .set_attr("FCompute<cpu>", _compute)
        .add_argument("lhs", "NDArray-or-Symbol", "left")
        .add_argument("rhs", "NDArray-or-Symbol", "right")
        .add_arguments(_DocParam.fields())
    )
    op = nv.Op.get("doc_test_op")
    text = opdocs.op_section(op)
    assert text.startswith("## `doc_test_op`")
    assert "`nv.nd.doc_test_op(...)` · `nv.sym.doc_test_op(...)`" in text
    assert "First line.\n\nMore text." in text
    assert "- **Inputs**: `lhs`, `rhs`" in text
    assert "- **Outputs**: 1" in text
    assert "- **Runs on**: CPU yes · GPU no" in text
    assert "`FCompute<cpu>`" in text
    assert "| `kernel` | Shape(tuple) | required | Window \\| size. |" in text
    assert "| `mode` | {'exact', 'fast'} | `'fast'` | How. |" in text
    assert opdocs.family_of(op) == "test_opdocs"  # registered here, outside nnvmpy
    # a table row has exactly the four columns (escaped pipes do not split)
    row = next(line for line in text.splitlines() if line.startswith("| `kernel`"))
    assert len(re.split(r"(?<!\\)\|", row)) == 6


def test_write_pages_replaces_only_generated_pages(tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_text("hand-written\n")
    (tmp_path / "gone_family.md").write_text(opdocs.MARKER + "\nold\n")
    written, removed = opdocs.write_pages(tmp_path)
    assert removed == [tmp_path / "gone_family.md"]
    assert (tmp_path / "notes.md").read_text() == "hand-written\n"
    assert (tmp_path / "README.md") in written
    assert opdocs.stale_pages(tmp_path) == []
    assert opdocs.write_pages(tmp_path) == ([], [])  # idempotent
    (tmp_path / "quadratic.md").write_text(opdocs.MARKER + "\nedited\n")
    assert opdocs.stale_pages(tmp_path) == ["quadratic.md"]
