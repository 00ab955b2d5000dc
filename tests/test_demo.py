"""The tutorial end to end: demo.tutorial_steps, examples/quadratic_op.py and `nnvmpy demo`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from nnvmpy import cli, demo

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "quadratic_op.py"


def assert_tutorial_facts(report: str, op: str = "quadratic") -> None:
    """What the tutorial's steps establish, as the report prints it."""
    assert "y = [[6.0, 11.0], [18.0, 27.0]]" in report
    assert f"arguments: ['{op}0_data']" in report
    assert "arg shapes {'a': (2, 3), 'b': (2, 3), 'c': (2, 3)}, output [(2, 3)], aux []" in report
    assert "check_numeric_gradient, check_symbolic_forward, check_symbolic_backward: passed" in (
        report
    )
    assert "memory plan of this executor: Total " in report
    assert " MB allocated (" in report


def test_tutorial_steps_return_and_report_each_step() -> None:
    lines: list[str] = []
    results = demo.tutorial_steps("quadratic", report=lines.append)
    np.testing.assert_array_equal(results["nd"], [[6, 11], [18, 27]])
    assert results["arguments"] == ["quadratic0_data"]
    args, outs, aux = results["mutual"]
    assert (args, outs, aux) == ([(2, 3)] * 3, [(2, 3)], [])
    assert results["checks"] == "passed"
    assert results["plan"].startswith("Total ")
    assert_tutorial_facts("\n".join(lines))


def test_example_registers_its_own_op_and_runs_the_tutorial() -> None:
    done = subprocess.run(
        [sys.executable, str(EXAMPLE)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "registered 'my_quadratic': 1 input, 1 output" in out
    for key in ("FListInputNames", "FInferShape", "FInplaceOption", "FGradient", "FCompute<gpu>"):
        assert key in out
    assert "TIsBackward" in out
    assert "nv.nd.my_quadratic(x, a=1, b=2, c=3)" in out
    assert_tutorial_facts(out, op="my_quadratic")
    assert "check_op('my_quadratic')" in out
    assert "passed" in out.rsplit("check_op", 1)[1]


def test_cli_demo_prints_the_tutorial_report(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(demo, "_training_demo", lambda quick: None)  # the slow test runs it
    assert cli.main(["demo", "--quick"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("nnvmpy demo: MXNet's quadratic-op tutorial")
    assert_tutorial_facts(out)
    assert "demo finished in" in out


@pytest.mark.slow
def test_nnvmpy_demo_command_runs_to_the_end() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "nnvmpy.cli", "demo", "--quick"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert_tutorial_facts(done.stdout)
    assert "demo finished in" in done.stdout
