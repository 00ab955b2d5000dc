"""The nnvmpy command: ops, info and errors."""

from __future__ import annotations

from nnvmpy.cli import main


def test_ops_lists_public_ops_with_descriptions(capsys):
    assert main(["ops"]) == 0
    out = capsys.readouterr().out
    line = next(ln for ln in out.splitlines() if ln.startswith("quadratic "))
    assert "quadratic function" in line
    assert "_plus_scalar" not in out


def test_ops_all_includes_internal_ops(capsys):
    assert main(["ops", "--all"]) == 0
    assert "_backward_quadratic" in capsys.readouterr().out


def test_info_prints_attributes_with_sources_and_arguments(capsys):
    assert main(["info", "quadratic"]) == 0
    out = capsys.readouterr().out
    assert "FInferShape" in out
    assert "FCompute<gpu>" in out
    assert "ops/quadratic.py:" in out
    assert "Coefficient of the quadratic term" in out
    assert "float, optional, default=0" in out


def test_info_on_unknown_op_exits_2_with_a_suggestion(capsys):
    assert main(["info", "quadratc"]) == 2
    err = capsys.readouterr().err
    assert "'quadratc' is not registered" in err
    assert "quadratic" in err
    assert main(["info", "relu"]) == 0  # still usable
