"""tools/profile_gpu.py samples every thread's stack while GPU ops run (on the simulator
here, on a GPU in a hardware session), so that session's profile does not fail on a typo
and reports the engine's GPU workers and the pushing thread apart."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = [pytest.mark.gpu, pytest.mark.timeout(300)]


def test_dispatch_profile_names_the_threads_and_their_functions(tmp_path: Path) -> None:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    proc = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "profile_gpu.py"), "--ops", "20",
         "--only", "dispatch", "--out", str(tmp_path)],
        capture_output=True, text=True, timeout=280, env=env, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    text = (tmp_path / "dispatch.txt").read_text()
    assert re.match(r"x = x \+ 1, 20 ops: [\d.]+ us/op, [\d.]+ us/op sampled", text)
    assert "==== main: inclusive" in text
    assert "==== nnvmpy-gpu0: self" in text  # the device's engine workers
    main = text.split("==== main: inclusive")[1]
    assert "profile_dispatch" in main  # a stack of the pushing thread, by function
