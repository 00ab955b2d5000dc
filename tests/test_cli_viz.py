"""`nnvmpy plot` and `nnvmpy summary` on MXNet's ResNet-18 symbol file."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from nnvmpy.cli import main

REFERENCE = json.loads((Path(__file__).parent / "data" / "viz_reference.json").read_text())
MODELS = Path(__file__).resolve().parents[1].parent / "shared" / "models"
RESNET = MODELS / "resnet18_v1-symbol.json"
needs_models = pytest.mark.skipif(not RESNET.exists(), reason="shared model files not present")


@needs_models
def test_summary_prints_mxnets_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["summary", str(RESNET), "--shape", "data=2,3,224,224"]) == 0
    assert capsys.readouterr().out == REFERENCE["resnet18_v1"]["summary"]


@needs_models
def test_plot_writes_dot_source_with_shapes(tmp_path: Path) -> None:
    pytest.importorskip("graphviz")
    out = tmp_path / "net.gv"
    assert main(["plot", str(RESNET), "--shape", "data=1,3,224,224", "-o", str(out)]) == 0
    source = out.read_text()
    assert source.startswith("digraph resnet18_v1 {")
    assert re.search(r'resnetv10_conv0_fwd -> data \[[^]]*label="?3x224x224\b', source)
    assert "resnetv10_conv0_fwd_weight" not in source  # hidden by default


@needs_models
@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed")
def test_plot_renders_svg(tmp_path: Path) -> None:
    pytest.importorskip("graphviz")
    out = tmp_path / "net.svg"
    assert main(["plot", str(RESNET), "--shape", "data=1,3,224,224", "-o", str(out)]) == 0
    svg = out.read_text()
    assert svg.lstrip().startswith("<?xml")
    assert "<title>resnetv10_dense0_fwd</title>" in svg


def test_bad_shape_and_missing_file_exit_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert main(["summary", str(tmp_path / "missing.json")]) == 2
    assert "missing.json" in capsys.readouterr().err
    assert main(["summary", str(tmp_path / "x.json"), "--shape", "data:1,2"]) == 2
    assert "--shape expects NAME=D1,D2" in capsys.readouterr().err
