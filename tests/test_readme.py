"""The README's two set-up commands stay true: one runs the demo, one the CI test command."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _bash_blocks() -> list[str]:
    text = (ROOT / "README.md").read_text()
    return re.findall(r"```bash\n(.*?)```", text, flags=re.S)


def test_readme_has_exactly_two_setup_commands_near_the_top():
    text = (ROOT / "README.md").read_text()
    blocks = _bash_blocks()
    assert len(blocks) == 2
    assert text.index(blocks[1]) < 1000, "the set-up commands must be near the top"
    assert all(len(b.strip().splitlines()) == 1 for b in blocks)


def test_first_command_installs_and_runs_the_demo():
    first = _bash_blocks()[0]
    assert "pip install -e ." in first
    assert first.strip().endswith("nnvmpy demo")


def test_second_command_is_what_ci_runs():
    second = _bash_blocks()[1]
    assert '".[test,gpu]"' in second
    assert second.strip().endswith("tools/run_tests.sh")
    ci = (ROOT / ".ci" / "run").read_text()
    assert '".[test,gpu]"' in ci
    assert "tools/run_tests.sh" in ci


def test_run_tests_script_fails_when_no_test_is_collected():
    script = (ROOT / "tools" / "run_tests.sh").read_text()
    assert '"$rc" -eq 5' in script
    assert "NUMBA_ENABLE_CUDASIM=1" in script


def test_readme_example_runs_and_prints_what_it_says(capsys):
    text = (ROOT / "README.md").read_text()
    (example,) = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    exec(compile(example, "README.md", "exec"), {})
    out = capsys.readouterr().out
    assert "[[ 6. 11.]\n [18. 27.]]" in out
    assert "[[7. 7. 7. 7.]" in out


def _host_staged_ops() -> set[str]:
    """The registry's forward ops whose GPU compute stages through the host (MXNet's names
    without the `_contrib_` prefix)."""
    import nnvmpy  # noqa: F401  (registers the ops)
    from nnvmpy.attrs import FCompute_gpu, FStatefulCompute_gpu, TIsBackward
    from nnvmpy.registry import Op

    names = set()
    for op in Op.list_ops():
        if op.get_attr(TIsBackward, False):
            continue
        computes = (op.get_attr(FCompute_gpu), op.get_attr(FStatefulCompute_gpu))
        if any(getattr(fn, "stages_through_host", False) for fn in computes):
            names.add(op.name.removeprefix("_contrib_"))
    return names


def test_readme_lists_exactly_the_ops_that_stage_through_the_host():
    text = (ROOT / "README.md").read_text()
    section = re.search(r"<!-- host-staged:begin -->(.*?)<!-- host-staged:end -->", text, re.S)
    assert section, "README.md lost its host-staged markers"
    listed = set(re.findall(r"`([A-Za-z_]+)`", section.group(1)))
    registry = _host_staged_ops()
    assert listed == registry, (
        f"README lists as host-staged but runs on the device: {sorted(listed - registry)}; "
        f"host-staged but not in the README: {sorted(registry - listed)}"
    )
