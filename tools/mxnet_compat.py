"""MXNet 1.9.1's own unit tests against nnvmpy: run them, keep the list that passes, check it.

    tools/mxnet_compat.sh                 run every file of the shared harness, then update
                                          tests/mxnet_compat/passing.txt and the README table
    tools/mxnet_compat.sh FILE.py ...     the same for some files (the others keep their lines)
    tools/mxnet_compat.sh --check         run only the tests listed as passing; fail if one fails
                                          (in NNVMPY_COMPAT_WORKERS processes, default 2)

The harness (`../shared/mxnet-compat`, beside the clone; or $MXNET_COMPAT) makes `import
mxnet` resolve to nnvmpy and knows which tests real MXNet 1.9.1 passes on this machine. A
test enters the list when it passes here and in MXNet; CI runs the list (--check), so a test
that passed once never regresses unnoticed.
"""

from __future__ import annotations

import argparse
import collections
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PASSING = ROOT / "tests" / "mxnet_compat" / "passing.txt"
# Tests that pass but not on every run: --check leaves them out (each line: test, then why).
FLAKY = ROOT / "tests" / "mxnet_compat" / "flaky.txt"
README = ROOT / "README.md"
BEGIN, END = "<!-- mxnet-compat:begin -->", "<!-- mxnet-compat:end -->"


def harness() -> Path | None:
    """The shared harness folder, or None when this checkout has none beside it."""
    candidates = [os.environ.get("MXNET_COMPAT"), ROOT.parent / "shared" / "mxnet-compat"]
    candidates.append("/work/shared/mxnet-compat")
    for c in candidates:
        if c and (Path(c) / "run.sh").is_file():
            return Path(c)
    return None


def _summary_module(h: Path):
    """The harness's summary.py, loaded for its parsing functions (its main() needs argv)."""
    spec = importlib.util.spec_from_file_location("_compat_summary", h / "summary.py")
    source = (h / "summary.py").read_text().replace("\nmain()\n", "\n")
    module = importlib.util.module_from_spec(spec)
    exec(compile(source, str(h / "summary.py"), "exec"), module.__dict__)
    return module


def run(h: Path, files: list[str], out: Path) -> None:
    """Run the harness on `files` (all when empty) into `out`, then update list and README."""
    env = dict(os.environ, PYTHON=sys.executable)
    subprocess.run(["bash", str(h / "run.sh"), str(out), *files], cwd=ROOT, env=env, check=False)
    summary = _summary_module(h)
    ours = summary.outcomes(str(out))
    base = summary_baseline(h)
    skip = summary.out_of_scope(str(h / "mx191" / "tests" / "python" / "unittest"))
    ran = {k.split("::")[0] for k in ours}
    kept = [t for t in read_passing() if t.split("::")[0] not in ran]
    new = [k for k, v in ours.items() if v[0] == "pass" and base.get(k) == "pass" and k not in skip]
    write_passing(sorted(set(kept) | set(new)))
    update_readme(base, skip)


def summary_baseline(h: Path) -> dict[str, str]:
    import json

    return json.loads((h / "baseline-mxnet-1.9.1.json").read_text())


def read_passing() -> list[str]:
    if not PASSING.exists():
        return []
    lines = PASSING.read_text().splitlines()
    return [ln.strip() for ln in lines if ln.strip() and not ln.startswith("#")]


def read_flaky() -> set[str]:
    """The tests --check leaves out: first word of each non-comment line of flaky.txt."""
    if not FLAKY.exists():
        return set()
    return {ln.split()[0] for ln in FLAKY.read_text().splitlines() if ln.strip() and ln[0] != "#"}


def write_passing(tests: list[str]) -> None:
    PASSING.parent.mkdir(parents=True, exist_ok=True)
    header = (
        "# MXNet 1.9.1 unit tests (file::test) that pass on nnvmpy; CI runs them "
        "(tools/mxnet_compat.sh --check).\n# Regenerate with tools/mxnet_compat.sh.\n"
    )
    PASSING.write_text(header + "".join(t + "\n" for t in tests))


def update_readme(base: dict[str, str], skip: set[str]) -> None:
    passing = collections.Counter(t.split("::")[0] for t in read_passing())
    theirs = collections.Counter(
        k.split("::")[0] for k, v in base.items() if v == "pass" and k not in skip
    )
    rows = ["| MXNet 1.9.1 test file | passing on nnvmpy / passing on MXNet |", "| --- | --- |"]
    rows += [f"| {f} | {passing.get(f, 0)} / {theirs[f]} |" for f in sorted(theirs)]
    total = sum(passing.values()), sum(theirs.values())
    rows.append(f"| **total** | **{total[0]} / {total[1]}** |")
    table = "\n".join([BEGIN, *rows, END])
    text = README.read_text()
    if BEGIN in text:
        start, end = text.index(BEGIN), text.index(END) + len(END)
        text = text[:start] + table + text[end:]
    else:
        text = text.rstrip() + "\n\n## MXNet compatibility\n\n" + table + "\n"
    README.write_text(text)


def check(h: Path) -> int:
    """Run the listed tests (all must pass). Returns pytest's exit code."""
    flaky = read_flaky()
    tests = [t for t in read_passing() if t not in flaky]
    if not tests:
        print("mxnet_compat: no passing tests listed", file=sys.stderr)
        return 1
    unit = h / "mx191" / "tests" / "python" / "unittest"
    with tempfile.TemporaryDirectory(prefix="mxnet-compat-") as tmp:
        work = Path(tmp) / "unittest"  # tests write files where they run: a copy
        shutil.copytree(unit, work)
        if (unit.parent / "common").is_dir():
            shutil.copytree(unit.parent / "common", Path(tmp) / "common")
        env = dict(
            os.environ,
            PYTHONPATH=f"{h / 'alias'}:{h / 'shim'}",
            OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "2"),
            MXNET_TEST_SEED=os.environ.get("MXNET_TEST_SEED", "42"),
        )
        ids = [f"{t.split('::')[0]}.py::{t.split('::')[1]}" for t in tests]
        cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--timeout=300"]
        # two processes (xdist): no two listed tests write the same file name in `work`
        cmd += ["-n", os.environ.get("NNVMPY_COMPAT_WORKERS", "2")]
        return subprocess.run([*cmd, *ids], cwd=work, env=env, check=False).returncode


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", help="test files of the harness (default: all)")
    parser.add_argument("--check", action="store_true", help="run the listed passing tests")
    parser.add_argument("--out", default=str(ROOT / "build" / "mxnet-compat"))
    args = parser.parse_args(argv)
    h = harness()
    if h is None:
        print("mxnet_compat: no ../shared/mxnet-compat beside this checkout; skipped")
        return 0
    if args.check:
        return check(h)
    run(h, args.files, Path(args.out))
    print(f"updated {PASSING.relative_to(ROOT)} ({len(read_passing())} tests) and README.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
